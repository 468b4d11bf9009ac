import { AnalysisConfig } from "../config";
import { TENANT_HEADER } from "../mimir";

/**
 * The platform's shared analysis templates (ADR-056 D5): Beyla RED metrics of the canary
 * ReplicaSet, read from Mimir with this cluster's tenant. Every PromQL string is built here.
 */

/** The Beyla RED request counter and histogram (grafana/beyla, v3.x metric names). */
export const BEYLA_REQUESTS = "http_server_request_duration_seconds_count";
export const BEYLA_DURATION_BUCKETS = "http_server_request_duration_seconds_bucket";

/**
 * The arguments every shared template takes. A Rollout passes them as:
 *   namespace   <- valueFrom.fieldRef.fieldPath: metadata.namespace
 *   rollout     <- valueFrom.fieldRef.fieldPath: metadata.name
 *   canary-hash <- valueFrom.podTemplateHashValue: Latest
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
 * The canary's series. For a Rollout pod Beyla reports `k8s_replicaset_name` as
 * `<rollout>-<rollouts-pod-template-hash>` (pod labels are not exported), so the canary is the
 * ReplicaSet of the Latest pod template hash.
 */
export function canaryMatchers(namespace: string, rollout: string, canaryHash: string): LabelMatcher[] {
    return [
        { name: "k8s_namespace_name", op: "=", value: namespace },
        { name: "k8s_replicaset_name", op: "=", value: `${rollout}-${canaryHash}` },
    ];
}

/** Share of the canary's requests that were not 5xx over `window`. NaN when it served nothing. */
export function successRateQuery(matchers: LabelMatcher[], window: string): string {
    const ok = selector([...matchers, { name: "http_response_status_code", op: "!~", value: "5.." }]);
    const all = selector(matchers);
    return `sum(rate(${BEYLA_REQUESTS}${ok}[${window}])) / sum(rate(${BEYLA_REQUESTS}${all}[${window}]))`;
}

/** The canary's p99 request duration in seconds over `window`. NaN when it served nothing. */
export function latencyP99Query(matchers: LabelMatcher[], window: string): string {
    return `histogram_quantile(0.99, sum by (le) (rate(${BEYLA_DURATION_BUCKETS}${selector(matchers)}[${window}])))`;
}

/**
 * Success and failure conditions that leave "no data" Inconclusive. With both conditions set and
 * neither true, Argo Rollouts marks the measurement Inconclusive and pauses for a human; with a
 * success condition alone NaN would be Failed and `result[0]` on an empty vector an Error, and a
 * healthy canary that simply had no traffic yet would be rolled back (design.md §2, Analysis).
 */
/** True only when the query returned a number: an empty vector or NaN satisfies no condition. */
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
}

/** The shared templates with their thresholds from config. */
export function sharedTemplates(analysis: AnalysisConfig): SharedTemplate[] {
    const canary = canaryMatchers(arg("namespace"), arg("rollout"), arg("canary-hash"));
    return [
        {
            name: "success-rate",
            metric: "success-rate",
            query: successRateQuery(canary, analysis.rateWindow),
            ...guardedConditions("atLeast", analysis.successRate),
        },
        {
            name: "latency-p99",
            metric: "latency-p99",
            query: latencyP99Query(canary, analysis.rateWindow),
            ...guardedConditions("atMost", analysis.latencyP99Seconds),
        },
    ];
}

/**
 * A ClusterAnalysisTemplate (referenced with `clusterScope: true`) using the Prometheus provider,
 * which runs inside the controller: a Job provider's pod is denied by the registry policy
 * (ADR-056 as-built).
 */
export function clusterAnalysisTemplateSpec(t: SharedTemplate, analysis: AnalysisConfig, address: string, tenant: string): Record<string, unknown> {
    return {
        args: TEMPLATE_ARGS.map((name) => ({ name })),
        metrics: [
            {
                name: t.metric,
                initialDelay: analysis.initialDelay,
                interval: analysis.interval,
                failureLimit: analysis.failureLimit,
                inconclusiveLimit: analysis.inconclusiveLimit,
                consecutiveErrorLimit: analysis.consecutiveErrorLimit,
                successCondition: t.successCondition,
                failureCondition: t.failureCondition,
                provider: {
                    prometheus: {
                        address,
                        query: t.query,
                        timeout: 30,
                        headers: [{ key: TENANT_HEADER, value: tenant }],
                    },
                },
            },
        ],
    };
}

/** Arguments of the error-budget template: the app's SLO as its Sloth rules label it. */
export const ERROR_BUDGET_ARGS = ["service", "slo"] as const;

/**
 * The error-budget freeze (ADR-056 D6): one measurement of the app's remaining budget before any
 * traffic moves. Exhausted fails the gate, so the rollout aborts until the budget recovers; no
 * data (the team has not authored the SLO) is Inconclusive and pauses for a human.
 */
export function errorBudgetTemplateSpec(budget: { query: string; minRemaining: number }, address: string, tenant: string): Record<string, unknown> {
    return {
        args: ERROR_BUDGET_ARGS.map((name) => ({ name })),
        metrics: [
            {
                name: "error-budget-remaining",
                count: 1,
                failureLimit: 0,
                inconclusiveLimit: 0,
                successCondition: `${HAS_VALUE} && result[0] > ${budget.minRemaining}`,
                failureCondition: `${HAS_VALUE} && result[0] <= ${budget.minRemaining}`,
                provider: { prometheus: { address, query: budget.query, timeout: 30, headers: [{ key: TENANT_HEADER, value: tenant }] } },
            },
        ],
    };
}
