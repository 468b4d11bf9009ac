import { ConfigReader, HTTPS_URL, SecretValue } from "../../config/reader";
import { SLACK_CHANNEL } from "./patterns";

/** The `errorBudget` and `notifications` sections (ADR-056 D6): the error-budget gate's template and the notification service, with `notificationsToken`. */

export interface ErrorBudgetConfig {
    /**
     * PromQL for the app's remaining error budget as a ratio (1 = untouched, 0 = exhausted), with
     * `{{args.service}}` and `{{args.slo}}` where the app's SLO goes.
     */
    query: string;
    /** The gate fails when the remaining budget is at or below this. */
    minRemaining: number;
}

export type NotificationService = "slack" | "webhook";

export interface NotificationsConfig {
    service?: NotificationService;
    /** Slack: the default subscription's channel. */
    slackChannel?: string;
    /** Webhook: where events are POSTed. */
    webhookUrl?: string;
    /** The Slack bot token or webhook bearer token (a Pulumi secret). */
    token?: SecretValue;
}

/** Sloth's metadata rule for the remaining budget over the SLO period (slok/sloth conventions). */
export const SLOTH_REMAINING_BUDGET = 'slo:period_error_budget_remaining:ratio{sloth_service="{{args.service}}",sloth_slo="{{args.slo}}"}';

export const ERROR_BUDGET_DEFAULTS = { query: SLOTH_REMAINING_BUDGET, minRemaining: 0 } as const;

/** The config key holding the notification token; it must be set with `pulumi config set --secret`. */
export const NOTIFICATIONS_TOKEN_KEY = "notificationsToken";

export function readErrorBudget(r: ConfigReader, value: unknown): ErrorBudgetConfig | undefined {
    const e = r.object("errorBudget", value, ["query", "minRemaining"]);
    if (!e) {
        return undefined;
    }
    const query = r.string("errorBudget.query", e.query, { pattern: /\{\{args\.service\}\}/, describe: "PromQL naming the app's SLO through {{args.service}} (and {{args.slo}})" }, ERROR_BUDGET_DEFAULTS.query);
    return { query, minRemaining: r.number("errorBudget.minRemaining", e.minRemaining, 0, 0.99, ERROR_BUDGET_DEFAULTS.minRemaining) };
}

export function readNotifications(r: ConfigReader, value: unknown, token: unknown, tokenIsSecret: boolean): NotificationsConfig | undefined {
    const n = r.object("notifications", value, ["service", "slackChannel", "webhookUrl"]);
    if (!n) {
        return undefined;
    }
    const service = r.string("notifications.service", n.service, { oneOf: ["slack", "webhook"], describe: "" }) as NotificationService | undefined;
    const out: NotificationsConfig = {};
    if (token !== undefined && !tokenIsSecret) {
        // Never echo the value: it was meant to be a secret.
        r.problem(NOTIFICATIONS_TOKEN_KEY, "[not shown]", "must be a secret: set it with `pulumi config set --secret notificationsToken`");
    }
    if (service === undefined) {
        if (n.slackChannel !== undefined || n.webhookUrl !== undefined || token !== undefined) {
            r.problem("notifications.service", n.service, "is required when a channel, URL or token is set: slack or webhook");
        }
        return out;
    }
    out.service = service;
    if (service === "slack") {
        out.slackChannel = r.requiredString("notifications.slackChannel", n.slackChannel, { pattern: SLACK_CHANNEL, describe: "a Slack channel such as #platform-deploys" });
        if (n.webhookUrl !== undefined) {
            r.problem("notifications.webhookUrl", n.webhookUrl, "only applies with notifications.service: webhook");
        }
    } else {
        out.webhookUrl = r.requiredString("notifications.webhookUrl", n.webhookUrl, { pattern: HTTPS_URL, describe: "an https:// URL" });
        if (n.slackChannel !== undefined) {
            r.problem("notifications.slackChannel", n.slackChannel, "only applies with notifications.service: slack");
        }
    }
    if (token === undefined || token === "") {
        r.problem(NOTIFICATIONS_TOKEN_KEY, undefined, `is required with notifications.service: ${service}; set it with \`pulumi config set --secret notificationsToken\``);
    } else if (typeof token === "string" && tokenIsSecret) {
        out.token = new SecretValue(token);
    }
    return out;
}
