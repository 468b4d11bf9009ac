import { ConfigReader, DNS_LABEL, HOSTNAME, MIMIR_TENANT_RULE, Plain, isPlainObject } from "./reader";

/**
 * The metric-gate configuration (ADR-056 D5 and the 2026-06-27 as-built W8c): where Mimir runs
 * on the hub, which spokes the hub routes, how a spoke finds its read endpoint, the analysis
 * thresholds, and the controller's network policy.
 */

/** Mimir on the hub: the mimir-distributed gateway the analysis and the spoke routes reach. */
export interface MimirConfig {
    namespace: string;
    /** `<release>-gateway` of mimir-distributed. */
    gatewayService: string;
    gatewayServicePort: number;
    /** The gateway pods' port: Cilium L4 rules match the pod's port, not the Service's. */
    gatewayTargetPort: number;
    gatewayPodLabels: Record<string, string>;
    /** Namespace of the spoke-ingest HTTPRoutes; a ReferenceGrant is declared when it is not Mimir's. */
    spokeRouteNamespace: string;
    /** The Gateway spokes arrive on (the internal one behind the transit network). */
    ingestGateway: { name: string; namespace: string; listener: string };
    /** Scheme spokes use to reach their hostnames on the ingest Gateway. */
    readScheme: "https" | "http";
    /** Who owns the spokes' ingest (remote write) routes unless a spoke says otherwise. */
    pushRouteOwner: PushRouteOwner;
}

/**
 * Who declares a spoke's ingest route on the hub: this program (`addon`: one route with the push
 * rule and, for a spoke that queries, the read rule) or the platform's observability module
 * (`observability`: the program declares only the read route beside it, ADR-056 as-built W8c).
 */
export type PushRouteOwner = "addon" | "observability";
export const PUSH_ROUTE_OWNERS: readonly PushRouteOwner[] = ["addon", "observability"];

/** One spoke the hub routes (hub only). */
export interface SpokeConfig {
    name: string;
    tenant: string;
    hostname: string;
    /** A listener of its own on the ingest Gateway, when spokes are separated by listener. */
    listener?: string;
    /** Opt-in read path: routes Mimir's Prometheus read endpoints (W8c `query_tenants`). */
    query: boolean;
    /** Resolved from `spokes[].pushRouteOwner`, else `mimir.pushRouteOwner`. */
    pushRouteOwner: PushRouteOwner;
}

/** How a spoke finds the read endpoint the hub routes for it (spoke only). */
export type ReadEndpointSource = { kind: "url"; url: string } | { kind: "stack"; stack: string };

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
    /** At least the rate window plus the remote-write lag: an empty window must not look like a bad canary (seed 003). */
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

export interface MetricsConfig {
    mimir: MimirConfig;
    spokes: SpokeConfig[];
    readEndpoint?: ReadEndpointSource;
    analysis: AnalysisConfig;
    network: NetworkConfig;
}

export const METRICS_DEFAULTS = {
    mimir: {
        namespace: "observability",
        gatewayService: "mimir-gateway",
        gatewayServicePort: 80,
        gatewayTargetPort: 8080,
        gatewayPodLabels: { "app.kubernetes.io/name": "mimir", "app.kubernetes.io/component": "gateway" },
        readScheme: "https",
        pushRouteOwner: "addon",
    },
    analysis: {
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
    },
    network: {
        controllerDefaultDeny: false,
        dnsNamespace: "kube-system",
        dnsPodLabels: { "k8s-app": "kube-dns" },
    },
} as const;

export const MIMIR_KEYS = [
    "namespace",
    "gatewayService",
    "gatewayServicePort",
    "gatewayTargetPort",
    "gatewayPodLabels",
    "spokeRouteNamespace",
    "ingestGateway",
    "readScheme",
    "readEndpoint",
    "hubStack",
    "pushRouteOwner",
];
const SPOKE_KEYS = ["name", "tenant", "hostname", "listener", "query", "pushRouteOwner"];
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

/** Argo Rollouts durations as used here: a whole number of seconds, minutes or hours. */
const DURATION = /^[1-9][0-9]*(s|m|h)$/;
const CIDR = /^([0-9]{1,3}\.){3}[0-9]{1,3}\/([0-9]|[12][0-9]|3[0-2])$/;
const READ_URL = /^https?:\/\/[a-z0-9.-]+(:[0-9]+)?\/[A-Za-z0-9._~\/-]*$/;
const STACK_NAME = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/** Seconds in an Argo Rollouts duration such as `2m`. */
export function durationSeconds(d: string): number {
    const m = /^([0-9]+)(s|m|h)$/.exec(d);
    if (!m) {
        throw new Error(`not a duration: ${d}`);
    }
    return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as "s" | "m" | "h"];
}

/**
 * Reads the metric-gate sections. `role` and `ownTenant` come from the cluster section: a hub
 * lists spokes, a spoke names its read endpoint, and every tenant must be unique.
 */
export function readMetrics(
    r: ConfigReader,
    raw: Plain,
    cluster: { role?: "hub" | "spoke"; name?: string; mimirTenant?: string },
    sharedGateway?: { name: string; namespace: string; listener: string },
): MetricsConfig | undefined {
    const md = METRICS_DEFAULTS.mimir;
    const m = r.object("mimir", raw.mimir, MIMIR_KEYS) ?? {};
    const label = { pattern: DNS_LABEL, describe: "a DNS label (lowercase letters, digits, '-')", maxLength: 63 };
    const namespace = r.string("mimir.namespace", m.namespace, label, md.namespace);

    let ingestGateway = sharedGateway;
    if (m.ingestGateway !== undefined) {
        const g = r.object("mimir.ingestGateway", m.ingestGateway, ["name", "namespace", "listener"]);
        const name = r.requiredString("mimir.ingestGateway.name", g?.name, label);
        const ns = r.requiredString("mimir.ingestGateway.namespace", g?.namespace, label);
        const listener = r.requiredString("mimir.ingestGateway.listener", g?.listener, label);
        ingestGateway = name && ns && listener ? { name, namespace: ns, listener } : undefined;
    }
    const podLabels = m.gatewayPodLabels === undefined ? { ...md.gatewayPodLabels } : r.labels("mimir.gatewayPodLabels", m.gatewayPodLabels);
    if (Object.keys(podLabels).length === 0) {
        r.problem("mimir.gatewayPodLabels", m.gatewayPodLabels, "must select the Mimir gateway pods with at least one label");
    }
    const pushRouteOwner = r.string("mimir.pushRouteOwner", m.pushRouteOwner, OWNER_RULE, md.pushRouteOwner) as PushRouteOwner;
    const mimir: MimirConfig | undefined = ingestGateway && {
        namespace,
        gatewayService: r.string("mimir.gatewayService", m.gatewayService, label, md.gatewayService),
        gatewayServicePort: r.integer("mimir.gatewayServicePort", m.gatewayServicePort, 1, 65535, md.gatewayServicePort),
        gatewayTargetPort: r.integer("mimir.gatewayTargetPort", m.gatewayTargetPort, 1, 65535, md.gatewayTargetPort),
        gatewayPodLabels: podLabels,
        spokeRouteNamespace: r.string("mimir.spokeRouteNamespace", m.spokeRouteNamespace, label, namespace),
        ingestGateway,
        readScheme: r.string("mimir.readScheme", m.readScheme, { oneOf: ["https", "http"], describe: "" }, md.readScheme) as "https" | "http",
        pushRouteOwner,
    };

    const spokes = readSpokes(r, raw.spokes, cluster, pushRouteOwner);
    let readEndpoint: ReadEndpointSource | undefined;
    if (cluster.role === "spoke") {
        if ((m.readEndpoint === undefined) === (m.hubStack === undefined)) {
            r.problem(
                "mimir",
                { readEndpoint: m.readEndpoint, hubStack: m.hubStack },
                "a spoke sets exactly one of mimir.hubStack (the hub's stack, <org>/<project>/<stack>) or mimir.readEndpoint (the URL the hub routes for this spoke)",
            );
        } else if (m.readEndpoint !== undefined) {
            const url = r.string("mimir.readEndpoint", m.readEndpoint, { pattern: READ_URL, describe: "an http(s) URL ending in the Prometheus API prefix, e.g. https://mimir-preprod.hub.example/prometheus" });
            readEndpoint = url ? { kind: "url", url: url.replace(/\/+$/, "") } : undefined;
        } else {
            const stack = r.string("mimir.hubStack", m.hubStack, { pattern: STACK_NAME, describe: "a fully qualified stack name, <org>/<project>/<stack>" });
            readEndpoint = stack ? { kind: "stack", stack } : undefined;
        }
        if (raw.spokes !== undefined) {
            r.problem("spokes", raw.spokes, "only a hub routes spokes (cluster.role is spoke)");
        }
        if (m.pushRouteOwner !== undefined) {
            r.problem("mimir.pushRouteOwner", m.pushRouteOwner, "only applies to a hub (spoke routes live on the hub)");
        }
    } else {
        for (const k of ["readEndpoint", "hubStack"]) {
            if (m[k] !== undefined) {
                r.problem(`mimir.${k}`, m[k], "only applies to a spoke (the hub reads Mimir in-cluster)");
            }
        }
    }

    const analysis = readAnalysis(r, raw.analysis);
    const network = readNetwork(r, raw.network, cluster.role);
    if (!mimir || !spokes || !analysis || !network) {
        return undefined;
    }
    return { mimir, spokes, ...(readEndpoint ? { readEndpoint } : {}), analysis, network };
}

const OWNER_RULE = {
    oneOf: [...PUSH_ROUTE_OWNERS],
    describe: "addon (this program declares the spoke's ingest route) or observability (the observability module owns it; only the read route is declared)",
};

function readSpokes(r: ConfigReader, value: unknown, cluster: { mimirTenant?: string }, defaultOwner: PushRouteOwner): SpokeConfig[] | undefined {
    if (value === undefined || value === null) {
        return [];
    }
    if (!Array.isArray(value)) {
        r.problem("spokes", value, "must be a list of spokes, each with name, tenant, hostname and query");
        return undefined;
    }
    const label = { pattern: DNS_LABEL, describe: "a DNS label", maxLength: 63 };
    const spokes: SpokeConfig[] = [];
    const seen = { name: new Map<string, number>(), tenant: new Map<string, number>(), host: new Map<string, number>() };
    if (cluster.mimirTenant) {
        seen.tenant.set(cluster.mimirTenant, -1);
    }
    value.forEach((item, i) => {
        const key = `spokes[${i}]`;
        if (!isPlainObject(item)) {
            r.problem(key, item, "must be an object with name, tenant, hostname and query");
            return;
        }
        const s = r.object(key, item, SPOKE_KEYS) ?? {};
        const name = r.requiredString(`${key}.name`, s.name, label);
        const tenant = r.requiredString(`${key}.tenant`, s.tenant, MIMIR_TENANT_RULE);
        const hostname = r.requiredString(`${key}.hostname`, s.hostname, { pattern: HOSTNAME, describe: "a fully qualified lowercase hostname" });
        const listener = r.string(`${key}.listener`, s.listener, label);
        const query = r.boolean(`${key}.query`, s.query, false);
        const pushRouteOwner = r.string(`${key}.pushRouteOwner`, s.pushRouteOwner, OWNER_RULE, defaultOwner) as PushRouteOwner;
        const unique = (kind: "name" | "tenant" | "host", v: string | undefined, field: string) => {
            if (v === undefined) {
                return;
            }
            const prev = seen[kind].get(v);
            if (prev !== undefined) {
                const other = prev === -1 ? "cluster.mimirTenant (the hub's own tenant)" : `spokes[${prev}].${field}`;
                r.problem(`${key}.${field}`, v, `must be unique; ${other} has it already (one tenant per cluster keeps tenants isolated)`);
            } else {
                seen[kind].set(v, i);
            }
        };
        unique("name", name, "name");
        unique("tenant", tenant, "tenant");
        unique("host", hostname, "hostname");
        if (name && tenant && hostname) {
            spokes.push({ name, tenant, hostname, ...(listener ? { listener } : {}), query, pushRouteOwner });
        }
    });
    return spokes;
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

function readAnalysis(r: ConfigReader, value: unknown): AnalysisConfig | undefined {
    const d = METRICS_DEFAULTS.analysis;
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

function readNetwork(r: ConfigReader, value: unknown, role: "hub" | "spoke" | undefined): NetworkConfig | undefined {
    const d = METRICS_DEFAULTS.network;
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
