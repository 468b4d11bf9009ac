/**
 * The types of the `policy` section (config/section.ts reads it): apart, so the preflight the reader
 * runs (../preflight.ts) names them without importing the reader back.
 */
import type { LabelSelector } from "./selector";

/**
 * The Kyverno API the policies are written in. `policies.kyverno.io/v1` is served from Kyverno 1.17
 * (kyverno/kyverno v1.17.0 `config/crds/policies.kyverno.io/*.yaml`: version `v1`, `served: true`).
 */
export type KyvernoApi = "policies.kyverno.io/v1" | "kyverno.io/v1";

/** What a failed validation does: refuse the request, or only report it. */
export type ValidationAction = "Enforce" | "Audit";

/** What the API server does with a request when Kyverno cannot answer a mutation. */
export type FailurePolicy = "Ignore" | "Fail";

/**
 * Who owns ADR-085's availability policies (PDB generation, topology spread, prod replica floor,
 * default namespace) on this cluster. `own`: this program declares them under ADR-085's names.
 * `complement`: the platform keeps its own, already Rollout-aware (ADR-056 as-built,
 * enable_rollout_kind), and this program adds only the Rollout-only guards, never a second PDB
 * generator (two budgets over the same pods make every eviction fail, the deadlock D8 prevents).
 */
export type AvailabilityPolicies = "own" | "complement";

/** A ServiceAccount, as `request.userInfo.username` names it: `system:serviceaccount:<namespace>:<name>`. */
export interface ServiceAccountRef {
    namespace: string;
    name: string;
}

/**
 * Regulated prod (ADR-056 D3, ADR-049 separation of duties): in namespaces with these labels only
 * the GitOps controller changes a Rollout, and only approvers approve (promote, resume, skip,
 * abort, retry).
 */
export interface RegulatedConfig {
    namespaceLabels: Record<string, string>;
    /** Groups whose members may approve; a member of a deployer group never may. */
    approverGroups: string[];
    /** Groups whose members ship versions; the approval Roles bind the deployer Role to them. */
    deployerGroups: string[];
    /**
     * The GitOps controller's sync identities: they create, change and prune Rollouts. ArgoCD's
     * application controller on its own cluster, or with sync impersonation the AppProject's
     * destination ServiceAccount (ServiceAccounts); a hub's ArgoCD arrives with its cluster
     * Secret's identity, on EKS an IAM role's mapped user name and groups (users, groups).
     */
    gitopsServiceAccounts: ServiceAccountRef[];
    gitopsUsers: string[];
    gitopsGroups: string[];
    /**
     * The identities ArgoCD's API server runs Rollout actions as (`argocd-server`). It acts for any
     * user ArgoCD's RBAC lets through, so the guard lets it write only what the actions write.
     */
    actionServiceAccounts: ServiceAccountRef[];
    /**
     * Whether a regulated Rollout may carry the ArgoCD sync options `Replace=true` or `Force=true`:
     * ArgoCD reads them from the live object too, and with them a sync may delete and recreate the
     * Rollout, whose first version Argo Rollouts promotes fully, without the approval.
     */
    allowReplaceOrForceSync: boolean;
}

/** The policy stage's settings. */
export interface PolicyConfig {
    /**
     * `policies.kyverno.io/v1` (ValidatingPolicy, MutatingPolicy, GeneratingPolicy; Kyverno >= 1.17)
     * or `kyverno.io/v1` ClusterPolicy for clusters on an older Kyverno. Same behaviour.
     */
    kyvernoApi: KyvernoApi;
    availabilityPolicies: AvailabilityPolicies;
    validationAction: ValidationAction;
    /** Mutations only; validations always fail closed. */
    mutationFailurePolicy: FailurePolicy;
    /** The tenant namespaces every policy applies to (ANDed with the narrower selectors below). */
    tenantNamespaceSelector: LabelSelector;
    /** `maxUnavailable` of every generated PodDisruptionBudget: a number of pods (ADR-056 D8). */
    pdbMaxUnavailable: number;
    /** Labels that mark a namespace as prod; the replica floor applies there. */
    prodNamespaceLabels: Record<string, string>;
    /** The least `spec.replicas` (or HPA `minReplicas`) a workload in a prod namespace may have. */
    prodMinReplicas: number;
    /** Node label keys pods are spread over, in order. */
    topologyKeys: string[];
    /** Namespaces no policy of the addon applies to, whatever their labels. */
    excludeNamespaces: string[];
    /** Unset: no regulated namespaces on this cluster. */
    regulated?: RegulatedConfig;
}
