import * as YAML from "yaml";
import { NotificationsConfig } from "./config";

/**
 * Rollout notifications: the chart ships no triggers or templates, so the addon declares them. The
 * controller fires a trigger by name when it records an event (argo-rollouts utils/record), so they
 * need no `when`; it reads this ConfigMap and Secret, by these names, in its own namespace only.
 */
export const NOTIFICATION_CONFIGMAP = "argo-rollouts-notification-configmap";
export const NOTIFICATION_SECRET = "argo-rollouts-notification-secret";
/** The webhook service's name in the ConfigMap (`service.webhook.<name>`). */
const WEBHOOK_NAME = "platform";

/** The events a platform engineer and an auditor need (aborts, failed gates, approvals, completion), and what each says. */
export const NOTIFICATION_EVENTS: readonly { trigger: string; template: string; says: string }[] = [
    { trigger: "on-rollout-aborted", template: "rollout-aborted", says: "was aborted; traffic is back on the stable version" },
    { trigger: "on-analysis-run-failed", template: "analysis-run-failed", says: "failed its analysis gate" },
    { trigger: "on-analysis-run-error", template: "analysis-run-error", says: "could not run its analysis (metrics unreachable?)" },
    { trigger: "on-rollout-paused", template: "rollout-paused", says: "is paused, waiting for the next step or an approver" },
    { trigger: "on-rollout-resumed", template: "rollout-resumed", says: "was resumed (promoted by an approver or unpaused)" },
    { trigger: "on-rollout-completed", template: "rollout-completed", says: "completed: the new version is stable" },
];

/** The Secret key the service's token is stored under and referenced as `$<key>`. */
export const tokenKey = (service: "slack" | "webhook"): string => `${service}-token`;

const WHO = "{{.rollout.metadata.namespace}}/{{.rollout.metadata.name}}";

/** The notification ConfigMap's data: templates and triggers always, service and subscription when configured. */
export function notificationConfigData(cfg: NotificationsConfig, cluster: string): Record<string, string> {
    const data: Record<string, string> = {};
    for (const e of NOTIFICATION_EVENTS) {
        const message = `[${cluster}] Rollout ${WHO} ${e.says}.`;
        const [namespace, rollout] = WHO.split("/");
        const body = JSON.stringify({ cluster, event: e.template, namespace, rollout, message });
        data[`template.${e.template}`] = YAML.stringify({
            message,
            ...(cfg.service === "webhook" ? { webhook: { [WEBHOOK_NAME]: { method: "POST", body } } } : {}),
        });
        data[`trigger.${e.trigger}`] = YAML.stringify([{ send: [e.template] }]);
    }
    let recipient: string | undefined;
    if (cfg.service === "slack" && cfg.slackChannel) {
        data["service.slack"] = YAML.stringify({ token: `$${tokenKey("slack")}` });
        recipient = `slack:${cfg.slackChannel.replace(/^#/, "")}`;
    }
    if (cfg.service === "webhook" && cfg.webhookUrl) {
        const headers = [
            { name: "Content-Type", value: "application/json" },
            { name: "Authorization", value: `Bearer $${tokenKey("webhook")}` },
        ];
        data[`service.webhook.${WEBHOOK_NAME}`] = YAML.stringify({ url: cfg.webhookUrl, headers });
        recipient = `webhook:${WEBHOOK_NAME}`;
    }
    if (recipient) data.subscriptions = YAML.stringify([{ recipients: [recipient], triggers: NOTIFICATION_EVENTS.map((e) => e.trigger) }]);
    return data;
}

/** Where the controller sends notifications, for a default-deny egress policy. */
export function notificationHosts(cfg: NotificationsConfig): string[] {
    return cfg.service === "slack" ? ["slack.com"] : cfg.service === "webhook" && cfg.webhookUrl ? [new URL(cfg.webhookUrl).hostname] : [];
}
