/**
 * Runs verify's checks against the fake API server (fakeApiServer.ts) in a test file: every test
 * fails if verify sent anything but a GET or an access review.
 */
import * as assert from "assert";
import type { AddonConfig } from "../../stacks/config";
import { connect } from "../../tools/verify/cluster";
import { GROUPS, defaultOptions, runVerify } from "../../tools/verify/index";
import type { CheckResult } from "../../tools/verify/report";
import { FakeApiServer, startFakeApiServer } from "./fakeApiServer";
import { ClusterWorld, NOW } from "./world";

export type Results = Map<string, CheckResult>;

/** Registers the server's teardown in the calling `describe`; returns how to run verify against a world. */
export function useFakeCluster() {
    let server: FakeApiServer | undefined;
    afterEach(async () => {
        if (server) {
            const { violations } = server;
            await server.close();
            server = undefined;
            assert.deepStrictEqual(violations, [], "verify sent a write to the API server");
        }
    });
    const start = async (world: ClusterWorld): Promise<FakeApiServer> => {
        await server?.close();
        server = await startFakeApiServer(world);
        return server;
    };
    const verify = async (config: AddonConfig, world: ClusterWorld, options: Parameters<typeof defaultOptions>[0] = {}): Promise<Results> => {
        const s = await start(world);
        const cluster = await connect({ connection: config.cluster.connection, kubeconfig: s.kubeconfig, context: "fake" });
        const results = await runVerify(config, cluster, defaultOptions({ now: () => NOW, sleep: async () => undefined, ...options }));
        return new Map(results.map((r) => [r.id, r]));
    };
    return { verify, start, server: (): FakeApiServer => server! };
}

export const status = (results: Results, id: string): string => {
    const r = results.get(id);
    assert.ok(r, `no result for ${id}`);
    return r.status;
};
export const found = (results: Results, id: string): string => (results.get(id)?.findings ?? []).map((f) => `${f.object}: ${f.found}`).join("\n");
export const expectFail = (results: Results, id: string, pattern: RegExp) => {
    assert.strictEqual(status(results, id), "FAIL", `${id} should fail`);
    assert.match(found(results, id), pattern);
};
export const expectPass = (results: Results, id: string) =>
    assert.strictEqual(status(results, id), "PASS", `${id}: ${found(results, id)} ${results.get(id)?.note ?? ""}`);
export const notPassing = (results: Results) =>
    [...results.values()].filter((r) => r.status !== "PASS").map((r) => `${r.status} ${r.id}: ${found(results, r.id)} ${r.note ?? ""}`.trim());
export const ALL_IDS = GROUPS.flatMap((g) => g.ids);
