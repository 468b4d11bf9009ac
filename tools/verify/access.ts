/** What verify asks the API server's authorizer; RBAC rule matching only to name the ClusterRoles that grant too much. */
import type { AddonConfig } from "../../stacks/config";
import { MIMIR_DEFAULTS } from "../../components/gateway/config";
import { READ_CA_CONFIGMAP } from "../../components/rollouts/trust";
import type { ResourceQuestion, Subject } from "./cluster";
import type { PolicyRule } from "../../components/argoRollouts";

/** One API call the controller makes, with where it is in the controller's source. */
export interface ControllerCall extends Omit<ResourceQuestion, "namespace" | "name"> {
    /** "cluster": every namespace; "controller": its own namespace. */
    scope: "cluster" | "controller";
    source: string;
}

const AR = "argo-rollouts v1.9.0";
const PLUGIN = "rollouts-plugin-trafficrouter-gatewayapi v0.15.0";

/** The controller's calls on the platform's Rollout path, read from its source; components/rollouts/rbac.ts must grant each (a test holds it). */
export const ROLLOUT_PATH_CALLS: readonly ControllerCall[] = (
    [
        ["cluster", "argoproj.io", "rollouts", "get list watch update", `${AR} rollout/controller.go (informer, Update), rollout/replicaset.go (Get)`],
        ["cluster", "argoproj.io", "rollouts/status", "update patch", `${AR} rollout/sync.go (UpdateStatus, Patch "status")`],
        // blockOwnerDeletion on what a Rollout owns needs update on its finalizers (OwnerReferencesPermissionEnforcement).
        ["cluster", "argoproj.io", "rollouts/finalizers", "update", `${AR} utils/replicaset (owner references with blockOwnerDeletion)`],
        ["cluster", "argoproj.io", "analysisruns", "create get list watch patch delete", `${AR} utils/analysis/helpers.go, rollout/analysis.go`],
        ["cluster", "argoproj.io", "analysistemplates", "get list watch", `${AR} cmd/rollouts-controller/main.go (informer)`],
        ["cluster", "argoproj.io", "clusteranalysistemplates", "get list watch", `${AR} cmd/rollouts-controller/main.go (informer)`],
        ["cluster", "argoproj.io", "experiments", "list watch", `${AR} cmd/rollouts-controller/main.go (informer)`],
        ["cluster", "apps", "replicasets", "create get list watch update patch delete", `${AR} rollout/sync.go, rollout/replicaset.go, rollout/controller.go`],
        ["cluster", "", "services", "get list watch patch", `${AR} rollout/service.go (Get, Patch of the selector)`],
        ["cluster", "", "pods", "list", `${AR} utils/replicaset/replicaset.go, rollout/restart.go (List)`],
        ["cluster", "", "pods", "get update", `${AR} rollout/ephemeralmetadata.go (Update, Get after a conflict)`],
        // A restart (`kubectl argo rollouts restart`, ArgoCD's restart action) evicts, never deletes.
        ["cluster", "", "pods/eviction", "create", `${AR} rollout/restart.go (Evict)`],
        ["cluster", "", "events", "create patch", `${AR} utils/record/record.go (event sink)`],
        ["cluster", "batch", "jobs", "list watch", `${AR} cmd/rollouts-controller/main.go (informer, started whatever the provider)`],
        ["cluster", "networking.k8s.io", "ingresses", "list watch", `${AR} cmd/rollouts-controller/main.go (ingress informer)`],
        ["cluster", "gateway.networking.k8s.io", "httproutes", "get list update", `${PLUGIN} pkg/plugin/httproute.go, pkg/plugin/plugin.go`],
        ["controller", "coordination.k8s.io", "leases", "get create update", `${AR} controller/controller.go (LeaseLock argo-rollouts-controller-lock)`],
        ["controller", "", "configmaps", "get list watch", `${AR} controller/controller.go (argo-rollouts-config, notification ConfigMap informer)`],
        ["controller", "", "secrets", "list watch", `${AR} controller/controller.go (notification Secret informer)`],
    ] as const
).flatMap(([scope, group, target, verbs, source]) => {
    const [resource, subresource] = target.split("/");
    return verbs.split(" ").map((verb) => ({ verb, group, resource, ...(subresource ? { subresource } : {}), scope, source }));
});

/** Whether an RBAC rule grants a request (kubernetes pkg/apis/rbac/v1/evaluation_helpers.go: `*`, subresources, resourceNames). */
export function ruleAllows(rule: PolicyRule, q: Pick<ResourceQuestion, "verb" | "group" | "resource" | "subresource" | "name">): boolean {
    const any = (list: readonly string[], v: string) => list.includes("*") || list.includes(v);
    const combined = q.subresource ? `${q.resource}/${q.subresource}` : q.resource;
    const resource = rule.resources.some((r) => r === "*" || r === combined || (q.subresource !== undefined && r === `*/${q.subresource}`));
    const name = !rule.resourceNames?.length || (q.name !== undefined && rule.resourceNames.includes(q.name));
    return any(rule.verbs, q.verb) && any(rule.apiGroups, q.group) && resource && name;
}

export type BindingSubject = { kind: string; name: string; namespace?: string };

/** Who the API server authenticates a binding subject as (ServiceAccounts in their groups; everyone in `system:authenticated`). */
export function reviewSubject(s: BindingSubject, bindingNamespace?: string): Subject {
    const ns = s.namespace ?? bindingNamespace ?? "default";
    return s.kind === "ServiceAccount"
        ? { user: `system:serviceaccount:${ns}:${s.name}`, groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"] }
        : s.kind === "Group"
          ? { groups: [s.name, "system:authenticated"] }
          : { user: s.name, groups: ["system:authenticated"] };
}

export const describeSubject = (s: BindingSubject): string => `${s.kind} ${s.namespace ? `${s.namespace}/` : ""}${s.name}`;

export const describeQuestion = (q: ResourceQuestion): string =>
    `${q.verb} ${q.group ? `${q.group}/` : ""}${q.resource}${q.subresource ? `/${q.subresource}` : ""}${q.namespace ? ` in ${q.namespace}` : " in every namespace"}`;

/** Kyverno's configuration ConfigMap (its chart's `config.name`, default the release name). */
export const KYVERNO_CONFIGMAP = "kyverno";

export const VERIFY_CONFIGMAPS = ["argo-rollouts-config", READ_CA_CONFIGMAP, "argocd-cm", "argocd-rbac-cm", KYVERNO_CONFIGMAP] as const;

/**
 * Everything verify asks for, as RBAC rules: reads, and `create` on SubjectAccessReviews (a review stores nothing); no Secret,
 * ConfigMaps by name, the hub's service proxy and Gateway by name. A test holds every request to them.
 */
export function verifyRules(config?: Pick<AddonConfig, "cluster" | "mimir">): PolicyRule[] {
    const hub = config === undefined || config.cluster.role === "hub";
    const rule = (apiGroup: string, resources: string[], verbs: string[], resourceNames?: string[]): PolicyRule => ({
        apiGroups: [apiGroup],
        resources,
        verbs,
        ...(resourceNames ? { resourceNames } : {}),
    });
    const gateway = config ? [config.mimir.ingestGateway.name] : undefined;
    return [
        rule("apiextensions.k8s.io", ["customresourcedefinitions"], ["get"]),
        rule("", ["namespaces", "pods"], ["list"]),
        rule("", ["configmaps"], ["get"], [...VERIFY_CONFIGMAPS]),
        // serviceaccounts: a ServiceAccount the approval guard names exists on a spoke.
        rule("", ["services", "serviceaccounts"], ["get"]),
        ...(hub ? [rule("", ["services/proxy"], ["get"], [config?.mimir.gatewayService ?? MIMIR_DEFAULTS.gatewayService])] : []),
        rule("apps", ["deployments"], ["get", "list"]),
        rule("apps", ["statefulsets"], ["list"]),
        rule("coordination.k8s.io", ["leases"], ["get"]),
        rule("policy", ["poddisruptionbudgets"], ["list"]),
        rule("rbac.authorization.k8s.io", ["clusterroles"], ["get", "list"]),
        rule("rbac.authorization.k8s.io", ["rolebindings"], ["list"]),
        rule("kyverno.io", ["clusterpolicies"], ["get", "list"]),
        rule("policies.kyverno.io", ["validatingpolicies", "mutatingpolicies", "generatingpolicies"], ["get", "list"]),
        rule("argoproj.io", ["rollouts", "appprojects"], ["get", "list"]),
        rule("argoproj.io", ["analysisruns", "applications"], ["list"]),
        rule("argoproj.io", ["applicationsets"], ["get", "list"]),
        rule("argoproj.io", ["clusteranalysistemplates"], ["get"]),
        // The hub audits every route on a spoke's hostname, whoever owns it.
        rule("gateway.networking.k8s.io", ["httproutes"], hub ? ["get", "list"] : ["get"]),
        ...(hub ? [rule("gateway.networking.k8s.io", ["gateways"], ["get"], gateway)] : []),
        rule("authorization.k8s.io", ["subjectaccessreviews"], ["create"]),
    ];
}

export const VERIFY_ROLE_NAME = "argo-rollouts-addon-verify";

/** The ClusterRole a platform team can bind to verify's identity (`npm run verify -- --print-role`). */
export function verifyClusterRole(config?: Pick<AddonConfig, "cluster" | "mimir">): Record<string, unknown> {
    return {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: VERIFY_ROLE_NAME, labels: { "app.kubernetes.io/part-of": "argo-rollouts-addon" } },
        rules: verifyRules(config),
    };
}
