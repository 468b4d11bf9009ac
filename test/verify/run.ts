/**
 * Runs verify's checks against the fake API server (fakeApiServer.ts) in a test file: every test
 * fails if verify sent anything but a GET or an access review.
 */
import * as assert from "assert";
import type { AddonConfig } from "../../stacks/config";
import { ResourceQuestion, connect } from "../../tools/verify/cluster";
import { ruleAllows, verifyRules } from "../../tools/verify/access";
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

/**
 * The RBAC question a request verify sent asks: `GET /api|/apis/.../<resource>[/<name>[/<sub>]]`
 * (a collection is `list`, an object `get`, the service proxy `get services/proxy`), or a `POST`
 * of an access review (`create`). Undefined for non-resource paths (`/version`).
 */
function requestQuestion(method: string, rawPath: string): ResourceQuestion | undefined {
    const parts = rawPath.split("?")[0].split("/").filter(Boolean);
    if (parts[0] !== "api" && parts[0] !== "apis") return undefined;
    const rest = parts.slice(parts[0] === "api" ? 2 : 3);
    const namespace = rest[0] === "namespaces" && rest.length > 2 ? rest[1] : undefined;
    const [resource, name, subresource] = namespace === undefined ? rest : rest.slice(2);
    const verb = method === "POST" ? "create" : name === undefined ? "list" : "get";
    return { verb, group: parts[0] === "api" ? "" : parts[1], resource, namespace, name: name?.split(":")[0], subresource };
}

/** Every request `server` saw is one verify's printed ClusterRole for `config` allows, and the role grants only reads and access reviews. */
export function expectRequestsAllowed(server: FakeApiServer, config: AddonConfig): void {
    const rules = verifyRules(config);
    const asked = server.requests
        .map((r) => ({ r, q: requestQuestion(r.split(" ")[0], r.split(" ")[1]) }))
        .filter((x) => x.q !== undefined && x.q.resource !== "selfsubjectaccessreviews");
    assert.ok(asked.length > 40);
    assert.deepStrictEqual(
        asked.filter((x) => !rules.some((rule) => ruleAllows(rule, x.q!))).map((x) => x.r),
        [],
    );
    for (const rule of rules) {
        assert.ok(
            rule.verbs.every((v) => ["get", "list"].includes(v) || (v === "create" && rule.resources.join() === "subjectaccessreviews")),
            JSON.stringify(rule),
        );
        assert.ok(!rule.resources.includes("secrets"));
    }
    assert.strictEqual(
        rules.some((r) => r.resources.includes("services/proxy")),
        config.cluster.role === "hub",
    );
}

/** `expectFail` for each pattern: the check fails, and its findings match every one. */
export const expectFails = (results: Results, id: string, ...patterns: RegExp[]) => patterns.forEach((p) => expectFail(results, id, p));
