import * as assert from "assert";
import { MIMIR_READ_PATHS, PathMatch } from "../components/mimir";
import { REMOTE_WRITE_MATCH } from "../components/gateway/spokeRoutes";
import type { KubeObject } from "../tools/verify/cluster";
import {
    Listener,
    SPOKE_MIMIR_PATHS,
    SpokeHost,
    hostRouteProblems,
    hostnameMatches,
    listenerAdmits,
    mimirReaches,
    pathCovered,
    refersToListener,
    routeServesHost,
    ruleMatches,
    servesSpokeHost,
    uncoveredExample,
} from "../tools/verify/gatewayApi";

/**
 * The Gateway API semantics `metrics.spoke-routes` audits with, restated from gateway-api v1.4.1
 * (apis/v1/httproute_types.go, shared_types.go, gateway_types.go), case by case.
 */
describe("Gateway API matching for the spoke-route audit", () => {
    const MIMIR = { namespace: "observability", gatewayService: "mimir-gateway" };
    const HOST: SpokeHost = {
        spoke: "preprod",
        tenant: "preprod",
        hostname: "mimir-preprod.hub.example",
        gateway: { namespace: "gateway-system", name: "internal" },
        listener: "https",
    };
    const HTTPS: Listener = { name: "https", port: 443, protocol: "HTTPS", allowedRoutes: { namespaces: { from: "All" } } };
    const toMimir = (extra: Record<string, unknown> = {}) => ({
        group: "",
        kind: "Service",
        name: "mimir-gateway",
        namespace: "observability",
        port: 80,
        ...extra,
    });
    const setTenant = (tenant: string) => ({ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "X-Scope-OrgID", value: tenant }] } });
    const route = (namespace: string, spec: Record<string, unknown>): KubeObject => ({
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: "r", namespace },
        spec,
    });

    describe("hostname intersection", () => {
        it("matches a precise hostname exactly, without case", () => {
            assert.ok(hostnameMatches("mimir-preprod.hub.example", "mimir-preprod.hub.example"));
            assert.ok(hostnameMatches("Mimir-Preprod.hub.example", "mimir-preprod.HUB.example"));
            assert.ok(!hostnameMatches("mimir-preprod.hub.example", "mimir-prod.hub.example"));
            assert.ok(!hostnameMatches("hub.example", "mimir-preprod.hub.example"), "a precise name is no suffix");
        });

        it("matches a wildcard as a suffix of one or more labels, never the bare domain", () => {
            assert.ok(hostnameMatches("*.hub.example", "mimir-preprod.hub.example"));
            assert.ok(hostnameMatches("*.example", "mimir-preprod.hub.example"), "one wildcard label stands for several");
            assert.ok(!hostnameMatches("*.hub.example", "hub.example"));
            assert.ok(!hostnameMatches("*.hub.example", "mimir-preprod.hub.example.net"));
            assert.ok(!hostnameMatches("*.hub.example", "mimir-preprodhub.example"), "the suffix starts at a label boundary");
            assert.ok(!hostnameMatches("*.mimir-preprod.hub.example", "mimir-preprod.hub.example"));
        });

        it("gives a route without hostnames the listener's, and ignores a route's hostnames the listener's does not match", () => {
            assert.ok(routeServesHost([], undefined, "mimir-preprod.hub.example"), "no hostnames anywhere: every host");
            assert.ok(routeServesHost([], "*.hub.example", "mimir-preprod.hub.example"));
            assert.ok(!routeServesHost([], "*.other.example", "mimir-preprod.hub.example"));
            assert.ok(routeServesHost(["grafana.hub.example", "*.hub.example"], undefined, "mimir-preprod.hub.example"));
            assert.ok(!routeServesHost(["grafana.hub.example"], undefined, "mimir-preprod.hub.example"));
            assert.ok(
                !routeServesHost(["mimir-preprod.hub.example"], "*.other.example", "mimir-preprod.hub.example"),
                "the listener does not serve the host at all",
            );
        });
    });

    describe("attachment", () => {
        const GW = { namespace: "gateway-system", name: "internal" };
        it("follows a parentRef's defaults: the Gateway kind and group, the route's namespace, every listener without sectionName", () => {
            assert.ok(refersToListener({ name: "internal", namespace: "gateway-system", sectionName: "https" }, "observability", GW, HTTPS));
            assert.ok(refersToListener({ name: "internal", namespace: "gateway-system" }, "observability", GW, HTTPS), "no sectionName: every listener");
            assert.ok(refersToListener({ name: "internal" }, "gateway-system", GW, HTTPS), "the namespace defaults to the route's");
            assert.ok(!refersToListener({ name: "internal" }, "observability", GW, HTTPS));
            assert.ok(!refersToListener({ name: "internal", namespace: "gateway-system", sectionName: "http" }, "observability", GW, HTTPS));
            assert.ok(!refersToListener({ name: "public", namespace: "gateway-system" }, "observability", GW, HTTPS));
            assert.ok(
                !refersToListener({ group: "", kind: "Service", name: "internal", namespace: "gateway-system" }, "observability", GW, HTTPS),
                "a Service parent is a mesh route",
            );
            assert.ok(refersToListener({ name: "internal", namespace: "gateway-system", port: 443 }, "observability", GW, HTTPS));
            assert.ok(!refersToListener({ name: "internal", namespace: "gateway-system", port: 80 }, "observability", GW, HTTPS));
        });

        it("lets a listener admit routes of its own namespace by default, of all, or of the namespaces it selects, and HTTPRoutes only where it carries them", () => {
            const labels = (ns: string) => ({ observability: { team: "obs" }, "team-x": { team: "x" } })[ns];
            const same: Listener = { name: "https", protocol: "HTTPS" };
            assert.ok(listenerAdmits(same, "gateway-system", "gateway-system", labels));
            assert.ok(!listenerAdmits(same, "observability", "gateway-system", labels), "Same is the default");
            assert.ok(listenerAdmits(HTTPS, "observability", "gateway-system", labels));
            const selector: Listener = {
                name: "https",
                protocol: "HTTPS",
                allowedRoutes: { namespaces: { from: "Selector", selector: { matchLabels: { team: "obs" } } } },
            };
            assert.ok(listenerAdmits(selector, "observability", "gateway-system", labels));
            assert.ok(!listenerAdmits(selector, "team-x", "gateway-system", labels));
            assert.ok(
                listenerAdmits(selector, "unknown", "gateway-system", () => undefined),
                "labels unknown: assume selected, an audit must not miss a route",
            );
            assert.ok(
                !listenerAdmits({ name: "tls", protocol: "TLS", allowedRoutes: { namespaces: { from: "All" } } }, "observability", "gateway-system", labels),
            );
            assert.ok(
                !listenerAdmits(
                    { ...HTTPS, allowedRoutes: { namespaces: { from: "All" }, kinds: [{ kind: "GRPCRoute" }] } },
                    "observability",
                    "gateway-system",
                    labels,
                ),
            );
            assert.ok(
                listenerAdmits(
                    { ...HTTPS, allowedRoutes: { namespaces: { from: "All" }, kinds: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute" }] } },
                    "observability",
                    "gateway-system",
                    labels,
                ),
            );
        });

        it("serves the spoke's host only when attached, admitted and intersecting", () => {
            const spec = (extra: Record<string, unknown>) => ({
                parentRefs: [{ name: "internal", namespace: "gateway-system", sectionName: "https" }],
                rules: [],
                ...extra,
            });
            const none = () => undefined;
            assert.ok(servesSpokeHost(route("observability", spec({ hostnames: ["mimir-preprod.hub.example"] })), HOST, HTTPS, none));
            assert.ok(servesSpokeHost(route("observability", spec({})), HOST, HTTPS, none));
            assert.ok(!servesSpokeHost(route("observability", spec({ hostnames: ["grafana.hub.example"] })), HOST, HTTPS, none));
            assert.ok(
                !servesSpokeHost(
                    route("observability", spec({ parentRefs: [{ name: "internal", namespace: "gateway-system", sectionName: "http" }] })),
                    HOST,
                    HTTPS,
                    none,
                ),
            );
            assert.ok(!servesSpokeHost(route("observability", spec({})), HOST, { name: "https", protocol: "HTTPS" }, none), "Same namespace only");
        });
    });

    describe("which rules reach Mimir", () => {
        it("finds Mimir as a backend (its namespace defaulting to the route's) and as a mirror target, with the tenant header each carries", () => {
            const rule = {
                filters: [
                    setTenant("preprod"),
                    { type: "RequestMirror", requestMirror: { backendRef: { name: "mimir-gateway", namespace: "observability", port: 80 } } },
                ],
                backendRefs: [{ name: "app", port: 80 }, toMimir({ namespace: undefined, filters: [setTenant("hub")] })],
            };
            assert.deepStrictEqual(mimirReaches(rule, "observability", MIMIR), [
                { via: "backendRefs[1]", set: ["preprod", "hub"], add: [], remove: false },
                { via: "filters[1] (RequestMirror)", set: ["preprod"], add: [], remove: false },
            ]);
            assert.deepStrictEqual(
                mimirReaches(rule, "team-x", MIMIR).map((r) => r.via),
                ["filters[1] (RequestMirror)"],
                "mimir-gateway of another namespace is another Service",
            );
            assert.deepStrictEqual(
                mimirReaches({ backendRefs: [toMimir({ kind: "ServiceImport", group: "multicluster.x-k8s.io" })] }, "observability", MIMIR),
                [],
            );
            const mirrorFirst = { filters: [{ type: "RequestMirror", requestMirror: { backendRef: toMimir() } }, setTenant("preprod")] };
            assert.deepStrictEqual(mimirReaches(mirrorFirst, "x", MIMIR)[0].set, [], "a mirror sees only the changes made before it");
        });

        it("reads a rule without matches as PathPrefix /", () => {
            assert.deepStrictEqual(ruleMatches({}), [{ type: "PathPrefix", value: "/" }]);
            assert.deepStrictEqual(ruleMatches({ matches: [{ headers: [{ name: "x", value: "y" }] }] }), [{ type: "PathPrefix", value: "/" }]);
            assert.deepStrictEqual(ruleMatches({ matches: [{ path: { type: "Exact", value: "/a" } }] }), [{ type: "Exact", value: "/a" }]);
        });
    });

    describe("path coverage", () => {
        it("covers exactly remote write and Mimir's read endpoints", () => {
            assert.deepStrictEqual(SPOKE_MIMIR_PATHS, [REMOTE_WRITE_MATCH, ...MIMIR_READ_PATHS]);
            for (const p of SPOKE_MIMIR_PATHS) {
                assert.ok(pathCovered(p, SPOKE_MIMIR_PATHS), `${p.type} ${p.value}`);
            }
        });

        it("covers a narrower match and no wider one, element by element", () => {
            const cases: [PathMatch | { type: "RegularExpression"; value: string }, boolean][] = [
                [{ type: "Exact", value: "/api/v1/push" }, true],
                [{ type: "Exact", value: "/api/v1/push/influx" }, true],
                [{ type: "PathPrefix", value: "/api/v1/push/" }, true],
                [{ type: "PathPrefix", value: "/api/v1/push/otlp" }, true],
                [{ type: "PathPrefix", value: "/prometheus/api/v1/label/job" }, true],
                [{ type: "Exact", value: "/prometheus/api/v1/label/job/values" }, true],
                [{ type: "PathPrefix", value: "/api/v1/pushx" }, false],
                [{ type: "PathPrefix", value: "/api/v1" }, false],
                [{ type: "PathPrefix", value: "/" }, false],
                [{ type: "PathPrefix", value: "/prometheus" }, false],
                [{ type: "PathPrefix", value: "/prometheus/api/v1/query" }, false],
                [{ type: "Exact", value: "/prometheus/api/v1/query_exemplars" }, false],
                [{ type: "Exact", value: "/prometheus/api/v1/labels/x" }, false],
                [{ type: "Exact", value: "/prometheus/config/v1/rules" }, false],
                [{ type: "RegularExpression", value: "/api/v1/push.*" }, false],
            ];
            for (const [m, covered] of cases) {
                assert.strictEqual(pathCovered(m, SPOKE_MIMIR_PATHS), covered, `${m.type} ${m.value}`);
            }
        });

        it("names a path the wide match reaches: the ruler's rule API where it can", () => {
            assert.strictEqual(
                uncoveredExample({ type: "PathPrefix", value: "/prometheus" }, SPOKE_MIMIR_PATHS),
                "/prometheus/config/v1/rules (the ruler's rule API, which writes and deletes rule groups)",
            );
            assert.strictEqual(uncoveredExample({ type: "PathPrefix", value: "/prometheus/api" }, SPOKE_MIMIR_PATHS), "/prometheus/api/v1/read (remote read)");
            assert.strictEqual(uncoveredExample({ type: "PathPrefix", value: "/api/v1" }, SPOKE_MIMIR_PATHS), "/api/v1/... (anything below it)");
            assert.strictEqual(
                uncoveredExample({ type: "Exact", value: "/prometheus/api/v1/status/config" }, SPOKE_MIMIR_PATHS),
                "/prometheus/api/v1/status/config",
            );
        });
    });

    describe("the findings for one route", () => {
        const obs = (rules: unknown[]) =>
            route("observability", {
                parentRefs: [{ name: "internal", namespace: "gateway-system", sectionName: "https" }],
                hostnames: [HOST.hostname],
                rules,
            });
        const ok = { matches: [{ path: REMOTE_WRITE_MATCH }], filters: [setTenant("preprod")], backendRefs: [toMimir()] };

        it("has none for remote write and the read endpoints with the tenant set, nor for rules to other backends", () => {
            assert.deepStrictEqual(
                hostRouteProblems(
                    obs([
                        ok,
                        { matches: MIMIR_READ_PATHS.map((path) => ({ path })), filters: [setTenant("preprod")], backendRefs: [toMimir()] },
                        { backendRefs: [{ name: "grafana", port: 80 }] },
                    ]),
                    HOST,
                    MIMIR,
                ),
                [],
            );
        });

        it("names each rule, its paths and what to change", () => {
            const problems = hostRouteProblems(
                obs([
                    ok,
                    {
                        name: "read-all",
                        matches: [{ path: { type: "PathPrefix", value: "/prometheus" } }, { path: { type: "Exact", value: "/prometheus/api/v1/query" } }],
                        filters: [setTenant("preprod")],
                        backendRefs: [toMimir()],
                    },
                    {
                        matches: [{ path: REMOTE_WRITE_MATCH }],
                        filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { add: [{ name: "x-scope-orgid", value: "preprod" }] } }],
                        backendRefs: [toMimir()],
                    },
                    {
                        matches: [{ path: REMOTE_WRITE_MATCH }],
                        filters: [
                            setTenant("preprod"),
                            { type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/prometheus" } } },
                        ],
                        backendRefs: [toMimir()],
                    },
                    { matches: [{ path: { type: "RegularExpression", value: "^/api/v1/push$" } }], filters: [setTenant("preprod")], backendRefs: [toMimir()] },
                ]),
                HOST,
                MIMIR,
            );
            assert.deepStrictEqual(problems, [
                "rule 1 \"read-all\" (PathPrefix /prometheus, Exact /prometheus/api/v1/query) serves mimir-preprod.hub.example (spoke preprod) on gateway-system/internal/https and reaches Mimir's gateway Service beyond remote write and Mimir's read endpoints: PathPrefix /prometheus also reaches /prometheus/config/v1/rules (the ruler's rule API, which writes and deletes rule groups). Narrow it to remote write (PathPrefix /api/v1/push), or remove it: the hub's read route serves the spoke's read endpoints",
                "rule 2 (PathPrefix /api/v1/push) serves mimir-preprod.hub.example (spoke preprod) on gateway-system/internal/https and reaches Mimir through backendRefs[0] but sets no X-Scope-OrgID, adds preprod: every rule to Mimir on a spoke's hostname must set X-Scope-OrgID: preprod with a RequestHeaderModifier set (never add), or another tenant's data is in reach",
                "rule 3 (PathPrefix /api/v1/push) serves mimir-preprod.hub.example (spoke preprod) on gateway-system/internal/https and rewrites the path before Mimir (URLRewrite), so its matches do not say which of Mimir's APIs it reaches: remove the rewrite",
                "rule 4 (RegularExpression ^/api/v1/push$) serves mimir-preprod.hub.example (spoke preprod) on gateway-system/internal/https and reaches Mimir's gateway Service beyond remote write and Mimir's read endpoints: RegularExpression ^/api/v1/push$ also reaches whatever the expression admits. Narrow it to remote write (PathPrefix /api/v1/push), or remove it: the hub's read route serves the spoke's read endpoints",
            ]);
        });

        it("fails a rule that sets the tenant twice or removes it, and one that sets another spoke's", () => {
            const twice = { ...ok, backendRefs: [toMimir({ filters: [setTenant("prod")] })] };
            const removed = { ...ok, filters: [setTenant("preprod"), { type: "RequestHeaderModifier", requestHeaderModifier: { remove: ["X-Scope-OrgID"] } }] };
            const other = { ...ok, filters: [setTenant("prod")] };
            const problems = hostRouteProblems(obs([twice, removed, other]), HOST, MIMIR);
            assert.strictEqual(problems.length, 3);
            assert.match(problems[0], /^rule 0 .* sets X-Scope-OrgID to preprod, prod:/);
            assert.match(problems[1], /^rule 1 .* sets X-Scope-OrgID to preprod, removes it:/);
            assert.match(problems[2], /^rule 2 .* sets X-Scope-OrgID to prod:/);
        });
    });
});
