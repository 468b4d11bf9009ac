import * as assert from "assert";
import { STAGES, STAGE_TYPES } from "../components/stage";
import { eksKubeconfig } from "../components/cluster";
import { OfflineRun } from "../tools/offline";
import { byName, hubConfig, merged, planInline, transitiveDeps } from "./harness";

describe("the four stages", () => {
    let run: OfflineRun;
    before(async () => {
        run = await planInline(hubConfig(), { stack: "hub" });
    });

    it("declares one component per stage, in ADR-056 D7 order", () => {
        const components = run.resources.filter((r) => Object.values(STAGE_TYPES).includes(r.type));
        assert.deepStrictEqual(
            components.map((c) => c.stage),
            [...STAGES],
        );
        // A component's dependsOn on another component resolves to that component's resources.
        assert.deepStrictEqual(components[0].dependsOn, []);
        for (let i = 1; i < components.length; i++) {
            const stagesWaitedFor = new Set(components[i].dependsOn.map((u) => run.resources.find((r) => r.urn === u)?.stage));
            assert.deepStrictEqual([...stagesWaitedFor], [STAGES[i - 1]], `${components[i].name} waits for ${[...stagesWaitedFor].join(", ")}`);
        }
    });

    it("makes every resource of a later stage wait for every resource of the earlier ones", () => {
        const members = (i: number) => run.resources.filter((r) => r.stage === STAGES[i] && (r.custom || r.remote));
        let pairs = 0;
        for (let later = 1; later < STAGES.length; later++) {
            for (const r of members(later)) {
                const deps = transitiveDeps(run, r.urn);
                for (let earlier = 0; earlier < later; earlier++) {
                    for (const e of members(earlier)) {
                        assert.ok(deps.has(e.urn), `${STAGES[later]}/${r.name} does not wait for ${STAGES[earlier]}/${e.name}`);
                        pairs++;
                    }
                }
            }
        }
        // The gateway read, the rollouts stage's seven and the policy stage's ClusterRole at least.
        assert.ok(pairs >= 7 + 8, `only ${pairs} pairs checked`);
    });

    it("keeps the stack's provider out of every stage and pins its cluster identity", () => {
        const { stage, inputs } = run.resources.find((r) => r.type === "pulumi:providers:kubernetes")!;
        // The EKS kubeconfig carries a token source, so it is kept secret.
        assert.deepStrictEqual([stage, inputs.clusterIdentifier, inputs.enableServerSideApply, inputs.kubeconfig], [null, "hub", "true", "[secret]"]);
    });

    it("reads the shared Gateway instead of declaring it", () => {
        const gw = byName(run, "shared-gateway");
        assert.deepStrictEqual([gw.read, gw.stage, run.outputs.sharedGateway], [true, "gateway", "gateway-system/internal"]);
    });

    it("fails the preview when the shared Gateway does not exist", async () => {
        await assert.rejects(planInline(hubConfig(), { world: { objects: {} } }), /Gateway gateway-system\/internal does not exist/);
    });

    it("fails the preview when the live Gateway lacks a listener the stack names", async () => {
        const world = {
            objects: { "gateway.networking.k8s.io/v1/Gateway/gateway-system/internal": { spec: { listeners: [{ name: "http" }, { name: "grpc" }] } } },
        };
        await assert.rejects(
            planInline(merged(hubConfig(), { spokes: [{ name: "a", tenant: "a", hostname: "a.platform.test", listener: "a" }] }), { stack: "hub", world }),
            /stack "hub": the Gateway gateway-system\/internal has no listener "https" \(gateway.listener\), "a" \(mimir.ingestGateway \/ spokes\[\]\.listener\); it has: http, grpc/,
        );
    });

    it("uses a kubeconfig context when one is configured", async () => {
        const cfg = merged(hubConfig(), { cluster: { eksClusterName: undefined, kubeconfigContext: "hub-admin" } });
        const r = await planInline(cfg);
        const { inputs } = r.resources.find((x) => x.type === "pulumi:providers:kubernetes")!;
        assert.deepStrictEqual([inputs.context, inputs.kubeconfig], ["hub-admin", undefined]);
    });
});

describe("EKS kubeconfig (pure)", () => {
    it("gets its token from the aws CLI for the named cluster and region", () => {
        const kc = eksKubeconfig({ clusterName: "platform-hub", region: "eu-west-1", endpoint: "https://x.invalid", certificateAuthority: "Y2E=" }) as {
            clusters: { cluster: { server: string } }[];
            users: { user: { exec: { command: string; args: string[]; apiVersion: string } } }[];
        };
        assert.strictEqual(kc.clusters[0].cluster.server, "https://x.invalid");
        const exec = kc.users[0].user.exec;
        assert.deepStrictEqual(
            [exec.apiVersion, exec.command, ...exec.args.slice(0, 6)],
            ["client.authentication.k8s.io/v1beta1", "aws", "eks", "get-token", "--cluster-name", "platform-hub", "--region", "eu-west-1"],
        );
    });
});
