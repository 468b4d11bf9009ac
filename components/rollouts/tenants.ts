import { ConfigReader, DNS_LABEL } from "../config/reader";
import { PEOPLE_GROUP_RULE } from "../config/identity";
import { PART_OF } from "../stage";
import type { PolicyRule } from "../argoRollouts";

/**
 * What tenant teams may do with their Rollouts (ADR-056 D3). The chart's aggregate roles stay off
 * (rollouts stage, values.ts): the chart's `aggregate-to-edit` and `-admin` roles grant patch on
 * `rollouts/status`, so every namespace editor could promote, a regulated approval included
 * (argo-helm charts/argo-rollouts templates/aggregate-roles.yaml at argo-rollouts-2.41.0). With
 * them off, nothing gave tenants even read. So:
 * - a read-only role aggregated to `view`, which reaches `edit` and `admin` too, because the
 *   bootstrap `view` role itself carries `aggregate-to-edit` and `edit` carries `aggregate-to-admin`
 *   (kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go);
 * - an operator role for what a team does by hand outside regulated prod (restart, abort, retry,
 *   promote, scale), never aggregated, bound only where the stack says (`controller.tenantOperators`).
 *   In regulated namespaces it must not be bound (verify's `rbac.operators-outside-regulated`): it
 *   writes `rollouts/status`, which is the approval.
 */

export const TENANT_VIEW_ROLE = "argo-rollouts-addon:rollouts-view";
export const TENANT_OPERATOR_ROLE = "argo-rollouts-addon:rollouts-operator";

/** The aggregation label of the built-in `view` ClusterRole. */
export const AGGREGATE_TO_VIEW = "rbac.authorization.k8s.io/aggregate-to-view";

const READ = ["get", "list", "watch"];

/** The Argo Rollouts resources a namespace viewer reads (the chart's view role lists the same kinds). */
export const TENANT_READ_RESOURCES: readonly string[] = [
    "rollouts",
    "rollouts/scale",
    "rollouts/status",
    "analysisruns",
    "analysistemplates",
    "clusteranalysistemplates",
    "experiments",
];

export function tenantViewRules(): PolicyRule[] {
    return [{ apiGroups: ["argoproj.io"], resources: [...TENANT_READ_RESOURCES], verbs: [...READ] }];
}

/**
 * The operator's calls, as the kubectl plugin makes them (argo-rollouts v1.9.0
 * pkg/kubectl-argo-rollouts/cmd): `restart` patches `spec.restartAt` on the Rollout; `abort`,
 * `retry` and `promote` patch `rollouts/status`; `retry` of an Experiment patches the Experiment;
 * `kubectl scale` writes `rollouts/scale`. No create or delete: Rollouts come from git.
 */
export function tenantOperatorRules(): PolicyRule[] {
    return [
        ...tenantViewRules(),
        { apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: ["patch"] },
        { apiGroups: ["argoproj.io"], resources: ["rollouts/status"], verbs: ["patch"] },
        { apiGroups: ["argoproj.io"], resources: ["rollouts/scale"], verbs: ["patch", "update"] },
        { apiGroups: ["argoproj.io"], resources: ["experiments"], verbs: ["patch"] },
    ];
}

/** One namespace whose groups get the operator role. */
export interface TenantOperatorBinding {
    namespace: string;
    groups: string[];
}

export interface ClusterRoleObject {
    metadata: { name: string; labels: Record<string, string> };
    rules: PolicyRule[];
}

export interface TenantRoleBindingObject {
    metadata: { name: string; namespace: string; labels: Record<string, string> };
    roleRef: { apiGroup: "rbac.authorization.k8s.io"; kind: "ClusterRole"; name: string };
    subjects: { apiGroup: "rbac.authorization.k8s.io"; kind: "Group"; name: string }[];
}

const LABELS = { ...PART_OF, "app.kubernetes.io/component": "tenant-access" };

export function tenantViewRole(): ClusterRoleObject {
    return { metadata: { name: TENANT_VIEW_ROLE, labels: { ...LABELS, [AGGREGATE_TO_VIEW]: "true" } }, rules: tenantViewRules() };
}

export function tenantOperatorRole(): ClusterRoleObject {
    return { metadata: { name: TENANT_OPERATOR_ROLE, labels: { ...LABELS } }, rules: tenantOperatorRules() };
}

/** A RoleBinding of the operator ClusterRole in one namespace: the grant stays in that namespace. */
export function tenantOperatorBinding(b: TenantOperatorBinding): TenantRoleBindingObject {
    return {
        metadata: { name: "argo-rollouts-addon-rollouts-operator", namespace: b.namespace, labels: { ...LABELS } },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: TENANT_OPERATOR_ROLE },
        subjects: b.groups.map((name) => ({ apiGroup: "rbac.authorization.k8s.io" as const, kind: "Group" as const, name })),
    };
}

const KEY = "controller.tenantOperators";

/**
 * `controller.tenantOperators`: a list of `{ namespace, groups }`. Each namespace once; never the
 * controller's own namespace or one no tenant owns.
 */
export function readTenantOperators(
    r: ConfigReader,
    value: unknown,
    controllerNamespace: string,
    platformNamespaces: readonly string[],
): TenantOperatorBinding[] {
    if (value === undefined || value === null) {
        return [];
    }
    if (!Array.isArray(value) || value.length > 200) {
        r.problem(KEY, value, "must be a list of at most 200 { namespace, groups } entries");
        return [];
    }
    const out: TenantOperatorBinding[] = [];
    value.forEach((entry, i) => {
        const key = `${KEY}[${i}]`;
        const e = r.object(key, entry, ["namespace", "groups"]);
        if (!e) {
            return;
        }
        const namespace = r.requiredString(`${key}.namespace`, e.namespace, {
            pattern: DNS_LABEL,
            describe: "a tenant namespace name (DNS label)",
            maxLength: 63,
        });
        const groups = r.strings(`${key}.groups`, e.groups, PEOPLE_GROUP_RULE, [], { min: 1, max: 20 });
        if (e.groups === undefined || e.groups === null) {
            r.problem(`${key}.groups`, e.groups, "is required: 1-20 groups that may restart, abort, retry, promote and scale the namespace's Rollouts");
        }
        if (namespace === undefined) {
            return;
        }
        if (namespace === controllerNamespace || platformNamespaces.includes(namespace)) {
            r.problem(
                `${key}.namespace`,
                namespace,
                `must be a tenant namespace, not ${namespace === controllerNamespace ? "the controller's own (controller.namespace)" : "a platform namespace"}`,
            );
        } else if (out.some((o) => o.namespace === namespace)) {
            r.problem(`${key}.namespace`, namespace, "must appear once: list every group of the namespace in one entry");
        } else if (groups.length > 0) {
            out.push({ namespace, groups });
        }
    });
    return out;
}
