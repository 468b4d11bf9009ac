import * as assert from "assert";
import * as YAML from "yaml";
import { ConfigError, SecretValue } from "../components/config";
import { parseAddonConfig } from "../stacks/config";
import { OfflineRun } from "../tools/offline";
import { manifestsYaml, resourceRows } from "../tools/plan";
import { byName, hubConfig, merged, planInline } from "./harness";
import { NOTIFICATION_EVENTS, notificationConfigData } from "../components/rollouts/notifications";
import { errorBudgetTemplateSpec, errorBudgetWaitTemplateSpec, guardedConditions } from "../components/rollouts/analysis";

const TOKEN = "xoxb-not-a-real-token-1234567890";

function parse(cfg: Record<string, unknown>, secretKeys: string[] = []) {
    const { "aws:region": _r, ...rest } = cfg;
    return parseAddonConfig("hub", rest, { awsRegion: "eu-west-1", secretKeys });
}

describe("notifications", () => {
    it("declares the triggers and templates the chart does not ship, for every event", () => {
        const data = notificationConfigData({}, "hub");
        const triggers = Object.keys(data)
            .filter((k) => k.startsWith("trigger."))
            .map((k) => k.slice("trigger.".length));
        assert.deepStrictEqual(triggers, [
            "on-rollout-aborted",
            "on-analysis-run-failed",
            "on-analysis-run-error",
            "on-rollout-paused",
            "on-rollout-resumed",
            "on-rollout-completed",
        ]);
        for (const e of NOTIFICATION_EVENTS) {
            assert.deepStrictEqual(YAML.parse(data[`trigger.${e.trigger}`]), [{ send: [e.template] }]);
            assert.match(
                (YAML.parse(data[`template.${e.template}`]) as { message: string }).message,
                /^\[hub\] Rollout \{\{\.rollout\.metadata\.namespace\}\}\/\{\{\.rollout\.metadata\.name\}\} /,
            );
        }
        assert.strictEqual(data.subscriptions, undefined, "no service, no subscription");
    });

    it("subscribes the stack's Slack channel to every event, the token by reference only", () => {
        const data = notificationConfigData({ service: "slack", slackChannel: "#platform-deploys", token: new SecretValue(TOKEN) }, "hub");
        assert.deepStrictEqual(YAML.parse(data["service.slack"]), { token: "$slack-token" });
        assert.deepStrictEqual(YAML.parse(data.subscriptions), [
            { recipients: ["slack:platform-deploys"], triggers: NOTIFICATION_EVENTS.map((e) => e.trigger) },
        ]);
        assert.ok(!JSON.stringify(data).includes(TOKEN));
    });

    it("posts JSON to a webhook with a bearer token by reference", () => {
        const data = notificationConfigData({ service: "webhook", webhookUrl: "https://events.example/rollouts", token: new SecretValue(TOKEN) }, "preprod");
        const svc = YAML.parse(data["service.webhook.platform"]) as { url: string; headers: { name: string; value: string }[] };
        assert.strictEqual(svc.url, "https://events.example/rollouts");
        assert.deepStrictEqual(svc.headers[1], { name: "Authorization", value: "Bearer $webhook-token" });
        const tmpl = YAML.parse(data["template.rollout-aborted"]) as { webhook: { platform: { method: string; body: string } } };
        assert.strictEqual(tmpl.webhook.platform.method, "POST");
        assert.strictEqual(JSON.parse(tmpl.webhook.platform.body).event, "rollout-aborted");
    });

    describe("the token", () => {
        let run: OfflineRun;
        before(async () => {
            run = await planInline(
                merged(hubConfig(), { notifications: { service: "slack", slackChannel: "#deploys" }, notificationsToken: { secure: "v1:AAAAencrypted" } }),
            );
        });

        it("is stored in the notification Secret as a Pulumi secret", () => {
            const secret = byName(run, "notification-secret");
            assert.strictEqual((secret.inputs.metadata as { name: string }).name, "argo-rollouts-notification-secret");
            assert.deepStrictEqual(secret.inputs.stringData, "[secret]");
        });

        it("never appears in the plan", () => {
            const everything = JSON.stringify(resourceRows(run)) + manifestsYaml(run);
            assert.ok(!everything.includes("AAAAencrypted"));
            assert.ok(everything.includes("$slack-token"), "the ConfigMap references the key, not the value");
        });

        it("must be a secret, and is never echoed when it is not", () => {
            try {
                parse(merged(hubConfig(), { notifications: { service: "slack", slackChannel: "#deploys" }, notificationsToken: TOKEN }));
                assert.fail("accepted a plaintext token");
            } catch (err) {
                assert.ok(err instanceof ConfigError);
                assert.match(err.message, /notificationsToken = "\[not shown\]": must be a secret/);
                assert.ok(!err.message.includes(TOKEN));
            }
        });

        it("stays hidden if the configuration is printed", () => {
            const cfg = parse(merged(hubConfig(), { notifications: { service: "slack", slackChannel: "#deploys" }, notificationsToken: TOKEN }), [
                "notificationsToken",
            ]);
            assert.ok(!JSON.stringify(cfg).includes(TOKEN));
            assert.strictEqual(`${cfg.notifications.token}`, "[secret]");
            assert.strictEqual(cfg.notifications.token?.reveal(), TOKEN);
        });

        it("is required with a service", () => {
            assert.throws(
                () => parse(merged(hubConfig(), { notifications: { service: "webhook", webhookUrl: "https://x.example/h" } })),
                /notificationsToken = \(not set\): is required with notifications.service: webhook/,
            );
        });
    });

    it("declares the ConfigMap even without a service, and no Secret", async () => {
        const run = await planInline(hubConfig());
        assert.strictEqual((byName(run, "notification-configmap").inputs.metadata as { name: string }).name, "argo-rollouts-notification-configmap");
        assert.ok(!run.resources.some((r) => r.name === "notification-secret"));
        const chart = byName(run, "rollouts-controller");
        assert.deepStrictEqual((chart.inputs.values as { notifications: unknown }).notifications, { configmap: { create: false }, secret: { create: false } });
    });

    it("lets a default-deny controller reach the notification service", async () => {
        const run = await planInline(
            merged(hubConfig(), {
                network: { controllerDefaultDeny: true },
                notifications: { service: "slack", slackChannel: "#d" },
                notificationsToken: { secure: "x" },
            }),
        );
        const egress = (byName(run, "argo-rollouts-controller").inputs.spec as { egress: { toFQDNs?: { matchName: string }[] }[] }).egress;
        assert.ok(egress.some((e) => e.toFQDNs?.some((f) => f.matchName === "slack.com")));
    });
});

describe("error-budget freeze", () => {
    it("the check pauses when the remaining budget is exhausted or there is no SLO, and never fails a version", () => {
        const spec = errorBudgetTemplateSpec({ query: "q", minRemaining: 0 }, "http://m/prometheus", "hub") as {
            args: { name: string }[];
            metrics: { count: number; successCondition: string; failureCondition: string; inconclusiveLimit: number }[];
        };
        assert.deepStrictEqual(spec.args, [{ name: "service" }, { name: "slo" }]);
        const m = spec.metrics[0];
        assert.strictEqual(m.count, 1, "one check, before the switch");
        assert.strictEqual(m.inconclusiveLimit, 0);
        assert.strictEqual(m.successCondition, "len(result) > 0 && !isNaN(result[0]) && result[0] > 0");
        assert.strictEqual(m.failureCondition, "false");
        // Same guard as the metric gates: empty and NaN satisfy neither condition.
        assert.ok(m.successCondition.startsWith(guardedConditions("atLeast", 0).successCondition.split(" && result")[0]));
    });

    it("the waiting freeze measures every recheckInterval until maxFreeze, after a check that the SLO exists", () => {
        const spec = errorBudgetWaitTemplateSpec({ query: "q", minRemaining: 0.1, recheckInterval: "10m", maxFreeze: "2h" }, "http://m/prometheus", "hub") as {
            args: { name: string }[];
            metrics: Record<string, unknown>[];
        };
        assert.deepStrictEqual(spec.args, [{ name: "service" }, { name: "slo" }]);
        const [found, wait] = spec.metrics;
        assert.deepStrictEqual(
            { ...found, provider: undefined },
            {
                name: "slo-found",
                count: 1,
                failureLimit: 0,
                inconclusiveLimit: 0,
                consecutiveErrorLimit: 4,
                successCondition: "len(result) > 0 && !isNaN(result[0])",
                failureCondition: "false",
                provider: undefined,
            },
        );
        assert.deepStrictEqual(
            { ...wait, provider: undefined },
            {
                name: "error-budget-remaining",
                interval: "10m",
                count: 13,
                consecutiveSuccessLimit: 1,
                failureLimit: 0,
                inconclusiveLimit: 12,
                consecutiveErrorLimit: 4,
                successCondition: "len(result) > 0 && !isNaN(result[0]) && result[0] > 0.1",
                failureCondition: "false",
                provider: undefined,
            },
        );
        assert.deepStrictEqual(found.provider, wait.provider, "both read the same query as the same tenant");
        assert.deepStrictEqual(found.provider, {
            prometheus: { address: "http://m/prometheus", query: "q", timeout: 30, headers: [{ key: "X-Scope-OrgID", value: "hub" }] },
        });
    });

    it("refuses a maxFreeze shorter than recheckInterval", () => {
        assert.throws(
            () => parse(merged(hubConfig(), { errorBudget: { recheckInterval: "10m", maxFreeze: "5m" } })),
            /errorBudget.maxFreeze = "5m": must be at least errorBudget.recheckInterval \(10m\)/,
        );
        assert.strictEqual(parse(merged(hubConfig(), { errorBudget: { recheckInterval: "10m", maxFreeze: "10m" } })).errorBudget.maxFreeze, "10m");
        assert.throws(() => parse(merged(hubConfig(), { errorBudget: { recheckInterval: "99999999h" } })), /errorBudget.recheckInterval/);
    });

    it("declares both templates on every stack, reading Sloth's remaining-budget rule for the app's SLO by default", async () => {
        const run = await planInline(hubConfig());
        const metric = (byName(run, "analysis-error-budget").inputs.spec as { metrics: { provider: { prometheus: { query: string; headers: unknown } } }[] })
            .metrics[0];
        assert.strictEqual(
            metric.provider.prometheus.query,
            'slo:period_error_budget_remaining:ratio{sloth_service="{{args.service}}",sloth_slo="{{args.slo}}"}',
        );
        assert.deepStrictEqual(metric.provider.prometheus.headers, [{ key: "X-Scope-OrgID", value: "hub" }]);
        const wait = byName(run, "analysis-error-budget-wait").inputs as { metadata: { name: string }; spec: { metrics: { name: string }[] } };
        assert.strictEqual(wait.metadata.name, "argo-rollouts-addon-error-budget-wait");
        assert.deepStrictEqual(
            wait.spec.metrics.map((m) => m.name),
            ["slo-found", "error-budget-remaining"],
        );
    });

    it("takes a query that names the app's SLO, and refuses one that does not", () => {
        const cfg = parse(merged(hubConfig(), { errorBudget: { query: 'my:budget{service="{{args.service}}"}', minRemaining: 0.1 } }));
        assert.strictEqual(cfg.errorBudget.minRemaining, 0.1);
        assert.throws(
            () => parse(merged(hubConfig(), { errorBudget: { query: "my:budget" } })),
            /errorBudget.query = "my:budget": must be PromQL naming the app's SLO/,
        );
    });
});
