import * as assert from "assert";
import { parseAddonConfig } from "../stacks/config";
import { OfflineRun } from "../tools/offline";
import { manifestResources, planStack } from "../tools/plan";
import { validateObject } from "../tools/schemas";
import { readStackFile } from "../tools/stackFile";
import {
    MeasurementPhase,
    PromNode,
    Series,
    binary,
    bucketQuantile,
    children,
    effectiveCount,
    evalCondition,
    evaluatePromQL,
    extrapolatedIncrease,
    measurementPhase,
    metricPhase,
    parsePromQL,
    promqlSyntaxErrors,
    stringLiterals,
    unparen,
} from "./gateModel";
import { FIXTURE_STACKS, hubConfig, merged, planInline } from "./harness";
import { templateName, ERROR_BUDGET, ERROR_BUDGET_WAIT } from "../components/argoRollouts";
import { ANALYSIS_DEFAULTS, AnalysisConfig, ERROR_BUDGET_DEFAULTS } from "../components/rollouts/config";
import {
    errorBudgetWaitTemplateSpec,
    freezeMeasurements,
    HAS_VALUE,
    canaryMatchers,
    clusterAnalysisTemplateSpec,
    errorBudgetTemplateSpec,
    guardedConditions,
    latencyP99Query,
    sharedTemplates,
    successRateQuery,
} from "../components/rollouts/analysis";

const COUNT = "http_server_request_duration_seconds_count";
const BUCKET = "http_server_request_duration_seconds_bucket";
/** Beyla's default request-duration buckets (go.opentelemetry.io/obi pkg/export/bucket.go). */
const BEYLA_BUCKETS = [0, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

function analysisConfig(patch: Record<string, unknown> = {}): AnalysisConfig {
    const { "aws:region": _r, ...rest } = merged(hubConfig(), { analysis: patch });
    return parseAddonConfig("hub", rest, { awsRegion: "eu-west-1" }).analysis;
}

/** Valid analysis settings far from the defaults, to show the rules hold for any valid config. */
const CONFIGS: Record<string, Record<string, unknown>> = {
    defaults: {},
    strict: {
        successRate: 0.999,
        minRequests: 1000,
        latencyP99Seconds: 0.05,
        scrapeInterval: "15s",
        rateWindow: "1m",
        remoteWriteLag: "30s",
        initialDelay: "90s",
        count: 10,
        inconclusiveLimit: 4,
    },
    lenient: {
        successRate: 0.5,
        minRequests: 2,
        latencyP99Seconds: 9.5,
        scrapeInterval: "2m",
        rateWindow: "1h",
        remoteWriteLag: "5m",
        initialDelay: "2h",
        count: 1,
        inconclusiveLimit: 0,
    },
};

/** What Argo Rollouts does to a template's query: plain substitution of the argument values. */
function substitute(query: string, args: Record<string, string>): string {
    return query.replace(/\{\{args\.([a-z-]+)\}\}/g, (_m, name: string) => {
        if (args[name] === undefined) {
            throw new Error(`args.${name} was not resolved`);
        }
        return args[name];
    });
}
const ARGS = { namespace: "shop", rollout: "checkout", "canary-hash": "5d8f9c7b6" };
const CANARY_RS = "checkout-5d8f9c7b6";

/**
 * Beyla's series for one ReplicaSet as five scrapes across the window: a request counter per
 * status code and route, and the cumulative duration buckets with `le` (every request lands in the
 * first bucket at or above its duration; +Inf counts all of them). Requests without a route are
 * the app's own (`/api/orders`).
 */
function beyla(rs: string, requests: { status: string; seconds: number; n: number; route?: string }[], scrapes = 5): Series[] {
    const labels = { k8s_namespace_name: "shop", k8s_replicaset_name: rs, k8s_deployment_name: "checkout" };
    const ramp = (total: number) => (scrapes === 1 ? [total] : Array.from({ length: scrapes }, (_, i) => Math.round((total * i) / (scrapes - 1))));
    const routeOf = (r: { route?: string }) => r.route ?? "/api/orders";
    const out: Series[] = [];
    for (const key of [...new Set(requests.map((r) => `${r.status} ${routeOf(r)}`))]) {
        const [code, route] = key.split(" ");
        const mine = requests.filter((r) => r.status === code && routeOf(r) === route);
        const series = { ...labels, http_response_status_code: code, http_route: route };
        out.push({ labels: { __name__: COUNT, ...series }, samples: ramp(mine.reduce((a, r) => a + r.n, 0)) });
        for (const le of [...BEYLA_BUCKETS.map(String), "+Inf"]) {
            const inBucket = mine.filter((r) => le === "+Inf" || r.seconds <= Number(le)).reduce((a, r) => a + r.n, 0);
            out.push({ labels: { __name__: BUCKET, ...series, le }, samples: ramp(inBucket) });
        }
    }
    return out;
}

/** The stable version serving next to the canary: it must never count for the canary. */
const STABLE = beyla("checkout-7c9d8e6f5", [{ status: "200", seconds: 0.02, n: 4000 }]);

/** The four cases of issue 9 (and two more shapes of "no data"), for a gate with `minRequests`. */
function cases(a: AnalysisConfig): Record<string, Series[]> {
    const enough = Math.max(400, a.minRequests * 4);
    return {
        healthy: [...STABLE, ...beyla(CANARY_RS, [{ status: "200", seconds: 0.02, n: enough }])],
        "every request a 5xx, with enough traffic": [
            ...STABLE,
            ...beyla(CANARY_RS, [
                { status: "500", seconds: 0.003, n: enough },
                { status: "503", seconds: 0.003, n: 10 },
            ]),
        ],
        "no traffic": STABLE,
        // Slow too: with a handful of requests the p99 is the slowest of them.
        "low traffic: one 5xx in ten requests": [
            ...STABLE,
            ...beyla(CANARY_RS, [
                { status: "200", seconds: 12, n: 9 },
                { status: "500", seconds: 12, n: 1 },
            ]),
        ],
        "series that saw no request in the window": [...STABLE, ...beyla(CANARY_RS, [{ status: "200", seconds: 0.02, n: 0 }])],
        "a series that just appeared (one sample)": [...STABLE, ...beyla(CANARY_RS, [{ status: "500", seconds: 0.02, n: enough }], 1)],
        "slow: every request beyond the highest bucket, with enough traffic": [...STABLE, ...beyla(CANARY_RS, [{ status: "200", seconds: 30, n: enough }])],
        // The kubelet probes every pod whether or not anyone sends traffic (issue: two pods with
        // 10 s probes make about 96 requests per 4-minute window).
        "probes only: the kubelet's requests, enough to pass the floor": [
            ...STABLE,
            ...beyla(CANARY_RS, [
                { status: "200", seconds: 0.001, n: enough, route: "/healthz" },
                { status: "200", seconds: 0.001, n: enough, route: "/readyz" },
            ]),
        ],
        "a quiet canary failing 60 % of its requests among many fast probes": [
            ...STABLE,
            ...beyla(CANARY_RS, [
                { status: "200", seconds: 0.02, n: (enough * 2) / 5 },
                { status: "500", seconds: 0.02, n: (enough * 3) / 5 },
                { status: "200", seconds: 0.001, n: enough * 20, route: "/livez" },
            ]),
        ],
        "a quiet canary serving slowly among many fast probes": [
            ...STABLE,
            ...beyla(CANARY_RS, [
                { status: "200", seconds: 30, n: enough },
                { status: "200", seconds: 0.001, n: enough * 200, route: "/actuator/health/readiness" },
            ]),
        ],
    };
}

/** What each gate must conclude in each case. */
const EXPECTED: Record<string, Record<string, MeasurementPhase>> = {
    "success-rate": {
        healthy: "Successful",
        "every request a 5xx, with enough traffic": "Failed",
        "no traffic": "Inconclusive",
        "low traffic: one 5xx in ten requests": "Inconclusive",
        "series that saw no request in the window": "Inconclusive",
        "a series that just appeared (one sample)": "Inconclusive",
        "slow: every request beyond the highest bucket, with enough traffic": "Successful",
        "probes only: the kubelet's requests, enough to pass the floor": "Inconclusive",
        "a quiet canary failing 60 % of its requests among many fast probes": "Failed",
        "a quiet canary serving slowly among many fast probes": "Successful",
    },
    "latency-p99": {
        healthy: "Successful",
        // Fast errors are the success rate's to catch.
        "every request a 5xx, with enough traffic": "Successful",
        "no traffic": "Inconclusive",
        "low traffic: one 5xx in ten requests": "Inconclusive",
        "series that saw no request in the window": "Inconclusive",
        "a series that just appeared (one sample)": "Inconclusive",
        "slow: every request beyond the highest bucket, with enough traffic": "Failed",
        "probes only: the kubelet's requests, enough to pass the floor": "Inconclusive",
        "a quiet canary failing 60 % of its requests among many fast probes": "Successful",
        "a quiet canary serving slowly among many fast probes": "Failed",
    },
};

function measure(t: { query: string; successCondition: string; failureCondition: string }, series: Series[]): { result: number[]; phase: MeasurementPhase } {
    const result = evaluatePromQL(substitute(t.query, ARGS), series).map((s) => s.value);
    return { result, phase: measurementPhase(t, result) };
}

describe("metric gate semantics", () => {
    describe("every query parses with Prometheus' own grammar", () => {
        for (const [name, patch] of Object.entries(CONFIGS)) {
            it(`the shared templates with ${name} settings`, () => {
                const a = analysisConfig(patch);
                for (const t of sharedTemplates(a)) {
                    assert.deepStrictEqual(promqlSyntaxErrors(t.query), [], `${t.name}: ${t.query}`);
                    assert.deepStrictEqual(promqlSyntaxErrors(substitute(t.query, ARGS)), [], t.name);
                }
            });
        }

        it("the queries over every unit of window and a range of floors", () => {
            const target = canaryMatchers("{{args.namespace}}", "{{args.rollout}}", "{{args.canary-hash}}");
            for (const window of ["15s", "4m", "90m", "1h", "24h"]) {
                for (const floor of [1, 2, 50, 1_000_000]) {
                    for (const q of [successRateQuery(target, window, floor), latencyP99Query(target, window, floor)]) {
                        assert.deepStrictEqual(promqlSyntaxErrors(q), [], q);
                    }
                }
            }
        });

        it("the error-budget template's default query, with and without its arguments", () => {
            const q = ERROR_BUDGET_DEFAULTS.query;
            assert.deepStrictEqual(promqlSyntaxErrors(q), []);
            assert.deepStrictEqual(promqlSyntaxErrors(q.replace("{{args.service}}", "checkout").replace("{{args.slo}}", "availability")), []);
        });

        it("label values that would close the string stay inside it", () => {
            for (const hostile of ['x"} or vector(1) #', "back\\slash\\", "line\nbreak\r", 'a"b\\"c', "{{args.namespace}}", "ünïcode"]) {
                const matchers = canaryMatchers(hostile, hostile, hostile);
                for (const q of [successRateQuery(matchers, "4m", 50), latencyP99Query(matchers, "4m", 50)]) {
                    assert.deepStrictEqual(promqlSyntaxErrors(q), [], q);
                    assert.ok(stringLiterals(q).includes(hostile), `the value reads back whole from ${q}`);
                }
            }
        });

        it("the grammar check fails on a broken query", () => {
            assert.notDeepStrictEqual(promqlSyntaxErrors("sum(rate(x[4m])"), []);
            assert.notDeepStrictEqual(promqlSyntaxErrors('sum(x{a="b}) / 2'), []);
        });
    });

    describe("the parse tree has the guarding shape", () => {
        const a = analysisConfig();
        const isFloor = (n: PromNode, q: string) => {
            const f = binary(unparen(n));
            return (
                f.op === "Gte" &&
                f.rhs.name === "NumberDurationLiteral" &&
                Number(q.slice(f.rhs.from, f.rhs.to)) === a.minRequests &&
                unparen(f.lhs).name === "AggregateExpr"
            );
        };

        it("success rate: (numerator or vector(0)) / (requests >= minRequests)", () => {
            const q = successRateQuery(canaryMatchers("shop", "checkout", "abc"), a.rateWindow, a.minRequests);
            const top = binary(children(parsePromQL(q))[0]);
            assert.strictEqual(top.op, "Div");
            const numerator = binary(unparen(top.lhs));
            assert.strictEqual(numerator.op, "Or", "the or vector(0) is on the numerator");
            assert.strictEqual(q.slice(numerator.rhs.from, numerator.rhs.to), "vector(0)");
            assert.match(q.slice(numerator.lhs.from, numerator.lhs.to), /^sum\(increase\(.*http_response_status_code!~"5\.\."/);
            assert.ok(isFloor(top.rhs, q), "the floor is on the denominator");
            assert.ok(!/vector\(0\)/.test(q.slice(top.rhs.from, top.rhs.to)), "never a default on the denominator: no traffic must stay empty");
        });

        it("latency: the quantile, and on() (requests >= minRequests)", () => {
            const q = latencyP99Query(canaryMatchers("shop", "checkout", "abc"), a.rateWindow, a.minRequests);
            const top = binary(children(parsePromQL(q))[0]);
            assert.strictEqual(top.op, "And");
            assert.strictEqual(q.slice(top.modifiers[0].from, top.modifiers[0].to), "on()");
            assert.match(q.slice(top.lhs.from, top.lhs.to), /^histogram_quantile\(0\.99, sum by \(le\)/);
            assert.ok(isFloor(top.rhs, q));
        });
    });

    describe("conditions, evaluated the way Argo Rollouts does (utils/evaluate/evaluate.go)", () => {
        const c = guardedConditions("atLeast", 0.95);

        it("restates the evaluator's rules", () => {
            // A Prometheus vector arrives as a list of floats; an empty vector as an empty list.
            assert.strictEqual(evalCondition("len(result) > 0", []), false);
            // Indexing an empty list is a run-time error, so an unguarded condition makes an Error.
            assert.strictEqual(measurementPhase({ successCondition: "result[0] >= 0.95", failureCondition: "result[0] < 0.95" }, []), "Error");
            // A success condition alone: NaN and empty-but-guarded are Failed.
            assert.strictEqual(measurementPhase({ successCondition: "result[0] >= 0.95" }, [NaN]), "Failed");
            assert.strictEqual(measurementPhase({ successCondition: `${HAS_VALUE} && result[0] >= 0.95` }, []), "Failed");
            // Both conditions, neither true: Inconclusive.
            assert.strictEqual(measurementPhase({ successCondition: "result[0] > 1", failureCondition: "result[0] < 0" }, [0.5]), "Inconclusive");
            // isInf and isNaN exist; names outside the environment do not compile.
            assert.strictEqual(evalCondition("isInf(result[0])", [Infinity]), true);
            assert.strictEqual(measurementPhase({ successCondition: "isNull(result)" }, [1]), "Error");
        });

        it("leaves empty and NaN Inconclusive and judges only a number", () => {
            assert.strictEqual(measurementPhase(c, []), "Inconclusive");
            assert.strictEqual(measurementPhase(c, [NaN]), "Inconclusive");
            assert.strictEqual(measurementPhase(c, [0]), "Failed");
            assert.strictEqual(measurementPhase(c, [0.9]), "Failed");
            assert.strictEqual(measurementPhase(c, [0.95]), "Successful");
            assert.strictEqual(measurementPhase(c, [1]), "Successful");
            const l = guardedConditions("atMost", 0.5);
            assert.strictEqual(measurementPhase(l, []), "Inconclusive");
            assert.strictEqual(measurementPhase(l, [10]), "Failed");
            assert.strictEqual(measurementPhase(l, [0.2]), "Successful");
        });

        it("the error-budget check pauses on an exhausted budget and on no data, and never fails a version", () => {
            const m = (
                errorBudgetTemplateSpec(ERROR_BUDGET_DEFAULTS, "http://m/prometheus", "hub") as {
                    metrics: { successCondition: string; failureCondition: string }[];
                }
            ).metrics[0];
            assert.strictEqual(measurementPhase(m, []), "Inconclusive", "no SLO authored: pause, not abort");
            assert.strictEqual(measurementPhase(m, [NaN]), "Inconclusive");
            assert.strictEqual(measurementPhase(m, [0]), "Inconclusive", "exhausted: pause, not abort");
            assert.strictEqual(measurementPhase(m, [-0.3]), "Inconclusive", "overspent: pause, not abort");
            assert.strictEqual(measurementPhase(m, [0.4]), "Successful");
            for (const value of [[], [NaN], [-1], [0], [0.5], [1], [2]]) {
                assert.notStrictEqual(measurementPhase(m, value), "Failed", `${JSON.stringify(value)}: the freeze never fails a version`);
            }
        });

        it("reads expr's boolean literals", () => {
            assert.strictEqual(evalCondition("false", [1]), false);
            assert.strictEqual(evalCondition("true && len(result) > 0", [1]), true);
            assert.strictEqual(measurementPhase({ successCondition: "result[0] > 0", failureCondition: "false" }, [0]), "Inconclusive");
        });
    });

    describe("what each gate concludes from Beyla's series", () => {
        it("the series model agrees with Prometheus on quantiles", () => {
            const b = (counts: number[]) => [...BEYLA_BUCKETS, Infinity].map((upperBound, i) => ({ upperBound, count: counts[i] }));
            assert.ok(Number.isNaN(bucketQuantile(0.99, b(Array(16).fill(0)))), "no observations: NaN");
            assert.strictEqual(bucketQuantile(0.99, b([...Array(15).fill(0), 10])), 10, "all in +Inf: the highest finite bound");
            assert.ok(Number.isNaN(bucketQuantile(0.99, [{ upperBound: 1, count: 3 }])), "no +Inf bucket: NaN");
        });

        for (const [name, patch] of Object.entries(CONFIGS)) {
            describe(`${name} settings`, () => {
                const a = analysisConfig(patch);
                for (const t of sharedTemplates(a)) {
                    for (const [situation, series] of Object.entries(cases(a))) {
                        if (situation.startsWith("low traffic") && a.minRequests <= 10) {
                            continue; // ten requests are not low traffic for this floor
                        }
                        it(`${t.name}: ${situation} -> ${EXPECTED[t.metric][situation]}`, () => {
                            const { result, phase } = measure(t, series);
                            assert.strictEqual(phase, EXPECTED[t.metric][situation], `result ${JSON.stringify(result)} of ${t.query}`);
                        });
                    }
                }
            });
        }

        it("counts the probes again with excludeRoutes: [] (what the exclusion changes)", () => {
            const a = analysisConfig({ excludeRoutes: [] });
            const c = cases(a);
            const [success, , latency] = sharedTemplates(a);
            assert.strictEqual(
                measure(success, c["probes only: the kubelet's requests, enough to pass the floor"]).phase,
                "Successful",
                "probes alone pass the gate",
            );
            assert.strictEqual(
                measure(success, c["a quiet canary failing 60 % of its requests among many fast probes"]).phase,
                "Successful",
                "probes dilute the errors",
            );
            assert.strictEqual(measure(latency, c["a quiet canary serving slowly among many fast probes"]).phase, "Successful", "probes dilute the p99");
            assert.ok(!success.query.includes("http_route"), "nothing to exclude adds no matcher");
        });

        it("excludes exactly the listed routes, and keeps series without a route", () => {
            const a = analysisConfig({ excludeRoutes: ["/healthz", "/v1/*/status"] });
            const [success] = sharedTemplates(a);
            assert.ok(success.query.includes('http_route!~"/healthz|/v1/\\\\*/status"'), success.query);
            const healthy = (route: string | undefined) => beyla(CANARY_RS, [{ status: "200", seconds: 0.02, n: 400, ...(route ? { route } : {}) }]);
            assert.strictEqual(measure(success, healthy("/healthz")).phase, "Inconclusive");
            assert.strictEqual(measure(success, healthy("/v1/*/status")).phase, "Inconclusive", "a route pattern is matched literally");
            assert.strictEqual(measure(success, healthy("/v1/x/status")).phase, "Successful", "not a wildcard");
            assert.strictEqual(measure(success, healthy("/healthz/deep")).phase, "Successful", "exact, not a prefix");
            const unrouted = healthy(undefined).map((s) => {
                const { http_route: _r, ...labels } = s.labels;
                return { ...s, labels };
            });
            assert.strictEqual(measure(success, unrouted).phase, "Successful", "a Beyla without routes is still counted");
        });

        it("one request below the floor is Inconclusive, at the floor it is judged", () => {
            const a = analysisConfig({ minRequests: 20 });
            const [success] = sharedTemplates(a);
            const at = (ok: number, bad: number) =>
                measure(
                    success,
                    beyla(CANARY_RS, [
                        { status: "200", seconds: 0.02, n: ok },
                        { status: "500", seconds: 0.02, n: bad },
                    ]),
                ).phase;
            assert.strictEqual(at(18, 1), "Inconclusive");
            assert.strictEqual(at(19, 1), "Successful", "one 5xx in twenty is exactly 0.95");
            assert.strictEqual(at(0, 20), "Failed");
        });
    });

    describe("runs: a finite gate can pass and can fail, a background one never ends on its own", () => {
        for (const [name, patch] of Object.entries(CONFIGS)) {
            it(`${name} settings`, () => {
                const a = analysisConfig(patch);
                type Limits = { count: number; interval: string; failureLimit: number; inconclusiveLimit: number; consecutiveErrorLimit: number };
                const finite = clusterAnalysisTemplateSpec(
                    sharedTemplates(a).find((t) => t.runs === "finite")!,
                    a,
                    "http://m/prometheus",
                    "hub",
                ) as { metrics: Limits[] };
                const m = finite.metrics[0];
                const n = effectiveCount(m)!;
                assert.strictEqual(n, a.count);
                assert.strictEqual(metricPhase(m, Array(n).fill("Successful")), "Successful", "healthy passes after count measurements");
                assert.strictEqual(metricPhase(m, ["Failed"]), a.failureLimit === 0 ? "Failed" : "Running");
                assert.strictEqual(metricPhase(m, Array(a.failureLimit + 1).fill("Failed")), "Failed", "a breach fails it");
                assert.notStrictEqual(metricPhase(m, Array(n).fill("Inconclusive")), "Successful", "no data never passes");
                assert.strictEqual(metricPhase(m, Array(a.consecutiveErrorLimit + 1).fill("Error")), "Error");
                const background = clusterAnalysisTemplateSpec(
                    sharedTemplates(a).find((t) => t.runs === "background")!,
                    a,
                    "http://m/prometheus",
                    "hub",
                ) as { metrics: { interval: string; count?: number }[] };
                assert.strictEqual(effectiveCount(background.metrics[0]), undefined);
                assert.strictEqual(metricPhase(background.metrics[0], Array(50).fill("Successful")), "Running");
            });
        }

        it("consecutiveSuccessLimit ends a metric at its first success; at the count it is Inconclusive, or Failed with failureLimit -1", () => {
            const m = { interval: "1m", count: 4, consecutiveSuccessLimit: 1, inconclusiveLimit: 3 };
            assert.strictEqual(metricPhase(m, ["Inconclusive", "Inconclusive", "Successful"]), "Successful");
            assert.strictEqual(metricPhase(m, ["Inconclusive", "Inconclusive"]), "Running");
            assert.strictEqual(metricPhase(m, Array(4).fill("Inconclusive")), "Inconclusive");
            assert.strictEqual(
                metricPhase({ interval: "1m", count: 3, consecutiveSuccessLimit: 2, failureLimit: 1 }, ["Successful", "Failed", "Successful"]),
                "Inconclusive",
                "neither limit reached at the count",
            );
            assert.strictEqual(metricPhase({ interval: "1m", count: 2, consecutiveSuccessLimit: 1, failureLimit: -1 }, ["Failed", "Failed"]), "Failed");
            assert.strictEqual(
                metricPhase({ interval: "1m", count: 5, consecutiveSuccessLimit: 2 }, ["Successful", "Error", "Successful"]),
                "Running",
                "an error breaks the streak",
            );
        });

        it("the waiting freeze goes on at the first measurement with budget left and pauses after maxFreeze, never fails", () => {
            const budget = { ...ERROR_BUDGET_DEFAULTS, recheckInterval: "5m", maxFreeze: "1h" };
            type Metric = {
                name: string;
                count: number;
                interval?: string;
                successCondition: string;
                failureCondition: string;
                consecutiveSuccessLimit?: number;
                inconclusiveLimit: number;
                failureLimit: number;
            };
            const [found, wait] = (errorBudgetWaitTemplateSpec(budget, "http://m/prometheus", "hub") as { metrics: Metric[] }).metrics;
            assert.strictEqual(found.name, "slo-found");
            assert.strictEqual(metricPhase(found, [measurementPhase(found, [])]), "Inconclusive", "no SLO: the run pauses at once");
            assert.strictEqual(metricPhase(found, [measurementPhase(found, [0])]), "Successful", "an exhausted SLO exists");
            const n = freezeMeasurements(budget);
            assert.strictEqual(n, 13, "one now and one every 5m for an hour");
            assert.strictEqual(wait.count, n);
            const exhausted = measurementPhase(wait, [0]);
            const left = measurementPhase(wait, [0.2]);
            assert.strictEqual(metricPhase(wait, [exhausted]), "Running", "exhausted: it waits");
            assert.strictEqual(metricPhase(wait, [...Array(n - 1).fill(exhausted), left]), "Successful", "recovered at the last measurement: it goes on");
            assert.strictEqual(metricPhase(wait, [exhausted, exhausted, left]), "Successful", "recovered: it goes on by itself");
            assert.strictEqual(metricPhase(wait, Array(n).fill(exhausted)), "Inconclusive", "never recovered: a human decides");
            for (let k = 1; k < n; k++) {
                assert.strictEqual(metricPhase(wait, Array(k).fill(exhausted)), "Running", `${k} exhausted measurements: still waiting`);
            }
            for (const value of [[], [NaN], [-1], [0], [0.5]]) {
                assert.notStrictEqual(measurementPhase(wait, value), "Failed");
                assert.notStrictEqual(measurementPhase(found, value), "Failed");
            }
        });

        it("the waiting freeze's limits are ones Argo Rollouts accepts", () => {
            // utils/analysis/factory.go ValidateMetric (v1.9.0), restated for these two metrics.
            for (const [recheckInterval, maxFreeze] of [
                ["5m", "24h"],
                ["1m", "1m"],
                ["7m", "1h"],
                ["5s", "40s"],
            ]) {
                const budget = { ...ERROR_BUDGET_DEFAULTS, recheckInterval, maxFreeze };
                type M = { count: number; interval?: string; failureLimit: number; inconclusiveLimit: number; consecutiveSuccessLimit?: number };
                for (const m of (errorBudgetWaitTemplateSpec(budget, "http://m/prometheus", "hub") as { metrics: M[] }).metrics) {
                    const success = m.consecutiveSuccessLimit ?? 0;
                    assert.ok(m.count >= m.failureLimit + success, `count ${m.count} >= failureLimit + consecutiveSuccessLimit`);
                    assert.ok(m.count >= m.inconclusiveLimit, "count >= inconclusiveLimit");
                    assert.ok(m.count <= 1 || m.interval !== undefined, "an interval with count > 1");
                    assert.ok(success > 0 || m.failureLimit >= 0);
                }
            }
        });

        it("inconclusive measurements add up over the whole run, errors only in a row", () => {
            const m = { interval: "1m", inconclusiveLimit: 2, consecutiveErrorLimit: 2 };
            assert.strictEqual(metricPhase(m, ["Inconclusive", "Successful", "Inconclusive", "Successful", "Successful", "Inconclusive"]), "Inconclusive");
            assert.strictEqual(metricPhase(m, ["Error", "Error", "Successful", "Error", "Error"]), "Running");
        });
    });

    describe("the offline plans declare none of the defects", () => {
        const plans = new Map<string, { run: OfflineRun; analysis: AnalysisConfig }>();
        before(async () => {
            for (const stack of ["hub", "preprod"]) {
                plans.set(stack, { run: await planStack(readStackFile(stack, FIXTURE_STACKS)), analysis: { ...ANALYSIS_DEFAULTS } });
            }
            for (const strategy of ["canary", "blueGreen"]) {
                const smoke = merged(hubConfig(), {
                    smokeTest: {
                        enabled: true,
                        strategy,
                        hostname: "smoke.hub.test.example",
                        image: `registry.platform.test/mirror/argoproj/rollouts-demo@sha256:${"c".repeat(64)}`,
                        loadImage: `registry.platform.test/mirror/curlimages/curl@sha256:${"d".repeat(64)}`,
                    },
                });
                plans.set(`${strategy} smoke`, { run: await planInline(smoke, { stack: "hub" }), analysis: analysisConfig() });
            }
        });

        type Metric = {
            name: string;
            count?: number;
            interval?: string;
            initialDelay?: string;
            successCondition: string;
            failureCondition: string;
            provider: { prometheus: { query: string } };
        };
        type Ref = { templates: { templateName: string; clusterScope?: boolean }[] };
        const templatesOf = (run: OfflineRun) =>
            new Map(
                run.resources
                    .filter((r) => r.type === "kubernetes:argoproj.io/v1alpha1:ClusterAnalysisTemplate")
                    .map((r) => [(r.inputs.metadata as { name: string }).name, (r.inputs.spec as { metrics: Metric[] }).metrics]),
            );

        for (const stack of ["hub", "preprod", "canary smoke", "blueGreen smoke"]) {
            it(`${stack}: every template guards no-data, fails all-5xx and slow, floors low traffic`, () => {
                const { run, analysis } = plans.get(stack)!;
                const templates = templatesOf(run);
                assert.deepStrictEqual(
                    [...templates.keys()].sort(),
                    ["error-budget", "error-budget-wait", "latency-p99", "latency-p99-finite", "success-rate", "success-rate-finite"].map(templateName),
                );
                for (const [name, metrics] of templates) {
                    for (const m of metrics) {
                        assert.deepStrictEqual(promqlSyntaxErrors(m.provider.prometheus.query), [], name);
                        assert.strictEqual(measurementPhase(m, []), "Inconclusive", `${name}: no data must pause, not abort`);
                        if (name === ERROR_BUDGET || name === ERROR_BUDGET_WAIT) {
                            continue;
                        }
                        const t = { query: m.provider.prometheus.query, successCondition: m.successCondition, failureCondition: m.failureCondition };
                        for (const [situation, series] of Object.entries(cases(analysis))) {
                            assert.strictEqual(measure(t, series).phase, EXPECTED[m.name][situation], `${name}: ${situation}`);
                        }
                        const windows = [...m.provider.prometheus.query.matchAll(/\[([0-9]+[smh])\]/g)].map((x) => x[1]);
                        assert.ok(windows.length > 0 && windows.every((w) => w === analysis.rateWindow), `${name}: one rate window`);
                    }
                }
            });

            it(`${stack}: every analysis outside canary background terminates`, () => {
                const { run } = plans.get(stack)!;
                const templates = templatesOf(run);
                for (const r of run.resources.filter((x) => x.type === "kubernetes:argoproj.io/v1alpha1:Rollout")) {
                    const strategy = (
                        r.inputs.spec as {
                            strategy: { canary?: { steps: { analysis?: Ref }[] }; blueGreen?: { prePromotionAnalysis?: Ref; postPromotionAnalysis?: Ref } };
                        }
                    ).strategy;
                    const mustEnd: Ref[] = [
                        ...(strategy.canary?.steps ?? []).flatMap((s) => (s.analysis ? [s.analysis] : [])),
                        ...[strategy.blueGreen?.prePromotionAnalysis, strategy.blueGreen?.postPromotionAnalysis].filter((x): x is Ref => x !== undefined),
                    ];
                    for (const ref of mustEnd) {
                        for (const t of ref.templates) {
                            const metrics = templates.get(t.templateName);
                            assert.ok(metrics && t.clusterScope, `${r.name} references ${t.templateName}, which the stack does not declare`);
                            for (const m of metrics) {
                                assert.notStrictEqual(effectiveCount(m), undefined, `${r.name}: ${t.templateName}/${m.name} runs indefinitely`);
                            }
                        }
                    }
                }
                if (stack === "blueGreen smoke") {
                    const bg = run.resources.find((x) => x.type === "kubernetes:argoproj.io/v1alpha1:Rollout")!.inputs.spec as {
                        strategy: { blueGreen: { prePromotionAnalysis?: Ref; postPromotionAnalysis: Ref } };
                    };
                    assert.deepStrictEqual(
                        bg.strategy.blueGreen.postPromotionAnalysis.templates.map((t) => t.templateName),
                        [templateName("success-rate-finite")],
                    );
                    // The preview gate's run is among those checked above.
                    assert.deepStrictEqual(
                        bg.strategy.blueGreen.prePromotionAnalysis?.templates.map((t) => t.templateName),
                        [templateName("success-rate-finite")],
                    );
                    for (const r of manifestResources(run)) {
                        const res = validateObject(r.inputs);
                        assert.deepStrictEqual(res.problems, [], `${res.object} (${res.via})`);
                    }
                }
            });
        }
    });
});

describe("rate/increase extrapolation (the model, held to Prometheus by the e2e scenario gate-model-agrees)", () => {
    // The figures are what Prometheus 3.14 answered in that scenario for the same samples.
    const counts = (perSecond: number, times: number[]) => times.map((t) => Math.round(1000 + perSecond * (t + 60)));
    const every5s = [-18, -13, -8, -3];

    it("extrapolates a series that covers the window to both edges", () => {
        assert.strictEqual(extrapolatedIncrease(counts(10, every5s), every5s, 20), 200);
        assert.strictEqual(extrapolatedIncrease(counts(3, every5s), every5s, 20), 60);
    });

    it("extrapolates a series that appeared mid-window by half a sample interval only", () => {
        assert.strictEqual(extrapolatedIncrease(counts(10, [-7, -2]), [-7, -2], 20), 95);
    });

    it("yields nothing from fewer than two samples in the left-open window", () => {
        assert.strictEqual(extrapolatedIncrease([1000], [-2], 20), undefined);
        assert.strictEqual(extrapolatedIncrease([1000, 1050], [-20, -2], 20), undefined);
    });

    it("lets a window of 45 raw requests pass a floor of 50, as Prometheus does", () => {
        const t = sharedTemplates(analysisConfig({ rateWindow: "20s", scrapeInterval: "5s", remoteWriteLag: "1s", initialDelay: "21s", minRequests: 50 })).find(
            (x) => x.name === templateName("success-rate"),
        )!;
        const labels = { k8s_namespace_name: "shop", k8s_replicaset_name: CANARY_RS, http_response_status_code: "200" };
        const series: Series[] = [{ labels: { __name__: COUNT, ...labels }, samples: counts(3, every5s), times: every5s }];
        const result = evaluatePromQL(substitute(t.query, ARGS), series).map((x) => x.value);
        assert.deepStrictEqual(result, [1]);
        assert.strictEqual(measurementPhase(t, result), "Successful");
    });
});
