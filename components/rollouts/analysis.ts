import { ERROR_BUDGET, ERROR_BUDGET_WAIT, LATENCY_P99, LATENCY_P99_FINITE, SUCCESS_RATE, SUCCESS_RATE_FINITE } from "../argoRollouts";
import { SHARED_TEMPLATE_ARGS } from "../argoRollouts";
import { TENANT_HEADER } from "../mimir";
import { ANALYSIS_DEFAULTS, AnalysisConfig, ERROR_BUDGET_ARGS, ErrorBudgetConfig, durationSeconds } from "./config";

/**
 * The platform's shared analysis templates (ADR-056 D5, D6): Beyla RED metrics of the new version's
 * ReplicaSet, read from Mimir with this cluster's tenant, and the error-budget freeze. Every PromQL
 * string is built here.
 */

/** The Beyla RED request counter and histogram (grafana/beyla v3.x), and its route label (OpenTelemetry's `http.route`). */
export const BEYLA_REQUESTS = "http_server_request_duration_seconds_count";
export const BEYLA_DURATION_BUCKETS = "http_server_request_duration_seconds_bucket";
export const BEYLA_ROUTE_LABEL = "http_route";

/** A placeholder Argo Rollouts replaces with one of the shared templates' arguments (argoRollouts.ts SHARED_TEMPLATE_ARGS). */
export const arg = (name: "namespace" | "rollout" | "canary-hash"): string => `{{args.${name}}}`;

/** Escapes a PromQL label value (backslash, quote, line breaks), so an argument can never close the string. */
export const escapeLabelValue = (value: string): string => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\r/g, "\\r");

export type LabelMatcher = { name: string; op: "=" | "!=" | "=~" | "!~"; value: string };

/** A PromQL selector body `{a="x",b!~"y"}` with every value escaped. */
export function selector(matchers: LabelMatcher[]): string {
    const bad = matchers.find((m) => !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(m.name));
    if (bad) throw new Error(`not a Prometheus label name: ${bad.name}`);
    return `{${matchers.map((m) => `${m.name}${m.op}"${escapeLabelValue(m.value)}"`).join(",")}}`;
}

/**
 * The new version's series: Beyla labels a pod's series with its owning ReplicaSet (pod labels are
 * not exported: go.opentelemetry.io/obi pkg/kube/kubecache/meta/types.go), and Argo Rollouts names a
 * ReplicaSet `<rollout>-<pod template hash>` (rollout/sync.go).
 */
export function canaryMatchers(namespace: string, rollout: string, canaryHash: string, excludeRoutes: readonly string[] = []): LabelMatcher[] {
    return [
        { name: "k8s_namespace_name", op: "=", value: namespace },
        { name: "k8s_replicaset_name", op: "=", value: `${rollout}-${canaryHash}` },
        ...excludedRoutes(excludeRoutes),
    ];
}

/**
 * Leaves out the requests of `routes` (the kubelet's probes by default) with a negative regex of the
 * exact routes (RE2 and JavaScript agree on these escapes). A series without `http_route` reads as ""
 * and is kept (Prometheus model/labels/matcher.go), so a Beyla without routes still counts everything.
 */
export function excludedRoutes(routes: readonly string[]): LabelMatcher[] {
    const literal = (s: string) => s.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
    return routes.length === 0 ? [] : [{ name: BEYLA_ROUTE_LABEL, op: "!~", value: routes.map(literal).join("|") }];
}

/** The requests served in `window`, kept only from `minRequests` on: a comparison without `bool` drops a low-traffic window (Inconclusive). */
const servedAtLeast = (matchers: LabelMatcher[], window: string, minRequests: number) =>
    `sum(increase(${BEYLA_REQUESTS}${selector(matchers)}[${window}])) >= ${minRequests}`;

/**
 * The share of the new version's requests that were not 5xx. No traffic or fewer than `minRequests`
 * requests is an empty vector (Beyla creates a series only once a request was seen), so Inconclusive;
 * when every request is a 5xx the numerator is empty too, and `or vector(0)` makes it 0 (both sides
 * are one label-less sample, promql/functions.go funcVector), so Failed instead of paused.
 */
export function successRateQuery(matchers: LabelMatcher[], window: string, minRequests: number): string {
    const ok = selector([...matchers, { name: "http_response_status_code", op: "!~", value: "5.." }]);
    return `(sum(increase(${BEYLA_REQUESTS}${ok}[${window}])) or vector(0)) / (${servedAtLeast(matchers, window, minRequests)})`;
}

/**
 * The new version's p99 in seconds, from `minRequests` requests on (`and on()` keeps it only when the
 * count survived). Buckets that saw nothing are NaN (promql/quantile.go), Inconclusive under the guard;
 * a p99 above the highest finite bucket reads as its bound (config/analysis.ts).
 */
export function latencyP99Query(matchers: LabelMatcher[], window: string, minRequests: number): string {
    const quantile = `histogram_quantile(0.99, sum by (le) (rate(${BEYLA_DURATION_BUCKETS}${selector(matchers)}[${window}])))`;
    return `${quantile} and on() (${servedAtLeast(matchers, window, minRequests)})`;
}

/**
 * True only when the query returned a number. Argo Rollouts binds `result` to the vector's values
 * (metricproviders/prometheus processResponse; utils/evaluate EvalCondition): with both conditions set
 * and neither true a measurement is Inconclusive, `result[0]` of an empty list is an Error, and `&&`
 * short-circuits, so an empty vector or NaN satisfies no condition.
 */
export const HAS_VALUE = "len(result) > 0 && !isNaN(result[0])";

export function guardedConditions(direction: "atLeast" | "atMost", threshold: number): { successCondition: string; failureCondition: string } {
    const [good, bad] = direction === "atLeast" ? [">=", "<"] : ["<=", ">"];
    return { successCondition: `${HAS_VALUE} && result[0] ${good} ${threshold}`, failureCondition: `${HAS_VALUE} && result[0] ${bad} ${threshold}` };
}

export interface SharedTemplate {
    name: string;
    metric: string;
    query: string;
    successCondition: string;
    failureCondition: string;
    /** `background`: until the rollout ends (canary `analysis` only); `finite`: `analysis.count` measurements. */
    runs: "background" | "finite";
}

/** The shared metric templates with their thresholds from config, each as background and finite. */
export function sharedTemplates(analysis: AnalysisConfig): SharedTemplate[] {
    const target = canaryMatchers(arg("namespace"), arg("rollout"), arg("canary-hash"), analysis.excludeRoutes);
    const { rateWindow: window, minRequests } = analysis;
    const gates = [
        [SUCCESS_RATE, SUCCESS_RATE_FINITE, "success-rate", successRateQuery(target, window, minRequests), guardedConditions("atLeast", analysis.successRate)],
        [LATENCY_P99, LATENCY_P99_FINITE, "latency-p99", latencyP99Query(target, window, minRequests), guardedConditions("atMost", analysis.latencyP99Seconds)],
    ] as const;
    return gates.flatMap(([background, finite, metric, query, conditions]) =>
        (
            [
                [background, "background"],
                [finite, "finite"],
            ] as const
        ).map(([name, runs]) => ({ name, metric, query, ...conditions, runs })),
    );
}

/** The Prometheus provider, which runs inside the controller (a Job provider's pod is denied by the registry policy, ADR-056 as-built). */
const prometheus = (address: string, query: string, tenant: string) => ({
    prometheus: { address, query, timeout: 30, headers: [{ key: TENANT_HEADER, value: tenant }] },
});

/** A ClusterAnalysisTemplate's spec (referenced with `clusterScope: true`); a finite one ends after `count` measurements. */
export function clusterAnalysisTemplateSpec(t: SharedTemplate, analysis: AnalysisConfig, address: string, tenant: string): Record<string, unknown> {
    return {
        args: SHARED_TEMPLATE_ARGS.map(({ name }) => ({ name })),
        metrics: [
            {
                name: t.metric,
                initialDelay: analysis.initialDelay,
                interval: analysis.interval,
                ...(t.runs === "finite" ? { count: analysis.count } : {}),
                failureLimit: analysis.failureLimit,
                inconclusiveLimit: analysis.inconclusiveLimit,
                consecutiveErrorLimit: analysis.consecutiveErrorLimit,
                successCondition: t.successCondition,
                failureCondition: t.failureCondition,
                provider: prometheus(address, t.query, tenant),
            },
        ],
    };
}

type BudgetConfig = Pick<ErrorBudgetConfig, "query" | "minRemaining">;
type Limits = Pick<AnalysisConfig, "consecutiveErrorLimit">;

/**
 * One error-budget metric. Its failure condition is never true: an exhausted budget says nothing about
 * the new version, and a Failed run would abort the rollout; with both conditions set, a measurement
 * that meets neither is Inconclusive (argo-rollouts v1.9.0 utils/evaluate EvaluateResult).
 */
const budgetMetric = (name: string, successCondition: string, provider: unknown, analysis: Limits, wait?: { interval: string; count: number }) => ({
    name,
    ...(wait ? { interval: wait.interval } : {}),
    count: wait?.count ?? 1,
    ...(wait ? { consecutiveSuccessLimit: 1 } : {}),
    failureLimit: 0,
    inconclusiveLimit: wait ? wait.count - 1 : 0,
    consecutiveErrorLimit: analysis.consecutiveErrorLimit,
    successCondition,
    failureCondition: "false",
    provider,
});

/**
 * The error-budget check (ADR-056 D6), blue/green's pre-promotion: one measurement; budget left is
 * Successful, exhausted or no SLO is Inconclusive, which pauses the rollout before the switch, and
 * `promote` checks again. It does not wait in the run: a blue/green rollout that is not paused times
 * out after `progressDeadlineSeconds` (utils/conditions/conditions.go; rollout/sync.go isIndefiniteStep).
 */
export function errorBudgetTemplateSpec(budget: BudgetConfig, address: string, tenant: string, analysis: Limits = ANALYSIS_DEFAULTS): Record<string, unknown> {
    const metric = budgetMetric(
        "error-budget-remaining",
        `${HAS_VALUE} && result[0] > ${budget.minRemaining}`,
        prometheus(address, budget.query, tenant),
        analysis,
    );
    return { args: ERROR_BUDGET_ARGS.map((name) => ({ name })), metrics: [metric] };
}

/** Measurements of the waiting freeze: one now, then one every recheckInterval until maxFreeze. */
export function freezeMeasurements(budget: Pick<ErrorBudgetConfig, "recheckInterval" | "maxFreeze">): number {
    return Math.floor(durationSeconds(budget.maxFreeze) / durationSeconds(budget.recheckInterval)) + 1;
}

/**
 * The waiting freeze (ADR-056 D6), a prod canary's first step: a run ends as soon as one metric is
 * Inconclusive (utils/analysis/helpers.go IsTerminating). `slo-found` is one measurement: no SLO is no
 * wait's to mend, so it pauses for a human at once. `error-budget-remaining` measures every
 * `recheckInterval`; the first with budget left ends it Successful (`consecutiveSuccessLimit: 1`) and the
 * canary goes on; each exhausted one is Inconclusive, tolerated up to `count - 1`, so after `maxFreeze`
 * it pauses for a human. Nothing aborts. The limits are what utils/analysis/factory.go ValidateMetric
 * accepts, and a step analysis holds the rollout without a progress deadline.
 */
export function errorBudgetWaitTemplateSpec(
    budget: BudgetConfig & Pick<ErrorBudgetConfig, "recheckInterval" | "maxFreeze">,
    address: string,
    tenant: string,
    analysis: Limits = ANALYSIS_DEFAULTS,
): Record<string, unknown> {
    const count = freezeMeasurements(budget);
    const provider = prometheus(address, budget.query, tenant);
    return {
        args: ERROR_BUDGET_ARGS.map((name) => ({ name })),
        metrics: [
            budgetMetric("slo-found", HAS_VALUE, provider, analysis),
            budgetMetric("error-budget-remaining", `${HAS_VALUE} && result[0] > ${budget.minRemaining}`, provider, analysis, {
                interval: budget.recheckInterval,
                count,
            }),
        ],
    };
}

/** The error-budget templates a cluster declares by name: the check (blue/green) and the waiting freeze (canary). */
export function errorBudgetTemplates(
    budget: ErrorBudgetConfig,
    analysis: Limits = ANALYSIS_DEFAULTS,
): { name: string; spec(address: string, tenant: string): Record<string, unknown> }[] {
    return [
        { name: ERROR_BUDGET, spec: (address, tenant) => errorBudgetTemplateSpec(budget, address, tenant, analysis) },
        { name: ERROR_BUDGET_WAIT, spec: (address, tenant) => errorBudgetWaitTemplateSpec(budget, address, tenant, analysis) },
    ];
}
