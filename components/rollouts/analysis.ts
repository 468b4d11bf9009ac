import { ANALYSIS_DEFAULTS, AnalysisConfig, ERROR_BUDGET_ARGS, ErrorBudgetConfig, durationSeconds } from "./config";
import { TENANT_HEADER } from "../mimir";
import { ERROR_BUDGET, ERROR_BUDGET_WAIT, LATENCY_P99, LATENCY_P99_FINITE, SUCCESS_RATE, SUCCESS_RATE_FINITE, TEMPLATE_NAME_PREFIX } from "../argoRollouts";

/**
 * The platform's shared analysis templates (ADR-056 D5): Beyla RED metrics of the new version's
 * ReplicaSet, read from Mimir with this cluster's tenant. Every PromQL string is built here.
 */

/** The Beyla RED request counter and histogram (grafana/beyla, v3.x metric names). */
export const BEYLA_REQUESTS = "http_server_request_duration_seconds_count";
export const BEYLA_DURATION_BUCKETS = "http_server_request_duration_seconds_bucket";

/** A template's short name, for its Pulumi resource name (URNs stay short and stable). */
export function templateShortName(name: string): string {
    return name.startsWith(TEMPLATE_NAME_PREFIX) ? name.slice(TEMPLATE_NAME_PREFIX.length) : name;
}

/**
 * The arguments every shared metric template takes. A Rollout passes them as:
 *   namespace   <- valueFrom.fieldRef.fieldPath: metadata.namespace
 *   rollout     <- valueFrom.fieldRef.fieldPath: metadata.name
 *   canary-hash <- valueFrom.podTemplateHashValue: Latest
 * `Latest` is the hash of the Rollout's newest ReplicaSet (utils/analysis/factory.go,
 * BuildArgumentsForRolloutAnalysisRun): the canary, or in blue/green the version being promoted,
 * before and after the active Service switches to it.
 */
export const TEMPLATE_ARGS = ["namespace", "rollout", "canary-hash"] as const;

/** A placeholder Argo Rollouts substitutes with an analysis argument. */
export function arg(name: (typeof TEMPLATE_ARGS)[number]): string {
    return `{{args.${name}}}`;
}

/**
 * Escapes a PromQL label value for a double-quoted string: backslash, double quote and line
 * breaks, so an argument can never close the string and change the query.
 */
export function escapeLabelValue(value: string): string {
    return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\r/g, "\\r");
}

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export type LabelMatcher = { name: string; op: "=" | "!=" | "=~" | "!~"; value: string };

/** A PromQL selector body `{a="x",b!~"y"}` with every value escaped. */
export function selector(matchers: LabelMatcher[]): string {
    for (const m of matchers) {
        if (!LABEL_NAME.test(m.name)) {
            throw new Error(`not a Prometheus label name: ${m.name}`);
        }
    }
    return `{${matchers.map((m) => `${m.name}${m.op}"${escapeLabelValue(m.value)}"`).join(",")}}`;
}

/**
 * The new version's series. Beyla labels a pod's series with its owning ReplicaSet
 * (`k8s_replicaset_name`, from the pod's ownerReferences: go.opentelemetry.io/obi
 * pkg/kube/kubecache/meta/types.go and pkg/transform/k8s.go, vendored by grafana/beyla; pod labels
 * are not exported), and Argo Rollouts names a ReplicaSet `<rollout>-<pod template hash>`
 * (rollout/sync.go). So the ReplicaSet of the Latest hash is exactly the new version's pods.
 */
export function canaryMatchers(namespace: string, rollout: string, canaryHash: string, excludeRoutes: readonly string[] = []): LabelMatcher[] {
    return [
        { name: "k8s_namespace_name", op: "=", value: namespace },
        { name: "k8s_replicaset_name", op: "=", value: `${rollout}-${canaryHash}` },
        ...excludedRoutes(excludeRoutes),
    ];
}

/** Beyla's route label (OpenTelemetry's `http.route`, go.opentelemetry.io/obi pkg/export/attributes/names/attrs.go). */
export const BEYLA_ROUTE_LABEL = "http_route";

/** `s` as a regular expression that matches exactly `s` (RE2 and JavaScript agree on these escapes). */
export function literalRegex(s: string): string {
    return s.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
}

/**
 * The matcher that leaves out the requests of `routes` (the kubelet's probes by default): a
 * negative regex over the exact routes. A series without `http_route` (a Beyla without routes)
 * reads as the empty string and is kept (Prometheus model/labels/matcher.go: a missing label
 * matches as ""), so the gates still count everything where no route is reported. Nothing to
 * exclude adds no matcher.
 */
export function excludedRoutes(routes: readonly string[]): LabelMatcher[] {
    return routes.length === 0 ? [] : [{ name: BEYLA_ROUTE_LABEL, op: "!~", value: routes.map(literalRegex).join("|") }];
}

/**
 * The requests the matched pods served in `window`, kept only when there are at least
 * `minRequests`: a comparison without `bool` drops the sample, so a low-traffic window is an empty
 * vector (Inconclusive) instead of a ratio over a handful of requests.
 */
export function servedAtLeast(matchers: LabelMatcher[], window: string, minRequests: number): string {
    return `sum(increase(${BEYLA_REQUESTS}${selector(matchers)}[${window}])) >= ${minRequests}`;
}

/**
 * Share of the new version's requests that were not 5xx over `window`, from `minRequests` requests on.
 *
 * - no traffic: Beyla creates a series only once a request was observed (an expiring vector,
 *   go.opentelemetry.io/obi pkg/export/prom/prom.go), so there is nothing to select; `sum` over
 *   nothing is an empty vector, and so is the quotient: Inconclusive.
 * - fewer than `minRequests` requests: the denominator's comparison drops it: empty, Inconclusive.
 * - every request a 5xx: the numerator selects nothing and would be empty too, which the guard
 *   would read as "no data" and pause instead of abort. `or vector(0)` turns it into 0: `sum`
 *   without `by` yields one sample with no labels, `vector(0)` is one sample with no labels
 *   (promql/functions.go, funcVector), so `or` adds it only when the sum is empty, and the
 *   division matches it one-to-one with the denominator's label-less sample: 0 / N = 0, Failed.
 * - healthy: a ratio near 1, Successful.
 * `increase` is `rate` times the window for each series (promql/functions.go, extrapolatedRate), so
 * the ratio equals the ratio of rates, and the floor reads in requests.
 */
export function successRateQuery(matchers: LabelMatcher[], window: string, minRequests: number): string {
    const ok = selector([...matchers, { name: "http_response_status_code", op: "!~", value: "5.." }]);
    return `(sum(increase(${BEYLA_REQUESTS}${ok}[${window}])) or vector(0)) / (${servedAtLeast(matchers, window, minRequests)})`;
}

/**
 * The new version's p99 request duration in seconds over `window`, from `minRequests` requests on.
 * `histogram_quantile` is NaN over buckets that saw nothing (promql/quantile.go, BucketQuantile),
 * and empty without series, both Inconclusive under the guard; with a few requests the p99 is the
 * slowest of them, so the same floor as the success rate applies (`and on()` keeps the quantile
 * only when the label-less request count survived its comparison). A version slower than the
 * highest finite bucket reads as that bucket's bound, which is why the threshold must stay below it
 * (config.ts: BEYLA_HIGHEST_FINITE_BUCKET_SECONDS).
 */
export function latencyP99Query(matchers: LabelMatcher[], window: string, minRequests: number): string {
    const quantile = `histogram_quantile(0.99, sum by (le) (rate(${BEYLA_DURATION_BUCKETS}${selector(matchers)}[${window}])))`;
    return `${quantile} and on() (${servedAtLeast(matchers, window, minRequests)})`;
}

/**
 * Success and failure conditions that leave "no data" Inconclusive. Argo Rollouts evaluates each
 * with `result` bound to the vector's values as a list of floats (metricproviders/prometheus
 * prometheus.go, processResponse; utils/evaluate/evaluate.go, EvalCondition): with both conditions
 * set and neither true the measurement is Inconclusive and the rollout pauses for a human; with a
 * success condition alone NaN would be Failed, and `result[0]` on an empty list is an evaluation
 * error (an Error measurement). `&&` short-circuits in expr (compiler.go, OpJumpIfFalse), so the
 * index is only reached when there is a value. True only when the query returned a number: an
 * empty vector or NaN satisfies no condition.
 */
export const HAS_VALUE = "len(result) > 0 && !isNaN(result[0])";

export function guardedConditions(direction: "atLeast" | "atMost", threshold: number): { successCondition: string; failureCondition: string } {
    const [good, bad] = direction === "atLeast" ? [">=", "<"] : ["<=", ">"];
    return {
        successCondition: `${HAS_VALUE} && result[0] ${good} ${threshold}`,
        failureCondition: `${HAS_VALUE} && result[0] ${bad} ${threshold}`,
    };
}

export interface SharedTemplate {
    name: string;
    metric: string;
    query: string;
    successCondition: string;
    failureCondition: string;
    /**
     * `background`: measures every `interval` until the rollout ends (canary `analysis` only);
     * `finite`: `analysis.count` measurements, for pre/post-promotion and step analysis.
     */
    runs: "background" | "finite";
}

/** The shared metric templates with their thresholds from config, each as background and finite. */
export function sharedTemplates(analysis: AnalysisConfig): SharedTemplate[] {
    const target = canaryMatchers(arg("namespace"), arg("rollout"), arg("canary-hash"), analysis.excludeRoutes);
    const gates = [
        {
            names: [SUCCESS_RATE, SUCCESS_RATE_FINITE],
            metric: "success-rate",
            query: successRateQuery(target, analysis.rateWindow, analysis.minRequests),
            ...guardedConditions("atLeast", analysis.successRate),
        },
        {
            names: [LATENCY_P99, LATENCY_P99_FINITE],
            metric: "latency-p99",
            query: latencyP99Query(target, analysis.rateWindow, analysis.minRequests),
            ...guardedConditions("atMost", analysis.latencyP99Seconds),
        },
    ];
    return gates.flatMap(({ names: [background, finite], ...gate }) => [
        { name: background, ...gate, runs: "background" as const },
        { name: finite, ...gate, runs: "finite" as const },
    ]);
}

/** The Prometheus provider against this cluster's Mimir read path, with its tenant. */
function prometheus(address: string, query: string, tenant: string): Record<string, unknown> {
    return { prometheus: { address, query, timeout: 30, headers: [{ key: TENANT_HEADER, value: tenant }] } };
}

/**
 * A ClusterAnalysisTemplate (referenced with `clusterScope: true`) using the Prometheus provider,
 * which runs inside the controller: a Job provider's pod is denied by the registry policy
 * (ADR-056 as-built). A finite template sets `count`, so its run ends Successful after `count`
 * measurements within the limits (analysis/analysis.go, assessMetricStatus).
 */
export function clusterAnalysisTemplateSpec(t: SharedTemplate, analysis: AnalysisConfig, address: string, tenant: string): Record<string, unknown> {
    return {
        args: TEMPLATE_ARGS.map((name) => ({ name })),
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

/** Arguments of the error-budget templates: the app's SLO as its Sloth rules label it (declared beside errorBudget.query, which may use only these). */
export { ERROR_BUDGET_ARGS } from "./config";

/**
 * The failure condition of the error-budget templates: never true. An exhausted budget says
 * nothing about the new version, so the freeze never fails one (a Failed run aborts the rollout,
 * which then stays Degraded until someone retries it, whatever the budget does). With both
 * conditions set, a measurement that meets neither is Inconclusive (argo-rollouts v1.9.0
 * utils/evaluate/evaluate.go, EvaluateResult); without a failure condition a false success
 * condition would be Failed. `false` is an expr boolean literal, which EvalCondition accepts.
 */
export const NEVER = "false";

type BudgetConfig = Pick<ErrorBudgetConfig, "query" | "minRemaining">;
type WaitConfig = BudgetConfig & Pick<ErrorBudgetConfig, "recheckInterval" | "maxFreeze">;

/** Budget left: the query returned a number above `minRemaining`. */
function budgetLeft(budget: BudgetConfig): string {
    return `${HAS_VALUE} && result[0] > ${budget.minRemaining}`;
}

/**
 * The error-budget check (ADR-056 D6), one measurement (`count: 1`, so it ends wherever it is
 * referenced), for blue/green's pre-promotion analysis. Budget left: Successful. Exhausted, or no
 * data (the team has not authored the SLO): Inconclusive, and an Inconclusive pre-promotion run
 * pauses the rollout before the switch (argo-rollouts v1.9.0 rollout/bluegreen.go and
 * rollout/analysis.go): `kubectl argo rollouts promote` starts a fresh pre-promotion run, which
 * checks the budget again. It does not wait in the run: a blue/green rollout that is not paused
 * times out after `progressDeadlineSeconds` without a change of its ReplicaSets or Services
 * (utils/conditions/conditions.go RolloutProgressing and RolloutTimedOut; rollout/sync.go
 * isIndefiniteStep counts only a pause for blue/green), and turns Degraded, or aborts with
 * `progressDeadlineAbort`. A Mimir outage is tolerated as long as for the metric gates.
 */
export function errorBudgetTemplateSpec(
    budget: BudgetConfig,
    address: string,
    tenant: string,
    analysis: Pick<AnalysisConfig, "consecutiveErrorLimit"> = ANALYSIS_DEFAULTS,
): Record<string, unknown> {
    return {
        args: ERROR_BUDGET_ARGS.map((name) => ({ name })),
        metrics: [
            {
                name: "error-budget-remaining",
                count: 1,
                failureLimit: 0,
                inconclusiveLimit: 0,
                consecutiveErrorLimit: analysis.consecutiveErrorLimit,
                successCondition: budgetLeft(budget),
                failureCondition: NEVER,
                provider: prometheus(address, budget.query, tenant),
            },
        ],
    };
}

/** Measurements of the waiting freeze: one now, then one every recheckInterval until maxFreeze. */
export function freezeMeasurements(budget: Pick<ErrorBudgetConfig, "recheckInterval" | "maxFreeze">): number {
    return Math.floor(durationSeconds(budget.maxFreeze) / durationSeconds(budget.recheckInterval)) + 1;
}

/**
 * The waiting error-budget freeze (ADR-056 D6: exhaustion freezes non-critical rollouts until the
 * budget recovers), the first step of a prod canary, before any traffic moves. Two metrics in one
 * run, which ends as soon as one metric is Inconclusive (utils/analysis/helpers.go, IsTerminating):
 *
 * - `slo-found`, one measurement: no data means the team has not authored the SLO, which no wait
 *   mends, so the run is Inconclusive at once and the rollout pauses for a human.
 * - `error-budget-remaining`, measured now and every `recheckInterval`, `consecutiveSuccessLimit: 1`:
 *   the first measurement with budget left ends the metric Successful (analysis/analysis.go,
 *   assessMetricStatus: ConsecutiveSuccessLimit Reached), and the canary goes on by itself. An
 *   exhausted budget is an Inconclusive measurement (NEVER fails), tolerated up to
 *   `inconclusiveLimit = count - 1`, so the last measurement decides: if the budget has not
 *   recovered by `maxFreeze` the run is Inconclusive and the rollout pauses for a human
 *   (`kubectl argo rollouts promote` starts the step's analysis again). Nothing ever aborts it.
 *   Argo Rollouts accepts the limits: count >= failureLimit + consecutiveSuccessLimit and
 *   count >= inconclusiveLimit (utils/analysis/factory.go, ValidateMetric), and a step analysis
 *   holds the rollout without a progress deadline (rollout/sync.go, isIndefiniteStep).
 */
export function errorBudgetWaitTemplateSpec(
    budget: WaitConfig,
    address: string,
    tenant: string,
    analysis: Pick<AnalysisConfig, "consecutiveErrorLimit"> = ANALYSIS_DEFAULTS,
): Record<string, unknown> {
    const count = freezeMeasurements(budget);
    const provider = prometheus(address, budget.query, tenant);
    return {
        args: ERROR_BUDGET_ARGS.map((name) => ({ name })),
        metrics: [
            {
                name: "slo-found",
                count: 1,
                failureLimit: 0,
                inconclusiveLimit: 0,
                consecutiveErrorLimit: analysis.consecutiveErrorLimit,
                successCondition: HAS_VALUE,
                failureCondition: NEVER,
                provider,
            },
            {
                name: "error-budget-remaining",
                interval: budget.recheckInterval,
                count,
                consecutiveSuccessLimit: 1,
                failureLimit: 0,
                inconclusiveLimit: count - 1,
                consecutiveErrorLimit: analysis.consecutiveErrorLimit,
                successCondition: budgetLeft(budget),
                failureCondition: NEVER,
                provider,
            },
        ],
    };
}

/** One error-budget template by name, for an address and tenant. */
export interface BudgetTemplate {
    name: string;
    spec(address: string, tenant: string): Record<string, unknown>;
}

/** The error-budget templates a cluster declares: the check (blue/green) and the waiting freeze (canary). */
export function errorBudgetTemplates(budget: ErrorBudgetConfig, analysis: Pick<AnalysisConfig, "consecutiveErrorLimit"> = ANALYSIS_DEFAULTS): BudgetTemplate[] {
    return [
        { name: ERROR_BUDGET, spec: (address, tenant) => errorBudgetTemplateSpec(budget, address, tenant, analysis) },
        { name: ERROR_BUDGET_WAIT, spec: (address, tenant) => errorBudgetWaitTemplateSpec(budget, address, tenant, analysis) },
    ];
}
