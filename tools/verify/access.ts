/**
 * What verify asks the API server's authorizer, and the RBAC rule semantics it needs to explain
 * an answer. Decisions come from SubjectAccessReviews; rule matching is only used to name the
 * ClusterRoles that grant something they should not.
 */
import type { PolicyRule } from "../../components/rollouts/rbac";
import type { ResourceQuestion, Subject } from "./cluster";

/** One API call the controller makes, with where the call is in the controller's source. */
export interface ControllerCall extends Omit<ResourceQuestion, "namespace" | "name"> {
    /** "cluster": every namespace (informers and Rollouts anywhere); "controller": its own namespace. */
    scope: "cluster" | "controller";
    source: string;
}

const AR = "argo-rollouts v1.9.0";
const PLUGIN = "rollouts-plugin-trafficrouter-gatewayapi v0.15.0";

const calls = (scope: ControllerCall["scope"], group: string, resource: string, verbs: string[], source: string, subresource?: string): ControllerCall[] =>
    verbs.map((verb) => ({ verb, group, resource, ...(subresource ? { subresource } : {}), scope, source }));

/**
 * The calls the controller makes on the platform's Rollout path: direct-template canary and
 * blue/green Rollouts, the Gateway API plugin, Prometheus-provider analysis, leader election and
 * notifications. Informers list and watch in every namespace. Read from the controller's source;
 * `components/rollouts/rbac.ts` must grant every one of them (a unit test holds it to that).
 */
export const ROLLOUT_PATH_CALLS: readonly ControllerCall[] = [
    ...calls("cluster", "argoproj.io", "rollouts", ["get", "list", "watch", "update"], `${AR} rollout/controller.go (informer, Update), rollout/replicaset.go (Get)`),
    ...calls("cluster", "argoproj.io", "rollouts", ["update", "patch"], `${AR} rollout/sync.go (UpdateStatus, Patch "status")`, "status"),
    // metav1.NewControllerRef sets blockOwnerDeletion on the ReplicaSets and AnalysisRuns a Rollout
    // owns; with the OwnerReferencesPermissionEnforcement admission plugin that needs update on the
    // owner's finalizers.
    ...calls("cluster", "argoproj.io", "rollouts", ["update"], `${AR} utils/replicaset (owner references with blockOwnerDeletion)`, "finalizers"),
    ...calls("cluster", "argoproj.io", "analysisruns", ["create", "get", "list", "watch", "patch", "delete"], `${AR} utils/analysis/helpers.go (CreateWithCollisionCounter), rollout/analysis.go (Patch, Delete)`),
    ...calls("cluster", "argoproj.io", "analysistemplates", ["get", "list", "watch"], `${AR} cmd/rollouts-controller/main.go (informer)`),
    ...calls("cluster", "argoproj.io", "clusteranalysistemplates", ["get", "list", "watch"], `${AR} cmd/rollouts-controller/main.go (informer)`),
    ...calls("cluster", "argoproj.io", "experiments", ["list", "watch"], `${AR} cmd/rollouts-controller/main.go (informer)`),
    ...calls("cluster", "apps", "replicasets", ["create", "get", "list", "watch", "update", "patch", "delete"], `${AR} rollout/sync.go (Create, Get, Delete), rollout/replicaset.go (Patch), rollout/controller.go (Update)`),
    ...calls("cluster", "", "services", ["get", "list", "watch", "patch"], `${AR} rollout/service.go (Get, Patch of the selector)`),
    ...calls("cluster", "", "pods", ["list"], `${AR} utils/replicaset/replicaset.go (List)`),
    ...calls("cluster", "", "events", ["create", "patch"], `${AR} utils/record/record.go (event sink)`),
    ...calls("cluster", "batch", "jobs", ["list", "watch"], `${AR} cmd/rollouts-controller/main.go (informer, started whatever the provider)`),
    ...calls("cluster", "networking.k8s.io", "ingresses", ["list", "watch"], `${AR} cmd/rollouts-controller/main.go (ingress informer)`),
    ...calls("cluster", "gateway.networking.k8s.io", "httproutes", ["get", "list", "update"], `${PLUGIN} pkg/plugin/httproute.go (Get, Update), pkg/plugin/plugin.go (List)`),
    ...calls("controller", "coordination.k8s.io", "leases", ["get", "create", "update"], `${AR} controller/controller.go (LeaseLock argo-rollouts-controller-lock)`),
    ...calls("controller", "", "configmaps", ["get", "list", "watch"], `${AR} controller/controller.go (argo-rollouts-config, notification ConfigMap informer)`),
    ...calls("controller", "", "secrets", ["list", "watch"], `${AR} controller/controller.go (notification Secret informer)`),
];

/**
 * Whether an RBAC rule grants a request, as Kubernetes' RBAC authorizer matches it
 * (kubernetes pkg/apis/rbac/v1/evaluation_helpers.go: VerbMatches, APIGroupMatches,
 * ResourceMatches with `*`, `resource/subresource` and `*\/subresource`, ResourceNameMatches).
 */
export function ruleAllows(rule: PolicyRule, q: Pick<ResourceQuestion, "verb" | "group" | "resource" | "subresource" | "name">): boolean {
    const verb = rule.verbs.includes("*") || rule.verbs.includes(q.verb);
    const group = rule.apiGroups.includes("*") || rule.apiGroups.includes(q.group);
    const combined = q.subresource ? `${q.resource}/${q.subresource}` : q.resource;
    const resource = rule.resources.some((r) => r === "*" || r === combined || (q.subresource !== undefined && r === `*/${q.subresource}`));
    const name = !rule.resourceNames || rule.resourceNames.length === 0 || (q.name !== undefined && rule.resourceNames.includes(q.name));
    return verb && group && resource && name;
}

/** An RBAC binding subject. */
export interface BindingSubject {
    kind: string;
    name: string;
    namespace?: string;
}

/**
 * The user and groups the API server authenticates a binding subject as, for a SubjectAccessReview
 * (Kubernetes: ServiceAccounts are `system:serviceaccount:<ns>:<name>` in the groups
 * `system:serviceaccounts` and `system:serviceaccounts:<ns>`; every authenticated user is in
 * `system:authenticated`).
 */
export function reviewSubject(s: BindingSubject, bindingNamespace?: string): Subject {
    if (s.kind === "ServiceAccount") {
        const ns = s.namespace ?? bindingNamespace ?? "default";
        return { user: `system:serviceaccount:${ns}:${s.name}`, groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"] };
    }
    if (s.kind === "Group") {
        return { groups: [s.name, "system:authenticated"] };
    }
    return { user: s.name, groups: ["system:authenticated"] };
}

export const describeSubject = (s: BindingSubject): string => `${s.kind} ${s.namespace ? `${s.namespace}/` : ""}${s.name}`;

export const describeQuestion = (q: ResourceQuestion): string =>
    `${q.verb} ${q.group ? `${q.group}/` : ""}${q.resource}${q.subresource ? `/${q.subresource}` : ""}${q.namespace ? ` in ${q.namespace}` : " in every namespace"}`;
