import type { PolicyRule } from "../argoRollouts";
import { PART_OF } from "../stage";
import type { TenantOperatorBinding } from "./config/controller";

/**
 * What tenant teams may do with their Rollouts (ADR-056 D3), in place of the chart's aggregate roles,
 * which grant patch on `rollouts/status` to every namespace editor: a regulated approval included
 * (argo-helm charts/argo-rollouts templates/aggregate-roles.yaml at argo-rollouts-2.41.0). So:
 * - a read-only role aggregated to `view`, which reaches `edit` and `admin` too (kubernetes
 *   plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go);
 * - an operator role for what a team does by hand outside regulated prod (restart, abort, retry,
 *   promote, scale), never aggregated, bound only where `controller.tenantOperators` says: it writes
 *   `rollouts/status`, which is the approval, so verify refuses it in regulated namespaces.
 */
export const TENANT_VIEW_ROLE = "argo-rollouts-addon:rollouts-view";
export const TENANT_OPERATOR_ROLE = "argo-rollouts-addon:rollouts-operator";
export const AGGREGATE_TO_VIEW = "rbac.authorization.k8s.io/aggregate-to-view";

/** The Argo Rollouts resources a namespace viewer reads (the chart's view role lists the same kinds). */
export function tenantViewRules(): PolicyRule[] {
    const resources = ["rollouts", "rollouts/scale", "rollouts/status", "analysisruns", "analysistemplates", "clusteranalysistemplates", "experiments"];
    return [{ apiGroups: ["argoproj.io"], resources, verbs: ["get", "list", "watch"] }];
}

/**
 * The operator's calls as the kubectl plugin makes them (argo-rollouts v1.9.0
 * pkg/kubectl-argo-rollouts/cmd): `restart` patches the Rollout, `abort`, `retry` and `promote` its
 * status, `retry` of an Experiment the Experiment, `kubectl scale` writes `rollouts/scale`. No create
 * or delete: Rollouts come from git.
 */
export function tenantOperatorRules(): PolicyRule[] {
    const write = (resources: string[], verbs = ["patch"]) => ({ apiGroups: ["argoproj.io"], resources, verbs });
    return [...tenantViewRules(), write(["rollouts"]), write(["rollouts/status"]), write(["rollouts/scale"], ["patch", "update"]), write(["experiments"])];
}

const LABELS = { ...PART_OF, "app.kubernetes.io/component": "tenant-access" };

export const tenantViewRole = () => ({ metadata: { name: TENANT_VIEW_ROLE, labels: { ...LABELS, [AGGREGATE_TO_VIEW]: "true" } }, rules: tenantViewRules() });
export const tenantOperatorRole = () => ({ metadata: { name: TENANT_OPERATOR_ROLE, labels: { ...LABELS } }, rules: tenantOperatorRules() });

/** A RoleBinding of the operator ClusterRole in one namespace: the grant stays in that namespace. */
export function tenantOperatorBinding(b: TenantOperatorBinding) {
    return {
        metadata: { name: "argo-rollouts-addon-rollouts-operator", namespace: b.namespace, labels: { ...LABELS } },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: TENANT_OPERATOR_ROLE },
        subjects: b.groups.map((name) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name })),
    };
}
