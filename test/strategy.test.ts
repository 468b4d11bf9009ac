import * as assert from "assert";
import { parseAddonConfig } from "../stacks/config";
import {
    AnalysisRef,
    AppSpec,
    BlueGreenStrategy,
    CanaryStrategy,
    DELIVERY_DEFAULTS,
    DeliveryPlan,
    HttpRouteObject,
    PROD_CLASSES,
    PreviewGate,
    SHAPES,
    TIERS,
    checkOptions,
    deliveryPlan,
} from "../components/delivery";
import { validateObject } from "../tools/schemas";
import { hubConfig } from "./harness";
import { templateName } from "../components/argoRollouts";
import { clusterAnalysisTemplateSpec, errorBudgetTemplates, sharedTemplates } from "../components/rollouts/analysis";

const route = { name: "checkout", gateway: { name: "shared", namespace: "gateway-system", listener: "https" }, hostnames: ["checkout.shop.example"] };
const app = (patch: Partial<AppSpec> = {}): AppSpec => ({ name: "checkout", namespace: "shop", port: 8080, route, ...patch });
const canary = (p: DeliveryPlan) => (p.strategy as CanaryStrategy).canary;

/**
 * Argo Rollouts v1.9.0 refuses a Rollout (InvalidSpec, "runs indefinitely") whose step or pre/post-
 * promotion analysis has a metric without an effective count (validation_references.go
 * ValidateAnalysisTemplateWithType); Metric.EffectiveCount (analysis_types.go): no count and no
 * interval is 1, no count with an interval is none. The real controller decides it in e2e 25-delivery.
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

/** The preview gates a routed blue/green app can have: none, the header, a hostname (on the app's listener or another). */
const PREVIEW_GATES: (PreviewGate | undefined)[] = [
    undefined,
    { header: "x-rollouts-preview" },
    { hostname: "checkout-preview.shop.example" },
    { hostname: "checkout-preview.shop.example", gateway: { name: "internal", namespace: "gateway-system", listener: "previews" } },
];
const gateLabel = (g: PreviewGate | undefined) =>
    g === undefined ? "no preview gate" : "header" in g ? "header preview gate" : `hostname preview gate${g.gateway ? " on its own listener" : ""}`;

/** Every strategy the library can produce, with and without the freeze, with default and custom steps, with every preview gate. */
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
                        for (const previewGate of shape === "blueGreen" && a.route ? PREVIEW_GATES : [undefined]) {
                            out.push({
                                label: `prod ${prodClass} ${shape}, ${appLabel}, steps ${steps ? steps.join("/") : "default"}${shape === "blueGreen" ? `, ${gateLabel(previewGate)}` : ""}`,
                                plan: deliveryPlan(a, { tier, prodClass, shape, steps, previewGate, ...approvalFor(prodClass) }),
                            });
                        }
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
                        assert.deepStrictEqual(
                            p.services.map((s) => s.metadata.name),
                            ["checkout-stable", "checkout-canary"],
                        );
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
                        const gate = templateName(shape === "canary" ? "success-rate" : "success-rate-finite");
                        assert.ok(text.includes(`"templateName":"${gate}","clusterScope":true`), "the success-rate gate");
                        assert.strictEqual(text.includes("error-budget"), budget === "slo", "the freeze applies to non-critical apps with an SLO only");
                        assert.strictEqual(p.roles !== undefined, prodClass === "regulated");
                        if (shape === "canary") {
                            const c = canary(p);
                            assert.strictEqual(c.stableService, "checkout-stable");
                            assert.strictEqual(c.canaryService, "checkout-canary");
                            assert.deepStrictEqual(c.trafficRouting, { plugins: { "argoproj-labs/gatewayAPI": { httpRoute: "checkout" } } });
                            const weights = c.steps.filter((s): s is { setWeight: number } => "setWeight" in s).map((s) => s.setWeight);
                            assert.deepStrictEqual(weights, DELIVERY_DEFAULTS.prod[prodClass].steps, "the delivery section's default weights");
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
                                const first = c.steps[0] as { analysis: AnalysisRef };
                                assert.deepStrictEqual(
                                    first.analysis.templates,
                                    [{ templateName: templateName("error-budget-wait"), clusterScope: true }],
                                    "a canary waits for its budget",
                                );
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
                            assert.deepStrictEqual(bg.postPromotionAnalysis.templates, [
                                { templateName: templateName("success-rate-finite"), clusterScope: true },
                            ]);
                            assert.deepStrictEqual(
                                bg.postPromotionAnalysis.args.find((a) => a.name === "canary-hash"),
                                { name: "canary-hash", valueFrom: { podTemplateHashValue: "Latest" } },
                            );
                            // Pre-promotion only holds the freeze, which reads the app's SLO, not the preview.
                            assert.deepStrictEqual(
                                bg.prePromotionAnalysis?.templates.map((t) => t.templateName),
                                budget === "slo" ? [templateName("error-budget")] : undefined,
                            );
                            assert.strictEqual(bg.scaleDownDelaySeconds, 30);
                            assert.deepStrictEqual(
                                p.httpRoute?.spec.rules[0].backendRefs.map((b) => b.name),
                                ["checkout-active"],
                            );
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
            ...sharedTemplates(cfg.analysis).map(
                (t) =>
                    [
                        t.name,
                        (clusterAnalysisTemplateSpec(t, cfg.analysis, "http://m", "hub") as { metrics: { count?: number; interval?: string }[] }).metrics,
                    ] as const,
            ),
            ...errorBudgetTemplates(cfg.errorBudget, cfg.analysis).map(
                (t) => [t.name, (t.spec("http://m", "hub") as { metrics: { count?: number; interval?: string }[] }).metrics] as const,
            ),
        ]);

        for (const { label, plan } of everyPlan()) {
            it(label, () => {
                for (const { where, ref, mayRunIndefinitely } of referencedAnalyses(plan)) {
                    for (const t of ref.templates) {
                        const metrics = declared.get(t.templateName);
                        assert.ok(metrics, `${where} references ${t.templateName}, which the platform does not declare`);
                        assert.strictEqual(t.clusterScope, true);
                        if (!mayRunIndefinitely) {
                            for (const m of metrics) {
                                assert.notStrictEqual(
                                    effectiveCount(m),
                                    undefined,
                                    `${where}: ${t.templateName} runs indefinitely; the controller rejects the Rollout`,
                                );
                            }
                        }
                    }
                }
            });
        }
    });

    it("enumerates the preview gate's pre-promotion runs in the termination check above", () => {
        const gated = everyPlan().filter(({ plan }) => plan.previewGate !== undefined);
        assert.strictEqual(gated.length, 2 * 3 * 3, "two classes, three routed apps, three preview gates");
        for (const { label, plan } of gated) {
            assert.ok(
                referencedAnalyses(plan).some(
                    (r) => r.where === "prePromotionAnalysis" && r.ref.templates.some((t) => t.templateName === templateName("success-rate-finite")),
                ),
                `${label}: the preview gate's run is checked`,
            );
        }
    });

    describe("blue/green preview gate", () => {
        const HEADER = { header: "x-rollouts-preview" };
        const plan = (gate: PreviewGate | undefined, patch: Partial<AppSpec> = {}, prodClass: "standard" | "regulated" = "standard") =>
            deliveryPlan(app(patch), { tier: "prod", shape: "blueGreen", prodClass, previewGate: gate, ...approvalFor(prodClass) });

        it("writes the header rule first, with every default spelled out, and keeps the path-only rule to the active Service", () => {
            const route = plan(HEADER).httpRoute!;
            assert.deepStrictEqual(route.spec.hostnames, ["checkout.shop.example"], "the app's own hostname");
            assert.deepStrictEqual(route.spec.rules, [
                {
                    matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [{ type: "Exact", name: "x-rollouts-preview", value: "true" }] }],
                    backendRefs: [{ group: "", kind: "Service", name: "checkout-preview", port: 80, weight: 100 }],
                },
                {
                    matches: [{ path: { type: "PathPrefix", value: "/" } }],
                    backendRefs: [{ group: "", kind: "Service", name: "checkout-active", port: 80, weight: 100 }],
                },
            ]);
            assert.strictEqual(plan(HEADER).previewRoute, undefined);
        });

        it("a hostname gate leaves the app's route as it was and adds a route of the preview hostname", () => {
            const p = plan({ hostname: "checkout-preview.shop.example" });
            assert.deepStrictEqual(p.httpRoute, plan(undefined).httpRoute);
            const r = p.previewRoute!;
            assert.strictEqual(r.metadata.name, "checkout-preview");
            assert.deepStrictEqual(r.spec.hostnames, ["checkout-preview.shop.example"]);
            assert.deepStrictEqual(r.spec.parentRefs, [
                { group: "gateway.networking.k8s.io", kind: "Gateway", name: "shared", namespace: "gateway-system", sectionName: "https" },
            ]);
            assert.deepStrictEqual(r.spec.rules, [
                {
                    matches: [{ path: { type: "PathPrefix", value: "/" } }],
                    backendRefs: [{ group: "", kind: "Service", name: "checkout-preview", port: 80, weight: 100 }],
                },
            ]);
            const own = plan({
                hostname: "checkout-preview.shop.example",
                gateway: { name: "internal", namespace: "gateway-system", listener: "previews" },
            }).previewRoute!;
            assert.deepStrictEqual(
                own.spec.parentRefs.map((x) => `${x.namespace}/${x.name}/${x.sectionName}`),
                ["gateway-system/internal/previews"],
                "restricted at the listener",
            );
        });

        it("keeps every rule of a blue/green route to one backend, so ArgoCD's weight rule never freezes its rules", () => {
            for (const { label, plan: p } of everyPlan().filter((x) => x.plan.shape === "blueGreen")) {
                for (const r of [p.httpRoute, p.previewRoute].filter((x): x is HttpRouteObject => x !== undefined)) {
                    assert.ok(
                        r.spec.rules.every((rule) => rule.backendRefs.length === 1),
                        `${label}: ${r.metadata.name}`,
                    );
                }
            }
        });

        it("gates the preview ReplicaSet before promotion, and the promoted version after", () => {
            for (const prodClass of PROD_CLASSES) {
                for (const gate of PREVIEW_GATES.slice(1)) {
                    const bg = blueGreen(plan(gate, {}, prodClass));
                    assert.deepStrictEqual(bg.prePromotionAnalysis, {
                        templates: [{ templateName: templateName("success-rate-finite"), clusterScope: true }],
                        args: [
                            { name: "namespace", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
                            { name: "rollout", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                            // Latest: the new ReplicaSet, which the preview Service selects before the switch.
                            { name: "canary-hash", valueFrom: { podTemplateHashValue: "Latest" } },
                        ],
                    });
                    assert.deepStrictEqual(bg.postPromotionAnalysis, bg.prePromotionAnalysis, "the post-promotion gate stays");
                    assert.strictEqual(bg.autoPromotionEnabled, prodClass === "standard");
                }
            }
            // Without a gate nothing reaches the preview: no metric gate before promotion.
            assert.strictEqual(blueGreen(plan(undefined)).prePromotionAnalysis, undefined);
        });

        it("runs the freeze in the same pre-promotion run when it applies", () => {
            const slo = { slo: { service: "checkout", name: "availability" } };
            const pre = blueGreen(plan(HEADER, slo)).prePromotionAnalysis!;
            assert.deepStrictEqual(
                pre.templates.map((t) => t.templateName),
                [templateName("error-budget"), templateName("success-rate-finite")],
            );
            assert.deepStrictEqual(
                pre.args.map((a) => a.name),
                ["service", "slo", "namespace", "rollout", "canary-hash"],
            );
            assert.deepStrictEqual(
                blueGreen(plan(HEADER, { ...slo, critical: true })).prePromotionAnalysis!.templates.map((t) => t.templateName),
                [templateName("success-rate-finite")],
            );
            assert.deepStrictEqual(
                blueGreen(plan(undefined, slo)).prePromotionAnalysis!.templates.map((t) => t.templateName),
                [templateName("error-budget")],
            );
        });

        it("says what it does", () => {
            assert.match(
                plan(HEADER).behaviour,
                /success-rate gate on the preview's test traffic \(header x-rollouts-preview: true\) before the switch, a breach aborts with the active Service untouched; then auto-promotes/,
            );
            assert.match(
                plan({ hostname: "checkout-preview.shop.example" }, {}, "regulated").behaviour,
                /\(hostname checkout-preview\.shop\.example\) before the switch.*then manual promotion/,
            );
            assert.doesNotMatch(plan(undefined).behaviour, /before the switch/);
            assert.deepStrictEqual(plan(HEADER).previewGate, HEADER, "the plan says how to reach the preview");
        });

        it("refuses a preview gate where it cannot work", () => {
            const problems = (opts: Partial<Parameters<typeof checkOptions>[1]>, a = app()) => checkOptions(a, { tier: "prod", shape: "blueGreen", ...opts });
            assert.match(problems({ shape: "canary", previewGate: HEADER })[0], /previewGate applies to prod blueGreen only, got prod canary/);
            assert.match(problems({ shape: undefined, previewGate: HEADER })[0], /previewGate applies to prod blueGreen only, got prod canary/);
            assert.match(checkOptions(app(), { tier: "preprod", previewGate: HEADER }).join("; "), /previewGate applies to prod blueGreen only, got preprod/);
            assert.match(problems({ previewGate: HEADER }, app({ route: undefined }))[0], /previewGate needs the app's HTTPRoute/);
            assert.match(problems({ previewGate: { header: "x-a", hostname: "p.shop.example" } as unknown as PreviewGate })[0], /either header or hostname/);
            assert.match(problems({ previewGate: {} as unknown as PreviewGate })[0], /either header or hostname/);
            for (const header of ["", "x preview", "x-a'b", ":authority", "x".repeat(257)]) {
                assert.match(problems({ previewGate: { header } })[0], /previewGate.header must be an HTTP header name/, JSON.stringify(header));
            }
            for (const hostname of ["*.shop.example", "Preview.shop.example", "preview.shop.example.", ""]) {
                assert.match(problems({ previewGate: { hostname } })[0], /previewGate.hostname must be a single lowercase DNS name/, hostname);
            }
            assert.match(problems({ previewGate: { hostname: "checkout.shop.example" } })[0], /is one of the app's hostnames/);
            assert.deepStrictEqual(problems({ previewGate: HEADER }), []);
            assert.deepStrictEqual(problems({ previewGate: { hostname: "checkout-preview.shop.example" } }), []);
            assert.throws(() => deliveryPlan(app(), { tier: "prod", previewGate: HEADER }), /app shop\/checkout: previewGate applies to prod blueGreen only/);
        });

        it("emits schema-valid routes", () => {
            for (const { label, plan: p } of everyPlan()) {
                for (const r of [p.httpRoute, p.previewRoute].filter((x): x is HttpRouteObject => x !== undefined)) {
                    const res = validateObject(r as unknown as Record<string, unknown>);
                    assert.strictEqual(res.via, "package");
                    assert.deepStrictEqual(res.problems, [], `${label}: ${r.metadata.name}`);
                }
            }
            // The model checks what the preview rule adds: a header match without its value is refused.
            const bad = JSON.parse(JSON.stringify(plan(HEADER).httpRoute)) as { spec: { rules: { matches: { headers?: Record<string, unknown>[] }[] }[] } };
            delete bad.spec.rules[0].matches[0].headers![0].value;
            assert.notDeepStrictEqual(validateObject(bad as unknown as Record<string, unknown>).problems, []);
        });
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
        assert.deepStrictEqual(c.steps, [
            { setWeight: 10 },
            { pause: { duration: "10m" } },
            { setWeight: 30 },
            { pause: { duration: "10m" } },
            { setWeight: 100 },
        ]);
    });

    it("holds each weight until the gate has measured it", () => {
        const pauses = (p: DeliveryPlan) => canary(p).steps.flatMap((s) => ("pause" in s && s.pause.duration ? [s.pause.duration] : []));
        // Default gate timing: initialDelay 5m + interval 1m.
        assert.deepStrictEqual(pauses(deliveryPlan(app(), { tier: "prod" })), ["6m", "6m"]);
        assert.deepStrictEqual(pauses(deliveryPlan(app(), { tier: "prod", gate: { initialDelay: "10m", interval: "30s" } })), ["630s", "630s"]);
        assert.match(
            checkOptions(app(), { tier: "prod", stepPause: "5m" })[0],
            /^stepPause = "5m": must be at least the gate's initialDelay \+ interval \(5m \+ 1m = 6m\): the first weight would end before the gate has measured it/,
        );
        assert.deepStrictEqual(checkOptions(app(), { tier: "prod", stepPause: "6m" }), []);
        assert.match(checkOptions(app(), { tier: "prod", stepPause: "8m", gate: { initialDelay: "8m", interval: "1m" } })[0], /^stepPause = "8m": .*= 9m\)/);
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
