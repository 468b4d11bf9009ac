import * as assert from "assert";
import { promqlSyntaxErrors } from "../components/rollouts/promql";
import { OfflineRun } from "../tools/offline";
import { planStack } from "../tools/plan";
import { readStackFile } from "../tools/stackFile";
import { parser } from "@prometheus-io/lezer-promql";
import { FIXTURE_STACKS } from "./harness";
import { parseHub } from "./stackConfig";
import { templateName, ERROR_BUDGET, ERROR_BUDGET_WAIT } from "../components/argoRollouts";
import { ANALYSIS_DEFAULTS } from "../components/rollouts/config";
import { HAS_VALUE, canaryMatchers, latencyP99Query, sharedTemplates, successRateQuery } from "../components/rollouts/analysis";

/** Valid analysis settings far from the defaults, to show the rules hold for any valid config. */
const CONFIGS: Record<string, Record<string, unknown>> = {
    defaults: {},
    strict: {
        successRate: 0.999,
        minRequests: 1000,
        latencyP99Seconds: 0.05,
        scrapeInterval: "15s",
        rateWindow: "60s",
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
const substitute = (query: string, args: Record<string, string>): string =>
    query.replace(/\{\{args\.([a-z-]+)\}\}/g, (_m, name: string) => args[name] ?? assert.fail(`args.${name} was not resolved`));
const ARGS = { namespace: "shop", rollout: "checkout", "canary-hash": "5d8f9c7b6", service: "checkout", slo: "availability" };

/** The values of every string literal in `query` (the program writes them double-quoted, Go-escaped). */
function stringLiterals(query: string): string[] {
    const out: string[] = [];
    parser.parse(query).iterate({
        enter: (n) => {
            if (n.name === "StringLiteral") out.push(JSON.parse(query.slice(n.from, n.to)) as string);
        },
    });
    return out;
}

describe("metric gate semantics", () => {
    describe("every query parses with Prometheus' own grammar", () => {
        for (const [name, patch] of Object.entries(CONFIGS)) {
            it(`the shared templates with ${name} settings`, () => {
                for (const t of sharedTemplates(parseHub({ analysis: patch }).analysis)) {
                    assert.deepStrictEqual(promqlSyntaxErrors(t.query), [], `${t.name}: ${t.query}`);
                    assert.deepStrictEqual(promqlSyntaxErrors(substitute(t.query, ARGS)), [], t.name);
                }
            });
        }

        it("label values that would close the string stay inside it", () => {
            for (const hostile of ['x"} or vector(1) #', "back\\slash\\", "line\nbreak\r", 'a"b\\"c', "{{args.namespace}}", "ünïcode"]) {
                const matchers = canaryMatchers(hostile, hostile, hostile);
                for (const q of [successRateQuery(matchers, "4m", 50), latencyP99Query(matchers, "4m", 50)]) {
                    assert.deepStrictEqual(promqlSyntaxErrors(q), [], q);
                    assert.ok(stringLiterals(q).includes(hostile), `the value reads back whole from ${q}`);
                }
            }
        });
    });

    describe("the offline plans declare none of the defects", () => {
        // The rollouts stage alone declares templates: a hub and a spoke, the smoke canary on or off, declare the same ones.
        const plans = new Map<string, OfflineRun>();
        before(async () => {
            for (const stack of ["hub", "preprod"]) {
                plans.set(stack, await planStack(readStackFile(stack, FIXTURE_STACKS)));
            }
        });

        type Metric = { successCondition: string; failureCondition: string; provider: { prometheus: { query: string } } };
        const templatesOf = (run: OfflineRun) =>
            new Map(
                run.resources
                    .filter((r) => r.type === "kubernetes:argoproj.io/v1alpha1:ClusterAnalysisTemplate")
                    .map((r) => [(r.inputs.metadata as { name: string }).name, (r.inputs.spec as { metrics: Metric[] }).metrics]),
            );

        for (const stack of ["hub", "preprod"]) {
            // What each gate concludes from Beyla's series is the engines' to say (engine-promtool:
            // promtool and Argo Rollouts' own provider over e2e/samples/gates.yaml); here, the plan
            // declares every template with its guard against no data and one rate window.
            it(`${stack}: every template parses, with its arguments too, guards no data and reads one rate window`, () => {
                const templates = templatesOf(plans.get(stack)!);
                assert.deepStrictEqual(
                    [...templates.keys()].sort(),
                    ["error-budget", "error-budget-wait", "latency-p99", "latency-p99-finite", "success-rate", "success-rate-finite"].map(templateName),
                );
                for (const [name, metrics] of templates) {
                    for (const m of metrics) {
                        assert.deepStrictEqual(promqlSyntaxErrors(m.provider.prometheus.query), [], name);
                        assert.deepStrictEqual(promqlSyntaxErrors(substitute(m.provider.prometheus.query, ARGS)), [], name);
                        assert.ok(m.successCondition.startsWith(HAS_VALUE), `${name}: ${m.successCondition} reads result[0] unguarded`);
                        assert.ok(m.failureCondition === "false" || m.failureCondition.startsWith(HAS_VALUE), `${name}: ${m.failureCondition}`);
                        if (name === ERROR_BUDGET || name === ERROR_BUDGET_WAIT) {
                            assert.strictEqual(m.failureCondition, "false", `${name}: the freeze never fails a version`);
                            continue;
                        }
                        const windows = [...m.provider.prometheus.query.matchAll(/\[([0-9]+[smh])\]/g)].map((x) => x[1]);
                        assert.ok(windows.length > 0 && windows.every((w) => w === ANALYSIS_DEFAULTS.rateWindow), `${name}: one rate window`);
                    }
                }
            });
        }
    });
});
