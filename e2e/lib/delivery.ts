/**
 * What the delivery scenarios configure and observe: the stack settings that point a spoke's gates
 * at the run's Mimir stand-in, deliver the plugin from the run's file server and shorten the gate
 * timing (all through validated stack keys, nothing only tests can reach), and reads of the
 * Rollout, its AnalysisRuns, ReplicaSets and Services as the controller leaves them.
 */
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { Cluster } from "./cluster";
import { apiGet } from "./kube";
import { ConfigMap } from "./stacks";
import { PROJECT } from "../../components/config/reader";
import { PLUGIN_DEFAULTS } from "../../components/rollouts/config";
import { pluginDownloadUrl } from "../../components/rollouts/plugin";
import { SmokeStrategy } from "../../components/smoke/config";

/**
 * Gate timing short enough for a scenario, inside every rule the config enforces
 * (components/rollouts/config/analysis.ts readAnalysis): the rate window spans four scrape intervals, the
 * first measurement waits for a full window plus the write lag, and `count` exceeds the two limits.
 * The pushes of the synthetic series come every 2 s, well inside the 5 s "scrape interval".
 */
export const FAST_GATES = {
    scrapeInterval: "5s",
    rateWindow: "20s",
    remoteWriteLag: "2s",
    initialDelay: "22s",
    interval: "5s",
    minRequests: 50,
    count: 3,
    failureLimit: 0,
    inconclusiveLimit: 2,
} as const;

/**
 * The error-budget freeze's timing short enough for a scenario: measured every 5 s, and paused
 * for a human after 30 s (seven measurements, within the ten Argo Rollouts keeps per metric:
 * analysis/analysis.go DefaultMeasurementHistoryLimit at v1.9.0, so the model sees every one).
 */
export const FAST_FREEZE = { recheckInterval: "5s", maxFreeze: "30s" } as const;

export interface SmokeSetting {
    strategy: SmokeStrategy;
    namespace: string;
    trigger: string;
    failGate: boolean;
}

export const SMOKE_HOSTNAME = "rollouts-smoke.preprod.platform.test";

/** The registry prefix the shipped stacks pull from (their `imageRegistry`). */
function registry(config: ConfigMap): string {
    return String(config[`${PROJECT}:imageRegistry`] ?? "registry.platform.test/mirror");
}

/**
 * The stack patch of the delivery scenarios (applied on top of the run's local overrides). With
 * `readCaBundle` (the PEM of the run's CA, which issued the read endpoint's certificate), the
 * controller trusts the endpoint only through what the program declares for `mimir.readCaBundle`.
 */
export function deliveryPatch(opts: {
    readEndpoint: string;
    readCaBundle?: string;
    pluginBaseUrl: string;
    pluginSha256: string;
    smoke: SmokeSetting;
}): (config: ConfigMap) => void {
    return (config) => {
        const key = (k: string) => `${PROJECT}:${k}`;
        const mimir = { ...((config[key("mimir")] as Record<string, unknown> | undefined) ?? {}) };
        delete mimir.hubStack;
        mimir.readEndpoint = opts.readEndpoint;
        if (opts.readCaBundle !== undefined) {
            mimir.readCaBundle = opts.readCaBundle;
        }
        config[key("mimir")] = mimir;
        config[key("plugin")] = {
            version: PLUGIN_DEFAULTS.version,
            delivery: "download",
            arch: "amd64",
            baseUrl: opts.pluginBaseUrl,
            sha256: opts.pluginSha256,
        };
        config[key("analysis")] = { ...((config[key("analysis")] as Record<string, unknown> | undefined) ?? {}), ...FAST_GATES };
        config[key("errorBudget")] = { ...((config[key("errorBudget")] as Record<string, unknown> | undefined) ?? {}), ...FAST_FREEZE };
        const reg = registry(config);
        config[key("smokeTest")] = {
            enabled: true,
            strategy: opts.smoke.strategy,
            namespace: opts.smoke.namespace,
            hostname: SMOKE_HOSTNAME,
            trigger: opts.smoke.trigger,
            failGate: opts.smoke.failGate,
            // Never pulled (no kubelet): pinned by digest as the config requires.
            image: `${reg}/argoproj/rollouts-demo@sha256:${"a1".repeat(32)}`,
            loadImage: `${reg}/curlimages/curl@sha256:${"b2".repeat(32)}`,
            replicas: 2,
        };
    };
}

/**
 * The stack's plugin downloaded from the run's server (`plugin.delivery: download`), as a cluster
 * whose controller fetches it: for the scenarios that run the real controller on the hub stack.
 */
export function pluginDownloadPatch(plugin: Pick<PublishedPlugin, "baseUrl" | "sha256">): (config: ConfigMap) => void {
    return (config) => {
        config[`${PROJECT}:plugin`] = { version: PLUGIN_DEFAULTS.version, delivery: "download", arch: "amd64", baseUrl: plugin.baseUrl, sha256: plugin.sha256 };
    };
}

export interface PublishedPlugin {
    kind: "real" | "stand-in";
    source: string;
    sha256: string;
    baseUrl: string;
}

/**
 * Puts the traffic-router plugin where `plugin.baseUrl` points, as the release asset the program
 * names (pluginDownloadUrl): ARGO_ROLLOUTS_ADDON_E2E_PLUGIN when it names a build of the real
 * plugin, the stand-in (e2e/engines/gatewayapi-plugin) otherwise. The controller downloads it over
 * HTTPS and checks the sha256 the stack pins (argo-rollouts utils/plugin/downloader.go at v1.9.0).
 */
export function publishPlugin(bin: string, files: { root: string; url: string }): PublishedPlugin {
    const given = process.env.ARGO_ROLLOUTS_ADDON_E2E_PLUGIN;
    const source = given ? path.resolve(given) : path.join(bin, "gatewayapi-plugin");
    if (!fs.existsSync(source)) {
        throw new Error(given ? `ARGO_ROLLOUTS_ADDON_E2E_PLUGIN=${given}: no such file` : `${source}: the stand-in plugin was not built`);
    }
    const baseUrl = `${files.url}/plugin-releases`;
    const url = pluginDownloadUrl(baseUrl, PLUGIN_DEFAULTS.version, "amd64");
    const dest = path.join(files.root, url.slice(files.url.length + 1));
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(source, dest);
    const sha256 = createHash("sha256").update(fs.readFileSync(dest)).digest("hex");
    return { kind: given ? "real" : "stand-in", source, sha256, baseUrl };
}

export interface RolloutView {
    metadata: { name: string; namespace: string; generation?: number };
    spec: Record<string, unknown>;
    status?: {
        phase?: string;
        message?: string;
        abort?: boolean;
        currentPodHash?: string;
        stableRS?: string;
        currentStepIndex?: number;
        observedGeneration?: string;
        pauseConditions?: { reason: string }[];
        controllerPause?: boolean;
        blueGreen?: { activeSelector?: string; previewSelector?: string };
    };
}

export interface RunMetric {
    name: string;
    successCondition?: string;
    failureCondition?: string;
    count?: number;
    interval?: string;
    failureLimit?: number;
    inconclusiveLimit?: number;
    consecutiveErrorLimit?: number;
    consecutiveSuccessLimit?: number;
}

export interface AnalysisRunView {
    metadata: { name: string; labels?: Record<string, string>; creationTimestamp: string };
    spec?: { metrics?: RunMetric[]; terminate?: boolean };
    status?: { phase?: string; message?: string; metricResults?: { name: string; phase: string; measurements?: { phase: string; value?: string }[] }[] };
}

export interface ServiceView {
    metadata: { name: string };
    spec: { selector?: Record<string, string> };
}

export interface ReplicaSetView {
    metadata: { name: string; labels?: Record<string, string> };
    spec: { replicas?: number };
}

export interface RouteView {
    metadata: { name: string; labels?: Record<string, string> };
    spec: { rules?: { backendRefs?: { name: string; weight?: number }[] }[] };
}

export const POD_HASH = "rollouts-pod-template-hash";

export const getRollout = (c: Cluster, ns: string, name: string) => apiGet<RolloutView>(c, `/apis/argoproj.io/v1alpha1/namespaces/${ns}/rollouts/${name}`);

export async function analysisRuns(c: Cluster, ns: string, podHash: string): Promise<AnalysisRunView[]> {
    const list = await apiGet<{ items: AnalysisRunView[] }>(
        c,
        `/apis/argoproj.io/v1alpha1/namespaces/${ns}/analysisruns?labelSelector=${encodeURIComponent(`${POD_HASH}=${podHash}`)}`,
    );
    return list.items;
}

export const getService = (c: Cluster, ns: string, name: string) => apiGet<ServiceView>(c, `/api/v1/namespaces/${ns}/services/${name}`);

export const getReplicaSet = (c: Cluster, ns: string, name: string) => apiGet<ReplicaSetView>(c, `/apis/apps/v1/namespaces/${ns}/replicasets/${name}`);

/** The weight of backend `service` in the route's first rule that names it. */
export function backendWeight(route: RouteView, service: string): number | undefined {
    for (const rule of route.spec.rules ?? []) {
        const ref = (rule.backendRefs ?? []).find((b) => b.name === service);
        if (ref) {
            return ref.weight ?? 1;
        }
    }
    return undefined;
}

/** A value sequence without consecutive repeats. */
export function collapse<T>(values: readonly T[]): T[] {
    return values.filter((v, i) => i === 0 || v !== values[i - 1]);
}

/** Whether `sub` appears in `seq` in order (not necessarily adjacent). */
export function inOrder<T>(seq: readonly T[], sub: readonly T[]): boolean {
    let i = 0;
    for (const v of seq) {
        if (v === sub[i]) {
            i++;
        }
    }
    return i === sub.length;
}
