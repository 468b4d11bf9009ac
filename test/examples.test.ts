import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { EXAMPLE_DIGEST, EXAMPLE_SHA256, exampleRefusal, exampleValues, isExampleValue } from "../components/config/examples";
import { NOT_SHOWN, PROJECT, Plain } from "../components/config/reader";
import { writeDeliveryComponents } from "../tools/delivery";
import { configFromStackFile, fromConfigMap } from "../tools/stackFile";
import { FIXTURE_STACKS, HUB_TEXT, TEST_SMOKE, merged } from "./harness";
import { planWarned, projectKeys } from "./stackConfig";

// Example values (components/config/examples.ts), tested on the fixtures.

/** The hub fixture's project keys, without the namespace (what parseAddonConfig reads). */
const hubFixture = () => projectKeys((YAML.parse(HUB_TEXT) as { config: Record<string, unknown> }).config);

/** Plans the hub with `config` as its stack file's `config:` section. */
const run = (config: Record<string, unknown>, dryRun: boolean) => planWarned(fromConfigMap("hub", { "aws:region": "eu-west-1", ...config }), dryRun);

describe("example values", () => {
    describe("exampleValues", () => {
        it("isExampleValue: the example domains, placeholder endpoints (.invalid), the word, the example digest in a reference; none in the fixtures", () => {
            // More, each in the key it is found in: 'each key a stack file or the docs exemplify' below; none in the fixtures, a test platform's own values.
            const yes = ["https://m.example.org/p", "https://m.hub.invalid/p", "Example Approvers", `r.platform.test/app@${EXAMPLE_DIGEST}`];
            const no = ["counterexamples", "examples-team", "exampled", "a.invalidated.test", `sha256:${"ab".repeat(32)}`];
            assert.deepStrictEqual([...yes, ...no].filter(isExampleValue), yes);
            for (const f of fs.readdirSync(FIXTURE_STACKS).filter((n) => n.endsWith(".yaml"))) {
                assert.deepStrictEqual(exampleValues((YAML.parse(fs.readFileSync(path.join(FIXTURE_STACKS, f), "utf8")) as { config: Plain }).config), [], f);
            }
        });

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

        it("finds an example under a secret key without showing it, and never shows a URL's user-info or query in the refusal", () => {
            const secret = exampleValues({ notifications: { webhookUrl: "https://hooks.example.com/x", token: "s3cret" } }, ["notifications"]);
            assert.deepStrictEqual(secret, [{ key: "notifications.webhookUrl", example: NOT_SHOWN }]);
            assert.match(exampleRefusal("hub", PROJECT, secret), /notifications\.webhookUrl = \[not shown\]$/);
            const message = exampleRefusal("hub", PROJECT, [{ key: "notifications.webhookUrl", example: "https://bot:s3cret@hooks.example.com/in?token=abc" }]);
            assert.ok(!message.includes("s3cret") && !message.includes("abc"), message);
            assert.match(message, /https:\/\/hooks\.example\.com\/in\?\[not shown\]/);
        });

        it("npm run delivery writes no component holding one: refused naming the key, nothing written", () => {
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "examples-"));
            fs.writeFileSync(
                `${dir}/Pulumi.hub.yaml`,
                `${HUB_TEXT}  ${PROJECT}:delivery: {prod: {standard: {previewGate: header, previewHeader: x-example}}}\n`,
            );
            const refused = () => writeDeliveryComponents("hub", dir, `${dir}/out`);
            assert.throws(
                refused,
                /^Error: stack "hub": npm run delivery writes nothing while .*\n {2}- argo-rollouts-addon:delivery\.prod\.standard\.previewHeader = "x-example"$/,
            );
            assert.ok(!fs.existsSync(`${dir}/out`));
            fs.rmSync(dir, { recursive: true, force: true });
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
            ["smokeTest.hostname", { smokeTest: { ...TEST_SMOKE, hostname: "rollouts-smoke.example.com" } }],
            ["smokeTest.image", { smokeTest: { ...TEST_SMOKE, image: `registry.platform.test/mirror/argoproj/rollouts-demo@${EXAMPLE_DIGEST}` } }],
            [
                "notifications.webhookUrl",
                { notifications: { service: "webhook", webhookUrl: "https://h.example.com/r" }, notificationsToken: { secure: "v1:c2VjcmV0" } },
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

        // A value only the platform knows has no default: left out, it is refused naming the key (test/config.test.ts,
        // "requires the cluster and gateway sections"; test/admission-config.test.ts, "a regulated section without
        // approvers" and "where ArgoCD runs"); an optional key left out puts no example in its place.
        it("pulumi up of the fixture, and of it with every optional key left out, is not refused and plans no example value", async () => {
            const optionalOut = { policy: { regulated: undefined }, argocd: { projects: {}, applicationSets: {}, rbac: undefined }, spokes: undefined };
            for (const raw of [hubFixture(), merged(hubFixture(), { ...optionalOut, controller: { namespaceLabels: undefined }, imageRegistry: undefined })]) {
                const { run: planned, warned } = await run(raw, false);
                assert.ok(planned.resources.length > 10);
                assert.ok(!warned.some((w) => w.includes("example")), warned.join("\n"));
                const found = exampleValues({ planned: planned.resources.map((r) => r.inputs) }).filter((e) => !e.example.includes("offline-placeholder"));
                assert.deepStrictEqual(found, []);
            }
        });
    });
});
