import * as assert from "assert";
import { HttpRouteSpec, readRule, spokeRoutes } from "../components/gateway";
import { MIMIR_READ_PATHS, PathMatch, pathMatches } from "../components/mimir";
import { checkPlan } from "../tools/guard";
import { OfflineRun, PlannedResource } from "../tools/offline";
import { hubConfig, merged, planInline, spokeConfig } from "./harness";
import { configError, parseMap } from "./stackConfig";

const HTTPROUTE = "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute";

/** The problems of a config map, each as `<key> = <given>: <allowed>`. */
const problems = (cfg: Record<string, unknown>) => configError(() => parseMap(cfg)).problems.map((p) => `${p.key} = ${p.given}: ${p.allowed}`);

const SPOKES = [
    { name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.platform.test", query: true },
    { name: "edge", tenant: "edge", hostname: "mimir-edge.hub.platform.test", listener: "edge", query: false },
];

/** Whether a route admits a request path (any rule, any match). */
function admits(spec: HttpRouteSpec, path: string): boolean {
    return spec.rules.some((rule) => rule.matches.some((m) => pathMatches(m.path, path)));
}

function routes(run: OfflineRun): PlannedResource[] {
    return run.resources.filter((r) => r.type === HTTPROUTE);
}

describe("spoke routes", () => {
    describe("Gateway API path matching (gateway-api apis/v1/httproute_types.go)", () => {
        it("matches a prefix element by element, ignoring a trailing slash; Exact only the whole path", () => {
            const prefix: PathMatch = { type: "PathPrefix", value: "/abc" };
            assert.ok(pathMatches(prefix, "/abc") && pathMatches(prefix, "/abc/") && pathMatches(prefix, "/abc/def"));
            assert.ok(!pathMatches(prefix, "/abcd"));
            const exact: PathMatch = { type: "Exact", value: "/abc" };
            assert.ok(pathMatches(exact, "/abc"));
            assert.ok(!pathMatches(exact, "/abc/") && !pathMatches(exact, "/abcd") && !pathMatches(exact, "/Abc"));
        });
    });

    describe("the read rule", () => {
        const mimir = parseMap(hubConfig()).mimir;
        const rule = readRule("preprod", mimir);
        const route: HttpRouteSpec = { parentRefs: [], hostnames: [], rules: [rule] };

        it("reaches every Prometheus read endpoint a metric gate or a person debugging one uses", () => {
            for (const path of [
                "/prometheus/api/v1/query",
                "/prometheus/api/v1/query_range",
                "/prometheus/api/v1/series",
                "/prometheus/api/v1/labels",
                "/prometheus/api/v1/label/k8s_replicaset_name/values",
                "/prometheus/api/v1/metadata",
            ]) {
                assert.ok(admits(route, path), path);
            }
        });

        it("never reaches the ruler's or alertmanager's write APIs, remote read, or admin endpoints", () => {
            // Mimir HTTP API reference: set/delete rule groups under <prefix>/config/v1/rules, the
            // Alertmanager configuration at /api/v1/alerts and under /alertmanager.
            for (const path of [
                "/prometheus/config/v1/rules/team",
                "/prometheus/config/v1/rules/team/group",
                "/api/v1/alerts",
                "/alertmanager/api/v2/silences",
                "/prometheus/api/v1/read",
                "/prometheus/api/v1/query_exemplars",
                "/prometheus/api/v1/cardinality/label_names",
                "/prometheus/api/v1/admin/tsdb/delete_series",
                "/prometheus/api/v1/rules",
                "/prometheus/api/v1/labels/extra",
                "/prometheus",
                "/api/v1/push",
            ]) {
                assert.ok(!admits(route, path), path);
            }
        });

        // Its tenant, set on every rule of the planned routes: test/metrics.test.ts ("sets, never adds, the spoke's own tenant").
        it("reaches only the Mimir gateway", () => {
            assert.deepStrictEqual(rule.backendRefs, [{ group: "", kind: "Service", name: "mimir-gateway", port: 80, weight: 1 }]);
            assert.strictEqual(rule.matches.length, MIMIR_READ_PATHS.length);
        });
    });

    describe("who owns the ingest route", () => {
        it("defaults to this program: one route per spoke with the push rule, plus the read rule when it queries", () => {
            const cfg = parseMap(merged(hubConfig(), { spokes: SPOKES }));
            assert.strictEqual(cfg.mimir.pushRouteOwner, "addon");
            const [preprod, edge] = cfg.spokes.map((s) => spokeRoutes(s, cfg.mimir));
            assert.deepStrictEqual(
                preprod.map((r) => [r.name, r.purpose, r.spec.rules.length]),
                [["mimir-spoke-preprod", "ingest", 2]],
            );
            assert.deepStrictEqual(
                edge.map((r) => [r.name, r.purpose, r.spec.rules.length]),
                [["mimir-spoke-edge", "ingest", 1]],
            );
            assert.ok(admits(preprod[0].spec, "/api/v1/push") && admits(preprod[0].spec, "/prometheus/api/v1/query"));
            assert.ok(admits(edge[0].spec, "/api/v1/push") && !admits(edge[0].spec, "/prometheus/api/v1/query"));
        });

        it("with the observability module owning it, declares the read route alone, on the same hostname and listener", () => {
            const addon = parseMap(merged(hubConfig(), { spokes: SPOKES }));
            const obs = parseMap(merged(hubConfig(), { spokes: SPOKES, mimir: { pushRouteOwner: "observability" } }));
            const [preprod, edge] = obs.spokes.map((s) => spokeRoutes(s, obs.mimir));
            assert.deepStrictEqual(
                preprod.map((r) => [r.name, r.purpose]),
                [["mimir-spoke-preprod-read", "read"]],
            );
            assert.ok(!admits(preprod[0].spec, "/api/v1/push"), "the push route is the observability module's");
            assert.ok(admits(preprod[0].spec, "/prometheus/api/v1/query_range"));
            assert.deepStrictEqual(edge, [], "a spoke that neither pushes through the program nor reads gets nothing");
            // Same hostname and listener as the route the program would own: Gateway API merges the rules.
            const own = spokeRoutes(addon.spokes[0], addon.mimir)[0].spec;
            assert.deepStrictEqual(preprod[0].spec.hostnames, own.hostnames);
            assert.deepStrictEqual(preprod[0].spec.parentRefs, own.parentRefs);
        });

        it("can be chosen per spoke", () => {
            const cfg = parseMap(
                merged(hubConfig(), {
                    mimir: { pushRouteOwner: "observability" },
                    spokes: [
                        { ...SPOKES[0], pushRouteOwner: "addon" },
                        { ...SPOKES[1], query: true },
                    ],
                }),
            );
            assert.deepStrictEqual(
                cfg.spokes.flatMap((s) => spokeRoutes(s, cfg.mimir).map((r) => r.name)),
                ["mimir-spoke-preprod", "mimir-spoke-edge-read"],
            );
            const edge = spokeRoutes(cfg.spokes[1], cfg.mimir)[0].spec;
            assert.strictEqual(edge.parentRefs[0].sectionName, "edge", "the spoke's own listener");
        });

        it("refuses an unknown owner, and the key on a spoke stack", () => {
            assert.deepStrictEqual(problems(merged(hubConfig(), { mimir: { pushRouteOwner: "obs" } })), [
                `mimir.pushRouteOwner = "obs": must be one of addon, observability`,
            ]);
            assert.match(
                problems(merged(hubConfig(), { spokes: [{ ...SPOKES[0], pushRouteOwner: "grafana" }] })).join("\n"),
                /spokes\[0\]\.pushRouteOwner = "grafana"/,
            );
            assert.match(
                problems(spokeConfig({ mimir: { pushRouteOwner: "observability" } })).join("\n"),
                /mimir\.pushRouteOwner = "observability": only applies to a hub/,
            );
        });
    });

    describe("in the program", () => {
        let addon: OfflineRun;
        let obs: OfflineRun;
        before(async () => {
            addon = await planInline(merged(hubConfig(), { spokes: SPOKES }), { stack: "hub" });
            obs = await planInline(merged(hubConfig(), { spokes: SPOKES, mimir: { pushRouteOwner: "observability" } }), { stack: "hub" });
        });

        // Where the program owns ingest, one route per spoke: test/metrics.test.ts ("declares one spoke-ingest route per spoke").
        it("declares the read route alone where the observability module owns ingest", () => {
            assert.deepStrictEqual(
                routes(obs).map((r) => r.name),
                ["mimir-spoke-preprod-read"],
            );
            const meta = routes(obs)[0].inputs.metadata as { name: string; namespace: string; labels: Record<string, string> };
            assert.deepStrictEqual(
                [meta.name, meta.namespace, meta.labels["argo-rollouts-addon.platform/spoke"]],
                ["mimir-spoke-preprod-read", "observability", "preprod"],
            );
        });

        it("publishes the same read endpoints either way, so spokes keep working", () => {
            const expected = { preprod: "https://mimir-preprod.hub.platform.test/prometheus" };
            assert.deepStrictEqual(addon.outputs.spokeReadEndpoints, expected);
            assert.deepStrictEqual(obs.outputs.spokeReadEndpoints, expected);
        });

        it("passes the guardrails (every rule to Mimir sets the tenant)", async () => {
            assert.deepStrictEqual(await checkPlan(obs), []);
            assert.deepStrictEqual(await checkPlan(addon), []);
        });
    });
});
