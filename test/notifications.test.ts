import * as assert from "assert";
import * as YAML from "yaml";
import { SecretValue } from "../components/config";
import { OfflineRun } from "../tools/offline";
import { manifestsYaml, resourceRows } from "../tools/plan";
import { byName, hubConfig, merged, planInline } from "./harness";
import { configError, parseHub } from "./stackConfig";
import { NOTIFICATION_EVENTS, notificationConfigData } from "../components/rollouts/notifications";
import { errorBudgetTemplateSpec, errorBudgetWaitTemplateSpec } from "../components/rollouts/analysis";

const TOKEN = "xoxb-not-a-real-token-1234567890";
const SLACK = { notifications: { service: "slack", slackChannel: "#deploys" } };

describe("notifications", () => {
    it("declares the triggers and templates the chart does not ship, for every event", () => {
        const data = notificationConfigData({}, "hub");
        assert.strictEqual(
            Object.keys(data)
                .filter((k) => k.startsWith("trigger."))
                .join(" "),
            "trigger.on-rollout-aborted trigger.on-analysis-run-failed trigger.on-analysis-run-error trigger.on-rollout-paused trigger.on-rollout-resumed trigger.on-rollout-completed",
        );
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
            run = await planInline(merged(hubConfig(), { ...SLACK, notificationsToken: { secure: "v1:AAAAencrypted" } }));
        });

        it("is stored in the notification Secret as a Pulumi secret, and never appears in the plan", () => {
            const secret = byName(run, "notification-secret");
            assert.strictEqual((secret.inputs.metadata as { name: string }).name, "argo-rollouts-notification-secret");
            assert.deepStrictEqual(secret.inputs.stringData, "[secret]");
            const everything = JSON.stringify(resourceRows(run)) + manifestsYaml(run);
            assert.ok(!everything.includes("AAAAencrypted"));
            assert.ok(everything.includes("$slack-token"), "the ConfigMap references the key, not the value");
        });

        it("must be a secret, and is never echoed when it is not; is required with a service", () => {
            const { message } = configError(() => parseHub({ ...SLACK, notificationsToken: TOKEN }));
            assert.match(message, /notificationsToken = "\[not shown\]": must be a secret/);
            assert.ok(!message.includes(TOKEN));
            const webhook = { notifications: { service: "webhook", webhookUrl: "https://x.example/h" } };
            assert.throws(() => parseHub(webhook), /notificationsToken = \(not set\): is required with notifications.service: webhook/);
        });

        it("stays hidden if the configuration is printed", () => {
            const cfg = parseHub({ ...SLACK, notificationsToken: TOKEN }, { secretKeys: ["notificationsToken"] });
            assert.ok(!JSON.stringify(cfg).includes(TOKEN));
            assert.strictEqual(`${cfg.notifications.token}`, "[secret]");
            assert.strictEqual(cfg.notifications.token?.reveal(), TOKEN);
        });
    });

    it("declares the ConfigMap even without a service, and no Secret", async () => {
        const run = await planInline(hubConfig());
        assert.strictEqual((byName(run, "notification-configmap").inputs.metadata as { name: string }).name, "argo-rollouts-notification-configmap");
        assert.ok(!run.resources.some((r) => r.name === "notification-secret"));
        const chart = byName(run, "rollouts-controller");
        assert.deepStrictEqual((chart.inputs.values as { notifications: unknown }).notifications, { configmap: { create: false }, secret: { create: false } });
    });
    // A default-deny controller reaches the notification service: test/metrics.test.ts 'denies the namespace and lists everything the controller still needs'.
});

describe("error-budget freeze", () => {
    type Spec = { args: { name: string }[]; metrics: Record<string, unknown>[] };
    it("the check pauses when the remaining budget is exhausted or there is no SLO, and never fails a version", () => {
        // The phase of each budget (none, exhausted, overspent, left, NaN) is the engines' to say: engine-promtool
        // over e2e/samples/gates.yaml; test/gates.test.ts checks the guard against no data and the never-failing condition.
        const spec = errorBudgetTemplateSpec({ query: "q", minRemaining: 0 }, "http://m/prometheus", "hub") as Spec;
        assert.deepStrictEqual(spec.args, [{ name: "service" }, { name: "slo" }]);
        assert.deepStrictEqual([spec.metrics[0].count, spec.metrics[0].inconclusiveLimit], [1, 0], "one check, before the switch");
    });

    it("the waiting freeze measures every recheckInterval until maxFreeze, after a check that the SLO exists", () => {
        const freeze = { query: "q", minRemaining: 0.1, recheckInterval: "10m", maxFreeze: "2h" };
        const spec = errorBudgetWaitTemplateSpec(freeze, "http://m/prometheus", "hub") as Spec;
        assert.deepStrictEqual(spec.args, [{ name: "service" }, { name: "slo" }]);
        // Both read the same query as the same tenant.
        const provider = { prometheus: { address: "http://m/prometheus", query: "q", timeout: 30, headers: [{ key: "X-Scope-OrgID", value: "hub" }] } };
        const limits = { failureLimit: 0, consecutiveErrorLimit: 4, failureCondition: "false", provider };
        assert.deepStrictEqual(spec.metrics, [
            { name: "slo-found", count: 1, inconclusiveLimit: 0, successCondition: "len(result) > 0 && !isNaN(result[0])", ...limits },
            {
                name: "error-budget-remaining",
                interval: "10m",
                count: 13,
                consecutiveSuccessLimit: 1,
                inconclusiveLimit: 12,
                successCondition: "len(result) > 0 && !isNaN(result[0]) && result[0] > 0.1",
                ...limits,
            },
        ]);
    });

    it("refuses a maxFreeze shorter than recheckInterval", () => {
        assert.throws(
            () => parseHub({ errorBudget: { recheckInterval: "10m", maxFreeze: "5m" } }),
            /errorBudget.maxFreeze = "5m": must be at least errorBudget.recheckInterval \(10m\)/,
        );
        assert.strictEqual(parseHub({ errorBudget: { recheckInterval: "10m", maxFreeze: "10m" } }).errorBudget.maxFreeze, "10m");
        assert.throws(() => parseHub({ errorBudget: { recheckInterval: "99999999h" } }), /errorBudget.recheckInterval/);
    });

    it("declares both templates on every stack, reading Sloth's remaining-budget rule for the app's SLO by default", async () => {
        // Their names, provider, address and tenant: test/metrics.test.ts 'queries Mimir in-cluster with its own tenant'.
        const run = await planInline(hubConfig());
        type Metric = { name: string; provider: { prometheus: { query: string } } };
        const metrics = (name: string) => (byName(run, name).inputs.spec as { metrics: Metric[] }).metrics;
        const sloth = 'slo:period_error_budget_remaining:ratio{sloth_service="{{args.service}}",sloth_slo="{{args.slo}}"}';
        assert.strictEqual(metrics("analysis-error-budget")[0].provider.prometheus.query, sloth);
        const wait = metrics("analysis-error-budget-wait").map((m) => `${m.name}: ${m.provider.prometheus.query}`);
        assert.deepStrictEqual(wait, [`slo-found: ${sloth}`, `error-budget-remaining: ${sloth}`]);
    });

    it("takes a query that names the app's SLO, and refuses one that does not", () => {
        assert.strictEqual(parseHub({ errorBudget: { query: 'my:budget{service="{{args.service}}"}', minRemaining: 0.1 } }).errorBudget.minRemaining, 0.1);
        assert.throws(() => parseHub({ errorBudget: { query: "my:budget" } }), /errorBudget.query = "my:budget": must be PromQL naming the app's SLO/);
    });
});
