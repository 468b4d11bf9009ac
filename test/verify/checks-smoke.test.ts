import * as assert from "assert";
import type { KubeObject } from "../../tools/verify/cluster";
import { ClusterWorld, NOW, fixture, healthyCluster, patch, setSmokeStatus, verifyConfig } from "./world";
import { expectFail, expectFails, expectPass, useFakeCluster } from "./run";

describe("verify: smoke canary", () => {
    const { verify } = useFakeCluster();
    /** The blue/green active Service selecting `hash` in place of the promoted 58d4c7f9b6. */
    const activeSelects = (world: ClusterWorld, hash: string) =>
        patch(world, "Service", "rollouts-smoke-active", (o) => JSON.parse(JSON.stringify(o).replace("58d4c7f9b6", hash)) as typeof o);
    /** A failGate stack's cluster whose smoke Rollout the controller aborted (`status`, at generation 5), with the AnalysisRun `run`. */
    const aborted = (smokeTest: Record<string, unknown>, status: string, run: KubeObject) => {
        const config = verifyConfig({ smokeTest: { ...smokeTest, failGate: true } });
        const world = healthyCluster(config);
        setSmokeStatus(world, config, fixture(status), 5);
        world.objects.push(run);
        return { config, world };
    };

    it("smoke.outcome fails when the canary is paused on an inconclusive gate", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        setSmokeStatus(world, config, fixture("smoke-status-paused-inconclusive.json"));
        const results = await verify(config, world);
        expectFail(results, "smoke.outcome", /Rollout rollouts-smoke\/rollouts-smoke: is paused, expected promoted: phase Paused \(InconclusiveAnalysisRun\)/);
    });

    it("smoke.outcome passes for failGate when the gate aborted the canary and traffic is back on stable", async () => {
        const { config, world } = aborted({}, "smoke-status-aborted.json", fixture("analysisrun-failed.json"));
        const results = await verify(config, world);
        expectPass(results, "smoke.outcome");
        assert.match(results.get("smoke.outcome")!.note!, /pod hash 7f6b8d9c55, gate runs: Background Failed/);
    });

    it("smoke.outcome fails for failGate when the run errored instead of failing, traffic stayed on the canary, or the template is not the stack's", async () => {
        const run = fixture("analysisrun-failed.json");
        const { config, world } = aborted({}, "smoke-status-aborted.json", { ...run, status: { ...(run.status as object), phase: "Error" } });
        patch(world, "HTTPRoute", "rollouts-smoke", (o) => JSON.parse(JSON.stringify(o).replace('"weight":0', '"weight":25')) as typeof o);
        let results = await verify(config, world);
        expectFail(results, "smoke.outcome", /no Background AnalysisRun of pod hash 7f6b8d9c55 Failed \(Background Error\)/);
        expectFail(results, "smoke.outcome", /HTTPRoute rollouts-smoke\/rollouts-smoke: rollouts-smoke-canary still has weight 25 after the abort/);
        // The Rollout still carries the healthy template: the last `up` with failGate did not land.
        results = await verify(config, healthyCluster(verifyConfig()));
        expectFail(results, "smoke.outcome", /its pod template is not the stack's/);
    });

    it("smoke.outcome SKIPs a promotion no gate judged (a first deploy, a fast-tracked rollback): nothing proven", async () => {
        for (const strategy of ["canary", "blueGreen"] as const) {
            const config = verifyConfig({ smokeTest: { strategy } });
            const world = healthyCluster(config);
            world.objects = world.objects.filter((o) => o.kind !== "AnalysisRun");
            const result = (await verify(config, world)).get("smoke.outcome")!;
            assert.strictEqual(result.status, "SKIP", `${strategy}: ${JSON.stringify(result)}`);
            assert.match(result.note ?? "", /^promoted, but no gate ran for revision \S+ \(pod hash 58d4c7f9b6\): nothing proven/);
        }
    });

    it("smoke.outcome (blue/green) passes when promoted: stableRS is the current hash and the active Service selects it", async () => {
        const config = verifyConfig({ smokeTest: { strategy: "blueGreen" } });
        // The healthy cluster holds one Successful run per gate (world.ts).
        const results = await verify(config, healthyCluster(config));
        expectPass(results, "smoke.outcome");
        assert.match(results.get("smoke.outcome")!.note!, /gate runs: PrePromotion Successful, PostPromotion Successful/);
    });

    it("smoke.outcome (blue/green) fails when the active Service is not on the promoted hash, or the Rollout still runs the canary strategy", async () => {
        const config = verifyConfig({ smokeTest: { strategy: "blueGreen" } });
        const world = healthyCluster(config);
        activeSelects(world, "4c8b9d7f6a");
        expectFail(
            await verify(config, world),
            "smoke.outcome",
            /Service rollouts-smoke\/rollouts-smoke-active: selects rollouts-pod-template-hash=4c8b9d7f6a, the promoted version is 58d4c7f9b6/,
        );
        expectFail(await verify(config, healthyCluster(verifyConfig())), "smoke.outcome", /its strategy is not the stack's blueGreen/);
    });

    it("smoke.outcome (blue/green) passes for failGate when the preview gate aborted it before the switch: the active Service never left stable", async () => {
        const { config, world } = aborted({ strategy: "blueGreen" }, "smoke-status-bluegreen-aborted.json", fixture("analysisrun-failed-prepromotion.json"));
        const results = await verify(config, world);
        expectPass(results, "smoke.outcome");
        assert.match(results.get("smoke.outcome")!.note!, /gate runs: PrePromotion Failed/);
    });

    it("smoke.outcome (blue/green) fails for failGate when the active Service selects the aborted version, or only another kind of run failed", async () => {
        const { config, world } = aborted({ strategy: "blueGreen" }, "smoke-status-bluegreen-aborted.json", fixture("analysisrun-failed.json"));
        activeSelects(world, "7f6b8d9c55");
        const results = await verify(config, world);
        expectFails(
            results,
            "smoke.outcome",
            /Service rollouts-smoke\/rollouts-smoke-active: selects rollouts-pod-template-hash=7f6b8d9c55, after the abort it must be back on the stable ReplicaSet 58d4c7f9b6/,
            /no PrePromotion or PostPromotion AnalysisRun of pod hash 7f6b8d9c55 Failed \(no gate runs\)/,
        );
    });

    it("smoke.outcome expects the plan the smoke stage builds: this cluster's gate timing, and blue/green's preview gate", async () => {
        const slow = verifyConfig({ analysis: { initialDelay: "8m" } });
        expectPass(await verify(slow, healthyCluster(slow)), "smoke.outcome");
        // The smoke Rollout as the default timing would pause it: each weight ends before this cluster's gate measures.
        expectFail(
            await verify(slow, healthyCluster(verifyConfig())),
            "smoke.outcome",
            /its strategy is not the stack's canary \(spec\.strategy\.canary\.steps\[1\]\.pause\.duration is "6m", the stack declares "9m"/,
        );
        const blueGreen = verifyConfig({ smokeTest: { strategy: "blueGreen" } });
        const world = healthyCluster(blueGreen);
        patch(world, "Rollout", "rollouts-smoke", (o) => {
            const spec = o.spec as { strategy: { blueGreen: Record<string, unknown> } };
            const { prePromotionAnalysis: _gate, ...rest } = spec.strategy.blueGreen;
            return { ...o, spec: { ...spec, strategy: { blueGreen: rest } } };
        });
        expectFail(await verify(blueGreen, world), "smoke.outcome", /spec\.strategy\.blueGreen\.prePromotionAnalysis is nothing/);
    });

    it("smoke.outcome waits with --smoke-timeout until the canary settles", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        const progressing = { ...fixture<Record<string, unknown>>("smoke-status-promoted.json"), phase: "Progressing", stableRS: "4c8b9d7f6a" };
        setSmokeStatus(world, config, progressing);
        let clock = NOW.getTime();
        let looks = 0;
        const results = await verify(config, world, {
            smokeTimeoutSeconds: 600,
            now: () => new Date(clock),
            sleep: async (ms) => {
                clock += ms;
                if (++looks === 3) setSmokeStatus(world, config, fixture("smoke-status-promoted.json"));
            },
        });
        expectPass(results, "smoke.outcome");
        assert.strictEqual(looks, 3);
    });
});
