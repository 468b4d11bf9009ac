/**
 * Values that planned cleanly and broke on a cluster, valid values that were refused, and messages
 * that said too little or too much: each class, read from a stack value that passed before.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { readCaBundle } from "../components/gateway/caBundle";
import { ConfigError, ConfigProblem, OFFLINE_SECRET } from "../components/config";
import { parseVerifyArgs, verifyMain } from "../tools/verify";
import { parsePlanArgs } from "../tools/plan";
import { parseAdoptCheckArgs } from "../tools/adopt-check";
import { deployOrder, parseDeployOrderArgs } from "../tools/deployOrder";
import { parseBenchArgs } from "../tools/bench";
import { parseE2eArgs } from "../e2e/lib/args";
import { docsMain } from "../tools/docs";
import { parseCommentArgs } from "../tools/prComment";
import { AddonConfig, parseAddonConfig } from "../stacks/config";
import { FIXTURE_STACKS, TEST_DIGEST, TEST_POLICY, TEST_SHA256, hubConfig, merged, whole, withRegulatedArgoRbac } from "./harness";

function raw(patch: Record<string, unknown> = {}): Record<string, unknown> {
    const { "aws:region": _region, ...rest } = merged(hubConfig(), patch);
    return withRegulatedArgoRbac(rest);
}

const parse = (patch: Record<string, unknown> = {}, ambient: Parameters<typeof parseAddonConfig>[2] = {}): AddonConfig =>
    parseAddonConfig("hub", raw(patch), { awsRegion: "eu-west-1", ...ambient });

function problems(patch: Record<string, unknown>, ambient: Parameters<typeof parseAddonConfig>[2] = {}): ConfigProblem[] {
    try {
        parse(patch, ambient);
    } catch (err) {
        assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
        return err.problems;
    }
    assert.fail("configuration was accepted");
}

/** The problem reported for `key`, whose `allowed` text matches `allowed`. */
function problemFor(patch: Record<string, unknown>, key: string, allowed: RegExp, ambient: Parameters<typeof parseAddonConfig>[2] = {}): ConfigProblem {
    const all = problems(patch, ambient);
    const found = all.filter((p) => p.key === key);
    assert.ok(found.length >= 1, `expected a problem for ${key}, got: ${JSON.stringify(all, null, 1)}`);
    assert.ok(
        found.some((p) => allowed.test(p.allowed)),
        `no problem for ${key} matches ${allowed}: ${JSON.stringify(found, null, 1)}`,
    );
    return found.find((p) => allowed.test(p.allowed))!;
}

const REGULATED = {
    namespaceLabels: { "platform.test/class": "regulated" },
    approverGroups: ["release-approvers"],
    deployerGroups: ["shop-deployers"],
    gitopsServiceAccounts: ["argocd/argocd-application-controller"],
};

/** An enabled smoke canary, with `patch` over it. */
const SMOKE = (patch: Record<string, unknown> = {}) => ({
    enabled: true,
    hostname: "smoke.platform.test",
    image: `registry.platform.test/mirror/argoproj/rollouts-demo@${TEST_DIGEST}`,
    loadImage: `registry.platform.test/mirror/curlimages/curl@${TEST_DIGEST}`,
    ...patch,
});

describe("edge cases (third round)", () => {
    describe("null list items", () => {
        it("refuses a ~ item in an approver list instead of building a guard nobody passes", () => {
            const p = problemFor(
                { policy: { regulated: { ...REGULATED, approverGroups: [null] } } },
                "policy.regulated.approverGroups[0]",
                /empty list item \(~ or null\)/,
            );
            assert.strictEqual(p.given, "null");
        });

        it("refuses a ~ item in every list of strings (excludeNamespaces, topologyKeys, selector values, ignore rules)", () => {
            problemFor({ policy: { excludeNamespaces: ["kyverno", null] } }, "policy.excludeNamespaces[1]", /empty list item/);
            problemFor({ policy: { topologyKeys: [null] } }, "policy.topologyKeys[0]", /empty list item/);
            problemFor(
                { policy: { tenantNamespaceSelector: { matchExpressions: [{ key: "platform.test/tier", operator: "In", values: ["prod", null] }] } } },
                "policy.tenantNamespaceSelector.matchExpressions[0].values[1]",
                /empty list item/,
            );
            problemFor(
                { argocd: { ignoreDifferences: [{ kind: "Service", jsonPointers: ["/spec/clusterIP", null] }] } },
                "argocd.ignoreDifferences[0].jsonPointers[1]",
                /empty list item/,
            );
        });

        it("refuses a ~ item in a list of objects", () => {
            problemFor({ controller: { tenantOperators: [null] } }, "controller.tenantOperators[0]", /must be an object/);
        });
    });

    describe("identities", () => {
        for (const group of ["system:authenticated", "system:serviceaccounts", "system:serviceaccounts:shop", "system:bootstrappers"]) {
            it(`refuses the Kubernetes group ${group} as approver, deployer and tenant operator`, () => {
                problemFor(
                    { policy: { regulated: { ...REGULATED, approverGroups: [group] } } },
                    "policy.regulated.approverGroups[0]",
                    /no Kubernetes system: group/,
                );
                problemFor(
                    { policy: { regulated: { ...REGULATED, deployerGroups: [group] } } },
                    "policy.regulated.deployerGroups[0]",
                    /no Kubernetes system: group/,
                );
                problemFor(
                    { controller: { tenantOperators: [{ namespace: "shop", groups: [group] }] } },
                    "controller.tenantOperators[0].groups[0]",
                    /no Kubernetes system: group/,
                );
            });
        }

        it("refuses an approver group that is also a deployer group", () => {
            problemFor(
                { policy: { regulated: { ...REGULATED, deployerGroups: ["shop-deployers", "release-approvers"] } } },
                "policy.regulated.deployerGroups",
                /must not include an approver group/,
            );
        });

        for (const group of ["release-*", "release-approver?"]) {
            it(`refuses the wildcard group ${group} in every group and user key (kyverno.io/v1 matches it, CEL does not)`, () => {
                for (const key of ["approverGroups", "deployerGroups", "gitopsGroups", "gitopsUsers"]) {
                    problemFor({ policy: { regulated: { ...REGULATED, [key]: [group] } } }, `policy.regulated.${key}[0]`, /no \* or \?/);
                }
                problemFor(
                    { controller: { tenantOperators: [{ namespace: "shop", groups: [group] }] } },
                    "controller.tenantOperators[0].groups[0]",
                    /no \* or \?/,
                );
                problemFor({ argocd: { rbac: { approverGroups: [group] } } }, "argocd.rbac.approverGroups[0]", /no \* or \?/);
            });
        }

        it("accepts SSO group names with blanks in every group key", () => {
            const cfg = parse({
                policy: {
                    regulated: { ...REGULATED, approverGroups: ["Release Approvers"], deployerGroups: ["Shop Deployers"], gitopsGroups: ["Argo CD Hub"] },
                },
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
            });
            assert.deepStrictEqual(cfg.policy.regulated?.approverGroups, ["Release Approvers"]);
            assert.deepStrictEqual(cfg.policy.regulated?.gitopsGroups, ["Argo CD Hub"]);
            assert.deepStrictEqual(cfg.controller.tenantOperators, [{ namespace: "shop", groups: ["Shop On Call"] }]);
            assert.deepStrictEqual(cfg.argocd.rbac.approverGroups, ["Release Approvers"]);
            assert.deepStrictEqual(cfg.argocd.rbac.deployerGroups, ["Shop Deployers"]);
        });
    });

    describe("Kubernetes limits wherever a value lands", () => {
        const long = "n".repeat(64);
        it("refuses a 64-character namespace in every namespace key (the webhook's namespaceSelector values included)", () => {
            problemFor({ policy: { excludeNamespaces: ["kyverno", long] } }, "policy.excludeNamespaces[1]", /at most 63/);
            problemFor({ network: { controllerDefaultDeny: true, metricsScrapeNamespaces: [long] } }, "network.metricsScrapeNamespaces[0]", /at most 63/);
            problemFor(
                {
                    argocd: {
                        ignoreDifferences: [{ kind: "Service", jsonPointers: ["/spec/clusterIP"] }],
                        applicationSets: {
                            shop: { owner: "addon", ignoreDifferences: [{ kind: "Service", namespace: long, jsonPointers: ["/spec/clusterIP"] }] },
                        },
                    },
                },
                "argocd.applicationSets.shop.ignoreDifferences[0].namespace",
                /at most 63/,
            );
        });

        it("refuses a label key prefix over 253 characters, and accepts one of 253", () => {
            const prefix = (n: number) => `${"a".repeat(63)}.`.repeat(4).slice(0, n);
            problemFor(
                { policy: { prodNamespaceLabels: whole({ [`${prefix(254)}/tier`]: "prod" }) } },
                `policy.prodNamespaceLabels.${prefix(254)}/tier`,
                /prefix of at most 253/,
            );
            problemFor({ policy: { topologyKeys: [`${prefix(254)}/zone`] } }, "policy.topologyKeys[0]", /node label key/);
            const ok = `${prefix(252)}a/tier`;
            assert.deepStrictEqual(parse({ policy: { prodNamespaceLabels: whole({ [ok]: "prod" }) } }).policy.prodNamespaceLabels, { [ok]: "prod" });
        });

        it("refuses a label value over 63 characters in a selector", () => {
            problemFor(
                { policy: { tenantNamespaceSelector: whole({ matchExpressions: [{ key: "platform.test/tier", operator: "In", values: ["v".repeat(64)] }] }) } },
                "policy.tenantNamespaceSelector.matchExpressions[0].values[0]",
                /a label value/,
            );
        });

        it("refuses kubernetes.io/metadata.name among the controller namespace's labels (the API server owns it)", () => {
            problemFor(
                { controller: { namespaceLabels: { "kubernetes.io/metadata.name": "argo-rollouts" } } },
                "controller.namespaceLabels.kubernetes.io/metadata.name",
                /the API server sets it/,
            );
        });

        it("refuses a kube- namespace for the namespaces the addon creates", () => {
            problemFor({ controller: { namespace: "kube-rollouts" } }, "controller.namespace", /Kubernetes reserves the prefix/);
            problemFor({ smokeTest: SMOKE({ namespace: "kube-smoke" }) }, "smokeTest.namespace", /Kubernetes reserves the prefix/);
        });

        it("refuses the controller's or the smoke canary's namespace set to someone else's", () => {
            problemFor({ controller: { namespace: "gateway-system" } }, "controller.namespace", /not the namespace of gateway\.namespace/);
            problemFor({ controller: { namespace: "argocd" } }, "controller.namespace", /not the namespace of argocd\.namespace/);
            problemFor({ controller: { namespace: "observability" } }, "controller.namespace", /not the namespace of mimir\.namespace/);
            problemFor({ smokeTest: SMOKE({ namespace: "observability" }) }, "smokeTest.namespace", /not the namespace of mimir\.namespace/);
            problemFor({ smokeTest: SMOKE({ namespace: "gateway-system" }) }, "smokeTest.namespace", /not the namespace of gateway\.namespace/);
            problemFor({ smokeTest: SMOKE({ namespace: "kube-system" }) }, "smokeTest.namespace", /Kubernetes' own namespaces/);
            problemFor({ controller: { namespace: "default" } }, "controller.namespace", /not one of Kubernetes'/);
        });
    });

    describe("image references and checksums", () => {
        const digest = `sha256:${"c".repeat(64)}`;
        it("refuses a registry without a host part (a Docker Hub namespace)", () => {
            problemFor({ imageRegistry: "mirror/platform" }, "imageRegistry", /Docker Hub namespace/);
            problemFor({ smokeTest: SMOKE({ image: `mirror/argoproj/rollouts-demo@${digest}` }) }, "smokeTest.image", /Docker Hub namespace/);
            assert.strictEqual(parse({ imageRegistry: "localhost:5000/mirror" }).imageRegistry, "localhost:5000/mirror");
            assert.strictEqual(parse({ imageRegistry: "localhost/mirror" }).imageRegistry, "localhost/mirror");
        });

        it("refuses image names over 255 characters", () => {
            const longPath = Array.from({ length: 6 }, () => "p".repeat(40)).join("/");
            problemFor({ smokeTest: SMOKE({ image: `registry.platform.test/${longPath}/rollouts-demo@${digest}` }) }, "smokeTest.image", /at most 255/);
            problemFor({ imageRegistry: `registry.platform.test/${longPath}` }, "imageRegistry", /at most 224 characters/);
            problemFor(
                { plugin: { delivery: "image", sha256: undefined, digest, repository: `${longPath}/plugin` } },
                "plugin.repository",
                /within 255 characters/,
            );
        });

        it("refuses a smoke image from outside imageRegistry, where every image must come from the mirror", () => {
            problemFor(
                { smokeTest: SMOKE({ image: `ghcr.io/argoproj/rollouts-demo@${digest}` }) },
                "smokeTest.image",
                /must come from imageRegistry \(registry\.platform\.test\/mirror\//,
            );
            problemFor(
                { smokeTest: SMOKE({ loadImage: `registry.platform.test/mirror-old/curl@${digest}` }) },
                "smokeTest.loadImage",
                /must come from imageRegistry/,
            );
            assert.strictEqual(
                parse({ imageRegistry: undefined, smokeTest: SMOKE({ image: `ghcr.io/argoproj/rollouts-demo@${digest}` }) }).smokeTest.image,
                `ghcr.io/argoproj/rollouts-demo@${digest}`,
            );
        });

        it("accepts a pinned reference that keeps its tag, name:tag@sha256:<64 hex>", () => {
            const image = `registry.platform.test/mirror/argoproj/rollouts-demo:blue@${digest}`;
            assert.strictEqual(parse({ smokeTest: SMOKE({ image }) }).smokeTest.image, image);
        });

        it("refuses the sha256 of zero bytes as a checksum or a digest", () => {
            const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
            problemFor({ plugin: { sha256: empty } }, "plugin.sha256", /sha256 of zero bytes/);
            problemFor({ plugin: { sha256: empty.toUpperCase() } }, "plugin.sha256", /sha256 of zero bytes/);
            problemFor({ plugin: { delivery: "image", sha256: undefined, digest: `sha256:${empty}` } }, "plugin.digest", /sha256 of zero bytes/);
            problemFor(
                { smokeTest: SMOKE({ loadImage: `registry.platform.test/mirror/curlimages/curl@sha256:${empty}` }) },
                "smokeTest.loadImage",
                /sha256 of zero bytes/,
            );
        });
    });

    describe("messages", () => {
        it("never prints a URL's user-info or query string in a configuration message", () => {
            const err = (() => {
                try {
                    parse({ controller: { crdBaseUrl: "https://deploy:hunter2@raw.platform.test/argo?token=s3cr3t" } });
                } catch (e) {
                    return e as Error;
                }
                assert.fail("accepted");
            })();
            assert.match(err.message, /controller\.crdBaseUrl = "https:\/\/raw\.platform\.test\/argo\?\[not shown\]"/);
            assert.doesNotMatch(err.message, /hunter2|s3cr3t|deploy:/);
        });

        it("never prints a URL's user-info or query string in verify's output", async () => {
            const printed: string[] = [];
            const errors: string[] = [];
            assert.strictEqual(
                await verifyMain(
                    ["--stack", "hub", "--without", "https://ci:t0ken@hooks.platform.test/x?sig=abc", "--json"],
                    (s) => printed.push(s),
                    (s) => errors.push(s),
                ),
                2,
            );
            const all = [...printed, ...errors].join("\n");
            assert.match(all, /got https:\/\/hooks\.platform\.test\/x\?\[not shown\]/);
            assert.doesNotMatch(all, /t0ken|sig=abc|ci:/);
        });

        it("says the offline plan cannot decrypt a secure: value where a key needs plain text, and never shows a secret's text", () => {
            const offline = problemFor({ imageRegistry: OFFLINE_SECRET }, "imageRegistry", /the offline plan cannot decrypt secrets/, {
                secretKeys: ["imageRegistry"],
            });
            assert.strictEqual(offline.given, "[secret]");
            // In pulumi up the program gets the decrypted text: a bad one is refused without being shown.
            const live = problemFor({ imageRegistry: "mirror/Decrypted" }, "imageRegistry", /Docker Hub namespace/, { secretKeys: ["imageRegistry"] });
            assert.strictEqual(live.given, "[secret]");
            assert.doesNotMatch(live.allowed, /offline/);
        });

        it("names aws:region, the key the user set, when the EKS region comes from it", () => {
            const p = problemFor({}, "aws:region", /cluster\.region is not set, so the EKS cluster's region is read from aws:region/, { awsRegion: "eu-west" });
            assert.strictEqual(p.given, '"eu-west"');
            assert.ok(!problems({}, { awsRegion: "eu-west" }).some((x) => x.key === "cluster.region"));
        });

        it("shows invisible characters escaped, in values and in keys", () => {
            const value = problemFor({ cluster: { name: "hub\u200b" } }, "cluster.name", /DNS label/);
            assert.strictEqual(value.given, '"hub\\u200b"');
            let message = "";
            try {
                parse({ "contro\u200bller": {} });
            } catch (e) {
                message = (e as Error).message;
            }
            assert.match(message, /contro\\u200bller/);
            assert.doesNotMatch(message, /\u200b/);
        });
    });

    describe("certificates the controller will not trust", () => {
        const tls = (f: string) => fs.readFileSync(path.join(__dirname, "fixtures", "tls", f), "utf8");
        const spoke = (readCaBundle: string) => ({
            cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", kubeconfigContext: "preprod" },
            gateway: { name: "internal", namespace: "gateway-system", listener: "https" },
            plugin: { sha256: TEST_SHA256 },
            policy: TEST_POLICY,
            argocd: { projects: {}, applicationSets: {} },
            mimir: { readEndpoint: "https://mimir-preprod.hub.platform.test/prometheus", readCaBundle },
        });
        const refused = (bundle: string): string => {
            try {
                parseAddonConfig("preprod", spoke(bundle));
            } catch (e) {
                assert.ok(e instanceof ConfigError);
                const p = e.problems.find((x) => x.key === "mimir.readCaBundle");
                assert.ok(p, e.message);
                assert.doesNotMatch(e.message, /MII/, "the certificate is never echoed");
                return p.allowed;
            }
            assert.fail("the bundle was accepted");
        };

        it("refuses an expired CA, naming it and its end date", () => {
            assert.match(
                refused(tls("expired-ca.crt")),
                /certificate 1 \(subject CN=argo-rollouts-addon test expired CA\) expired on Jan {2}1 00:00:00 2001 GMT/,
            );
        });

        it("refuses a CA that is not valid yet, after a good one", () => {
            assert.match(
                refused(`${tls("ca.crt")}${tls("future-ca.crt")}`),
                /certificate 2 \(subject CN=argo-rollouts-addon test future CA\) is not valid before Jan {2}1 00:00:00 2100 GMT/,
            );
        });

        it("refuses a CA whose keyUsage lacks keyCertSign, naming keyCertSign", () => {
            assert.match(refused(tls("nosign-ca.crt")), /certificate 1 \(subject CN=[^)]*\).* has a keyUsage without keyCertSign/);
        });

        it("reads validity against the time it is given (a pure rule)", () => {
            assert.strictEqual(readCaBundle(tls("ca.crt"), new Date("2027-01-01T00:00:00Z")).ok, true);
            assert.strictEqual(readCaBundle(tls("expired-ca.crt"), new Date("2000-06-01T00:00:00Z")).ok, true);
            assert.strictEqual(readCaBundle(tls("ca.crt"), new Date("2200-01-01T00:00:00Z")).ok, false);
        });
    });

    describe("flags of every npm run command", () => {
        /** Each command's parser, its flags that take a value and its switches. */
        const commands: { name: string; parse: (argv: string[]) => unknown; base: string[]; flags: string[]; switches: string[] }[] = [
            {
                name: "plan",
                parse: parsePlanArgs,
                base: ["--stack", "hub"],
                flags: ["--stack", "--out", "--config-dir", "--stats", "--against", "--chart", "--kube-version", "--crds"],
                switches: [],
            },
            {
                name: "prComment (the workflow's)",
                parse: parseCommentArgs,
                base: ["--stack", "hub", "--file", "summary.md"],
                flags: ["--stack", "--file"],
                switches: [],
            },
            {
                name: "verify",
                parse: parseVerifyArgs,
                base: ["--stack", "hub"],
                flags: ["--stack", "--kubeconfig", "--context", "--kyverno-namespace", "--smoke-timeout", "--config-dir", "--without"],
                switches: ["--json", "--print-role"],
            },
            {
                name: "adopt-check",
                parse: parseAdoptCheckArgs,
                base: ["--stack", "hub"],
                flags: ["--stack", "--kubeconfig", "--context", "--config-dir"],
                switches: ["--json"],
            },
            { name: "deploy-order", parse: parseDeployOrderArgs, base: [], flags: ["--config-dir"], switches: [] },
            { name: "bench", parse: parseBenchArgs, base: [], flags: ["--runs", "--json"], switches: ["--no-engine"] },
            { name: "e2e", parse: parseE2eArgs, base: [], flags: ["--json", "--grep"], switches: ["--keep"] },
        ];
        for (const c of commands) {
            it(`${c.name}: refuses an empty value and a value given to a switch, naming the flag`, () => {
                for (const flag of c.flags) {
                    assert.throws(
                        () => c.parse([...c.base, `${flag}=`]),
                        (e: Error) => e.message.startsWith(`${flag} needs a value (it was given an empty one)`),
                        `${c.name} ${flag}=`,
                    );
                }
                for (const s of c.switches) {
                    assert.throws(
                        () => c.parse([...c.base, `${s}=false`]),
                        (e: Error) => e.message.startsWith(`${s} is a switch and takes no value (got ${s}=false)`),
                        `${c.name} ${s}=false`,
                    );
                }
            });
        }

        it("docs: refuses a value given to --check, naming it", () => {
            const errors: string[] = [];
            const original = console.error;
            console.error = (m: string) => errors.push(m);
            try {
                assert.strictEqual(docsMain(["--check=false"]), 2);
            } finally {
                console.error = original;
            }
            assert.match(errors.join("\n"), /^--check is a switch and takes no value/);
        });

        it("deploy-order fails on a folder with no stack files, and on one that does not exist", () => {
            const empty = fs.mkdtempSync(path.join(os.tmpdir(), "deploy-order-"));
            try {
                assert.throws(() => deployOrder(empty), /no stack file \(Pulumi\.<stack>\.yaml\) in .*: nothing to order/);
                assert.throws(() => deployOrder(path.join(empty, "missing")), /is not a folder/);
            } finally {
                fs.rmSync(empty, { recursive: true, force: true });
            }
            assert.deepStrictEqual(deployOrder(FIXTURE_STACKS), { hubs: ["hub"], spokes: ["preprod"] });
        });
    });

    describe("valid values that were refused", () => {
        it("accepts {{ args.service }} with blanks inside the braces, as Argo Rollouts trims them", () => {
            const query = 'slo:period_error_budget_remaining:ratio{sloth_service="{{ args.service }}",sloth_slo="{{ args.slo }}"}';
            assert.strictEqual(parse({ errorBudget: { query } }).errorBudget.query, query);
        });

        it("refuses an argument the error budget template does not declare", () => {
            problemFor(
                { errorBudget: { query: 'slo:period_error_budget_remaining:ratio{sloth_service="{{args.service}}",team="{{args.team}}"}' } },
                "errorBudget.query",
                /the template declares only service and slo/,
            );
        });

        it("accepts a PriorityClass name with dots", () => {
            assert.strictEqual(parse({ controller: { priorityClassName: "platform.critical" } }).controller.priorityClassName, "platform.critical");
            problemFor({ controller: { priorityClassName: "Platform_Critical" } }, "controller.priorityClassName", /DNS subdomain/);
        });

        it("accepts a Slack channel ID as the channel", () => {
            const cfg = parse(
                { notifications: { service: "slack", slackChannel: "C0123ABCD" }, notificationsToken: "xoxb-test" },
                { secretKeys: ["notificationsToken"] },
            );
            assert.strictEqual(cfg.notifications.slackChannel, "C0123ABCD");
            problemFor(
                { notifications: { service: "slack", slackChannel: "X0123ABCD" }, notificationsToken: "xoxb-test" },
                "notifications.slackChannel",
                /channel ID such as C0123ABCD/,
                { secretKeys: ["notificationsToken"] },
            );
        });
    });
});
