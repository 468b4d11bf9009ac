import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { manifestResources, planStack } from "../tools/plan";
import { loadModel, PACKAGE_MODELS, validateObject, withoutSecrets } from "../tools/schemas";
import { readStackFile } from "../tools/stackFile";
import {
    AJV_OPTIONS,
    CacheOutcome,
    Check,
    CUSTOM_FORMATS,
    RESTATED_VERSION,
    cacheKey,
    checkWith,
    collectSchemas,
    compileStandalone,
    formatShape,
    keyInputs,
    loadStandalone,
    restatedAjv,
    restatedCheck,
    validatePackageOf,
} from "../tools/restatedValidate";
import { withChecksum, writeEntry } from "../tools/validatorCache";
import { FIXTURE_STACKS } from "./harness";

type Obj = Record<string, unknown>;

const keyOf = (o: Obj) => `${String(o.apiVersion)}/${String(o.kind)}`;
const modelFile = (key: string) => require.resolve(PACKAGE_MODELS[key]);

/** The package model's own verdict (the model of `key`): undefined, or the message its `validate()` throws. */
function packageVerdict(o: Obj, key = keyOf(o)): string | undefined {
    const Model = loadModel(key)!;
    try {
        new Model(o as never).validate();
        return undefined;
    } catch (e) {
        return (e as Error).message;
    }
}

/** A check's verdict on the object the model (of `key`) holds, as tools/schemas.ts runs it. */
const verdict = (check: Check, o: Obj, key = keyOf(o)) => check(new (loadModel(key)!)(o as never));

const tempDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

/** The kinds whose package validates through @kubernetes-models/validate 3.1.2. */
const RESTATED_KINDS = [
    "argoproj.io/v1alpha1/Rollout",
    "argoproj.io/v1alpha1/AnalysisTemplate",
    "argoproj.io/v1alpha1/ClusterAnalysisTemplate",
    "gateway.networking.k8s.io/v1/HTTPRoute",
    "gateway.networking.k8s.io/v1beta1/ReferenceGrant",
];

describe("schema validation through the restated @kubernetes-models/validate 3.1.2", function () {
    this.timeout(60000);
    let dir: string;
    /**
     * Per kind: the check compiled into an empty cache, the one loaded back from its JavaScript, and
     * the one loaded with V8's code cache, written once the compiled check first ran.
     */
    const checks = new Map<string, { compiled: Check; cached: Check; codeCached: Check }>();
    const objects: Obj[] = [];

    before(async () => {
        dir = tempDir("validators-");
        for (const key of RESTATED_KINDS) {
            const outcomes: CacheOutcome[] = [];
            const Model = loadModel(key)!;
            const load = () => restatedCheck(Model, modelFile(key), dir, (o) => outcomes.push(o))!;
            const compiled = load();
            const cached = load();
            compiled({});
            const codeCached = load();
            assert.deepStrictEqual(outcomes, [{ hit: false }, { hit: true, codeCache: false }, { hit: true, codeCache: true }], key);
            checks.set(key, { compiled, cached, codeCached });
        }
        for (const stack of ["hub", "preprod"]) {
            const run = await planStack(readStackFile(stack, FIXTURE_STACKS));
            objects.push(...manifestResources(run).map((r) => withoutSecrets(r.inputs) as Obj));
        }
    });

    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("is used for exactly the kinds whose package validates through 3.1.2", () => {
        for (const key of Object.keys(PACKAGE_MODELS)) {
            const pkg = validatePackageOf(modelFile(key));
            assert.strictEqual(pkg.version === RESTATED_VERSION, RESTATED_KINDS.includes(key), `${key}: @kubernetes-models/validate ${pkg.version}`);
            const check = restatedCheck(loadModel(key)!, modelFile(key), dir);
            assert.strictEqual(check !== undefined, RESTATED_KINDS.includes(key), key);
        }
    });

    it("agrees with each package model's validate() on every object of the hub and preprod plans", () => {
        const restated = objects.filter((o) => checks.has(keyOf(o)));
        assert.ok(restated.length >= 12, `${restated.length} objects of restated kinds`);
        assert.ok(new Set(restated.map(keyOf)).size >= 2);
        for (const o of objects.filter((x) => Object.hasOwn(PACKAGE_MODELS, keyOf(x)))) {
            const expected = packageVerdict(o);
            const name = `${keyOf(o)} ${String((o.metadata as Obj).name)}`;
            assert.deepStrictEqual(validateObject(o).problems, expected === undefined ? [] : [expected], name);
            const c = checks.get(keyOf(o));
            if (c) {
                assert.strictEqual(verdict(c.compiled, o), expected, name);
                assert.strictEqual(verdict(c.cached, o), expected, name);
                assert.strictEqual(verdict(c.codeCached, o), expected, name);
            }
        }
    });

    /** A copy of `o` changed by `change`. */
    const mutated = (o: Obj, change: (x: any) => void): Obj => {
        const copy = structuredClone(o);
        change(copy);
        return copy;
    };
    const planned = (kind: string, name: string) => {
        const o = objects.find((x) => x.kind === kind && (x.metadata as Obj).name === name);
        assert.ok(o, `${kind} ${name} in the plans`);
        return o;
    };
    const rollout = (): Obj => ({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Rollout",
        metadata: { name: "shop", namespace: "shop" },
        spec: {
            replicas: 2,
            selector: { matchLabels: { app: "shop" } },
            template: { metadata: { labels: { app: "shop" } }, spec: { containers: [{ name: "shop", image: "registry.platform.test/shop:1", ports: [{ containerPort: 8080 }] }] } },
            strategy: { canary: { steps: [{ setWeight: 20 }, { pause: { duration: "1m" } }] } },
        },
    });
    const analysisTemplate = (): Obj => ({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "AnalysisTemplate",
        metadata: { name: "rate", namespace: "shop" },
        spec: { metrics: [{ name: "rate", provider: { prometheus: { address: "http://prometheus:9090", query: "up" } } }] },
    });
    const referenceGrant = (): Obj => ({
        apiVersion: "gateway.networking.k8s.io/v1beta1",
        kind: "ReferenceGrant",
        metadata: { name: "routes", namespace: "observability" },
        spec: { from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "gateway-system" }], to: [{ group: "", kind: "Service" }] },
    });

    /** [what, the model's kind, the object, the path the refusal names (undefined: accepted)]. */
    type Case = [string, string, Obj, string | undefined];
    /** A case of `base` changed by `change` (none: `base` itself), validated with `base`'s model. */
    const bad = (what: string, base: Obj, change: ((x: any) => void) | undefined, at: string | undefined): Case => [what, keyOf(base), change ? mutated(base, change) : base, at];
    const cases = (): Case[] => {
        const cat = planned("ClusterAnalysisTemplate", "argo-rollouts-addon-error-budget");
        const route = planned("HTTPRoute", "mimir-spoke-preprod-read");
        const job = { job: { spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "check", image: "curl", ports: [{ containerPort: 2 ** 40 }] }] } } } } };
        return [
            bad("a metric name of the wrong type", cat, (x) => (x.spec.metrics[0].name = 5), "/spec/metrics/0/name"),
            bad("a metric without its provider", cat, (x) => delete x.spec.metrics[0].provider, "/spec/metrics/0"),
            bad("a template without metrics", cat, (x) => delete x.spec.metrics, "/spec"),
            bad("metrics that are not a list", cat, (x) => (x.spec.metrics = {}), "/spec/metrics"),
            bad("a count neither number nor string (a nullable oneOf)", cat, (x) => (x.spec.metrics[0].count = true), "/spec/metrics/0/count"),
            bad("an interval that is a number", cat, (x) => (x.spec.metrics[0].interval = 300), "/spec/metrics/0/interval"),
            bad("a Prometheus query that is a number", cat, (x) => (x.spec.metrics[0].provider.prometheus.query = 1), "/spec/metrics/0/provider/prometheus/query"),
            bad("another apiVersion (enum)", cat, (x) => (x.apiVersion = "argoproj.io/v1"), "/apiVersion"),
            bad("a label value that is a number", cat, (x) => (x.metadata.labels.tier = 1), "/metadata/labels/tier"),
            bad("metadata that is a string (a nullable $ref)", cat, (x) => (x.metadata = "cat"), "/metadata"),
            bad("an argument without its name", cat, (x) => (x.spec.args[0] = { value: "x" }), "/spec/args/0"),
            bad("a dry-run entry without its metric", cat, (x) => (x.spec.dryRun = [{}]), "/spec/dryRun/0"),
            bad("a job's container port beyond int32 (format)", cat, (x) => (x.spec.metrics[0].provider = job), "/spec/metrics/0/provider/job/spec/template/spec/containers/0/ports/0/containerPort"),
            bad("null metadata (nullable)", cat, (x) => (x.metadata = null), undefined),
            bad("a field the schema does not name", cat, (x) => (x.spec.extra = { any: "thing" }), undefined),
            bad("a parent port beyond 65535 (maximum)", route, (x) => (x.spec.parentRefs[0].port = 70000), "/spec/parentRefs/0/port"),
            bad("an upper-case hostname (pattern)", route, (x) => (x.spec.hostnames[0] = "MIMIR.example"), "/spec/hostnames/0"),
            bad("an unknown path match type (enum)", route, (x) => (x.spec.rules[0].matches[0].path.type = "Glob"), "/spec/rules/0/matches/0/path/type"),
            bad("a negative backend weight (minimum)", route, (x) => (x.spec.rules[0].backendRefs[0].weight = -1), "/spec/rules/0/backendRefs/0/weight"),
            bad("a named backend port (type)", route, (x) => (x.spec.rules[0].backendRefs[0].port = "http"), "/spec/rules/0/backendRefs/0/port"),
            bad("a parent name of 300 characters (maxLength)", route, (x) => (x.spec.parentRefs[0].name = "g".repeat(300)), "/spec/parentRefs/0/name"),
            bad("33 parents (maxItems)", route, (x) => (x.spec.parentRefs = Array.from({ length: 33 }, () => x.spec.parentRefs[0])), "/spec/parentRefs"),
            bad("an unknown filter type (enum)", route, (x) => (x.spec.rules[0].filters[0].type = "Bogus"), "/spec/rules/0/filters/0/type"),
            bad("a request timeout in words (pattern)", route, (x) => (x.spec.rules[0].timeouts = { request: "5 minutes" }), "/spec/rules/0/timeouts/request"),
            bad("a valid Rollout", rollout(), undefined, undefined),
            bad("replicas that are a word", rollout(), (x) => (x.spec.replicas = "two"), "/spec/replicas"),
            bad("a canary weight that is a word", rollout(), (x) => (x.spec.strategy.canary.steps[0].setWeight = "x"), "/spec/strategy/canary/steps/0/setWeight"),
            bad("a Rollout container without its name", rollout(), (x) => delete x.spec.template.spec.containers[0].name, "/spec/template/spec/containers/0"),
            bad("a valid AnalysisTemplate", analysisTemplate(), undefined, undefined),
            bad("an AnalysisTemplate metric without a name", analysisTemplate(), (x) => delete x.spec.metrics[0].name, "/spec/metrics/0"),
            bad("a valid ReferenceGrant", referenceGrant(), undefined, undefined),
            bad("a ReferenceGrant without from", referenceGrant(), (x) => delete x.spec.from, "/spec"),
            bad("a ReferenceGrant target kind that is a number", referenceGrant(), (x) => (x.spec.to[0].kind = 7), "/spec/to/0/kind"),
        ];
    };

    it("agrees with the package model's validate() on broken objects, and names the same path", () => {
        const all = cases();
        assert.ok(all.filter(([, , , at]) => at !== undefined).length >= 20);
        for (const [what, key, o, at] of all) {
            const expected = packageVerdict(o, key);
            if (at === undefined) {
                assert.strictEqual(expected, undefined, `${what}: the package refuses it`);
            } else {
                assert.ok(expected?.includes(`data${at} `), `${what}: the package says ${String(expected)}`);
            }
            const c = checks.get(key)!;
            assert.strictEqual(verdict(c.compiled, o, key), expected, what);
            assert.strictEqual(verdict(c.cached, o, key), expected, what);
            assert.strictEqual(verdict(c.codeCached, o, key), expected, what);
            if (keyOf(o) === key) {
                assert.deepStrictEqual(validateObject(o).problems, expected === undefined ? [] : [expected], what);
            }
        }
    });

    it("sets ajv up as the package does: the same verdicts for every format it adds", () => {
        // A schema of each format, registered with the package's own ajv and compiled by the restated one.
        const pkg = validatePackageOf(modelFile("argoproj.io/v1alpha1/Rollout"));
        const formats = ["byte", "quantity", "string", "int32", "int64", "date-time", "uri", "duration", "idn-email", "iri"];
        const schema = { type: "object", properties: Object.fromEntries(formats.map((f) => [f, { format: f }])) };
        const id = "test.restated.formats";
        const own = require(pkg.main) as { register(id: string, s: unknown): void; validate(id: string, data: unknown): void };
        own.register(id, schema);
        const ajv = restatedAjv(pkg);
        const check = checkWith(loadStandalone(compileStandalone(pkg, { id, schemas: [[id, schema]] }), pkg, ajv.formats, "formats.js").validate, ajv);
        const values: Record<string, unknown[]> = {
            byte: ["aGVsbG8=", "not base64!", "abc"],
            quantity: ["100m", "1Gi", "1.5", "+1e3", "lots", "1 Gi"],
            string: ["x", ""],
            int32: [1, 2 ** 31, -(2 ** 31), 1.5],
            int64: [2 ** 40, 2 ** 64, 1.5],
            "date-time": ["2026-01-02T03:04:05Z", "yesterday"],
            uri: ["https://example.com/x", "not a uri"],
            duration: ["P1D", "PT5M", "5m"],
            "idn-email": ["ops@example.com", "ops"],
            iri: ["https://ex\u00e4mple.com/", "::"],
        };
        let refused = 0;
        for (const [format, list] of Object.entries(values)) {
            for (const value of list) {
                let expected: string | undefined;
                try {
                    own.validate(id, { [format]: value });
                } catch (e) {
                    expected = (e as Error).message;
                    refused++;
                }
                assert.strictEqual(check({ [format]: value }), expected, `${format} ${JSON.stringify(value)}`);
            }
        }
        assert.ok(refused >= 10, `${refused} refused`);
        assert.deepStrictEqual(Object.keys(CUSTOM_FORMATS), ["byte", "quantity", "string"]);
        assert.deepStrictEqual(AJV_OPTIONS, { strictTypes: false, allErrors: true, verbose: true });
    });

    describe("the cache", () => {
        const kindOf = (key: string) => {
            const Model = loadModel(key)!;
            const pkg = validatePackageOf(modelFile(key));
            return { pkg, kind: collectSchemas(Model, pkg)! };
        };

        it("collects a kind's schema and every schema it references, and leaves the package's register as it was", () => {
            const pkg = validatePackageOf(modelFile("argoproj.io/v1alpha1/ClusterAnalysisTemplate"));
            const register = pkg.exports.register;
            const kind = collectSchemas(loadModel("argoproj.io/v1alpha1/ClusterAnalysisTemplate")!, pkg)!;
            assert.strictEqual(kind.id, "argoproj.io.v1alpha1.ClusterAnalysisTemplate");
            assert.deepStrictEqual(kind.schemas.map(([id]) => id).sort(), [
                "argoproj.io.v1alpha1.ClusterAnalysisTemplate",
                "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
                "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
                "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
                "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
            ]);
            assert.strictEqual(pkg.exports.register, register);
        });

        it("keys a validator by everything that decides its code", () => {
            const { pkg, kind } = kindOf("argoproj.io/v1alpha1/ClusterAnalysisTemplate");
            const inputs = keyInputs(pkg, restatedAjv(pkg), kind);
            const key = cacheKey(inputs);
            assert.match(key, /^[0-9a-f]{64}$/);
            assert.strictEqual(cacheKey(keyInputs(pkg, restatedAjv(pkg), kindOf("argoproj.io/v1alpha1/ClusterAnalysisTemplate").kind)), key, "the same inputs, the same key");
            assert.strictEqual(inputs.restates, "@kubernetes-models/validate@3.1.2");
            assert.deepStrictEqual(Object.keys(inputs.versions), ["ajv", "ajv-formats", "ajv-formats-draft2019"]);
            assert.strictEqual(inputs.versions.ajv, (JSON.parse(fs.readFileSync(path.join(path.dirname(pkg.require.resolve("ajv")), "..", "package.json"), "utf8")) as { version: string }).version);
            /** `inputs` changed by `change`, and its key. */
            const changed = (change: (x: any) => void) => {
                const copy = structuredClone(inputs);
                change(copy);
                return cacheKey(copy);
            };
            const at = (id: string) => kind.schemas.findIndex(([i]) => i === id);
            const others = [
                changed((x) => (x.kind.schemas[at(kind.id)][1].properties.spec.properties.metrics.items.properties.name.type = "integer")),
                changed((x) => (x.kind.schemas[at("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")][1].properties.name.type = "integer")),
                changed((x) => x.kind.schemas.pop()),
                changed((x) => (x.versions.ajv = "8.99.0")),
                changed((x) => (x.versions["ajv-formats"] = "3.0.0")),
                changed((x) => (x.versions["ajv-formats-draft2019"] = "1.6.2")),
                changed((x) => (x.restates = "@kubernetes-models/validate@3.1.3")),
                changed((x) => (x.options = { ...x.options, allErrors: false })),
                changed((x) => x.formats.pop()),
                changed((x) => (x.layout += 1)),
            ];
            assert.strictEqual(new Set([key, ...others]).size, others.length + 1);
        });

        it("tells formats apart by what the generated code depends on", () => {
            assert.notDeepStrictEqual(formatShape(/^a$/), formatShape(/^b$/));
            assert.notDeepStrictEqual(formatShape({ type: "string", validate: /^a$/ }), formatShape({ type: "string", validate: () => true }));
            assert.notDeepStrictEqual(formatShape({ type: "string", validate: () => true }), formatShape({ type: "number", validate: () => true }));
            assert.notDeepStrictEqual(formatShape(true), formatShape(() => true));
        });

        it("ignores a cache file that is cut short, corrupted or does not load, and writes it anew", () => {
            const key = "argoproj.io/v1alpha1/ClusterAnalysisTemplate";
            const cacheDir = tempDir("validators-");
            try {
                const Model = loadModel(key)!;
                const outcomes: CacheOutcome[] = [];
                const load = () => restatedCheck(Model, modelFile(key), cacheDir, (o) => outcomes.push(o))!;
                const bad = mutated(planned("ClusterAnalysisTemplate", "argo-rollouts-addon-error-budget"), (x) => (x.spec.metrics[0].name = 5));
                assert.strictEqual(verdict(load(), bad), packageVerdict(bad));
                const files = fs.readdirSync(cacheDir).sort();
                assert.deepStrictEqual(files.map((f) => path.extname(f)), [".js", ".v8"]);
                const js = path.join(cacheDir, files[0]);
                const whole = fs.readFileSync(js);
                const broken = [
                    whole.subarray(0, whole.length / 2),
                    Buffer.from(whole.toString("utf8").replace("must be string", "must be strong")),
                    Buffer.alloc(0),
                    withChecksum('throw new Error("not a validator");'),
                    withChecksum("module.exports = 42;"),
                ];
                for (const bytes of broken) {
                    fs.writeFileSync(js, bytes);
                    outcomes.length = 0;
                    const c = load();
                    assert.deepStrictEqual(outcomes, [{ hit: false }], bytes.subarray(0, 80).toString());
                    assert.ok(fs.readFileSync(js).equals(whole), "written anew, whole");
                    assert.strictEqual(verdict(c, bad), packageVerdict(bad));
                }
                assert.deepStrictEqual(fs.readdirSync(cacheDir).sort(), files, "no temporary file left");
            } finally {
                fs.rmSync(cacheDir, { recursive: true, force: true });
            }
        });

        it("uses V8's code cache in a new process, and writes it anew when cut short or refused by V8", () => {
            // Each load in a process of its own: V8 reuses a script it compiled earlier in the same
            // process and then neither takes nor refuses the code cache it is given.
            const cacheDir = tempDir("validators-");
            const load = (): CacheOutcome[] => {
                const script = [
                    `const { restatedCheck } = require(${JSON.stringify(path.join(__dirname, "..", "tools", "restatedValidate"))});`,
                    `const file = require.resolve(${JSON.stringify(PACKAGE_MODELS["argoproj.io/v1alpha1/ClusterAnalysisTemplate"])});`,
                    "const { ClusterAnalysisTemplate } = require(file);",
                    "const outcomes = [];",
                    `const check = restatedCheck(ClusterAnalysisTemplate, file, ${JSON.stringify(cacheDir)}, (o) => outcomes.push(o));`,
                    'check(new ClusterAnalysisTemplate({ metadata: { name: "x" }, spec: { metrics: [] } }));',
                    "console.log(JSON.stringify(outcomes));",
                ].join("\n");
                const res = spawnSync(process.execPath, ["--require", "./tools/swc-register.js", "-e", script], { cwd: path.join(__dirname, ".."), encoding: "utf8" });
                assert.strictEqual(res.status, 0, res.stderr);
                return JSON.parse(res.stdout) as CacheOutcome[];
            };
            try {
                assert.deepStrictEqual(load(), [{ hit: false }]);
                assert.deepStrictEqual(load(), [{ hit: true, codeCache: true }]);
                const v8 = fs.readdirSync(cacheDir).map((f) => path.join(cacheDir, f)).find((f) => f.endsWith(".v8"))!;
                for (const bytes of [fs.readFileSync(v8).subarray(0, 1000), withChecksum(Buffer.alloc(4096, 7))]) {
                    fs.writeFileSync(v8, bytes);
                    assert.deepStrictEqual(load(), [{ hit: true, codeCache: false }], `${bytes.length} bytes`);
                    assert.deepStrictEqual(load(), [{ hit: true, codeCache: true }], "written anew");
                }
            } finally {
                fs.rmSync(cacheDir, { recursive: true, force: true });
            }
        });

        it("compiles in memory when the folder cannot be written", () => {
            // A folder under a regular file cannot be created, whoever runs the test.
            const parent = tempDir("validators-");
            try {
                const blocked = path.join(parent, "file", "validators");
                fs.writeFileSync(path.join(parent, "file"), "");
                assert.ok(writeEntry(blocked, "b".repeat(64), "x") instanceof Error);
                const key = "gateway.networking.k8s.io/v1/HTTPRoute";
                const outcomes: CacheOutcome[] = [];
                const check = restatedCheck(loadModel(key)!, modelFile(key), blocked, (o) => outcomes.push(o))!;
                assert.strictEqual(outcomes.length, 1);
                assert.ok(!outcomes[0].hit && outcomes[0].writeError, "the write error is reported");
                const route = planned("HTTPRoute", "mimir-spoke-preprod-read");
                assert.strictEqual(verdict(check, route), undefined);
                const bad = mutated(route, (x) => (x.spec.parentRefs[0].port = 70000));
                assert.strictEqual(verdict(check, bad), packageVerdict(bad));
            } finally {
                fs.rmSync(parent, { recursive: true, force: true });
            }
        });

    });
});
