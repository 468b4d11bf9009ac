import { nearestKey } from "../components/config/reader";
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { ConfigError, parseConfigText, parseQuantity } from "../components/config";
import { parseAddonConfig } from "../stacks/config";
import { TEST_DIGEST, TEST_POLICY, TEST_SHA256, hubConfig, merged } from "./harness";
import { CONTROLLER_DEFAULTS, KNOWN_CHART_APP_VERSIONS, PLUGIN_DEFAULTS } from "../components/rollouts/config";

function raw(patch: Record<string, unknown> = {}): Record<string, unknown> {
    const { "aws:region": region, ...rest } = merged(hubConfig(), patch);
    void region;
    return rest;
}

function problemsOf(patch: Record<string, unknown>, stack = "hub"): ConfigError {
    try {
        parseAddonConfig(stack, raw(patch), { awsRegion: "eu-west-1" });
    } catch (err) {
        assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
        return err;
    }
    assert.fail("configuration was accepted");
}

/** Asserts one problem for `key`, whose message names the stack, the key, the value and what is allowed. */
function assertRejects(patch: Record<string, unknown>, key: string, given: string, allowed: RegExp): void {
    const err = problemsOf(patch);
    const problem = err.problems.find((p) => p.key === key);
    assert.ok(problem, `no problem reported for ${key}; got ${err.message}`);
    assert.strictEqual(problem.given, given);
    assert.match(problem.allowed, allowed);
    assert.match(err.message, /^stack "hub": invalid configuration/);
    assert.ok(err.message.includes(`argo-rollouts-addon:${key} = ${given}`), err.message);
}

describe("configuration", () => {
    it("accepts a complete hub and fills every default from code", () => {
        const cfg = parseAddonConfig("hub", raw(), { awsRegion: "eu-west-1" });
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

    it("accepts a kubeconfig context instead of an EKS cluster", () => {
        const cfg = parseAddonConfig("preprod", raw({ cluster: { eksClusterName: undefined, kubeconfigContext: "preprod-admin" } }));
        assert.deepStrictEqual(cfg.cluster.connection, { kind: "kubeconfig", context: "preprod-admin" });
    });

    it("accepts image delivery of the plugin pinned by digest", () => {
        const cfg = parseAddonConfig("hub", raw({ plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST } }), { awsRegion: "eu-west-1" });
        assert.deepStrictEqual(cfg.plugin.delivery, { mode: "image", repository: PLUGIN_DEFAULTS.repository, digest: TEST_DIGEST });
    });

    it("reads scalars given as text, as Pulumi stores them", () => {
        const cfg = parseAddonConfig("hub", raw({ controller: { replicas: "3", serviceMonitor: "true" } }), { awsRegion: "eu-west-1" });
        assert.strictEqual(cfg.controller.replicas, 3);
        assert.strictEqual(cfg.controller.serviceMonitor, true);
        assert.deepStrictEqual(parseConfigText('{"a":1}'), { a: 1 });
        assert.strictEqual(parseConfigText("plain"), "plain");
    });

    describe("rejects bad input with the key, the value and what is allowed", () => {
        it("an adoptExisting that is not a boolean", () =>
            assertRejects({ cluster: { adoptExisting: "yes" } }, "cluster.adoptExisting", '"yes"', /true or false/));
        it("a download without a sha256", () => assertRejects({ plugin: { sha256: undefined } }, "plugin.sha256", "(not set)", /is required.*64-hex sha256/));
        it("a sha256 that is not 64 hex", () => assertRejects({ plugin: { sha256: "abc123" } }, "plugin.sha256", '"abc123"', /64-hex/));
        it("an image without a digest", () =>
            assertRejects({ plugin: { delivery: "image", sha256: undefined } }, "plugin.digest", "(not set)", /sha256: followed by 64/));
        it("an image pinned by tag", () =>
            assertRejects({ plugin: { delivery: "image", sha256: undefined, digest: "v0.15.0" } }, "plugin.digest", '"v0.15.0"', /tags are mutable/));
        it("a delivery mode that does not exist", () => assertRejects({ plugin: { delivery: "curl" } }, "plugin.delivery", '"curl"', /one of download, image/));
        it("an unknown node architecture", () => assertRejects({ plugin: { arch: "s390x" } }, "plugin.arch", '"s390x"', /one of amd64, arm64/));
        it("a plugin download over plain http", () =>
            assertRejects({ plugin: { baseUrl: "http://mirror.example/plugins" } }, "plugin.baseUrl", '"http://mirror.example/plugins"', /https/));
        it("a role other than hub or spoke", () => assertRejects({ cluster: { role: "prod" } }, "cluster.role", '"prod"', /one of hub, spoke/));
        it("a tenant that would read several tenants", () =>
            assertRejects({ cluster: { mimirTenant: "hub|preprod" } }, "cluster.mimirTenant", '"hub|preprod"', /no '\|'/));
        it("a tenant with whitespace", () => assertRejects({ cluster: { mimirTenant: "hub prod" } }, "cluster.mimirTenant", '"hub prod"', /Mimir tenant id/));
        it("a single controller replica", () => assertRejects({ controller: { replicas: 1 } }, "controller.replicas", "1", /from 2 to 5/));
        it("a PDB budget of zero", () => assertRejects({ controller: { pdbMaxUnavailable: 0 } }, "controller.pdbMaxUnavailable", "0", /from 1 to 4/));
        it("a PDB budget as a percentage", () =>
            assertRejects({ controller: { pdbMaxUnavailable: "50%" } }, "controller.pdbMaxUnavailable", '"50%"', /whole number/));
        it("a PDB budget that allows every replica down", () =>
            assertRejects({ controller: { replicas: 2, pdbMaxUnavailable: 2 } }, "controller.pdbMaxUnavailable", "2", /less than controller.replicas/));
        it("a chart version range", () =>
            assertRejects({ controller: { chartVersion: "^2.41.0" } }, "controller.chartVersion", '"^2.41.0"', /exact chart version/));
        it("a chart whose appVersion is not known and not given", () =>
            assertRejects({ controller: { chartVersion: "2.50.0" } }, "controller.appVersion", "(not set)", /is required with chart 2\.50\.0/));
        it("an appVersion that is not the pinned chart's (CRDs and image of another release)", () =>
            assertRejects(
                { controller: { appVersion: "v1.8.3" } },
                "controller.appVersion",
                '"v1.8.3"',
                /^must be v1\.9\.0, the appVersion of chart 2\.41\.0 \(or unset\)/,
            ));
        it("the pinned chart's own appVersion, given explicitly, is accepted", () => {
            assert.strictEqual(
                parseAddonConfig("hub", raw({ controller: { appVersion: "v1.9.0" } }), { awsRegion: "eu-west-1" }).controller.appVersion,
                "v1.9.0",
            );
        });
        it("a spoke named like the hub itself", () =>
            assertRejects(
                { spokes: [{ name: "hub", tenant: "edge", hostname: "mimir-edge.hub.example.com", query: false }] },
                "spokes[0].name",
                '"hub"',
                /must not be the hub's own cluster\.name/,
            ));
        it("a spoke whose mimir.hubStack names its own stack", () => {
            const spoke = {
                cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", kubeconfigContext: "preprod" },
                gateway: { name: "internal", namespace: "gateway-system", listener: "https" },
                plugin: { sha256: TEST_SHA256 },
                policy: TEST_POLICY,
                argocd: { projects: {}, applicationSets: {} },
                mimir: { hubStack: "organization/argo-rollouts-addon/preprod" },
            };
            assert.throws(
                () => parseAddonConfig("preprod", spoke),
                (e: unknown) =>
                    e instanceof ConfigError && e.problems.some((p) => p.key === "mimir.hubStack" && /not this spoke's own \(preprod\)/.test(p.allowed)),
            );
            // Another project's stack of the same name is another program's: not this spoke.
            assert.strictEqual(
                parseAddonConfig("preprod", { ...spoke, mimir: { hubStack: "organization/argo-rollouts-addon/hub" } }).mimir.readEndpoint?.kind,
                "stack",
            );
        });
        describe("mimir.readCaBundle", () => {
            const tls = (f: string) => fs.readFileSync(path.join(__dirname, "fixtures", "tls", f), "utf8");
            const spoke = (mimir: Record<string, unknown>) => ({
                cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", kubeconfigContext: "preprod" },
                gateway: { name: "internal", namespace: "gateway-system", listener: "https" },
                plugin: { sha256: TEST_SHA256 },
                policy: TEST_POLICY,
                argocd: { projects: {}, applicationSets: {} },
                mimir: { readEndpoint: "https://mimir-preprod.hub.example/prometheus", ...mimir },
            });
            const problem = (mimir: Record<string, unknown>) => {
                try {
                    parseAddonConfig("preprod", spoke(mimir));
                } catch (e) {
                    assert.ok(e instanceof ConfigError, String(e));
                    const p = e.problems.find((x) => x.key === "mimir.readCaBundle");
                    assert.ok(p, e.message);
                    assert.match(e.message, /^stack "preprod": invalid configuration/);
                    return { ...p, message: e.message };
                }
                assert.fail("the bundle was accepted");
            };
            const RULE =
                /^must be one or more PEM CA certificates \(-----BEGIN CERTIFICATE----- \.\.\. -----END CERTIFICATE----- blocks of certificates with basicConstraints CA:TRUE, valid now, with keyCertSign where they carry a keyUsage\) and nothing else/;

            it("takes one or more CA certificates and keeps only their blocks, whatever the line ends", () => {
                const two = `${tls("ca.crt")}\n\n${tls("other-ca.crt").replace(/\n/g, "\r\n")}`;
                const cfg = parseAddonConfig("preprod", spoke({ readCaBundle: two }));
                assert.strictEqual(cfg.mimir.readCaBundle, `${tls("ca.crt").trim()}\n${tls("other-ca.crt").trim()}\n`);
                assert.strictEqual(parseAddonConfig("preprod", spoke({ readCaBundle: tls("ca.crt").trim() })).mimir.readCaBundle, tls("ca.crt"));
                assert.strictEqual(
                    parseAddonConfig(
                        "preprod",
                        spoke({ hubStack: "organization/argo-rollouts-addon/hub", readEndpoint: undefined, readCaBundle: tls("ca.crt") }),
                    ).mimir.readCaBundle,
                    tls("ca.crt"),
                );
                assert.strictEqual(parseAddonConfig("preprod", spoke({})).mimir.readCaBundle, undefined);
            });

            it("refuses a server certificate, naming it, and never shows the value", () => {
                const p = problem({ readCaBundle: `${tls("ca.crt")}${tls("server.crt")}` });
                assert.strictEqual(p.given, "[not shown: 2 PEM blocks: CERTIFICATE, CERTIFICATE]");
                assert.match(p.allowed, RULE);
                assert.match(
                    p.allowed,
                    /; certificate 2 \(subject CN=127\.0\.0\.1, issuer CN=argo-rollouts-addon test CA\) is not a CA certificate \(no basicConstraints CA:TRUE\)/,
                );
                assert.ok(
                    p.message.includes(
                        "argo-rollouts-addon:mimir.readCaBundle = [not shown: 2 PEM blocks: CERTIFICATE, CERTIFICATE]: must be one or more PEM CA certificates",
                    ),
                    p.message,
                );
            });

            it("refuses a private key without showing any of it", () => {
                const key = tls("server.key");
                const p = problem({ readCaBundle: `${tls("ca.crt")}${key}` });
                assert.strictEqual(p.given, "[not shown: 2 PEM blocks: CERTIFICATE, PRIVATE KEY]");
                assert.match(p.allowed, /block 2 is a PRIVATE KEY, not a CERTIFICATE \(a private key belongs to the server/);
                const body = key.split("\n")[1];
                assert.ok(body.length > 20 && !p.message.includes(body.slice(0, 20)), "the message shows the key");
            });

            it("refuses text that is no PEM, text between blocks, a block that does not parse, and a value that is not a string", () => {
                let p = problem({ readCaBundle: "s3cr3t-token-value" });
                assert.strictEqual(p.given, "[not shown: no PEM block, 18 characters]");
                assert.match(p.allowed, /; it has no PEM block$/);
                assert.ok(!p.message.includes("s3cr3t"));
                p = problem({ readCaBundle: `subject=CN=test\n${tls("ca.crt")}` });
                assert.match(p.allowed, /; it has text outside its CERTIFICATE blocks/);
                p = problem({ readCaBundle: "-----BEGIN CERTIFICATE-----\nTUlJQg==\n-----END CERTIFICATE-----\n" });
                assert.match(p.allowed, /; certificate 1 does not parse as X\.509/);
                p = problem({ readCaBundle: [tls("ca.crt")] });
                assert.strictEqual(p.given, "[not shown: a list]");
                assert.match(p.allowed, /^must be a string: one or more PEM CA certificates/);
            });

            it("refuses a bundle for an http read endpoint, and on a hub", () => {
                const p = problem({ readEndpoint: "http://mimir-preprod.hub.example/prometheus", readCaBundle: tls("ca.crt") });
                assert.strictEqual(p.given, "[1 CA certificate]");
                assert.match(
                    p.allowed,
                    /^only applies to an https read endpoint; mimir\.readEndpoint is http:\/\/mimir-preprod\.hub\.example\/prometheus, where no certificate is checked$/,
                );
                const err = problemsOf({ mimir: { readCaBundle: tls("ca.crt") } });
                const hub = err.problems.find((x) => x.key === "mimir.readCaBundle");
                assert.ok(hub, err.message);
                assert.strictEqual(hub.given, "[not shown]");
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
        it("an argocd.runsOn that names no cluster of the project's stack files", () => {
            const attempt = (runsOn: string) => () =>
                parseAddonConfig("hub", raw({ argocd: { runsOn } }), { awsRegion: "eu-west-1", projectClusters: ["hub", "preprod"] });
            assert.throws(
                attempt("hubb"),
                (e: unknown) =>
                    e instanceof ConfigError &&
                    e.message.includes(
                        'argo-rollouts-addon:argocd.runsOn = "hubb": must name a cluster this project manages (the cluster.name of one of its stack files: hub, preprod)',
                    ),
            );
            assert.doesNotThrow(attempt("hub"));
        });
        it("an error-budget query Prometheus cannot parse, after the args are resolved", () => {
            assertRejects(
                { errorBudget: { query: 'slo:remaining{service="{{args.service}}"' } },
                "errorBudget.query",
                '"slo:remaining{service=\\"{{args.service}}\\""',
                /^must be PromQL Prometheus can parse once \{\{args\.\*\}\} are resolved: syntax error at/,
            );
            assertRejects(
                { errorBudget: { query: 'sum(rate(x{service="{{args.service}}"}[5m]) ' } },
                "errorBudget.query",
                '"sum(rate(x{service=\\"{{args.service}}\\"}[5m]) "',
                /syntax error/,
            );
            const ok = 'min(slo:error_budget_remaining{service="{{args.service}}", slo="{{args.slo}}"}) or vector(1)';
            assert.strictEqual(parseAddonConfig("hub", raw({ errorBudget: { query: ok } }), { awsRegion: "eu-west-1" }).errorBudget.query, ok);
        });
        it("a memory request above its limit", () =>
            assertRejects(
                { controller: { resources: { requests: { memory: "1Gi" }, limits: { memory: "512Mi" } } } },
                "controller.resources.requests.memory",
                '"1Gi"',
                /must not exceed controller.resources.limits.memory/,
            ));
        it("a quantity that is not one", () =>
            assertRejects({ controller: { resources: { limits: { cpu: "lots" } } } }, "controller.resources.limits.cpu", '"lots"', /Kubernetes quantity/));
        it("a registry with a scheme", () =>
            assertRejects({ imageRegistry: "https://registry.example" }, "imageRegistry", '"https://registry.example"', /no scheme/));
        it("a namespace that is not a DNS label", () =>
            assertRejects({ controller: { namespace: "Argo_Rollouts" } }, "controller.namespace", '"Argo_Rollouts"', /DNS label/));
        it("both connection kinds at once", () =>
            assertRejects({ cluster: { kubeconfigContext: "x" } }, "cluster", '{"eksClusterName":"test-hub","kubeconfigContext":"x"}', /exactly one of/));
        it("a missing gateway listener", () => assertRejects({ gateway: { listener: undefined } }, "gateway.listener", "(not set)", /is required/));
        it("a boolean that is not one", () => assertRejects({ controller: { dashboard: "yes" } }, "controller.dashboard", '"yes"', /true or false/));
        it("an unknown top-level key (a typo), with the key it likely meant and without its value", () =>
            assertRejects(
                { contoller: { replicas: 3 } },
                "contoller",
                "[not shown]",
                /^unknown key; .* takes cluster, gateway, .*; did you mean controller\?$/,
            ));
        it("an unknown nested key (a typo), with the key it likely meant and without its value", () =>
            assertRejects({ plugin: { sha265: TEST_SHA256 } }, "plugin.sha265", "[not shown]", /^unknown key; plugin takes .*; did you mean sha256\?$/));
        it("a mistyped secret key never prints the secret", () => {
            const token = "xoxb-0000-not-a-real-token";
            const err = (() => {
                try {
                    parseAddonConfig("hub", { ...raw(), notificationToken: token }, { awsRegion: "eu-west-1" });
                } catch (e) {
                    return e as Error;
                }
                throw new Error("accepted");
            })();
            assert.ok(!err.message.includes(token), err.message);
            assert.match(err.message, /argo-rollouts-addon:notificationToken = \[not shown\]: unknown key; .*; did you mean notificationsToken\?/);
        });
        it("suggests nothing for a key near no real one, or near two", () => {
            assert.strictEqual(nearestKey("zzzzzz", ["cluster", "gateway"]), undefined);
            assert.strictEqual(nearestKey("ab", ["ac", "ad"]), undefined);
            assert.strictEqual(nearestKey("SmokeTest", ["smokeTest", "policy"]), "smokeTest");
        });
        it("a download-only key with image delivery", () =>
            assertRejects(
                { plugin: { delivery: "image", digest: TEST_DIGEST } },
                "plugin.sha256",
                `"${TEST_SHA256}"`,
                /only applies with plugin.delivery: download/,
            ));
    });

    it("reports every problem at once, not one per run", () => {
        const err = problemsOf({ cluster: { role: "prod", mimirTenant: "a|b" }, plugin: { sha256: "x" }, controller: { replicas: 9 }, typo: 1 });
        assert.deepStrictEqual(err.problems.map((p) => p.key).sort(), ["cluster.mimirTenant", "cluster.role", "controller.replicas", "plugin.sha256", "typo"]);
        assert.match(err.message, /\(5 problems\)/);
    });

    it("names the stack the problem is in", () => {
        assert.match(problemsOf({ cluster: { role: "x" } }, "preprod").message, /^stack "preprod"/);
    });

    it("requires the cluster and gateway sections, the tenant and prod labels, and where ArgoCD runs the objects it syncs", () => {
        try {
            parseAddonConfig("empty", {});
            assert.fail("accepted");
        } catch (err) {
            assert.ok(err instanceof ConfigError);
            assert.deepStrictEqual(
                err.problems.map((p) => p.key),
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
        }
    });

    it("compares quantities across units", () => {
        assert.strictEqual(parseQuantity("512Mi"), 512 * 1024 * 1024);
        assert.ok(parseQuantity("1Gi") > parseQuantity("512Mi"));
        assert.ok(parseQuantity("100m") < parseQuantity("1"));
    });
});

describe("configuration errors under the Pulumi CLI", () => {
    // @pulumi/pulumi cmd/run/run.js prints a RunError's message alone; any other error it prints
    // with util.inspect (defaultErrorMessage in cmd/run/error.js), trace and own fields included.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { RunError } = require("@pulumi/pulumi/errors") as typeof import("@pulumi/pulumi/errors");
    it("is a RunError, so the CLI shows the message and nothing else", () => {
        const err = problemsOf({ analysis: { successRate: 1.5 } }, "bad");
        assert.ok(RunError.isInstance(err));
        assert.match(
            err.message,
            /^stack "bad": invalid configuration \(1 problem\):\n {2}- argo-rollouts-addon:analysis\.successRate = 1\.5: must be a number from 0\.5 to 1$/,
        );
    });
    it("keeps Error's stack trace: the stack's name is stackName", () => {
        const err = problemsOf({ analysis: { successRate: 1.5 } }, "bad");
        assert.strictEqual(err.stackName, "bad");
        assert.match(String(err.stack), /^ConfigError: stack "bad": invalid configuration/);
    });
});
