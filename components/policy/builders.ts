import type { PolicyConfig, ServiceAccountRef, ValidationAction } from "./config";
import { METADATA_NAME_LABEL } from "../config/reader";
import { PART_OF } from "../stage";
import { allOf } from "./selectors";
import { Cond, OPERATIONS, Scope, not, userIn } from "./rule";
import type { ClusterPolicyRule, LabelSelector, MatchConstraints, PolicyMetadata, ValidatingPolicy } from "./shapes";
import type { TierAdmission } from "./tierTypes";
import { WorkloadKind, gvk } from "./workloads";

/** What every policy of the stage is built from, in both Kyverno APIs: names, messages, namespace selectors, metadata. */

export const POLICY_NAMES = {
    pdb: "generate-workload-pdb",
    approvalBindings: "generate-regulated-approval-bindings",
    spread: "mutate-topology-spread",
    replicaFloor: "require-prod-replica-floor",
    defaultNamespace: "disallow-default-namespace",
    routeNamespace: "restrict-rollout-route-namespace",
    maxSurge: "require-canary-max-surge",
    approval: "restrict-regulated-rollout-changes",
    approvalPods: "restrict-regulated-rollout-pods",
    tierStandard: "require-prod-standard-delivery",
    tierRegulated: "require-prod-regulated-delivery",
} as const;

export const MESSAGES = {
    replicaFloor: (n: number) =>
        `in a prod namespace spec.replicas must be at least ${n}, unless a HorizontalPodAutoscaler scales the workload (its minReplicas then carries the floor); a Rollout counts like a Deployment (ADR-056 D2)`,
    replicasOmitted: (n: number) =>
        `in a prod namespace a Rollout must set spec.replicas (at least ${n}) unless a HorizontalPodAutoscaler scales it: the Rollout CRD has no default, Argo Rollouts runs it at 1 replica and its own write of replicas: 1 is then refused, so the Rollout never reconciles (ADR-056 D2)`,
    hpaFloor: (n: number) =>
        `in a prod namespace a HorizontalPodAutoscaler of a Deployment, StatefulSet or Rollout needs minReplicas of at least ${n}: it carries the workload's replica floor (ADR-056 D2)`,
    defaultNamespace: "workloads must not run in the default namespace (ADR-056 D2)",
    routeNamespace:
        "a Rollout's gatewayAPI traffic-routing plugin may only name routes in the Rollout's own namespace: the controller can update routes in every namespace, so another namespace's route would be another tenant's (ADR-056 D4)",
    maxSurge: "a canary Rollout needs maxSurge of at least 1, so the canary has headroom and cannot deadlock against the PodDisruptionBudget (ADR-056 D8)",
    approvalStatus:
        "in a regulated namespace only an approver (who is no deployer), or the GitOps controller running an approved ArgoCD action, may change a Rollout's status: promote, resume, skip, abort and retry are approvals (ADR-056 D3, ADR-049)",
    approvalCreate:
        "in a regulated namespace only the GitOps controller may create a Rollout: a Rollout's first version is promoted without steps, so it would skip the approval (ADR-056 D3)",
    approvalDelete:
        "in a regulated namespace only the GitOps controller may delete a Rollout, or the namespace's own deletion: GitOps recreates a deleted Rollout, and its first version is promoted without steps, so it would skip the approval (ADR-056 D3)",
    approvalSpec:
        "in a regulated namespace only the GitOps controller may change a Rollout's spec (changing the steps resets the pause conditions and drops the approval), and only an approver may unpause it (ADR-056 D3, ADR-049)",
    approvalSyncAnnotations:
        "in a regulated namespace only the GitOps controller may change the ArgoCD annotations a sync reads from the live Rollout (argocd.argoproj.io/sync-options, sync-wave, hook, hook-delete-policy and Helm's hook annotations): with Replace=true or Force=true there the next sync deletes and recreates the Rollout, whose first version is promoted without the approval (ADR-056 D3)",
    approvalReplaceSync:
        "a regulated Rollout must not carry the ArgoCD sync option Replace=true or Force=true (argocd.argoproj.io/sync-options): a sync may then delete and recreate it, and its first version is promoted without the approval; policy.regulated.allowReplaceOrForceSync allows it (ADR-056 D3)",
    approvalPods:
        "in a regulated namespace only the Argo Rollouts controller and Kubernetes' ReplicaSet controller and garbage collector may create or change a Rollout's ReplicaSets and Pods (owned by a Rollout or labelled rollouts-pod-template-hash), or scale a ReplicaSet: Argo Rollouts does not revert an edited ReplicaSet, so it would run an unapproved version beside the approved one (ADR-056 D3)",
} as const;

/** The suffix of a generated PodDisruptionBudget's name: `<workload>-pdb`. */
export const PDB_SUFFIX = "-pdb";

/** What the policies need to know about the cluster beyond their own settings. */
export interface PolicyContext {
    /** The Argo Rollouts controller's ServiceAccount: it writes Rollout status and defaults replicas. */
    rolloutsController: ServiceAccountRef;
    /** What the tier admission rules check, from the stack's delivery strategies (tierAdmission.ts); none: no tier rules. */
    tiers?: TierAdmission;
}

/** The username the API server gives a ServiceAccount (`request.userInfo.username`). */
export const serviceAccountUser = (sa: ServiceAccountRef): string => `system:serviceaccount:${sa.namespace}:${sa.name}`;

/**
 * The controller owns its Rollouts: it writes their status, their revision annotation and, when
 * unset, their replicas, each as its own ServiceAccount (argo-rollouts v1.9.0 `rollout/sync.go`
 * `setRolloutRevision`, `rollout/controller.go` "Defaulting .spec.replica to 1"). A match
 * condition, so the API server does not even call Kyverno for it (kyverno/kyverno
 * `pkg/controllers/webhook/validating.go`) and a Kyverno outage cannot stop a rollout in progress.
 * A background scan has no user (pkg/controllers/report/utils/scanner.go at v1.17.2): there the guard applies.
 */
export const notTheController = (ctx: PolicyContext): { name: string; cond: Cond } => ({
    name: "not-the-rollouts-controller",
    cond: not(userIn([serviceAccountUser(ctx.rolloutsController)])),
});

export function metadata(name: string, description: string): PolicyMetadata {
    return {
        name,
        labels: { ...PART_OF },
        annotations: { "policies.kyverno.io/title": name, "policies.kyverno.io/description": description },
    };
}

/** Whether this program declares ADR-085's availability policies, or only what the platform's lack. */
export const ownsAvailability = (cfg: PolicyConfig): boolean => cfg.availabilityPolicies === "own";

export const kindLabel = (w: WorkloadKind): string => w.kind.toLowerCase();

/** The namespace selector of a policy: the tenant namespaces, narrowed by scope, minus the excluded ones. */
export function namespaceSelector(cfg: PolicyConfig, scope: Scope = "tenant"): LabelSelector {
    if (scope === "default") return { matchExpressions: [{ key: METADATA_NAME_LABEL, operator: "In", values: ["default"] }] };
    const regulated = { matchLabels: cfg.regulated?.namespaceLabels ?? {} };
    const narrower =
        scope === "prod"
            ? { matchLabels: cfg.prodNamespaceLabels }
            : scope === "regulated"
              ? regulated
              : scope === "prod-regulated"
                ? allOf({ matchLabels: cfg.prodNamespaceLabels }, regulated)
                : undefined;
    const excluded =
        cfg.excludeNamespaces.length > 0
            ? { matchExpressions: [{ key: METADATA_NAME_LABEL, operator: "NotIn" as const, values: [...cfg.excludeNamespaces] }] }
            : undefined;
    return allOf(cfg.tenantNamespaceSelector, narrower, excluded);
}

/** A CEL policy's match on `kinds` in the tenant namespaces. */
export function constraints(cfg: PolicyConfig, kinds: readonly WorkloadKind[]): MatchConstraints {
    const resourceRules = kinds.map((w) => ({ apiGroups: [w.group], apiVersions: [w.version], resources: [w.resource], operations: [...OPERATIONS] }));
    return { resourceRules, namespaceSelector: namespaceSelector(cfg) };
}

export function validationActions(action: ValidationAction): ValidatingPolicy["spec"]["validationActions"] {
    return action === "Enforce" ? ["Deny"] : ["Audit", "Warn"];
}

/** A ClusterPolicy rule's match: one kind per rule, so Rollout is always its own rule (Kyverno #7446). */
export function clusterRule(
    cfg: PolicyConfig,
    name: string,
    w: WorkloadKind,
    opts: { operations?: readonly string[] | false; scope?: Scope; subresource?: string } = {},
): ClusterPolicyRule {
    const operations = opts.operations === false ? undefined : (opts.operations ?? OPERATIONS);
    const resources = {
        kinds: [opts.subresource ? `${gvk(w)}/${opts.subresource}` : gvk(w)],
        ...(operations ? { operations: [...operations] } : {}),
        namespaceSelector: namespaceSelector(cfg, opts.scope),
    };
    return {
        name: `${name}-${kindLabel(w)}${opts.subresource ? `-${opts.subresource}` : ""}`,
        match: { any: [{ resources }] },
        ...(cfg.excludeNamespaces.length > 0 ? { exclude: { any: [{ resources: { namespaces: [...cfg.excludeNamespaces] } }] } } : {}),
    };
}
