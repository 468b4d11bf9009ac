/**
 * The stack configuration (stacks/config.ts over components/config): every rule refuses its bad
 * values naming the stack, the key, the value (never a secret's) and what is allowed, all at once.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { readCaBundle } from "../components/gateway/caBundle";
import { nearestKey } from "../components/config/reader";
import { ConfigProblem, OFFLINE_SECRET, parseConfigText, parseQuantity } from "../components/config";
import { AddonConfig, parseAddonConfig } from "../stacks/config";
import { TEST_DIGEST, TEST_POLICY, TEST_SHA256, hubConfig, merged, whole } from "./harness";
import { Ambient, Patch, configError, parseHub, parseMap } from "./stackConfig";
import { CONTROLLER_DEFAULTS, KNOWN_CHART_APP_VERSIONS, PLUGIN_DEFAULTS } from "../components/rollouts/config";

const problemsOf = (patch: Patch, stack = "hub", ambient: Ambient = {}) => configError(() => parseMap(merged(hubConfig(), patch), stack, ambient));

/** The problem for `key` whose `allowed` matches; with `given`, the message names the stack, the key and that value. */
function assertRejects(patch: Patch, key: string, allowed: RegExp, given?: string, ambient: Ambient = {}): ConfigProblem {
    const err = problemsOf(patch, "hub", ambient);
    const problem = err.problems.find((p) => p.key === key && allowed.test(p.allowed));
    assert.ok(problem, `no problem for ${key} matching ${allowed}; got ${err.message}`);
    assert.match(err.message, /^stack "hub": invalid configuration/);
    if (given !== undefined) {
        assert.strictEqual(problem.given, given);
        assert.ok(err.message.includes(`argo-rollouts-addon:${key} = ${given}`), err.message);
    }
    return problem;
}

/** A spoke of the hub, with `mimir` as its mimir section. */
const spoke = (mimir: Patch) => ({
    cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", kubeconfigContext: "preprod" },
    gateway: { name: "internal", namespace: "gateway-system", listener: "https" },
    plugin: { sha256: TEST_SHA256 },
    policy: TEST_POLICY,
    argocd: { projects: {}, applicationSets: {} },
    mimir,
});

const REGULATED = {
    namespaceLabels: { "platform.test/class": "regulated" },
    approverGroups: ["release-approvers"],
    deployerGroups: ["shop-deployers"],
    gitopsServiceAccounts: ["argocd/argocd-application-controller"],
};
const regulated = (patch: Patch) => ({ policy: { regulated: { ...REGULATED, ...patch } } });
const SMOKE = (patch: Patch = {}) => ({
    smokeTest: {
        enabled: true,
        hostname: "smoke.platform.test",
        image: `registry.platform.test/mirror/argoproj/rollouts-demo@${TEST_DIGEST}`,
        loadImage: `registry.platform.test/mirror/curlimages/curl@${TEST_DIGEST}`,
        ...patch,
    },
});
const DIGEST = `sha256:${"c".repeat(64)}`;
const EMPTY_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const LONG = "n".repeat(64);
const LONG_PATH = Array.from({ length: 6 }, () => "p".repeat(40)).join("/");
const prefix = (n: number) => `${"a".repeat(63)}.`.repeat(4).slice(0, n);
const SLO = 'slo:period_error_budget_remaining:ratio{sloth_service="{{args.service}}"}';
const ARGS_QUERY = 'slo:period_error_budget_remaining:ratio{sloth_service="{{ args.service }}",sloth_slo="{{ args.slo }}"}';

describe("configuration", () => {
    it("accepts a complete hub and fills every default from code", () => {
        const cfg = parseHub();
        assert.deepStrictEqual(cfg.cluster, {
            name: "hub",
            role: "hub",
            mimirTenant: "hub",
            connection: { kind: "eks", clusterName: "test-hub", region: "eu-west-1" },
            adoptExisting: false,
            allowDowngrade: false,
        });
        assert.strictEqual(cfg.controller.chartVersion, CONTROLLER_DEFAULTS.chartVersion);
        assert.strictEqual(cfg.controller.appVersion, KNOWN_CHART_APP_VERSIONS["2.41.0"]);
        assert.strictEqual(cfg.controller.replicas, 2);
        assert.strictEqual(cfg.controller.pdbMaxUnavailable, 1);
        assert.deepStrictEqual(cfg.plugin, {
            version: "v0.15.0",
            delivery: { mode: "download", arch: "amd64", baseUrl: PLUGIN_DEFAULTS.baseUrl, sha256: TEST_SHA256 },
            tcpRoutes: false,
            tlsRoutes: false,
        });
        assert.strictEqual(cfg.imageRegistry, "registry.platform.test/mirror");
    });

    it("reads scalars given as text, as Pulumi stores them", () => {
        const cfg = parseHub({ controller: { replicas: "3", serviceMonitor: "true" } });
        assert.strictEqual(cfg.controller.replicas, 3);
        assert.strictEqual(cfg.controller.serviceMonitor, true);
        assert.deepStrictEqual(parseConfigText('{"a":1}'), { a: 1 });
        assert.strictEqual(parseConfigText("plain"), "plain");
    });

    describe("accepts the valid forms", () => {
        const slack = { notifications: { service: "slack", slackChannel: "C0123ABCD" }, notificationsToken: "xoxb-test" };
        const okLabel = `${prefix(252)}a/tier`;
        const sso = {
            ...regulated({ approverGroups: ["Release Approvers"], deployerGroups: ["Shop Deployers"], gitopsGroups: ["Argo CD Hub"] }),
            controller: { tenantOperators: [{ namespace: "shop", groups: ["Shop On Call"] }] },
            argocd: {
                rbac: {
                    approverRole: "role:release-approver",
                    deployerRoles: ["role:tenant-deployer"],
                    projects: ["tenants-regulated"],
                    regulatedProjects: ["tenants-regulated"],
                    approverGroups: ["Release Approvers"],
                    deployerGroups: ["Shop Deployers"],
                },
            },
        };
        const ACCEPTED: [string, Patch, (c: AddonConfig) => unknown, unknown][] = [
            [
                "a kubeconfig context instead of EKS",
                { cluster: { eksClusterName: undefined, kubeconfigContext: "ctx" } },
                (c) => c.cluster.connection,
                { kind: "kubeconfig", context: "ctx" },
            ],
            [
                "image delivery pinned by digest",
                { plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST } },
                (c) => c.plugin.delivery,
                { mode: "image", repository: PLUGIN_DEFAULTS.repository, digest: TEST_DIGEST },
            ],
            ["the pinned chart's own appVersion", { controller: { appVersion: "v1.9.0" } }, (c) => c.controller.appVersion, "v1.9.0"],
            ["a registry on localhost with a port", { imageRegistry: "localhost:5000/mirror" }, (c) => c.imageRegistry, "localhost:5000/mirror"],
            ["a registry on localhost", { imageRegistry: "localhost/mirror" }, (c) => c.imageRegistry, "localhost/mirror"],
            [
                "a smoke image from anywhere without imageRegistry",
                { imageRegistry: undefined, ...SMOKE({ image: `ghcr.io/a/demo@${DIGEST}` }) },
                (c) => c.smokeTest.image,
                `ghcr.io/a/demo@${DIGEST}`,
            ],
            [
                "a pinned reference that keeps its tag",
                SMOKE({ image: `registry.platform.test/mirror/demo:blue@${DIGEST}` }),
                (c) => c.smokeTest.image,
                `registry.platform.test/mirror/demo:blue@${DIGEST}`,
            ],
            [
                "a label key prefix of 253 characters",
                { policy: { prodNamespaceLabels: whole({ [okLabel]: "prod" }) } },
                (c) => c.policy.prodNamespaceLabels,
                { [okLabel]: "prod" },
            ],
            ["{{ args.service }} with blanks, as Argo Rollouts trims them", { errorBudget: { query: ARGS_QUERY } }, (c) => c.errorBudget.query, ARGS_QUERY],
            [
                "a PriorityClass name with dots",
                { controller: { priorityClassName: "platform.critical" } },
                (c) => c.controller.priorityClassName,
                "platform.critical",
            ],
            [
                "a freeze of 2147483646 measurements",
                { errorBudget: { recheckInterval: "1s", maxFreeze: "2147483646s" } },
                (c) => c.errorBudget.maxFreeze,
                "2147483646s",
            ],
            ["a pause of 596523h", { delivery: { prod: { standard: { stepPause: "596523h" } } } }, (c) => c.delivery.prod.standard.stepPause, "596523h"],
            [
                "a ServiceMonitor with scrape namespaces under default-deny",
                { controller: { serviceMonitor: true }, network: { controllerDefaultDeny: true, metricsScrapeNamespaces: ["monitoring"] } },
                (c) => c.network.metricsScrapeNamespaces,
                ["monitoring"],
            ],
            [
                "SSO group names with blanks",
                sso,
                (c) => [c.policy.regulated?.approverGroups, c.policy.regulated?.gitopsGroups, c.controller.tenantOperators, c.argocd.rbac.deployerGroups],
                [["Release Approvers"], ["Argo CD Hub"], [{ namespace: "shop", groups: ["Shop On Call"] }], ["Shop Deployers"]],
            ],
        ];
        for (const [what, patch, pick, want] of ACCEPTED) {
            it(what, () => assert.deepStrictEqual(pick(parseHub(patch)), want));
        }
        it("a Slack channel ID, and instant vectors and scalars as the error-budget query", () => {
            assert.strictEqual(parseHub(slack, { secretKeys: ["notificationsToken"] }).notifications.slackChannel, "C0123ABCD");
            for (const query of [
                SLO,
                `last_over_time(${SLO}[5m])`,
                `scalar(${SLO})`,
                `min(${SLO}) * 1`,
                `-(${SLO})`,
                'min(slo:x{service="{{args.service}}"}) or vector(1)',
            ]) {
                assert.strictEqual(parseHub({ errorBudget: { query } }).errorBudget.query, query);
            }
        });
    });

    describe("refuses bad input with the key, the value and what is allowed", () => {
        const tenantOps = (groups: string[]) => ({ controller: { tenantOperators: [{ namespace: "shop", groups }] } });
        const REFUSED: [Patch, string, RegExp, string?][] = [
            [{ cluster: { adoptExisting: "yes" } }, "cluster.adoptExisting", /true or false/, '"yes"'],
            [{ plugin: { sha256: undefined } }, "plugin.sha256", /is required.*64-hex sha256/, "(not set)"],
            [{ plugin: { sha256: "abc123" } }, "plugin.sha256", /64-hex/, '"abc123"'],
            [{ plugin: { delivery: "image", sha256: undefined } }, "plugin.digest", /sha256: followed by 64/, "(not set)"],
            [{ plugin: { delivery: "image", sha256: undefined, digest: "v0.15.0" } }, "plugin.digest", /tags are mutable/, '"v0.15.0"'],
            [{ plugin: { delivery: "curl" } }, "plugin.delivery", /one of download, image/, '"curl"'],
            [{ plugin: { arch: "s390x" } }, "plugin.arch", /one of amd64, arm64/, '"s390x"'],
            [{ plugin: { baseUrl: "http://mirror.test/plugins" } }, "plugin.baseUrl", /https/, '"http://mirror.test/plugins"'],
            [{ plugin: { delivery: "image", digest: TEST_DIGEST } }, "plugin.sha256", /only applies with plugin.delivery: download/, `"${TEST_SHA256}"`],
            [{ cluster: { role: "prod" } }, "cluster.role", /one of hub, spoke/, '"prod"'],
            [{ cluster: { mimirTenant: "hub|preprod" } }, "cluster.mimirTenant", /no '\|'/, '"hub|preprod"'],
            [{ cluster: { mimirTenant: "hub prod" } }, "cluster.mimirTenant", /Mimir tenant id/, '"hub prod"'],
            [{ cluster: { name: "hub\u200b" } }, "cluster.name", /DNS label/, '"hub\\u200b"'],
            [{ cluster: { kubeconfigContext: "x" } }, "cluster", /exactly one of/, '{"eksClusterName":"test-hub","kubeconfigContext":"x"}'],
            [{ gateway: { listener: undefined } }, "gateway.listener", /is required/, "(not set)"],
            [{ controller: { replicas: 1 } }, "controller.replicas", /from 2 to 5/, "1"],
            [{ controller: { pdbMaxUnavailable: 0 } }, "controller.pdbMaxUnavailable", /from 1 to 4/, "0"],
            [{ controller: { pdbMaxUnavailable: "50%" } }, "controller.pdbMaxUnavailable", /whole number/, '"50%"'],
            [{ controller: { replicas: 2, pdbMaxUnavailable: 2 } }, "controller.pdbMaxUnavailable", /less than controller.replicas/, "2"],
            [{ controller: { chartVersion: "^2.41.0" } }, "controller.chartVersion", /exact chart version/, '"^2.41.0"'],
            [{ controller: { chartVersion: "2.50.0" } }, "controller.appVersion", /is required with chart 2\.50\.0/, "(not set)"],
            [{ controller: { appVersion: "v1.8.3" } }, "controller.appVersion", /^must be v1\.9\.0, the appVersion of chart 2\.41\.0 \(or unset\)/, '"v1.8.3"'],
            [
                { controller: { resources: { requests: { memory: "1Gi" }, limits: { memory: "512Mi" } } } },
                "controller.resources.requests.memory",
                /must not exceed controller.resources.limits.memory/,
                '"1Gi"',
            ],
            [{ controller: { resources: { limits: { cpu: "lots" } } } }, "controller.resources.limits.cpu", /Kubernetes quantity/, '"lots"'],
            [{ controller: { dashboard: "yes" } }, "controller.dashboard", /true or false/, '"yes"'],
            [{ controller: { namespace: "Argo_Rollouts" } }, "controller.namespace", /DNS label/, '"Argo_Rollouts"'],
            [{ controller: { priorityClassName: "Platform_Critical" } }, "controller.priorityClassName", /DNS subdomain/],
            [{ imageRegistry: "https://registry.test" }, "imageRegistry", /no scheme/, '"https://registry.test"'],
            [
                { spokes: [{ name: "hub", tenant: "edge", hostname: "mimir-edge.hub.test", query: false }] },
                "spokes[0].name",
                /must not be the hub's own cluster\.name/,
                '"hub"',
            ],
            [{ contoller: { replicas: 3 } }, "contoller", /^unknown key; .* takes cluster, gateway, .*; did you mean controller\?$/, "[not shown]"],
            [{ plugin: { sha265: TEST_SHA256 } }, "plugin.sha265", /^unknown key; plugin takes .*; did you mean sha256\?$/, "[not shown]"],
            // Error-budget queries: PromQL the Prometheus provider can judge, with only the template's arguments.
            [
                { errorBudget: { query: 'slo:remaining{service="{{args.service}}"' } },
                "errorBudget.query",
                /^must be PromQL Prometheus can parse once \{\{args\.\*\}\} are resolved: syntax error at/,
                '"slo:remaining{service=\\"{{args.service}}\\""',
            ],
            [{ errorBudget: { query: 'sum(rate(x{service="{{args.service}}"}[5m]) ' } }, "errorBudget.query", /syntax error/],
            [{ errorBudget: { query: `${SLO.slice(0, -1)},team="{{args.team}}"}` } }, "errorBudget.query", /the template declares only service and slo/],
            ...[`${SLO}[5m]`, `(${SLO}[5m])`, `min_over_time(${SLO}[1h])[10m:1m]`, `${SLO}[5m] offset 1m`].map((query): [Patch, string, RegExp] => [
                { errorBudget: { query } },
                "errorBudget.query",
                /not a range vector/,
            ]),
            [{ errorBudget: { query: '"{{args.service}}"' } }, "errorBudget.query", /not a string: .*Prometheus metric type not supported/],
            // Counts derived from durations fit Argo Rollouts' int32 fields.
            [{ errorBudget: { recheckInterval: "1s", maxFreeze: "2147483647s" } }, "errorBudget.maxFreeze", /2147483648 times.*32-bit/, '"2147483647s"'],
            [{ delivery: { prod: { standard: { stepPause: "596524h" } } } }, "delivery.prod.standard.stepPause", /at most 2147483647s/],
            [{ analysis: { initialDelay: "596523h", interval: "1h" } }, "analysis.initialDelay", /at most 2147483647s.*int32/],
            [
                { controller: { serviceMonitor: true }, network: { controllerDefaultDeny: true } },
                "network.metricsScrapeNamespaces",
                /ServiceMonitor's scrapes would all be denied/,
            ],
            // An empty list item (~) would build a guard nobody passes.
            [regulated({ approverGroups: [null] }), "policy.regulated.approverGroups[0]", /empty list item \(~ or null\)/, "null"],
            [{ policy: { excludeNamespaces: ["kyverno", null] } }, "policy.excludeNamespaces[1]", /empty list item/],
            [{ policy: { topologyKeys: [null] } }, "policy.topologyKeys[0]", /empty list item/],
            [
                { policy: { tenantNamespaceSelector: { matchExpressions: [{ key: "platform.test/tier", operator: "In", values: ["prod", null] }] } } },
                "policy.tenantNamespaceSelector.matchExpressions[0].values[1]",
                /empty list item/,
            ],
            [
                { argocd: { ignoreDifferences: [{ kind: "Service", jsonPointers: ["/spec/clusterIP", null] }] } },
                "argocd.ignoreDifferences[0].jsonPointers[1]",
                /empty list item/,
            ],
            [{ controller: { tenantOperators: [null] } }, "controller.tenantOperators[0]", /must be an object/],
            // Identities.
            [regulated({ deployerGroups: ["shop-deployers", "release-approvers"] }), "policy.regulated.deployerGroups", /must not include an approver group/],
            ...["system:authenticated", "system:serviceaccounts", "system:serviceaccounts:shop", "system:bootstrappers"].flatMap(
                (g): [Patch, string, RegExp][] => [
                    [regulated({ approverGroups: [g] }), "policy.regulated.approverGroups[0]", /no Kubernetes system: group/],
                    [regulated({ deployerGroups: [g] }), "policy.regulated.deployerGroups[0]", /no Kubernetes system: group/],
                    [tenantOps([g]), "controller.tenantOperators[0].groups[0]", /no Kubernetes system: group/],
                ],
            ),
            // kyverno.io/v1 matches a wildcard group, CEL does not.
            ...["release-*", "release-approver?"].flatMap((g): [Patch, string, RegExp][] => [
                ...["approverGroups", "deployerGroups", "gitopsGroups", "gitopsUsers"].map((k): [Patch, string, RegExp] => [
                    regulated({ [k]: [g] }),
                    `policy.regulated.${k}[0]`,
                    /no \* or \?/,
                ]),
                [tenantOps([g]), "controller.tenantOperators[0].groups[0]", /no \* or \?/],
                [{ argocd: { rbac: { approverGroups: [g] } } }, "argocd.rbac.approverGroups[0]", /no \* or \?/],
            ]),
            // Kubernetes limits wherever a value lands.
            [{ policy: { excludeNamespaces: ["kyverno", LONG] } }, "policy.excludeNamespaces[1]", /at most 63/],
            [{ network: { controllerDefaultDeny: true, metricsScrapeNamespaces: [LONG] } }, "network.metricsScrapeNamespaces[0]", /at most 63/],
            [
                {
                    argocd: {
                        applicationSets: {
                            shop: { owner: "addon", ignoreDifferences: [{ kind: "Service", namespace: LONG, jsonPointers: ["/spec/clusterIP"] }] },
                        },
                    },
                },
                "argocd.applicationSets.shop.ignoreDifferences[0].namespace",
                /at most 63/,
            ],
            [
                { policy: { prodNamespaceLabels: whole({ [`${prefix(254)}/tier`]: "prod" }) } },
                `policy.prodNamespaceLabels.${prefix(254)}/tier`,
                /prefix of at most 253/,
            ],
            [{ policy: { topologyKeys: [`${prefix(254)}/zone`] } }, "policy.topologyKeys[0]", /node label key/],
            [
                { policy: { tenantNamespaceSelector: whole({ matchExpressions: [{ key: "platform.test/tier", operator: "In", values: ["v".repeat(64)] }] }) } },
                "policy.tenantNamespaceSelector.matchExpressions[0].values[0]",
                /a label value/,
            ],
            [
                { controller: { namespaceLabels: { "kubernetes.io/metadata.name": "argo-rollouts" } } },
                "controller.namespaceLabels.kubernetes.io/metadata.name",
                /the API server sets it/,
            ],
            [{ controller: { namespace: "kube-rollouts" } }, "controller.namespace", /Kubernetes reserves the prefix/],
            [SMOKE({ namespace: "kube-smoke" }), "smokeTest.namespace", /Kubernetes reserves the prefix/],
            [{ controller: { namespace: "gateway-system" } }, "controller.namespace", /not the namespace of gateway\.namespace/],
            [{ controller: { namespace: "argocd" } }, "controller.namespace", /not the namespace of argocd\.namespace/],
            [{ controller: { namespace: "observability" } }, "controller.namespace", /not the namespace of mimir\.namespace/],
            [{ controller: { namespace: "default" } }, "controller.namespace", /not one of Kubernetes'/],
            [SMOKE({ namespace: "observability" }), "smokeTest.namespace", /not the namespace of mimir\.namespace/],
            [SMOKE({ namespace: "gateway-system" }), "smokeTest.namespace", /not the namespace of gateway\.namespace/],
            [SMOKE({ namespace: "kube-system" }), "smokeTest.namespace", /Kubernetes' own namespaces/],
            // Image references and checksums.
            [{ imageRegistry: "mirror/platform" }, "imageRegistry", /Docker Hub namespace/],
            [SMOKE({ image: `mirror/argoproj/rollouts-demo@${DIGEST}` }), "smokeTest.image", /Docker Hub namespace/],
            [SMOKE({ image: `registry.platform.test/${LONG_PATH}/rollouts-demo@${DIGEST}` }), "smokeTest.image", /at most 255/],
            [{ imageRegistry: `registry.platform.test/${LONG_PATH}` }, "imageRegistry", /at most 224 characters/],
            [
                { plugin: { delivery: "image", sha256: undefined, digest: DIGEST, repository: `${LONG_PATH}/plugin` } },
                "plugin.repository",
                /within 255 characters/,
            ],
            [
                SMOKE({ image: `ghcr.io/argoproj/rollouts-demo@${DIGEST}` }),
                "smokeTest.image",
                /must come from imageRegistry \(registry\.platform\.test\/mirror\//,
            ],
            [SMOKE({ loadImage: `registry.platform.test/mirror-old/curl@${DIGEST}` }), "smokeTest.loadImage", /must come from imageRegistry/],
            [{ plugin: { sha256: EMPTY_SHA } }, "plugin.sha256", /sha256 of zero bytes/],
            [{ plugin: { sha256: EMPTY_SHA.toUpperCase() } }, "plugin.sha256", /sha256 of zero bytes/],
            [{ plugin: { delivery: "image", sha256: undefined, digest: `sha256:${EMPTY_SHA}` } }, "plugin.digest", /sha256 of zero bytes/],
            [SMOKE({ loadImage: `registry.platform.test/mirror/curlimages/curl@sha256:${EMPTY_SHA}` }), "smokeTest.loadImage", /sha256 of zero bytes/],
        ];
        for (const [patch, key, allowed, given] of REFUSED) {
            it(`${key}: ${given ?? JSON.stringify(patch).slice(0, 60)} -> ${allowed.source.slice(0, 60)}`, () => assertRejects(patch, key, allowed, given));
        }

        it("a Slack channel that is not a channel ID", () =>
            assertRejects(
                { notifications: { service: "slack", slackChannel: "X0123ABCD" }, notificationsToken: "xoxb-test" },
                "notifications.slackChannel",
                /channel ID such as C0123ABCD/,
                undefined,
                { secretKeys: ["notificationsToken"] },
            ));

        it("an argocd.runsOn that names no cluster of the project's stack files", () => {
            const ambient = { projectClusters: ["hub", "preprod"] };
            assertRejects(
                { argocd: { runsOn: "hubb" } },
                "argocd.runsOn",
                /^must name a cluster this project manages \(the cluster.name of one of its stack files: hub, preprod\)/,
                '"hubb"',
                ambient,
            );
            assert.strictEqual(parseHub({ argocd: { runsOn: "hub" } }, ambient).argocd.runsOn, "hub");
        });

        it("names aws:region, the key the user set, when the EKS region comes from it", () => {
            const p = assertRejects({}, "aws:region", /cluster\.region is not set, so the EKS cluster's region is read from aws:region/, undefined, {
                awsRegion: "eu-west",
            });
            assert.strictEqual(p.given, '"eu-west"');
            assert.ok(!problemsOf({}, "hub", { awsRegion: "eu-west" }).problems.some((x) => x.key === "cluster.region"));
        });

        it("suggests nothing for a key near no real one, or near two", () => {
            assert.strictEqual(nearestKey("zzzzzz", ["cluster", "gateway"]), undefined);
            assert.strictEqual(nearestKey("ab", ["ac", "ad"]), undefined);
            assert.strictEqual(nearestKey("SmokeTest", ["smokeTest", "policy"]), "smokeTest");
        });
    });

    describe("never shows a secret", () => {
        it("a mistyped secret key's value", () => {
            const token = "xoxb-0000-not-a-real-token";
            const err = configError(() => parseHub({ notificationToken: token }));
            assert.ok(!err.message.includes(token), err.message);
            assert.match(err.message, /argo-rollouts-addon:notificationToken = \[not shown\]: unknown key; .*; did you mean notificationsToken\?/);
        });

        it("a URL's user-info or query string", () => {
            const err = problemsOf({ controller: { crdBaseUrl: "https://deploy:hunter2@raw.platform.test/argo?token=s3cr3t" } });
            assert.match(err.message, /controller\.crdBaseUrl = "https:\/\/raw\.platform\.test\/argo\?\[not shown\]"/);
            assert.doesNotMatch(err.message, /hunter2|s3cr3t|deploy:/);
        });

        it("a secure: value: the offline plan cannot decrypt it, and a decrypted one is refused unseen", () => {
            const secretKeys = ["imageRegistry"];
            assert.strictEqual(
                assertRejects({ imageRegistry: OFFLINE_SECRET }, "imageRegistry", /the offline plan cannot decrypt secrets/, undefined, { secretKeys }).given,
                "[secret]",
            );
            const live = assertRejects({ imageRegistry: "mirror/Decrypted" }, "imageRegistry", /Docker Hub namespace/, undefined, { secretKeys });
            assert.strictEqual(live.given, "[secret]");
            assert.doesNotMatch(live.allowed, /offline/);
        });

        it("an invisible character, escaped in values and in keys", () => {
            const message = problemsOf({ "contro\u200bller": {} }).message;
            assert.match(message, /contro\\u200bller/);
            assert.doesNotMatch(message, /\u200b/);
        });
    });

    describe("a spoke's mimir section", () => {
        const spokeProblems = (mimir: Patch, ambient: Ambient = {}) => configError(() => parseAddonConfig("preprod", spoke(mimir), ambient));

        it("refuses a hubStack naming the spoke's own stack, and takes another project's stack of that name", () => {
            const err = spokeProblems({ hubStack: "organization/argo-rollouts-addon/preprod" });
            assert.ok(
                err.problems.some((p) => p.key === "mimir.hubStack" && /not this spoke's own \(preprod\)/.test(p.allowed)),
                err.message,
            );
            assert.strictEqual(parseAddonConfig("preprod", spoke({ hubStack: "organization/argo-rollouts-addon/hub" })).mimir.readEndpoint?.kind, "stack");
        });

        it("refuses a hubStack whose hub does not route this spoke, naming the hub that does", () => {
            const projectStacks = [
                { stack: "hub", cluster: "hub", mimirTenant: "hub", spokes: [{ name: "staging", tenant: "staging" }] },
                { stack: "hub-b", cluster: "hub-b", mimirTenant: "hub-b", spokes: [{ name: "preprod", tenant: "preprod-old" }] },
                { stack: "preprod", cluster: "preprod", mimirTenant: "preprod", spokes: [] },
            ];
            const all = spokeProblems({ hubStack: "acme/argo-rollouts-addon/hub" }, { projectStacks }).problems;
            const p = all.find((x) => x.key === "mimir.hubStack");
            assert.match(p?.allowed ?? "", /Pulumi\.hub\.yaml has no spokes entry for preprod.*Pulumi\.hub-b\.yaml does: name that hub's stack/);
            // The other hub's tenant is not this spoke's to fix while hubStack names another hub.
            assert.ok(!all.some((x) => x.key === "cluster.mimirTenant"), JSON.stringify(all, null, 1));
            // Where hubStack names the hub that lists it, the tenant is the key to fix.
            const named = spokeProblems({ hubStack: "acme/argo-rollouts-addon/hub-b" }, { projectStacks }).problems;
            assert.ok(!named.some((x) => x.key === "mimir.hubStack"), JSON.stringify(named, null, 1));
            assert.ok(named.some((x) => x.key === "cluster.mimirTenant" && /Pulumi\.hub-b\.yaml lists preprod under tenant preprod-old/.test(x.allowed)));
        });

        describe("readCaBundle", () => {
            const tls = (f: string) => fs.readFileSync(path.join(__dirname, "fixtures", "tls", f), "utf8");
            const endpoint = { readEndpoint: "https://mimir-preprod.hub.platform.test/prometheus" };
            const problem = (mimir: Patch) => {
                const err = spokeProblems({ ...endpoint, ...mimir });
                const p = err.problems.find((x) => x.key === "mimir.readCaBundle");
                assert.ok(p, err.message);
                assert.match(err.message, /^stack "preprod": invalid configuration/);
                assert.doesNotMatch(err.message, /MII/, "the certificate is never echoed");
                return { ...p, message: err.message };
            };
            const RULE =
                /^must be one or more PEM CA certificates \(-----BEGIN CERTIFICATE----- \.\.\. -----END CERTIFICATE----- blocks of certificates with basicConstraints CA:TRUE, valid now, with keyCertSign where they carry a keyUsage\) and nothing else/;

            it("takes one or more CA certificates and keeps only their blocks, whatever the line ends", () => {
                const read = (mimir: Patch) => parseAddonConfig("preprod", spoke(mimir)).mimir.readCaBundle;
                const two = `${tls("ca.crt")}\n\n${tls("other-ca.crt").replace(/\n/g, "\r\n")}`;
                assert.strictEqual(read({ ...endpoint, readCaBundle: two }), `${tls("ca.crt").trim()}\n${tls("other-ca.crt").trim()}\n`);
                assert.strictEqual(read({ ...endpoint, readCaBundle: tls("ca.crt").trim() }), tls("ca.crt"));
                assert.strictEqual(read({ hubStack: "organization/argo-rollouts-addon/hub", readCaBundle: tls("ca.crt") }), tls("ca.crt"));
                assert.strictEqual(read(endpoint), undefined);
            });

            it("refuses a server certificate, naming it, and never shows the value", () => {
                const p = problem({ readCaBundle: `${tls("ca.crt")}${tls("server.crt")}` });
                assert.strictEqual(p.given, "[not shown: 2 PEM blocks: CERTIFICATE, CERTIFICATE]");
                assert.match(p.allowed, RULE);
                assert.match(
                    p.allowed,
                    /; certificate 2 \(subject CN=127\.0\.0\.1, issuer CN=argo-rollouts-addon test CA\) is not a CA certificate \(no basicConstraints CA:TRUE\)/,
                );
                assert.ok(p.message.includes("argo-rollouts-addon:mimir.readCaBundle = [not shown: 2 PEM blocks: CERTIFICATE, CERTIFICATE]: must be one"));
            });

            it("refuses a private key without showing any of it", () => {
                const key = tls("server.key");
                const p = problem({ readCaBundle: `${tls("ca.crt")}${key}` });
                assert.strictEqual(p.given, "[not shown: 2 PEM blocks: CERTIFICATE, PRIVATE KEY]");
                assert.match(p.allowed, /block 2 is a PRIVATE KEY, not a CERTIFICATE \(a private key belongs to the server/);
                const body = key.split("\n")[1];
                assert.ok(body.length > 20 && !p.message.includes(body.slice(0, 20)), "the message shows the key");
            });

            it("refuses text that is no PEM, text between blocks, a block that does not parse (not in OpenSSL's words), and a value that is not a string", () => {
                let p = problem({ readCaBundle: "s3cr3t-token-value" });
                assert.strictEqual(p.given, "[not shown: no PEM block, 18 characters]");
                assert.match(p.allowed, /; it has no PEM block$/);
                assert.ok(!p.message.includes("s3cr3t"));
                assert.match(problem({ readCaBundle: `subject=CN=test\n${tls("ca.crt")}` }).allowed, /; it has text outside its CERTIFICATE blocks/);
                p = problem({ readCaBundle: "-----BEGIN CERTIFICATE-----\nTUlJQg==\n-----END CERTIFICATE-----\n" });
                assert.match(p.allowed, /; certificate 1 does not parse as X\.509/);
                assert.doesNotMatch(p.allowed, /error:|asn1|routines|header too long|Invalid/i);
                p = problem({ readCaBundle: [tls("ca.crt")] });
                assert.strictEqual(p.given, "[not shown: a list]");
                assert.match(p.allowed, /^must be a string: one or more PEM CA certificates/);
            });

            it("refuses a CA expired, not valid yet, or without keyCertSign, naming it and the date", () => {
                assert.match(
                    problem({ readCaBundle: tls("expired-ca.crt") }).allowed,
                    /certificate 1 \(subject CN=argo-rollouts-addon test expired CA\) expired on Jan {2}1 00:00:00 2001 GMT/,
                );
                assert.match(
                    problem({ readCaBundle: `${tls("ca.crt")}${tls("future-ca.crt")}` }).allowed,
                    /certificate 2 \(subject CN=argo-rollouts-addon test future CA\) is not valid before Jan {2}1 00:00:00 2100 GMT/,
                );
                assert.match(
                    problem({ readCaBundle: tls("nosign-ca.crt") }).allowed,
                    /certificate 1 \(subject CN=[^)]*\).* has a keyUsage without keyCertSign/,
                );
                // Validity is read against the time it is given (a pure rule).
                assert.strictEqual(readCaBundle(tls("ca.crt"), new Date("2027-01-01T00:00:00Z")).ok, true);
                assert.strictEqual(readCaBundle(tls("expired-ca.crt"), new Date("2000-06-01T00:00:00Z")).ok, true);
                assert.strictEqual(readCaBundle(tls("ca.crt"), new Date("2200-01-01T00:00:00Z")).ok, false);
            });

            it("refuses a bundle for an http read endpoint, and on a hub", () => {
                const p = problem({ readEndpoint: "http://mimir-preprod.hub.test/prometheus", readCaBundle: tls("ca.crt") });
                assert.strictEqual(p.given, "[1 CA certificate]");
                assert.match(
                    p.allowed,
                    /^only applies to an https read endpoint; mimir\.readEndpoint is http:\/\/mimir-preprod\.hub\.test\/prometheus, where no certificate is checked$/,
                );
                const hub = problemsOf({ mimir: { readCaBundle: tls("ca.crt") } }).problems.find((x) => x.key === "mimir.readCaBundle");
                assert.strictEqual(hub?.given, "[not shown]");
                assert.strictEqual(
                    hub.allowed,
                    "only applies to a spoke: the hub's gates read Mimir in-cluster over http (http://mimir-gateway.observability.svc:80/prometheus), where no certificate is checked",
                );
            });

            it("refuses a bundle past what a ConfigMap holds", () => {
                const big = tls("ca.crt").repeat(Math.ceil((512 * 1024) / tls("ca.crt").length) + 1);
                assert.match(problem({ readCaBundle: big }).allowed, /; it is \d+ characters; a ConfigMap holds at most 1 MiB/);
            });
        });
    });

    it("reports every problem at once, not one per run, in the stack named", () => {
        const err = problemsOf({ cluster: { role: "prod", mimirTenant: "a|b" }, plugin: { sha256: "x" }, controller: { replicas: 9 }, typo: 1 }, "preprod");
        assert.deepStrictEqual(err.problems.map((p) => p.key).sort(), ["cluster.mimirTenant", "cluster.role", "controller.replicas", "plugin.sha256", "typo"]);
        assert.match(err.message, /^stack "preprod": invalid configuration \(5 problems\)/);
    });

    it("requires the cluster and gateway sections, the tenant and prod labels, and where ArgoCD runs the objects it syncs", () => {
        assert.deepStrictEqual(
            configError(() => parseAddonConfig("empty", {})).problems.map((p) => p.key),
            [
                "cluster",
                "gateway",
                "plugin.sha256",
                "policy.tenantNamespaceSelector",
                "policy.prodNamespaceLabels",
                "argocd.projects",
                "argocd.applicationSets",
            ],
        );
    });

    it("compares quantities across units", () => {
        assert.strictEqual(parseQuantity("512Mi"), 512 * 1024 * 1024);
        assert.ok(parseQuantity("1Gi") > parseQuantity("512Mi"));
        assert.ok(parseQuantity("100m") < parseQuantity("1"));
    });

    it("is a RunError keeping Error's stack trace, so the Pulumi CLI shows the message and nothing else", () => {
        // @pulumi/pulumi cmd/run/run.js prints a RunError's message alone; any other error it prints
        // with util.inspect (defaultErrorMessage in cmd/run/error.js), trace and own fields included.
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { RunError } = require("@pulumi/pulumi/errors") as typeof import("@pulumi/pulumi/errors");
        const err = problemsOf({ analysis: { successRate: 1.5 } }, "bad");
        assert.ok(RunError.isInstance(err));
        assert.match(
            err.message,
            /^stack "bad": invalid configuration \(1 problem\):\n {2}- argo-rollouts-addon:analysis\.successRate = 1\.5: must be a number from 0\.5 to 1$/,
        );
        assert.strictEqual(err.stackName, "bad");
        assert.match(String(err.stack), /^ConfigError: stack "bad": invalid configuration/);
    });
});
