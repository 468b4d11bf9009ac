import * as assert from "assert";
import { CanaryStrategy, BlueGreenStrategy, DELIVERY_DEFAULTS, DeliveryPlan, deliveryPlan, AppSpec } from "../components/delivery";
import { stackStrategies } from "../components/delivery/config";
import { AddonConfig } from "../stacks/config";
import { whole } from "./harness";
import { REGULATED, configError, parseHub, problemFor } from "./stackConfig";

const app: AppSpec = {
    name: "checkout",
    namespace: "shop",
    port: 8080,
    route: { name: "checkout", gateway: { name: "internal", namespace: "gateway-system", listener: "https" }, hostnames: ["checkout.shop.test"] },
    slo: { service: "checkout", name: "availability" },
};
const plans = (cfg: AddonConfig): Map<string, DeliveryPlan> =>
    new Map(stackStrategies(cfg).map((s) => [s.id, deliveryPlan(s.routed ? app : { ...app, route: undefined }, s.options)]));
const canary = (p: DeliveryPlan | undefined) => (p!.strategy as CanaryStrategy).canary;
const weights = (p: DeliveryPlan | undefined) => canary(p).steps.flatMap((s) => ("setWeight" in s ? [s.setWeight] : []));

describe("delivery configuration (ADR-056 D3)", () => {
    it("defaults to the declaration, with the pause the cluster's gate timing needs", () => {
        const d = parseHub().delivery;
        for (const tier of ["dev", "test", "preprod"] as const) {
            assert.deepStrictEqual(d[tier], DELIVERY_DEFAULTS[tier]);
        }
        for (const prodClass of ["standard", "regulated"] as const) {
            assert.deepStrictEqual(d.prod[prodClass], { ...DELIVERY_DEFAULTS.prod[prodClass], stepPause: "6m" });
        }
        assert.strictEqual(parseHub({ analysis: { initialDelay: "8m", interval: "2m" } }).delivery.prod.standard.stepPause, "10m");
    });

    it("configures every lower tier, and each shape of each class the stack has groups for", () => {
        assert.deepStrictEqual(
            stackStrategies(parseHub()).map((s) => s.id),
            ["dev-canary", "test-canary", "preprod-canary", "prod-standard-canary", "prod-standard-blueGreen"],
            "no policy.regulated: no regulated strategy",
        );
        // With policy.regulated, both regulated shapes follow: test/delivery-components.test.ts, the fixture hub's.
        const only = parseHub({
            policy: { regulated: REGULATED },
            delivery: { prod: { standard: { shapes: ["canary"] }, regulated: { shapes: ["blueGreen"] } }, dev: { trafficRouting: false } },
        });
        const ids = stackStrategies(only);
        assert.strictEqual(
            ids.map((s) => `${s.id}:${s.routed}`).join(" "),
            "dev-canary:false test-canary:true preprod-canary:true prod-standard-canary:true prod-regulated-blueGreen:true",
        );
    });

    it("renders the default strategies exactly as the library's defaults", () => {
        const p = plans(parseHub({ policy: { regulated: REGULATED } }));
        const lib = (opts: Parameters<typeof deliveryPlan>[1]) => deliveryPlan(app, opts).strategy;
        assert.deepStrictEqual(p.get("prod-standard-canary")!.strategy, lib({ tier: "prod" }));
        assert.deepStrictEqual(p.get("prod-standard-blueGreen")!.strategy, lib({ tier: "prod", shape: "blueGreen" }));
        assert.deepStrictEqual(p.get("prod-regulated-canary")!.strategy, lib({ tier: "prod", prodClass: "regulated" }));
        assert.deepStrictEqual(p.get("dev-canary")!.strategy, lib({ tier: "dev" }));
    });

    it("changes a tier from the stack file alone", () => {
        const cfg = parseHub({
            policy: { regulated: REGULATED },
            delivery: { prod: { standard: { steps: [10, 20, 50, 100], stepPause: "15m" }, regulated: { steps: ["5", "100"] } } },
        });
        const p = plans(cfg);
        assert.deepStrictEqual(weights(p.get("prod-standard-canary")), [10, 20, 50, 100]);
        const pauses = canary(p.get("prod-standard-canary")).steps.flatMap((s) => ("pause" in s ? [s.pause.duration] : []));
        assert.deepStrictEqual(pauses, ["15m", "15m", "15m"]);
        assert.deepStrictEqual(weights(p.get("prod-regulated-canary")), [5, 100], "the Pulumi CLI's text weights are read as numbers");
        const steps = canary(p.get("prod-regulated-canary")).steps;
        assert.deepStrictEqual(steps.slice(-2), [{ pause: {} }, { setWeight: 100 }], "regulated keeps its approval before 100%");
    });

    it("turns the approval on for standard and the freeze off where the stack says", () => {
        const p = plans(
            parseHub({
                delivery: { prod: { standard: { autoPromotion: false, errorBudgetFreeze: false, previewGate: "header", previewHeader: "x-shop-preview" } } },
            }),
        );
        const c = canary(p.get("prod-standard-canary"));
        assert.deepStrictEqual(c.steps.slice(-2), [{ pause: {} }, { setWeight: 100 }]);
        assert.ok(!JSON.stringify(c).includes("error-budget"), "no freeze although the app has an SLO");
        const bg = (p.get("prod-standard-blueGreen")!.strategy as BlueGreenStrategy).blueGreen;
        assert.strictEqual(bg.autoPromotionEnabled, false);
        assert.match(JSON.stringify(p.get("prod-standard-blueGreen")!.httpRoute), /"name":"x-shop-preview"/);
    });

    describe("refuses what the library refuses, naming stack, key, value and what is allowed", () => {
        const prod = (cls: string, d: Record<string, unknown>, rest: Record<string, unknown> = {}) => ({ ...rest, delivery: { prod: { [cls]: d } } });
        const REFUSED: [Record<string, unknown>, string, RegExp, string?][] = [
            [prod("standard", { steps: [50, 25, 100] }), "delivery.prod.standard.steps", /^must be a list of 2 to 20 ascending whole/, "[50,25,100]"],
            [prod("regulated", { steps: ["half", 100] }), "delivery.prod.regulated.steps", /whole percentages/],
            [prod("regulated", { steps: whole(25) }), "delivery.prod.regulated.steps", /must be a list of/],
            [prod("standard", { steps: whole([]) }), "delivery.prod.standard.steps", /ascending/],
            // A pause shorter than the gate needs, with this cluster's timing.
            [
                prod("standard", { stepPause: "5m" }),
                "delivery.prod.standard.stepPause",
                /at least the gate's initialDelay \+ interval \(5m \+ 1m = 6m\)/,
                '"5m"',
            ],
            [prod("standard", { stepPause: "8m" }, { analysis: { initialDelay: "9m" } }), "delivery.prod.standard.stepPause", /\(9m \+ 1m = 10m\)/],
            [prod("standard", { stepPause: "5 minutes" }), "delivery.prod.standard.stepPause", /a duration such as 30s/],
            [prod("regulated", { autoPromotion: true }), "delivery.prod.regulated.autoPromotion", /must be false for prod \/ regulated/],
            [prod("standard", { step: [10, 100] }), "delivery.prod.standard.step", /did you mean steps/],
            [prod("standard", { shapes: ["linear"] }), "delivery.prod.standard.shapes[0]", /canary, blueGreen/],
            [prod("standard", { shapes: whole([]) }), "delivery.prod.standard.shapes", /1 to 2 entries/],
            [prod("standard", { previewGate: "header", previewHeader: "x preview" }), "delivery.prod.standard.previewHeader", /header name/],
            [prod("standard", { previewGate: "cookie" }), "delivery.prod.standard.previewGate", /none, header/],
            [{ delivery: { staging: {} } }, "delivery.staging", /dev, test, preprod, prod/],
            [prod("standard", { steps: [100] }), "delivery.prod.standard.steps", /^must be a list of 2 to 20 ascending/, "[100]"],
            [prod("standard", { steps: Array.from({ length: 21 }, (_x, i) => i + 80) }), "delivery.prod.standard.steps", /2 to 20 ascending/],
            [prod("standard", { previewHeader: "x-shop" }), "delivery.prod.standard.previewHeader", /only applies with .*previewGate: header/],
            [prod("regulated", { steps: [10, 100] }), "delivery.prod.regulated", /without policy.regulated: a regulated tier needs its approver/],
            [{ delivery: { preprod: { name: "Staging" } } }, "delivery.preprod.name", /a DNS label/, '"Staging"'],
            [{ delivery: { test: { name: "prod-standard" } } }, "delivery.test.name", /not ending in -standard or -regulated/],
            [{ delivery: { dev: { name: "qa" }, test: { name: "qa" } } }, "delivery.test.name", /"qa" is also delivery.dev.name/],
            [{ delivery: { preprod: { name: "prod" }, prod: { name: "live" } } }, "delivery.preprod.name", /"prod" is also the ADR-056 tier prod/],
        ];
        for (const [patch, key, allowed, given] of REFUSED) {
            it(`${key}: ${allowed.source.slice(0, 60)}`, () => {
                const p = problemFor(patch, key, allowed);
                if (given !== undefined) {
                    assert.strictEqual(p.given, given);
                    assert.ok(configError(() => parseHub(patch)).message.includes(`argo-rollouts-addon:${key} = ${given}: `));
                }
            });
        }
    });
});
