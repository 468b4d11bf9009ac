/**
 * The metric gates decided by the engines (engine-promtool): the cases of e2e/samples/gates.yaml
 * become a `promtool test rules` file (each shared template's query, with the arguments a Rollout
 * passes, over the case's series; the expected vector as `exp_samples`) and the input of
 * rollouts-evaluate (e2e/engines/argo-rollouts/main.go: Argo Rollouts' own argument resolution,
 * metric validation and Prometheus provider on that vector). Nothing here evaluates PromQL or a
 * condition; it only writes the engines' inputs and compares their answers with the data.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import {
    BEYLA_DURATION_BUCKETS,
    BEYLA_REQUESTS,
    clusterAnalysisTemplateSpec,
    errorBudgetTemplateSpec,
    errorBudgetWaitTemplateSpec,
    sharedTemplates,
} from "../../components/rollouts/analysis";
import { ANALYSIS_DEFAULTS, AnalysisConfig, ERROR_BUDGET_DEFAULTS } from "../../components/rollouts/config";
import { PROJECT } from "../../components/config";
import { deliveryPlan } from "../../components/delivery/strategy";
import { BEYLA_BOUNDS } from "./metrics";
import { addonConfig } from "./platform";
import { fixtureConfig } from "./stacks";

export const GATE_SAMPLES = path.resolve(__dirname, "..", "samples", "gates.yaml");

interface Flow {
    status: number;
    requests: number;
    seconds: number;
    route?: string | null;
    samples?: 1;
}
type Expectation = Record<string, { result: (number | string)[]; phase: string }>;
interface GateSamples {
    stable: Flow[];
    cases: { name: string; analysis?: Record<string, unknown>; canary: Flow[]; expect: Expectation }[];
    budgets: { name: string; remaining: number | null; expect: Expectation }[];
    freezes: { recheckInterval: string; maxFreeze: string }[];
    conditions: { name: string; metric: string; result: (number | string)[]; phase: string }[];
}

export function gateSamples(): GateSamples {
    return YAML.parse(fs.readFileSync(GATE_SAMPLES, "utf8")) as GateSamples;
}

/** The app the cases are measured for, and the Rollout's revision the canary runs. */
const APP = { name: "checkout", namespace: "shop", port: 8080, slo: { service: "checkout", name: "availability" } };
const CANARY_HASH = "5d8f9c7b6";
const STABLE_HASH = "7c9d8e6f5";
const ADDRESS = "http://mimir.invalid/prometheus";

/** The analysis settings of a case: the defaults with its overrides, read and checked as a stack's are. */
function analysisOf(patch: Record<string, unknown> = {}): AnalysisConfig {
    return addonConfig("hub", { ...fixtureConfig("hub"), [`${PROJECT}:analysis`]: patch }).analysis;
}

/**
 * The analysis arguments a prod canary of the app passes (components/delivery/strategy.ts): the
 * background gate's, and its first step's error-budget freeze.
 */
function rolloutArgs(): { gate: unknown[]; budget: unknown[] } {
    const route = { name: "checkout", gateway: { name: "internal", namespace: "gateway-system", listener: "https" }, hostnames: ["checkout.platform.test"] };
    const canary = (
        deliveryPlan({ ...APP, route }, { tier: "prod" }).strategy as { canary: { analysis: { args: unknown[] }; steps: { analysis?: { args: unknown[] } }[] } }
    ).canary;
    const budget = canary.steps.find((s) => s.analysis)?.analysis?.args;
    if (!budget) {
        throw new Error("a prod canary with an SLO has no error-budget step");
    }
    return { gate: canary.analysis.args, budget };
}

const quote = (v: string) => JSON.stringify(v);
const selector = (labels: Record<string, string>) =>
    `{${Object.entries(labels)
        .map(([k, v]) => `${k}=${quote(v)}`)
        .join(",")}}`;

/** promtool's values of a counter that rises by `requests` over the window's two scrapes from zero. */
function values(requests: number, samples?: 1): string {
    return samples === 1 ? `_ _ ${requests}` : `0+${requests / 2}x2`;
}

/** Beyla's series of one ReplicaSet: the request counter and the cumulative duration buckets, per status and route. */
function beylaSeries(replicaSet: string, flows: Flow[]): { series: string; values: string }[] {
    const out: { series: string; values: string }[] = [];
    for (const f of flows) {
        const labels = {
            k8s_namespace_name: APP.namespace,
            k8s_replicaset_name: replicaSet,
            k8s_deployment_name: APP.name,
            http_response_status_code: String(f.status),
            ...(f.route === null ? {} : { http_route: f.route ?? "/api/orders" }),
        };
        out.push({ series: `${BEYLA_REQUESTS}${selector(labels)}`, values: values(f.requests, f.samples) });
        for (const le of [...BEYLA_BOUNDS.map(String), "+Inf"]) {
            const counted = le === "+Inf" || f.seconds <= Number(le) ? f.requests : 0;
            out.push({ series: `${BEYLA_DURATION_BUCKETS}${selector({ ...labels, le })}`, values: values(counted, f.samples) });
        }
    }
    return out;
}

const BUDGET_SERIES = `slo:period_error_budget_remaining:ratio${selector({ sloth_service: APP.slo.service, sloth_slo: APP.slo.name })}`;

/** One template's measurement of one case: what rollouts-evaluate is asked, and promtool checks. */
interface Gate {
    /** The case and the template, as rollouts-evaluate names its measurements. */
    name: string;
    template: unknown;
    args: unknown[];
    /** The vector each metric of the template reads, as Prometheus sends it. */
    results: Record<string, string[]>;
    /** The phase each metric must come to. */
    phases: Record<string, string>;
    /** promtool's test group of the case; none for a condition alone. */
    promtool?: { group: string; metric: string; expected: (number | string)[]; labels: string };
}

export interface GateRun {
    gates: Gate[];
    /** promtool's test groups, without their queries (added from rollouts-evaluate's resolution). */
    groups: Map<string, { interval: string; evalTime: string; series: { series: string; values: string }[] }>;
}

const asResult = (r: (number | string)[]) => r.map((v) => String(v));

/** The engines' inputs for every case of the samples. */
export function gateRun(samples: GateSamples = gateSamples()): GateRun {
    const args = rolloutArgs();
    const gates: Gate[] = [];
    const groups: GateRun["groups"] = new Map();
    const stable = beylaSeries(`${APP.name}-${STABLE_HASH}`, samples.stable);
    for (const c of samples.cases) {
        const analysis = analysisOf(c.analysis);
        const w = analysis.rateWindow;
        // Two scrapes per window, from zero at its start: the increase Prometheus extrapolates is
        // then exactly the requests of the flows.
        groups.set(c.name, {
            interval: `${Number(w.slice(0, -1)) / 2}${w.slice(-1)}`,
            evalTime: w,
            series: [...stable, ...beylaSeries(`${APP.name}-${CANARY_HASH}`, c.canary)],
        });
        for (const t of sharedTemplates(analysis)) {
            const e = c.expect[t.metric];
            gates.push({
                name: `${c.name} (${t.name})`,
                template: clusterAnalysisTemplateSpec(t, analysis, ADDRESS, "tenant"),
                args: args.gate,
                results: { [t.metric]: asResult(e.result) },
                phases: { [t.metric]: e.phase },
                promtool: { group: c.name, metric: t.metric, expected: e.result, labels: "{}" },
            });
        }
    }
    const budgetTemplates = [
        { name: "error-budget", spec: errorBudgetTemplateSpec(ERROR_BUDGET_DEFAULTS, ADDRESS, "tenant") },
        { name: "error-budget-wait", spec: errorBudgetWaitTemplateSpec(ERROR_BUDGET_DEFAULTS, ADDRESS, "tenant") },
    ];
    const metricsOf = (spec: unknown) => (spec as { metrics: { name: string }[] }).metrics.map((m) => m.name);
    for (const b of samples.budgets) {
        groups.set(b.name, { interval: "1m", evalTime: "2m", series: b.remaining === null ? [] : [{ series: BUDGET_SERIES, values: `${b.remaining}x2` }] });
        for (const { name, spec } of budgetTemplates) {
            gates.push({
                name: `${b.name} (${name})`,
                template: spec,
                args: args.budget,
                results: Object.fromEntries(metricsOf(spec).map((m) => [m, asResult(b.expect[m].result)])),
                phases: Object.fromEntries(metricsOf(spec).map((m) => [m, b.expect[m].phase])),
                promtool: { group: b.name, metric: metricsOf(spec)[0], expected: b.expect[metricsOf(spec)[0]].result, labels: BUDGET_SERIES },
            });
        }
    }
    for (const f of samples.freezes) {
        gates.push({
            name: `the freeze every ${f.recheckInterval} for ${f.maxFreeze}`,
            template: errorBudgetWaitTemplateSpec({ ...ERROR_BUDGET_DEFAULTS, ...f }, ADDRESS, "tenant"),
            args: args.budget,
            results: { "slo-found": ["0"], "error-budget-remaining": ["0"] },
            phases: { "slo-found": "Successful", "error-budget-remaining": "Inconclusive" },
        });
    }
    // The conditions alone: the finite template (or the budget template) holding the metric.
    for (const c of samples.conditions) {
        const shared = sharedTemplates(ANALYSIS_DEFAULTS).find((t) => t.runs === "finite" && t.metric === c.metric);
        const spec = shared
            ? clusterAnalysisTemplateSpec(shared, ANALYSIS_DEFAULTS, ADDRESS, "tenant")
            : budgetTemplates.find((b) => metricsOf(b.spec).includes(c.metric))?.spec;
        if (!spec) {
            throw new Error(`${c.name}: no shipped template has the metric ${c.metric}`);
        }
        gates.push({
            name: c.name,
            template: spec,
            args: shared ? args.gate : args.budget,
            results: Object.fromEntries(metricsOf(spec).map((m) => [m, m === c.metric ? asResult(c.result) : ["1"]])),
            phases: { [c.metric]: c.phase },
        });
    }
    return { gates, groups };
}

/** rollouts-evaluate's input: each gate with the Rollout that passes its arguments. */
export function evaluateInput(run: GateRun): unknown[] {
    const rollout = { name: APP.name, namespace: APP.namespace, podTemplateHash: CANARY_HASH };
    return run.gates.map((g) => ({ name: g.name, rollout, args: g.args, template: g.template, results: g.results }));
}

/** The promtool test file: each gate's query as Argo Rollouts resolved it, over its case's series. */
export function promtoolFile(run: GateRun, measured: Measured[]): string {
    const tests = [...run.groups].map(([name, g]) => ({
        name,
        interval: g.interval,
        input_series: g.series,
        promql_expr_test: run.gates
            .filter((x) => x.promtool?.group === name)
            .map((x) => {
                const m = measured.find((y) => y.case === x.name && y.metric === x.promtool!.metric);
                if (!m) {
                    throw new Error(`${x.name}: rollouts-evaluate did not resolve ${x.promtool!.metric}`);
                }
                return { expr: m.query, eval_time: g.evalTime, exp_samples: x.promtool!.expected.map((value) => ({ labels: x.promtool!.labels, value })) };
            }),
    }));
    // fuzzy_compare: a value may differ from the data in its last bit (promtool test rules, unittest.go).
    return YAML.stringify({ fuzzy_compare: true, tests }, { aliasDuplicateObjects: false });
}

export interface Measured {
    case: string;
    metric: string;
    query: string;
    phase: string;
    value: string;
    message?: string;
}

/** Where rollouts-evaluate's phases differ from the data's, or a gate was not measured. */
export function phaseProblems(run: GateRun, measured: Measured[]): string[] {
    const problems: string[] = [];
    for (const g of run.gates) {
        for (const [metric, want] of Object.entries(g.phases)) {
            const m = measured.find((x) => x.case === g.name && x.metric === metric);
            if (!m) {
                problems.push(`${g.name} / ${metric}: not measured`);
            } else if (m.phase !== want) {
                problems.push(
                    `${g.name} / ${metric}: Argo Rollouts measured ${m.value} as ${m.phase}${m.message ? ` (${m.message})` : ""}, the samples say ${want}`,
                );
            }
        }
    }
    return problems;
}
