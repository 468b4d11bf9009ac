import { RunError } from "@pulumi/pulumi/errors";
import * as assert from "assert";
import { parseAddonConfig } from "../stacks/config";
import { spokeReadEndpoint, spokeRouteSpec } from "../components/gateway";
import { pickSpokeEndpoint } from "../components/cluster/hubEndpoint";
import { OfflineRun, PlannedResource } from "../tools/offline";
import { byName, hubConfig, merged, planInline } from "./harness";
import { configError, parseMap } from "./stackConfig";
import { templateName } from "../components/argoRollouts";
import {
    canaryMatchers,
    clusterAnalysisTemplateSpec,
    escapeLabelValue,
    latencyP99Query,
    selector,
    sharedTemplates,
    successRateQuery,
} from "../components/rollouts/analysis";
import { controllerNetworkPolicy, mimirIngressNetworkPolicy } from "../components/rollouts/network";

/** A spoke configuration that reads through the hub at a fixed URL. */
function spokeConfig(patch: Record<string, unknown> = {}): Record<string, unknown> {
    return merged(
        merged(hubConfig(), {
            cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
            mimir: { readEndpoint: "https://mimir-preprod.hub.platform.test/prometheus" },
        }),
        patch,
    );
}

const SMOKE = {
    enabled: true,
    hostname: "smoke.hub.platform.test",
    image: `registry.platform.test/mirror/argoproj/rollouts-demo@sha256:${"c".repeat(64)}`,
    loadImage: `registry.platform.test/mirror/curlimages/curl@sha256:${"d".repeat(64)}`,
};
const hub = (patch: Record<string, unknown>) => merged(hubConfig(), patch);

function spokes(n: number, query = true): Record<string, unknown>[] {
    return Array.from({ length: n }, (_, i) => ({ name: `spoke-${i}`, tenant: `tenant-${i}`, hostname: `mimir-${i}.hub.platform.test`, query }));
}

const problems = (cfg: Record<string, unknown>) => configError(() => parseMap(cfg)).problems;

describe("metric gates", () => {
    describe("configuration", () => {
        it("reads a hub's spokes and a spoke's read endpoint", () => {
            const hub = parseMap(merged(hubConfig(), { spokes: spokes(2) }));
            assert.deepStrictEqual(
                hub.spokes.map((s) => s.tenant),
                ["tenant-0", "tenant-1"],
            );
            assert.deepStrictEqual(hub.mimir.ingestGateway, { name: "internal", namespace: "gateway-system", listener: "https" });
            const spoke = parseMap(spokeConfig(), "preprod");
            assert.deepStrictEqual(spoke.mimir.readEndpoint, { kind: "url", url: "https://mimir-preprod.hub.platform.test/prometheus" });
            const viaStack = parseMap(spokeConfig({ mimir: { readEndpoint: undefined, hubStack: "organization/argo-rollouts-addon/hub" } }), "preprod");
            assert.deepStrictEqual(viaStack.mimir.readEndpoint, { kind: "stack", stack: "organization/argo-rollouts-addon/hub" });
        });

        it("has defaults that satisfy every analysis rule", () => {
            const a = parseMap(hubConfig()).analysis;
            assert.deepStrictEqual(
                [a.scrapeInterval, a.rateWindow, a.remoteWriteLag, a.initialDelay, a.interval, a.minRequests, a.count],
                ["60s", "4m", "1m", "5m", "1m", 50, 3],
            );
            assert.strictEqual(parseMap(hub({ analysis: { scrapeInterval: "30s", rateWindow: "2m", initialDelay: "3m" } })).analysis.rateWindow, "2m");
            assert.strictEqual(parseMap(hub({ analysis: { count: 1, inconclusiveLimit: 0 } })).analysis.count, 1);
        });

        // [configuration, the keys refused (sorted), what each allows]
        const spoke = (x: string, tenant = x, hostname = `${x}.platform.test`) => ({ name: x, tenant, hostname });
        const REFUSED: [Record<string, unknown>, string[], RegExp[]][] = [
            [hub({ spokes: [{ ...spoke("a", "a|hub"), query: true }] }), ["spokes[0].tenant"], [/no '\|'/]],
            [
                hub({ spokes: [spoke("a", "shared"), spoke("b", "shared"), spoke("c", "hub")] }),
                ["spokes[1].tenant", "spokes[2].tenant"],
                [/spokes\[0\]\.tenant has it already/, /cluster\.mimirTenant \(the hub's own tenant\)/],
            ],
            [hub({ spokes: [spoke("a", "a", "x.platform.test"), spoke("b", "b", "x.platform.test")] }), ["spokes[1].hostname"], []],
            // A spoke names exactly one way to its read endpoint; a hub none.
            [spokeConfig({ mimir: { readEndpoint: undefined } }), ["mimir"], []],
            [spokeConfig({ mimir: { hubStack: "o/p/hub" } }), ["mimir"], []],
            [spokeConfig({ mimir: { readEndpoint: "mimir.example" } }), ["mimir.readEndpoint"], []],
            [spokeConfig({ spokes: spokes(1) }), ["spokes"], []],
            [hub({ mimir: { readEndpoint: "https://x.example/prometheus" } }), ["mimir.readEndpoint"], []],
            // The analysis rules, each relating keys that are valid themselves.
            [hub({ analysis: { rateWindow: "2m" } }), ["analysis.rateWindow"], [/at least 4 x analysis\.scrapeInterval \(60s\) = 240s: .*one missed scrape/]],
            [hub({ analysis: { scrapeInterval: "2m" } }), ["analysis.rateWindow"], []],
            [
                hub({ analysis: { rateWindow: "5m", initialDelay: "5m" } }),
                ["analysis.initialDelay"],
                [/at least analysis\.rateWindow \(5m\) \+ analysis\.remoteWriteLag \(1m\) = 360s: .*empty window must not look like a bad canary/],
            ],
            [hub({ analysis: { remoteWriteLag: "2m" } }), ["analysis.initialDelay"], []],
            [hub({ analysis: { minRequests: 10 } }), ["analysis.minRequests"], [/at least 1 \/ \(1 - analysis\.successRate \(0\.95\)\) = 20: .*single 5xx/]],
            [hub({ analysis: { successRate: 0.99 } }), ["analysis.minRequests"], [/= 100/]],
            [hub({ analysis: { successRate: 1 } }), ["analysis.successRate"], [/must be below 1/]],
            [hub({ analysis: { minRequests: 0 } }), ["analysis.minRequests"], []],
            [hub({ analysis: { count: 2 } }), ["analysis.count"], [/more than analysis\.failureLimit \+ analysis\.inconclusiveLimit \(0 \+ 2\)/]],
            [hub({ analysis: { latencyP99Seconds: 10 } }), ["analysis.latencyP99Seconds"], [/below 10, the highest finite bucket/]],
            [
                hub({ analysis: { rateWindow: "soon", minRequests: "many", count: -1 } }),
                ["analysis.count", "analysis.minRequests", "analysis.rateWindow"],
                [/must be a whole number/, /must be a whole number/, /must be a duration/],
            ],
            [
                hub({ analysis: { successRate: 1.5, interval: "1 minute", failureLimit: -1 } }),
                ["analysis.failureLimit", "analysis.interval", "analysis.successRate"],
                [],
            ],
            // Default-deny-only keys without default-deny, and spoke-only keys on the hub.
            [
                hub({ network: { canaryTargets: [{ namespace: "shop", port: 8080 }], hubReadCidrs: ["10.0.0.0/24"] } }),
                ["network.canaryTargets", "network.hubReadCidrs"],
                [],
            ],
            // Values that would break later: Mimir's tenant ids (dskit ValidTenantID), DNS labels, CIDRs, Go durations, namespaces.
            ...[".", ".."].flatMap((t): [Record<string, unknown>, string[], RegExp[]][] => [
                [hub({ cluster: { mimirTenant: t } }), ["cluster.mimirTenant"], []],
                [hub({ spokes: [spoke("a", t)] }), ["spokes[0].tenant"], []],
            ]),
            [hub({ spokes: [spoke("a", "a", `${"a".repeat(64)}.hub.platform.test`)] }), ["spokes[0].hostname"], []],
            [spokeConfig({ mimir: { readEndpoint: "https://mimir-preprod.hub.platform.test/" } }), ["mimir.readEndpoint"], []],
            [
                spokeConfig({ mimir: { readEndpoint: "https://mimir-preprod.hub.platform.test/api" } }),
                ["mimir.readEndpoint"],
                [/ending in the Prometheus API prefix \/prometheus/],
            ],
            ...["10.20.300.0/24", "0.0.0.0/0", "256.1.1.1/32"].map((c): [Record<string, unknown>, string[], RegExp[]] => [
                spokeConfig({ network: { hubReadCidrs: [c] } }),
                ["network.hubReadCidrs[0]"],
                [],
            ]),
            [hub({ analysis: { interval: "99999999h" } }), ["analysis.interval"], [/at most 9223372036s/]],
            ...["kube-system", "default", "kube-public", "kube-node-lease"].flatMap((ns): [Record<string, unknown>, string[], RegExp[]][] => [
                [hub({ controller: { namespace: ns } }), ["controller.namespace"], []],
                [hub({ smokeTest: { namespace: ns } }), ["smokeTest.namespace"], []],
            ]),
            [
                hub({ smokeTest: { ...SMOKE, namespace: "argo-rollouts" } }),
                ["smokeTest.namespace"],
                [
                    /^must differ from controller.namespace \(argo-rollouts\): both stages declare their namespace, and a tenant-shaped canary does not run beside the controller$/,
                ],
            ],
            [
                hub({ controller: { namespaceLabels: { "pod-security.kubernetes.io/enforce": "privileged", team: "platform" } } }),
                ["controller.namespaceLabels.pod-security.kubernetes.io/enforce"],
                [],
            ],
        ];
        REFUSED.forEach(([cfg, keys, allowed], n) => {
            it(`refuses ${keys.join(", ")} (case ${n})`, () => {
                const p = problems(cfg).sort((a, b) => a.key.localeCompare(b.key));
                assert.deepStrictEqual(
                    p.map((x) => x.key),
                    keys,
                );
                allowed.forEach((a, i) => assert.match(p[i].allowed, a));
            });
        });
        it("accepts the values next to each limit", () => {
            for (const cfg of [
                hub({ cluster: { mimirTenant: "..a" } }),
                hub({ spokes: [spoke("a", "a", `${"a".repeat(63)}.hub.platform.test`)] }),
                spokeConfig({ mimir: { readEndpoint: "https://mimir-preprod.hub.platform.test/prometheus/" } }),
                spokeConfig({ network: { hubReadCidrs: ["10.20.255.0/24"] } }),
                hub({ smokeTest: { ...SMOKE, namespace: "rollouts-smoke" } }),
            ]) {
                assert.doesNotThrow(() => parseMap(cfg));
            }
        });
    });

    describe("PromQL (pure)", () => {
        const canary = canaryMatchers("shop", "checkout", "5d8f9c7b6");

        it("selects the canary ReplicaSet by Beyla's namespace and replicaset labels", () => {
            assert.strictEqual(selector(canary), '{k8s_namespace_name="shop",k8s_replicaset_name="checkout-5d8f9c7b6"}');
        });

        it("computes the non-5xx share of the canary's requests, 0 when all fail, nothing below the floor", () => {
            const all = 'http_server_request_duration_seconds_count{k8s_namespace_name="shop",k8s_replicaset_name="checkout-5d8f9c7b6"}';
            assert.strictEqual(
                successRateQuery(canary, "4m", 50),
                '(sum(increase(http_server_request_duration_seconds_count{k8s_namespace_name="shop",k8s_replicaset_name="checkout-5d8f9c7b6",http_response_status_code!~"5.."}[4m])) or vector(0))' +
                    ` / (sum(increase(${all}[4m])) >= 50)`,
            );
        });

        it("computes the canary's p99 from the duration histogram, above the same floor", () => {
            assert.strictEqual(
                latencyP99Query(canary, "5m", 20),
                'histogram_quantile(0.99, sum by (le) (rate(http_server_request_duration_seconds_bucket{k8s_namespace_name="shop",k8s_replicaset_name="checkout-5d8f9c7b6"}[5m])))' +
                    ' and on() (sum(increase(http_server_request_duration_seconds_count{k8s_namespace_name="shop",k8s_replicaset_name="checkout-5d8f9c7b6"}[5m])) >= 20)',
            );
        });

        it("escapes label values so an argument cannot close the string", () => {
            assert.strictEqual(escapeLabelValue('a"b\\c\nd'), 'a\\"b\\\\c\\nd');
            assert.strictEqual(selector([{ name: "k8s_namespace_name", op: "=", value: 'x"} or vector(1) #' }]), '{k8s_namespace_name="x\\"} or vector(1) #"}');
            assert.throws(() => selector([{ name: "bad-name", op: "=", value: "x" }]), /not a Prometheus label name/);
        });

        it("builds each shared template twice, background and finite, from the configured thresholds", () => {
            const cfg = parseMap(
                merged(hubConfig(), {
                    analysis: { successRate: 0.99, latencyP99Seconds: 0.25, rateWindow: "5m", initialDelay: "6m", minRequests: 200, count: 4 },
                }),
            );
            const templates = sharedTemplates(cfg.analysis);
            assert.deepStrictEqual(
                templates.map((t) => [t.name, t.metric, t.runs]),
                [
                    [templateName("success-rate"), "success-rate", "background"],
                    [templateName("success-rate-finite"), "success-rate", "finite"],
                    [templateName("latency-p99"), "latency-p99", "background"],
                    [templateName("latency-p99-finite"), "latency-p99", "finite"],
                ],
            );
            const [success, successFinite, latency] = templates;
            assert.strictEqual(success.query, successFinite.query);
            assert.match(success.query, /\[5m\]/);
            assert.match(success.query, />= 200\)$/);
            assert.match(success.query, /k8s_replicaset_name="\{\{args\.rollout\}\}-\{\{args\.canary-hash\}\}"/);
            assert.match(success.successCondition, />= 0\.99$/);
            assert.match(latency.failureCondition, /> 0\.25$/);
            type Spec = { metrics: Record<string, unknown>[] };
            const background = clusterAnalysisTemplateSpec(success, cfg.analysis, "http://m/prometheus", "hub") as Spec;
            assert.strictEqual(background.metrics[0].initialDelay, "6m");
            assert.strictEqual(background.metrics[0].interval, "1m");
            assert.ok(!("count" in background.metrics[0]), "the background gate runs until the rollout ends");
            const finite = clusterAnalysisTemplateSpec(successFinite, cfg.analysis, "http://m/prometheus", "hub") as Spec;
            assert.strictEqual(finite.metrics[0].count, 4);
        });
    });

    describe("hub", () => {
        let run: OfflineRun;
        before(async () => {
            run = await planInline(
                merged(hubConfig(), {
                    spokes: [
                        { name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.platform.test", query: true },
                        { name: "edge", tenant: "edge", hostname: "mimir-edge.hub.platform.test", query: false },
                    ],
                }),
                { stack: "hub" },
            );
        });

        it("declares one spoke-ingest route per spoke, on its hostname only", () => {
            const routes = run.resources.filter((r) => r.type === "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute");
            assert.deepStrictEqual(routes.map((r) => r.name).sort(), ["mimir-spoke-edge", "mimir-spoke-preprod"]);
            for (const r of routes) {
                assert.strictEqual(r.stage, "gateway");
                const spec = r.inputs.spec as { hostnames: string[]; parentRefs: { name: string; sectionName: string }[] };
                assert.strictEqual(spec.hostnames.length, 1);
                assert.deepStrictEqual(
                    spec.parentRefs.map((p) => `${p.name}/${p.sectionName}`),
                    ["internal/https"],
                );
            }
        });

        it("sets, never adds, the spoke's own tenant on every rule", () => {
            for (const [name, tenant] of [
                ["mimir-spoke-preprod", "preprod"],
                ["mimir-spoke-edge", "edge"],
            ]) {
                const rules = (byName(run, name).inputs.spec as { rules: { filters: { requestHeaderModifier: Record<string, unknown> }[] }[] }).rules;
                for (const rule of rules) {
                    assert.deepStrictEqual(rule.filters, [
                        { type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "X-Scope-OrgID", value: tenant }] } },
                    ]);
                }
            }
        });

        it("grants cross-namespace routes their backend", async () => {
            const r = await planInline(merged(hubConfig(), { spokes: spokes(1), mimir: { spokeRouteNamespace: "gateway-system" } }));
            const grant = r.resources.find((x) => x.type === "kubernetes:gateway.networking.k8s.io/v1beta1:ReferenceGrant")!;
            assert.deepStrictEqual(grant.inputs.spec, {
                from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "gateway-system" }],
                to: [{ group: "", kind: "Service", name: "mimir-gateway" }],
            });
            assert.strictEqual((grant.inputs.metadata as { namespace: string }).namespace, "observability");
            const route = byName(r, "mimir-spoke-spoke-0");
            assert.ok(route.dependsOn.includes(grant.urn));
            const backend = (route.inputs.spec as { rules: { backendRefs: { namespace?: string }[] }[] }).rules[0].backendRefs[0];
            assert.strictEqual(backend.namespace, "observability");
            assert.ok(!run.resources.some((x) => x.type.endsWith(":ReferenceGrant")), "no grant when routes live beside Mimir");
        });

        it("fails the preview when a spoke's listener is missing on the ingest Gateway", async () => {
            const cfg = merged(hubConfig(), { spokes: [{ name: "a", tenant: "a", hostname: "a.platform.test", listener: "spoke-a" }] });
            await assert.rejects(planInline(cfg, { stack: "hub" }), /no listener "spoke-a"/);
        });

        it("queries Mimir in-cluster with its own tenant through the Prometheus provider", () => {
            for (const name of [
                "analysis-success-rate",
                "analysis-success-rate-finite",
                "analysis-latency-p99",
                "analysis-latency-p99-finite",
                "analysis-error-budget",
            ]) {
                const t = byName(run, name);
                assert.strictEqual(t.type, "kubernetes:argoproj.io/v1alpha1:ClusterAnalysisTemplate");
                const metric = (t.inputs.spec as { metrics: { provider: Record<string, { address: string; headers: unknown[] }> }[] }).metrics[0];
                assert.deepStrictEqual(Object.keys(metric.provider), ["prometheus"], "no Job provider: Kyverno denies its pod");
                assert.strictEqual(metric.provider.prometheus.address, "http://mimir-gateway.observability.svc:80/prometheus");
                assert.deepStrictEqual(metric.provider.prometheus.headers, [{ key: "X-Scope-OrgID", value: "hub" }]);
                assert.ok(t.dependsOn.includes(byName(run, "rollouts-crds").urn), "templates wait for the CRDs");
            }
        });

        it("lets the controller reach the Mimir gateway pods, and only it into Mimir", () => {
            const egress = byName(run, "argo-rollouts-controller").inputs.spec as ReturnType<typeof controllerNetworkPolicy>;
            assert.deepStrictEqual(egress.egress?.[0], {
                toEndpoints: [
                    {
                        matchLabels: {
                            "k8s:io.kubernetes.pod.namespace": "observability",
                            "app.kubernetes.io/name": "mimir",
                            "app.kubernetes.io/component": "gateway",
                        },
                    },
                ],
                toPorts: [{ ports: [{ port: "8080", protocol: "TCP" }] }],
            });
            assert.deepStrictEqual(egress.enableDefaultDeny, { ingress: false, egress: false });
            const ingress = byName(run, "argo-rollouts-metric-gates");
            assert.strictEqual((ingress.inputs.metadata as { namespace: string }).namespace, "observability");
            assert.deepStrictEqual((ingress.inputs.spec as ReturnType<typeof mimirIngressNetworkPolicy>).ingress, [
                {
                    fromEndpoints: [
                        {
                            matchLabels: {
                                "k8s:io.kubernetes.pod.namespace": "argo-rollouts",
                                "app.kubernetes.io/name": "argo-rollouts",
                                "app.kubernetes.io/component": "rollouts-controller",
                            },
                        },
                    ],
                    toPorts: [{ ports: [{ port: "8080", protocol: "TCP" }] }],
                },
            ]);
        });

        it("plans a hub with 100 spokes", async () => {
            const big = await planInline(merged(hubConfig(), { spokes: spokes(100) }));
            assert.strictEqual(big.resources.filter((r) => r.type.endsWith(":HTTPRoute")).length, 100);
            const tenants = new Set(
                big.resources
                    .filter((r) => r.type.endsWith(":HTTPRoute"))
                    .map(
                        (r) =>
                            (r.inputs.spec as { rules: { filters: { requestHeaderModifier: { set: { value: string }[] } }[] }[] }).rules[0].filters[0]
                                .requestHeaderModifier.set[0].value,
                    ),
            );
            assert.strictEqual(tenants.size, 100);
            assert.strictEqual(Object.keys(big.outputs.spokeReadEndpoints as object).length, 100);
        });
    });

    describe("spoke", () => {
        let run: OfflineRun;
        before(async () => {
            run = await planInline(spokeConfig({ network: { hubReadCidrs: ["10.20.0.0/24"] } }), { stack: "preprod" });
        });

        it("reads its own tenant through the hub's route", () => {
            const metric = (
                byName(run, "analysis-success-rate").inputs.spec as { metrics: { provider: { prometheus: { address: string; headers: unknown[] } } }[] }
            ).metrics[0];
            assert.strictEqual(metric.provider.prometheus.address, "https://mimir-preprod.hub.platform.test/prometheus");
            assert.deepStrictEqual(metric.provider.prometheus.headers, [{ key: "X-Scope-OrgID", value: "preprod" }]);
        });

        it("declares no spoke routes and no Mimir ingress", () => {
            assert.ok(!run.resources.some((r) => r.type.endsWith(":HTTPRoute")));
            assert.ok(!run.resources.some((r) => r.name === "argo-rollouts-metric-gates"));
        });

        it("lets the controller reach the hub read endpoint and DNS, nothing broader", () => {
            const spec = byName(run, "argo-rollouts-controller").inputs.spec as ReturnType<typeof controllerNetworkPolicy>;
            assert.deepStrictEqual(spec.egress, [
                { toFQDNs: [{ matchName: "mimir-preprod.hub.platform.test" }], toPorts: [{ ports: [{ port: "443", protocol: "TCP" }] }] },
                { toCIDR: ["10.20.0.0/24"], toPorts: [{ ports: [{ port: "443", protocol: "TCP" }] }] },
                {
                    toEndpoints: [{ matchLabels: { "k8s:io.kubernetes.pod.namespace": "kube-system", "k8s-app": "kube-dns" } }],
                    toPorts: [
                        {
                            ports: [
                                { port: "53", protocol: "UDP" },
                                { port: "53", protocol: "TCP" },
                            ],
                            rules: { dns: [{ matchPattern: "*" }] },
                        },
                    ],
                },
            ]);
        });

        it("takes the endpoint the hub stack publishes for it", async () => {
            const cfg = spokeConfig({ mimir: { readEndpoint: undefined, hubStack: "organization/argo-rollouts-addon/hub" } });
            const world = {
                objects: { "gateway.networking.k8s.io/v1/Gateway/gateway-system/internal": { spec: { listeners: [{ name: "https" }] } } },
                stackOutputs: { "organization/argo-rollouts-addon/hub": { spokeReadEndpoints: { preprod: "https://from-hub.platform.test/prometheus" } } },
            };
            const r = await planInline(cfg, { stack: "preprod", world });
            assert.strictEqual(r.outputs.metricsAddress, "https://from-hub.platform.test/prometheus");
            const noRoute = { ...world, stackOutputs: { "organization/argo-rollouts-addon/hub": { spokeReadEndpoints: { other: "https://x/prometheus" } } } };
            // Once, as the run's own error: before any template that reads the address is declared.
            await assert.rejects(planInline(cfg, { stack: "preprod", world: noRoute }), (e: Error) => {
                assert.match(
                    e.message,
                    /^stack "preprod": the hub stack organization\/argo-rollouts-addon\/hub routes no read endpoint for spoke "preprod" \(add it to the hub's spokes with query: true\); it routes: other$/,
                );
                assert.ok(e instanceof RunError, "a RunError: the Pulumi CLI prints its message alone");
                return true;
            });
        });
    });

    describe("default-deny controller namespace", () => {
        const policies = (r: OfflineRun): PlannedResource[] => r.resources.filter((x) => x.type === "kubernetes:cilium.io/v2:CiliumNetworkPolicy");

        it("denies the namespace and lists everything the controller still needs", async () => {
            const r = await planInline(
                merged(hubConfig(), {
                    network: { controllerDefaultDeny: true, canaryTargets: [{ namespace: "shop", port: 8080 }], metricsScrapeNamespaces: ["observability"] },
                }),
            );
            const deny = byName(r, "default-deny");
            assert.deepStrictEqual(deny.inputs.spec, {
                description: "Default deny: the controller namespace allows only what its policies list",
                endpointSelector: {},
                ingress: [{}],
                egress: [{}],
            });
            const spec = byName(r, "argo-rollouts-controller").inputs.spec as ReturnType<typeof controllerNetworkPolicy>;
            assert.strictEqual(spec.enableDefaultDeny, undefined);
            const egress = spec.egress ?? [];
            assert.ok(
                egress.some((e) => e.toEntities?.includes("kube-apiserver")),
                "API server",
            );
            const fqdns = egress.flatMap((e) => e.toFQDNs ?? []).map((f) => f.matchName);
            assert.deepStrictEqual(fqdns, ["github.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com"], "plugin download");
            assert.ok(
                egress.some((e) => e.toEndpoints?.[0].matchLabels["k8s:io.kubernetes.pod.namespace"] === "shop" && e.toPorts?.[0].ports[0].port === "8080"),
                "canary",
            );
            assert.ok(
                egress.some((e) => e.toEndpoints?.[0].matchLabels["app.kubernetes.io/name"] === "mimir"),
                "Mimir",
            );
            assert.deepStrictEqual(spec.ingress?.[0].toPorts, [{ ports: [{ port: "8090", protocol: "TCP" }] }]);
            assert.ok(!egress.some((e) => e.toEntities?.includes("world") || e.toEntities?.includes("all")), "nothing broader");
            assert.strictEqual(policies(r).length, 3);
        });

        it("needs no download egress when the plugin comes from an image", async () => {
            const r = await planInline(
                merged(hubConfig(), {
                    network: { controllerDefaultDeny: true },
                    plugin: { delivery: "image", sha256: undefined, digest: `sha256:${"b".repeat(64)}` },
                }),
            );
            const egress = (byName(r, "argo-rollouts-controller").inputs.spec as ReturnType<typeof controllerNetworkPolicy>).egress ?? [];
            assert.ok(!egress.some((e) => e.toFQDNs));
        });
    });

    describe("spoke endpoints (pure)", () => {
        it("builds a read endpoint only for spokes with query", () => {
            const mimir = parseMap(hubConfig()).mimir;
            assert.strictEqual(spokeReadEndpoint({ name: "a", tenant: "a", hostname: "a.example", query: true }, mimir), "https://a.example/prometheus");
            assert.strictEqual(spokeReadEndpoint({ name: "a", tenant: "a", hostname: "a.example", query: false }, mimir), undefined);
            assert.strictEqual(
                spokeRouteSpec({ name: "a", tenant: "a", hostname: "a.example", listener: "spokes", query: false }, mimir).parentRefs[0].sectionName,
                "spokes",
            );
        });
        it("explains a hub that does not route the spoke", () => {
            assert.strictEqual(pickSpokeEndpoint("p", "o/p/hub", "p", { p: "https://x/prometheus" }), "https://x/prometheus");
            assert.throws(() => pickSpokeEndpoint("p", "o/p/hub", "p", undefined), /it routes: none/);
        });
    });
});

describe("configuration read before anything is declared", () => {
    it("a typo in the project's namespace is refused, not ignored", () => {
        const { "aws:region": _r, ...rest } = hubConfig();
        assert.throws(
            () =>
                parseAddonConfig("hub", rest, {
                    awsRegion: "eu-west-1",
                    otherKeys: ["argo-rollouts-adon:cluster", "aws:region", "kubernetes:context", "pulumi:tags"],
                }),
            (e: Error) => {
                assert.match(
                    e.message,
                    /\n {2}- argo-rollouts-adon:cluster = \[not shown\]: unknown key; the namespace argo-rollouts-adon: is neither argo-rollouts-addon: nor one of Pulumi's and its providers' \(pulumi:, aws:, kubernetes:\); did you mean argo-rollouts-addon\?/,
                );
                assert.doesNotMatch(e.message, /aws:region|kubernetes:context|pulumi:tags/);
                return true;
            },
        );
    });
});
