import * as assert from "assert";
import * as fs from "fs";
import * as https from "https";
import * as path from "path";
import * as tls from "tls";
import type { KubeObject } from "../../tools/verify/cluster";
import { trustedCas } from "../../tools/verify/index";
import { certificateAdvice, certificateProblem, PROBE_QUERY, ROUTED_PROBE_QUERY } from "../../tools/verify/checks/metricQuery";
import { FOLDED_ROUTE_QUERY } from "../../tools/verify/probeRoutes";
import { fixture, healthyCluster, patch, verifyConfig, verifySpoke } from "./world";
import { expectFail, expectFails, expectPass, found, status, useFakeCluster } from "./run";

const vector = (result: unknown[]) => ({ status: 200, body: JSON.stringify({ status: "success", data: { resultType: "vector", result } }) });
const counted = (n: number) => vector(n === 0 ? [] : [{ metric: {}, value: [1, String(n)] }]);
const edit = (o: KubeObject, from: string | RegExp, to: string) => JSON.parse(JSON.stringify(o).replace(from, to)) as KubeObject;

describe("verify: metric path", () => {
    const { verify, server } = useFakeCluster();

    it("metrics.templates expects the stack's six templates and fails for a Job provider, another tenant, an endless finite template, another query", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        let results = await verify(config, world);
        assert.match(
            results.get("metrics.templates")!.note!,
            /^argo-rollouts-addon-success-rate, .*, argo-rollouts-addon-error-budget-wait at http:\/\/mimir-gateway\.observability\.svc:80\/prometheus$/,
        );
        patch(world, "ClusterAnalysisTemplate", "argo-rollouts-addon-latency-p99", (o) => ({
            ...o,
            spec: { ...(o.spec as object), metrics: [fixture("job-provider-metric.json")] },
        }));
        patch(world, "ClusterAnalysisTemplate", "argo-rollouts-addon-error-budget", (o) => edit(o, '"value":"hub"', '"value":"preprod"'));
        patch(world, "ClusterAnalysisTemplate", "argo-rollouts-addon-success-rate-finite", (o) => edit(o, /,"count":\d+/, ""));
        patch(world, "ClusterAnalysisTemplate", "argo-rollouts-addon-latency-p99-finite", (o) => edit(o, />= 50/g, ">= 5"));
        results = await verify(config, world);
        for (const pattern of [
            /argo-rollouts-addon-latency-p99: metric success-rate uses the job provider, not prometheus/,
            /argo-rollouts-addon-error-budget: .* sends X-Scope-OrgID: preprod, this cluster's tenant is hub/,
            /success-rate-finite: metric success-rate has an interval and no count, so it runs indefinitely: a Rollout referencing argo-rollouts-addon-success-rate-finite in a step or pre\/post-promotion analysis is refused \(InvalidSpec\)/,
            /latency-p99-finite: spec\.metrics\[0\]\.provider\.prometheus\.query is .*>= 5\).*, the stack declares .*>= 50\)/,
        ]) {
            expectFail(results, "metrics.templates", pattern);
        }
        assert.doesNotMatch(found(results, "metrics.templates"), /\.count is/, "the endless template is named once, in its own words");
    });

    it("metrics.query through the service proxy fails when Mimir refuses the tenant, and SKIPs with the in-cluster command without the proxy", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        world.proxy = () => fixture<{ status: number; body: string }>("mimir-no-org-id.json");
        expectFail(
            await verify(config, world),
            "metrics.query",
            /http:\/\/mimir-gateway\.observability\.svc:80\/prometheus \(tenant hub\): HTTP 401: no org id/,
        );
        const proxied = "GET /api/v1/namespaces/observability/services/mimir-gateway:80/proxy/prometheus/api/v1/query?query=count";
        assert.ok(server().requests.some((r) => r.startsWith(proxied)));
        world.authorizeSelf = (a) => ({ allowed: !(a.resource === "services" && a.subresource === "proxy") });
        const results = await verify(config, world);
        assert.strictEqual(status(results, "metrics.query"), "SKIP");
        assert.match(
            results.get("metrics.query")!.note!,
            /kubectl -n argo-rollouts debug .* --profile=restricted --image=registry\.platform\.test\/mirror\/curlimages\/curl@sha256:d{64} -- curl -sS -H 'X-Scope-OrgID: hub'/,
        );
    });

    it("metrics.query on a spoke asks its read endpoint for the gates' series, then with http_route, then the folded routes; SKIPs out of reach", async () => {
        const config = verifySpoke();
        const world = healthyCluster(config);
        const calls: { url: string; headers: Record<string, string> }[] = [];
        let results = await verify(config, world, {
            httpGet: async (url, headers) => (calls.push({ url, headers }), { status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) }),
        });
        expectPass(results, "metrics.query");
        const url = (q: string) => `https://mimir-preprod.hub.test.example/prometheus/api/v1/query?query=${encodeURIComponent(q)}`;
        assert.deepStrictEqual(
            calls.map((c) => c.url),
            [url(PROBE_QUERY), url(ROUTED_PROBE_QUERY), url(FOLDED_ROUTE_QUERY)],
        );
        assert.strictEqual(PROBE_QUERY, 'count(http_server_request_duration_seconds_count{k8s_namespace_name!="",k8s_replicaset_name!=""})');
        assert.deepStrictEqual(calls[0].headers, { "X-Scope-OrgID": "preprod" });
        assert.match(
            results.get("metrics.query")!.note!,
            /= 37 series, 37 with http_route; 1 Rollout with a request gate, none with a probe route folded into a counted route$/,
        );
        results = await verify(config, world, { httpGet: async () => Promise.reject(new Error("getaddrinfo ENOTFOUND mimir-preprod.hub.test.example")) });
        assert.strictEqual(status(results, "metrics.query"), "SKIP");
        assert.match(results.get("metrics.query")!.note!, /not reachable from here .*ENOTFOUND.*kubectl -n argo-rollouts debug/);
    });

    it("metrics.query fails without the gates' series, and without http_route while probes are left out", async () => {
        const config = verifySpoke();
        const world = healthyCluster(config);
        // An untrusted certificate: 'trusts the stack's mimir.readCaBundle as the controller does', against a real TLS endpoint.
        expectFail(
            await verify(config, world, { httpGet: async () => counted(0) }),
            "metrics.query",
            /answered, but no http_server_request_duration_seconds_count series with k8s_namespace_name and k8s_replicaset_name in tenant preprod: every gate of this cluster would be Inconclusive/,
        );
        // Beyla without routes: every series has the Kubernetes labels, none has http_route.
        const noRoutes = async (url: string) => counted(decodeURIComponent(url).includes('http_route!=""') ? 0 : 12);
        expectFail(
            await verify(config, world, { httpGet: noRoutes }),
            "metrics.query",
            /12 series carry k8s_namespace_name and k8s_replicaset_name, none carries http_route: the gates cannot leave out the kubelet's probes/,
        );
        const countAll = verifySpoke({ analysis: { excludeRoutes: [] } });
        const results = await verify(countAll, healthyCluster(countAll), { httpGet: noRoutes });
        expectPass(results, "metrics.query");
        assert.match(results.get("metrics.query")!.note!, /= 12 series \(analysis\.excludeRoutes is empty: every request counts, probes included\)$/);
    });

    it("metrics.query fails when a gated Rollout's series carry a route Beyla folded a probe into, and only then", async () => {
        const series = (ns: string, rs: string, route: string) => ({
            metric: { k8s_namespace_name: ns, k8s_replicaset_name: rs, http_route: route },
            value: [1, "1"],
        });
        const mimir = (folded: unknown[]) => async (url: string) => (decodeURIComponent(url).includes("count by") ? vector(folded) : counted(37));
        const ref = (template: string) => ({ templates: [{ templateName: `argo-rollouts-addon-${template}`, clusterScope: true }] });
        const strategy = { canary: { analysis: ref("latency-p99"), steps: [{ analysis: ref("success-rate-finite") }] } };
        const gated = (world: ReturnType<typeof healthyCluster>) =>
            patch(world, "Rollout", "alpha-shop", (o) => ({ ...o, spec: { ...(o.spec as object), strategy } }));
        // Which series and routes count (another Rollout's ReplicaSet, a route no probe folds into): test/probeRoutes.test.ts.
        const answer = [series("alpha-shop-prod", "alpha-shop-6d9f7c8b5", "/*")];
        let config = verifySpoke();
        let world = healthyCluster(config);
        expectPass(await verify(config, world, { httpGet: mimir(answer) }), "metrics.query");
        gated(world);
        let results = await verify(config, world, { httpGet: mimir(answer) });
        expectFail(
            results,
            "metrics.query",
            /^Rollout alpha-shop-prod\/alpha-shop: its series \(ReplicaSet alpha-shop-6d9f7c8b5\) carry http_route="\/\*", a route Beyla folded that can hold the probe routes \/healthz, \/livez, \/readyz, \/health, \/ready, \/live; argo-rollouts-addon-latency-p99, argo-rollouts-addon-success-rate-finite count it .*routes\.ignored_patterns .*ignore_mode metrics/,
        );
        assert.strictEqual(results.get("metrics.query")!.findings.length, 1, found(results, "metrics.query"));
        // Multi-segment probes fold at any level; a route listed in excludeRoutes is not counted.
        config = verifySpoke({ analysis: { excludeRoutes: ["/actuator/health/liveness", "/*"] } });
        world = healthyCluster(config);
        gated(world);
        results = await verify(config, world, { httpGet: mimir([...answer, series("alpha-shop-prod", "alpha-shop-6d9f7c8b5", "/actuator/*/liveness")]) });
        expectFail(
            results,
            "metrics.query",
            /carry http_route="\/actuator\/\*\/liveness", a route Beyla folded that can hold the probe route \/actuator\/health\/liveness;/,
        );
        assert.strictEqual(results.get("metrics.query")!.findings.length, 1, found(results, "metrics.query"));
    });

    describe("metrics.query against a read endpoint with a private CA", () => {
        const tlsFile = (f: string) => fs.readFileSync(path.join(__dirname, "..", "fixtures", "tls", f), "utf8");
        let endpoint: https.Server;
        let port = 0;
        before(async () => {
            endpoint = https.createServer({ cert: tlsFile("server.crt"), key: tlsFile("server.key") }, (req, res) => {
                res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(fixture("prometheus-vector.json")));
            });
            await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
            port = (endpoint.address() as { port: number }).port;
        });
        after(() => new Promise<void>((resolve) => endpoint.close(() => resolve())));
        const withBundle = (readCaBundle?: string) => {
            const config = verifySpoke({ mimir: { readEndpoint: `https://127.0.0.1:${port}/prometheus`, readCaBundle } });
            return verify(config, healthyCluster(config));
        };

        it("trusts the stack's mimir.readCaBundle as the controller does, and fails naming the key when it is missing or another CA", async () => {
            expectPass(await withBundle(tlsFile("ca.crt")), "metrics.query");
            expectFail(
                await withBundle(),
                "metrics.query",
                new RegExp(
                    `127\\.0\\.0\\.1:${port}/prometheus \\(tenant preprod\\): unable to verify the first certificate: no CA verify trusts issued the endpoint's certificate ` +
                        "\\(the public roots; the stack sets no mimir\\.readCaBundle\\); .* Set argo-rollouts-addon:mimir\\.readCaBundle in the spoke's stack file",
                ),
            );
            expectFail(
                await withBundle(tlsFile("other-ca.crt")),
                "metrics.query",
                /neither the public roots nor the 1 CA certificate of argo-rollouts-addon:mimir\.readCaBundle issued/,
            );
        });

        it("adds the bundle to the public roots (test/integration/verify.test.ts: and ignores NODE_EXTRA_CA_CERTS)", () => {
            assert.deepStrictEqual(trustedCas("X"), [...tls.rootCertificates, "X"]);
        });

        it("names what a bundle cannot fix: an expired certificate, another hostname", () => {
            const cases: [string, string, string | undefined][] = [
                ["UNABLE_TO_VERIFY_LEAF_SIGNATURE", "unable to verify the first certificate", "untrusted"],
                ["SELF_SIGNED_CERT_IN_CHAIN", "self-signed certificate in certificate chain", "untrusted"],
                ["CERT_HAS_EXPIRED", "certificate has expired", "validity"],
                ["ERR_TLS_CERT_ALTNAME_INVALID", "Hostname/IP does not match certificate's altnames", "hostname"],
                ["ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:443", undefined],
            ];
            for (const [code, message, kind] of cases) {
                assert.strictEqual(certificateProblem({ code, message }), kind, code);
            }
            assert.match(certificateAdvice("hostname", undefined, "https://mimir-preprod.hub.example/prometheus"), /does not name mimir-preprod\.hub\.example/);
            assert.doesNotMatch(certificateAdvice("validity", "x", "https://a.example/prometheus"), /readCaBundle/);
        });
    });

    describe("metrics.spoke-routes", () => {
        const observability = () => verifyConfig({ mimir: { pushRouteOwner: "observability" } });
        const mimirBackend = { name: "mimir-gateway", namespace: "observability", port: 80 };
        const internal = (sectionName?: string) => ({ name: "internal", namespace: "gateway-system", ...(sectionName ? { sectionName } : {}) });
        const route = (namespace: string, name: string, spec: Record<string, unknown>): KubeObject => ({
            apiVersion: "gateway.networking.k8s.io/v1",
            kind: "HTTPRoute",
            metadata: { name, namespace },
            spec,
        });

        it("holds the hub's own routes to their declaration and acceptance, once", async () => {
            let config = verifyConfig();
            let world = healthyCluster(config);
            patch(world, "HTTPRoute", "mimir-spoke-preprod", (o) =>
                edit(edit(o, /"set":\[/g, '"add":['), '"status":"True","reason":"ResolvedRefs"', '"status":"False","reason":"BackendNotFound"'),
            );
            let results = await verify(config, world);
            expectFails(
                results,
                "metrics.spoke-routes",
                /HTTPRoute observability\/mimir-spoke-preprod: spec\.rules\[0\]\.filters\[0\]\.requestHeaderModifier\.set is nothing, the stack declares a list of 1/,
                /parent internal: ResolvedRefs=False \(BackendNotFound/,
            );
            // What it passes with the observability module owning ingest: test/verify/index.test.ts (the fixture hub).
            config = observability();
            world = healthyCluster(config);
            await verify(config, world);
            assert.ok(
                !server().requests.some((r) => r.endsWith("/httproutes/mimir-spoke-preprod")),
                "the observability module's route is not the hub stack's to check",
            );
            patch(world, "HTTPRoute", "mimir-spoke-preprod-read", (o) =>
                edit(o, '"matches":[', '"matches":[{"path":{"type":"PathPrefix","value":"/prometheus"}},'),
            );
            results = await verify(config, world);
            expectFail(results, "metrics.spoke-routes", /mimir-spoke-preprod-read: spec\.rules\[0\]\.matches has 7 entries, the stack declares 6/);
            assert.strictEqual(results.get("metrics.spoke-routes")!.findings.length, 1, "the audit of other routes skips the hub's own");
            world.objects = world.objects.filter((o) => o.metadata?.name !== "mimir-spoke-preprod-read");
            expectFail(await verify(config, world), "metrics.spoke-routes", /mimir-spoke-preprod-read: not found/);
        });

        it("audits every other route on a spoke's listener and hostname, whoever owns it, where the hub declares none too", async () => {
            const config = verifyConfig({
                mimir: { pushRouteOwner: "observability" },
                spokes: [{ name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.test.example", query: false }],
            });
            const world = healthyCluster(config);
            let results = await verify(config, world);
            assert.match(
                results.get("metrics.spoke-routes")!.note!,
                /^the hub declares no spoke route .*; other routes on the spokes' hostnames: observability\/mimir-ingest-preprod$/,
            );
            // What the audit finds in a rule (reaching too far, another tenant, a rewrite): test/gatewayApi.test.ts.
            world.objects.push(
                route("team-x", "catch-all", {
                    parentRefs: [internal()],
                    hostnames: ["*.hub.test.example"],
                    rules: [
                        {
                            matches: [{ path: { type: "PathPrefix", value: "/api/v1/push" } }],
                            filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "X-Scope-OrgID", value: "team-x" }] } }],
                            backendRefs: [mimirBackend],
                        },
                    ],
                }),
                // Left alone: another hostname (the listener, Gateway, backend and mirror cases: test/gatewayApi.test.ts).
                route("team-a", "other-host", {
                    parentRefs: [internal("https")],
                    hostnames: ["grafana.hub.test.example", "*.mimir-preprod.hub.test.example"],
                    rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [mimirBackend] }],
                }),
            );
            results = await verify(config, world);
            const text = found(results, "metrics.spoke-routes");
            assert.match(
                text,
                /^HTTPRoute team-x\/catch-all: rule 0 \(PathPrefix \/api\/v1\/push\) serves mimir-preprod\.hub\.test\.example \(spoke preprod\) on gateway-system\/internal\/https and reaches Mimir through backendRefs\[0\] but sets X-Scope-OrgID to team-x/,
            );
            assert.strictEqual(results.get("metrics.spoke-routes")!.findings.length, 1, text);
        });

        it("is skipped, saying why, when verify may not list HTTPRoutes, and still fails the hub's own broken route", async () => {
            const config = observability();
            const world = healthyCluster(config);
            world.authorizeSelf = (a) => ({ allowed: !(a.resource === "httproutes" && a.verb === "list") });
            let results = await verify(config, world);
            assert.strictEqual(status(results, "metrics.spoke-routes"), "SKIP");
            assert.strictEqual(
                results.get("metrics.spoke-routes")!.note,
                "mimir-spoke-preprod-read (read): as declared; but verify may not list gateway.networking.k8s.io/httproutes in every namespace, so the other routes on the spokes' hostnames were not audited (see Verify's own permissions)",
            );
            assert.ok(!server().requests.some((r) => r.startsWith("GET /apis/gateway.networking.k8s.io/v1/httproutes")), "verify listed what it may not");
            world.objects = world.objects.filter((o) => o.metadata?.name !== "mimir-spoke-preprod-read");
            world.authorizeSelf = (a) => ({ allowed: a.resource !== "gateways" });
            results = await verify(config, world);
            expectFail(results, "metrics.spoke-routes", /mimir-spoke-preprod-read: not found/);
            assert.match(
                results.get("metrics.spoke-routes")!.note!,
                /^other routes not audited: verify may not get gateway\.networking\.k8s\.io\/gateways in gateway-system \(internal\)/,
            );
        });

        it("fails when the ingest Gateway or a spoke's listener is missing", async () => {
            const config = verifyConfig({
                spokes: [{ name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.test.example", query: true, listener: "spoke-preprod" }],
            });
            const world = healthyCluster(config);
            expectFail(
                await verify(config, world),
                "metrics.spoke-routes",
                /Gateway gateway-system\/internal: has no listener spoke-preprod, which spoke preprod's routes attach to/,
            );
            world.objects = world.objects.filter((o) => o.kind !== "Gateway");
            expectFail(await verify(config, world), "metrics.spoke-routes", /Gateway gateway-system\/internal: not found/);
        });
    });
});
