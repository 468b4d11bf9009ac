/**
 * What verify asks the API server's authorizer, and the RBAC rule semantics it needs to explain
 * an answer. Decisions come from SubjectAccessReviews; rule matching is only used to name the
 * ClusterRoles that grant something they should not.
 */
import type { AddonConfig } from "../../stacks/config";
import { MIMIR_DEFAULTS } from "../../components/gateway/config";
import { READ_CA_CONFIGMAP } from "../../components/rollouts/trust";
import type { ResourceQuestion, Subject } from "./cluster";
import type { PolicyRule } from "../../components/argoRollouts";

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
    ...calls(
        "cluster",
        "argoproj.io",
        "rollouts",
        ["get", "list", "watch", "update"],
        `${AR} rollout/controller.go (informer, Update), rollout/replicaset.go (Get)`,
    ),
    ...calls("cluster", "argoproj.io", "rollouts", ["update", "patch"], `${AR} rollout/sync.go (UpdateStatus, Patch "status")`, "status"),
    // metav1.NewControllerRef sets blockOwnerDeletion on the ReplicaSets and AnalysisRuns a Rollout
    // owns; with the OwnerReferencesPermissionEnforcement admission plugin that needs update on the
    // owner's finalizers.
    ...calls("cluster", "argoproj.io", "rollouts", ["update"], `${AR} utils/replicaset (owner references with blockOwnerDeletion)`, "finalizers"),
    ...calls(
        "cluster",
        "argoproj.io",
        "analysisruns",
        ["create", "get", "list", "watch", "patch", "delete"],
        `${AR} utils/analysis/helpers.go (CreateWithCollisionCounter), rollout/analysis.go (Patch, Delete)`,
    ),
    ...calls("cluster", "argoproj.io", "analysistemplates", ["get", "list", "watch"], `${AR} cmd/rollouts-controller/main.go (informer)`),
    ...calls("cluster", "argoproj.io", "clusteranalysistemplates", ["get", "list", "watch"], `${AR} cmd/rollouts-controller/main.go (informer)`),
    ...calls("cluster", "argoproj.io", "experiments", ["list", "watch"], `${AR} cmd/rollouts-controller/main.go (informer)`),
    ...calls(
        "cluster",
        "apps",
        "replicasets",
        ["create", "get", "list", "watch", "update", "patch", "delete"],
        `${AR} rollout/sync.go (Create, Get, Delete), rollout/replicaset.go (Patch), rollout/controller.go (Update)`,
    ),
    ...calls("cluster", "", "services", ["get", "list", "watch", "patch"], `${AR} rollout/service.go (Get, Patch of the selector)`),
    ...calls("cluster", "", "pods", ["list"], `${AR} utils/replicaset/replicaset.go, rollout/restart.go (List)`),
    // Ephemeral canary/stable metadata on running pods: Update, and after a Conflict a Get of the
    // pod by name before the retry (updatePodMetadataWithRetry).
    ...calls("cluster", "", "pods", ["get", "update"], `${AR} rollout/ephemeralmetadata.go (Update, Get after a conflict)`),
    // A restart (`kubectl argo rollouts restart`, ArgoCD's restart action) evicts, never deletes.
    ...calls("cluster", "", "pods", ["create"], `${AR} rollout/restart.go (Evict)`, "eviction"),
    ...calls("cluster", "", "events", ["create", "patch"], `${AR} utils/record/record.go (event sink)`),
    ...calls("cluster", "batch", "jobs", ["list", "watch"], `${AR} cmd/rollouts-controller/main.go (informer, started whatever the provider)`),
    ...calls("cluster", "networking.k8s.io", "ingresses", ["list", "watch"], `${AR} cmd/rollouts-controller/main.go (ingress informer)`),
    ...calls(
        "cluster",
        "gateway.networking.k8s.io",
        "httproutes",
        ["get", "list", "update"],
        `${PLUGIN} pkg/plugin/httproute.go (Get, Update), pkg/plugin/plugin.go (List)`,
    ),
    ...calls(
        "controller",
        "coordination.k8s.io",
        "leases",
        ["get", "create", "update"],
        `${AR} controller/controller.go (LeaseLock argo-rollouts-controller-lock)`,
    ),
    ...calls(
        "controller",
        "",
        "configmaps",
        ["get", "list", "watch"],
        `${AR} controller/controller.go (argo-rollouts-config, notification ConfigMap informer)`,
    ),
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

/** Kyverno's configuration (its chart's `config.name`, default the release name `kyverno`; the controllers' INIT_CONFIG). */
export const KYVERNO_CONFIGMAP = "kyverno";

/** The ConfigMaps verify reads: the controller's plugin list and read CA, argocd-cm, argocd-rbac-cm and Kyverno's configuration. */
export const VERIFY_CONFIGMAPS = ["argo-rollouts-config", READ_CA_CONFIGMAP, "argocd-cm", "argocd-rbac-cm", KYVERNO_CONFIGMAP] as const;

/**
 * Everything verify asks the API server for, as RBAC rules: what its identity needs, and nothing
 * it could write with (`create` on SubjectAccessReviews only: the API server evaluates a review and
 * stores nothing). No Secret is read; ConfigMaps only by name. The service proxy (a GET to a
 * Service through the API server) is granted for the hub's Mimir gateway only, and not at all for
 * a spoke; so are `list` on HTTPRoutes and `get` on the ingest Gateway. `npm run verify -- --print-role [--stack <name>]` prints them as a ClusterRole; a test
 * holds every request verify makes to them. `/version` and SelfSubjectAccessReviews are open to
 * every authenticated user (the default `system:public-info-viewer` and `system:basic-user` roles).
 */
export function verifyRules(config?: Pick<AddonConfig, "cluster" | "mimir">): PolicyRule[] {
    const hub = config === undefined || config.cluster.role === "hub";
    const gateway = config?.mimir.gatewayService ?? MIMIR_DEFAULTS.gatewayService;
    return [
        { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["get"] },
        { apiGroups: [""], resources: ["namespaces", "pods"], verbs: ["list"] },
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get"], resourceNames: [...VERIFY_CONFIGMAPS] },
        { apiGroups: [""], resources: ["services"], verbs: ["get"] },
        // The regulated identities: a ServiceAccount the approval guard names exists on a spoke.
        { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["get"] },
        ...(hub ? [{ apiGroups: [""], resources: ["services/proxy"], verbs: ["get"], resourceNames: [gateway] }] : []),
        { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list"] },
        { apiGroups: ["apps"], resources: ["statefulsets"], verbs: ["list"] },
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get"] },
        { apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: ["list"] },
        { apiGroups: ["rbac.authorization.k8s.io"], resources: ["clusterroles"], verbs: ["get", "list"] },
        { apiGroups: ["rbac.authorization.k8s.io"], resources: ["rolebindings"], verbs: ["list"] },
        { apiGroups: ["kyverno.io"], resources: ["clusterpolicies"], verbs: ["get", "list"] },
        { apiGroups: ["policies.kyverno.io"], resources: ["validatingpolicies", "mutatingpolicies", "generatingpolicies"], verbs: ["get", "list"] },
        { apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: ["get", "list"] },
        { apiGroups: ["argoproj.io"], resources: ["analysisruns", "applications"], verbs: ["list"] },
        { apiGroups: ["argoproj.io"], resources: ["clusteranalysistemplates", "applicationsets"], verbs: ["get"] },
        // Every AppProject: another project's destinations may reach a regulated namespace.
        { apiGroups: ["argoproj.io"], resources: ["appprojects"], verbs: ["get", "list"] },
        // The hub lists HTTPRoutes in every namespace and reads the ingest Gateway's listeners: every
        // route on a spoke's hostname and listener is audited, not only the hub's own.
        { apiGroups: ["gateway.networking.k8s.io"], resources: ["httproutes"], verbs: hub ? ["get", "list"] : ["get"] },
        ...(hub
            ? [
                  {
                      apiGroups: ["gateway.networking.k8s.io"],
                      resources: ["gateways"],
                      verbs: ["get"],
                      ...(config ? { resourceNames: [config.mimir.ingestGateway.name] } : {}),
                  },
              ]
            : []),
        { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
    ];
}

/** The ClusterRole a platform team can bind to verify's identity (`npm run verify -- --print-role`). */
export const VERIFY_ROLE_NAME = "argo-rollouts-addon-verify";

export function verifyClusterRole(config?: Pick<AddonConfig, "cluster" | "mimir">): Record<string, unknown> {
    return {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: VERIFY_ROLE_NAME, labels: { "app.kubernetes.io/part-of": "argo-rollouts-addon" } },
        rules: verifyRules(config),
    };
}
