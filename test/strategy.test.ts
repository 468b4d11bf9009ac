import * as assert from "assert";
import { parseAddonConfig } from "../components/config";
import { clusterAnalysisTemplateSpec, errorBudgetTemplateSpec, sharedTemplates } from "../components/rollouts";
import {
    AnalysisRef,
    AppSpec,
    BlueGreenStrategy,
    CanaryStrategy,
    DeliveryPlan,
    PROD_CLASSES,
    SHAPES,
    TIERS,
    checkOptions,
    deliveryPlan,
} from "../components/delivery";
import { hubConfig } from "./harness";

const route = { name: "checkout", gateway: { name: "shared", namespace: "gateway-system", listener: "https" }, hostnames: ["checkout.shop.example"] };
const app = (patch: Partial<AppSpec> = {}): AppSpec => ({ name: "checkout", namespace: "shop", port: 8080, route, ...patch });
const canary = (p: DeliveryPlan) => (p.strategy as CanaryStrategy).canary;

/**
 * The upstream rule, restated. Argo Rollouts v1.9.0 validates the templates a Rollout references by
 * where they are used (rollout/controller.go, getReferencedRolloutAnalyses;
 * pkg/apis/rollouts/validation/validation_references.go, ValidateAnalysisTemplateWithType): for
 * blue/green pre- and post-promotion analysis and for canary step analysis, every metric must have
 * an effective count, else the Rollout is InvalidSpec ("... which runs indefinitely"); only canary
 * background analysis (`strategy.canary.analysis`) is exempt. Metric.EffectiveCount
 * (pkg/apis/rollouts/v1alpha1/analysis_types.go): no count (or 0) and no interval is 1; no count
 * with an interval is none; otherwise the count.
 */
function effectiveCount(m: { count?: number; interval?: string }): number | undefined {
    if (m.count === undefined || m.count === 0) {
        return m.interval ? undefined : 1;
    }
    return m.count;
}

/** Every analysis a strategy references, and whether upstream lets it run indefinitely. */
function referencedAnalyses(p: DeliveryPlan): { where: string; ref: AnalysisRef; mayRunIndefinitely: boolean }[] {
    if ("canary" in p.strategy) {
        const c = p.strategy.canary;
        return [
            ...c.steps.flatMap((s, i) => ("analysis" in s ? [{ where: `steps[${i}].analysis`, ref: s.analysis, mayRunIndefinitely: false }] : [])),
            ...(c.analysis ? [{ where: "analysis (background)", ref: c.analysis, mayRunIndefinitely: true }] : []),
        ];
    }
    const bg = p.strategy.blueGreen;
    return [
        ...(bg.prePromotionAnalysis ? [{ where: "prePromotionAnalysis", ref: bg.prePromotionAnalysis, mayRunIndefinitely: false }] : []),
        { where: "postPromotionAnalysis", ref: bg.postPromotionAnalysis, mayRunIndefinitely: false },
    ];
}

/** Every strategy the library can produce, with and without the freeze, with default and custom steps. */
function everyPlan(): { label: string; plan: DeliveryPlan }[] {
    const out: { label: string; plan: DeliveryPlan }[] = [];
    for (const tier of TIERS) {
        const apps: [string, AppSpec][] = [
            ["routed", app()],
            ["without a route", app({ route: undefined })],
            ["with an SLO", app({ slo: { service: "checkout", name: "availability" } })],
            ["critical with an SLO", app({ slo: { service: "checkout", name: "availability" }, critical: true })],
        ];
        for (const [appLabel, a] of apps) {
            if (tier !== "prod") {
                out.push({ label: `${tier}, ${appLabel}`, plan: deliveryPlan(a, { tier }) });
                continue;
            }
            for (const prodClass of PROD_CLASSES) {
                for (const shape of SHAPES) {
                    for (const steps of [undefined, [10, 100], [5, 20, 40, 60, 80, 100]]) {
                        if ((shape === "canary" && !a.route) || (shape === "blueGreen" && steps)) {
                            continue;
                        }
                        out.push({ label: `prod ${prodClass} ${shape}, ${appLabel}, steps ${steps ? steps.join("/") : "default"}`, plan: deliveryPlan(a, { tier, prodClass, shape, steps, ...approvalFor(prodClass) }) });
                    }
                }
            }
        }
    }
    return out;
}
const blueGreen = (p: DeliveryPlan) => (p.strategy as BlueGreenStrategy).blueGreen;

/** The stack's policy.regulated groups, as a regulated app is planned with them. */
const APPROVAL = { approverGroups: ["release-approvers"], deployerGroups: ["shop-deployers"] };
const approvalFor = (prodClass: string) => (prodClass === "regulated" ? { approval: APPROVAL } : {});

describe("delivery strategy library", () => {
    describe("every tier and class", () => {
        for (const tier of TIERS.filter((t) => t !== "prod")) {
            for (const routed of [true, false]) {
                it(`${tier} ${routed ? "with" : "without"} a route: trivial auto-promoting canary, no analysis`, () => {
                    const p = deliveryPlan(app(routed ? {} : { route: undefined }), { tier });
                    const c = canary(p);
                    assert.deepStrictEqual(c.steps, [{ setWeight: 100 }]);
                    assert.strictEqual(c.maxSurge, 1);
                    assert.strictEqual(c.maxUnavailable, 0);
                    assert.strictEqual(c.analysis, undefined);
                    assert.strictEqual(JSON.stringify(p.strategy).includes("templateName"), false);
                    assert.strictEqual(p.roles, undefined);
                    if (routed) {
                        assert.deepStrictEqual(c.trafficRouting, { plugins: { "argoproj-labs/gatewayAPI": { httpRoute: "checkout" } } });
                        assert.deepStrictEqual(p.services.map((s) => s.metadata.name), ["checkout-stable", "checkout-canary"]);
                    } else {
                        assert.strictEqual(c.trafficRouting, undefined);
                        assert.deepStrictEqual(p.services, []);
                        assert.strictEqual(p.httpRoute, undefined);
                    }
                });
            }
        }

        for (const prodClass of PROD_CLASSES) {
            for (const shape of SHAPES) {
                for (const budget of ["none", "slo", "critical"] as const) {
                    it(`prod ${prodClass} ${shape}, error budget: ${budget}`, () => {
                        const a = app(budget === "none" ? {} : { slo: { service: "checkout", name: "availability" }, critical: budget === "critical" });
                        const p = deliveryPlan(a, { tier: "prod", prodClass, shape, ...approvalFor(prodClass) });
                        const text = JSON.stringify(p.strategy);
                        const gate = shape === "canary" ? "success-rate" : "success-rate-finite";
                        assert.ok(text.includes(`"templateName":"${gate}","clusterScope":true`), "the success-rate gate");
                        assert.strictEqual(text.includes("error-budget"), budget === "slo", "the freeze applies to non-critical apps with an SLO only");
                        assert.strictEqual(p.roles !== undefined, prodClass === "regulated");
                        if (shape === "canary") {
                            const c = canary(p);
                            assert.strictEqual(c.stableService, "checkout-stable");
                            assert.strictEqual(c.canaryService, "checkout-canary");
                            assert.deepStrictEqual(c.trafficRouting, { plugins: { "argoproj-labs/gatewayAPI": { httpRoute: "checkout" } } });
                            const weights = c.steps.filter((s): s is { setWeight: number } => "setWeight" in s).map((s) => s.setWeight);
                            assert.deepStrictEqual(weights, [25, 50, 100]);
                            const manual = c.steps.filter((s) => "pause" in s && s.pause.duration === undefined);
                            assert.strictEqual(manual.length, prodClass === "regulated" ? 1 : 0);
                            if (prodClass === "regulated") {
                                const at = c.steps.findIndex((s) => "pause" in s && s.pause.duration === undefined);
                                assert.deepStrictEqual(c.steps[at + 1], { setWeight: 100 }, "approval comes right before full promotion");
                            }
                            // Background analysis starts on the step after the first setWeight.
                            const firstWeight = c.steps.findIndex((s) => "setWeight" in s);
                            assert.strictEqual(c.analysis?.startingStep, firstWeight + 1);
                            if (budget === "slo") {
                                assert.ok("analysis" in c.steps[0], "the freeze runs before any traffic moves");
                            }
                            assert.deepStrictEqual(
                                p.httpRoute?.spec.rules[0].backendRefs.map((b) => [b.name, b.weight, b.group, b.kind]),
                                [
                                    ["checkout-stable", 100, "", "Service"],
                                    ["checkout-canary", 0, "", "Service"],
                                ],
                            );
                        } else {
                            const bg = blueGreen(p);
                            assert.strictEqual(bg.activeService, "checkout-active");
                            assert.strictEqual(bg.previewService, "checkout-preview");
                            assert.strictEqual(bg.autoPromotionEnabled, prodClass !== "regulated");
                            // The gate measures the promoted version on production traffic: nothing routes to the preview.
                            assert.deepStrictEqual(bg.postPromotionAnalysis.templates, [{ templateName: "success-rate-finite", clusterScope: true }]);
                            assert.deepStrictEqual(bg.postPromotionAnalysis.args.find((a) => a.name === "canary-hash"), { name: "canary-hash", valueFrom: { podTemplateHashValue: "Latest" } });
                            // Pre-promotion only holds the freeze, which reads the app's SLO, not the preview.
                            assert.deepStrictEqual(bg.prePromotionAnalysis?.templates.map((t) => t.templateName), budget === "slo" ? ["error-budget"] : undefined);
                            assert.strictEqual(bg.scaleDownDelaySeconds, 30);
                            assert.deepStrictEqual(p.httpRoute?.spec.rules[0].backendRefs.map((b) => b.name), ["checkout-active"]);
                        }
                        for (const s of p.services) {
                            assert.strictEqual(s.spec.type, "ClusterIP");
                            assert.deepStrictEqual(s.spec.ports, [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }]);
                        }
                        assert.ok(p.behaviour.length > 10);
                    });
                }
            }
        }
    });

    describe("every analysis outside canary background terminates (argo-rollouts v1.9.0)", () => {
        const { "aws:region": _r, ...raw } = hubConfig();
        const cfg = parseAddonConfig("hub", raw, { awsRegion: "eu-west-1" });
        // The templates the rollouts stage declares, by name.
        const declared = new Map<string, { count?: number; interval?: string }[]>([
            ...sharedTemplates(cfg.metrics.analysis).map((t) => [t.name, (clusterAnalysisTemplateSpec(t, cfg.metrics.analysis, "http://m", "hub") as { metrics: { count?: number; interval?: string }[] }).metrics] as const),
            ["error-budget", (errorBudgetTemplateSpec(cfg.delivery.errorBudget, "http://m", "hub") as { metrics: { count?: number; interval?: string }[] }).metrics],
        ]);

        it("the restated rule tells an indefinite metric from a finite one", () => {
            assert.strictEqual(effectiveCount({ interval: "1m" }), undefined, "interval without count: the old success-rate shape");
            assert.strictEqual(effectiveCount({}), 1);
            assert.strictEqual(effectiveCount({ count: 3, interval: "1m" }), 3);
            assert.strictEqual(effectiveCount({ count: 0, interval: "1m" }), undefined);
        });

        for (const { label, plan } of everyPlan()) {
            it(label, () => {
                for (const { where, ref, mayRunIndefinitely } of referencedAnalyses(plan)) {
                    for (const t of ref.templates) {
                        const metrics = declared.get(t.templateName);
                        assert.ok(metrics, `${where} references ${t.templateName}, which the platform does not declare`);
                        assert.strictEqual(t.clusterScope, true);
                        if (!mayRunIndefinitely) {
                            for (const m of metrics) {
                                assert.notStrictEqual(effectiveCount(m), undefined, `${where}: ${t.templateName} runs indefinitely; the controller rejects the Rollout`);
                            }
                        }
                    }
                }
            });
        }
    });

    it("passes the metric arguments from the Rollout itself", () => {
        const c = canary(deliveryPlan(app(), { tier: "prod" }));
        assert.deepStrictEqual(c.analysis?.args, [
            { name: "namespace", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
            { name: "rollout", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
            { name: "canary-hash", valueFrom: { podTemplateHashValue: "Latest" } },
        ]);
    });

    it("takes configurable steps and pauses", () => {
        const c = canary(deliveryPlan(app(), { tier: "prod", steps: [10, 30, 100], stepPause: "10m" }));
        assert.deepStrictEqual(c.steps, [{ setWeight: 10 }, { pause: { duration: "10m" } }, { setWeight: 30 }, { pause: { duration: "10m" } }, { setWeight: 100 }]);
    });

    it("holds each weight until the gate has measured it", () => {
        const pauses = (p: DeliveryPlan) => canary(p).steps.flatMap((s) => ("pause" in s && s.pause.duration ? [s.pause.duration] : []));
        // Default gate timing: initialDelay 5m + interval 1m.
        assert.deepStrictEqual(pauses(deliveryPlan(app(), { tier: "prod" })), ["6m", "6m"]);
        assert.deepStrictEqual(pauses(deliveryPlan(app(), { tier: "prod", gate: { initialDelay: "10m", interval: "30s" } })), ["630s", "630s"]);
        assert.match(checkOptions(app(), { tier: "prod", stepPause: "5m" })[0], /at least the gate's initialDelay \+ interval \(5m \+ 1m = 6m\), got 5m: the first weight would end before the gate has measured it/);
        assert.deepStrictEqual(checkOptions(app(), { tier: "prod", stepPause: "6m" }), []);
        assert.match(checkOptions(app(), { tier: "prod", stepPause: "8m", gate: { initialDelay: "8m", interval: "1m" } })[0], /= 9m\), got 8m/);
    });

    it("separates approver from deployer by RBAC", () => {
        const roles = deliveryPlan(app(), { tier: "prod", prodClass: "regulated", approval: APPROVAL }).roles!;
        const can = (rules: { resources: string[]; verbs: string[] }[], resource: string, verb: string) => rules.some((r) => r.resources.includes(resource) && r.verbs.includes(verb));
        assert.ok(can(roles.approver.rules, "rollouts/status", "patch"), "approver promotes");
        assert.ok(!can(roles.approver.rules, "rollouts", "update") && !can(roles.approver.rules, "rollouts", "patch"), "approver cannot change the version");
        // Deployers ship through git: only the GitOps identities change a regulated Rollout, and one
        // a deployer could delete would come back promoted without any gate.
        assert.ok(can(roles.deployer.rules, "rollouts", "get"), "deployer follows the rollout");
        for (const verb of ["create", "update", "patch", "delete"]) {
            assert.ok(!can(roles.deployer.rules, "rollouts", verb), `deployer cannot ${verb} a Rollout`);
        }
        assert.deepStrictEqual(
            roles.bindings.map((b) => [b.roleRef.name, b.subjects.map((x) => x.name)]),
            [
                [roles.approver.metadata.name, APPROVAL.approverGroups],
                [roles.deployer.metadata.name, APPROVAL.deployerGroups],
            ],
        );
        assert.ok(!roles.deployer.rules.some((r) => r.resources.includes("rollouts/status")), "deployer never touches status");
        assert.ok([...roles.approver.rules, ...roles.deployer.rules].every((r) => ![...r.apiGroups, ...r.resources, ...r.verbs].includes("*")));
    });

    it("needs the approver groups for a regulated app, and no group on both sides", () => {
        assert.match(checkOptions(app(), { tier: "prod", prodClass: "regulated" })[0], /a regulated app needs approval.approverGroups/);
        assert.match(
            checkOptions(app(), { tier: "prod", prodClass: "regulated", approval: { approverGroups: ["a", "b"], deployerGroups: ["b"] } })[0],
            /approval groups b are both approver and deployer groups/,
        );
        assert.match(checkOptions(app(), { tier: "prod", approval: APPROVAL })[0], /prod \/ regulated only/);
        assert.deepStrictEqual(checkOptions(app(), { tier: "prod", prodClass: "regulated", approval: APPROVAL }), []);
    });

    it("refuses what the tier does not allow", () => {
        assert.match(checkOptions(app(), { tier: "dev", prodClass: "regulated" })[0], /apply to prod only/);
        assert.match(checkOptions(app({ route: undefined }), { tier: "prod" })[0], /prod canary needs the app's HTTPRoute/);
        assert.match(checkOptions(app(), { tier: "prod", steps: [50, 25, 100] })[0], /ascending/);
        assert.match(checkOptions(app(), { tier: "prod", steps: [25, 50] })[0], /ending at 100/);
        assert.match(checkOptions(app(), { tier: "prod", stepPause: "5 minutes" })[0], /duration/);
        assert.throws(() => deliveryPlan(app({ route: undefined }), { tier: "prod" }), /app shop\/checkout: a prod canary needs/);
        assert.deepStrictEqual(checkOptions(app({ route: undefined }), { tier: "prod", shape: "blueGreen" }), []);
    });
});
