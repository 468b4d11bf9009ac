import { RunError } from "@pulumi/pulumi/errors";
import * as assert from "assert";
import { pickSpokeEndpoint } from "../components/cluster/hubEndpoint";
import { OfflineRun } from "../tools/offline";
import { TEST_DIGEST, TEST_SMOKE, byName, hubConfig, merged, planInline, spokeConfig } from "./harness";
import { configError, parseMap } from "./stackConfig";
import { templateName } from "../components/argoRollouts";
import { clusterAnalysisTemplateSpec, selector, sharedTemplates } from "../components/rollouts/analysis";
import { controllerNetworkPolicy, mimirIngressNetworkPolicy } from "../components/rollouts/network";

const hub = (patch: Record<string, unknown>) => merged(hubConfig(), patch);

const spokes = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ name: `spoke-${i}`, tenant: `tenant-${i}`, hostname: `mimir-${i}.hub.platform.test`, query: true }));

const problems = (cfg: Record<string, unknown>) => configError(() => parseMap(cfg)).problems;

describe("metric gates", () => {
    describe("configuration", () => {
        // A hub's spokes and its ingest Gateway, a spoke's read endpoint by URL or through the hub stack: the plans of 'hub' and 'spoke' below.
        it("has defaults that satisfy every analysis rule", () => {
            const a = parseMap(hubConfig()).analysis;
            assert.deepStrictEqual(
                [a.scrapeInterval, a.rateWindow, a.remoteWriteLag, a.initialDelay, a.interval, a.minRequests, a.count],
                ["60s", "4m", "1m", "5m", "1m", 50, 3],
            );
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
            // Kubernetes' own namespaces (one list, PLATFORM_NAMESPACES): test/config.test.ts, for both keys.
            [
                hub({ smokeTest: { ...TEST_SMOKE, namespace: "argo-rollouts" } }),
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
            ]) {
                assert.doesNotThrow(() => parseMap(cfg));
            }
        });
    });

    describe("PromQL (pure)", () => {
        // What each query concludes from Beyla's series (the non-5xx share, 0 when all fail, the p99,
        // nothing below the floor) is the engines' to say: engine-promtool runs them through promtool
        // and Argo Rollouts' provider over e2e/samples/gates.yaml.
        // Label values that would close the string stay inside it: test/gates.test.ts reads them back with Prometheus' grammar.
        it("refuses a label name Prometheus would not read", () => {
            assert.throws(() => selector([{ name: "bad-name", op: "=", value: "x" }]), /not a Prometheus label name/);
        });

        it("builds each shared template twice, background and finite, from the configured thresholds", () => {
            const cfg = parseMap(
                hub({ analysis: { successRate: 0.99, latencyP99Seconds: 0.25, rateWindow: "5m", initialDelay: "6m", minRequests: 200, count: 4 } }),
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
            assert.deepStrictEqual([background.metrics[0].initialDelay, background.metrics[0].interval], ["6m", "1m"]);
            assert.ok(!("count" in background.metrics[0]), "the background gate runs until the rollout ends");
            const finite = clusterAnalysisTemplateSpec(successFinite, cfg.analysis, "http://m/prometheus", "hub") as Spec;
            assert.strictEqual(finite.metrics[0].count, 4);
        });
    });

    describe("hub", () => {
        let run: OfflineRun;
        before(async () => {
            const spoke = (name: string, query: boolean) => ({ name, tenant: name, hostname: `mimir-${name}.hub.platform.test`, query });
            run = await planInline(hub({ spokes: [spoke("preprod", true), spoke("edge", false)] }), { stack: "hub" });
        });

        // Which routes each ownership mode declares, and what the read rule reaches: test/spokeRoutes.test.ts.
        it("declares one spoke-ingest route per spoke, on its hostname only, setting (never adding) the spoke's own tenant on every rule", () => {
            const routes = run.resources.filter((r) => r.type === "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute");
            assert.deepStrictEqual(routes.map((r) => r.name).sort(), ["mimir-spoke-edge", "mimir-spoke-preprod"]);
            for (const r of routes) {
                const tenant = r.name.slice("mimir-spoke-".length);
                type ParentRef = { namespace: string; name: string; sectionName: string };
                const spec = r.inputs.spec as { hostnames: string[]; parentRefs: ParentRef[]; rules: { filters: unknown[] }[] };
                const where = [r.stage, spec.hostnames, spec.parentRefs.map((p) => `${p.namespace}/${p.name}/${p.sectionName}`)];
                assert.deepStrictEqual(where, ["gateway", [`mimir-${tenant}.hub.platform.test`], ["gateway-system/internal/https"]]);
                const setTenant = { type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "X-Scope-OrgID", value: tenant }] } };
                assert.deepStrictEqual(
                    spec.rules.map((rule) => rule.filters),
                    spec.rules.map(() => [setTenant]),
                );
            }
        });

        it("grants cross-namespace routes their backend", async () => {
            const r = await planInline(hub({ spokes: spokes(1), mimir: { spokeRouteNamespace: "gateway-system" } }));
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

        it("queries Mimir in-cluster with its own tenant through the Prometheus provider", () => {
            // Which six templates a plan declares: test/gates.test.ts ('every template parses').
            const templates = run.resources.filter((r) => r.type === "kubernetes:argoproj.io/v1alpha1:ClusterAnalysisTemplate");
            assert.strictEqual(templates.length, 6);
            for (const t of templates) {
                assert.strictEqual((t.inputs.metadata as { name: string }).name, `argo-rollouts-addon-${t.name.slice("analysis-".length)}`);
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
            const big = await planInline(hub({ spokes: spokes(100) }));
            const routes = big.resources.filter((r) => r.type.endsWith(":HTTPRoute"));
            assert.strictEqual(routes.length, 100);
            assert.strictEqual(new Set(routes.map((r) => JSON.stringify((r.inputs.spec as { rules: { filters: unknown }[] }).rules[0].filters))).size, 100);
            assert.strictEqual(Object.keys(big.outputs.spokeReadEndpoints as object).length, 100);
        });
    });

    describe("spoke", () => {
        let run: OfflineRun;
        before(async () => {
            run = await planInline(spokeConfig({ network: { hubReadCidrs: ["10.20.0.0/24"] } }), { stack: "preprod" });
        });

        it("reads its own tenant through the hub's route, and declares no spoke routes and no Mimir ingress", () => {
            type Spec = { metrics: { provider: { prometheus: { address: string; headers: unknown[] } } }[] };
            const { prometheus } = (byName(run, "analysis-success-rate").inputs.spec as Spec).metrics[0].provider;
            assert.strictEqual(prometheus.address, "https://mimir-preprod.hub.platform.test/prometheus");
            assert.deepStrictEqual(prometheus.headers, [{ key: "X-Scope-OrgID", value: "preprod" }]);
            assert.ok(!run.resources.some((r) => r.type.endsWith(":HTTPRoute") || r.name === "argo-rollouts-metric-gates"));
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

        it("fails when the hub stack publishes no endpoint for it (one it does: test/plan.test.ts, each documented topology)", async () => {
            const cfg = spokeConfig({ mimir: { readEndpoint: undefined, hubStack: "organization/argo-rollouts-addon/hub" } });
            const noRoute = {
                objects: { "gateway.networking.k8s.io/v1/Gateway/gateway-system/internal": { spec: { listeners: [{ name: "https" }] } } },
                stackOutputs: { "organization/argo-rollouts-addon/hub": { spokeReadEndpoints: { other: "https://x/prometheus" } } },
            };
            // Once, as the run's own error: before any template that reads the address is declared.
            await assert.rejects(planInline(cfg, { stack: "preprod", world: noRoute }), (e: Error) => {
                assert.match(
                    e.message,
                    /^stack "preprod": the hub stack organization\/argo-rollouts-addon\/hub routes no read endpoint for spoke "preprod" \(add it to the hub's spokes with query: true\); it routes: other$/,
                );
                assert.ok(e instanceof RunError, "a RunError: the Pulumi CLI prints its message alone");
                return true;
            });
            // A hub that publishes no endpoints at all; which spokes get one, on which listener: test/spokeRoutes.test.ts.
            assert.throws(() => pickSpokeEndpoint("p", "o/p/hub", "p", undefined), /it routes: none/);
        });
    });

    describe("default-deny controller namespace", () => {
        it("denies the namespace and lists everything the controller still needs", async () => {
            const r = await planInline(
                hub({
                    network: { controllerDefaultDeny: true, canaryTargets: [{ namespace: "shop", port: 8080 }], metricsScrapeNamespaces: ["observability"] },
                    notifications: { service: "slack", slackChannel: "#deploys" },
                    notificationsToken: { secure: "v1:encrypted" },
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
            const fqdns = egress.flatMap((e) => e.toFQDNs ?? []).map((f) => f.matchName);
            assert.deepStrictEqual(fqdns, ["github.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com", "slack.com"]);
            const apiServer = egress.some((e) => e.toEntities?.includes("kube-apiserver"));
            const canary = egress.some(
                (e) => e.toEndpoints?.[0].matchLabels["k8s:io.kubernetes.pod.namespace"] === "shop" && e.toPorts?.[0].ports[0].port === "8080",
            );
            const mimir = egress.some((e) => e.toEndpoints?.[0].matchLabels["app.kubernetes.io/name"] === "mimir");
            assert.deepStrictEqual({ apiServer, canary, mimir }, { apiServer: true, canary: true, mimir: true });
            assert.deepStrictEqual(spec.ingress?.[0].toPorts, [{ ports: [{ port: "8090", protocol: "TCP" }] }]);
            assert.ok(!egress.some((e) => e.toEntities?.includes("world") || e.toEntities?.includes("all")), "nothing broader");
            assert.strictEqual(r.resources.filter((x) => x.type === "kubernetes:cilium.io/v2:CiliumNetworkPolicy").length, 3);
        });

        it("needs no download egress when the plugin comes from an image", async () => {
            const r = await planInline(
                hub({ network: { controllerDefaultDeny: true }, plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST } }),
            );
            const egress = (byName(r, "argo-rollouts-controller").inputs.spec as ReturnType<typeof controllerNetworkPolicy>).egress ?? [];
            assert.ok(!egress.some((e) => e.toFQDNs));
        });
    });
});

describe("configuration read before anything is declared", () => {
    it("a typo in the project's namespace is refused, not ignored", () => {
        const { message } = configError(() =>
            parseMap(hubConfig(), "hub", { otherKeys: ["argo-rollouts-adon:cluster", "aws:region", "kubernetes:context", "pulumi:tags"] }),
        );
        assert.match(
            message,
            /\n {2}- argo-rollouts-adon:cluster = \[not shown\]: unknown key; the namespace argo-rollouts-adon: is neither argo-rollouts-addon: nor one of Pulumi's and its providers' \(pulumi:, aws:, kubernetes:\); did you mean argo-rollouts-addon\?/,
        );
        assert.doesNotMatch(message, /aws:region|kubernetes:context|pulumi:tags/);
    });
});
