import { defaultsOf, field, readSection, type Values } from "../../config/declare";
import { ConfigReader, HTTPS_URL, SecretValue } from "../../config/reader";
import { promqlSyntaxErrors, promqlUnjudgedType, withArgsResolved } from "../promql";
import { DURATION_RULE as DUR, INT32_MAX, SLACK_CHANNEL, durationSeconds } from "./patterns";

/** The `errorBudget` and `notifications` sections (ADR-056 D6): the error-budget gate's query and timing, the notification service and its token. */

/** The app's remaining error budget (`query`, a ratio: 1 untouched, 0 exhausted), when it counts as exhausted, and the freeze's timing. */
export type ErrorBudgetConfig = Values<typeof ERROR_BUDGET_FIELDS>;

/** Sloth's metadata rule for the remaining budget over the SLO period (slok/sloth conventions). */
export const SLOTH_REMAINING_BUDGET = 'slo:period_error_budget_remaining:ratio{sloth_service="{{args.service}}",sloth_slo="{{args.slo}}"}';

/** The arguments the error budget templates declare (analysis.ts): a query may use these alone. */
export const ERROR_BUDGET_ARGS = ["service", "slo"] as const;

/** `{{ args.<name> }}` as Argo Rollouts trims it (v1.9.0 utils/template/template.go resolve); an undeclared name fails every measurement. */
const ARG_TAG = /\{\{\s*args\.([^\s}]*)\s*\}\}/g;
const usedArgs = (query: string): string[] => [...query.matchAll(ARG_TAG)].map((m) => m[1]);

/** The `errorBudget` section: every key, once. */
export const ERROR_BUDGET_FIELDS = {
    query: field.string({
        rule: {
            valid: (q) => usedArgs(q).includes("service") && usedArgs(q).every((a) => (ERROR_BUDGET_ARGS as readonly string[]).includes(a)),
            describe:
                "PromQL naming the app's SLO through {{args.service}} (and {{args.slo}}; blanks inside the braces allowed), no other {{args.*}}: the template declares only service and slo",
        },
        default: SLOTH_REMAINING_BUDGET,
        defaultDoc: "Sloth's slo:period_error_budget_remaining:ratio for {{args.service}} and {{args.slo}}",
        doc: "PromQL for the app's remaining error budget as a ratio (1 untouched, 0 exhausted); must use {{args.service}} ({{ args.service }} alike) and no argument but service and slo; its result must be a scalar or an instant vector (Argo Rollouts' Prometheus provider, metricproviders/prometheus/prometheus.go processResponse, refuses a string and flattens a range vector into every raw sample)",
    }),
    minRemaining: field.number({
        min: 0,
        max: 0.99,
        default: 0,
        doc: "the budget counts as exhausted at or below this remaining ratio, and the rollout is frozen",
    }),
    recheckInterval: field.string({
        rule: DUR,
        default: "5m",
        doc: "canary: how often a frozen rollout's budget is measured again; it goes on by itself at the first measurement with budget left",
    }),
    maxFreeze: field.string({
        rule: DUR,
        default: "24h",
        doc: "canary: how long a rollout waits for its budget to recover before it pauses for a human; at least recheckInterval, and maxFreeze / recheckInterval + 1 (the freeze's measurement count) at most 2147483647, Argo Rollouts' int32 count (pkg/apis/rollouts/v1alpha1 analysis_types.go)",
    }),
} as const;

export const ERROR_BUDGET_DEFAULTS: Readonly<ErrorBudgetConfig> = defaultsOf(ERROR_BUDGET_FIELDS);

/** The `notifications` section: every key, once. */
export const NOTIFICATIONS_FIELDS = {
    service: field.oneOf(["slack", "webhook"], { describe: "", defaultDoc: "none: templates and triggers only, nothing sent", doc: "slack or webhook" }),
    slackChannel: field.string({
        rule: { pattern: SLACK_CHANNEL, describe: "a Slack channel such as #platform-deploys, or a channel ID such as C0123ABCD" },
        required: (s) => s.service === "slack",
        when: (s) => s.service === "slack",
        doc: "slack: the default subscription's channel, by name or by ID (C0123ABCD)",
    }),
    webhookUrl: field.string({
        rule: { pattern: HTTPS_URL, describe: "an https:// URL" },
        required: (s) => s.service === "webhook",
        when: (s) => s.service === "webhook",
        doc: "webhook: https:// URL events are POSTed to (JSON)",
    }),
} as const;

/** The section as read, with the token (a Pulumi secret: the Slack bot token or the webhook bearer token). */
export type NotificationsConfig = Partial<Values<typeof NOTIFICATIONS_FIELDS>> & { token?: SecretValue };

/** The config key holding the notification token; it must be set with `pulumi config set --secret`. */
export const NOTIFICATIONS_TOKEN_KEY = "notificationsToken";

/** The `notificationsToken` key: a secret, read by readNotifications, which never shows it. */
export const NOTIFICATIONS_TOKEN_FIELDS = field.custom<string>({
    type: "secret string",
    schema: { type: "object", properties: { secure: { type: "string" } }, required: ["secure"], additionalProperties: false },
    secret: true,
    doc: "Slack bot token or webhook bearer token; must be set with `pulumi config set --secret notificationsToken` (a plaintext value is refused and never printed)",
});

export function readErrorBudget(r: ConfigReader, value: unknown): ErrorBudgetConfig | undefined {
    const before = r.problems.length;
    const e = readSection(r, "errorBudget", ERROR_BUDGET_FIELDS, value);
    if (!e) return undefined;
    const refuse = (k: keyof ErrorBudgetConfig, why: string) => r.problem(`errorBudget.${k}`, e[k], why);
    // Prometheus would refuse the query at every measurement (an Error, then the rollout aborts).
    const errors = e.raw.query === undefined ? [] : promqlSyntaxErrors(withArgsResolved(e.query));
    // The templates send an instant query (no rangeQuery): Argo Rollouts refuses a string result and
    // flattens a range vector into every raw sample, so the conditions would judge the oldest sample
    // (v1.9.0 metricproviders/prometheus/prometheus.go processResponse).
    const type = e.raw.query === undefined || errors.length > 0 ? undefined : promqlUnjudgedType(withArgsResolved(e.query));
    if (errors.length > 0) {
        refuse("query", `must be PromQL Prometheus can parse once {{args.*}} are resolved: ${errors[0]}`);
    } else if (type === "string") {
        refuse(
            "query",
            'must evaluate to a scalar or an instant vector, not a string: Argo Rollouts\' Prometheus provider refuses a string result at every measurement ("Prometheus metric type not supported")',
        );
    } else if (type === "range vector") {
        refuse(
            "query",
            "must evaluate to a scalar or an instant vector, not a range vector (a [range] selector or subquery): Argo Rollouts flattens a range vector into every raw sample of the window, and the gate would judge the oldest sample instead of the budget now; wrap it in a function such as avg_over_time() or last_over_time()",
        );
    }
    if (r.problems.slice(before).some((p) => p.key === "errorBudget.recheckInterval" || p.key === "errorBudget.maxFreeze")) return e;
    // The freeze measures maxFreeze / recheckInterval + 1 times (analysis.ts freezeMeasurements), and
    // Argo Rollouts reads its count and inconclusiveLimit as an int32 (v1.9.0 analysis_types.go Metric.Count).
    const count = Math.floor(durationSeconds(e.maxFreeze) / durationSeconds(e.recheckInterval)) + 1;
    if (durationSeconds(e.maxFreeze) < durationSeconds(e.recheckInterval)) {
        refuse(
            "maxFreeze",
            `must be at least errorBudget.recheckInterval (${e.recheckInterval}): the freeze measures the budget every recheckInterval and pauses for a human after maxFreeze, so a shorter maxFreeze would never measure twice`,
        );
    } else if (count > INT32_MAX) {
        refuse(
            "maxFreeze",
            `must be at most ${INT32_MAX - 1} x errorBudget.recheckInterval (${e.recheckInterval}): the freeze measures maxFreeze / recheckInterval + 1 = ${count} times, and Argo Rollouts' count and inconclusiveLimit are 32-bit integers (at most ${INT32_MAX})`,
        );
    }
    return e;
}

export function readNotifications(r: ConfigReader, value: unknown, token: unknown, tokenIsSecret: boolean): NotificationsConfig | undefined {
    const n = readSection(r, "notifications", NOTIFICATIONS_FIELDS, value);
    if (!n) return undefined;
    const { service, raw } = n;
    const out: NotificationsConfig = {};
    if (token !== undefined && !tokenIsSecret) {
        // Never echo the value: it was meant to be a secret.
        r.problem(NOTIFICATIONS_TOKEN_KEY, "[not shown]", "must be a secret: set it with `pulumi config set --secret notificationsToken`");
    }
    if (service === undefined) {
        if (raw.slackChannel !== undefined || raw.webhookUrl !== undefined || token !== undefined) {
            r.problem("notifications.service", raw.service, "is required when a channel, URL or token is set: slack or webhook");
        }
        return out;
    }
    const [own, other] = service === "slack" ? (["slackChannel", "webhookUrl"] as const) : (["webhookUrl", "slackChannel"] as const);
    Object.assign(out, { service, [own]: n[own] });
    if (raw[other] !== undefined) {
        r.problem(`notifications.${other}`, raw[other], `only applies with notifications.service: ${service === "slack" ? "webhook" : "slack"}`);
    }
    if (token === undefined || token === "") {
        r.problem(
            NOTIFICATIONS_TOKEN_KEY,
            undefined,
            `is required with notifications.service: ${service}; set it with \`pulumi config set --secret notificationsToken\``,
        );
    } else if (typeof token === "string" && tokenIsSecret) {
        out.token = new SecretValue(token);
    }
    return out;
}
