import * as assert from "assert";
import { stackStrategies } from "../components/delivery/config";
import { componentPlan } from "../components/delivery/kustomize";
import type { TierStrategy } from "../components/delivery";
import { POLICY_NAMES, PolicyContext, policyContext, tierAdmission, tierMessage } from "../components/policy";
import type { AddonConfig } from "../stacks/config";
import { DEV, Obj, Outcome, PROD, REGULATED, REGULATED_PROD, Request, config, sampleRollout, viaCel, viaClusterPolicy } from "./admissionModel";
import type { Json } from "./kyvernoCel";
import { ConfigError } from "../components/config";

/** The stack file's problems, each as `<key> <given> <allowed>`. */
function problemsOf(patch: Record<string, unknown>): string[] {
    try {
        config(patch);
    } catch (err) {
        assert.ok(err instanceof ConfigError, String(err));
        return err.problems.map((p) => `${p.key} ${p.given} ${p.allowed}`);
    }
    return [];
}

/**
 * Tier admission (ADR-056 D3): the rules read from the stack's rendered strategies, and what both
 * restated Kyverno engines decide with them: every component's Rollout is admitted, a Rollout
 * without its class's gate (or regulated's approval) is refused (Enforce) or reported (Audit).
 */

const withRegulated = (delivery: Record<string, unknown> = {}, policy: Record<string, unknown> = {}): AddonConfig =>
    config({ policy: { regulated: REGULATED, ...policy }, delivery });
const classOf = (cfg: AddonConfig, prodClass: "standard" | "regulated") => policyContext(cfg).tiers!.classes.find((c) => c.prodClass === prodClass)!;

/** A Rollout carrying a strategy as the component patches it in (its `add /spec/strategy`). */
const withStrategy = (strategy: unknown, namespace = "shop"): Obj => ({
    ...sampleRollout({}, namespace),
    spec: { ...sampleRollout({}, namespace).spec, strategy: strategy as Json },
});
const strategyOf = (cfg: AddonConfig, id: string): Json =>
    componentPlan(stackStrategies(cfg).find((s: TierStrategy) => s.id === id)!).strategy as unknown as Json;

const ENGINES = [
    { label: "policies.kyverno.io/v1 (CEL)", run: (cfg: AddonConfig, r: Request, ctx: PolicyContext) => viaCel(cfg.policy, r, ctx) },
    { label: "kyverno.io/v1 (JMESPath)", run: (cfg: AddonConfig, r: Request, ctx: PolicyContext) => viaClusterPolicy(cfg.policy, r, ctx) },
];

describe("tier admission", () => {
    describe("what the rules check, read from the rendered strategies", () => {
        it("the shared gates, and regulated's approval, by the templates' names", () => {
            const cfg = withRegulated();
            const standard = classOf(cfg, "standard");
            const regulated = classOf(cfg, "regulated");
            assert.deepStrictEqual(standard.canary, { templates: ["argo-rollouts-addon-success-rate"], startingSteps: [1, 2] });
            assert.deepStrictEqual(standard.blueGreen, {
                analyses: [{ field: "postPromotionAnalysis", templates: ["argo-rollouts-addon-success-rate-finite"] }],
                manualPromotion: false,
            });
            assert.deepStrictEqual(regulated.canary?.tail, [{ pause: "indefinite" }, { setWeight: 100 }]);
            assert.strictEqual(regulated.blueGreen?.manualPromotion, true);
            assert.deepStrictEqual([standard.action, regulated.action], ["Audit", "Enforce"]);
            assert.deepStrictEqual(regulated.components, { canary: "prod-regulated-canary", blueGreen: "prod-regulated-blueGreen" });
        });

        it("follows the stack file: the freeze off leaves one starting step, a preview gate adds the pre-promotion gate, shapes name the components", () => {
            const cfg = withRegulated({
                prod: { standard: { errorBudgetFreeze: false, previewGate: "header" }, regulated: { shapes: ["canary"], steps: [10, 40, 100] } },
            });
            assert.deepStrictEqual(classOf(cfg, "standard").canary?.startingSteps, [1]);
            assert.deepStrictEqual(
                classOf(cfg, "standard").blueGreen?.analyses.map((a) => a.field),
                ["prePromotionAnalysis", "postPromotionAnalysis"],
            );
            assert.deepStrictEqual(classOf(cfg, "regulated").components, { canary: "prod-regulated-canary" });
            assert.match(
                tierMessage(classOf(cfg, "regulated"), "blueGreen"),
                /offers \(canary\); add components: \[<npm run delivery output>\/prod-regulated-canary\]/,
            );
        });

        it("has no regulated rule without policy.regulated, and none at all without prod classes", () => {
            assert.deepStrictEqual(
                policyContext(config()).tiers!.classes.map((c) => c.prodClass),
                ["standard"],
            );
            assert.deepStrictEqual(tierAdmission([]).classes, []);
        });

        it("standard is Enforce when the stack asks for it; a bad value is refused by its key", () => {
            assert.strictEqual(classOf(withRegulated({ prod: { standard: { admission: "Enforce" } } }), "standard").action, "Enforce");
            const problems = problemsOf({ delivery: { prod: { standard: { admission: "Deny" } } } });
            assert.ok(
                problems.some((p) => p.includes("delivery.prod.standard.admission") && p.includes("Deny") && /Audit, Enforce/.test(p)),
                problems.join("\n"),
            );
            const regulatedKey = problemsOf({ delivery: { prod: { regulated: { admission: "Audit" } } } });
            assert.ok(
                regulatedKey.some((p) => p.includes("delivery.prod.regulated") && p.includes("admission")),
                `regulated has no admission key: ${regulatedKey.join("\n")}`,
            );
        });
    });

    for (const engine of ENGINES) {
        describe(`decided in ${engine.label}`, () => {
            const cfg = withRegulated();
            const ctx = policyContext(cfg);
            const decide = (object: Obj, namespaceLabels: Record<string, string>, more: Partial<Request> = {}): Outcome =>
                engine.run(cfg, { object, namespaceLabels, ...more }, ctx);
            const std = classOf(cfg, "standard");
            const reg = classOf(cfg, "regulated");
            // The tier rules' messages only: the approval guard also judges a create in a regulated namespace.
            const tier = (m: string) => m.includes("<npm run delivery output>");
            const tierMessages = (o: Outcome) => ({ denied: o.denied.filter(tier), audited: o.audited.filter(tier) });

            it("admits every rendered prod component's Rollout in its class's namespaces, and regulated ones in standard namespaces too", () => {
                for (const s of stackStrategies(cfg).filter((x) => x.tier === "prod")) {
                    const labels = s.prodClass === "regulated" ? REGULATED_PROD : PROD;
                    assert.deepStrictEqual(tierMessages(decide(withStrategy(strategyOf(cfg, s.id)), labels)), { denied: [], audited: [] }, s.id);
                    if (s.prodClass === "regulated") {
                        assert.deepStrictEqual(
                            tierMessages(decide(withStrategy(strategyOf(cfg, s.id)), PROD)),
                            { denied: [], audited: [] },
                            `${s.id} in standard`,
                        );
                    }
                }
            });

            it("leaves the lower tiers free", () => {
                const bare = withStrategy({ canary: { maxSurge: 1, steps: [{ setWeight: 100 }] } });
                const o = decide(bare, DEV);
                assert.ok(!o.applied.includes(POLICY_NAMES.tierStandard) && !o.applied.includes(POLICY_NAMES.tierRegulated));
                assert.deepStrictEqual(tierMessages(o), { denied: [], audited: [] });
            });

            it("reports (Audit) a standard canary without the gate, and refuses it in a regulated namespace", () => {
                const bare = withStrategy({ canary: { maxSurge: 1, steps: [{ setWeight: 25 }, { pause: { duration: "6m" } }, { setWeight: 100 }] } });
                assert.deepStrictEqual(tierMessages(decide(bare, PROD)), { denied: [], audited: [tierMessage(std, "canary")] });
                assert.deepStrictEqual(tierMessages(decide(bare, REGULATED_PROD)), {
                    denied: [tierMessage(reg, "canary")],
                    audited: [tierMessage(std, "canary")],
                });
            });

            const gated = (canary: Record<string, Json>) =>
                withStrategy({ canary: { maxSurge: 1, ...(strategyOf(cfg, "prod-regulated-canary") as { canary: Record<string, Json> }).canary, ...canary } });
            const analysis = (strategyOf(cfg, "prod-regulated-canary") as { canary: { analysis: Record<string, Json> } }).canary.analysis;
            for (const [label, rollout] of [
                ["the gate starting after the second weight", gated({ analysis: { ...analysis, startingStep: 3 } })],
                ["the gate before any step", gated({ analysis: { ...analysis, startingStep: 0 } })],
                [
                    "a namespaced template of the gate's name",
                    gated({ analysis: { ...analysis, templates: [{ templateName: "argo-rollouts-addon-success-rate" }] } }),
                ],
                ["another template", gated({ analysis: { ...analysis, templates: [{ templateName: "my-own-check", clusterScope: true }] } })],
                [
                    "a timed pause before 100%",
                    gated({ steps: [{ setWeight: 25 }, { pause: { duration: "6m" } }, { setWeight: 50 }, { pause: { duration: "6m" } }, { setWeight: 100 }] }),
                ],
                ["no step to 100% after the approval", gated({ steps: [{ setWeight: 25 }, { pause: {} }, { setWeight: 50 }] })],
            ] as const) {
                it(`refuses a regulated canary with ${label}`, () => {
                    assert.deepStrictEqual(tierMessages(decide(rollout, REGULATED_PROD)).denied, [tierMessage(reg, "canary")]);
                });
            }

            it("admits a regulated canary behind the error-budget freeze (the gate from the step after it)", () => {
                const frozen = gated({
                    steps: [
                        { analysis: { templates: [{ templateName: "argo-rollouts-addon-error-budget-wait", clusterScope: true }], args: [] } },
                        { setWeight: 25 },
                        { pause: { duration: "6m" } },
                        { setWeight: 50 },
                        { pause: {} },
                        { setWeight: 100 },
                    ],
                    analysis: { ...analysis, startingStep: 2 },
                });
                assert.deepStrictEqual(tierMessages(decide(frozen, REGULATED_PROD)), { denied: [], audited: [] });
            });

            it("refuses a regulated blue/green that promotes itself, and reports a standard one without the finite gate", () => {
                const bg = strategyOf(cfg, "prod-regulated-blueGreen") as { blueGreen: Record<string, Json> };
                assert.deepStrictEqual(
                    tierMessages(decide(withStrategy({ blueGreen: { ...bg.blueGreen, autoPromotionEnabled: true } }), REGULATED_PROD)).denied,
                    [tierMessage(reg, "blueGreen")],
                );
                const { postPromotionAnalysis: _gate, ...ungated } = (strategyOf(cfg, "prod-standard-blueGreen") as { blueGreen: Record<string, Json> })
                    .blueGreen;
                assert.deepStrictEqual(tierMessages(decide(withStrategy({ blueGreen: ungated }), PROD)), {
                    denied: [],
                    audited: [tierMessage(std, "blueGreen")],
                });
            });

            it("never stops the controller's own writes", () => {
                const bare = withStrategy({ canary: { maxSurge: 1, steps: [{ setWeight: 100 }] } });
                const o = decide(bare, REGULATED_PROD, { operation: "UPDATE", oldObject: bare, username: "system:serviceaccount:argo-rollouts:argo-rollouts" });
                assert.deepStrictEqual(tierMessages(o).denied, []);
            });

            it("refuses standard too when the stack enforces it; policy.validationAction Audit only reports regulated", () => {
                const bare = withStrategy({ canary: { maxSurge: 1, steps: [{ setWeight: 100 }] } });
                const enforcing = withRegulated({ prod: { standard: { admission: "Enforce" } } });
                assert.deepStrictEqual(tierMessages(engine.run(enforcing, { object: bare, namespaceLabels: PROD }, policyContext(enforcing))).denied, [
                    tierMessage(std, "canary"),
                ]);
                const auditing = withRegulated({}, { validationAction: "Audit" });
                const o = engine.run(auditing, { object: bare, namespaceLabels: REGULATED_PROD }, policyContext(auditing));
                assert.deepStrictEqual(tierMessages(o), { denied: [], audited: [tierMessage(std, "canary"), tierMessage(reg, "canary")].sort() });
            });

            it("changes with the stack file: a regulated class offering canary only refuses blue/green and names the canary component", () => {
                const only = withRegulated({ prod: { regulated: { shapes: ["canary"] } } });
                const bg = strategyOf(cfg, "prod-regulated-blueGreen");
                const o = engine.run(only, { object: withStrategy(bg), namespaceLabels: REGULATED_PROD }, policyContext(only));
                assert.deepStrictEqual(tierMessages(o).denied, [tierMessage(classOf(only, "regulated"), "blueGreen")]);
                assert.match(tierMessages(o).denied[0], /prod-regulated-canary/);
            });
        });
    }
});
