import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { AddonConfig } from "../config";
import { PolicyRule } from "../rollouts/rbac";
import { PART_OF, Stage, StageOptions } from "../stage";
import { KyvernoPolicy, kyvernoPolicies } from "./kyverno";

export * from "./kyverno";
export * from "./template";
export * from "./workloads";

export interface PolicyStageArgs {
    config: AddonConfig;
}

/** Kyverno aggregates ClusterRoles with this label into its background controller's role. */
export const KYVERNO_BACKGROUND_AGGREGATE_LABEL = "rbac.kyverno.io/aggregate-to-background-controller";

/**
 * What Kyverno's background controller needs to generate a PodDisruptionBudget per workload
 * (ADR-085's generate-workload-pdb, made Rollout-aware by ADR-056 D2 and D8).
 */
export function pdbGenerationRules(): PolicyRule[] {
    return [{ apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: ["get", "list", "watch", "create", "update", "patch", "delete"] }];
}

/** The Pulumi logical name of a policy: its kind and name, unique across both APIs. */
export const policyResourceName = (p: KyvernoPolicy): string => `kyverno-${p.kind.toLowerCase()}-${p.metadata.name}`;

/**
 * Policy stage (ADR-056 D2): the admission layer made Rollout-aware. It runs after the rollouts
 * stage because a Kyverno policy naming a kind whose CRD is absent is refused or left not ready
 * (Kyverno #7839).
 */
export class PolicyStage extends Stage {
    readonly pdbGenerationRole: k8s.rbac.v1.ClusterRole;
    readonly policies: k8s.apiextensions.CustomResource[];

    constructor(name: string, args: PolicyStageArgs, opts: StageOptions) {
        super("policy", name, opts);
        this.pdbGenerationRole = new k8s.rbac.v1.ClusterRole(
            "kyverno-pdb-generation",
            {
                metadata: {
                    name: "kyverno:argo-rollouts-addon:generate-pdb",
                    labels: { ...PART_OF, [KYVERNO_BACKGROUND_AGGREGATE_LABEL]: "true" },
                },
                rules: pdbGenerationRules(),
            },
            this.child(),
        );
        // After the role: a generate rule admitted before its RBAC fails its first requests.
        this.policies = kyvernoPolicies(args.config.policy).map(
            (policy) => new k8s.apiextensions.CustomResource(policyResourceName(policy), { ...policy }, this.child({ dependsOn: [this.pdbGenerationRole] })),
        );
        this.registerOutputs({
            kyvernoApi: args.config.policy.kyvernoApi,
            policies: pulumi.output(this.policies.map((p) => p.metadata.name)),
        });
    }
}
