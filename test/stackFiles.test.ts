import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import Ajv2020 from "ajv/dist/2020";
import * as YAML from "yaml";
import { EXAMPLE_DIGEST, EXAMPLE_SHA256, ExampleValue, exampleValues, isExampleValue } from "../components/config/examples";
import { PROJECT } from "../components/config/reader";
import { OfflineRun, runOffline } from "../tools/offline";
import { REPO_ROOT, StackFile, configFromStackFile, fromConfigMap, listStacks, placeholderWorld, readStackFile } from "../tools/stackFile";
import { generatedFiles } from "../tools/docs/reference";
import { writeDeliveryComponents } from "../tools/delivery";

/**
 * The shipped stack files are the platform's: it replaces their example values, deletes one and adds
 * its own. These tests are the only ones that read them, and they hold for whatever stack files the
 * project has: each is valid for the schema, plans, and every example value left in it is warned
 * about by the preview (once per key) and refused by `pulumi up`. Everything else is tested on the
 * fixtures under test/fixtures/stacks.
 */

const ajv = () => new Ajv2020({ allErrors: true, allowUnionTypes: true, strict: true });

/** Every string the planned objects and outputs carry. */
function strings(v: unknown, out: string[] = []): string[] {
    if (typeof v === "string") {
        out.push(v);
    } else if (Array.isArray(v)) {
        v.forEach((x) => strings(x, out));
    } else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
            out.push(k);
            strings(x, out);
        }
    }
    return out;
}

/** Plans a stack file as preview (dry run) or as `pulumi up`, collecting what it warns. */
async function plan(file: StackFile, dryRun: boolean): Promise<{ run: OfflineRun; warned: string[] }> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { defineStack, forgetWarnings } = require("../stacks/program") as typeof import("../stacks/program");
    forgetWarnings();
    const warned: string[] = [];
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pulumi = require("@pulumi/pulumi") as typeof import("@pulumi/pulumi");
    const warn = pulumi.log.warn;
    pulumi.log.warn = (message: string) => {
        warned.push(message);
        return Promise.resolve();
    };
    try {
        const run = await runOffline({
            stack: file.stack,
            config: file.config,
            secretKeys: file.secretKeys,
            world: placeholderWorld(file),
            dryRun,
            program: () => defineStack(),
        });
        return { run, warned };
    } finally {
        pulumi.log.warn = warn;
    }
}

/** The project-namespace keys of a stack file, as the program gets them. */
function rawOf(file: StackFile): Record<string, unknown> {
    const prefix = `${PROJECT}:`;
    return Object.fromEntries(
        Object.entries(file.config)
            .filter(([k]) => k.startsWith(prefix))
            .map(([k, v]) => [k.slice(prefix.length), v.startsWith("{") || v.startsWith("[") ? JSON.parse(v) : v]),
    );
}

/**
 * The stack file with each example replaced as a platform would: the word `example` by a name of its
 * own, the example checksum and digest by real-looking ones. Every rule the example met, the
 * replacement meets.
 */
function replaced(stack: string): StackFile {
    const text = fs
        .readFileSync(path.join(REPO_ROOT, `Pulumi.${stack}.yaml`), "utf8")
        .replaceAll(EXAMPLE_DIGEST, `sha256:${"5a".repeat(32)}`)
        .replaceAll(EXAMPLE_SHA256, "5b".repeat(32))
        .replace(/(^|[^A-Za-z0-9])example(?=[^A-Za-z0-9]|$)/gim, "$1acme");
    const doc = YAML.parse(text) as { config: Record<string, unknown> };
    const file = fromConfigMap(stack, doc.config);
    const clusters = listStacks().map((s) =>
        String(
            (YAML.parse(fs.readFileSync(path.join(REPO_ROOT, `Pulumi.${s}.yaml`), "utf8")) as { config: Record<string, { name?: string }> }).config[
                `${PROJECT}:cluster`
            ]?.name,
        ),
    );
    return { ...file, projectClusters: clusters };
}

describe("shipped stack files", () => {
    const stacks = listStacks();
    const validate = ajv().compile(JSON.parse(generatedFiles()["schema/stack.schema.json"]) as object);

    it("there is at least one, with a hub", () => {
        assert.ok(stacks.length > 0, "no Pulumi.<stack>.yaml in the project");
        assert.ok(
            stacks.some((s) => configFromStackFile(readStackFile(s)).cluster.role === "hub"),
            "no hub among the stack files: a spoke reads its metrics through one",
        );
    });

    for (const stack of stacks) {
        describe(`Pulumi.${stack}.yaml`, () => {
            const file = () => readStackFile(stack);
            const examples = (): ExampleValue[] =>
                exampleValues(
                    rawOf(file()),
                    file().secretKeys.map((k) => k.slice(PROJECT.length + 1)),
                );

            it("is valid for the schema it names on its first line", () => {
                const text = fs.readFileSync(path.join(REPO_ROOT, `Pulumi.${stack}.yaml`), "utf8");
                assert.match(text.split("\n")[0], /^# yaml-language-server: \$schema=\.\/schema\/stack\.schema\.json$/);
                assert.ok(validate(YAML.parse(text, { merge: true })), JSON.stringify(validate.errors, null, 1));
            });

            it("renders its tier components (npm run delivery), every folder a kustomize Component", () => {
                const dir = fs.mkdtempSync(path.join(os.tmpdir(), `delivery-${stack}-`));
                try {
                    const written = writeDeliveryComponents(stack, REPO_ROOT, dir);
                    const components = [...new Set(written.filter((f) => f.includes("/")).map((f) => f.split("/")[0]))];
                    assert.ok(components.includes("prod-standard-canary"), components.join(", "));
                    for (const c of components) {
                        const k = YAML.parse(fs.readFileSync(path.join(dir, c, "kustomization.yaml"), "utf8")) as { apiVersion: string; kind: string };
                        assert.deepStrictEqual([k.apiVersion, k.kind], ["kustomize.config.k8s.io/v1alpha1", "Component"], c);
                    }
                    assert.ok(written.includes("README.md"));
                } finally {
                    fs.rmSync(dir, { recursive: true, force: true });
                }
            });

            it("plans, warning once per key that still holds an example value", async () => {
                const { run, warned } = await plan(file(), true);
                assert.ok(run.resources.length > 10, `${run.resources.length} resources`);
                const said = warned.filter((w) => w.includes("holds the example value"));
                assert.deepStrictEqual(
                    said.map((w) => /:([^ ]+) holds the example value/.exec(w)?.[1]),
                    examples().map((e) => e.key),
                    "one warning per key holding an example, in the stack file's order",
                );
            });

            it("is refused by pulumi up while any key holds an example value, naming each, before anything is declared", async () => {
                const found = examples();
                if (found.length === 0) {
                    // The platform has replaced every example: up is not refused for examples.
                    const { run } = await plan(file(), false);
                    assert.ok(run.resources.length > 10);
                    return;
                }
                await assert.rejects(plan(file(), false), (e: Error) => {
                    for (const x of found) {
                        assert.ok(e.message.includes(`${PROJECT}:${x.key} = `), `${x.key} not named in:\n${e.message}`);
                    }
                    assert.match(e.message, /pulumi up refuses to apply/);
                    return true;
                });
            });

            it("with every example replaced, plans no example value into any object and is not refused by pulumi up", async () => {
                const own = replaced(stack);
                assert.deepStrictEqual(exampleValues(rawOf(own)), []);
                const { run, warned } = await plan(own, false);
                assert.ok(run.resources.length > 10);
                assert.deepStrictEqual(
                    warned.filter((w) => w.includes("example")),
                    [],
                );
                const leftovers = strings(run.resources.map((r) => r.inputs)).filter(isExampleValue);
                assert.deepStrictEqual(leftovers, []);
            });
        });
    }
});
