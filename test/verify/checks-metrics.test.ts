import type { KubeObject } from "../../tools/verify/cluster";
import * as assert from "assert";
import { execFile } from "child_process";
import * as fs from "fs";
import * as https from "https";
import * as path from "path";
import * as tls from "tls";
import { trustedCas } from "../../tools/verify/index";
import { certificateAdvice, certificateProblem } from "../../tools/verify/checks/metricQuery";
import { FOLDED_ROUTE_QUERY } from "../../tools/verify/probeRoutes";
import { ClusterWorld, fixture, healthyCluster, replace, verifyConfig } from "./world";

import { expectFail, expectPass, found, status, useFakeCluster } from "./run";

describe("verify: metric path", () => {
    const { verify, server } = useFakeCluster();

    it("metrics.templates expects the four metric templates and the two error-budget ones, and fails for a Job provider and another tenant", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        let results = await verify(config, world);
        assert.match(
            results.get("metrics.templates")!.note!,
            /^argo-rollouts-addon-success-rate, argo-rollouts-addon-success-rate-finite, argo-rollouts-addon-latency-p99, argo-rollouts-addon-latency-p99-finite, argo-rollouts-addon-error-budget, argo-rollouts-addon-error-budget-wait at http:\/\/mimir-gateway\.observability\.svc:80\/prometheus$/,
        );
        replace(world, "ClusterAnalysisTemplate", "argo-rollouts-addon-latency-p99", (o) => ({
            ...o,
            spec: { ...(o.spec as object), metrics: [fixture("job-provider-metric.json")] },
        }));
        replace(world, "ClusterAnalysisTemplate", "argo-rollouts-addon-error-budget", (o) => ({
            ...o,
            spec: JSON.parse(JSON.stringify(o.spec).replace('"value":"hub"', '"value":"preprod"')),
        }));
        results = await verify(config, world);
        expectFail(
            results,
            "metrics.templates",
            /ClusterAnalysisTemplate argo-rollouts-addon-latency-p99: metric success-rate uses the job provider, not prometheus/,
        );
        expectFail(
            results,
            "metrics.templates",
            /ClusterAnalysisTemplate argo-rollouts-addon-error-budget: .* sends X-Scope-OrgID: preprod, this cluster's tenant is hub/,
        );
    });

    it("metrics.templates fails for a finite template that never ends and a query without the stack's minRequests floor", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        replace(world, "ClusterAnalysisTemplate", "argo-rollouts-addon-success-rate-finite", (o) => {
            const spec = o.spec as { metrics: Record<string, unknown>[] };
            const { count: _count, ...metric } = spec.metrics[0];
            return { ...o, spec: { ...spec, metrics: [metric] } };
        });
        replace(world, "ClusterAnalysisTemplate", "argo-rollouts-addon-latency-p99", (o) => ({
            ...o,
            spec: JSON.parse(JSON.stringify(o.spec).replace(/>= 50/g, ">= 5")),
        }));
        const results = await verify(config, world);
        expectFail(
            results,
            "metrics.templates",
            /argo-rollouts-addon-success-rate-finite: metric success-rate has an interval and no count, so it runs indefinitely: a Rollout referencing argo-rollouts-addon-success-rate-finite in a step or pre\/post-promotion analysis is refused \(InvalidSpec\)/,
        );
        expectFail(
            results,
            "metrics.templates",
            /argo-rollouts-addon-latency-p99: spec\.metrics\[0\]\.provider\.prometheus\.query is .*>= 5\).*, the stack declares .*>= 50\)/,
        );
        assert.doesNotMatch(found(results, "metrics.templates"), /\.count is/, "the endless template is named once, in its own words");
    });

    it("metrics.query fails when Mimir refuses the tenant through the service proxy", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        world.proxy = () => fixture<{ status: number; body: string }>("mimir-no-org-id.json");
        const results = await verify(config, world);
        expectFail(results, "metrics.query", /http:\/\/mimir-gateway\.observability\.svc:80\/prometheus \(tenant hub\): HTTP 401: no org id/);
        assert.ok(
            server().requests.some((r) =>
                r.startsWith("GET /api/v1/namespaces/observability/services/mimir-gateway:80/proxy/prometheus/api/v1/query?query=count"),
            ),
        );
    });

    it("metrics.query is skipped with the in-cluster command when verify may not use the service proxy", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        world.authorizeSelf = (a) => ({ allowed: !(a.resource === "services" && a.subresource === "proxy") });
        const results = await verify(config, world);
        assert.strictEqual(status(results, "metrics.query"), "SKIP");
        assert.match(
            results.get("metrics.query")!.note!,
            /kubectl -n argo-rollouts debug .* --profile=restricted --image=registry\.platform\.test\/mirror\/curlimages\/curl@sha256:d{64} -- curl -sS -H 'X-Scope-OrgID: hub'/,
        );
    });

    it("metrics.query on a spoke calls its read endpoint directly and skips when it is out of reach", async () => {
        const raw = {
            cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
            mimir: { readEndpoint: "https://mimir-preprod.hub.test.example/prometheus" },
            spokes: undefined,
        };
        const config = verifyConfig(raw);
        const world = healthyCluster(config);
        const calls: { url: string; headers: Record<string, string> }[] = [];
        let results = await verify(config, world, {
            httpGet: async (url, headers) => {
                calls.push({ url, headers });
                return { status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) };
            },
        });
        expectPass(results, "metrics.query");
        assert.strictEqual(status(results, "metrics.spoke-routes"), "SKIP");
        assert.strictEqual(
            calls[0].url,
            `https://mimir-preprod.hub.test.example/prometheus/api/v1/query?query=${encodeURIComponent('count(http_server_request_duration_seconds_count{k8s_namespace_name!="",k8s_replicaset_name!=""})')}`,
        );
        assert.match(
            results.get("metrics.query")!.note!,
            /= 37 series, 37 with http_route; 1 Rollout with a request gate, none with a probe route folded into a counted route$/,
        );
        assert.strictEqual(calls[2].url, `https://mimir-preprod.hub.test.example/prometheus/api/v1/query?query=${encodeURIComponent(FOLDED_ROUTE_QUERY)}`);
        assert.strictEqual(
            calls[1].url,
            `https://mimir-preprod.hub.test.example/prometheus/api/v1/query?query=${encodeURIComponent('count(http_server_request_duration_seconds_count{k8s_namespace_name!="",k8s_replicaset_name!="",http_route!=""})')}`,
        );
        assert.deepStrictEqual(calls[0].headers, { "X-Scope-OrgID": "preprod" });
        results = await verify(config, world, { httpGet: async () => Promise.reject(new Error("getaddrinfo ENOTFOUND mimir-preprod.hub.test.example")) });
        assert.strictEqual(status(results, "metrics.query"), "SKIP");
        assert.match(results.get("metrics.query")!.note!, /not reachable from here .*ENOTFOUND.*kubectl -n argo-rollouts debug/);
    });

    it("metrics.query fails when no series carries the labels the gates select on, and on an untrusted certificate", async () => {
        const raw = {
            cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
            mimir: { readEndpoint: "https://mimir-preprod.hub.test.example/prometheus" },
            spokes: undefined,
        };
        const config = verifyConfig(raw);
        const world = healthyCluster(config);
        const empty = { status: "success", data: { resultType: "vector", result: [] } };
        let results = await verify(config, world, { httpGet: async () => ({ status: 200, body: JSON.stringify(empty) }) });
        expectFail(
            results,
            "metrics.query",
            /answered, but no http_server_request_duration_seconds_count series with k8s_namespace_name and k8s_replicaset_name in tenant preprod: every gate of this cluster would be Inconclusive/,
        );
        results = await verify(config, world, { httpGet: async () => Promise.reject(new Error("unable to verify the first certificate")) });
        expectFail(
            results,
            "metrics.query",
            /unable to verify the first certificate: no CA verify trusts issued the endpoint's certificate \(the public roots; the stack sets no mimir\.readCaBundle\); the controller's gates query it with the same trust and fail the same way\. Set argo-rollouts-addon:mimir\.readCaBundle in the spoke's stack file/,
        );
        assert.doesNotMatch(found(results, "metrics.query"), /NODE_EXTRA_CA_CERTS/);
    });

    it("metrics.query fails when no series carries http_route while analysis.excludeRoutes leaves probes out, and not when it is empty", async () => {
        const raw = {
            cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
            mimir: { readEndpoint: "https://mimir-preprod.hub.test.example/prometheus" },
            spokes: undefined,
        };
        const vector = (n: number) => ({
            status: 200,
            body: JSON.stringify({ status: "success", data: { resultType: "vector", result: n === 0 ? [] : [{ metric: {}, value: [1, String(n)] }] } }),
        });
        // Beyla without routes: every series has the Kubernetes labels, none has http_route.
        const noRoutes = async (url: string) => vector(decodeURIComponent(url).includes('http_route!=""') ? 0 : 12);
        const config = verifyConfig(raw);
        let results = await verify(config, healthyCluster(config), { httpGet: noRoutes });
        expectFail(
            results,
            "metrics.query",
            /12 series carry k8s_namespace_name and k8s_replicaset_name, none carries http_route: the gates cannot leave out the kubelet's probes \(analysis\.excludeRoutes\)/,
        );
        const countAll = verifyConfig({ ...raw, analysis: { excludeRoutes: [] } });
        results = await verify(countAll, healthyCluster(countAll), { httpGet: noRoutes });
        expectPass(results, "metrics.query");
        assert.match(results.get("metrics.query")!.note!, /= 12 series \(analysis\.excludeRoutes is empty: every request counts, probes included\)$/);
    });

    it("metrics.query fails when a gated Rollout's series carry a route Beyla folded a probe into, and only then", async () => {
        const raw = {
            cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
            mimir: { readEndpoint: "https://mimir-preprod.hub.test.example/prometheus" },
            spokes: undefined,
        };
        const vector = (result: unknown[]) => ({ status: 200, body: JSON.stringify({ status: "success", data: { resultType: "vector", result } }) });
        const series = (ns: string, rs: string, route: string) => ({
            metric: { k8s_namespace_name: ns, k8s_replicaset_name: rs, http_route: route },
            value: [1, "1"],
        });
        // Mimir's answers: 37 series with the gate labels and routes; the wildcard routes as listed.
        const mimir = (folded: unknown[]) => async (url: string) =>
            decodeURIComponent(url).includes("count by") ? vector(folded) : vector([{ metric: {}, value: [1, "37"] }]);
        const gated = (world: ClusterWorld) =>
            replace(world, "Rollout", "alpha-shop", (o) => ({
                ...o,
                spec: {
                    ...(o.spec as object),
                    strategy: {
                        canary: {
                            analysis: { templates: [{ templateName: "argo-rollouts-addon-latency-p99", clusterScope: true }] },
                            steps: [
                                { setWeight: 20 },
                                { analysis: { templates: [{ templateName: "argo-rollouts-addon-success-rate-finite", clusterScope: true }] } },
                            ],
                        },
                    },
                },
            }));
        const answer = [
            series("alpha-shop-prod", "alpha-shop-6d9f7c8b5", "/*"),
            // Not a probe's fold with the default probe routes.
            series("alpha-shop-prod", "alpha-shop-6d9f7c8b5", "/api/*"),
            // Another Rollout's ReplicaSet (alpha-shop-canary), and a workload no gate reads.
            series("alpha-shop-prod", "alpha-shop-canary-5f6d7c8b9", "/*"),
            series("web", "web-7c9d5f8b64", "/*"),
        ];
        let config = verifyConfig(raw);
        let world = healthyCluster(config);
        gated(world);
        let results = await verify(config, world, { httpGet: mimir(answer) });
        expectFail(
            results,
            "metrics.query",
            /^Rollout alpha-shop-prod\/alpha-shop: its series \(ReplicaSet alpha-shop-6d9f7c8b5\) carry http_route="\/\*", a route Beyla folded that can hold the probe routes \/healthz, \/livez, \/readyz, \/health, \/ready, \/live; argo-rollouts-addon-latency-p99, argo-rollouts-addon-success-rate-finite count it .*routes\.ignored_patterns .*ignore_mode metrics/,
        );
        assert.strictEqual(results.get("metrics.query")!.findings.length, 1, found(results, "metrics.query"));
        // The same series, the Rollout without a request gate: nothing to report.
        world = healthyCluster(config);
        results = await verify(config, world, { httpGet: mimir(answer) });
        expectPass(results, "metrics.query");
        // Multi-segment probes fold at any level; a route listed in excludeRoutes is not counted.
        config = verifyConfig({ ...raw, analysis: { excludeRoutes: ["/actuator/health/liveness", "/*"] } });
        world = healthyCluster(config);
        gated(world);
        results = await verify(config, world, { httpGet: mimir([...answer, series("alpha-shop-prod", "alpha-shop-6d9f7c8b5", "/actuator/*/liveness")]) });
        expectFail(
            results,
            "metrics.query",
            /^Rollout alpha-shop-prod\/alpha-shop: its series \(ReplicaSet alpha-shop-6d9f7c8b5\) carry http_route="\/actuator\/\*\/liveness", a route Beyla folded that can hold the probe route \/actuator\/health\/liveness;/,
        );
        assert.strictEqual(results.get("metrics.query")!.findings.length, 1, found(results, "metrics.query"));
    });

    describe("metrics.query against a read endpoint with a private CA", function () {
        // One test starts a Node process with ts-node: slow on a busy machine.
        this.timeout(120_000);
        const tlsFile = (f: string) => fs.readFileSync(path.join(__dirname, "..", "fixtures", "tls", f), "utf8");
        let endpoint: https.Server;
        let port = 0;
        const asked: { tenant: unknown; path: string }[] = [];
        before(async () => {
            // Mimir's read endpoint behind a certificate of the test CA (fixtures/tls), answering the probe.
            endpoint = https.createServer({ cert: tlsFile("server.crt"), key: tlsFile("server.key") }, (req, res) => {
                asked.push({ tenant: req.headers["x-scope-orgid"], path: (req.url ?? "").split("?")[0] });
                res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(fixture("prometheus-vector.json")));
            });
            await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
            port = (endpoint.address() as { port: number }).port;
        });
        after(() => new Promise<void>((resolve) => endpoint.close(() => resolve())));
        const spoke = (readCaBundle?: string) =>
            verifyConfig({
                cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
                mimir: { readEndpoint: `https://127.0.0.1:${port}/prometheus`, readCaBundle },
                spokes: undefined,
            });

        it("trusts the stack's mimir.readCaBundle as the controller does, and fails naming the key when it is missing or another CA", async () => {
            let config = spoke(tlsFile("ca.crt"));
            let results = await verify(config, healthyCluster(config));
            expectPass(results, "metrics.query");
            assert.deepStrictEqual(asked.at(-1), { tenant: "preprod", path: "/prometheus/api/v1/query" });
            config = spoke();
            results = await verify(config, healthyCluster(config));
            expectFail(
                results,
                "metrics.query",
                new RegExp(
                    `https://127\\.0\\.0\\.1:${port}/prometheus \\(tenant preprod\\): unable to verify the first certificate: no CA verify trusts .*Set argo-rollouts-addon:mimir\\.readCaBundle`,
                ),
            );
            config = spoke(tlsFile("other-ca.crt"));
            results = await verify(config, healthyCluster(config));
            expectFail(
                results,
                "metrics.query",
                /neither the public roots nor the 1 CA certificate of argo-rollouts-addon:mimir\.readCaBundle issued the endpoint's certificate/,
            );
        });

        it("hands the bundle to the GET, adds it to the public roots, and ignores NODE_EXTRA_CA_CERTS", async () => {
            const config = spoke(tlsFile("ca.crt"));
            let given: { extraCa?: string } | undefined;
            await verify(config, healthyCluster(config), {
                httpGet: async (_url, _headers, trust) => ((given = trust), { status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) }),
            });
            assert.strictEqual(given?.extraCa, tlsFile("ca.crt"));
            assert.deepStrictEqual(trustedCas(undefined), [...tls.rootCertificates]);
            assert.deepStrictEqual(trustedCas("X"), [...tls.rootCertificates, "X"]);
            assert.ok(tls.rootCertificates.length > 100);
            // A process whose default store trusts the test CA through NODE_EXTRA_CA_CERTS: a plain
            // https.get passes, verify's GET without the bundle does not.
            const script = `
                    const https = require("https");
                    const { directGet } = require("./tools/verify/index");
                    const url = "https://127.0.0.1:${port}/prometheus/api/v1/query";
                    new Promise((ok, no) => https.get(url, (r) => { r.resume(); r.on("end", () => ok(r.statusCode)); }).on("error", no))
                        .then((plain) => directGet(url, {}, {}).then(() => [plain, "trusted"], (e) => [plain, e.code]))
                        .then((r) => console.log(JSON.stringify(r)), (e) => console.log(JSON.stringify(["plain failed", e.code])));`;
            const out = await new Promise<string>((resolve, reject) =>
                execFile(
                    process.execPath,
                    ["-r", "ts-node/register/transpile-only", "-e", script],
                    {
                        cwd: path.join(__dirname, "..", ".."),
                        env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(__dirname, "..", "fixtures", "tls", "ca.crt") },
                    },
                    (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout.trim())),
                ),
            );
            assert.deepStrictEqual(JSON.parse(out), [200, "UNABLE_TO_VERIFY_LEAF_SIGNATURE"]);
        });

        it("names what a bundle cannot fix: an expired certificate, another hostname", () => {
            assert.strictEqual(certificateProblem({ code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE", message: "unable to verify the first certificate" }), "untrusted");
            assert.strictEqual(certificateProblem({ code: "SELF_SIGNED_CERT_IN_CHAIN", message: "self-signed certificate in certificate chain" }), "untrusted");
            assert.strictEqual(certificateProblem({ code: "CERT_HAS_EXPIRED", message: "certificate has expired" }), "validity");
            assert.strictEqual(
                certificateProblem({ code: "ERR_TLS_CERT_ALTNAME_INVALID", message: "Hostname/IP does not match certificate's altnames" }),
                "hostname",
            );
            assert.strictEqual(certificateProblem({ code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:443" }), undefined);
            assert.match(certificateAdvice("hostname", undefined, "https://mimir-preprod.hub.example/prometheus"), /does not name mimir-preprod\.hub\.example/);
            assert.doesNotMatch(certificateAdvice("validity", "x", "https://a.example/prometheus"), /readCaBundle/);
        });
    });

    it("metrics.spoke-routes fails for a route that adds the tenant header or is not accepted (pushRouteOwner addon)", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        replace(world, "HTTPRoute", "mimir-spoke-preprod", (o) => {
            const text = JSON.stringify(o)
                .replace(/"set":\[/g, '"add":[')
                .replace('"status":"True","reason":"ResolvedRefs"', '"status":"False","reason":"BackendNotFound"');
            return JSON.parse(text) as typeof o;
        });
        const results = await verify(config, world);
        expectFail(
            results,
            "metrics.spoke-routes",
            /HTTPRoute observability\/mimir-spoke-preprod: rule 0 \(PathPrefix \/api\/v1\/push\) adds X-Scope-OrgID instead of setting it/,
        );
        expectFail(results, "metrics.spoke-routes", /reaches Mimir setting X-Scope-OrgID to nothing, not preprod/);
        expectFail(results, "metrics.spoke-routes", /parent internal: ResolvedRefs=False \(BackendNotFound/);
    });

    it("metrics.spoke-routes checks only the read route beside the observability module's ingest route, and refuses a path Mimir's read rule does not name", async () => {
        const config = verifyConfig({ mimir: { pushRouteOwner: "observability" } });
        const world = healthyCluster(config);
        let results = await verify(config, world);
        expectPass(results, "metrics.spoke-routes");
        assert.strictEqual(
            results.get("metrics.spoke-routes")!.note,
            "mimir-spoke-preprod-read (read); other routes on the spokes' hostnames: observability/mimir-ingest-preprod",
        );
        assert.ok(
            !server().requests.some((r) => r.endsWith("/httproutes/mimir-spoke-preprod")),
            "the observability module's route is not the hub stack's to check",
        );
        replace(world, "HTTPRoute", "mimir-spoke-preprod-read", (o) => {
            const spec = o.spec as { rules: { matches: { path: { type: string; value: string } }[] }[] };
            const rules = spec.rules.map((r) => ({ ...r, matches: [...r.matches, { path: { type: "PathPrefix", value: "/prometheus" } }] }));
            return { ...o, spec: { ...spec, rules } };
        });
        results = await verify(config, world);
        expectFail(
            results,
            "metrics.spoke-routes",
            /HTTPRoute observability\/mimir-spoke-preprod-read: routes PathPrefix \/prometheus, which the hub does not declare/,
        );
        // The hub's own route is held to its declaration, once: the audit of other routes skips it.
        assert.strictEqual(results.get("metrics.spoke-routes")!.findings.length, 1);
    });

    it("metrics.spoke-routes fails when the read route is missing, and audits the spoke's hostname even where the hub declares no route", async () => {
        const config = verifyConfig({ mimir: { pushRouteOwner: "observability" } });
        const world = healthyCluster(config);
        world.objects = world.objects.filter((o) => o.metadata?.name !== "mimir-spoke-preprod-read");
        expectFail(await verify(config, world), "metrics.spoke-routes", /mimir-spoke-preprod-read: not found/);
        const quiet = verifyConfig({
            mimir: { pushRouteOwner: "observability" },
            spokes: [{ name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.test.example", query: false }],
        });
        const quietWorld = healthyCluster(quiet);
        let results = await verify(quiet, quietWorld);
        expectPass(results, "metrics.spoke-routes");
        assert.match(
            results.get("metrics.spoke-routes")!.note!,
            /^the hub declares no spoke route .*; other routes on the spokes' hostnames: observability\/mimir-ingest-preprod$/,
        );
        replace(quietWorld, "HTTPRoute", "mimir-ingest-preprod", (o) => JSON.parse(JSON.stringify(o).replace('"/api/v1/push"', '"/"')) as typeof o);
        results = await verify(quiet, quietWorld);
        expectFail(
            results,
            "metrics.spoke-routes",
            /HTTPRoute observability\/mimir-ingest-preprod: rule 0 \(PathPrefix \/\) serves mimir-preprod\.hub\.test\.example/,
        );
    });

    describe("metrics.spoke-routes audits every route on a spoke's hostname and listener", () => {
        const observability = () => verifyConfig({ mimir: { pushRouteOwner: "observability" } });
        const mimirBackend = (namespace?: string) => ({
            group: "",
            kind: "Service",
            name: "mimir-gateway",
            ...(namespace ? { namespace } : {}),
            port: 80,
            weight: 1,
        });
        const setTenant = (tenant: string) => ({
            type: "RequestHeaderModifier",
            requestHeaderModifier: { set: [{ name: "X-Scope-OrgID", value: tenant }] },
        });
        const route = (namespace: string, name: string, spec: Record<string, unknown>): KubeObject => ({
            apiVersion: "gateway.networking.k8s.io/v1",
            kind: "HTTPRoute",
            metadata: { name, namespace, generation: 1 },
            spec,
        });
        const internal = (sectionName?: string) => ({
            group: "gateway.networking.k8s.io",
            kind: "Gateway",
            name: "internal",
            namespace: "gateway-system",
            ...(sectionName ? { sectionName } : {}),
        });

        it("fails for the observability module's ingest route with a /prometheus prefix: it reaches the ruler beside the hub's read route", async () => {
            const config = observability();
            const world = healthyCluster(config);
            replace(world, "HTTPRoute", "mimir-ingest-preprod", (o) => {
                const spec = o.spec as { rules: unknown[] };
                return {
                    ...o,
                    spec: {
                        ...spec,
                        rules: [
                            ...spec.rules,
                            {
                                matches: [{ path: { type: "PathPrefix", value: "/prometheus" } }],
                                filters: [setTenant("preprod")],
                                backendRefs: [mimirBackend()],
                            },
                        ],
                    },
                };
            });
            const results = await verify(config, world);
            expectFail(
                results,
                "metrics.spoke-routes",
                /^HTTPRoute observability\/mimir-ingest-preprod: rule 1 \(PathPrefix \/prometheus\) serves mimir-preprod\.hub\.test\.example \(spoke preprod\) on gateway-system\/internal\/https and reaches Mimir's gateway Service beyond remote write and Mimir's read endpoints: PathPrefix \/prometheus also reaches \/prometheus\/config\/v1\/rules \(the ruler's rule API, which writes and deletes rule groups\)\. Narrow it to remote write \(PathPrefix \/api\/v1\/push\), or remove it/,
            );
            assert.strictEqual(results.get("metrics.spoke-routes")!.findings.length, 1, "the tenant is set: only the paths are wrong");
        });

        it("fails for a wildcard route of another namespace on every listener that sets another tenant, and for a mirror to Mimir", async () => {
            const config = observability();
            const world = healthyCluster(config);
            world.objects.push(
                route("team-x", "catch-all", {
                    parentRefs: [internal()],
                    hostnames: ["*.hub.test.example"],
                    rules: [
                        {
                            matches: [{ path: { type: "PathPrefix", value: "/api/v1/push" } }],
                            filters: [setTenant("team-x")],
                            backendRefs: [mimirBackend("observability")],
                        },
                    ],
                }),
                route("team-y", "mirror", {
                    parentRefs: [internal("https")],
                    rules: [
                        {
                            filters: [
                                { type: "RequestMirror", requestMirror: { backendRef: { name: "mimir-gateway", namespace: "observability", port: 80 } } },
                            ],
                            backendRefs: [{ name: "team-y-app", port: 8080 }],
                        },
                    ],
                }),
            );
            const text = found(await verify(config, world), "metrics.spoke-routes");
            assert.match(
                text,
                /HTTPRoute team-x\/catch-all: rule 0 \(PathPrefix \/api\/v1\/push\) serves mimir-preprod\.hub\.test\.example \(spoke preprod\) on gateway-system\/internal\/https and reaches Mimir through backendRefs\[0\] but sets X-Scope-OrgID to team-x: every rule to Mimir on a spoke's hostname must set X-Scope-OrgID: preprod/,
            );
            assert.match(
                text,
                /HTTPRoute team-y\/mirror: rule 0 \(PathPrefix \/\) serves .* beyond remote write and Mimir's read endpoints: PathPrefix \/ also reaches \/prometheus\/config\/v1\/rules/,
            );
            assert.match(
                text,
                /HTTPRoute team-y\/mirror: rule 0 \(PathPrefix \/\) .* reaches Mimir through filters\[0\] \(RequestMirror\) but sets no X-Scope-OrgID/,
            );
        });

        it("leaves alone routes that do not serve the spoke's hostname on its listener, or do not reach Mimir", async () => {
            const config = observability();
            const world = healthyCluster(config);
            const wide = { matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [mimirBackend("observability")] };
            world.objects.push(
                route("team-a", "other-host", {
                    parentRefs: [internal("https")],
                    hostnames: ["grafana.hub.test.example", "*.other.example"],
                    rules: [wide],
                }),
                route("team-b", "other-listener", { parentRefs: [internal("http")], hostnames: ["mimir-preprod.hub.test.example"], rules: [wide] }),
                route("team-c", "other-gateway", {
                    parentRefs: [{ ...internal("https"), name: "public" }],
                    hostnames: ["mimir-preprod.hub.test.example"],
                    rules: [wide],
                }),
                route("team-d", "other-backend", {
                    parentRefs: [internal("https")],
                    hostnames: ["mimir-preprod.hub.test.example"],
                    rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [{ name: "mimir-gateway", port: 80 }] }],
                }),
                route("team-e", "apex", { parentRefs: [internal("https")], hostnames: ["*.mimir-preprod.hub.test.example"], rules: [wide] }),
            );
            const results = await verify(config, world);
            expectPass(results, "metrics.spoke-routes");
            // team-d's route reaches its own mimir-gateway Service, not the one in observability.
            assert.match(
                results.get("metrics.spoke-routes")!.note!,
                /other routes on the spokes' hostnames: observability\/mimir-ingest-preprod, team-d\/other-backend$/,
            );
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
