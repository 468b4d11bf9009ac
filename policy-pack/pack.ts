// `pulumi preview --policy-pack policy-pack`: the guardrails as a mandatory policy pack. Loaded by
// index.js, transpiled without type-checking (`npm test` type-checks it).
import { PolicyPack } from "@pulumi/policy";
import { policies } from "./policies";

new PolicyPack("argo-rollouts-addon", { policies });
