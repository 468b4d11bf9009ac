import { ConfigReader, DNS_LABEL, HOSTNAME, HTTPS_URL, Plain } from "./reader";

/**
 * Delivery settings (ADR-056 D3, D6 and Phase 3): the error-budget freeze, notifications and the
 * per-cluster smoke canary.
 */

/**
 * A configuration value that must stay secret. It renders as "[secret]" wherever it is printed or
 * serialised by accident; `reveal()` is called only to wrap it in `pulumi.secret`.
 */
export class SecretValue {
    readonly #value: string;
    constructor(value: string) {
        this.#value = value;
    }
    reveal(): string {
        return this.#value;
    }
    toString(): string {
        return "[secret]";
    }
    toJSON(): string {
        return "[secret]";
    }
}

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

/** The ADR-056 delivery shapes the smoke app can run (both are proven end to end). */
export type SmokeStrategy = "canary" | "blueGreen";
export const SMOKE_STRATEGIES: readonly SmokeStrategy[] = ["canary", "blueGreen"];

export interface SmokeTestConfig {
    enabled: boolean;
    /** Which prod / standard shape the smoke app is delivered with. */
    strategy: SmokeStrategy;
    namespace: string;
    /** Hostname of the smoke app on the shared Gateway. */
    hostname: string;
    /** Changing it starts a fresh canary. */
    trigger: string;
    /** Make the smoke version fail its gate, to prove the abort path. */
    failGate: boolean;
    /** The demo app image (from the mirror, pinned by digest). */
    image: string;
    /** The load generator image (from the mirror, pinned by digest); needs sh and wget. */
    loadImage: string;
    replicas: number;
}

export interface DeliveryConfig {
    errorBudget: ErrorBudgetConfig;
    notifications: NotificationsConfig;
    smokeTest: SmokeTestConfig;
}

/** Sloth's metadata rule for the remaining budget over the SLO period (slok/sloth conventions). */
export const SLOTH_REMAINING_BUDGET = 'slo:period_error_budget_remaining:ratio{sloth_service="{{args.service}}",sloth_slo="{{args.slo}}"}';

export const DELIVERY_DEFAULTS = {
    errorBudget: { query: SLOTH_REMAINING_BUDGET, minRemaining: 0 },
    smokeTest: { strategy: "canary", namespace: "rollouts-smoke", trigger: "1", failGate: false, replicas: 2 },
} as const;

/** The config key holding the notification token; it must be set with `pulumi config set --secret`. */
export const NOTIFICATIONS_TOKEN_KEY = "notificationsToken";

const IMAGE_BY_DIGEST = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)+@sha256:[a-f0-9]{64}$/;
const SLACK_CHANNEL = /^#?[a-z0-9][a-z0-9._-]{0,79}$/;

export function readDelivery(r: ConfigReader, raw: Plain, secretKeys: readonly string[]): DeliveryConfig | undefined {
    const errorBudget = readErrorBudget(r, raw.errorBudget);
    const notifications = readNotifications(r, raw.notifications, raw[NOTIFICATIONS_TOKEN_KEY], secretKeys.includes(NOTIFICATIONS_TOKEN_KEY));
    const smokeTest = readSmokeTest(r, raw.smokeTest);
    return errorBudget && notifications && smokeTest ? { errorBudget, notifications, smokeTest } : undefined;
}

function readErrorBudget(r: ConfigReader, value: unknown): ErrorBudgetConfig | undefined {
    const e = r.object("errorBudget", value, ["query", "minRemaining"]);
    if (!e) {
        return undefined;
    }
    const query = r.string("errorBudget.query", e.query, { pattern: /\{\{args\.service\}\}/, describe: "PromQL naming the app's SLO through {{args.service}} (and {{args.slo}})" }, DELIVERY_DEFAULTS.errorBudget.query);
    return { query, minRemaining: r.number("errorBudget.minRemaining", e.minRemaining, 0, 0.99, DELIVERY_DEFAULTS.errorBudget.minRemaining) };
}

function readNotifications(r: ConfigReader, value: unknown, token: unknown, tokenIsSecret: boolean): NotificationsConfig | undefined {
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

function readSmokeTest(r: ConfigReader, value: unknown): SmokeTestConfig | undefined {
    const d = DELIVERY_DEFAULTS.smokeTest;
    const s = r.object("smokeTest", value, ["enabled", "strategy", "namespace", "hostname", "trigger", "failGate", "image", "loadImage", "replicas"]);
    if (!s) {
        return undefined;
    }
    const enabled = r.boolean("smokeTest.enabled", s.enabled, false);
    const digest = { pattern: IMAGE_BY_DIGEST, describe: "an image reference pinned by digest, registry/repository@sha256:<64 hex>" };
    const image = enabled ? r.requiredString("smokeTest.image", s.image, digest) : r.string("smokeTest.image", s.image, digest);
    const loadImage = enabled ? r.requiredString("smokeTest.loadImage", s.loadImage, digest) : r.string("smokeTest.loadImage", s.loadImage, digest);
    const hostname = enabled
        ? r.requiredString("smokeTest.hostname", s.hostname, { pattern: HOSTNAME, describe: "the smoke app's hostname on the shared Gateway" })
        : r.string("smokeTest.hostname", s.hostname, { pattern: HOSTNAME, describe: "a hostname" });
    const trigger = typeof s.trigger === "number" ? String(s.trigger) : s.trigger;
    const namespace = r.string("smokeTest.namespace", s.namespace, { pattern: DNS_LABEL, describe: "a namespace name (not default)", maxLength: 63 }, d.namespace);
    if (namespace === "default") {
        r.problem("smokeTest.namespace", namespace, "must not be default: the platform refuses workloads there");
    }
    const strategy = r.string("smokeTest.strategy", s.strategy, { oneOf: SMOKE_STRATEGIES, describe: "" }, d.strategy) as SmokeStrategy;
    return {
        enabled,
        strategy,
        namespace,
        hostname: hostname ?? "",
        trigger: r.string("smokeTest.trigger", trigger, { pattern: /^[A-Za-z0-9._-]{1,63}$/, describe: "a short token (letters, digits, '.', '_', '-'); change it to start a fresh canary" }, d.trigger),
        failGate: r.boolean("smokeTest.failGate", s.failGate, d.failGate),
        image: image ?? "",
        loadImage: loadImage ?? "",
        replicas: r.integer("smokeTest.replicas", s.replicas, 2, 10, d.replicas),
    };
}
