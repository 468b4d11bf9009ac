import { defaultsOf, field, readSection, type Values } from "../../config/declare";
import { ConfigReader } from "../../config/reader";
import { DURATION_RULE as DUR, INT32_MAX, durationSeconds } from "./patterns";

/** The `analysis` section (ADR-056 D5): the shared metric gates' thresholds and timing; the reader refuses the gates' timing traps. */

/**
 * The kubelet's probe routes by the usual conventions (Kubernetes' /livez and /readyz, /healthz,
 * Spring Boot's actuator health groups). Beyla counts probes like any other request (grafana/beyla
 * v3.33.0 pkg/beyla/config.go ignores no route), so they would fill a quiet version's `minRequests`
 * and dilute its error ratio; its route heuristic keeps each as its own `http_route`
 * (go.opentelemetry.io/obi pkg/internal/transform/route/clusterurl).
 */
const PROBE_ROUTES: readonly string[] = [
    "/healthz",
    "/livez",
    "/readyz",
    "/health",
    "/ready",
    "/live",
    "/actuator/health",
    "/actuator/health/liveness",
    "/actuator/health/readiness",
];

/** A Beyla `http_route` value as the gates exclude it: a path, matched exactly. */
const ROUTE = {
    pattern: /^\/[A-Za-z0-9._~!$&'()*+,;=:@%{}/-]{0,199}$/,
    describe: "an http_route value as Beyla reports it: a path starting with /, at most 200 characters, no spaces or quotes",
};

/** The `analysis` section: every key, once. */
export const ANALYSIS_FIELDS = {
    successRate: field.number({
        min: 0.5,
        max: 1,
        default: 0.95,
        doc: "minimum non-5xx share of the new version's requests (ADR-056 as-built: 0.95); below 1",
    }),
    latencyP99Seconds: field.number({
        min: 0.001,
        max: 60,
        default: 0.5,
        doc: "maximum p99 of the new version, in seconds; below 10, Beyla's highest finite bucket (a slower p99 reads as 10)",
    }),
    scrapeInterval: field.string({
        rule: DUR,
        default: "60s",
        doc: "how often Beyla's metrics are scraped into Mimir: the rate window must hold several samples",
    }),
    rateWindow: field.string({ rule: DUR, default: "4m", doc: "PromQL window of every gate query; at least 4 x scrapeInterval" }),
    remoteWriteLag: field.string({
        rule: DUR,
        default: "1m",
        doc: "time from scrape to queryable in Mimir (remote write; a spoke's crosses the transit network)",
    }),
    initialDelay: field.string({
        rule: DUR,
        default: "5m",
        doc: "wait before the first measurement; at least rateWindow + remoteWriteLag, so an empty window never looks like a bad canary (ADR-056 D5); initialDelay + interval at most 2147483647s (the shortest canary pause, an int32 to Argo Rollouts)",
    }),
    interval: field.string({ rule: DUR, default: "1m", doc: "time between measurements (after an Error, Argo Rollouts retries after 10 s instead)" }),
    minRequests: field.integer({
        min: 1,
        max: 1_000_000,
        default: 50,
        doc: "requests the new version must serve in one rateWindow for a measurement to count; below it the measurement is Inconclusive. At least 1 / (1 - successRate)",
    }),
    count: field.integer({
        min: 1,
        max: 60,
        default: 3,
        doc: "measurements of the finite templates (blue/green, canary steps); more than failureLimit + inconclusiveLimit",
    }),
    failureLimit: field.integer({ min: 0, max: 10, default: 0, doc: "failed measurements tolerated before the run fails (and the rollout aborts)" }),
    inconclusiveLimit: field.integer({
        min: 0,
        max: 10,
        default: 2,
        doc: "Inconclusive measurements tolerated over the whole run (a total, not in a row) before it pauses for a human",
    }),
    consecutiveErrorLimit: field.integer({
        min: 0,
        max: 20,
        default: 4,
        doc: "query errors in a row tolerated before the run errors (and the rollout aborts)",
    }),
    excludeRoutes: field.strings({
        rule: ROUTE,
        default: PROBE_ROUTES,
        size: { min: 0, max: 50 },
        doc: "Beyla http_route values no gate counts, matched exactly: the kubelet's probes, so they neither fill minRequests nor dilute errors; [] counts every request",
    }),
} as const;

/** The shared metric gates' thresholds and timing (ADR-056 D5), as the `analysis` section reads. */
export type AnalysisConfig = Values<typeof ANALYSIS_FIELDS>;

export const ANALYSIS_DEFAULTS: Readonly<AnalysisConfig> = defaultsOf(ANALYSIS_FIELDS);

/**
 * Scrapes a rate window must span: `rate()` needs two samples in the window (promql/functions.go
 * extrapolatedRate), and four leave room for a missed scrape and a series that appeared mid-window.
 */
const RATE_WINDOW_SCRAPES = 4;

/**
 * The highest finite bucket of Beyla's request-duration histogram (go.opentelemetry.io/obi
 * pkg/export/bucket.go DefaultBuckets): a quantile in +Inf reads as this bound (promql/quantile.go).
 */
const BEYLA_HIGHEST_FINITE_BUCKET_SECONDS = 10;

export function readAnalysis(r: ConfigReader, value: unknown): AnalysisConfig | undefined {
    const before = r.problems.length;
    const section = readSection(r, "analysis", ANALYSIS_FIELDS, value);
    if (!section) return undefined;
    const out: AnalysisConfig = { ...section };
    // The rules below relate several keys; they only speak when each of those keys was valid.
    const bad = new Set(r.problems.slice(before).map((p) => p.key.replace(/^analysis\./, "")));
    const ok = (...keys: (keyof AnalysisConfig)[]) => keys.every((k) => !bad.has(k));
    const seconds = (k: "scrapeInterval" | "rateWindow" | "remoteWriteLag" | "initialDelay" | "interval") => durationSeconds(out[k]);
    const refuse = (k: keyof AnalysisConfig, why: string) => r.problem(`analysis.${k}`, out[k], why);

    if (ok("latencyP99Seconds") && out.latencyP99Seconds >= BEYLA_HIGHEST_FINITE_BUCKET_SECONDS) {
        refuse(
            "latencyP99Seconds",
            `must be below ${BEYLA_HIGHEST_FINITE_BUCKET_SECONDS}, the highest finite bucket of Beyla's request-duration histogram: a p99 in the +Inf bucket reads as ${BEYLA_HIGHEST_FINITE_BUCKET_SECONDS}, so a higher threshold could never fail`,
        );
    }
    if (ok("scrapeInterval", "rateWindow") && seconds("rateWindow") < RATE_WINDOW_SCRAPES * seconds("scrapeInterval")) {
        refuse(
            "rateWindow",
            `must be at least ${RATE_WINDOW_SCRAPES} x analysis.scrapeInterval (${out.scrapeInterval}) = ${RATE_WINDOW_SCRAPES * seconds("scrapeInterval")}s: with fewer scrapes in the window one missed scrape leaves rate() without two samples, the query empty and the measurement Inconclusive`,
        );
    }
    if (ok("rateWindow", "remoteWriteLag", "initialDelay") && seconds("initialDelay") < seconds("rateWindow") + seconds("remoteWriteLag")) {
        refuse(
            "initialDelay",
            `must be at least analysis.rateWindow (${out.rateWindow}) + analysis.remoteWriteLag (${out.remoteWriteLag}) = ${seconds("rateWindow") + seconds("remoteWriteLag")}s: before a full window of the new version's traffic has reached Mimir the query is empty or partial, and an empty window must not look like a bad canary`,
        );
    }
    // Each canary weight pauses at least initialDelay + interval (delivery/strategy.ts defaultStepPause),
    // and Argo Rollouts reads a pause's seconds as an int32 (v1.9.0 types.go RolloutPause.DurationSeconds).
    if (ok("initialDelay", "interval") && seconds("initialDelay") + seconds("interval") > INT32_MAX) {
        refuse(
            "initialDelay",
            `must leave analysis.initialDelay + analysis.interval (${out.interval}) at most ${INT32_MAX}s: each canary weight pauses at least that long, and Argo Rollouts converts a pause's seconds to an int32`,
        );
    }
    if (ok("successRate") && out.successRate >= 1) {
        refuse("successRate", "must be below 1: at 1 a single 5xx fails the gate whatever analysis.minRequests is");
    } else if (ok("successRate", "minRequests") && (1 - out.successRate) * out.minRequests < 1 - 1e-9) {
        // The tolerance keeps float noise ((1 - 0.9) * 10 = 0.999...) from refusing an exact floor.
        refuse(
            "minRequests",
            `must be at least 1 / (1 - analysis.successRate (${out.successRate})) = ${Math.ceil(1 / (1 - out.successRate) - 1e-9)}: below that a single 5xx in a window at the floor fails the gate`,
        );
    }
    if (ok("count", "failureLimit", "inconclusiveLimit") && out.count <= out.failureLimit + out.inconclusiveLimit) {
        refuse(
            "count",
            `must be more than analysis.failureLimit + analysis.inconclusiveLimit (${out.failureLimit} + ${out.inconclusiveLimit}): a finite run that reaches its count within both limits is Successful (argo-rollouts analysis/analysis.go), so a smaller count lets a run pass without one successful measurement`,
        );
    }
    return out;
}
