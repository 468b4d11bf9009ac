// The stack configuration: stacks/config.ts over components/config.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { readCaBundle } from "../components/gateway/caBundle";
import { nearestKey } from "../components/config/reader";
import { RunError } from "@pulumi/pulumi/errors";
import { ConfigProblem, OFFLINE_SECRET } from "../components/config";
import { AddonConfig, STACK_FIELDS, parseAddonConfig } from "../stacks/config";
import { Fields } from "../components/config/declare";
import { REGULATED_ARGOCD_RBAC, TEST_DIGEST, TEST_SHA256, TEST_SMOKE, hubConfig, merged, spokeConfig, whole } from "./harness";
import { Ambient, Patch, REGULATED, configError, parseHub, parseMap } from "./stackConfig";
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

const regulated = (patch: Patch) => ({ policy: { regulated: { ...REGULATED, ...patch } } });
const SMOKE = (patch: Patch = {}) => ({ smokeTest: { ...TEST_SMOKE, ...patch } });
const DIGEST = `sha256:${"c".repeat(64)}`;
const EMPTY_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const LONG = "n".repeat(64);
const LONG_PATH = Array.from({ length: 6 }, () => "p".repeat(40)).join("/");
const prefix = (n: number) => `${"a".repeat(63)}.`.repeat(4).slice(0, n);
const SLO = 'slo:period_error_budget_remaining:ratio{sloth_service="{{args.service}}"}';
const ARGS_QUERY = 'slo:period_error_budget_remaining:ratio{sloth_service="{{ args.service }}",sloth_slo="{{ args.slo }}"}';

describe("configuration", () => {
    it("refuses a section given as null (`~`) at any depth, naming its key, as it refuses a top-level one", () => {
        const sections = (fields: Fields, at: string): string[] =>
            Object.entries(fields).flatMap(([k, f]) => (f.kind === "section" && !f.readBySection ? [at + k, ...sections(f.fields, `${at + k}.`)] : []));
        for (const key of sections(STACK_FIELDS, "")) {
            const patch = key.split(".").reduceRight<unknown>((v, k) => ({ [k]: v }), null) as Patch;
            assert.match(problemsOf(patch).problems.find((p) => p.key === key)?.allowed ?? "", /^must be an object/, key);
        }
    });

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
    });

    it("reads scalars given as text, as Pulumi stores them", () => {
        const cfg = parseHub({ controller: { replicas: "3", serviceMonitor: "true" } });
        assert.strictEqual(cfg.controller.replicas, 3);
        assert.strictEqual(cfg.controller.serviceMonitor, true);
    });

    describe("accepts the valid forms", () => {
        const slack = { notifications: { service: "slack", slackChannel: "C0123ABCD" }, notificationsToken: "xoxb-test" };
        const okLabels = { [`${prefix(252)}a/tier`]: "prod" };
        const sso = {
            ...regulated({ approverGroups: ["Release Approvers"], deployerGroups: ["Shop Deployers"], gitopsGroups: ["Argo CD Hub"] }),
            controller: { tenantOperators: [{ namespace: "shop", groups: ["Shop On Call"] }] },
            argocd: { rbac: { ...REGULATED_ARGOCD_RBAC, approverGroups: ["Release Approvers"], deployerGroups: ["Shop Deployers"] } },
        };
        const GHCR = `ghcr.io/a/demo@${DIGEST}`;
        const scrape = { controllerDefaultDeny: true, metricsScrapeNamespaces: ["monitoring"] };
        const TAGGED = `registry.platform.test/mirror/demo:blue@${DIGEST}`;
        /** The value at a dotted path of the configuration read. */
        const at = (c: AddonConfig, key: string) => key.split(".").reduce((v: unknown, k) => (v as Record<string, unknown>)?.[k], c);
        const ACCEPTED: [string, Patch, string, unknown][] = [
            ["the pinned chart's own appVersion", { controller: { appVersion: "v1.9.0" } }, "controller.appVersion", "v1.9.0"],
            ["a registry on localhost with a port", { imageRegistry: "localhost:5000/mirror" }, "imageRegistry", "localhost:5000/mirror"],
            ["a registry on localhost", { imageRegistry: "localhost/mirror" }, "imageRegistry", "localhost/mirror"],
            ["any smoke image, no imageRegistry", { imageRegistry: undefined, ...SMOKE({ image: GHCR }) }, "smokeTest.image", GHCR],
            ["a pinned image keeps its tag", SMOKE({ image: TAGGED }), "smokeTest.image", TAGGED],
            ["a 253-character label prefix", { policy: { prodNamespaceLabels: whole(okLabels) } }, "policy.prodNamespaceLabels", okLabels],
            ["{{ args.service }} with blanks, as Argo Rollouts trims them", { errorBudget: { query: ARGS_QUERY } }, "errorBudget.query", ARGS_QUERY],
            ["a PriorityClass name with dots", { controller: { priorityClassName: "platform.critical" } }, "controller.priorityClassName", "platform.critical"],
            ["2147483646 freeze measurements", { errorBudget: { recheckInterval: "1s", maxFreeze: "2147483646s" } }, "errorBudget.maxFreeze", "2147483646s"],
            ["a pause of 596523h", { delivery: { prod: { standard: { stepPause: "596523h" } } } }, "delivery.prod.standard.stepPause", "596523h"],
            ["scrapes under default-deny", { controller: { serviceMonitor: true }, network: scrape }, "network.metricsScrapeNamespaces", ["monitoring"]],
            ["SSO group names with blanks: an approver group", sso, "policy.regulated.approverGroups", ["Release Approvers"]],
            ["SSO group names with blanks: a GitOps group", sso, "policy.regulated.gitopsGroups", ["Argo CD Hub"]],
            ["SSO group names with blanks: a tenant operator group", sso, "controller.tenantOperators", [{ namespace: "shop", groups: ["Shop On Call"] }]],
            ["SSO group names with blanks: an ArgoCD deployer group", sso, "argocd.rbac.deployerGroups", ["Shop Deployers"]],
        ];
        for (const [what, patch, key, want] of ACCEPTED) {
            it(what, () => assert.deepStrictEqual(at(parseHub(patch), key), want));
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
        const appSetRule = (rule: Patch) => ({
            argocd: { applicationSets: { shop: { owner: "addon", ignoreDifferences: [{ ...rule, jsonPointers: ["/spec/clusterIP"] }] } } },
        });
        const REFUSED: [Patch, string, RegExp, string?][] = [
            [{ cluster: { adoptExisting: "yes" } }, "cluster.adoptExisting", /true or false/, '"yes"'],
            [{ notifications: { service: "slack", slackChannel: "X0123ABCD" } }, "notifications.slackChannel", /channel ID such as C0123ABCD/, '"X0123ABCD"'],
            [{ plugin: { sha256: undefined } }, "plugin.sha256", /is required.*64-hex sha256/, "(not set)"],
            [{ plugin: { sha256: "abc123" } }, "plugin.sha256", /64-hex/, '"abc123"'],
            [
                { plugin: { delivery: "image", sha256: undefined } },
                "plugin.digest",
                /required; must be the plugin image's digest, sha256:<64 hex>/,
                "(not set)",
            ],
            [{ controller: { imageDigest: undefined } }, "controller.imageDigest", /required; must be the controller image's digest, sha256:<64/, "(not set)"],
            [{ cluster: { wave: 2 } }, "cluster.wave", /only applies to a spoke: every hub deploys before any spoke/, "2"],
            [{ cluster: { role: "spoke", wave: 0 } }, "cluster.wave", /must be a whole number from 1 to 4/, "0"],
            [{ controller: { imageDigest: "v1.9.0" } }, "controller.imageDigest", /controller image's digest, sha256:<64 hex>/, '"v1.9.0"'],
            [{ plugin: { delivery: "image", sha256: undefined, digest: "v0.15.0" } }, "plugin.digest", /tags are mutable/, '"v0.15.0"'],
            [{ plugin: { delivery: "curl" } }, "plugin.delivery", /one of download, image/, '"curl"'],
            [{ plugin: { arch: "s390x" } }, "plugin.arch", /one of amd64, arm64/, '"s390x"'],
            [{ plugin: { baseUrl: "http://mirror.test/plugins" } }, "plugin.baseUrl", /https/, '"http://mirror.test/plugins"'],
            [{ plugin: { delivery: "image", digest: TEST_DIGEST } }, "plugin.sha256", /only applies with plugin.delivery: download/, `"${TEST_SHA256}"`],
            [{ cluster: { role: "prod" } }, "cluster.role", /one of hub, spoke/, '"prod"'],
            [{ cluster: { mimirTenant: "hub|preprod" } }, "cluster.mimirTenant", /no '\|'/, '"hub|preprod"'],
            [{ cluster: { mimirTenant: "hub prod" } }, "cluster.mimirTenant", /Mimir tenant id/, '"hub prod"'],
            [{ cluster: { name: "hub\u200b" } }, "cluster.name", /DNS label/, '"hub\\u200b"'],
            [{ policy: { regulated: { approverGroups: ["ops\u200bteam"] } } }, "policy.regulated.approverGroups[0]", /a group name/, '"ops\\u200bteam"'],
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
            [
                { policy: { tenantNamespaceSelector: { matchExpressions: [{ key: "platform.test/tier", operator: "In", values: ["prod", null] }] } } },
                "policy.tenantNamespaceSelector.matchExpressions[0].values[1]",
                /empty list item/,
            ],
            [{ controller: { tenantOperators: [null] } }, "controller.tenantOperators[0]", /must be an object/],
            // Identities.
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
            [appSetRule({ kind: "Service", namespace: LONG }), "argocd.applicationSets.shop.ignoreDifferences[0].namespace", /at most 63/],
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

        it("a secure: value: refused where the program writes plain text (a group), never shown, decrypted or not", () => {
            const ambient = { secretKeys: ["policy"] };
            for (const group of [OFFLINE_SECRET, "Decrypted-Group"]) {
                const err = problemsOf({ policy: { regulated: { approverGroups: [group] } } }, "hub", ambient);
                assert.ok(err.message.includes("policy = [secret]: must not be a secret (secure:)") && !err.message.includes("Decrypted"), err.message);
            }
        });

        it("an invisible character, escaped in values and in keys", () => {
            const message = problemsOf({ "contro\u200bller": {} }).message;
            assert.match(message, /contro\\u200bller/);
            assert.doesNotMatch(message, /\u200b/);
        });
    });

    describe("a spoke's mimir section", () => {
        /** The fixture hub's spoke preprod, with `mimir` as its mimir section. */
        const readSpoke = (mimir: Patch, ambient: Ambient = {}) => parseMap(spokeConfig({ mimir: whole(mimir) }), "preprod", ambient);
        const spokeProblems = (mimir: Patch, ambient: Ambient = {}) => configError(() => readSpoke(mimir, ambient));

        it("refuses a hubStack naming the spoke's own stack", () => {
            const own = spokeProblems({ hubStack: "organization/argo-rollouts-addon/preprod" }).problems.find((p) => p.key === "mimir.hubStack");
            assert.match(own?.allowed ?? "", /not this spoke's own \(preprod\)/);
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

            it("takes one or more CA certificates and keeps only their blocks, whatever the line ends", () => {
                const read = (mimir: Patch) => readSpoke(mimir).mimir.readCaBundle;
                const two = `${tls("ca.crt")}\n\n${tls("other-ca.crt").replace(/\n/g, "\r\n")}`;
                assert.strictEqual(read({ ...endpoint, readCaBundle: two }), `${tls("ca.crt").trim()}\n${tls("other-ca.crt").trim()}\n`);
                assert.strictEqual(read({ ...endpoint, readCaBundle: tls("ca.crt").trim() }), tls("ca.crt"));
                assert.strictEqual(read({ hubStack: "organization/argo-rollouts-addon/hub", readCaBundle: tls("ca.crt") }), tls("ca.crt"));
                assert.strictEqual(read(endpoint), undefined);
            });

            it("refuses what is no CA bundle, naming why and never showing the value", () => {
                const ca = tls("ca.crt");
                const REFUSED_CA: [unknown, string | undefined, RegExp][] = [
                    [
                        `${ca}${tls("server.crt")}`,
                        "[not shown: 2 PEM blocks: CERTIFICATE, CERTIFICATE]",
                        /^must be one or more PEM CA certificates \(-----BEGIN CERTIFICATE----- \.\.\. -----END CERTIFICATE----- blocks of certificates with basicConstraints CA:TRUE, valid now, with keyCertSign where they carry a keyUsage\) and nothing else.*; certificate 2 \(subject CN=127\.0\.0\.1, issuer CN=argo-rollouts-addon test CA\) is not a CA certificate \(no basicConstraints CA:TRUE\)/,
                    ],
                    [
                        `${ca}${tls("server.key")}`,
                        "[not shown: 2 PEM blocks: CERTIFICATE, PRIVATE KEY]",
                        /block 2 is a PRIVATE KEY, not a CERTIFICATE \(a private key belongs to the server/,
                    ],
                    ["s3cr3t-token-value", "[not shown: no PEM block, 18 characters]", /; it has no PEM block$/],
                    [`subject=CN=test\n${ca}`, undefined, /; it has text outside its CERTIFICATE blocks/],
                    // In its own words, not OpenSSL's.
                    [
                        "-----BEGIN CERTIFICATE-----\nTUlJQg==\n-----END CERTIFICATE-----\n",
                        undefined,
                        /; certificate 1 does not parse as X\.509 \(a PEM CERTIFICATE block whose DER is not a certificate\)$/,
                    ],
                    [[ca], "[not shown: a list]", /^must be a string: one or more PEM CA certificates/],
                    [ca.repeat(Math.ceil((512 * 1024) / ca.length) + 1), undefined, /; it is \d+ characters; a ConfigMap holds at most 1 MiB/],
                ];
                for (const [bundle, given, allowed] of REFUSED_CA) {
                    const p = problem({ readCaBundle: bundle });
                    assert.match(p.allowed, allowed);
                    if (given !== undefined) {
                        assert.strictEqual(p.given, given);
                        assert.ok(p.message.includes(`argo-rollouts-addon:mimir.readCaBundle = ${given}: must be`), p.message);
                    }
                    const lines = typeof bundle === "string" ? bundle.split(/\r?\n/).filter((l) => l.length > 16 && !l.startsWith("-----")) : [];
                    assert.ok(!lines.some((l) => p.message.includes(l)), "the message shows the value");
                }
            });

            it("refuses a CA expired, not valid yet, or without keyCertSign, naming it and the date", () => {
                for (const [bundle, allowed] of [
                    [tls("expired-ca.crt"), /certificate 1 \(subject CN=argo-rollouts-addon test expired CA\) expired on Jan {2}1 00:00:00 2001 GMT/],
                    [
                        `${tls("ca.crt")}${tls("future-ca.crt")}`,
                        /certificate 2 \(subject CN=argo-rollouts-addon test future CA\) is not valid before Jan {2}1 00:00:00 2100 GMT/,
                    ],
                    [tls("nosign-ca.crt"), /certificate 1 \(subject CN=[^)]*\).* has a keyUsage without keyCertSign/],
                ] as const) {
                    assert.match(problem({ readCaBundle: bundle }).allowed, allowed);
                }
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
        });
    });

    it("reports every problem at once, a section's traps beside its type errors, not one per run, in the stack named", () => {
        const policy = { pdbMaxUnavailable: "50%", kyvernoApi: "v2" };
        const err = problemsOf({ cluster: { role: "prod", mimirTenant: "a|b" }, plugin: { sha256: "x" }, policy, typo: 1 }, "preprod");
        const keys = ["cluster.mimirTenant", "cluster.role", "plugin.sha256", "policy.kyvernoApi", "policy.pdbMaxUnavailable", "typo"];
        assert.deepStrictEqual(err.problems.map((p) => p.key).sort(), keys);
        assert.match(err.message, /^stack "preprod": invalid configuration \(6 problems\)/);
    });

    it("requires the cluster and gateway sections, the tenant and prod labels, and where ArgoCD runs the objects it syncs", () => {
        const keys = configError(() => parseAddonConfig("empty", {})).problems.map((p) => p.key);
        const required = "cluster gateway controller.imageDigest plugin.sha256 policy.tenantNamespaceSelector policy.prodNamespaceLabels argocd.projects";
        assert.deepStrictEqual(keys.join(" "), `${required} argocd.applicationSets`);
    });

    it("is a RunError keeping Error's stack trace, so the Pulumi CLI shows the message and nothing else", () => {
        // @pulumi/pulumi cmd/run/run.js prints a RunError's message alone; any other error it prints
        // with util.inspect (defaultErrorMessage in cmd/run/error.js), trace and own fields included.
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
