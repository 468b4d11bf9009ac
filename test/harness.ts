/**
 * Runs the program under mocks for a stack described inline, the same way the offline plan does.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as http from "http";
import { AddressInfo } from "net";
import * as path from "path";
import { OfflineRun, OfflineWorld, PlannedResource, runOffline } from "../tools/offline";
import { StackFile, fromConfigMap, placeholderWorld, readStackFile } from "../tools/stackFile";
import { defineStack } from "../stacks/program";

/**
 * The tests' own stack files (docs/maintainers/tests.md, "Fixtures"): a hub and its spoke with a
 * test platform's values. Tests read these, never the shipped Pulumi.*.yaml, which are the
 * platform's to change (test/stackFiles.test.ts alone checks those).
 */
export const FIXTURE_STACKS = path.join(__dirname, "fixtures", "stacks");

/** A fixture stack file, read as the plan reads a stack file (`hub` or `preprod`). */
export function fixtureStack(stack: "hub" | "preprod"): StackFile {
    return readStackFile(stack, FIXTURE_STACKS);
}

/** The fixture hub's stack file as written. */
export const HUB_TEXT = fs.readFileSync(path.join(FIXTURE_STACKS, "Pulumi.hub.yaml"), "utf8");

/** The fixture hub with a second spoke, the release approver's ArgoCD role renamed and regulated prod's canary steps (the plan diff's change). */
export function changedHub(): string {
    const [spoke, controller] = ["      query: true\n", "  argo-rollouts-addon:controller:\n"];
    assert.ok(HUB_TEXT.includes(spoke) && HUB_TEXT.includes("approverRole: role:release-approver") && HUB_TEXT.includes(controller));
    return HUB_TEXT.replace(spoke, `${spoke}    - name: prod\n      tenant: prod\n      hostname: mimir-prod.hub.platform.test\n      query: true\n`)
        .replace("approverRole: role:release-approver", "approverRole: role:release-managers")
        .replace(controller, `  argo-rollouts-addon:delivery:\n    prod:\n      regulated:\n        steps: [10, 50, 100]\n${controller}`);
}

/** A digest-like value that is clearly a test value. */
export const TEST_SHA256 = "a".repeat(64);
export const TEST_DIGEST = `sha256:${"b".repeat(64)}`;
export const TEST_CONTROLLER_DIGEST = `sha256:${"c".repeat(64)}`;

/** The label the test platform's namespaces carry their tier in (the fixtures' too). */
export const TEST_TIER_LABEL = "platform.test/tier";
/** The test platform's tenant namespace selector and prod labels: what every stack must set. */
export const TEST_POLICY = {
    tenantNamespaceSelector: { matchExpressions: [{ key: TEST_TIER_LABEL, operator: "In", values: ["dev", "test", "preprod", "prod"] }] },
    prodNamespaceLabels: { [TEST_TIER_LABEL]: "prod" },
};

/**
 * A complete, valid hub configuration (keys without the project namespace): only what a stack must
 * set, every other key at its default. ArgoCD runs here and syncs no tenant objects ({}).
 */
export function hubConfig(): Record<string, unknown> {
    return {
        "aws:region": "eu-west-1",
        cluster: { name: "hub", role: "hub", mimirTenant: "hub", eksClusterName: "test-hub" },
        gateway: { name: "internal", namespace: "gateway-system", listener: "https" },
        imageRegistry: "registry.platform.test/mirror",
        controller: { imageDigest: TEST_CONTROLLER_DIGEST },
        plugin: { delivery: "download", sha256: TEST_SHA256 },
        policy: structuredClone(TEST_POLICY),
        argocd: { projects: {}, applicationSets: {} },
    };
}

/** The fixture hub's spoke preprod, reading its own tenant through the hub's route, with `patch` merged in. */
export function spokeConfig(patch: Record<string, unknown> = {}): Record<string, unknown> {
    const spoke = {
        cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
        mimir: { readEndpoint: "https://mimir-preprod.hub.platform.test/prometheus" },
    };
    return merged(merged(hubConfig(), spoke), patch);
}

/** The smoke canary switched on, with the test platform's images pinned by digest. */
export const TEST_SMOKE = {
    enabled: true,
    hostname: "smoke.hub.platform.test",
    image: `registry.platform.test/mirror/argoproj/rollouts-demo@sha256:${"c".repeat(64)}`,
    loadImage: `registry.platform.test/mirror/curlimages/curl@sha256:${"d".repeat(64)}`,
};

/** ArgoCD RBAC of a regulated gate, as a stack with policy.regulated needs where ArgoCD runs. */
export const REGULATED_ARGOCD_RBAC = {
    approverRole: "role:release-approver",
    deployerRoles: ["role:tenant-deployer"],
    projects: ["tenants-regulated"],
    regulatedProjects: ["tenants-regulated"],
};

/**
 * `raw` with REGULATED_ARGOCD_RBAC where it sets policy.regulated, ArgoCD runs on its cluster and
 * it says nothing about ArgoCD's RBAC: for tests about something else.
 */
export function withRegulatedArgoRbac(raw: Record<string, unknown>): Record<string, unknown> {
    const policy = raw.policy as Record<string, unknown> | undefined;
    const argocd = (raw.argocd ?? {}) as Record<string, unknown>;
    const cluster = raw.cluster as Record<string, unknown> | undefined;
    const local = argocd.runsOn === undefined || argocd.runsOn === cluster?.name;
    if (!policy?.regulated || !local || argocd.rbac !== undefined) return raw;
    return { ...raw, argocd: { ...argocd, rbac: REGULATED_ARGOCD_RBAC } };
}

/** A value `merged` puts in place whole, never merging it into what the base has there. */
export class Whole {
    constructor(readonly value: unknown) {}
}
/** `value` in place of the base's, whole: `{ prodNamespaceLabels: whole({}) }` empties the labels. */
export const whole = (value: unknown): Whole => new Whole(value);

/** Deep-merges `patch` into `base`; a key set to undefined is removed, one set to `whole(v)` replaced. */
export function merged(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of Object.entries(patch)) {
        const b = out[k];
        if (v === undefined) {
            delete out[k];
        } else if (v instanceof Whole) {
            out[k] = v.value;
        } else if (isObj(v) && isObj(b)) {
            out[k] = merged(b, v);
        } else {
            out[k] = v;
        }
    }
    return out;
}

function isObj(v: unknown): v is Record<string, unknown> {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Plans a stack from an inline config map (the stack file's `config:` section). */
export async function planInline(configMap: Record<string, unknown>, opts: { stack?: string; world?: OfflineWorld } = {}): Promise<OfflineRun> {
    const file = fromConfigMap(opts.stack ?? "test", withRegulatedArgoRbac(configMap));
    const { stack, config, secretKeys } = file;
    return runOffline({ stack, config, secretKeys, world: opts.world ?? placeholderWorld(file), program: () => defineStack() });
}

export function byName(run: OfflineRun, name: string): PlannedResource {
    const found = run.resources.filter((r) => r.name === name);
    if (found.length !== 1) throw new Error(`expected one resource named ${name}, found ${found.length}`);
    return found[0];
}

/** Every URN `urn` waits for, directly or through other resources. */
export function transitiveDeps(run: OfflineRun, urn: string): Set<string> {
    const byUrn = new Map(run.resources.map((r) => [r.urn, r]));
    const seen = new Set<string>();
    const stack = [...(byUrn.get(urn)?.dependsOn ?? [])];
    while (stack.length > 0) {
        const next = stack.pop()!;
        if (!seen.has(next)) {
            seen.add(next);
            stack.push(...(byUrn.get(next)?.dependsOn ?? []));
        }
    }
    return seen;
}

/** Runs `fn` with the environment variables `vars` set (undefined: unset), and puts them back after. */
export async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
    const set = (v: Record<string, string | undefined>) =>
        Object.entries(v).forEach(([k, x]) => (x === undefined ? delete process.env[k] : (process.env[k] = x)));
    set(vars);
    try {
        return await fn();
    } finally {
        set(saved);
    }
}

/**
 * GitHub's REST API in memory, for the commands that write issues and comments: every call is
 * recorded as `<method> <path>` and must carry the test token; `answer` gives the status and body.
 */
export async function fakeGitHub(answer: (method: string, url: URL, body: Record<string, unknown>) => [number, unknown]) {
    const calls: string[] = [];
    const server = http.createServer((req, res) => {
        let data = "";
        req.on("data", (c: Buffer) => (data += c.toString()));
        req.on("end", () => {
            const url = new URL(req.url!, "http://x");
            calls.push(`${req.method} ${url.pathname}`);
            assert.strictEqual(req.headers.authorization, "Bearer test-token");
            const [status, body] = answer(req.method!, url, data === "" ? {} : (JSON.parse(data) as Record<string, unknown>));
            res.writeHead(status, { "content-type": "application/json" });
            res.end(JSON.stringify(body));
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { api: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, close: () => server.close() };
}
