import * as assert from "assert";
import { DEFAULT_STEPS, PREVIEW_HEADER } from "../components/delivery";
import { FAILING_ERROR_RATE, SMOKE_REQUESTS_PER_SECOND, SMOKE_REVISION_ANNOTATION, smokeRevision } from "../components/smoke";
import { STAGES } from "../components/stage";
import { OfflineRun } from "../tools/offline";
import { TEST_SMOKE, byName, hubConfig, merged, planInline, transitiveDeps } from "./harness";
import { hubProblems, parseHub } from "./stackConfig";
import { templateName } from "../components/argoRollouts";
import { ANALYSIS_DEFAULTS, durationSeconds } from "../components/rollouts/config";

const smoke = (patch: Record<string, unknown> = {}) => merged(hubConfig(), { smokeTest: { ...TEST_SMOKE, ...patch } });

type Ref = { templates: { templateName: string }[]; args: { name: string; valueFrom?: unknown }[] };
type RolloutSpec = {
    strategy: {
        canary: { steps: { pause?: { duration?: string } }[]; trafficRouting: unknown; analysis: { templates: { templateName: string }[] } };
        blueGreen: { activeService: string; previewService: string; autoPromotionEnabled: boolean; prePromotionAnalysis?: Ref; postPromotionAnalysis: Ref };
    };
    template: {
        metadata: { annotations: Record<string, string> };
        spec: { containers: { image: string; env: { name: string; value: string }[]; securityContext: Record<string, unknown> }[] };
    };
};
const rolloutSpec = (run: OfflineRun) => byName(run, "smoke-rollout").inputs.spec as RolloutSpec;
const loadCommand = (run: OfflineRun) =>
    (byName(run, "smoke-load").inputs.spec as { template: { spec: { containers: { image: string; command: string[] }[] } } }).template.spec.containers[0];

/** The share of the load generator's requests that carry the preview header, read from its loop. */
function previewShare(script: string): number {
    const requests = script.match(/curl [^;]*/g) ?? [];
    assert.ok(requests.length > 0, script);
    return requests.filter((r) => r.includes(` -H '${PREVIEW_HEADER}: true' `)).length / requests.length;
}

describe("smoke canary", () => {
    it("is off by default", async () => {
        const run = await planInline(hubConfig());
        assert.ok(!run.resources.some((r) => r.type.endsWith(":Rollout")));
        assert.strictEqual(run.outputs.smokeCanary, undefined);
    });

    it("needs images pinned by digest and a hostname when enabled", () => {
        const problems = hubProblems({ smokeTest: { enabled: true, image: "argoproj/rollouts-demo:blue" } });
        assert.deepStrictEqual(problems.map((p) => p.key).sort(), ["smokeTest.hostname", "smokeTest.image", "smokeTest.loadImage"]);
    });

    it("runs the canary unless told otherwise, and knows only the two strategies", () => {
        assert.strictEqual(parseHub({ smokeTest: TEST_SMOKE }).smokeTest.strategy, "canary");
        assert.throws(
            () => parseHub({ smokeTest: { ...TEST_SMOKE, strategy: "bluegreen" } }),
            /smokeTest\.strategy = "bluegreen": must be one of canary, blueGreen/,
        );
    });

    it("sends enough traffic for the gate's floor at the first canary weight", () => {
        const a = ANALYSIS_DEFAULTS;
        const perWindow = SMOKE_REQUESTS_PER_SECOND * durationSeconds(a.rateWindow) * (DEFAULT_STEPS[0] / 100);
        assert.ok(perWindow >= 4 * a.minRequests, `${perWindow} canary requests per window at ${DEFAULT_STEPS[0]}%`);
    });

    describe("enabled", () => {
        let run: OfflineRun;
        before(async () => {
            run = await planInline(smoke(), { stack: "hub" });
        });

        it("delivers a tiny app with the prod / standard canary on the shared Gateway", () => {
            const spec = rolloutSpec(run);
            assert.deepStrictEqual(spec.strategy.canary.trafficRouting, { plugins: { "argoproj-labs/gatewayAPI": { httpRoute: "rollouts-smoke" } } });
            assert.deepStrictEqual(
                spec.strategy.canary.analysis.templates.map((t) => t.templateName),
                [templateName("success-rate")],
            );
            assert.strictEqual(spec.template.spec.containers[0].image, TEST_SMOKE.image);
            assert.deepStrictEqual(spec.template.spec.containers[0].env, []);
            assert.strictEqual(spec.template.spec.containers[0].securityContext.runAsNonRoot, true);
            // The route's rules are the library's canary route (test/strategy.test.ts); its Services: 'goes with its namespace'.
            const route = byName(run, "smoke-route").inputs.spec as { parentRefs: { name: string; sectionName: string }[]; hostnames: string[] };
            assert.deepStrictEqual(
                route.parentRefs.map((p) => `${p.name}/${p.sectionName}`),
                ["internal/https"],
            );
            assert.deepStrictEqual(route.hostnames, [TEST_SMOKE.hostname]);
        });

        it("sends steady traffic through the Gateway so the gate has data, without the preview header", () => {
            assert.strictEqual(loadCommand(run).image, TEST_SMOKE.loadImage);
            assert.match(loadCommand(run).command[2], /https:\/\/smoke\.hub\.platform\.test\/color/);
            assert.strictEqual(previewShare(loadCommand(run).command[2]), 0);
        });

        it("comes after every stage", () => {
            const deps = transitiveDeps(run, byName(run, "smoke-rollout").urn);
            for (const r of run.resources.filter((x) => (STAGES as readonly string[]).includes(x.stage ?? "") && (x.custom || x.remote))) {
                assert.ok(deps.has(r.urn), `the smoke Rollout does not wait for ${r.stage}/${r.name}`);
            }
        });

        it("goes with its namespace: nothing in it is deleted on its own", () => {
            // The engine skips the delete of a resource whose deletedWith target goes in the same
            // update, so moving or turning off the canary deletes the namespace alone.
            const ns = byName(run, "smoke-namespace");
            const inside = run.resources.filter((r) => r.custom && r.parent === ns.parent && r !== ns);
            assert.deepStrictEqual(inside.map((r) => r.name).sort(), [
                "smoke-load",
                "smoke-rollout",
                "smoke-rollouts-smoke-canary",
                "smoke-rollouts-smoke-stable",
                "smoke-route",
            ]);
            for (const r of inside) {
                assert.strictEqual(r.deletedWith, ns.urn, `${r.name} is deleted on its own`);
            }
            assert.strictEqual(ns.deletedWith, null);
        });

        it("reports what to expect", () => {
            const out = run.outputs.smokeCanary as { expect: string; rollout: string; namespace: string; strategy: string };
            assert.deepStrictEqual([out.expect, out.rollout, out.namespace, out.strategy], ["promoted", "rollouts-smoke", "rollouts-smoke", "canary"]);
        });
    });

    it("holds each weight until this cluster's gate has measured it", async () => {
        // A cluster whose gate starts later (a longer initialDelay) must not promote the smoke canary
        // past a weight before its first measurement: the run would end Successful unmeasured.
        const run = await planInline(merged(smoke(), { analysis: { initialDelay: "8m", interval: "2m" } }));
        const pauses = rolloutSpec(run).strategy.canary.steps.flatMap((s) => (s.pause ? [s.pause.duration] : []));
        assert.deepStrictEqual(pauses, Array(DEFAULT_STEPS.length - 1).fill("10m"));
    });

    it("starts a fresh canary when the trigger changes, and only then", async () => {
        // The revision is a pure function of the trigger (smokeRevision), so a replan keeps it. (The
        // offline runtime plans one stack at a time: never two planInline at once.)
        const one = await planInline(smoke({ trigger: "1" }));
        const two = await planInline(smoke({ trigger: "2" }));
        const revision = (run: OfflineRun) => rolloutSpec(run).template.metadata.annotations[SMOKE_REVISION_ANNOTATION];
        assert.deepStrictEqual([revision(one), revision(two)], [smokeRevision("1"), smokeRevision("2")]);
        assert.match(revision(one), /^[a-f0-9]{8}$/);
        assert.notStrictEqual(revision(one), revision(two));
        // No provider beyond kubernetes: the revision needs no random state to survive in the stack.
        assert.ok(!one.resources.some((r) => r.type.startsWith("random:")));
    });

    describe("blue/green", () => {
        let run: OfflineRun;
        before(async () => {
            run = await planInline(smoke({ strategy: "blueGreen" }), { stack: "hub" });
        });

        it("delivers the app with the prod / standard blue/green strategy and the header preview gate", () => {
            const bg = rolloutSpec(run).strategy.blueGreen;
            assert.strictEqual(rolloutSpec(run).strategy.canary, undefined);
            assert.deepStrictEqual([bg.activeService, bg.previewService, bg.autoPromotionEnabled], ["rollouts-smoke-active", "rollouts-smoke-preview", true]);
            // The smoke app has no SLO: no freeze, only the preview gate before promotion.
            const gates = [bg.prePromotionAnalysis!, bg.postPromotionAnalysis].map((a) => a.templates.map((t) => t.templateName));
            assert.deepStrictEqual(gates, [[templateName("success-rate-finite")], [templateName("success-rate-finite")]]);
            assert.ok(byName(run, "smoke-rollouts-smoke-active") && byName(run, "smoke-rollouts-smoke-preview"));
        });

        it("routes the header to the preview and the rest of the hostname to the active Service", () => {
            type Rule = { matches: { headers?: unknown[] }[]; backendRefs: { name: string }[] };
            const route = byName(run, "smoke-route").inputs.spec as { hostnames: string[]; rules: Rule[] };
            assert.deepStrictEqual(route.hostnames, [TEST_SMOKE.hostname]);
            assert.deepStrictEqual(
                route.rules.map((r) => [r.matches[0].headers ?? [], r.backendRefs.map((b) => b.name)]),
                [
                    [[{ type: "Exact", name: PREVIEW_HEADER, value: "true" }], ["rollouts-smoke-preview"]],
                    [[], ["rollouts-smoke-active"]],
                ],
            );
        });

        it("drives the preview with every other request, production with the rest, enough for the gate's floor", () => {
            const script = loadCommand(run).command[2];
            assert.match(script, /https:\/\/smoke\.hub\.platform\.test\/color/);
            assert.strictEqual(previewShare(script), 0.5);
            const perWindow = SMOKE_REQUESTS_PER_SECOND * durationSeconds(ANALYSIS_DEFAULTS.rateWindow) * previewShare(script);
            assert.ok(perWindow >= 4 * ANALYSIS_DEFAULTS.minRequests, `${perWindow} preview requests per window`);
        });
    });

    // The preview serves half the load, half of that fails: the gate's run fails, which aborts (before
    // the active Service ever switches for blue/green: rollout/analysis.go, rollout/service.go).
    for (const strategy of ["canary", "blueGreen"]) {
        it(`makes the ${strategy} smoke version fail its gate on request`, async () => {
            const run = await planInline(smoke({ strategy, failGate: true }), { stack: "hub" });
            assert.deepStrictEqual(rolloutSpec(run).template.spec.containers[0].env, [{ name: "ERROR_RATE", value: "50" }]);
            assert.strictEqual(Number(FAILING_ERROR_RATE), 50, "half the requests fail: engine-promtool's failing case");
            assert.strictEqual((run.outputs.smokeCanary as { expect: string }).expect, "aborted");
            const gates = strategy === "canary" ? rolloutSpec(run).strategy.canary.analysis : rolloutSpec(run).strategy.blueGreen.prePromotionAnalysis;
            assert.deepStrictEqual(
                gates?.templates.map((t) => t.templateName),
                [templateName(strategy === "canary" ? "success-rate" : "success-rate-finite")],
            );
        });
    }
});
