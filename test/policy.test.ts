import * as assert from "assert";
import { AddonConfig, PolicyConfig, parseAddonConfig } from "../components/config";
import {
    CelPolicy,
    ClusterPolicy,
    GeneratingPolicy,
    KYVERNO_BACKGROUND_AGGREGATE_LABEL,
    KyvernoValue,
    LabelSelector,
    MESSAGES,
    MutatingPolicy,
    POLICY_NAMES,
    Template,
    ValidatingPolicy,
    celPolicies,
    clusterPolicies,
    kyvernoPolicies,
    pdbGenerationRules,
    ref,
    toCel,
    toKyverno,
    ZERO_SURGE,
} from "../components/policy";
import { findWildcards } from "../components/rollouts";
import { OfflineRun } from "../tools/offline";
import { byName, hubConfig, merged, planInline, transitiveDeps } from "./harness";

// ---------------------------------------------------------------------------------------------
// Samples: what a tenant applies.

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace: string }; spec: Record<string, unknown> };

const template = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: app, image: `registry.test.example/${app}:1` }] } });

function sampleRollout(namespace = "shop"): K8sObject {
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Rollout",
        metadata: { name: "checkout", namespace },
        spec: {
            replicas: 3,
            selector: { matchLabels: { app: "checkout" } },
            template: template("checkout"),
            strategy: {
                canary: {
                    maxSurge: 1,
                    stableService: "checkout-stable",
                    canaryService: "checkout-canary",
                    trafficRouting: { plugins: { "argoproj-labs/gatewayAPI": { httpRoute: "checkout", namespace } } },
                },
            },
        },
    };
}

function sampleDeployment(namespace = "shop"): K8sObject {
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace },
        spec: { replicas: 2, selector: { matchLabels: { app: "web", tier: "front" } }, template: template("web") },
    };
}

interface Admission {
    object: K8sObject;
    namespaceLabels: Record<string, string>;
    operation: "CREATE" | "UPDATE";
}

const PROD = { "platform.example/tier": "prod" };
const admit = (object: K8sObject, namespaceLabels: Record<string, string> = {}): Admission => ({ object, namespaceLabels, operation: "CREATE" });

// ---------------------------------------------------------------------------------------------
// A small matcher for both APIs' match blocks, evaluated on the generated bodies.

const PLURALS: Record<string, string> = { Rollout: "rollouts", Deployment: "deployments", StatefulSet: "statefulsets" };

function selects(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
    if (!selector) {
        return true;
    }
    const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
    const byExpressions = (selector.matchExpressions ?? []).every((e) => {
        switch (e.operator) {
            case "In":
                return k8sHas(labels, e.key) && (e.values ?? []).includes(labels[e.key]);
            case "NotIn":
                return !k8sHas(labels, e.key) || !(e.values ?? []).includes(labels[e.key]);
            case "Exists":
                return k8sHas(labels, e.key);
            case "DoesNotExist":
                return !k8sHas(labels, e.key);
        }
    });
    return byLabels && byExpressions;
}
const k8sHas = (labels: Record<string, string>, key: string) => Object.prototype.hasOwnProperty.call(labels, key);

/** Namespaces carry their name as a label (Kubernetes sets kubernetes.io/metadata.name). */
const nsLabels = (a: Admission) => ({ ...a.namespaceLabels, "kubernetes.io/metadata.name": a.object.metadata.namespace });

function celApplies(p: CelPolicy, a: Admission): boolean {
    const [group, version] = a.object.apiVersion.includes("/") ? a.object.apiVersion.split("/") : ["", a.object.apiVersion];
    const mc = p.spec.matchConstraints;
    const byResource = mc.resourceRules.some(
        (r) => r.apiGroups.includes(group) && r.apiVersions.includes(version) && r.resources.includes(PLURALS[a.object.kind]) && r.operations.includes(a.operation),
    );
    return byResource && selects(mc.namespaceSelector, nsLabels(a));
}

function clusterRulesApplying(p: ClusterPolicy, a: Admission): string[] {
    const gvk = `${a.object.apiVersion}/${a.object.kind}`;
    return p.spec.rules
        .filter((rule) =>
            rule.match.any.some(
                ({ resources: r }) => r.kinds.includes(gvk) && (r.operations === undefined || r.operations.includes(a.operation)) && selects(r.namespaceSelector, nsLabels(a)),
            ),
        )
        .filter((rule) => !(rule.exclude?.any ?? []).some(({ resources }) => resources.namespaces.includes(a.object.metadata.namespace)))
        .map((rule) => rule.name);
}

const celApplying = (cfg: PolicyConfig, a: Admission) =>
    celPolicies(cfg)
        .filter((p) => celApplies(p, a))
        .map((p) => p.metadata.name)
        .sort();
const clusterApplying = (cfg: PolicyConfig, a: Admission) =>
    clusterPolicies(cfg)
        .filter((p) => clusterRulesApplying(p, a).length > 0)
        .map((p) => p.metadata.name)
        .sort();

// ---------------------------------------------------------------------------------------------
// Evaluators for what the policies write: the CEL literal subset `toCel` renders, and Kyverno's
// variable substitution of plain `request.object` paths.

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

function at(root: unknown, path: string): Json {
    const value = path.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], root);
    if (value === undefined) {
        throw new Error(`no value at ${path}`);
    }
    return value as Json;
}

/** Evaluates literals, `dyn()`, maps, lists, `object.<path>` and string `+` against `object`. */
function evalCel(expression: string, object: unknown): Json {
    const tokens = expression.match(/"(?:[^"\\]|\\.)*"|-?[0-9]+|[A-Za-z_][A-Za-z0-9_.]*|[{}[\]():,+]/g) ?? [];
    let i = 0;
    const next = () => tokens[i++];
    const expect = (t: string) => assert.strictEqual(next(), t, `in ${expression}`);
    const term = (): Json => {
        const t = next();
        if (t === "{") {
            const out: Record<string, Json> = {};
            while (tokens[i] !== "}") {
                const key = JSON.parse(next()) as string;
                expect(":");
                out[key] = expr();
                if (tokens[i] === ",") {
                    next();
                }
            }
            expect("}");
            return out;
        }
        if (t === "[") {
            const out: Json[] = [];
            while (tokens[i] !== "]") {
                out.push(expr());
                if (tokens[i] === ",") {
                    next();
                }
            }
            expect("]");
            return out;
        }
        if (t === "dyn") {
            expect("(");
            const v = expr();
            expect(")");
            return v;
        }
        if (t.startsWith('"')) {
            return JSON.parse(t) as string;
        }
        if (/^-?[0-9]+$/.test(t)) {
            return Number(t);
        }
        if (t === "true" || t === "false") {
            return t === "true";
        }
        assert.ok(t.startsWith("object."), `unsupported token ${t} in ${expression}`);
        return at(object, t.slice("object.".length));
    };
    const expr = (): Json => {
        let v = term();
        while (tokens[i] === "+") {
            next();
            v = `${v as string}${term() as string}`;
        }
        return v;
    };
    const result = expr();
    assert.strictEqual(i, tokens.length, `trailing tokens in ${expression}`);
    return result;
}

/** Kyverno variable substitution for `{{ request.object.<path> }}`: whole-value or in text. */
function substitute(value: KyvernoValue, object: unknown): Json {
    if (typeof value === "string") {
        const whole = /^\{\{ request\.object\.([A-Za-z0-9_.]+) \}\}$/.exec(value);
        if (whole) {
            return at(object, whole[1]);
        }
        return value.replace(/\{\{ (.*?) \}\}/g, (_, e: string) => {
            assert.ok(e.startsWith("request.object."), `unsupported variable ${e}`);
            return String(at(object, e.slice("request.object.".length)));
        });
    }
    if (Array.isArray(value)) {
        return value.map((v) => substitute(v, object));
    }
    if (value !== null && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, object)]));
    }
    return value;
}

/** The PodDisruptionBudget each API writes for `object`. */
function celPdb(cfg: PolicyConfig, object: K8sObject): Json {
    const p = celPolicies(cfg).find((x): x is GeneratingPolicy => x.kind === "GeneratingPolicy")!;
    const list = evalCel(p.spec.variables.find((v) => v.name === "pdb")!.expression, object) as Json[];
    assert.strictEqual(list.length, 1);
    return list[0];
}

function clusterPdb(cfg: PolicyConfig, object: K8sObject): Json {
    const p = clusterPolicies(cfg).find((x) => x.metadata.name === POLICY_NAMES.pdb)!;
    const rule = p.spec.rules.find((r) => r.name === `pdb-${object.kind.toLowerCase()}`)!;
    const g = rule.generate!;
    const data = substitute(g.data, object) as { spec: Json };
    return { apiVersion: g.apiVersion, kind: g.kind, metadata: { name: substitute(g.name, object), namespace: substitute(g.namespace, object) }, spec: data.spec };
}

/** The topology spread constraints each API adds to `object`'s pod template. */
function celSpread(cfg: PolicyConfig, object: K8sObject): Json {
    const p = celPolicies(cfg).find((x): x is MutatingPolicy => x.kind === "MutatingPolicy" && celApplies(x, admit(object)))!;
    const m = /^\[JSONPatch\{op: "add", path: "\/spec\/template\/spec\/topologySpreadConstraints", value: (.*)\}\]$/.exec(p.spec.mutations[0].jsonPatch.expression);
    assert.ok(m, p.spec.mutations[0].jsonPatch.expression);
    return evalCel(m[1], object);
}

function clusterSpread(cfg: PolicyConfig, object: K8sObject): Json {
    const p = clusterPolicies(cfg).find((x) => x.metadata.name === POLICY_NAMES.spread)!;
    const rule = p.spec.rules.find((r) => r.name === `spread-${object.kind.toLowerCase()}`)!;
    const patch = substitute(rule.mutate!.patchStrategicMerge, object) as { spec: { template: { spec: Record<string, Json> } } };
    // `+(...)`: Kyverno's add-if-absent anchor; the constraints are its value.
    return patch.spec.template.spec["+(topologySpreadConstraints)"];
}

// ---------------------------------------------------------------------------------------------

function config(patch: Record<string, unknown> = {}): AddonConfig {
    const { "aws:region": _region, ...rest } = merged(hubConfig(), patch);
    return parseAddonConfig("hub", rest, { awsRegion: "eu-west-1" });
}
const policyConfig = (patch: Record<string, unknown> = {}) => config({ policy: patch }).policy;

const ENGINES = [
    { label: "policies.kyverno.io/v1", applying: celApplying, pdb: celPdb, spread: celSpread },
    { label: "kyverno.io/v1 ClusterPolicy", applying: clusterApplying, pdb: clusterPdb, spread: clusterSpread },
] as const;

describe("policy stage", () => {
    describe("object templates", () => {
        it("render a CEL literal whose map values are dyn(), so mixed value types type-check", () => {
            const t: Template = { a: 1, b: "x", c: [ref("spec.selector")], d: ref("metadata.name", "-pdb") };
            assert.strictEqual(toCel(t), '{"a": dyn(1), "b": dyn("x"), "c": dyn([object.spec.selector]), "d": dyn(object.metadata.name + "-pdb")}');
        });
        it("render Kyverno data with whole-value variables, so a selector is copied as an object", () => {
            assert.deepStrictEqual(toKyverno({ s: ref("spec.selector"), n: ref("metadata.name", "-pdb"), k: 1 }), {
                s: "{{ request.object.spec.selector }}",
                n: "{{ request.object.metadata.name }}-pdb",
                k: 1,
            });
        });
        it("refuse a path that is not a plain field path", () => {
            assert.throws(() => toCel(ref("spec.selector) || true || (x")), /not a field path/);
        });
    });

    for (const engine of ENGINES) {
        describe(`in ${engine.label}`, () => {
            const cfg = policyConfig(engine.label.startsWith("kyverno.io") ? { kyvernoApi: "kyverno.io/v1" } : {});

            it("applies every availability policy and both Rollout guards to a Rollout in a prod namespace", () => {
                assert.deepStrictEqual(engine.applying(cfg, admit(sampleRollout(), PROD)), [
                    POLICY_NAMES.defaultNamespace,
                    POLICY_NAMES.pdb,
                    ...(engine.label.startsWith("kyverno.io") ? [POLICY_NAMES.spread] : [`${POLICY_NAMES.spread}-rollout`]),
                    POLICY_NAMES.maxSurge,
                    POLICY_NAMES.replicaFloor,
                    POLICY_NAMES.routeNamespace,
                ].sort());
            });

            it("applies the availability policies but no Rollout guard to a Deployment in a prod namespace", () => {
                assert.deepStrictEqual(engine.applying(cfg, admit(sampleDeployment(), PROD)), [
                    POLICY_NAMES.defaultNamespace,
                    POLICY_NAMES.pdb,
                    ...(engine.label.startsWith("kyverno.io") ? [POLICY_NAMES.spread] : [`${POLICY_NAMES.spread}-deployment`]),
                    POLICY_NAMES.replicaFloor,
                ].sort());
            });

            it("leaves the replica floor out of a namespace not labelled prod", () => {
                assert.ok(!engine.applying(cfg, admit(sampleRollout())).includes(POLICY_NAMES.replicaFloor));
                assert.ok(!engine.applying(cfg, admit(sampleDeployment(), { "platform.example/tier": "preprod" })).includes(POLICY_NAMES.replicaFloor));
            });

            it("applies nothing in an excluded namespace, and the default-namespace refusal in default", () => {
                assert.deepStrictEqual(engine.applying(cfg, admit(sampleRollout("kube-system"), PROD)), []);
                assert.ok(engine.applying(cfg, admit(sampleDeployment("default"))).includes(POLICY_NAMES.defaultNamespace));
            });

            it("generates a PodDisruptionBudget with an integer maxUnavailable selecting the workload's pods", () => {
                assert.deepStrictEqual(engine.pdb(cfg, sampleRollout()), {
                    apiVersion: "policy/v1",
                    kind: "PodDisruptionBudget",
                    metadata: { name: "checkout-pdb", namespace: "shop" },
                    spec: { maxUnavailable: 1, selector: { matchLabels: { app: "checkout" } } },
                });
                assert.deepStrictEqual(engine.pdb(policyConfig({ ...(engine.label.startsWith("kyverno.io") ? { kyvernoApi: "kyverno.io/v1" } : {}), pdbMaxUnavailable: 2, prodMinReplicas: 3 }), sampleDeployment()), {
                    apiVersion: "policy/v1",
                    kind: "PodDisruptionBudget",
                    metadata: { name: "web-pdb", namespace: "shop" },
                    spec: { maxUnavailable: 2, selector: { matchLabels: { app: "web", tier: "front" } } },
                });
            });

            it("spreads Rollout pods by rollouts-pod-template-hash and Deployment pods by pod-template-hash", () => {
                const expected = (object: K8sObject, hash?: string) =>
                    ["topology.kubernetes.io/zone", "kubernetes.io/hostname"].map((topologyKey) => ({
                        maxSkew: 1,
                        topologyKey,
                        whenUnsatisfiable: "ScheduleAnyway",
                        labelSelector: object.spec.selector as Json,
                        ...(hash ? { matchLabelKeys: [hash] } : {}),
                    }));
                assert.deepStrictEqual(engine.spread(cfg, sampleRollout()), expected(sampleRollout(), "rollouts-pod-template-hash"));
                assert.deepStrictEqual(engine.spread(cfg, sampleDeployment()), expected(sampleDeployment(), "pod-template-hash"));
                const sts: K8sObject = { ...sampleDeployment(), apiVersion: "apps/v1", kind: "StatefulSet" };
                assert.deepStrictEqual(engine.spread(cfg, sts), expected(sts));
            });
        });
    }

    describe("same behaviour in both APIs", () => {
        const cel = policyConfig();
        const legacy = policyConfig({ kyvernoApi: "kyverno.io/v1" });
        for (const [label, object] of [
            ["Rollout", sampleRollout()],
            ["Deployment", sampleDeployment()],
        ] as const) {
            it(`writes the same PodDisruptionBudget and spread constraints for a ${label}`, () => {
                assert.deepStrictEqual(celPdb(cel, object), clusterPdb(legacy, object));
                assert.deepStrictEqual(celSpread(cel, object), clusterSpread(legacy, object));
            });
        }

        it("refuses with the same messages and the same floor", () => {
            const cfg = policyConfig({ prodMinReplicas: 3 });
            const messages = (ps: (CelPolicy | ClusterPolicy)[]) =>
                ps
                    .flatMap((p) => (p.kind === "ValidatingPolicy" ? p.spec.validations.map((v) => v.message) : p.kind === "ClusterPolicy" ? p.spec.rules.map((r) => r.validate?.message) : []))
                    .filter((m): m is string => m !== undefined);
            const celMessages = new Set(messages(celPolicies(cfg)));
            assert.deepStrictEqual(celMessages, new Set(messages(clusterPolicies({ ...cfg, kyvernoApi: "kyverno.io/v1" }))));
            assert.ok(celMessages.has(MESSAGES.replicaFloor(3)));
            const floorCel = celPolicies(cfg).find((p): p is ValidatingPolicy => p.metadata.name === POLICY_NAMES.replicaFloor)!;
            assert.strictEqual(floorCel.spec.validations[0].expression, "(has(object.spec.replicas) ? object.spec.replicas : 1) >= 3");
            const floorCp = clusterPolicies(cfg).find((p) => p.metadata.name === POLICY_NAMES.replicaFloor)!;
            assert.ok(floorCp.spec.rules.every((r) => r.validate?.deny.conditions.any[0].operator === "LessThan" && r.validate.deny.conditions.any[0].value === 3));
        });

        it("enforce or only audit, as configured", () => {
            const audit = policyConfig({ validationAction: "Audit" });
            for (const p of celPolicies(audit).filter((x): x is ValidatingPolicy => x.kind === "ValidatingPolicy")) {
                assert.deepStrictEqual(p.spec.validationActions, ["Audit", "Warn"]);
            }
            for (const p of clusterPolicies(audit).filter((x) => x.spec.rules.some((r) => r.validate))) {
                assert.strictEqual(p.spec.validationFailureAction, "Audit");
                assert.ok(p.spec.rules.every((r) => r.validate?.failureAction === "Audit"));
            }
            assert.ok(celPolicies(cel).filter((x): x is ValidatingPolicy => x.kind === "ValidatingPolicy").every((p) => p.spec.validationActions.join() === "Deny"));
        });
    });

    describe("guards and conditions", () => {
        const cel = policyConfig();
        const legacy = policyConfig({ kyvernoApi: "kyverno.io/v1" });

        it("skips a budget when another PodDisruptionBudget already selects the same pods, but not its own", () => {
            const gen = celPolicies(cel).find((x): x is GeneratingPolicy => x.kind === "GeneratingPolicy")!;
            const covered = gen.spec.variables.find((v) => v.name === "coveredElsewhere")!.expression;
            assert.match(covered, /^resource\.List\("policy\/v1", "poddisruptionbudgets", object\.metadata\.namespace\)\.items\.exists\(p, /);
            assert.match(covered, /p\.metadata\.name != variables\.pdbName/);
            assert.match(covered, /dyn\(p\.spec\.selector\.matchLabels\) == dyn\(object\.spec\.selector\.matchLabels\)/);
            assert.strictEqual(gen.spec.generate[0].expression, "generator.Apply(object.metadata.namespace, variables.coveredElsewhere ? [] : variables.pdb)");
            assert.strictEqual(evalCel(gen.spec.variables.find((v) => v.name === "pdbName")!.expression, sampleRollout()), "checkout-pdb");
            assert.deepStrictEqual(gen.spec.evaluation, { synchronize: { enabled: true }, generateExisting: { enabled: true } });

            const cp = clusterPolicies(legacy).find((p) => p.metadata.name === POLICY_NAMES.pdb)!;
            for (const rule of cp.spec.rules) {
                assert.strictEqual(rule.context?.[0].apiCall.urlPath, "/apis/policy/v1/namespaces/{{ request.object.metadata.namespace }}/poddisruptionbudgets");
                assert.match(rule.context?.[0].apiCall.jmesPath ?? "", /^items\[\?metadata\.name != '\{\{ request\.object\.metadata\.name \}\}-pdb'\]\.spec\.selector\.matchLabels/);
                assert.deepStrictEqual(rule.preconditions?.all[1], { key: "{{ to_string(request.object.spec.selector.matchLabels) }}", operator: "AnyNotIn", value: "{{ otherPdbSelectors }}" });
                assert.strictEqual(rule.generate?.synchronize, true);
            }
            assert.strictEqual(cp.spec.generateExisting, true);
        });

        it("adds spread constraints only to a pod template that has none, and never to existing workloads", () => {
            for (const p of celPolicies(cel).filter((x): x is MutatingPolicy => x.kind === "MutatingPolicy")) {
                assert.deepStrictEqual(
                    p.spec.matchConditions.map((c) => c.expression),
                    ["has(object.spec.template) && has(object.spec.template.spec)", "!(has(object.spec.template) && has(object.spec.template.spec) && has(object.spec.template.spec.topologySpreadConstraints))"],
                );
                assert.strictEqual(p.spec.evaluation.mutateExisting.enabled, false);
            }
            const cp = clusterPolicies(legacy).find((p) => p.metadata.name === POLICY_NAMES.spread)!;
            for (const r of cp.spec.rules) {
                assert.deepStrictEqual(Object.keys((r.mutate?.patchStrategicMerge as { spec: { template: { spec: object } } }).spec.template.spec), ["+(topologySpreadConstraints)"]);
            }
        });

        it("checks the gatewayAPI plugin's namespace under the plugin's exact name, in both APIs", () => {
            const v = celPolicies(cel).find((p): p is ValidatingPolicy => p.metadata.name === POLICY_NAMES.routeNamespace)!;
            assert.match(v.spec.variables![0].expression, /plugins\["argoproj-labs\/gatewayAPI"\] : dyn\(\{\}\)$/);
            assert.strictEqual(v.spec.validations[0].expression, '!("namespace" in variables.gatewayApi) || variables.gatewayApi["namespace"] == "" || variables.gatewayApi["namespace"] == object.metadata.namespace');
            const cp = clusterPolicies(legacy).find((p) => p.metadata.name === POLICY_NAMES.routeNamespace)!;
            assert.deepStrictEqual(cp.spec.rules[0].validate?.deny.conditions.any[0], {
                key: '{{ request.object.spec.strategy.canary.trafficRouting.plugins."argoproj-labs/gatewayAPI".namespace || request.object.metadata.namespace }}',
                operator: "NotEquals",
                value: "{{ request.object.metadata.namespace }}",
            });
        });

        it("refuses maxSurge 0 written as a number, a string or a percentage, in both APIs", () => {
            const v = celPolicies(cel).find((p): p is ValidatingPolicy => p.metadata.name === POLICY_NAMES.maxSurge)!;
            assert.match(v.spec.validations[0].expression, /!string\(object\.spec\.strategy\.canary\.maxSurge\)\.matches\("\^0\+%\?\$"\)$/);
            const zero = new RegExp(ZERO_SURGE);
            assert.ok(["0", "0%", "00%"].every((s) => zero.test(s)) && !["1", "10%", "25%"].some((s) => zero.test(s)));
            const cp = clusterPolicies(legacy).find((p) => p.metadata.name === POLICY_NAMES.maxSurge)!;
            assert.strictEqual(cp.spec.rules[0].validate?.deny.conditions.any[0].key, "{{ regex_match('^0+%?$', to_string(request.object.spec.strategy.canary.maxSurge || '25%')) }}");
        });

        it("writes Rollout in its own ClusterPolicy rule, named by GVK, never through autogen (Kyverno #7446)", () => {
            for (const p of clusterPolicies(legacy)) {
                for (const r of p.spec.rules) {
                    assert.strictEqual(r.match.any.length, 1);
                    assert.strictEqual(r.match.any[0].resources.kinds.length, 1, `${p.metadata.name}/${r.name} mixes kinds`);
                }
                assert.ok(p.spec.rules.some((r) => r.match.any[0].resources.kinds[0] === "argoproj.io/v1alpha1/Rollout"), `${p.metadata.name} has no Rollout rule`);
            }
        });
    });

    describe("declared resources", () => {
        let run: OfflineRun;
        let legacy: OfflineRun;
        before(async () => {
            run = await planInline(hubConfig(), { stack: "hub" });
            legacy = await planInline(merged(hubConfig(), { policy: { kyvernoApi: "kyverno.io/v1" } }), { stack: "hub" });
        });

        const policiesOf = (r: OfflineRun) => r.resources.filter((x) => x.stage === "policy" && /^kubernetes:(policies\.)?kyverno\.io\//.test(x.type));

        it("declares the CEL policies by default and ClusterPolicies when switched, named explicitly", () => {
            assert.deepStrictEqual(policiesOf(run).map((p) => p.type).sort(), [
                "kubernetes:policies.kyverno.io/v1:GeneratingPolicy",
                ...Array(3).fill("kubernetes:policies.kyverno.io/v1:MutatingPolicy"),
                ...Array(4).fill("kubernetes:policies.kyverno.io/v1:ValidatingPolicy"),
            ]);
            assert.deepStrictEqual(
                policiesOf(legacy).map((p) => p.type),
                Array(6).fill("kubernetes:kyverno.io/v1:ClusterPolicy"),
            );
            for (const p of [...policiesOf(run), ...policiesOf(legacy)]) {
                const body = p.inputs as { metadata: { name: string } };
                assert.match(body.metadata.name, /^[a-z0-9-]+$/);
            }
            assert.deepStrictEqual(
                policiesOf(run).map((p) => (p.inputs as { metadata: { name: string } }).metadata.name).sort(),
                kyvernoPolicies(config().policy).map((p) => p.metadata.name).sort(),
            );
        });

        it("makes every policy wait for the Rollout CRDs and for the PDB generation RBAC", () => {
            const crds = byName(run, "rollouts-crds");
            const role = byName(run, "kyverno-pdb-generation");
            for (const p of [...policiesOf(run)]) {
                const deps = transitiveDeps(run, p.urn);
                assert.ok(deps.has(crds.urn), `${p.name} does not wait for the CRDs (Kyverno #7839)`);
                assert.ok(p.dependsOn.includes(role.urn), `${p.name} does not wait for the generation RBAC`);
            }
        });

        it("keeps the background controller's PDB RBAC: aggregated by label, no wildcard", () => {
            const role = byName(run, "kyverno-pdb-generation");
            const inputs = role.inputs as { metadata: { name: string; labels: Record<string, string> }; rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
            assert.strictEqual(inputs.metadata.labels[KYVERNO_BACKGROUND_AGGREGATE_LABEL], "true");
            assert.deepStrictEqual(inputs.rules, pdbGenerationRules());
            assert.ok(inputs.rules[0].verbs.includes("create") && inputs.rules[0].resources.includes("poddisruptionbudgets"));
            assert.deepStrictEqual(findWildcards(inputs.rules), []);
        });

        it("sends the generated body unchanged", () => {
            const gen = policiesOf(run).find((p) => p.type.endsWith(":GeneratingPolicy"))!;
            assert.deepStrictEqual(gen.inputs.spec, celPolicies(config().policy).find((p) => p.kind === "GeneratingPolicy")!.spec);
        });
    });
});
