import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { ControllerConfig } from "../rollouts/config";
import { PART_OF, Stage, StageOptions } from "../stage";
import { PolicyContext } from "./builders";
import { PolicyConfig } from "./config";
import { stackStrategies } from "../delivery/config";
import type { DeliveryConfig } from "../delivery/fields";
import type { GateTiming } from "../delivery";
import { tierAdmission } from "./tierAdmission";
import { kyvernoPolicies } from "./kyverno";
import type { KyvernoPolicy } from "./shapes";
import { KYVERNO_AGGREGATE_LABELS, kyvernoRoleName, kyvernoRoles } from "./rbac";
import { RELEASE_NAME } from "../argoRollouts";
import { approvalRoleName, approvalRoleRules } from "./approvalBindings";

/** What the policy stage reads of the stack's configuration: its section, and where the rollouts controller runs. */
export interface PolicyStageConfig {
    policy: PolicyConfig;
    controller: Pick<ControllerConfig, "namespace">;
    /** The tier strategies the admission rules check (tierAdmission.ts); without them, no tier rules. */
    delivery?: DeliveryConfig;
    analysis?: GateTiming;
}

export interface PolicyStageArgs {
    config: PolicyStageConfig;
}

/** The Pulumi logical name of a policy: its kind and name, unique across both APIs. */
export const policyResourceName = (p: KyvernoPolicy): string => `kyverno-${p.kind.toLowerCase()}-${p.metadata.name}`;

/** What the policies know of the rest of the addon: the controller's ServiceAccount (rollouts stage). */
export function policyContext(
    config: Pick<PolicyStageConfig, "controller" | "delivery" | "analysis"> & { policy?: Pick<PolicyConfig, "regulated"> },
): PolicyContext {
    const { delivery, analysis } = config;
    const tiers =
        delivery && analysis
            ? tierAdmission(stackStrategies({ delivery, analysis, policy: { regulated: config.policy?.regulated } }), delivery.prod.standard.admission)
            : undefined;
    return { rolloutsController: { namespace: config.controller.namespace, name: RELEASE_NAME }, ...(tiers ? { tiers } : {}) };
}

/**
 * Policy stage (ADR-056 D2, D3): the admission layer made Rollout-aware. It runs after the
 * rollouts stage because a Kyverno policy naming a kind whose CRD is absent is refused or left not
 * ready (Kyverno #7839).
 */
export class PolicyStage extends Stage {
    readonly kyvernoRoles: k8s.rbac.v1.ClusterRole[];
    /** Regulated prod's approver and deployer roles, bound in each regulated namespace by Kyverno (approvalBindings.ts). */
    readonly approvalRoles: k8s.rbac.v1.ClusterRole[];
    readonly policies: k8s.apiextensions.CustomResource[];

    constructor(name: string, args: PolicyStageArgs, opts: StageOptions) {
        super("policy", name, opts);
        const cfg = args.config.policy;
        this.kyvernoRoles = kyvernoRoles(cfg).map(
            (role) =>
                new k8s.rbac.v1.ClusterRole(
                    `kyverno-${role.name}`,
                    {
                        metadata: {
                            name: kyvernoRoleName(role),
                            labels: { ...PART_OF, ...Object.fromEntries(role.controllers.map((c) => [KYVERNO_AGGREGATE_LABELS[c], "true"])) },
                            annotations: { "argo-rollouts-addon.platform/why": role.why },
                        },
                        rules: role.rules,
                    },
                    this.child(),
                ),
        );
        this.approvalRoles = (cfg.regulated ? (["approver", "deployer"] as const) : []).map(
            (side) =>
                new k8s.rbac.v1.ClusterRole(
                    `regulated-${side}`,
                    { metadata: { name: approvalRoleName(side), labels: { ...PART_OF } }, rules: approvalRoleRules(side) },
                    this.child(),
                ),
        );
        // After the roles: a policy admitted before its RBAC fails its first requests.
        const roles = [...this.kyvernoRoles, ...this.approvalRoles];
        this.policies = kyvernoPolicies(cfg, policyContext(args.config)).map(
            (policy) => new k8s.apiextensions.CustomResource(policyResourceName(policy), { ...policy }, this.child({ dependsOn: roles })),
        );
        this.registerOutputs({
            kyvernoApi: cfg.kyvernoApi,
            availabilityPolicies: cfg.availabilityPolicies,
            policies: pulumi.output(this.policies.map((p) => p.metadata.name)),
        });
    }
}
