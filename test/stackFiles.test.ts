import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import Ajv2020 from "ajv/dist/2020";
import * as YAML from "yaml";
import { EXAMPLE_DIGEST, EXAMPLE_SHA256, ExampleValue, exampleValues } from "../components/config/examples";
import { PROJECT } from "../components/config/reader";
import { REPO_ROOT, StackFile, configFromStackFile, fromConfigMap, listStacks, readStackFile } from "../tools/stackFile";
import { generatedFiles } from "../tools/docs/reference";
import { planWarned, projectKeys } from "./stackConfig";

/**
 * The shipped stack files are the platform's: it replaces their example values, deletes one and adds
 * its own. These tests are the only ones that read them, and they hold for whatever stack files the
 * project has: each is valid for the schema, plans, and every example value left in it is warned
 * about by the preview (once per key) and refused by `pulumi up`. Everything else is tested on the
 * fixtures under test/fixtures/stacks.
 */

const ajv = () => new Ajv2020({ allErrors: true, allowUnionTypes: true, strict: true });

/** The project-namespace keys of a stack file, as the program gets them. */
const rawOf = (file: StackFile): Record<string, unknown> =>
    Object.fromEntries(Object.entries(projectKeys(file.config)).map(([k, v]) => [k, /^[{[]/.test(String(v)) ? JSON.parse(String(v)) : v]));

/**
 * The stack file with each example replaced as a platform would: the word `example` by a name of its
 * own, the example checksum and digest by real-looking ones. Every rule the example met, the
 * replacement meets.
 */
function replaced(stack: string, root: string): StackFile {
    const text = fs
        .readFileSync(path.join(root, `Pulumi.${stack}.yaml`), "utf8")
        .replaceAll(EXAMPLE_DIGEST, `sha256:${"5a".repeat(32)}`)
        .replaceAll(EXAMPLE_SHA256, "5b".repeat(32))
        .replace(/(^|[^A-Za-z0-9])example(?=[^A-Za-z0-9]|$)/gim, "$1acme");
    const doc = YAML.parse(text) as { config: Record<string, unknown> };
    return { ...fromConfigMap(stack, doc.config), projectStacks: readStackFile(stack, root).projectStacks };
}

// The project's stack files, and a different platform's (test/fixtures/platforms/northwind: a hub
// with an ingest Gateway and no tenants, a spoke with a listener of its own and the hub's ArgoCD, a
// staging spoke with no prod, the platform's own tier names): every documented topology plans.
for (const root of [REPO_ROOT, path.join(__dirname, "fixtures", "platforms", "northwind")])
    describe(`stack files of ${path.relative(REPO_ROOT, root) || "the project"}`, () => {
        const stacks = listStacks(root);
        const validate = ajv().compile(JSON.parse(generatedFiles()["schema/stack.schema.json"]) as object);

        it("there is at least one, with a hub", () => {
            assert.ok(stacks.length > 0, "no Pulumi.<stack>.yaml in the project");
            assert.ok(
                stacks.some((s) => configFromStackFile(readStackFile(s, root)).cluster.role === "hub"),
                "no hub among the stack files: a spoke reads its metrics through one",
            );
        });

        for (const stack of stacks) {
            describe(`Pulumi.${stack}.yaml`, () => {
                const file = () => readStackFile(stack, root);
                const examples = (): ExampleValue[] =>
                    exampleValues(
                        rawOf(file()),
                        file().secretKeys.map((k) => k.slice(PROJECT.length + 1)),
                    );

                it("is valid for the schema it names on its first line", () => {
                    const text = fs.readFileSync(path.join(root, `Pulumi.${stack}.yaml`), "utf8");
                    assert.match(text.split("\n")[0], /^# yaml-language-server: \$schema=\.\/schema\/stack\.schema\.json$/);
                    assert.ok(validate(YAML.parse(text, { merge: true })), JSON.stringify(validate.errors, null, 1));
                });

                it("plans, warning once per key that still holds an example value", async () => {
                    const { run, warned } = await planWarned(file(), true);
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
                    if (found.length === 0) return; // every example replaced: the next test plans the file under pulumi up
                    await assert.rejects(planWarned(file(), false), (e: Error) => {
                        for (const x of found) {
                            assert.ok(e.message.includes(`${PROJECT}:${x.key} = `), `${x.key} not named in:\n${e.message}`);
                        }
                        assert.match(e.message, /pulumi up refuses to apply/);
                        return true;
                    });
                });

                it("with every example replaced, plans no example value into any object and is not refused by pulumi up", async () => {
                    const own = replaced(stack, root);
                    assert.deepStrictEqual(exampleValues(rawOf(own)), []);
                    const { run, warned } = await planWarned(own, false);
                    assert.ok(run.resources.length > 10);
                    assert.ok(!warned.some((w) => w.includes("example")), warned.join("\n"));
                    // The offline plan's own stand-ins for what only `up` reads (offline-placeholder.*.invalid) are placeholders by design.
                    const planned = exampleValues({ planned: run.resources.map((r) => r.inputs) }).filter((e) => !e.example.includes("offline-placeholder"));
                    assert.deepStrictEqual(planned, []);
                });
            });
        }
    });
