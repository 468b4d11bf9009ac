import { ConfigReader, DNS_LABEL, HOSTNAME, HTTPS_URL, QUANTITY, SecretValue, parseQuantity } from "../config/reader";
import { TenantOperatorBinding, readTenantOperators } from "./tenants";

/**
 * The rollouts stage's configuration sections (ADR-056 D4, D5, D6, D7): `imageRegistry`,
 * `controller` and `plugin` (the controller chart and the Gateway API plugin), `analysis` (the
 * shared metric gates' thresholds and timing), `network` (the controller's network policy),
 * `errorBudget` (the error-budget gate's template) and `notifications` (with `notificationsToken`).
 * The rollouts stage declares what each of them configures. Their types, defaults and readers;
 * the analysis reader also refuses the timing traps of the metric gates.
 */

export interface ImagesConfig {
    /**
     * The registry mirror every image is pulled from (clusters admit only the mirror). Unset means
     * the upstream registries, which only suits clusters without a registry policy.
     */
    registry?: string;
}

export interface Quantities {
    cpu: string;
    memory: string;
}

export interface ControllerConfig {
    namespace: string;
    /** Extra namespace labels the platform's admission layer expects (merged over the defaults). */
    namespaceLabels: Record<string, string>;
    chartRepository: string;
    chartVersion: string;
    /**
     * The Argo Rollouts version the controller image and the CRDs are both pinned to, so the
     * CRDs can never drift from the controller that reads them.
     */
    appVersion: string;
    /** Base URL of the Argo Rollouts source tree the CRD manifests are read from, per tag. */
    crdBaseUrl: string;
    replicas: number;
    /** Integer budget for the controller's PodDisruptionBudget (the chart renders minAvailable: 0 otherwise). */
    pdbMaxUnavailable: number;
    requests: Quantities;
    limits: Quantities;
    logLevel: "debug" | "info" | "warn" | "error";
    serviceMonitor: boolean;
    dashboard: boolean;
    priorityClassName?: string;
    /** Namespaces whose groups may restart, abort, retry, promote and scale Rollouts (tenants.ts). */
    tenantOperators: TenantOperatorBinding[];
}

export type PluginArch = "amd64" | "arm64";

/** How the Gateway API plugin binary reaches the controller. */
export type PluginDelivery =
    | { mode: "download"; arch: PluginArch; baseUrl: string; sha256: string }
    | { mode: "image"; repository: string; digest: string };

export interface PluginConfig {
    version: string;
    delivery: PluginDelivery;
    /** Grant the plugin TCPRoute access (experimental channel routes; off unless used). */
    tcpRoutes: boolean;
    /** Grant the plugin TLSRoute access (experimental channel routes; off unless used). */
    tlsRoutes: boolean;
}

export interface AnalysisConfig {
    /** Minimum non-5xx ratio of the canary (ADR-056 as-built: 0.95). */
    successRate: number;
    /** Maximum p99 latency of the canary, in seconds; below Beyla's highest finite bucket. */
    latencyP99Seconds: number;
    /** How often Beyla's metrics are scraped: the rate window must hold several samples. */
    scrapeInterval: string;
    /** PromQL window of every gate query; at least RATE_WINDOW_SCRAPES scrape intervals. */
    rateWindow: string;
    /** How long a sample takes from the scrape to being queryable in Mimir (remote write). */
    remoteWriteLag: string;
    /** At least the rate window plus the remote-write lag: an empty window must not look like a bad canary (ADR-056 D5). */
    initialDelay: string;
    interval: string;
    /**
     * Requests the measured ReplicaSet must have served in one rate window for a measurement to
     * count; below it the query is empty and the measurement Inconclusive.
     */
    minRequests: number;
    /** Measurements of the finite templates (pre/post-promotion and step analysis). */
    count: number;
    failureLimit: number;
    inconclusiveLimit: number;
    consecutiveErrorLimit: number;
}

export interface CanaryTarget {
    namespace: string;
    port: number;
}

export interface NetworkConfig {
    /** Whether the controller namespace gets a default-deny policy of its own. */
    controllerDefaultDeny: boolean;
    dnsNamespace: string;
    dnsPodLabels: Record<string, string>;
    /** Spoke: CIDRs of the hub read endpoint (the internal load balancer), when FQDNs are not used. */
    hubReadCidrs: string[];
    /** Spoke: extra FQDNs of the hub read endpoint (its host is always allowed). */
    hubReadFqdns: string[];
    /** Default-deny only: pods the controller must reach (web analysis against canary Services). */
    canaryTargets: CanaryTarget[];
    /** Default-deny only: namespaces whose pods may scrape the controller's metrics. */
    metricsScrapeNamespaces: string[];
}

export interface ErrorBudgetConfig {
    /**
     * PromQL for the app's remaining error budget as a ratio (1 = untouched, 0 = exhausted), with
     * `{{args.service}}` and `{{args.slo}}` where the app's SLO goes.
     */
    query: string;
    /** The gate fails when the remaining budget is at or below this. */
    minRemaining: number;
}

export type NotificationService = "slack" | "webhook";

export interface NotificationsConfig {
    service?: NotificationService;
    /** Slack: the default subscription's channel. */
    slackChannel?: string;
    /** Webhook: where events are POSTed. */
    webhookUrl?: string;
    /** The Slack bot token or webhook bearer token (a Pulumi secret). */
    token?: SecretValue;
}

/**
 * Chart versions whose appVersion is known. A chart not listed here needs `controller.appVersion`,
 * because the CRDs are pinned to the controller's version and must not be guessed.
 * Source: argoproj/argo-helm charts/argo-rollouts Chart.yaml (2.41.0 -> appVersion v1.9.0).
 */
export const KNOWN_CHART_APP_VERSIONS: Readonly<Record<string, string>> = {
    "2.41.0": "v1.9.0",
};

/**
 * Every default of these sections, one object per section; the README's config reference follows
 * them.
 */
export const CONTROLLER_DEFAULTS = {
    namespace: "argo-rollouts",
    chartRepository: "https://argoproj.github.io/argo-helm",
    chartVersion: "2.41.0",
    crdBaseUrl: "https://raw.githubusercontent.com/argoproj/argo-rollouts",
    // Two replicas: the controller runs leader election, so one is active and one is warm.
    replicas: 2,
    pdbMaxUnavailable: 1,
    requests: { cpu: "100m", memory: "256Mi" },
    limits: { cpu: "1", memory: "512Mi" },
    logLevel: "info",
    serviceMonitor: false,
    dashboard: false,
} as const;

export const PLUGIN_DEFAULTS = {
    version: "v0.15.0",
    delivery: "download",
    arch: "amd64",
    baseUrl: "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi/releases/download",
    repository: "argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi",
    tcpRoutes: false,
    tlsRoutes: false,
} as const;

export const ANALYSIS_DEFAULTS = {
    successRate: 0.95,
    latencyP99Seconds: 0.5,
    scrapeInterval: "60s",
    rateWindow: "4m",
    remoteWriteLag: "1m",
    initialDelay: "5m",
    interval: "1m",
    minRequests: 50,
    count: 3,
    failureLimit: 0,
    inconclusiveLimit: 2,
    consecutiveErrorLimit: 4,
} as const;

export const NETWORK_DEFAULTS = {
    controllerDefaultDeny: false,
    dnsNamespace: "kube-system",
    dnsPodLabels: { "k8s-app": "kube-dns" },
} as const;

/** Sloth's metadata rule for the remaining budget over the SLO period (slok/sloth conventions). */
export const SLOTH_REMAINING_BUDGET = 'slo:period_error_budget_remaining:ratio{sloth_service="{{args.service}}",sloth_slo="{{args.slo}}"}';

export const ERROR_BUDGET_DEFAULTS = { query: SLOTH_REMAINING_BUDGET, minRemaining: 0 } as const;

/** The config key holding the notification token; it must be set with `pulumi config set --secret`. */
export const NOTIFICATIONS_TOKEN_KEY = "notificationsToken";

/** Namespaces the cluster itself owns: no tenant's. */
const PLATFORM_NAMESPACES: readonly string[] = ["default", "kube-system", "kube-public", "kube-node-lease"];

const CONTROLLER_KEYS = [
    "namespace",
    "namespaceLabels",
    "chartRepository",
    "chartVersion",
    "appVersion",
    "crdBaseUrl",
    "replicas",
    "pdbMaxUnavailable",
    "resources",
    "logLevel",
    "serviceMonitor",
    "dashboard",
    "priorityClassName",
    "tenantOperators",
];

const PLUGIN_KEYS = ["version", "delivery", "arch", "sha256", "baseUrl", "repository", "digest", "tcpRoutes", "tlsRoutes"];

const ANALYSIS_KEYS = [
    "successRate",
    "latencyP99Seconds",
    "scrapeInterval",
    "rateWindow",
    "remoteWriteLag",
    "initialDelay",
    "interval",
    "minRequests",
    "count",
    "failureLimit",
    "inconclusiveLimit",
    "consecutiveErrorLimit",
];

const NETWORK_KEYS = ["controllerDefaultDeny", "dnsNamespace", "dnsPodLabels", "hubReadCidrs", "hubReadFqdns", "canaryTargets", "metricsScrapeNamespaces"];

const SEMVER = /^[0-9]+\.[0-9]+\.[0-9]+$/;
const VTAG = /^v[0-9]+\.[0-9]+\.[0-9]+(-rc[0-9]+)?$/;
const CHART_REPO = /^(https|oci):\/\/[A-Za-z0-9.-]+(:[0-9]+)?(\/[A-Za-z0-9._~%\/-]*)?$/;
const REGISTRY = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;
const REPOSITORY = /^[a-z0-9]+([._-][a-z0-9]+)*(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;
const SHA256_HEX = /^[A-Fa-f0-9]{64}$/;
const IMAGE_DIGEST = /^sha256:[a-f0-9]{64}$/;
/** Argo Rollouts durations as used here: a whole number of seconds, minutes or hours. */
const DURATION = /^[1-9][0-9]*(s|m|h)$/;
const CIDR = /^([0-9]{1,3}\.){3}[0-9]{1,3}\/([0-9]|[12][0-9]|3[0-2])$/;
const SLACK_CHANNEL = /^#?[a-z0-9][a-z0-9._-]{0,79}$/;

/** Seconds in an Argo Rollouts duration such as `2m`. */
export function durationSeconds(d: string): number {
    const m = /^([0-9]+)(s|m|h)$/.exec(d);
    if (!m) {
        throw new Error(`not a duration: ${d}`);
    }
    return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as "s" | "m" | "h"];
}

/** The registry mirror every image is pulled from (`imageRegistry`). */
export function readImages(r: ConfigReader, value: unknown): ImagesConfig {
    const registry = r.string("imageRegistry", value, {
        pattern: REGISTRY,
        describe: "a registry host with an optional port and path, e.g. registry.example.com/mirror (no scheme, no trailing slash)",
    });
    return { registry };
}

function readQuantities(r: ConfigReader, key: string, value: unknown, fallback: Quantities): Quantities {
    const q = r.object(key, value, ["cpu", "memory"]) ?? {};
    const rule = { pattern: QUANTITY, describe: "a Kubernetes quantity such as 100m, 1, 256Mi or 1Gi" };
    return {
        cpu: r.string(`${key}.cpu`, q.cpu, rule, fallback.cpu),
        memory: r.string(`${key}.memory`, q.memory, rule, fallback.memory),
    };
}

export function readController(r: ConfigReader, value: unknown): ControllerConfig | undefined {
    const d = CONTROLLER_DEFAULTS;
    const c = r.object("controller", value, CONTROLLER_KEYS);
    if (!c) {
        return undefined;
    }
    const chartVersion = r.string("controller.chartVersion", c.chartVersion, { pattern: SEMVER, describe: "an exact chart version such as 2.41.0 (no ranges)" }, d.chartVersion);
    const explicitApp = r.string("controller.appVersion", c.appVersion, { pattern: VTAG, describe: "an Argo Rollouts release tag such as v1.9.0" });
    const appVersion = explicitApp ?? KNOWN_CHART_APP_VERSIONS[chartVersion];
    if (appVersion === undefined && c.appVersion === undefined) {
        r.problem(
            "controller.appVersion",
            undefined,
            `is required with chart ${chartVersion}: set it to that chart's appVersion (known charts: ${Object.keys(KNOWN_CHART_APP_VERSIONS).join(", ")})`,
        );
    }

    const replicas = r.integer("controller.replicas", c.replicas, 2, 5, d.replicas);
    const pdbMaxUnavailable = r.integer("controller.pdbMaxUnavailable", c.pdbMaxUnavailable, 1, 4, d.pdbMaxUnavailable);
    if (pdbMaxUnavailable >= replicas) {
        r.problem("controller.pdbMaxUnavailable", c.pdbMaxUnavailable ?? pdbMaxUnavailable, `must be less than controller.replicas (${replicas}) so a drain keeps a controller running`);
    }

    const res = r.object("controller.resources", c.resources, ["requests", "limits"]) ?? {};
    const requests = readQuantities(r, "controller.resources.requests", res.requests, d.requests);
    const limits = readQuantities(r, "controller.resources.limits", res.limits, d.limits);
    for (const kind of ["cpu", "memory"] as const) {
        if (QUANTITY.test(requests[kind]) && QUANTITY.test(limits[kind]) && parseQuantity(requests[kind]) > parseQuantity(limits[kind])) {
            r.problem(`controller.resources.requests.${kind}`, requests[kind], `must not exceed controller.resources.limits.${kind} (${limits[kind]})`);
        }
    }

    const priorityClassName = r.string("controller.priorityClassName", c.priorityClassName, { pattern: DNS_LABEL, describe: "a PriorityClass name" });
    const namespace = r.string("controller.namespace", c.namespace, { pattern: DNS_LABEL, describe: "a namespace name (DNS label)", maxLength: 63 }, d.namespace);
    const config: ControllerConfig = {
        namespace,
        namespaceLabels: r.labels("controller.namespaceLabels", c.namespaceLabels),
        chartRepository: r.string("controller.chartRepository", c.chartRepository, { pattern: CHART_REPO, describe: "an https:// or oci:// chart repository URL" }, d.chartRepository),
        chartVersion,
        appVersion: appVersion ?? "",
        crdBaseUrl: r.string("controller.crdBaseUrl", c.crdBaseUrl, { pattern: HTTPS_URL, describe: "an https:// URL without a trailing query" }, d.crdBaseUrl).replace(/\/+$/, ""),
        replicas,
        pdbMaxUnavailable,
        requests,
        limits,
        logLevel: r.string("controller.logLevel", c.logLevel, { oneOf: ["debug", "info", "warn", "error"], describe: "" }, d.logLevel) as ControllerConfig["logLevel"],
        serviceMonitor: r.boolean("controller.serviceMonitor", c.serviceMonitor, d.serviceMonitor),
        dashboard: r.boolean("controller.dashboard", c.dashboard, d.dashboard),
        ...(priorityClassName ? { priorityClassName } : {}),
        tenantOperators: readTenantOperators(r, c.tenantOperators, namespace, PLATFORM_NAMESPACES),
    };
    return config;
}

export function readPlugin(r: ConfigReader, value: unknown): PluginConfig | undefined {
    const d = PLUGIN_DEFAULTS;
    const p = r.object("plugin", value, PLUGIN_KEYS);
    if (!p) {
        return undefined;
    }
    const version = r.string("plugin.version", p.version, { pattern: VTAG, describe: "a plugin release tag such as v0.15.0" }, d.version);
    const mode = r.string("plugin.delivery", p.delivery, { oneOf: ["download", "image"], describe: "" }, d.delivery);
    const misplaced = (keys: string[], why: string) => {
        for (const k of keys) {
            if (p[k] !== undefined) {
                r.problem(`plugin.${k}`, p[k], why);
            }
        }
    };

    let delivery: PluginDelivery | undefined;
    if (mode === "download") {
        misplaced(["repository", "digest"], "only applies with plugin.delivery: image");
        const arch = r.string("plugin.arch", p.arch, { oneOf: ["amd64", "arm64"], describe: "" }, d.arch) as "amd64" | "arm64";
        const baseUrl = r.string("plugin.baseUrl", p.baseUrl, { pattern: HTTPS_URL, describe: "an https:// URL (the controller checks the sha256 only for http(s) locations)" }, d.baseUrl);
        // No checksum file is published with the plugin's releases: without a configured sha256 the
        // controller would run whatever the URL serves (argo-rollouts v1.9.0 utils/plugin/downloader.go:
        // an http(s) download is checked only when the plugin entry has a sha256).
        const sha256 = r.requiredString("plugin.sha256", p.sha256, {
            pattern: SHA256_HEX,
            describe: `the 64-hex sha256 of gatewayapi-plugin-linux-${arch} for ${version} (a download without a checksum is refused)`,
        });
        if (sha256) {
            delivery = { mode: "download", arch, baseUrl: baseUrl.replace(/\/+$/, ""), sha256: sha256.toLowerCase() };
        }
    } else {
        misplaced(["arch", "sha256", "baseUrl"], "only applies with plugin.delivery: download");
        const repository = r.string("plugin.repository", p.repository, { pattern: REPOSITORY, describe: "an image repository path without registry or tag" }, d.repository);
        const digest = r.requiredString("plugin.digest", p.digest, { pattern: IMAGE_DIGEST, describe: "the plugin image's digest, sha256: followed by 64 lowercase hex (tags are mutable)" });
        if (digest) {
            delivery = { mode: "image", repository, digest };
        }
    }
    const tcpRoutes = r.boolean("plugin.tcpRoutes", p.tcpRoutes, d.tcpRoutes);
    const tlsRoutes = r.boolean("plugin.tlsRoutes", p.tlsRoutes, d.tlsRoutes);
    return delivery ? { version, delivery, tcpRoutes, tlsRoutes } : undefined;
}

/**
 * Scrapes a rate window must span. `rate()`/`increase()` need two samples of a series in the window
 * (Prometheus promql/functions.go, extrapolatedRate: a single sample yields nothing), so with two
 * scrapes per window one missed scrape empties the query; four leave room for a missed scrape and
 * for a series that appeared mid-window.
 */
export const RATE_WINDOW_SCRAPES = 4;

/**
 * The highest finite bucket of Beyla's request-duration histogram (OpenTelemetry's default
 * boundaries, go.opentelemetry.io/obi pkg/export/bucket.go `DefaultBuckets`, vendored by
 * grafana/beyla). When the quantile falls into the +Inf bucket `histogram_quantile` returns this
 * bound (Prometheus promql/quantile.go, BucketQuantile), so a latency threshold at or above it can
 * never fail.
 */
export const BEYLA_HIGHEST_FINITE_BUCKET_SECONDS = 10;

export function readAnalysis(r: ConfigReader, value: unknown): AnalysisConfig | undefined {
    const d = ANALYSIS_DEFAULTS;
    const a = r.object("analysis", value, ANALYSIS_KEYS);
    if (!a) {
        return undefined;
    }
    const before = r.problems.length;
    const dur = { pattern: DURATION, describe: "a duration such as 30s, 2m or 1h" };
    const out: AnalysisConfig = {
        successRate: r.number("analysis.successRate", a.successRate, 0.5, 1, d.successRate),
        latencyP99Seconds: r.number("analysis.latencyP99Seconds", a.latencyP99Seconds, 0.001, 60, d.latencyP99Seconds),
        scrapeInterval: r.string("analysis.scrapeInterval", a.scrapeInterval, dur, d.scrapeInterval),
        rateWindow: r.string("analysis.rateWindow", a.rateWindow, dur, d.rateWindow),
        remoteWriteLag: r.string("analysis.remoteWriteLag", a.remoteWriteLag, dur, d.remoteWriteLag),
        initialDelay: r.string("analysis.initialDelay", a.initialDelay, dur, d.initialDelay),
        interval: r.string("analysis.interval", a.interval, dur, d.interval),
        minRequests: r.integer("analysis.minRequests", a.minRequests, 1, 1_000_000, d.minRequests),
        count: r.integer("analysis.count", a.count, 1, 60, d.count),
        failureLimit: r.integer("analysis.failureLimit", a.failureLimit, 0, 10, d.failureLimit),
        inconclusiveLimit: r.integer("analysis.inconclusiveLimit", a.inconclusiveLimit, 0, 10, d.inconclusiveLimit),
        consecutiveErrorLimit: r.integer("analysis.consecutiveErrorLimit", a.consecutiveErrorLimit, 0, 20, d.consecutiveErrorLimit),
    };
    // The rules below relate several keys; they only speak when each of those keys was valid.
    const bad = new Set(r.problems.slice(before).map((p) => p.key.replace(/^analysis\./, "")));
    const ok = (...keys: (keyof AnalysisConfig)[]) => keys.every((k) => !bad.has(k));
    const seconds = (k: "scrapeInterval" | "rateWindow" | "remoteWriteLag" | "initialDelay") => durationSeconds(out[k]);

    if (ok("latencyP99Seconds") && out.latencyP99Seconds >= BEYLA_HIGHEST_FINITE_BUCKET_SECONDS) {
        r.problem(
            "analysis.latencyP99Seconds",
            out.latencyP99Seconds,
            `must be below ${BEYLA_HIGHEST_FINITE_BUCKET_SECONDS}, the highest finite bucket of Beyla's request-duration histogram: a p99 in the +Inf bucket reads as ${BEYLA_HIGHEST_FINITE_BUCKET_SECONDS}, so a higher threshold could never fail`,
        );
    }
    if (ok("scrapeInterval", "rateWindow") && seconds("rateWindow") < RATE_WINDOW_SCRAPES * seconds("scrapeInterval")) {
        r.problem(
            "analysis.rateWindow",
            out.rateWindow,
            `must be at least ${RATE_WINDOW_SCRAPES} x analysis.scrapeInterval (${out.scrapeInterval}) = ${RATE_WINDOW_SCRAPES * seconds("scrapeInterval")}s: with fewer scrapes in the window one missed scrape leaves rate() without two samples, the query empty and the measurement Inconclusive`,
        );
    }
    if (ok("rateWindow", "remoteWriteLag", "initialDelay") && seconds("initialDelay") < seconds("rateWindow") + seconds("remoteWriteLag")) {
        r.problem(
            "analysis.initialDelay",
            out.initialDelay,
            `must be at least analysis.rateWindow (${out.rateWindow}) + analysis.remoteWriteLag (${out.remoteWriteLag}) = ${seconds("rateWindow") + seconds("remoteWriteLag")}s: before a full window of the new version's traffic has reached Mimir the query is empty or partial, and an empty window must not look like a bad canary`,
        );
    }
    if (ok("successRate") && out.successRate >= 1) {
        r.problem("analysis.successRate", out.successRate, "must be below 1: at 1 a single 5xx fails the gate whatever analysis.minRequests is");
    } else if (ok("successRate", "minRequests") && (1 - out.successRate) * out.minRequests < 1 - 1e-9) {
        // The tolerance keeps float noise ((1 - 0.9) * 10 = 0.999...) from refusing an exact floor.
        r.problem(
            "analysis.minRequests",
            out.minRequests,
            `must be at least 1 / (1 - analysis.successRate (${out.successRate})) = ${Math.ceil(1 / (1 - out.successRate) - 1e-9)}: below that a single 5xx in a window at the floor fails the gate`,
        );
    }
    if (ok("count", "failureLimit", "inconclusiveLimit") && out.count <= out.failureLimit + out.inconclusiveLimit) {
        r.problem(
            "analysis.count",
            out.count,
            `must be more than analysis.failureLimit + analysis.inconclusiveLimit (${out.failureLimit} + ${out.inconclusiveLimit}): a finite run that reaches its count within both limits is Successful (argo-rollouts analysis/analysis.go), so a smaller count lets a run pass without one successful measurement`,
        );
    }
    return out;
}

export function readNetwork(r: ConfigReader, value: unknown, role: "hub" | "spoke" | undefined): NetworkConfig | undefined {
    const d = NETWORK_DEFAULTS;
    const n = r.object("network", value, NETWORK_KEYS);
    if (!n) {
        return undefined;
    }
    const label = { pattern: DNS_LABEL, describe: "a namespace name", maxLength: 63 };
    const targets: CanaryTarget[] = [];
    if (n.canaryTargets !== undefined) {
        if (!Array.isArray(n.canaryTargets)) {
            r.problem("network.canaryTargets", n.canaryTargets, "must be a list of {namespace, port}");
        } else {
            n.canaryTargets.forEach((t, i) => {
                const o = r.object(`network.canaryTargets[${i}]`, t, ["namespace", "port"]) ?? {};
                const ns = r.requiredString(`network.canaryTargets[${i}].namespace`, o.namespace, label);
                const port = r.integer(`network.canaryTargets[${i}].port`, o.port, 1, 65535, 0);
                if (o.port === undefined) {
                    r.problem(`network.canaryTargets[${i}].port`, undefined, "is required: the pods' target port");
                }
                if (ns && port > 0) {
                    targets.push({ namespace: ns, port });
                }
            });
        }
    }
    const dnsPodLabels = n.dnsPodLabels === undefined ? { ...d.dnsPodLabels } : r.labels("network.dnsPodLabels", n.dnsPodLabels);
    const out: NetworkConfig = {
        controllerDefaultDeny: r.boolean("network.controllerDefaultDeny", n.controllerDefaultDeny, d.controllerDefaultDeny),
        dnsNamespace: r.string("network.dnsNamespace", n.dnsNamespace, label, d.dnsNamespace),
        dnsPodLabels,
        hubReadCidrs: r.strings("network.hubReadCidrs", n.hubReadCidrs, { pattern: CIDR, describe: "an IPv4 CIDR such as 10.20.0.0/24" }),
        hubReadFqdns: r.strings("network.hubReadFqdns", n.hubReadFqdns, { pattern: HOSTNAME, describe: "a fully qualified hostname" }),
        canaryTargets: targets,
        metricsScrapeNamespaces: r.strings("network.metricsScrapeNamespaces", n.metricsScrapeNamespaces, { pattern: DNS_LABEL, describe: "a namespace name" }),
    };
    if (role === "hub") {
        for (const k of ["hubReadCidrs", "hubReadFqdns"] as const) {
            if (out[k].length > 0) {
                r.problem(`network.${k}`, n[k], "only applies to a spoke (the hub reads Mimir in-cluster)");
            }
        }
    }
    if (!out.controllerDefaultDeny) {
        for (const k of ["canaryTargets", "metricsScrapeNamespaces"] as const) {
            if (n[k] !== undefined) {
                r.problem(`network.${k}`, n[k], "only applies with network.controllerDefaultDeny: true (without it nothing is denied)");
            }
        }
    }
    return out;
}

export function readErrorBudget(r: ConfigReader, value: unknown): ErrorBudgetConfig | undefined {
    const e = r.object("errorBudget", value, ["query", "minRemaining"]);
    if (!e) {
        return undefined;
    }
    const query = r.string("errorBudget.query", e.query, { pattern: /\{\{args\.service\}\}/, describe: "PromQL naming the app's SLO through {{args.service}} (and {{args.slo}})" }, ERROR_BUDGET_DEFAULTS.query);
    return { query, minRemaining: r.number("errorBudget.minRemaining", e.minRemaining, 0, 0.99, ERROR_BUDGET_DEFAULTS.minRemaining) };
}

export function readNotifications(r: ConfigReader, value: unknown, token: unknown, tokenIsSecret: boolean): NotificationsConfig | undefined {
    const n = r.object("notifications", value, ["service", "slackChannel", "webhookUrl"]);
    if (!n) {
        return undefined;
    }
    const service = r.string("notifications.service", n.service, { oneOf: ["slack", "webhook"], describe: "" }) as NotificationService | undefined;
    const out: NotificationsConfig = {};
    if (token !== undefined && !tokenIsSecret) {
        // Never echo the value: it was meant to be a secret.
        r.problem(NOTIFICATIONS_TOKEN_KEY, "[not shown]", "must be a secret: set it with `pulumi config set --secret notificationsToken`");
    }
    if (service === undefined) {
        if (n.slackChannel !== undefined || n.webhookUrl !== undefined || token !== undefined) {
            r.problem("notifications.service", n.service, "is required when a channel, URL or token is set: slack or webhook");
        }
        return out;
    }
    out.service = service;
    if (service === "slack") {
        out.slackChannel = r.requiredString("notifications.slackChannel", n.slackChannel, { pattern: SLACK_CHANNEL, describe: "a Slack channel such as #platform-deploys" });
        if (n.webhookUrl !== undefined) {
            r.problem("notifications.webhookUrl", n.webhookUrl, "only applies with notifications.service: webhook");
        }
    } else {
        out.webhookUrl = r.requiredString("notifications.webhookUrl", n.webhookUrl, { pattern: HTTPS_URL, describe: "an https:// URL" });
        if (n.slackChannel !== undefined) {
            r.problem("notifications.slackChannel", n.slackChannel, "only applies with notifications.service: slack");
        }
    }
    if (token === undefined || token === "") {
        r.problem(NOTIFICATIONS_TOKEN_KEY, undefined, `is required with notifications.service: ${service}; set it with \`pulumi config set --secret notificationsToken\``);
    } else if (typeof token === "string" && tokenIsSecret) {
        out.token = new SecretValue(token);
    }
    return out;
}
