import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import Ajv2020 from "ajv/dist/2020";
import * as YAML from "yaml";
import { Field, Fields, readField } from "../components/config/declare";
import { ConfigError, ConfigReader, PROJECT } from "../components/config/reader";
import { fieldSchema } from "../tools/docs/schema";
import { AddonConfig, STACK_FIELDS, TOP_LEVEL_KEYS, parseAddonConfig } from "../stacks/config";
import { EXAMPLE_STACK_FILE, exampleError, generatedFiles, rowsOf } from "../tools/docs/reference";
import { FIXTURE_STACKS } from "./harness";
import { Ambient, projectKeys } from "./stackConfig";

// The schema is checked with ajv, a JSON Schema validator editors' language servers agree with, against what the program's reader accepts.

const ROOT = path.resolve(__dirname, "..");

/** Every declared field, with its dotted key, nested ones included. */
function everyField(prefix: string, fields: Fields): { key: string; f: Field }[] {
    return Object.entries(fields).flatMap(([k, f]) => {
        const key = prefix ? `${prefix}.${k}` : k;
        const below =
            f.kind === "section"
                ? everyField(key, f.fields)
                : f.kind === "list"
                  ? everyField(`${key}[]`, f.items)
                  : f.kind === "map"
                    ? everyField(`${key}.<name>`, f.values)
                    : [];
        return [{ key, f }, ...below];
    });
}

const ajv = () => new Ajv2020({ allErrors: true, allowUnionTypes: true, strict: true });
const validate = ajv().compile(JSON.parse(generatedFiles()["schema/stack.schema.json"]) as object);
type File = { config: Record<string, unknown> };
/** A fixture stack file (test/fixtures/stacks), parsed. */
const stackFile = (name: string) => YAML.parse(fs.readFileSync(path.join(FIXTURE_STACKS, name), "utf8"), { merge: true }) as File;
/** `file` checked against the schema, then read by the program as `stack`'s. */
function readValid(file: File, stack = "hub", ambient: Ambient = {}): AddonConfig {
    assert.ok(validate(file), JSON.stringify(validate.errors, null, 1));
    return parseAddonConfig(stack, projectKeys(file.config), { awsRegion: "eu-west-1", ...ambient });
}

describe("configuration declarations", () => {
    const fields = everyField("", STACK_FIELDS);

    it("declare every top-level key the reader takes, and more than a hundred keys in all", () => {
        assert.deepStrictEqual(TOP_LEVEL_KEYS, Object.keys(STACK_FIELDS));
        assert.ok(fields.length > 100, `${fields.length} declared keys`);
    });

    it("give every field a one-line doc", () => {
        const undocumented = fields.filter(({ f }) => f.doc.trim().length < 8 || f.doc.includes("\n")).map(({ key }) => key);
        assert.deepStrictEqual(undocumented, []);
    });

    it("give no field a default its own rule refuses, nor its schema (custom fields included)", () => {
        const [refused, validator]: [string[], ReturnType<typeof ajv>] = [[], ajv()];
        for (const { key, f } of fields.filter(({ f }) => "default" in f && f.default !== undefined)) {
            if (!validator.validate(fieldSchema(f), f.default)) refused.push(`${key}: refused by its schema`);
            if (f.kind === "custom") continue;
            const r = new ConfigReader();
            const value = readField(r, key, { ...f, readBySection: false, when: undefined } as Field, f.default);
            if (r.problems.length > 0 || JSON.stringify(value) !== JSON.stringify(f.default)) {
                refused.push(`${key}: ${r.problems.map((p) => p.allowed).join("; ")}`);
            }
        }
        assert.deepStrictEqual(refused, []);
    });
});

describe("configuration reference and schema (npm run docs)", () => {
    it("docs/configuration.md and schema/stack.schema.json are what npm run docs renders", () => {
        for (const [rel, text] of Object.entries(generatedFiles())) {
            const file = path.join(ROOT, rel);
            assert.ok(fs.existsSync(file), `${rel} is missing: run npm run docs`);
            assert.ok(fs.readFileSync(file, "utf8") === text, `${rel} is out of date: run npm run docs`);
        }
    });

    it("has one table per top-level key, a row for every declared key, and the reader's own example error", () => {
        const md = generatedFiles()["docs/configuration.md"];
        for (const key of TOP_LEVEL_KEYS) {
            assert.ok(md.includes(`\n## ${key}\n`), `no section for ${key}`);
            for (const row of rowsOf(key, STACK_FIELDS[key] as Field)) {
                assert.ok(md.includes(`| \`${row.key}\` |`) || (STACK_FIELDS[key].kind === "section" && row.key === key), `no row for ${row.key}`);
            }
        }
        assert.match(exampleError(), /^stack "hub": invalid configuration \(3 problems\):/);
        assert.ok(md.includes(exampleError()));
        assert.ok(exampleError().includes("did you mean smokeTest?"));
    });

    it("the reference's example stack file is valid for the schema and for the program", () => {
        assert.strictEqual(readValid(YAML.parse(EXAMPLE_STACK_FILE) as File).spokes[0].tenant, "preprod");
    });
});

describe("stack file schema (schema/stack.schema.json)", () => {
    // The shipped stack files are checked against it in test/stackFiles.test.ts.
    it("accepts the fixtures, as the program does", () => {
        assert.strictEqual(readValid(stackFile("Pulumi.hub.yaml")).cluster.role, "hub");
        assert.strictEqual(readValid(stackFile("Pulumi.preprod.yaml"), "preprod").cluster.role, "spoke");
    });

    it("refuses a key the declarations do not have, at the top and nested, and a namespace that is not known", () => {
        const file = stackFile("Pulumi.hub.yaml");
        const undeclared: [string, unknown][] = [
            [`${PROJECT}:smokeTets`, { enabled: true }],
            [`${PROJECT}:controller`, { replicaz: 2 }],
            ["argo-rollouts-adon:cluster", {}],
        ];
        for (const [key, value] of undeclared) {
            assert.ok(!validate({ ...file, config: { ...file.config, [key]: value } }), `${key} accepted`);
        }
        // Pulumi's and the providers' namespaces stay open.
        assert.ok(validate({ ...file, config: { ...file.config, "kubernetes:enableServerSideApply": "true" } }), JSON.stringify(validate.errors));
    });

    it("refuses what the reader refuses on its own key, and the reader agrees", () => {
        const base = stackFile("Pulumi.hub.yaml");
        const cases: [string, string, unknown][] = [
            ["cluster", "role", "primary"],
            ["controller", "replicas", 9],
            ["analysis", "successRate", 0.2],
            ["plugin", "digest", "sha256:abc"],
            ["policy", "kyvernoApi", "kyverno.io/v2"],
            ["smokeTest", "enabled", "yes"],
        ];
        for (const [section, key, value] of cases) {
            const full = `${PROJECT}:${section}`;
            const file = { ...base, config: { ...base.config, [full]: { ...(base.config[full] as object), [key]: value } } };
            assert.ok(!(validate(file) as boolean), `schema accepted ${section}.${key} = ${JSON.stringify(value)}`);
            assert.throws(
                () => parseAddonConfig("hub", projectKeys(file.config), { awsRegion: "eu-west-1" }),
                (e: unknown) => e instanceof ConfigError && e.problems.some((p) => p.key === `${section}.${key}`),
                `reader accepted ${section}.${key}`,
            );
        }
    });

    it("wants a secret as Pulumi writes one (secure:), never a plaintext token", () => {
        const file = stackFile("Pulumi.hub.yaml");
        assert.ok(!validate({ ...file, config: { ...file.config, [`${PROJECT}:notificationsToken`]: "xoxb-plaintext" } }));
        assert.ok(validate({ ...file, config: { ...file.config, [`${PROJECT}:notificationsToken`]: { secure: "v1:abc" } } }), JSON.stringify(validate.errors));
    });
});

describe("docs/operations/add-a-spoke.md", () => {
    const page = fs.readFileSync(path.join(ROOT, "docs", "operations", "add-a-spoke.md"), "utf8");
    const blocks = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]);
    const spokeFile = () => YAML.parse(blocks.find((b) => b.startsWith("# yaml-language-server"))!) as File;
    /** The hub's spokes entries the page shows. */
    const entries = () =>
        (YAML.parse(blocks[0].replace(/^ {2}argo-rollouts-addon:spokes:/m, "spokes:")) as { spokes: { name: string; tenant: string }[] }).spokes;

    it("its new stack file is valid for the schema and for the program, as the hub's spoke entry names it", () => {
        const spoke = readValid(spokeFile(), "prod");
        const entry = entries().find((s) => s.name === "prod");
        assert.deepStrictEqual([entry?.name, entry?.tenant], [spoke.cluster.name, spoke.cluster.mimirTenant]);
        assert.strictEqual(spoke.cluster.role, "spoke");
        assert.strictEqual(spoke.mimir.readEndpoint?.kind, "stack");
    });

    it("its private-CA example is valid for the schema and the program once a real CA fills it", () => {
        const example = blocks.find((b) => b.includes("readCaBundle"));
        assert.ok(example, "the page shows no mimir.readCaBundle example");
        const ca = fs.readFileSync(path.join(ROOT, "test", "fixtures", "tls", "ca.crt"), "utf8");
        const body = ca
            .split("\n")
            .filter((l) => l && !l.startsWith("-----"))
            .map((l) => `      ${l}`)
            .join("\n");
        const fragment = YAML.parse(example.replace(/^ {6}\.\.\.$/m, body)) as Record<string, unknown>;
        const file = spokeFile();
        assert.strictEqual(readValid({ ...file, config: { ...file.config, ...fragment } }, "prod").mimir.readCaBundle, ca);
        // The schema refuses what the program refuses for its shape: a key in the bundle.
        const key = fs.readFileSync(path.join(ROOT, "test", "fixtures", "tls", "server.key"), "utf8");
        const mimir = { hubStack: "organization/argo-rollouts-addon/hub", readCaBundle: `${ca}${key}` };
        assert.ok(!validate({ ...file, config: { ...file.config, [`${PROJECT}:mimir`]: mimir } }));
    });

    it("its hub entry is valid in a hub's stack file", () => {
        const hub = stackFile("Pulumi.hub.yaml");
        assert.strictEqual(readValid({ ...hub, config: { ...hub.config, [`${PROJECT}:spokes`]: entries() } }).spokes.length, 2);
    });
});
