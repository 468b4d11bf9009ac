import * as assert from "assert";
import { policyContext, tierAdmission, clusterPolicies, tierMessage } from "../components/policy";
import type { AddonConfig } from "../stacks/config";
import { hubProblems, parseHub, REGULATED } from "./stackConfig";

/** The stack file's problems, each as `<key> <given> <allowed>`. */
const problemsOf = (patch: Record<string, unknown>) => hubProblems(patch).map((p) => `${p.key} ${p.given} ${p.allowed}`);

/**
 * Tier admission (ADR-056 D3): the rules read from the stack's rendered strategies. What Kyverno
 * decides with them (every component's Rollout admitted, a Rollout without its class's gate or
 * regulated's approval refused or reported) is the end-to-end scenario engine-kyverno-cli's.
 */

const withRegulated = (delivery: Record<string, unknown> = {}, policy: Record<string, unknown> = {}): AddonConfig =>
    parseHub({ policy: { regulated: REGULATED, ...policy }, delivery });
const classOf = (cfg: AddonConfig, prodClass: "standard" | "regulated") => policyContext(cfg).tiers!.classes.find((c) => c.prodClass === prodClass)!;

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
                preview: { suffix: "-preview" },
            });
            const args = regulated.gateArgs.map((a) => `${a.name}=${a.value}`);
            assert.deepStrictEqual(args, ["namespace=metadata.namespace", "rollout=metadata.name", "canary-hash=Latest"]);
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
            const analyses = classOf(cfg, "standard").blueGreen?.analyses.map((a) => a.field);
            assert.deepStrictEqual(analyses, ["prePromotionAnalysis", "postPromotionAnalysis"]);
            assert.deepStrictEqual(classOf(cfg, "regulated").components, { canary: "prod-regulated-canary" });
            assert.strictEqual(classOf(cfg, "standard").blueGreen?.preview.header, "x-rollouts-preview");
            assert.match(
                tierMessage(classOf(cfg, "regulated"), "blueGreen"),
                /offers \(canary\); add components: \[<npm run delivery output>\/prod-regulated-canary\]/,
            );
        });

        it("allows before the approval no weight above the stack's own regulated steps", () => {
            const cases: [number[] | undefined, number][] = [
                [undefined, 50],
                [[10, 40, 100], 40],
                [[5, 100], 5],
            ];
            for (const [steps, max] of cases) {
                const cfg = withRegulated(steps ? { prod: { regulated: { steps } } } : {});
                assert.strictEqual(classOf(cfg, "regulated").canary?.maxBeforeApproval, max, JSON.stringify(steps));
            }
            assert.strictEqual(classOf(withRegulated(), "standard").canary?.maxBeforeApproval, undefined);
        });

        it("has no regulated rule without policy.regulated, and none at all without prod classes", () => {
            const classes = policyContext(parseHub()).tiers!.classes.map((c) => c.prodClass);
            assert.deepStrictEqual(classes, ["standard"]);
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

        it("writes a ClusterPolicy Kyverno accepts for a shape the class does not offer: the rule refuses it whole, with no bare literal variable", () => {
            // Kyverno refuses a policy whose variable is `{{ \`false\` }}` (e2e engine-kyverno-cli, the samples' variant).
            const only = withRegulated({ prod: { regulated: { shapes: ["canary"] } } }, { kyvernoApi: "kyverno.io/v1" });
            const policy = clusterPolicies(only.policy, policyContext(only)).find((p) => p.metadata.name === "require-prod-regulated-delivery")!;
            const blueGreen = policy.spec.rules.find((r) => r.name.includes("bluegreen"))!;
            assert.doesNotMatch(JSON.stringify(policy), /\{\{ `(true|false)` \}\}/);
            assert.deepStrictEqual(blueGreen.validate?.deny?.conditions, {
                all: [{ key: "{{ request.object.spec.strategy.blueGreen != `null` }}", operator: "Equals", value: true }],
            });
        });
    });
});
