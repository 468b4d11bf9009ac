import type { PolicyConfig, ServiceAccountRef } from "./config";
import { PART_OF } from "../stage";
import { allOf } from "./selectors";
import type {
    ClusterPolicy,
    ClusterPolicyRule,
    Condition,
    Conditions,
    LabelSelector,
    MatchConstraints,
    NamedExpression,
    PolicyMetadata,
    ResourceRule,
    ValidatingPolicy,
} from "./shapes";
import type { TierAdmission } from "./tierTypes";
import { WorkloadKind, gvk } from "./workloads";

/**
 * The pieces every policy of the stage is built from, for both Kyverno APIs: names, messages,
 * namespace selectors, metadata and the common shapes of a validating policy or rule.
 */

export const POLICY_NAMES = {
    pdb: "generate-workload-pdb",
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

export const OPERATIONS = ["CREATE", "UPDATE"];
/** Kubernetes labels every namespace with its name. */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

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
 * condition, so the API server does not even call Kyverno for it (it becomes the webhook's
 * matchCondition, kyverno/kyverno `pkg/controllers/webhook/validating.go`) and a Kyverno outage
 * cannot stop a rollout in progress.
 */
export function notTheController(ctx: PolicyContext): NamedExpression {
    // `has()` first: a background scan evaluates a CEL policy's match conditions on a request with
    // an empty userInfo (kyverno/kyverno pkg/controllers/report/utils/scanner.go at v1.17.2,
    // `authenticationv1.UserInfo{}`), which has no username; there the guard applies.
    return {
        name: "not-the-rollouts-controller",
        expression: `!has(request.userInfo.username) || request.userInfo.username != ${JSON.stringify(serviceAccountUser(ctx.rolloutsController))}`,
    };
}

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

/**
 * Which namespaces a policy applies to: the tenant namespaces, or the prod or regulated ones among
 * them, or the default namespace alone (a policy that refuses workloads there must match it even
 * though it is no tenant's).
 */
export type Scope = "tenant" | "prod" | "regulated" | "prod-regulated" | "default";

/** The namespace selector of a policy: the tenant namespaces, narrowed by scope, minus the excluded ones. */
export function namespaceSelector(cfg: PolicyConfig, scope: Scope = "tenant"): LabelSelector {
    if (scope === "default") {
        return { matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: "In", values: ["default"] }] };
    }
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
            ? { matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: "NotIn" as const, values: [...cfg.excludeNamespaces] }] }
            : undefined;
    return allOf(cfg.tenantNamespaceSelector, narrower, excluded);
}

// ---------------------------------------------------------------------------------------------
// policies.kyverno.io/v1

export function resourceRules(kinds: readonly WorkloadKind[], operations: readonly string[] = OPERATIONS): ResourceRule[] {
    return kinds.map((w) => ({ apiGroups: [w.group], apiVersions: [w.version], resources: [w.resource], operations: [...operations] }));
}

export function constraints(cfg: PolicyConfig, kinds: readonly WorkloadKind[], scope: Scope = "tenant"): MatchConstraints {
    return { resourceRules: resourceRules(kinds), namespaceSelector: namespaceSelector(cfg, scope) };
}

export function validationActions(cfg: PolicyConfig): ValidatingPolicy["spec"]["validationActions"] {
    return cfg.validationAction === "Enforce" ? ["Deny"] : ["Audit", "Warn"];
}

export function validating(
    cfg: PolicyConfig,
    name: string,
    kinds: readonly WorkloadKind[],
    check: {
        expression: string;
        message: string;
        variables?: NamedExpression[];
        scope?: Scope;
        more?: { expression: string; message: string }[];
        matchConditions?: NamedExpression[];
    },
): ValidatingPolicy {
    return {
        apiVersion: "policies.kyverno.io/v1",
        kind: "ValidatingPolicy",
        metadata: metadata(name, check.message),
        spec: {
            validationActions: validationActions(cfg),
            // Validations fail closed: a guard Kyverno cannot evaluate must not let the request through.
            failurePolicy: "Fail",
            evaluation: { background: { enabled: true } },
            matchConstraints: constraints(cfg, kinds, check.scope),
            ...(check.matchConditions ? { matchConditions: check.matchConditions } : {}),
            ...(check.variables ? { variables: check.variables } : {}),
            validations: [{ expression: check.expression, message: check.message }, ...(check.more ?? [])],
        },
    };
}

// ---------------------------------------------------------------------------------------------
// kyverno.io/v1 ClusterPolicy: one rule per kind, so Rollout is always its own rule (Kyverno #7446).

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

/**
 * A validate rule: the request is refused when the deny conditions hold. `judgeRequest`: the rule
 * judges who sends the request, not the object, so an update is refused even where the object
 * already "violated" it. Kyverno otherwise evaluates an enforced rule again on an update's old
 * object as if it were created, and lets the update through when that fails too
 * (`allowExistingViolations`, default true: kyverno/kyverno v1.17.2
 * pkg/engine/handlers/validation/validate_resource.go; e2e regulated-argocd-paths saw a deployer's
 * edit of a Rollout's ReplicaSet admitted without it).
 */
export function denyRule(
    cfg: PolicyConfig,
    rule: ClusterPolicyRule,
    message: string,
    conditions: Conditions,
    context?: ClusterPolicyRule["context"],
    opts: { judgeRequest?: boolean } = {},
): ClusterPolicyRule {
    return {
        ...rule,
        ...(context ? { context } : {}),
        validate: { failureAction: cfg.validationAction, message, deny: { conditions }, ...(opts.judgeRequest ? { allowExistingViolations: false } : {}) },
    };
}

export function clusterValidating(
    cfg: PolicyConfig,
    name: string,
    description: string,
    rules: ClusterPolicyRule[],
    opts: { background?: boolean } = {},
): ClusterPolicy {
    return {
        apiVersion: "kyverno.io/v1",
        kind: "ClusterPolicy",
        metadata: metadata(name, description),
        spec: {
            // Both: the rule-level field (1.13+) wins where it is known; older releases prune it and
            // read the policy-level one, so neither silently falls back to Audit.
            validationFailureAction: cfg.validationAction,
            background: opts.background ?? true,
            rules,
        },
    };
}

/** A one-condition deny rule per kind. */
export function clusterDeny(
    cfg: PolicyConfig,
    name: string,
    kinds: readonly WorkloadKind[],
    check: { deny: Condition; message: string; scope?: Scope },
): ClusterPolicy {
    return clusterValidating(
        cfg,
        name,
        check.message,
        kinds.map((w) => denyRule(cfg, clusterRule(cfg, "check", w, { scope: check.scope }), check.message, { any: [check.deny] })),
    );
}
