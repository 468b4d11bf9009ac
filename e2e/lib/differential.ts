/**
 * The gates' restated models against the real engines: the same Beyla samples, at the same
 * times, go into the real Prometheus and into the PromQL model of the unit tests
 * (test/gateModel.ts), and each shared template's query must give the same vector and the same
 * measurement phase in both. A disagreement is a defect of the model or of the program: the
 * scenario names the case, the query, and both answers.
 */
import { BEYLA_BOUNDS, PromServer, request } from "./metrics";
import { BEYLA_DURATION_BUCKETS, BEYLA_REQUESTS, SharedTemplate } from "../../components/rollouts/analysis";
import { MeasurementPhase, Series, evaluatePromQL, measurementPhase, metricPhase } from "../../test/gateModel";
import type { AnalysisRunView } from "./delivery";

/** Requests of one status code per second, at one latency, from `from` seconds before the instant on. */
interface Flow {
    status: number;
    perSecond: number;
    latencySeconds: number;
    /** Beyla's `http.route`; none for a Beyla that reports no routes. */
    route?: string;
}

export interface GateCase {
    name: string;
    flows: Flow[];
    /** Sample times, seconds relative to the evaluation instant (a scrape every 5 s by default). */
    times: number[];
}

const EVERY_5S_OVER_20S = [-18, -13, -8, -3];

/** The cases of the unit tests' gate table, plus the edges only extrapolation decides. */
export function gateCases(minRequests: number): GateCase[] {
    return [
        { name: "healthy", flows: [{ status: 200, perSecond: 10, latencySeconds: 0.02 }], times: EVERY_5S_OVER_20S },
        {
            name: "half the requests 5xx",
            flows: [
                { status: 200, perSecond: 5, latencySeconds: 0.02 },
                { status: 503, perSecond: 5, latencySeconds: 0.02 },
            ],
            times: EVERY_5S_OVER_20S,
        },
        { name: "every request a 5xx", flows: [{ status: 503, perSecond: 10, latencySeconds: 0.02 }], times: EVERY_5S_OVER_20S },
        { name: "no series", flows: [], times: EVERY_5S_OVER_20S },
        { name: "a trickle far below the floor", flows: [{ status: 200, perSecond: 1, latencySeconds: 0.02 }], times: EVERY_5S_OVER_20S },
        // Raw delta over the sampled 15 s just under the floor; extrapolated to the window, over it.
        {
            name: "just under the floor before extrapolation",
            flows: [{ status: 200, perSecond: (minRequests - 5) / 15, latencySeconds: 0.02 }],
            times: EVERY_5S_OVER_20S,
        },
        { name: "a series that appeared mid-window", flows: [{ status: 200, perSecond: 10, latencySeconds: 0.02 }], times: [-7, -2] },
        { name: "one sample in the window", flows: [{ status: 503, perSecond: 10, latencySeconds: 0.02 }], times: [-2] },
        { name: "slower than the highest bucket", flows: [{ status: 200, perSecond: 10, latencySeconds: 30 }], times: EVERY_5S_OVER_20S },
        // The kubelet's probes (analysis.excludeRoutes) never count; other routes, and series
        // without a route, always do.
        {
            name: "only probes",
            flows: [
                { status: 200, perSecond: 10, latencySeconds: 0.001, route: "/healthz" },
                { status: 200, perSecond: 10, latencySeconds: 0.001, route: "/readyz" },
            ],
            times: EVERY_5S_OVER_20S,
        },
        {
            name: "errors among many probes",
            flows: [
                { status: 503, perSecond: 4, latencySeconds: 0.02, route: "/api/orders" },
                { status: 200, perSecond: 2, latencySeconds: 0.02, route: "/api/orders" },
                { status: 200, perSecond: 40, latencySeconds: 0.001, route: "/livez" },
            ],
            times: EVERY_5S_OVER_20S,
        },
        {
            name: "a route that only starts like a probe",
            flows: [{ status: 200, perSecond: 10, latencySeconds: 0.02, route: "/healthz/deep" }],
            times: EVERY_5S_OVER_20S,
        },
    ];
}

interface Point {
    t: number;
    count: number;
    buckets: number[];
    sum: number;
}

/** Cumulative counts of one flow at each sample time (the counter started long before the window). */
function points(flow: Flow, times: number[]): Point[] {
    const base = 1000;
    const bucket = BEYLA_BOUNDS.findIndex((b) => flow.latencySeconds <= b);
    return times.map((t) => {
        const count = Math.round(base + flow.perSecond * (t + 60));
        const buckets = new Array(BEYLA_BOUNDS.length + 1).fill(0);
        buckets[bucket === -1 ? BEYLA_BOUNDS.length : bucket] = count;
        return { t, count, buckets, sum: count * flow.latencySeconds };
    });
}

/** The model's series for a case: the counter and every cumulative bucket (`le`), per status code. */
export function modelSeries(c: GateCase, labels: Record<string, string>): Series[] {
    const out: Series[] = [];
    for (const flow of c.flows) {
        const ps = points(flow, c.times);
        const code = { ...labels, http_response_status_code: String(flow.status), ...(flow.route ? { http_route: flow.route } : {}) };
        out.push({ labels: { __name__: BEYLA_REQUESTS, ...code }, samples: ps.map((p) => p.count), times: c.times });
        [...BEYLA_BOUNDS.map(String), "+Inf"].forEach((le, i) => {
            const cumulative = ps.map((p) => p.buckets.slice(0, i + 1).reduce((a, b) => a + b, 0));
            out.push({
                labels: { __name__: BEYLA_DURATION_BUCKETS, ...code, le },
                samples: i === BEYLA_BOUNDS.length ? ps.map((p) => p.count) : cumulative,
                times: c.times,
            });
        });
    }
    return out;
}

/** Pushes a case's samples at their times (instant `at`, ms) through the OTLP receiver. */
export async function pushCase(prom: PromServer, c: GateCase, attrs: { namespace: string; replicaSet: string }, at: number): Promise<void> {
    if (c.flows.length === 0) {
        return;
    }
    const attr = (key: string, value: string | number) => ({ key, value: typeof value === "number" ? { intValue: String(value) } : { stringValue: value } });
    const ns = (ms: number) => String(BigInt(Math.round(ms)) * 1_000_000n);
    const dataPoints = c.flows.flatMap((flow) =>
        points(flow, c.times).map((p) => ({
            attributes: [
                attr("k8s.namespace.name", attrs.namespace),
                attr("k8s.replicaset.name", attrs.replicaSet),
                attr("http.response.status.code", flow.status),
                ...(flow.route ? [attr("http.route", flow.route)] : []),
            ],
            startTimeUnixNano: ns(at - 3600_000),
            timeUnixNano: ns(at + p.t * 1000),
            count: String(p.count),
            sum: p.sum,
            bucketCounts: p.buckets.map(String),
            explicitBounds: BEYLA_BOUNDS,
        })),
    );
    const body = JSON.stringify({
        resourceMetrics: [
            {
                resource: { attributes: [attr("service.name", "beyla-e2e")] },
                scopeMetrics: [
                    {
                        scope: { name: "argo-rollouts-addon-e2e" },
                        metrics: [{ name: "http.server.request.duration", unit: "s", histogram: { aggregationTemporality: 2, dataPoints } }],
                    },
                ],
            },
        ],
    });
    const r = await request(`${prom.url}/api/v1/otlp/v1/metrics`, { method: "POST", headers: { "content-type": "application/json" }, body });
    if (r.status !== 200) {
        throw new Error(`the OTLP push of "${c.name}" was refused: ${r.status} ${r.body}`);
    }
}

/** Prometheus' answer to an instant query at `at` (ms), as Argo Rollouts reads it: the vector's values. */
export async function promValues(prom: PromServer, query: string, at: number): Promise<number[]> {
    const url = `${prom.url}/api/v1/query?${new URLSearchParams({ query, time: String(at / 1000) })}`;
    const r = await request(url);
    const body = JSON.parse(r.body) as { status: string; error?: string; data?: { resultType: string; result: { value: [number, string] }[] } };
    if (body.status !== "success" || !body.data) {
        throw new Error(`Prometheus refused ${query}: ${body.error ?? r.body}`);
    }
    if (body.data.resultType !== "vector") {
        throw new Error(`Prometheus answered a ${body.data.resultType}, not a vector: ${query}`);
    }
    return body.data.result.map((s) => Number(s.value[1]));
}

/** `{{args.x}}` replaced as Argo Rollouts resolves a template's arguments. */
export function substituteArgs(query: string, args: Record<string, string>): string {
    return query.replace(/\{\{\s*args\.([\w-]+)\s*\}\}/g, (_, name: string) => {
        if (args[name] === undefined) {
            throw new Error(`args.${name} was not resolved`);
        }
        return args[name];
    });
}

export interface Disagreement {
    gate: string;
    case: string;
    query: string;
    prometheus: number[];
    model: number[];
    phases: [string, string];
}

const close = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/** Compares one template's answer on one case; undefined when the engine and the model agree. */
export function compare(t: SharedTemplate, c: GateCase, query: string, prometheus: number[], model: number[]): Disagreement | undefined {
    const phases: [string, string] = [measurementPhase(t, prometheus), measurementPhase(t, model)];
    const same = prometheus.length === model.length && prometheus.every((v, i) => close(v, model[i])) && phases[0] === phases[1];
    return same ? undefined : { gate: t.metric, case: c.name, query, prometheus, model, phases };
}

/**
 * Where the real controller's verdicts on a run differ from the unit tests' model of Argo
 * Rollouts (test/gateModel.ts: measurementPhase for each measurement from its recorded value,
 * metricPhase for the metric from its measurements and limits). A run the controller terminated
 * (a background gate after the promotion it gated) ends Successful where the model, which only
 * counts measurements, still says Running; that is the one difference allowed.
 */
export function runDisagreements(run: AnalysisRunView): string[] {
    const out: string[] = [];
    for (const result of run.status?.metricResults ?? []) {
        const metric = run.spec?.metrics?.find((m) => m.name === result.name);
        if (!metric) {
            out.push(`${run.metadata.name}/${result.name}: no such metric in the run's spec`);
            continue;
        }
        const phases: MeasurementPhase[] = [];
        for (const m of result.measurements ?? []) {
            if (m.phase === "Running" || m.phase === "Pending") {
                continue;
            }
            phases.push(m.phase as MeasurementPhase);
            if (m.value === undefined || m.phase === "Error") {
                continue;
            }
            // The controller records a vector as "[v1,v2]" (metricproviders/prometheus/prometheus.go
            // sampleValuesToResultStr at v1.9.0): "[1]", "[]", "[NaN]".
            const value = m.value
                .replace(/^\[|\]$/g, "")
                .split(/[ ,]+/)
                .filter((x) => x !== "")
                .map(Number);
            const model = measurementPhase(metric, value);
            if (model !== m.phase) {
                out.push(`${run.metadata.name}/${result.name}: value ${m.value} measured ${m.phase} by the controller, ${model} by the model`);
            }
        }
        const model = metricPhase(metric, phases);
        // A run terminates when it is told to or when any metric ended Failed, Error or
        // Inconclusive (utils/analysis/helpers.go IsTerminating, v1.9.0); a metric still running
        // then ends Successful (analysis/analysis.go assessMetricStatus).
        const terminating =
            run.spec?.terminate === true ||
            (run.status?.metricResults ?? []).some((r) => r.name !== result.name && ["Failed", "Error", "Inconclusive"].includes(r.phase ?? ""));
        const terminated = terminating && model === "Running" && result.phase === "Successful";
        if (model !== result.phase && !terminated && !(model === "Running" && run.status?.phase === "Running")) {
            out.push(`${run.metadata.name}/${result.name}: ${JSON.stringify(phases)} are ${result.phase} for the controller, ${model} for the model`);
        }
    }
    return out;
}

export { evaluatePromQL };
