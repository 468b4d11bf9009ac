// `pulumi preview --policy-pack policy-pack`: the guardrails as a mandatory policy pack.
import { PolicyPack } from "@pulumi/policy";
import { policies } from "./policies";

new PolicyPack("argo-rollouts-addon", { policies });
