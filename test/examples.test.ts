import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { EXAMPLE_DIGEST, EXAMPLE_SHA256, exampleRefusal, exampleValues, isExampleValue } from "../components/config/examples";
import { ConfigError, PROJECT } from "../components/config/reader";
import { parseAddonConfig } from "../stacks/config";
import { OfflineRun, runOffline } from "../tools/offline";
import { configFromStackFile, fromConfigMap, placeholderWorld } from "../tools/stackFile";
import { FIXTURE_STACKS, merged } from "./harness";

/**
 * Example values, one mechanism for every key (components/config/examples.ts): recognised wherever
 * they are, warned about once per key by a preview, refused by `pulumi up` before anything is
 * declared. Tested on the fixtures, with an example put into each key the shipped stack files and
 * the docs exemplify.
 */

/** The hub fixture's project keys, without the namespace (what parseAddonConfig reads). */
function hubFixture(): Record<string, unknown> {
    const doc = YAML.parse(fs.readFileSync(path.join(FIXTURE_STACKS, "Pulumi.hub.yaml"), "utf8")) as { config: Record<string, unknown> };
    return Object.fromEntries(
        Object.entries(doc.config)
            .filter(([k]) => k.startsWith(`${PROJECT}:`))
            .map(([k, v]) => [k.slice(PROJECT.length + 1), v]),
    );
}

const parse = (raw: Record<string, unknown>) => parseAddonConfig("hub", raw, { awsRegion: "eu-west-1" });

async function run(config: Record<string, unknown>, dryRun: boolean): Promise<{ run: OfflineRun; warned: string[] }> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { defineStack, forgetWarnings } = require("../stacks/program") as typeof import("../stacks/program");
    forgetWarnings();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pulumi = require("@pulumi/pulumi") as typeof import("@pulumi/pulumi");
    const file = fromConfigMap("hub", { "aws:region": "eu-west-1", ...config });
    const warned: string[] = [];
    const warn = pulumi.log.warn;
    pulumi.log.warn = (m: string) => {
        warned.push(m);
        return Promise.resolve();
    };
    try {
        return {
            run: await runOffline({
                stack: "hub",
                config: file.config,
                secretKeys: file.secretKeys,
                world: placeholderWorld(file),
                dryRun,
                program: () => defineStack(),
            }),
            warned,
        };
    } finally {
        pulumi.log.warn = warn;
    }
}

describe("example values", () => {
    describe("isExampleValue", () => {
        it("recognises the reserved example domains, the word example and the example checksum and digest", () => {
            for (const v of [
                "registry.platform.example/mirror",
                "platform.example/tier",
                "mimir-preprod.hub.example.com",
                "https://mimir.example.org/prometheus",
                "example-tenants",
                "role:example-release-approver",
                "Example Approvers",
                EXAMPLE_DIGEST,
                EXAMPLE_SHA256,
                `registry.example.net/mirror/app@${EXAMPLE_DIGEST}`,
            ]) {
                assert.ok(isExampleValue(v), v);
            }
        });

        it("leaves every value that only contains the letters inside a longer word", () => {
            for (const v of [
                "counterexamples",
                "examples-team",
                "exampled",
                "registry.acme.io/mirror",
                "platform.test/tier",
                `sha256:${"ab".repeat(32)}`,
                "tenants",
            ]) {
                assert.ok(!isExampleValue(v), v);
            }
        });
    });

    describe("exampleValues", () => {
        it("names each key once, in the stack file's order, map keys (labels, names) included", () => {
            const raw = {
                imageRegistry: "registry.example.com/mirror",
                policy: {
                    prodNamespaceLabels: { "platform.example/tier": "prod", "platform.example/other": "x" },
                    regulated: { approverGroups: ["ops", "example-approvers"] },
                },
                argocd: { projects: { "example-tenants": { owner: "external" }, tenants: {} } },
                spokes: [{ hostname: "a.test" }, { hostname: "b.example" }],
            };
            assert.deepStrictEqual(exampleValues(raw), [
                { key: "imageRegistry", example: "registry.example.com/mirror" },
                { key: "policy.prodNamespaceLabels", example: "platform.example/tier" },
                { key: "policy.regulated.approverGroups[1]", example: "example-approvers" },
                { key: "argocd.projects", example: "example-tenants" },
                { key: "spokes[1].hostname", example: "b.example" },
            ]);
        });

        it("never reads a secret key, and never shows a URL's user-info or query in the refusal", () => {
            assert.deepStrictEqual(exampleValues({ notificationsToken: "example-token" }, ["notificationsToken"]), []);
            const message = exampleRefusal("hub", PROJECT, [{ key: "notifications.webhookUrl", example: "https://bot:s3cret@hooks.example.com/in?token=abc" }]);
            assert.ok(!message.includes("s3cret") && !message.includes("abc"), message);
            assert.match(message, /https:\/\/hooks\.example\.com\/in\?\[not shown\]/);
        });

        it("finds none in the fixtures, which hold a test platform's own values", () => {
            for (const f of fs.readdirSync(FIXTURE_STACKS).filter((n) => n.endsWith(".yaml"))) {
                const doc = YAML.parse(fs.readFileSync(path.join(FIXTURE_STACKS, f), "utf8")) as { config: Record<string, unknown> };
                assert.deepStrictEqual(exampleValues(doc.config), [], f);
            }
        });
    });

    describe("each key a stack file or the docs exemplify", () => {
        /** The key as warnings name it, and the stack-file change that puts an example there. */
        const cases: [string, Record<string, unknown>][] = [
            ["cluster.eksClusterName", { cluster: { eksClusterName: "example-platform-hub" } }],
            ["imageRegistry", { imageRegistry: "registry.platform.example/mirror" }],
            ["controller.namespaceLabels", { controller: { namespaceLabels: { "platform.example/tier": "platform" } } }],
            ["spokes[0].hostname", { spokes: [{ name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.platform.example", query: true }] }],
            [
                "policy.tenantNamespaceSelector.matchExpressions[0].key",
                { policy: { tenantNamespaceSelector: { matchExpressions: [{ key: "platform.example/tier", operator: "Exists" }] } } },
            ],
            ["policy.prodNamespaceLabels", { policy: { prodNamespaceLabels: { "platform.example/tier": "prod" } } }],
            ["policy.regulated.namespaceLabels", { policy: { regulated: { namespaceLabels: { "platform.example/compliance": "regulated" } } } }],
            ["policy.regulated.approverGroups[0]", { policy: { regulated: { approverGroups: ["example-release-approvers"] } } }],
            ["policy.regulated.deployerGroups[0]", { policy: { regulated: { deployerGroups: ["example-deployers"] } } }],
            ["argocd.projects", { argocd: { projects: { "example-tenants": { owner: "external" } } } }],
            ["argocd.applicationSets", { argocd: { applicationSets: { "example-tenant-apps": { owner: "external" } } } }],
            ["argocd.rbac.approverRole", { argocd: { rbac: { approverRole: "role:example-release-approver" } } }],
            ["argocd.rbac.deployerRoles[0]", { argocd: { rbac: { deployerRoles: ["role:example-tenant-deployer"] } } }],
            ["plugin.digest", { plugin: { digest: EXAMPLE_DIGEST } }],
            ["plugin.sha256", { plugin: { delivery: "download", sha256: EXAMPLE_SHA256, digest: undefined, repository: undefined } }],
            [
                "smokeTest.hostname",
                {
                    smokeTest: {
                        enabled: true,
                        hostname: "rollouts-smoke.example.com",
                        image: `registry.platform.test/mirror/demo@sha256:${"1".repeat(64)}`,
                        loadImage: `registry.platform.test/mirror/curl@sha256:${"2".repeat(64)}`,
                    },
                },
            ],
            [
                "notifications.webhookUrl",
                { notifications: { service: "webhook", webhookUrl: "https://hooks.example.com/rollouts" }, notificationsToken: { secure: "v1:c2VjcmV0" } },
            ],
        ];
        it("each: a valid value the configuration names as an example, the list a preview warns of and pulumi up refuses", () => {
            for (const [key, patch] of cases) {
                const file = fromConfigMap("hub", { "aws:region": "eu-west-1", ...merged(hubFixture(), patch) });
                assert.ok(
                    configFromStackFile(file).examples.some((e) => e.key === key),
                    key,
                );
            }
        });

        it("a preview warns once per key, pulumi up refuses naming each key before anything is declared", async () => {
            const config = merged(hubFixture(), { ...cases[0][1], ...cases[cases.length - 1][1] });
            const keys = [cases[0][0], cases[cases.length - 1][0]];
            const { warned } = await run(config, true);
            for (const key of keys) {
                assert.strictEqual(warned.filter((w) => w.includes(`${PROJECT}:${key} holds the example value`)).length, 1, `${key}:\n${warned.join("\n")}`);
            }
            await assert.rejects(run(config, false), (e: Error) => keys.every((key) => e.message.includes(`${PROJECT}:${key} = `)));
        });

        it("pulumi up of the fixture, with no example left, is not refused", async () => {
            const { run: planned, warned } = await run(hubFixture(), false);
            assert.ok(planned.resources.length > 10);
            assert.deepStrictEqual(
                warned.filter((w) => w.includes("example")),
                [],
            );
        });
    });

    describe("a value only the platform knows has no default", () => {
        const missing: [string, Record<string, unknown>][] = [
            ["policy.tenantNamespaceSelector", { policy: { tenantNamespaceSelector: undefined } }],
            ["policy.prodNamespaceLabels", { policy: { prodNamespaceLabels: undefined } }],
            ["policy.regulated.namespaceLabels", { policy: { regulated: { namespaceLabels: undefined } } }],
            ["policy.regulated.approverGroups", { policy: { regulated: { approverGroups: undefined } } }],
            ["policy.regulated.deployerGroups", { policy: { regulated: { deployerGroups: undefined } } }],
            ["policy.regulated.gitopsServiceAccounts", { policy: { regulated: { gitopsServiceAccounts: undefined } } }],
            ["argocd.projects", { argocd: { projects: undefined } }],
            ["argocd.applicationSets", { argocd: { applicationSets: undefined } }],
            ["argocd.rbac.regulatedProjects", { argocd: { rbac: { regulatedProjects: undefined } } }],
        ];
        for (const [key, patch] of missing) {
            it(`${key}: left out, refused naming the key before anything is declared`, () => {
                const raw = merged(hubFixture(), patch);
                assert.throws(
                    () => parse(raw),
                    (e: unknown) => e instanceof ConfigError && e.problems.some((p) => p.key === key && /is required/.test(p.allowed)),
                );
            });
        }

        it("the whole policy section left out: refused naming both keys it must set", () => {
            const raw = merged(hubFixture(), { policy: undefined });
            assert.throws(
                () => parse(raw),
                (e: unknown) =>
                    e instanceof ConfigError &&
                    ["policy.tenantNamespaceSelector", "policy.prodNamespaceLabels"].every((k) => e.problems.some((p) => p.key === k)),
            );
        });

        it("where another cluster's ArgoCD syncs this one, the ArgoCD names are that stack's to set", () => {
            // Its API server arrives as its sync does: no action identity here (components/argocd/preflight.ts).
            const raw = merged(hubFixture(), {
                policy: { regulated: { actionServiceAccounts: [] } },
                argocd: { runsOn: "preprod", projects: undefined, applicationSets: undefined, rbac: undefined },
            });
            const config = parseAddonConfig("hub", raw, { awsRegion: "eu-west-1", projectClusters: ["hub", "preprod"] });
            assert.deepStrictEqual([config.argocd.local, config.argocd.projects, config.argocd.applicationSets], [false, [], []]);
        });

        it("optional keys left out plan with no example value in their place", async () => {
            const raw = merged(hubFixture(), {
                policy: { regulated: undefined },
                argocd: { projects: {}, applicationSets: {}, rbac: undefined },
                spokes: undefined,
                controller: undefined,
                imageRegistry: undefined,
            });
            const { run: planned, warned } = await run(raw, true);
            assert.deepStrictEqual(
                warned.filter((w) => w.includes("example")),
                [],
            );
            const texts = JSON.stringify(planned.resources.map((r) => r.inputs));
            assert.ok(!/(^|[^A-Za-z0-9])example([^A-Za-z0-9]|$)/i.test(texts), "a planned object carries an example value");
        });
    });
});
