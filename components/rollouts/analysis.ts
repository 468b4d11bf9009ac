import { ANALYSIS_DEFAULTS, AnalysisConfig } from "./config";
import { TENANT_HEADER } from "../mimir";

/**
 * The platform's shared analysis templates (ADR-056 D5): Beyla RED metrics of the new version's
 * ReplicaSet, read from Mimir with this cluster's tenant. Every PromQL string is built here.
 */

/** The Beyla RED request counter and histogram (grafana/beyla, v3.x metric names). */
export const BEYLA_REQUESTS = "http_server_request_duration_seconds_count";
export const BEYLA_DURATION_BUCKETS = "http_server_request_duration_seconds_bucket";

/**
 * The prefix of every ClusterAnalysisTemplate the addon declares. A cluster that ran Argo Rollouts
 * before often has its own `success-rate` or `latency-p99`, with tenants' Rollouts passing it
 * their own args. The controller resolves a template's declared args from what the Rollout passes
 * and fails the run on a declared arg without a value ("args.<name> was not resolved"), while an
 * arg the template does not declare is ignored (argo-rollouts v1.9.0 utils/analysis/helpers.go,
 * MergeArgs and ResolveArgs): taking such a template over with this program's required args
 * (`namespace`, `rollout`, `canary-hash`) would send those Rollouts to InvalidSpec, rollbacks
 * included, and no default makes two arbitrary arg lists compatible. So the addon's templates have
 * names of their own and an existing template is never adopted: tenants move to these names at
 * their pace, and `npm run adopt-check` lists who still uses the old ones.
 */
export const TEMPLATE_NAME_PREFIX = "argo-rollouts-addon-";

/** A template's cluster name from its short name (the Pulumi resource is `analysis-<short name>`). */
export function templateName(short: string): string {
    return `${TEMPLATE_NAME_PREFIX}${short}`;
}

/** A template's short name, for its Pulumi resource name (URNs stay short and stable). */
export function templateShortName(name: string): string {
    return name.startsWith(TEMPLATE_NAME_PREFIX) ? name.slice(TEMPLATE_NAME_PREFIX.length) : name;
}

/**
 * The shared templates by name. Argo Rollouts v1.9.0 refuses a Rollout (InvalidSpec, "runs
 * indefinitely") whose pre-promotion, post-promotion or step analysis references a metric with an
 * `interval` and no `count` (pkg/apis/rollouts/validation/validation_references.go,
 * ValidateAnalysisTemplateWithType, using Metric.EffectiveCount in
 * pkg/apis/rollouts/v1alpha1/analysis_types.go); only canary background analysis may run until
 * the rollout ends. So each gate comes twice: the background template, and a finite one that
 * takes `analysis.count` measurements.
 */
export const SUCCESS_RATE = templateName("success-rate");
export const SUCCESS_RATE_FINITE = templateName("success-rate-finite");
export const LATENCY_P99 = templateName("latency-p99");
export const LATENCY_P99_FINITE = templateName("latency-p99-finite");
export const ERROR_BUDGET = templateName("error-budget");

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
export function canaryMatchers(namespace: string, rollout: string, canaryHash: string): LabelMatcher[] {
    return [
        { name: "k8s_namespace_name", op: "=", value: namespace },
        { name: "k8s_replicaset_name", op: "=", value: `${rollout}-${canaryHash}` },
    ];
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
    const target = canaryMatchers(arg("namespace"), arg("rollout"), arg("canary-hash"));
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

/** Arguments of the error-budget template: the app's SLO as its Sloth rules label it. */
export const ERROR_BUDGET_ARGS = ["service", "slo"] as const;

/**
 * The error-budget freeze (ADR-056 D6): one measurement (`count: 1`, so it terminates wherever it
 * is referenced) of the app's remaining budget before any traffic moves. Exhausted fails the gate,
 * so the rollout aborts until the budget recovers; no data (the team has not authored the SLO) is
 * Inconclusive and pauses for a human. A Mimir outage is tolerated as long as for the metric gates.
 */
export function errorBudgetTemplateSpec(
    budget: { query: string; minRemaining: number },
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
                successCondition: `${HAS_VALUE} && result[0] > ${budget.minRemaining}`,
                failureCondition: `${HAS_VALUE} && result[0] <= ${budget.minRemaining}`,
                provider: prometheus(address, budget.query, tenant),
            },
        ],
    };
}
