import * as k8s from "@pulumi/kubernetes";
import { AddonConfig } from "../config";
import { Stage, StageOptions } from "../stage";

export interface PolicyStageArgs {
    config: AddonConfig;
}

/** Kyverno aggregates ClusterRoles with this label into its background controller's role. */
export const KYVERNO_BACKGROUND_AGGREGATE_LABEL = "rbac.kyverno.io/aggregate-to-background-controller";

/**
 * What Kyverno's background controller needs to generate a PodDisruptionBudget per workload
 * (ADR-085's generate-workload-pdb, made Rollout-aware by ADR-056 D2 and D8).
 */
export function pdbGenerationRules(): { apiGroups: string[]; resources: string[]; verbs: string[] }[] {
    return [{ apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: ["get", "list", "watch", "create", "update", "patch", "delete"] }];
}

/**
 * Policy stage (ADR-056 D2): the admission layer made Rollout-aware. It runs after the rollouts
 * stage because a Kyverno policy naming a kind whose CRD is absent is refused or left not ready
 * (Kyverno #7839).
 */
export class PolicyStage extends Stage {
    readonly pdbGenerationRole: k8s.rbac.v1.ClusterRole;

    constructor(name: string, _args: PolicyStageArgs, opts: StageOptions) {
        super("policy", name, opts);
        this.pdbGenerationRole = new k8s.rbac.v1.ClusterRole(
            "kyverno-pdb-generation",
            {
                metadata: {
                    name: "kyverno:argo-rollouts-addon:generate-pdb",
                    labels: { "app.kubernetes.io/part-of": "argo-rollouts-addon", [KYVERNO_BACKGROUND_AGGREGATE_LABEL]: "true" },
                },
                rules: pdbGenerationRules(),
            },
            this.child(),
        );
        this.registerOutputs({});
    }
}
