import * as assert from "assert";
import { parseAddonConfig } from "../stacks/config";
import { promqlSyntaxErrors } from "../components/rollouts/promql";
import { OfflineRun } from "../tools/offline";
import { planStack } from "../tools/plan";
import { readStackFile } from "../tools/stackFile";
import { parser } from "@prometheus-io/lezer-promql";
import { FIXTURE_STACKS, hubConfig, merged, planInline } from "./harness";
import { templateName, ERROR_BUDGET, ERROR_BUDGET_WAIT } from "../components/argoRollouts";
import { ANALYSIS_DEFAULTS, AnalysisConfig, ERROR_BUDGET_DEFAULTS } from "../components/rollouts/config";
import { HAS_VALUE, canaryMatchers, latencyP99Query, sharedTemplates, successRateQuery } from "../components/rollouts/analysis";

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

/** The values of every string literal in `query` (the program writes them double-quoted, Go-escaped). */
function stringLiterals(query: string): string[] {
    const out: string[] = [];
    parser.parse(query).iterate({
        enter: (n) => {
            if (n.name === "StringLiteral") {
                out.push(JSON.parse(query.slice(n.from, n.to)) as string);
            }
        },
    });
    return out;
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
                        hostname: "smoke.hub.platform.test",
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
        const templatesOf = (run: OfflineRun) =>
            new Map(
                run.resources
                    .filter((r) => r.type === "kubernetes:argoproj.io/v1alpha1:ClusterAnalysisTemplate")
                    .map((r) => [(r.inputs.metadata as { name: string }).name, (r.inputs.spec as { metrics: Metric[] }).metrics]),
            );

        for (const stack of ["hub", "preprod", "canary smoke", "blueGreen smoke"]) {
            // What each gate concludes from Beyla's series is the engines' to say (engine-promtool:
            // promtool and Argo Rollouts' own provider over e2e/samples/gates.yaml); here, the plan
            // declares every template with its guard against no data and one rate window.
            it(`${stack}: every template parses, guards no data and reads one rate window`, () => {
                const { run, analysis } = plans.get(stack)!;
                const templates = templatesOf(run);
                assert.deepStrictEqual(
                    [...templates.keys()].sort(),
                    ["error-budget", "error-budget-wait", "latency-p99", "latency-p99-finite", "success-rate", "success-rate-finite"].map(templateName),
                );
                for (const [name, metrics] of templates) {
                    for (const m of metrics) {
                        assert.deepStrictEqual(promqlSyntaxErrors(m.provider.prometheus.query), [], name);
                        assert.ok(m.successCondition.startsWith(HAS_VALUE), `${name}: ${m.successCondition} reads result[0] unguarded`);
                        assert.ok(m.failureCondition === "false" || m.failureCondition.startsWith(HAS_VALUE), `${name}: ${m.failureCondition}`);
                        if (name === ERROR_BUDGET || name === ERROR_BUDGET_WAIT) {
                            assert.strictEqual(m.failureCondition, "false", `${name}: the freeze never fails a version`);
                            continue;
                        }
                        const windows = [...m.provider.prometheus.query.matchAll(/\[([0-9]+[smh])\]/g)].map((x) => x[1]);
                        assert.ok(windows.length > 0 && windows.every((w) => w === analysis.rateWindow), `${name}: one rate window`);
                    }
                }
            });
        }
    });
});
