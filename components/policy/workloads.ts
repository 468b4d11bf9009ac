/**
 * The pod controllers the availability policies cover (ADR-056 D2): Rollout beside Deployment and
 * StatefulSet. Rollout is matched by name in every rule: Kyverno's autogen drops Rollout when the
 * autogen list also names a built-in controller (Kyverno #7446, still so in 1.19) and the CEL
 * autogen list does not know rollouts either (kyverno v1.17.2 pkg/cel/autogen/data.go: daemonsets,
 * deployments, replicasets, statefulsets, jobs and cronjobs only).
 */
export interface WorkloadKind {
    kind: "Deployment" | "StatefulSet" | "Rollout" | "HorizontalPodAutoscaler" | "ReplicaSet" | "Pod" | "HTTPRoute";
    group: string;
    version: string;
    /** The plural resource name admission matches on. */
    resource: string;
    /**
     * The label the controller gives each revision's pods. Topology spread counts only the current
     * revision's pods through `matchLabelKeys`; Rollout pods carry `rollouts-pod-template-hash`, not
     * `pod-template-hash` (ADR-056 D2). StatefulSets update pod by pod and spread as one set.
     */
    revisionLabel?: string;
    /**
     * Subresources a ClusterPolicy rule for the kind matches with it: a Pod rule also matches
     * pods/ephemeralcontainers (kyverno/kyverno v1.17.2 pkg/utils/match/kind.go `CheckKind`, and its
     * webhook asks for them: pkg/controllers/webhook/utils_webhook.go); the CEL form names them.
     */
    alsoMatches?: string[];
}

export const DEPLOYMENT: WorkloadKind = { kind: "Deployment", group: "apps", version: "v1", resource: "deployments", revisionLabel: "pod-template-hash" };
export const STATEFULSET: WorkloadKind = { kind: "StatefulSet", group: "apps", version: "v1", resource: "statefulsets" };
export const ROLLOUT: WorkloadKind = {
    kind: "Rollout",
    group: "argoproj.io",
    version: "v1alpha1",
    resource: "rollouts",
    revisionLabel: "rollouts-pod-template-hash",
};

export const WORKLOADS: readonly WorkloadKind[] = [DEPLOYMENT, STATEFULSET, ROLLOUT];

/**
 * Not a pod controller, but what scales one: an HPA-managed workload's replica floor lives in the
 * HPA's minReplicas (ADR-056 D2). `autoscaling/v2` is matched; requests through other versions are
 * converted to it (the webhook's default matchPolicy, Equivalent).
 */
export const HPA: WorkloadKind = { kind: "HorizontalPodAutoscaler", group: "autoscaling", version: "v2", resource: "horizontalpodautoscalers" };

/**
 * What a regulated Rollout runs on (ADR-056 D3): the ReplicaSets Argo Rollouts creates for each
 * revision and the Pods Kubernetes' ReplicaSet controller creates for them. The approval guard
 * refuses anyone else's writes to them.
 */
export const REPLICASET: WorkloadKind = { kind: "ReplicaSet", group: "apps", version: "v1", resource: "replicasets" };
export const POD: WorkloadKind = { kind: "Pod", group: "", version: "v1", resource: "pods", alsoMatches: ["ephemeralcontainers"] };

/** `<group>/<version>` as Kyverno's resource library and apiVersion fields spell it. */
export const apiVersion = (w: WorkloadKind): string => (w.group ? `${w.group}/${w.version}` : w.version);

/**
 * Kyverno ClusterPolicy kind reference: `group/version/Kind`, or `version/Kind` for the core group
 * (kyverno/kyverno pkg/utils/kube/kind.go `ParseKindSelector` at v1.17.2: a version first means no group).
 */
export const gvk = (w: WorkloadKind): string => (w.group ? `${w.group}/${w.version}/${w.kind}` : `${w.version}/${w.kind}`);

/** Not a workload, but where a blue/green app's production traffic goes (ADR-056 D4): tier admission reads its backends. */
export const HTTPROUTE: WorkloadKind = { kind: "HTTPRoute", group: "gateway.networking.k8s.io", version: "v1", resource: "httproutes" };
