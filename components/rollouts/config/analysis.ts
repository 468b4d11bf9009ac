import { ConfigReader } from "../../config/reader";
import { DURATION, GO_MAX_DURATION_SECONDS, durationSeconds, goDuration } from "./patterns";

/** The `analysis` section (ADR-056 D5): the shared metric gates' thresholds and timing; the reader refuses the gates' timing traps. */

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
    const dur = { pattern: DURATION, valid: goDuration, describe: `a duration such as 30s, 2m or 1h, at most ${GO_MAX_DURATION_SECONDS}s (the longest Go's time.ParseDuration reads)` };
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
