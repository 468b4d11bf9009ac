import type { PolicyRule } from "../argoRollouts";
import type { PluginConfig } from "./config/plugin";

const READ = ["get", "list", "watch"];

/**
 * The controller's cluster-wide rules (ADR-056 D4): what Argo Rollouts needs for direct-template
 * Rollouts with the Prometheus provider, and the Gateway API plugin. The chart's ClusterRole stays off:
 * its provider RBAC grants meshes the platform does not run, and write on every ConfigMap, which the
 * plugin has not needed since v0.13. Each verb is a call of the controller (test/versions.test.ts).
 */
export function controllerClusterRules(plugin: Pick<PluginConfig, "tcpRoutes" | "tlsRoutes">): PolicyRule[] {
    const routes = ["httproutes", "grpcroutes", ...(plugin.tcpRoutes ? ["tcproutes"] : []), ...(plugin.tlsRoutes ? ["tlsroutes"] : [])];
    return [
        { apiGroups: ["argoproj.io"], resources: ["rollouts", "rollouts/status", "rollouts/finalizers"], verbs: [...READ, "update", "patch"] },
        {
            apiGroups: ["argoproj.io"],
            resources: ["analysisruns", "analysisruns/finalizers", "experiments", "experiments/finalizers"],
            verbs: ["create", ...READ, "update", "patch", "delete"],
        },
        { apiGroups: ["argoproj.io"], resources: ["analysistemplates", "clusteranalysistemplates"], verbs: READ },
        { apiGroups: ["apps"], resources: ["replicasets"], verbs: ["create", ...READ, "update", "patch", "delete"] },
        // Read only: the controller's informers watch these for workloadRef Rollouts; the platform
        // uses direct templates (ADR-056 D2), so nothing here is ever written.
        { apiGroups: ["apps"], resources: ["deployments"], verbs: READ },
        { apiGroups: [""], resources: ["podtemplates"], verbs: READ },
        // Stable/canary Service selectors are patched; experiments create and delete Services.
        { apiGroups: [""], resources: ["services"], verbs: [...READ, "create", "patch", "delete"] },
        // Ephemeral canary/stable metadata is written onto running pods; after an update conflict the
        // controller re-reads the pod by name (argo-rollouts v1.9.0 rollout/ephemeralmetadata.go,
        // updatePodMetadataWithRetry), which the upstream ClusterRole does not grant.
        { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "update"] },
        { apiGroups: [""], resources: ["pods/eviction"], verbs: ["create"] },
        { apiGroups: [""], resources: ["events"], verbs: ["create", "update", "patch"] },
        // Analysis args may reference a Secret in the Rollout's namespace, read by name.
        { apiGroups: [""], resources: ["secrets"], verbs: ["get"] },
        // Read only: the analysis and ingress informers start regardless of use. The Job provider
        // is refused on this platform (Kyverno denies its pod, ADR-056 as-built), and the canary is
        // routed through Gateway API, never an Ingress.
        { apiGroups: ["batch"], resources: ["jobs"], verbs: READ },
        { apiGroups: ["networking.k8s.io"], resources: ["ingresses"], verbs: READ },
        // The Gateway API plugin: it reads and rewrites backendRef weights, and reads Services.
        { apiGroups: ["gateway.networking.k8s.io"], resources: routes, verbs: [...READ, "update"] },
    ];
}

/** The controller's own namespace: leader election, its config and the notification ConfigMap and Secret. */
export function controllerNamespaceRules(): PolicyRule[] {
    return [
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create", "get", "update"] },
        { apiGroups: [""], resources: ["configmaps", "secrets"], verbs: READ },
    ];
}
