import { CHART_VALUE_KEYS } from "./chartKeys";

/**
 * The Argo Rollouts releases the program installs, one entry per chart version (ADR-056 D7: the
 * controller and its CRDs are one pinned release). A cluster built mid-2026 runs the 1.8 line,
 * the current chart ships 1.9, so both are a choice, and adding a release is one entry here plus
 * its checks (test/versions.test.ts: its values keys against that chart's values file, the
 * controller's RBAC against that release's ClusterRole, the upgrade runbook against this table).
 */
export interface ControllerRelease {
    /** The argo-rollouts chart version (argoproj/argo-helm charts/argo-rollouts). */
    chartVersion: string;
    /** The chart's appVersion: the controller image tag and the tag the CRDs are read at. */
    appVersion: string;
    /** The controller's minor line, as the stack's acknowledgement names it. */
    line: string;
    /**
     * How the controller computes a Rollout's pod-template hash. Argo Rollouts hashes the JSON of
     * the pod template with FNV-32a (utils/hash/hash.go, unchanged from v1.8.4 to v1.9.0), so the
     * hash follows the Kubernetes modules the release builds with. From k8s.io/apimachinery v0.34
     * `ObjectMeta.CreationTimestamp` is tagged `omitzero` (pkg/apis/meta/v1/types.go), so the
     * template's `"creationTimestamp":null`, in every template's JSON under v0.29, is gone: no
     * template hashes alike. After a move between two schemes the controller finds no ReplicaSet
     * by the new hash and falls back to comparing templates (utils/replicaset/replicaset.go at
     * v1.9.0, FindNewReplicaSet, PodTemplateEqualIgnoreHash: its own defaults, then semantic
     * equality): a Rollout whose ReplicaSet template differs from its own (an admission webhook
     * mutated the ReplicaSet, as Kyverno's autogen rules of pod policies do, or the API server
     * defaults what the controller's libraries do not) gets a new revision (argoproj/argo-rollouts
     * #4696); one whose ReplicaSet is its template keeps it (seen in e2e upgrade-controller).
     */
    hashScheme: string;
    /** Values keys of this chart that 2.41.0's list has and it lacks (the keys list is 2.41.0's). */
    missingValueKeys: readonly string[];
    /**
     * What the release's controller calls, by `group/resource`, beyond the informers' list and
     * watch: every kubeclientset/argoprojclientset call outside tests, read at the release's tag.
     * The controller's ClusterRole (rbac.ts) must grant each (test/versions.test.ts).
     */
    calls: Readonly<Record<string, readonly string[]>>;
    /** Where each fact of the entry was read. */
    source: string;
}

/** Calls both lines make alike (argo-rollouts v1.8.4 and v1.9.0: rollout/, experiments/, analysis/, controller/). */
const COMMON_CALLS = {
    // rollout/restart.go evicts (never deletes) pods.
    "/pods/eviction": ["create"],
    "apps/replicasets": ["create", "delete", "get", "list", "patch", "update", "watch"],
    "/services": ["create", "delete", "get", "list", "patch", "watch"],
    "argoproj.io/rollouts/status": ["get", "list", "patch", "update", "watch"],
    // rollout/scale_utils.go updates a Deployment only for workloadRef scale-down, never used here.
    "apps/deployments": ["get", "list", "watch"],
} as const;

export const CONTROLLER_RELEASES: readonly ControllerRelease[] = [
    {
        chartVersion: "2.40.7",
        appVersion: "v1.8.4",
        line: "1.8",
        // argoproj/argo-rollouts go.mod at v1.8.4: k8s.io/api and apimachinery v0.29.3.
        hashScheme: "fnv32a of the template's JSON, apimachinery v0.29 (creationTimestamp: null)",
        // git diff argo-rollouts-2.40.7 argo-rollouts-2.41.0 -- charts/argo-rollouts/values.yaml
        // (argoproj/argo-helm): 2.41.0 added these, 2.40.7 has none of them. The program sets none.
        // rollout/ephemeralmetadata.go at v1.8.4 lists and updates pods; it re-reads none by name.
        calls: { ...COMMON_CALLS, "/pods": ["list", "update", "watch"] },
        missingValueKeys: [
            "controller.awsVerifyTargetGroup",
            "controller.awsTargetGroupBindingAPIVersion",
            "controller.albTagKeyResourceID",
            "controller.selfServiceNotification",
            "controller.pprofAddress",
            "dashboard.rootPath",
            "dashboard.httproute.annotations",
            "dashboard.httproute.enabled",
            "dashboard.httproute.hostnames",
            "dashboard.httproute.labels",
            "dashboard.httproute.parentRefs",
            "dashboard.httproute.rules",
        ],
        source: "argoproj/argo-helm charts/argo-rollouts at argo-rollouts-2.40.7 (Chart.yaml appVersion v1.8.4, values.yaml); argoproj/argo-rollouts go.mod and manifests/role at v1.8.4",
    },
    {
        chartVersion: "2.41.0",
        appVersion: "v1.9.0",
        line: "1.9",
        // argoproj/argo-rollouts go.mod at v1.9.0: k8s.io/api and apimachinery v0.34.1.
        hashScheme: "fnv32a of the template's JSON, apimachinery v0.34 (creationTimestamp omitted)",
        // rollout/ephemeralmetadata.go at v1.9.0 re-reads a pod by name after an update conflict
        // (updatePodMetadataWithRetry). manifests/role/argo-rollouts-clusterrole.yaml differs from
        // v1.8.4's only in the eks.amazonaws.com group of targetgroupbindings (AWS, never granted here).
        calls: { ...COMMON_CALLS, "/pods": ["get", "list", "update", "watch"] },
        missingValueKeys: [],
        source: "argoproj/argo-helm charts/argo-rollouts at argo-rollouts-2.41.0 (Chart.yaml appVersion v1.9.0, values.yaml); argoproj/argo-rollouts go.mod and manifests/role at v1.9.0",
    },
];

/** The release of a chart version, or undefined for a chart the table does not know. */
export function releaseOfChart(chartVersion: string): ControllerRelease | undefined {
    return CONTROLLER_RELEASES.find((r) => r.chartVersion === chartVersion);
}

/** The `X.Y` line of a tag such as v1.8.4; undefined when it is not a version. */
export function lineOf(tag: string): string | undefined {
    const m = /^v?(\d+)\.(\d+)\.\d+/.exec(tag);
    return m ? `${m[1]}.${m[2]}` : undefined;
}

/** The table's release of the line a running controller's tag belongs to (the newest of that line). */
export function releaseOfLine(tag: string): ControllerRelease | undefined {
    const line = lineOf(tag);
    return [...CONTROLLER_RELEASES].reverse().find((r) => r.line === line);
}

/** The values keys of one chart version (2.41.0's list less what that chart lacks). */
export function chartValueKeys(release: ControllerRelease): Readonly<Record<string, "value" | "any">> {
    const keys: Record<string, "value" | "any"> = { ...CHART_VALUE_KEYS };
    for (const k of release.missingValueKeys) {
        delete keys[k];
    }
    return keys;
}

/**
 * Whether a controller moving from the running tag to the configured one changes how pod-template
 * hashes are computed; undefined when either tag belongs to no line of the table (nothing is known).
 */
export function crossesHashBoundary(running: string, configured: string): boolean | undefined {
    const from = releaseOfLine(running);
    const to = releaseOfLine(configured);
    if (!from || !to) {
        return undefined;
    }
    return from.hashScheme !== to.hashScheme;
}
