import * as assert from "assert";
import { MIMIR_READ_PATHS } from "../components/mimir";
import { REMOTE_WRITE_MATCH } from "../components/gateway/spokeRoutes";
import type { KubeObject } from "../tools/verify/cluster";
import {
    SPOKE_MIMIR_PATHS,
    SpokeHost,
    hostRouteProblems,
    mimirReaches,
    pathCovered,
    ruleMatches,
    servesSpokeHost,
    uncoveredExample,
} from "../tools/verify/gatewayApi";

describe("the spoke-route audit's reading of HTTPRoutes (gateway-api v1.4.1)", () => {
    const MIMIR = { namespace: "observability", gatewayService: "mimir-gateway" };
    const HOST: SpokeHost = {
        spoke: "preprod",
        tenant: "preprod",
        hostname: "mimir-preprod.hub.example",
        gateway: { namespace: "gateway-system", name: "internal" },
        listener: "https",
    };
    const toMimir = (extra: Record<string, unknown> = {}) => ({ name: "mimir-gateway", namespace: "observability", port: 80, ...extra });
    const setTenant = (tenant: string) => ({ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "X-Scope-OrgID", value: tenant }] } });
    const route = (namespace: string, spec: Record<string, unknown>): KubeObject => ({ kind: "HTTPRoute", metadata: { name: "r", namespace }, spec });
    const internal = { name: "internal", namespace: "gateway-system" };

    it("audits a route naming the spoke's listener (or every listener) and serving its hostname, exactly or by a wildcard above it", () => {
        const cases: [string, Record<string, unknown>, string, boolean][] = [
            [
                "the listener and the hostname",
                { parentRefs: [{ ...internal, sectionName: "https" }], hostnames: ["mimir-preprod.hub.example"] },
                "observability",
                true,
            ],
            ["every listener, no hostnames", { parentRefs: [internal] }, "observability", true],
            ["the namespace defaults to the route's", { parentRefs: [{ name: "internal" }] }, "gateway-system", true],
            ["a wildcard, without case", { parentRefs: [internal], hostnames: ["*.HUB.example"] }, "observability", true],
            ["another namespace's Gateway", { parentRefs: [{ name: "internal" }] }, "observability", false],
            ["another listener", { parentRefs: [{ ...internal, sectionName: "http" }] }, "observability", false],
            ["another Gateway", { parentRefs: [{ ...internal, name: "public" }] }, "observability", false],
            ["a Service parent (a mesh route)", { parentRefs: [{ ...internal, kind: "Service" }] }, "observability", false],
            ["another hostname", { parentRefs: [internal], hostnames: ["grafana.hub.example", "*.other.example"] }, "observability", false],
            ["a wildcard below the hostname", { parentRefs: [internal], hostnames: ["*.mimir-preprod.hub.example"] }, "observability", false],
        ];
        for (const [what, spec, namespace, serves] of cases) {
            assert.strictEqual(servesSpokeHost(route(namespace, spec), HOST), serves, what);
        }
    });

    it("covers a path match element by element within remote write and the read endpoints; a RegularExpression never", () => {
        for (const p of SPOKE_MIMIR_PATHS) {
            assert.ok(pathCovered(p, SPOKE_MIMIR_PATHS), `${p.type} ${p.value}`);
        }
        const cases: [string, string, boolean][] = [
            ["Exact", "/api/v1/push/influx", true],
            ["PathPrefix", "/api/v1/push/", true],
            ["PathPrefix", "/prometheus/api/v1/label/job", true],
            ["PathPrefix", "/api/v1/pushx", false],
            ["PathPrefix", "/", false],
            ["PathPrefix", "/prometheus/api/v1/query", false],
            ["Exact", "/prometheus/api/v1/query_exemplars", false],
            ["Exact", "/prometheus/config/v1/rules", false],
            ["RegularExpression", "/api/v1/push.*", false],
        ];
        for (const [type, value, covered] of cases) {
            assert.strictEqual(pathCovered({ type, value }, SPOKE_MIMIR_PATHS), covered, `${type} ${value}`);
        }
        assert.strictEqual(
            uncoveredExample({ type: "PathPrefix", value: "/prometheus" }),
            "/prometheus/config/v1/rules (the ruler's rule API, which writes and deletes rule groups)",
        );
        assert.strictEqual(uncoveredExample({ type: "PathPrefix", value: "/api/v1" }), "/api/v1/... (anything below it)");
        assert.deepStrictEqual(ruleMatches({ matches: [{ headers: [] }] }), [{ type: "PathPrefix", value: "/" }]);
    });

    it("finds Mimir as a backend (its namespace defaulting to the route's) and as a mirror target, with the header changes each carries", () => {
        const rule = {
            filters: [setTenant("preprod"), { type: "RequestMirror", requestMirror: { backendRef: toMimir() } }],
            backendRefs: [{ name: "app", port: 80 }, toMimir({ namespace: undefined, filters: [setTenant("hub")] })],
        };
        assert.deepStrictEqual(mimirReaches(rule, "observability", MIMIR), [
            { via: "backendRefs[1]", set: ["preprod", "hub"], other: [] },
            { via: "filters[1] (RequestMirror)", set: ["preprod"], other: [] },
        ]);
        assert.deepStrictEqual(
            mimirReaches(rule, "team-x", MIMIR).map((r) => r.via),
            ["filters[1] (RequestMirror)"],
            "mimir-gateway of another namespace is another Service",
        );
        assert.deepStrictEqual(
            mimirReaches({ filters: [{ type: "RequestMirror", requestMirror: { backendRef: toMimir() } }, setTenant("p")] }, "x", MIMIR)[0].set,
            [],
        );
    });

    it("names each rule to Mimir that reaches too far, rewrites the path, or does not set the spoke's tenant once", () => {
        const ok = { matches: [{ path: REMOTE_WRITE_MATCH }], filters: [setTenant("preprod")], backendRefs: [toMimir()] };
        const rules = [
            ok,
            { matches: MIMIR_READ_PATHS.map((path) => ({ path })), filters: [setTenant("preprod")], backendRefs: [toMimir()] },
            { backendRefs: [{ name: "grafana", port: 80 }] },
            { ...ok, name: "read-all", matches: [{ path: { type: "PathPrefix", value: "/prometheus" } }] },
            { ...ok, filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { add: [{ name: "x-scope-orgid", value: "preprod" }] } }] },
            { ...ok, filters: [setTenant("preprod"), { type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/x" } } }] },
            { ...ok, backendRefs: [toMimir({ filters: [setTenant("prod")] })] },
            { ...ok, filters: [setTenant("preprod"), { type: "RequestHeaderModifier", requestHeaderModifier: { remove: ["X-Scope-OrgID"] } }] },
        ];
        const problems = hostRouteProblems(route("observability", { rules }), HOST, MIMIR);
        const where = "serves mimir-preprod.hub.example (spoke preprod) on gateway-system/internal/https";
        assert.deepStrictEqual(problems, [
            `rule 3 "read-all" (PathPrefix /prometheus) ${where} and reaches Mimir's gateway Service beyond remote write and Mimir's read endpoints: PathPrefix /prometheus also reaches /prometheus/config/v1/rules (the ruler's rule API, which writes and deletes rule groups). Narrow it to remote write (PathPrefix /api/v1/push), or remove it: the hub's read route serves the spoke's read endpoints`,
            `rule 4 (PathPrefix /api/v1/push) ${where} and reaches Mimir through backendRefs[0] but sets no X-Scope-OrgID, adds preprod: every rule to Mimir on a spoke's hostname must set X-Scope-OrgID: preprod with a RequestHeaderModifier set (never add), or another tenant's data is in reach`,
            `rule 5 (PathPrefix /api/v1/push) ${where} and rewrites the path before Mimir (URLRewrite), so its matches do not say which of Mimir's APIs it reaches: remove the rewrite`,
            `rule 6 (PathPrefix /api/v1/push) ${where} and reaches Mimir through backendRefs[0] but sets X-Scope-OrgID to preprod, prod: every rule to Mimir on a spoke's hostname must set X-Scope-OrgID: preprod with a RequestHeaderModifier set (never add), or another tenant's data is in reach`,
            `rule 7 (PathPrefix /api/v1/push) ${where} and reaches Mimir through backendRefs[0] but sets X-Scope-OrgID to preprod, removes it: every rule to Mimir on a spoke's hostname must set X-Scope-OrgID: preprod with a RequestHeaderModifier set (never add), or another tenant's data is in reach`,
        ]);
    });
});
