import * as assert from "assert";
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
import { parseHub } from "./stackConfig";
import { templateName } from "../components/argoRollouts";
import { clusterAnalysisTemplateSpec, errorBudgetTemplates, sharedTemplates } from "../components/rollouts/analysis";

const route = { name: "checkout", gateway: { name: "shared", namespace: "gateway-system", listener: "https" }, hostnames: ["checkout.platform.test"] };
const app = (patch: Partial<AppSpec> = {}): AppSpec => ({ name: "checkout", namespace: "shop", port: 8080, route, ...patch });
const canary = (p: DeliveryPlan) => (p.strategy as CanaryStrategy).canary;
const ROUTING = { plugins: { "argoproj-labs/gatewayAPI": { httpRoute: "checkout" } } };
/** The metric gates' arguments, read from the Rollout itself; Latest: the new ReplicaSet (blue/green: which the preview Service selects before the switch). */
const GATE_ARGS = [
    { name: "namespace", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
    { name: "rollout", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    { name: "canary-hash", valueFrom: { podTemplateHashValue: "Latest" } },
];
/** The finite success-rate gate a blue/green app runs on its promoted version (and, with a preview gate, on the preview first). */
const FINITE_GATE = { templates: [{ templateName: templateName("success-rate-finite"), clusterScope: true }], args: GATE_ARGS };

/**
 * Argo Rollouts v1.9.0 refuses a Rollout (InvalidSpec, "runs indefinitely") whose step or pre/post-
 * promotion analysis has a metric without an effective count (validation_references.go
 * ValidateAnalysisTemplateWithType); Metric.EffectiveCount (analysis_types.go): no count and no
 * interval is 1, no count with an interval is none. The real controller decides it in e2e 25-delivery.
 */
const effectiveCount = (m: { count?: number; interval?: string }): number | undefined => m.count || (m.interval ? undefined : 1);

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
    { hostname: "checkout-preview.platform.test" },
    { hostname: "checkout-preview.platform.test", gateway: { name: "internal", namespace: "gateway-system", listener: "previews" } },
];

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
                        if ((shape === "canary" && !a.route) || (shape === "blueGreen" && steps)) continue;
                        for (const previewGate of shape === "blueGreen" && a.route ? PREVIEW_GATES : [undefined]) {
                            out.push({
                                label: `prod ${prodClass} ${shape}, ${appLabel}, steps ${steps ? steps.join("/") : "default"}${shape === "blueGreen" ? `, preview gate ${JSON.stringify(previewGate) ?? "none"}` : ""}`,
                                plan: deliveryPlan(a, { tier, prodClass, shape, steps, previewGate }),
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
/** A route's backend Service, and its one path-only rule (every path of the app's hostnames). */
const backend = (name: string, weight = 100) => ({ group: "", kind: "Service", name, port: 80, weight });
const routeRules = (...backendRefs: ReturnType<typeof backend>[]) => [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs }];

describe("delivery strategy library", () => {
    describe("every tier and class", () => {
        for (const tier of TIERS.filter((t) => t !== "prod")) {
            for (const routed of [true, false]) {
                it(`${tier} ${routed ? "with" : "without"} a route: trivial auto-promoting canary, no analysis`, () => {
                    const p = deliveryPlan(app(routed ? {} : { route: undefined }), { tier });
                    const routing = { canaryService: "checkout-canary", stableService: "checkout-stable", trafficRouting: ROUTING };
                    assert.deepStrictEqual(p.strategy, { canary: { maxSurge: 1, maxUnavailable: 0, steps: [{ setWeight: 100 }], ...(routed ? routing : {}) } });
                    assert.strictEqual(p.services.map((s) => s.metadata.name).join(), routed ? "checkout-stable,checkout-canary" : "");
                    assert.strictEqual(p.httpRoute === undefined, !routed);
                });
            }
        }

        for (const prodClass of PROD_CLASSES) {
            for (const shape of SHAPES) {
                for (const budget of ["none", "slo", "critical"] as const) {
                    it(`prod ${prodClass} ${shape}, error budget: ${budget}`, () => {
                        const a = app(budget === "none" ? {} : { slo: { service: "checkout", name: "availability" }, critical: budget === "critical" });
                        const p = deliveryPlan(a, { tier: "prod", prodClass, shape });
                        const freeze = JSON.stringify(p.strategy).includes("error-budget");
                        assert.strictEqual(freeze, budget === "slo", "the freeze applies to non-critical apps with an SLO only");
                        if (shape === "canary") {
                            const c = canary(p);
                            assert.deepStrictEqual([c.stableService, c.canaryService, c.trafficRouting], ["checkout-stable", "checkout-canary", ROUTING]);
                            const weights = c.steps.filter((s): s is { setWeight: number } => "setWeight" in s).map((s) => s.setWeight);
                            assert.deepStrictEqual(weights, DELIVERY_DEFAULTS.prod[prodClass].steps, "the delivery section's default weights");
                            const approvals = c.steps.flatMap((s, i) => ("pause" in s && s.pause.duration === undefined ? [c.steps[i + 1]] : []));
                            assert.deepStrictEqual(approvals, prodClass === "regulated" ? [{ setWeight: 100 }] : [], "approval right before full promotion");
                            // The background gate starts on the step after the first setWeight.
                            assert.deepStrictEqual(c.analysis, {
                                templates: [{ templateName: templateName("success-rate"), clusterScope: true }],
                                args: GATE_ARGS,
                                startingStep: c.steps.findIndex((s) => "setWeight" in s) + 1,
                            });
                            if (budget === "slo") {
                                const first = (c.steps[0] as { analysis?: AnalysisRef }).analysis;
                                const wait = [{ templateName: templateName("error-budget-wait"), clusterScope: true }];
                                assert.deepStrictEqual(first?.templates, wait, "the freeze waits for the budget before any traffic moves");
                            }
                            assert.deepStrictEqual(p.httpRoute?.spec.rules, routeRules(backend("checkout-stable"), backend("checkout-canary", 0)));
                        } else {
                            const bg = blueGreen(p);
                            const services = [bg.activeService, bg.previewService, bg.scaleDownDelaySeconds];
                            assert.deepStrictEqual(services, ["checkout-active", "checkout-preview", 30]);
                            assert.strictEqual(bg.autoPromotionEnabled, prodClass !== "regulated");
                            // The gate measures the promoted version on production traffic: nothing routes to the preview.
                            assert.deepStrictEqual(bg.postPromotionAnalysis, FINITE_GATE);
                            // Pre-promotion only holds the freeze, which reads the app's SLO, not the preview.
                            const pre = bg.prePromotionAnalysis?.templates.map((t) => t.templateName).join();
                            assert.strictEqual(pre, budget === "slo" ? templateName("error-budget") : undefined);
                            assert.deepStrictEqual(p.httpRoute?.spec.rules, routeRules(backend("checkout-active")));
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
        const cfg = parseHub();
        // The templates the rollouts stage declares, by name.
        type Spec = { metrics: { count?: number; interval?: string }[] };
        const declared = new Map([
            ...sharedTemplates(cfg.analysis).map((t) => [t.name, (clusterAnalysisTemplateSpec(t, cfg.analysis, "http://m", "hub") as Spec).metrics] as const),
            ...errorBudgetTemplates(cfg.errorBudget, cfg.analysis).map((t) => [t.name, (t.spec("http://m", "hub") as Spec).metrics] as const),
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
                                assert.ok(effectiveCount(m) !== undefined, `${where}: ${t.templateName} runs indefinitely; the controller rejects the Rollout`);
                            }
                        }
                    }
                }
            });
        }
    });

    describe("blue/green preview gate", () => {
        const HEADER = { header: "x-rollouts-preview" };
        const plan = (gate: PreviewGate | undefined, patch: Partial<AppSpec> = {}, prodClass: "standard" | "regulated" = "standard") =>
            deliveryPlan(app(patch), { tier: "prod", shape: "blueGreen", prodClass, previewGate: gate });

        it("writes the header rule first, with every default spelled out, and keeps the path-only rule to the active Service", () => {
            const route = plan(HEADER).httpRoute!;
            assert.deepStrictEqual(route.spec.hostnames, ["checkout.platform.test"], "the app's own hostname");
            assert.deepStrictEqual(route.spec.rules, [
                {
                    matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [{ type: "Exact", name: "x-rollouts-preview", value: "true" }] }],
                    backendRefs: [backend("checkout-preview")],
                },
                ...routeRules(backend("checkout-active")),
            ]);
            assert.strictEqual(plan(HEADER).previewRoute, undefined);
        });

        it("a hostname gate leaves the app's route as it was and adds a route of the preview hostname", () => {
            const p = plan(PREVIEW_GATES[2]);
            assert.deepStrictEqual(p.httpRoute, plan(undefined).httpRoute);
            const r = p.previewRoute!;
            assert.strictEqual(r.metadata.name, "checkout-preview");
            assert.deepStrictEqual(r.spec.hostnames, ["checkout-preview.platform.test"]);
            assert.deepStrictEqual(r.spec.parentRefs, [
                { group: "gateway.networking.k8s.io", kind: "Gateway", name: "shared", namespace: "gateway-system", sectionName: "https" },
            ]);
            assert.deepStrictEqual(r.spec.rules, routeRules(backend("checkout-preview")));
            const parents = plan(PREVIEW_GATES[3]).previewRoute!.spec.parentRefs.map((x) => `${x.namespace}/${x.name}/${x.sectionName}`);
            assert.deepStrictEqual(parents, ["gateway-system/internal/previews"], "restricted at the listener");
        });

        it("keeps every rule of a blue/green route to one backend, so ArgoCD's weight rule never freezes its rules", () => {
            for (const { label, plan: p } of everyPlan().filter((x) => x.plan.shape === "blueGreen")) {
                for (const r of [p.httpRoute, p.previewRoute].filter((x): x is HttpRouteObject => x !== undefined)) {
                    assert.ok(!r.spec.rules.some((rule) => rule.backendRefs.length !== 1), `${label}: ${r.metadata.name}`);
                }
            }
        });

        it("gates the preview ReplicaSet before promotion, and the promoted version after", () => {
            for (const prodClass of PROD_CLASSES) {
                for (const gate of PREVIEW_GATES.slice(1)) {
                    const bg = blueGreen(plan(gate, {}, prodClass));
                    assert.deepStrictEqual([bg.prePromotionAnalysis, bg.postPromotionAnalysis], [FINITE_GATE, FINITE_GATE], "the post-promotion gate stays");
                }
            }
        });

        it("runs the freeze in the same pre-promotion run when it applies", () => {
            const slo = { slo: { service: "checkout", name: "availability" } };
            assert.deepStrictEqual(blueGreen(plan(HEADER, slo)).prePromotionAnalysis, {
                templates: [templateName("error-budget"), templateName("success-rate-finite")].map((t) => ({ templateName: t, clusterScope: true })),
                args: [{ name: "service", value: "checkout" }, { name: "slo", value: "availability" }, ...GATE_ARGS],
            });
            const critical = blueGreen(plan(HEADER, { ...slo, critical: true })).prePromotionAnalysis!.templates.map((t) => t.templateName);
            assert.deepStrictEqual(critical, [templateName("success-rate-finite")]);
        });

        it("says what it does", () => {
            assert.match(
                plan(HEADER).behaviour,
                /success-rate gate on the preview's test traffic \(header x-rollouts-preview: true\) before the switch, a breach aborts with the active Service untouched; then auto-promotes/,
            );
            assert.match(
                plan({ hostname: "checkout-preview.platform.test" }, {}, "regulated").behaviour,
                /\(hostname checkout-preview\.platform\.test\) before the switch.*then manual promotion/,
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
            assert.match(problems({ previewGate: { header: "x-a", hostname: "p.platform.test" } as unknown as PreviewGate })[0], /either header or hostname/);
            assert.match(problems({ previewGate: {} as unknown as PreviewGate })[0], /either header or hostname/);
            for (const header of ["", "x preview", "x-a'b", ":authority", "x".repeat(257)]) {
                assert.match(problems({ previewGate: { header } })[0], /previewGate.header must be an HTTP header name/, JSON.stringify(header));
            }
            for (const hostname of ["*.platform.test", "Preview.platform.test", "preview.platform.test.", ""]) {
                assert.match(problems({ previewGate: { hostname } })[0], /previewGate.hostname must be a single lowercase DNS name/, hostname);
            }
            assert.match(problems({ previewGate: { hostname: "checkout.platform.test" } })[0], /is one of the app's hostnames/);
            assert.deepStrictEqual(problems({ previewGate: HEADER }), []);
            assert.deepStrictEqual(problems({ previewGate: { hostname: "checkout-preview.platform.test" } }), []);
        });
    });

    it("takes configurable steps and pauses", () => {
        const c = canary(deliveryPlan(app(), { tier: "prod", steps: [10, 30, 100], stepPause: "10m" }));
        const pause = { pause: { duration: "10m" } };
        assert.deepStrictEqual(c.steps, [{ setWeight: 10 }, pause, { setWeight: 30 }, pause, { setWeight: 100 }]);
    });

    it("holds each weight until the gate has measured it", () => {
        const pauses = (p: DeliveryPlan) => canary(p).steps.flatMap((s) => ("pause" in s && s.pause.duration ? [s.pause.duration] : []));
        // Default gate timing: initialDelay 5m + interval 1m.
        assert.deepStrictEqual(pauses(deliveryPlan(app(), { tier: "prod" })), ["6m", "6m"]);
        assert.deepStrictEqual(pauses(deliveryPlan(app(), { tier: "prod", gate: { initialDelay: "10m", interval: "30s" } })), ["630s", "630s"]);
        // A shorter pause is refused: test/delivery-config.test.ts (delivery.prod.standard.stepPause, 5m and 8m).
        assert.deepStrictEqual(checkOptions(app(), { tier: "prod", stepPause: "6m" }), []);
    });

    it("refuses what the tier does not allow", () => {
        assert.match(checkOptions(app(), { tier: "dev", prodClass: "regulated" })[0], /apply to prod only/);
        assert.match(checkOptions(app({ route: undefined }), { tier: "prod" })[0], /prod canary needs the app's HTTPRoute/);
        for (const steps of [[50, 25, 100], [100]])
            assert.match(checkOptions(app(), { tier: "prod", steps })[0], RegExp(`^steps = \\[${steps}\\]: must be a list of 2 to 20 ascending`));
        assert.throws(() => deliveryPlan(app({ route: undefined }), { tier: "prod" }), /app shop\/checkout: a prod canary needs/);
        assert.deepStrictEqual(checkOptions(app({ route: undefined }), { tier: "prod", shape: "blueGreen" }), []);
    });
});
