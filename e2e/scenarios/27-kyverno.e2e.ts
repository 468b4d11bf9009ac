/**
 * The real Kyverno decides the policy stage (ADR-056 D2, D3): the shipped spoke stack on a cluster
 * of its own with Kyverno running, in each Kyverno API and each `policy.availabilityPolicies` mode.
 * Kyverno reports every policy the stack can declare ready; the webhook configuration it writes
 * calls each policy for exactly its namespaces; a policy it cannot compile is refused and verify
 * fails on it; it decides the admission samples (engine-kyverno-cli) and generates the budgets
 * e2e/samples/admission.yaml names. docs/operations/e2e.md, "Kyverno", says which Kyverno runs and
 * what this does not prove.
 */
import assert from "assert";
import { isDeepStrictEqual } from "util";
import { world } from "../lib/context";
import type { KubeObject } from "../../tools/verify/cluster";
import { approvalBinding, approvalSides } from "../../components/policy/approvalBindings";
import { KyvernoProcs, WebhookConfiguration, resourceFilters, startKyverno } from "../lib/kyverno";
import { addonConfig } from "../lib/platform";
import { run, waitFor } from "../lib/procs";
import { PulumiEnv, failure } from "../lib/pulumi";
import { ConfigMap } from "../lib/stacks";
import { StackTarget, World, npmRun } from "../lib/world";
import { celPolicies, kyvernoPolicies } from "../../components/policy/kyverno";
import { LabelSelector, selects } from "../../tools/verify/selectors";
import { GENERATED_BY_POLICY } from "../../tools/verify/checks/kyverno";
import { MESSAGES, TIER_POLICY_NAMES, policyContext } from "../../components/policy";
import { stackStrategies } from "../../components/delivery/config";
import { componentPlan } from "../../components/delivery/kustomize";
import {
    AdmissionCase,
    SAMPLE_WRITER,
    SampleContext,
    TierSample,
    admissionSamples,
    createExisting,
    emittedRoutes,
    identities,
    judge,
    mergePatch,
    namespaceClasses,
    openNamespaces,
    sampleWriterBinding,
    sendCase,
} from "../lib/admission";
import * as path from "path";
import { CheckResult } from "../../tools/verify/report";
import type { AddonConfig } from "../../stacks/config";

const STACK = "preprod";
const SCENARIO_MS = 5 * 60_000;
const APIS = ["policies.kyverno.io/v1", "kyverno.io/v1"] as const;
type Api = (typeof APIS)[number];
type Mode = "own" | "complement";
/**
 * `hub`: the regulated identities also name a hub's ArgoCD (HUB_USER, HUB_GROUP); `variant`: stack
 * sections merged into the shipped ones (the samples' `variant`).
 */
type Setting = { api: Api; mode: Mode; hub?: boolean; variant?: Record<string, unknown> };
const HUB_USER = "argocd-hub";
const HUB_GROUP = "e2e:argocd-hub";

/** About how long this file runs beside another on 2 cores: orders the side-by-side run (e2e/lib/pool.ts). */
export const SECONDS = 750;

describe("kyverno", function () {
    this.timeout(SCENARIO_MS);
    let w: World;
    let env: PulumiEnv;
    let target: StackTarget;
    let kyverno: KyvernoProcs;
    let setting: Setting = { api: "policies.kyverno.io/v1", mode: "complement" };

    const patch =
        (s: Setting = setting) =>
        (config: ConfigMap) => {
            const key = "argo-rollouts-addon:policy";
            const policy = config[key] as Record<string, unknown>;
            // A hub's ArgoCD arrives with its cluster Secret's identity: a user name, or a group.
            const regulated = s.hub
                ? { regulated: { ...(policy.regulated as Record<string, unknown>), gitopsUsers: [HUB_USER], gitopsGroups: [HUB_GROUP] } }
                : {};
            config[key] = { ...policy, kyvernoApi: s.api, availabilityPolicies: s.mode, ...regulated };
            for (const [section, value] of Object.entries(s.variant ?? {})) {
                config[`argo-rollouts-addon:${section}`] = mergePatch(config[`argo-rollouts-addon:${section}`] ?? {}, value);
            }
            // No hub stack in this environment: the spoke names its read endpoint (no gate runs here).
            config["argo-rollouts-addon:mimir"] = { readEndpoint: "https://mimir-preprod.hub.platform.test/prometheus" };
        };

    /** The setting the stack was last brought up with: an up of the same setting changes nothing. */
    let applied: string | undefined;

    async function up(next: Setting): Promise<void> {
        if (applied === JSON.stringify(next)) {
            kyverno.check();
            return;
        }
        applied = undefined;
        setting = next;
        target = { ...target, config: w.stackConfig(STACK, target.cluster, patch()) };
        await w.initStack(env, target);
        const r = await env.pulumi(["up", "--yes", "--skip-preview", "--policy-pack", "policy-pack"], { stack: STACK });
        kyverno.check();
        assert.strictEqual(r.status, 0, `pulumi up with policy ${JSON.stringify(next)} failed:\n${failure(r)}`);
        applied = JSON.stringify(next);
    }

    function verify(): CheckResult[] {
        const absent = ["rollouts-controller", "argocd", "gateway-controller", "mimir"];
        const r = npmRun("verify", [
            "--stack",
            STACK,
            "--json",
            "--kubeconfig",
            target.cluster.kubeconfig,
            "--context",
            "e2e",
            "--config-dir",
            env.projectDir,
            ...absent.flatMap((c) => ["--without", c]),
        ]);
        try {
            return (JSON.parse(r.stdout) as { results: CheckResult[] }).results;
        } catch {
            assert.fail(`verify printed no JSON (exit ${r.status}):\n${failure(r)}`);
        }
    }

    /** What the admission samples run with on the cluster: the stack's config as last brought up, its namespaces named by `tag`. */
    const sampleContext = (cfg: AddonConfig, tag: string, rest: Pick<SampleContext, "samples" | "component">): SampleContext => ({
        kubectl: path.join(w.bin, "kubectl"),
        cluster: target.cluster,
        namespaces: namespaceClasses(cfg, tag),
        identities: identities(cfg),
        ...rest,
    });

    before(async function () {
        this.timeout(10 * 60_000);
        w = await world();
        env = w.pulumi("kyverno");
        target = await w.cluster("kyverno", STACK, patch());
        kyverno = await startKyverno(target.cluster, { bin: w.bin, dir: w.dir });
        await w.initStack(env, target);
    });

    after(async function () {
        if (kyverno) {
            await kyverno.stop();
        }
    });

    for (const api of APIS) {
        for (const mode of ["own", "complement"] as const) {
            it(`kyverno-ready (${api}, ${mode})`, async function () {
                await up({ api, mode });
                const cfg = addonConfig(STACK, target.config);
                const declared = kyvernoPolicies(cfg.policy, policyContext(cfg)).map((p) => p.metadata.name);
                let results: CheckResult[] = [];
                // Kyverno marks a policy ready once its webhook is configured: give it a few reconciles.
                await waitFor(
                    "Kyverno to report every policy ready",
                    90_000,
                    () => {
                        kyverno.check();
                        results = verify();
                        return results.find((c) => c.id === "kyverno.policies-ready")?.status === "PASS";
                    },
                    () =>
                        JSON.stringify(
                            results.find((c) => c.id === "kyverno.policies-ready"),
                            null,
                            2,
                        ),
                );
                const ready = results.find((c) => c.id === "kyverno.policies-ready")!;
                assert.ok(
                    declared.length > 0 && declared.every((n) => (ready.note ?? "").includes(n)),
                    `verify did not check every declared policy: ${ready.note}`,
                );
            });
        }
    }

    it("kyverno-ready (a policy Kyverno cannot compile)", async function () {
        await up({ api: "policies.kyverno.io/v1", mode: "complement" });
        const name = "require-canary-max-surge";
        const original = JSON.parse(target.cluster.kubectl(["get", "validatingpolicy", name, "-o", "json"])) as {
            metadata: Record<string, unknown>;
            spec: { validations: { expression: string }[] };
        };
        const broken = JSON.parse(JSON.stringify(original)) as typeof original;
        delete broken.metadata.resourceVersion;
        delete broken.metadata.managedFields;
        // An undeclared function: cel-go refuses it when Kyverno compiles the policy.
        broken.spec.validations[0].expression = "undeclaredFunction(object)";
        const res = run(path.join(w.bin, "kubectl"), [`--kubeconfig=${target.cluster.kubeconfig}`, "replace", "-f", "-"], { input: JSON.stringify(broken) });
        try {
            if (res.status !== 0) {
                // Kyverno's own policy webhook refused it: nothing broken reached the cluster.
                assert.match(res.stderr, /undeclared|compil/i, `the broken policy was refused, but not for its expression:\n${res.stderr}`);
                const live = JSON.parse(target.cluster.kubectl(["get", "validatingpolicy", name, "-o", "json"])) as typeof original;
                assert.strictEqual(live.spec.validations[0].expression, original.spec.validations[0].expression);
                return;
            }
            let results: CheckResult[] = [];
            await waitFor(
                "verify to fail the policy Kyverno cannot compile",
                90_000,
                () => {
                    kyverno.check();
                    results = verify();
                    const ready = results.find((c) => c.id === "kyverno.policies-ready");
                    return ready?.status === "FAIL" && JSON.stringify(ready.findings ?? []).includes(name);
                },
                () =>
                    JSON.stringify(
                        results.find((c) => c.id === "kyverno.policies-ready"),
                        null,
                        2,
                    ),
            );
        } finally {
            const restore = JSON.parse(JSON.stringify(original)) as typeof original;
            delete restore.metadata.resourceVersion;
            delete restore.metadata.managedFields;
            target.cluster.kubectl(["replace", "-f", "-"], JSON.stringify(restore));
        }
    });

    /**
     * Which of a set of namespaces each CEL policy is called for, read from the webhook
     * configurations Kyverno wrote: a webhook calls the policies named in its URL path, for the
     * namespaces its namespaceSelector matches (the API server's rule, evaluated here with the
     * same label-selector semantics verify uses).
     */
    function calledFor(names: readonly string[], namespaces: Record<string, Record<string, string>>): Map<string, string[]> {
        const hooks = [...kyverno.webhooks().validating, ...kyverno.webhooks().mutating].flatMap((c: WebhookConfiguration) => c.webhooks ?? []);
        const out = new Map<string, string[]>();
        for (const name of names) {
            const serving = hooks.filter((h) => (h.clientConfig.url ?? "").split("/").includes(name));
            const called = Object.entries(namespaces)
                .filter(([, labels]) => serving.some((h) => selects((h.namespaceSelector ?? {}) as LabelSelector, labels)))
                .map(([ns]) => ns);
            out.set(name, called);
        }
        return out;
    }

    for (const mode of ["own", "complement"] as const) {
        it(`kyverno-webhook-selectors (${mode})`, async function () {
            await up({ api: "policies.kyverno.io/v1", mode });
            const cfg = addonConfig(STACK, target.config);
            // The policies that select namespaces; the approval bindings' generator matches the regulated
            // Namespace objects themselves, by their labels (kyverno-generates-approval-bindings).
            const declared = celPolicies(cfg.policy, policyContext(cfg)).filter((p) => p.spec.matchConstraints.namespaceSelector !== undefined);
            // In complement mode the platform has policies of its own beside ours, with other selectors.
            const platformPolicy = {
                apiVersion: "policies.kyverno.io/v1",
                kind: "ValidatingPolicy",
                metadata: { name: "platform-require-team-label" },
                spec: {
                    validationActions: ["Audit"],
                    matchConstraints: {
                        resourceRules: [{ apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["deployments"] }],
                        namespaceSelector: { matchLabels: { "platform.test/team-owned": "true" } },
                    },
                    validations: [{ expression: "has(object.metadata.labels) && 'team' in object.metadata.labels", message: "a team label is required" }],
                },
            };
            if (mode === "complement") {
                target.cluster.kubectl(["apply", "--server-side", "--field-manager=platform-e2e", "-f", "-"], JSON.stringify(platformPolicy));
            }
            const namespaces: Record<string, Record<string, string>> = {
                default: { "kubernetes.io/metadata.name": "default" },
                "team-dev": { "kubernetes.io/metadata.name": "team-dev", "platform.test/tier": "dev" },
                "team-prod": { "kubernetes.io/metadata.name": "team-prod", "platform.test/tier": "prod" },
                "team-regulated": { "kubernetes.io/metadata.name": "team-regulated", "platform.test/tier": "prod", "platform.test/compliance": "regulated" },
                "team-owned": { "kubernetes.io/metadata.name": "team-owned", "platform.test/team-owned": "true" },
                "platform-tools": { "kubernetes.io/metadata.name": "platform-tools" },
            };
            const names = [...declared.map((p) => p.metadata.name), ...(mode === "complement" ? [platformPolicy.metadata.name] : [])];
            let called = new Map<string, string[]>();
            await waitFor(
                "Kyverno's webhooks for every policy",
                60_000,
                () => {
                    kyverno.check();
                    called = calledFor(names, namespaces);
                    return [...called.values()].every((c) => c.length > 0);
                },
                () => JSON.stringify(Object.fromEntries(called)),
            );
            const problems: string[] = [];
            const want = (selector: unknown) =>
                Object.entries(namespaces)
                    .filter(([, labels]) => selects(selector as LabelSelector, labels))
                    .map(([ns]) => ns);
            for (const p of declared) {
                const expected = want(p.spec.matchConstraints.namespaceSelector);
                if (JSON.stringify(called.get(p.metadata.name)) !== JSON.stringify(expected)) {
                    problems.push(`${p.metadata.name}: called for [${called.get(p.metadata.name)?.join(", ")}], its selector matches [${expected.join(", ")}]`);
                }
            }
            if (mode === "complement") {
                const expected = want(platformPolicy.spec.matchConstraints.namespaceSelector);
                if (JSON.stringify(called.get(platformPolicy.metadata.name)) !== JSON.stringify(expected)) {
                    problems.push(
                        `the platform's ${platformPolicy.metadata.name}: called for [${called.get(platformPolicy.metadata.name)?.join(", ")}], its selector matches [${expected.join(", ")}]`,
                    );
                }
                target.cluster.kubectl(["delete", "validatingpolicy", platformPolicy.metadata.name, "--ignore-not-found"]);
            }
            assert.deepStrictEqual(problems, [], `Kyverno does not call each policy for exactly its namespaces:\n${problems.join("\n")}`);
        });
    }

    /** The strategy of each tier component, by id, as the shipped stack renders it (a variant may offer fewer). */
    function shippedComponents(): (id: string) => unknown {
        // The shipped stack, whatever variant the scenario before left (the setting's API and mode change no component).
        const shipped = stackStrategies(addonConfig(STACK, w.stackConfig(STACK, target.cluster, patch({ api: setting.api, mode: setting.mode }))));
        return (id: string) => {
            const s = shipped.find((x) => x.id === id);
            assert.ok(s, `the stack renders no component ${id}`);
            return componentPlan(s).strategy;
        };
    }

    /**
     * The admission samples (e2e/samples/admission.yaml), decided by the real Kyverno in each API:
     * every case a server-side dry run as its identity, in a namespace of its class, beside the
     * objects the samples say exist; the answer (admitted, refused or warned, by which of this
     * stack's policies, and what a mutation added) must be the sample's. Then every HTTPRoute the
     * program can emit, judged by the API server against the Gateway API CRD's own rules. A
     * regulated namespace's own deletion must still remove its Rollouts.
     */
    it("engine-kyverno-cli", async function () {
        this.timeout(20 * 60_000);
        const samples = admissionSamples();
        const kubectl = path.join(w.bin, "kubectl");
        const problems: string[] = [];
        let judged = 0;
        // Kyverno's chart filters ReplicaSets out of admission; the platform drops those filters for
        // the regulated guard (docs/stages/policy.md), and so do the samples.
        const filters = resourceFilters(target.cluster);
        filters.dropReplicaSets();
        const component = shippedComponents();
        try {
            for (const api of APIS) {
                for (const variant of [false, true]) {
                    await up({ api, mode: "own", ...(variant ? { variant: samples.variant } : {}) });
                    const cfg = addonConfig(STACK, target.config);
                    const tag = `${api === "kyverno.io/v1" ? "cp" : "cel"}${variant ? "-variant" : ""}`;
                    const ctx = sampleContext(cfg, tag, { samples, component });
                    const close = openNamespaces(ctx);
                    // Kyverno reads namespaces, bindings and its configuration from its informers.
                    await new Promise((r) => setTimeout(r, 5_000));
                    kyverno.check();
                    try {
                        createExisting(ctx);
                        const cases = samples.cases.filter((c) => (c.setting === "variant") === variant);
                        const policies = kyvernoPolicies(cfg.policy, policyContext(cfg)).map((p) =>
                            p.metadata.name.replace(/-(deployment|statefulset|rollout)$/, ""),
                        );
                        for (let i = 0; i < cases.length; i += 8) {
                            const batch = cases.slice(i, i + 8);
                            const answers = await Promise.all(batch.map((c) => sendCase(ctx, c)));
                            batch.forEach((c, j) => {
                                const wrong = judge(c, api, answers[j], policies);
                                judged++;
                                if (wrong) {
                                    problems.push(`${tag}: ${c.name}: ${wrong}`);
                                }
                            });
                        }
                        kyverno.check();
                        if (!variant) {
                            // The namespace's own deletion removes its Rollouts: the guard lets the
                            // namespace controller through while the namespace is Terminating.
                            const regulated = ctx.namespaces.regulated.name;
                            target.cluster.kubectl(["delete", "namespace", regulated, "--wait=false"]);
                            await waitFor(
                                `namespace ${regulated} to be deleted with its Rollouts`,
                                90_000,
                                () => {
                                    kyverno.check();
                                    return run(kubectl, [`--kubeconfig=${target.cluster.kubeconfig}`, "get", "namespace", regulated]).status !== 0;
                                },
                                () => target.cluster.kubectl(["get", "rollouts", "-n", regulated, "-o", "name"]),
                            );
                        }
                    } finally {
                        close();
                    }
                }
            }
        } finally {
            filters.restore();
        }
        // Every HTTPRoute the program can emit is admitted by the API server (the CRD's schema and
        // CEL rules), and routes that break those rules are not, so that the check is not vacuous.
        const routes = emittedRoutes(addonConfig(STACK, target.config));
        const dryRun = (objects: unknown[]) =>
            run(kubectl, [`--kubeconfig=${target.cluster.kubeconfig}`, "create", "--dry-run=server", "-f", "-"], {
                input: JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }),
            });
        const admitted = routes.filter((r) => r.says === undefined);
        const all = dryRun(admitted.map((r) => r.object));
        judged += routes.length;
        if (all.status !== 0) {
            problems.push(`HTTPRoutes the program emits (${admitted.map((r) => r.source).join("; ")}): ${all.stderr.trim()}`);
        }
        for (const r of routes.filter((x) => x.says !== undefined)) {
            const res = dryRun([r.object]);
            if (res.status === 0 || !res.stderr.includes(r.says!)) {
                problems.push(`HTTPRoute ${r.source}: not refused saying "${r.says}": ${res.stderr.trim() || "admitted"}`);
            }
        }
        assert.deepStrictEqual(
            problems,
            [],
            `the real Kyverno and API server answer ${problems.length} of ${judged} samples otherwise:\n${problems.join("\n")}`,
        );
        assert.ok(judged > 250, `only ${judged} samples judged`);
    });

    /**
     * Tier admission's holes (ADR-056 D3; e2e/samples/admission.yaml `holes` and `conforming`),
     * decided by the real Kyverno in each API: every shape that would switch a prod gate or the
     * approval off is refused in a regulated namespace, naming its field; in a standard prod
     * namespace the standard rule answers as its action says: Audit admits it (created for real)
     * with a warning and an entry in Kyverno's admission report of that object, Enforce refuses it;
     * a regulated-only shape is not the standard rule's. Each class's own components and the app's
     * route are admitted in both, with no warning.
     */
    it("tier-admission-holes", async function () {
        this.timeout(20 * 60_000);
        const samples = admissionSamples();
        const component = shippedComponents();
        const problems: string[] = [];
        let judged = 0;
        for (const api of APIS) {
            await up({ api, mode: "own" });
            const cfg = addonConfig(STACK, target.config);
            const tag = `holes-${api === "kyverno.io/v1" ? "cp" : "cel"}`;
            const ctx = sampleContext(cfg, tag, { samples, component });
            const close = openNamespaces(ctx);
            const policies = kyvernoPolicies(cfg.policy, policyContext(cfg)).map((p) => p.metadata.name);
            const audited: { what: string; namespace: string; uid: string; policy: string }[] = [];
            try {
                // Kyverno reads namespaces and bindings from its informers.
                await new Promise((r) => setTimeout(r, 5_000));
                for (const c of policyContext(cfg).tiers!.classes) {
                    const namespace = c.prodClass === "regulated" ? "regulated" : "prod";
                    const policy = TIER_POLICY_NAMES[c.prodClass];
                    const offered = (h: TierSample) => !h.shape || c.components[h.shape] !== undefined;
                    const sample = (h: TierSample, name: string): AdmissionCase => ({
                        name: `${h.name} (${namespace})`,
                        namespace,
                        as: "gitops",
                        resource: h.resource,
                        ...(h.shape ? { component: c.components[h.shape] } : {}),
                        with: mergePatch(h.with ?? {}, { metadata: { name } }),
                        expect: "admitted",
                    });
                    const cases = [
                        ...samples.conforming.filter(offered).map((h, i) => ({ case: sample(h, `conforming-${i}`), real: false })),
                        ...samples.holes.filter(offered).map((h, i) => {
                            const asked = c.prodClass === "regulated" || !h.regulatedOnly;
                            const expect = !asked ? "admitted" : c.action === "Enforce" ? "refused" : "warned";
                            const says = expect === "refused" ? { says: h.says } : {};
                            return { case: { ...sample(h, `hole-${i}`), expect, ...(asked ? { policy } : {}), ...says }, real: expect === "warned" };
                        }),
                    ] as { case: AdmissionCase; real: boolean }[];
                    const answers = await Promise.all(cases.map((x) => sendCase(ctx, x.case, { dryRun: !x.real })));
                    cases.forEach((x, i) => {
                        judged++;
                        const wrong = judge(x.case, api, answers[i], policies);
                        if (wrong) {
                            problems.push(`${api}: ${x.case.name}: ${wrong}`);
                        } else if (x.real) {
                            const uid = (JSON.parse(answers[i].stdout) as { metadata: { uid: string } }).metadata.uid;
                            audited.push({ what: `${api}: ${x.case.name}`, namespace: ctx.namespaces[namespace].name, uid, policy });
                        }
                    });
                }
                // Kyverno writes an audited request's report after it answers (EphemeralReport, labelled
                // with the object's uid: kyverno/kyverno pkg/utils/report/new.go BuildAdmissionReport at v1.17.2).
                const reported = (a: (typeof audited)[number]) => {
                    const list = target.cluster.kubectl([
                        "get",
                        "ephemeralreports.reports.kyverno.io",
                        "-n",
                        a.namespace,
                        "-l",
                        `audit.kyverno.io/resource.uid=${a.uid}`,
                        "-o",
                        "json",
                    ]);
                    const items = (JSON.parse(list) as { items: { spec?: { results?: { policy?: string; result?: string }[] } }[] }).items;
                    return items.some((r) => (r.spec?.results ?? []).some((x) => x.policy === a.policy && x.result === "fail"));
                };
                let missing = audited;
                try {
                    await waitFor("Kyverno's admission reports of the audited shapes", 60_000, () => {
                        kyverno.check();
                        missing = missing.filter((a) => !reported(a));
                        return missing.length === 0;
                    });
                } catch {
                    problems.push(...missing.map((a) => `${a.what}: admitted, but no admission report holds a fail of ${a.policy}`));
                }
                kyverno.check();
            } finally {
                close();
            }
        }
        assert.deepStrictEqual(problems, [], `tier admission answers ${problems.length} of ${judged} samples otherwise:\n${problems.join("\n")}`);
        assert.ok(judged >= 2 * (samples.holes.length + samples.conforming.length), `only ${judged} samples judged`);
    });

    /**
     * What the admission samples cannot show as dry runs, in a regulated namespace (ADR-056 D3):
     * Kyverno's chart filters ReplicaSets out of admission (config.resourceFilters), so the guard
     * sees them only once the platform drops those filters, as docs/stages/policy.md says, and
     * verify's kyverno.resource-filters says so; a hub's ArgoCD syncs as the user name or group its
     * cluster Secret gives it (policy.regulated.gitopsUsers, gitopsGroups) while a deployer still
     * cannot; the Rollouts controller's real ReplicaSet gets its Pod from the real ReplicaSet
     * controller through the guard; and verify finds the namespace's RBAC that lets deployers
     * edit ReplicaSets. Identities are impersonated, with RBAC that lets each of them write.
     */
    for (const api of APIS) {
        it(`regulated-argocd-paths (${api})`, async function () {
            await up({ api, mode: "complement", hub: true });
            const cfg = addonConfig(STACK, target.config);
            const who = identities(cfg);
            const tag = api === "kyverno.io/v1" ? "cp" : "cel";
            const ns = `team-regulated-paths-${tag}`;
            const apply = (obj: unknown) => target.cluster.kubectl(["apply", "--server-side", "--field-manager=platform-e2e", "-f", "-"], JSON.stringify(obj));
            apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels: namespaceClasses(cfg, tag).regulated.labels } });
            apply(SAMPLE_WRITER);
            const hubUser = { user: HUB_USER, groups: ["system:authenticated"] };
            const hubGroup = { user: "arn:aws:sts::123456789012:assumed-role/argocd-hub/1767225600", groups: [HUB_GROUP, "system:authenticated"] };
            apply(sampleWriterBinding(ns, [...Object.values(who), hubUser, hubGroup]));
            const kubectl = (args: string[], input?: string) =>
                run(path.join(w.bin, "kubectl"), [`--kubeconfig=${target.cluster.kubeconfig}`, ...args], input === undefined ? {} : { input });
            const as = (id: { user: string; groups: string[] }, args: string[], input?: string) =>
                kubectl([`--as=${id.user}`, ...id.groups.map((g) => `--as-group=${g}`), "-n", ns, ...args], input);
            const outcomes: string[] = [];
            const expect = (what: string, r: { status: number; stderr: string }, allowed: boolean, message?: string) => {
                const flat = (t: string) => t.replace(/''/g, "'").replace(/\s+/g, " ");
                const ok = allowed ? r.status === 0 : r.status !== 0 && message !== undefined && flat(r.stderr).includes(flat(message));
                if (!ok) {
                    const how = allowed ? "refused" : r.status === 0 ? "admitted" : "refused without the guard's message";
                    outcomes.push(`${what}: ${how}${r.stderr ? `:\n      ${r.stderr.trim().split("\n").join("\n      ")}` : ""}`);
                }
            };
            const filters = resourceFilters(target.cluster);
            try {
                // Kyverno's chart filters ReplicaSets out: verify says so, and what to set.
                assert.ok(filters.original.includes("[ReplicaSet,*,*]"), `Kyverno's chart no longer filters ReplicaSets: ${filters.original}`);
                let checked = verify().find((c) => c.id === "kyverno.resource-filters");
                assert.strictEqual(checked?.status, "FAIL", JSON.stringify(checked));
                assert.match(JSON.stringify(checked.findings), /\[ReplicaSet,\*,\*\].*config\.resourceFiltersExclude/);
                // The platform drops them, as the policy stage's page says.
                filters.dropReplicaSets();
                checked = verify().find((c) => c.id === "kyverno.resource-filters");
                assert.strictEqual(checked?.status, "PASS", JSON.stringify(checked));
                // Kyverno needs its informers to see the namespace, the RoleBinding and its configuration.
                await new Promise((r) => setTimeout(r, 5_000));
                kyverno.check();

                const base = admissionSamples().resources.live;
                const rollout = mergePatch(base, { metadata: { name: "checkout", namespace: ns } });
                expect(
                    "the GitOps sync identity applies the Rollout",
                    as(who.gitops, ["apply", "--server-side", "--force-conflicts", "--field-manager=argocd-controller", "-f", "-"], JSON.stringify(rollout)),
                    true,
                );
                const steps = (weights: number[]) =>
                    JSON.stringify({ spec: { strategy: { canary: { steps: [{ setWeight: weights[0] }, { pause: {} }, { setWeight: weights[1] }] } } } });
                expect(
                    "a hub's ArgoCD syncs as a user name (policy.regulated.gitopsUsers)",
                    as(hubUser, ["patch", "rollout", "checkout", "--type=merge", "-p", steps([50, 100])]),
                    true,
                );
                expect(
                    "a hub's ArgoCD syncs in a group (policy.regulated.gitopsGroups)",
                    as(hubGroup, ["patch", "rollout", "checkout", "--type=merge", "-p", steps([25, 100])]),
                    true,
                );
                expect(
                    "a deployer still cannot change the steps",
                    as(who.deployer, ["patch", "rollout", "checkout", "--type=merge", "-p", steps([50, 100])]),
                    false,
                    MESSAGES.approvalSpec,
                );
                // The Rollout's ReplicaSet, as Argo Rollouts creates it (its controller: the Rollout).
                const owner = JSON.parse(target.cluster.kubectl(["get", "rollout", "checkout", "-n", ns, "-o", "json"])) as { metadata: { uid: string } };
                const hash = "6d4f8b7c9";
                const labels = { app: "live", "rollouts-pod-template-hash": hash };
                const replicaSet = mergePatch(admissionSamples().resources.replicaset, {
                    metadata: {
                        name: `checkout-${hash}`,
                        namespace: ns,
                        ownerReferences: [
                            {
                                apiVersion: "argoproj.io/v1alpha1",
                                kind: "Rollout",
                                name: "checkout",
                                uid: owner.metadata.uid,
                                controller: true,
                                blockOwnerDeletion: true,
                            },
                        ],
                    },
                });
                expect("the Rollouts controller creates the Rollout's ReplicaSet", as(who.controller, ["create", "-f", "-"], JSON.stringify(replicaSet)), true);
                // The real ReplicaSet controller makes its Pod: the guard never stops it.
                await waitFor(
                    "the ReplicaSet controller's Pod of the Rollout's ReplicaSet",
                    60_000,
                    () => {
                        kyverno.check();
                        return (
                            kubectl([
                                "get",
                                "pods",
                                "-n",
                                ns,
                                "-l",
                                Object.entries(labels)
                                    .map(([k, v]) => `${k}=${v}`)
                                    .join(","),
                                "-o",
                                "name",
                            ]).stdout.trim() !== ""
                        );
                    },
                    () => kubectl(["get", "events", "-n", ns, "-o", "wide"]).stdout,
                );
                kyverno.check();
                // verify asks whether the deployers may edit ReplicaSets there: this namespace's binding lets them.
                const rbac = verify().find((c) => c.id === "rbac.deployer-cannot-edit-replicasets");
                assert.strictEqual(rbac?.status, "FAIL", JSON.stringify(rbac));
                assert.match(JSON.stringify(rbac.findings), new RegExp(`may patch replicasets in ${ns}`));
            } finally {
                filters.restore();
                target.cluster.kubectl(["delete", "namespace", ns, "--wait=false"]);
            }
            assert.deepStrictEqual(outcomes, [], `regulated ArgoCD paths, ${api}:\n${outcomes.join("\n")}`);
        });
    }

    interface PdbView {
        metadata: { name: string; namespace: string; labels?: Record<string, string> };
        spec: { maxUnavailable?: number | string; selector?: LabelSelector };
    }

    /**
     * The samples' `generation` workloads, created for real beside their namespace's budgets, in
     * namespaces of their own (`tag`); the names of the generated budgets each must end with.
     */
    async function createGeneration(
        cfg: ReturnType<typeof addonConfig>,
        tag: string,
    ): Promise<{ namespace: string; kind: string; name: string; labels: Record<string, string>; selector: unknown; expect?: string }[]> {
        const samples = admissionSamples();
        const apply = (obj: unknown) => target.cluster.kubectl(["apply", "--server-side", "--field-manager=argocd-controller", "-f", "-"], JSON.stringify(obj));
        const ns = (g: { namespace: string }) => `pdb-${g.namespace}-${tag}`;
        for (const g of samples.generation) {
            apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns(g), labels: namespaceClasses(cfg, tag).dev.labels } });
            for (const b of g.budgets) {
                apply({
                    apiVersion: "policy/v1",
                    kind: "PodDisruptionBudget",
                    metadata: { name: b.name, namespace: ns(g) },
                    spec: { maxUnavailable: 1, ...(b.selector ? { selector: b.selector } : {}) },
                });
            }
        }
        // The budgets first: the CEL generator looks them up at the workloads' admission.
        await new Promise((r) => setTimeout(r, 2_000));
        const out: { namespace: string; kind: string; name: string; labels: Record<string, string>; selector: unknown; expect?: string }[] = [];
        for (const g of samples.generation) {
            for (const wl of g.workloads) {
                type Workload = {
                    kind: string;
                    metadata: { name: string };
                    spec: { selector: { matchLabels: unknown }; template: { metadata: { labels: Record<string, string> } } };
                };
                let o = mergePatch(samples.resources[wl.resource], {
                    ...wl.with,
                    metadata: { ...(wl.with?.metadata as object), namespace: ns(g) },
                }) as unknown as Workload;
                if (wl.labels) {
                    o = mergePatch(o, { spec: { selector: { matchLabels: null }, template: { metadata: { labels: null } } } });
                    o = mergePatch(o, { spec: { selector: { matchLabels: wl.labels }, template: { metadata: { labels: wl.labels } } } });
                }
                out.push({
                    namespace: ns(g),
                    kind: o.kind.toLowerCase(),
                    name: o.metadata.name,
                    labels: o.spec.template.metadata.labels,
                    selector: o.spec.selector,
                    expect: wl.expect,
                });
                apply(o);
            }
        }
        return out;
    }

    for (const api of APIS) {
        it(`kyverno-generates-pdb (${api})`, async function () {
            // The CEL generator is tried at admission: the workloads come after the policy. The
            // ClusterPolicy is tried on existing workloads (generateExisting, in the background
            // controller): on Kyverno 1.17.2 its admission path evaluates the rule's coveringPdbs
            // API call on the admission request's context, which is cancelled once the response is
            // sent (kyverno pkg/webhooks/resource/handlers.go, handleBackgroundApplies), so a new
            // workload's budget is left to chance there (docs/operations/troubleshooting.md, "A
            // Rollout gets no PDB or spread constraints").
            const existing = api === "kyverno.io/v1";
            await up({ api, mode: existing ? "complement" : "own" });
            const workloads = await createGeneration(addonConfig(STACK, target.config), existing ? "cp" : "cel");
            if (existing) {
                await up({ api, mode: "own" });
            }
            const pdbs = () => (JSON.parse(target.cluster.kubectl(["get", "pdb", "-A", "-o", "json"])) as { items: PdbView[] }).items;
            const budget = (w: (typeof workloads)[number]) => pdbs().find((p) => p.metadata.namespace === w.namespace && p.metadata.name === w.expect);
            await waitFor(
                "the generated PodDisruptionBudgets",
                90_000,
                () => {
                    kyverno.check();
                    return workloads.every((w) => !w.expect || budget(w)?.metadata.labels?.[GENERATED_BY_POLICY] !== undefined);
                },
                () => `${JSON.stringify(pdbs().map((p) => `${p.metadata.namespace}/${p.metadata.name}`))}\nbackground log:\n${kyverno.background.log}`,
            );
            // Give the generator time to (wrongly) add one for a workload a budget covers too; then
            // an update of each workload must leave the same budgets (its own is no other team's).
            const check = async (when: string): Promise<string[]> => {
                await new Promise((r) => setTimeout(r, 10_000));
                kyverno.check();
                const all = pdbs();
                const problems: string[] = [];
                for (const w of workloads) {
                    const generated = all.filter(
                        (p) =>
                            p.metadata.namespace === w.namespace &&
                            p.metadata.labels?.[GENERATED_BY_POLICY] !== undefined &&
                            selects(p.spec.selector ?? {}, w.labels),
                    );
                    const names = generated.map((p) => p.metadata.name);
                    if (!isDeepStrictEqual(names, w.expect ? [w.expect] : [])) {
                        problems.push(
                            `${when}: ${w.namespace} ${JSON.stringify(w.labels)}: generated ${JSON.stringify(names)}, the samples say ${JSON.stringify(w.expect ? [w.expect] : [])}`,
                        );
                    } else if (
                        w.expect &&
                        (typeof generated[0].spec.maxUnavailable !== "number" || !isDeepStrictEqual(generated[0].spec.selector, w.selector))
                    ) {
                        problems.push(
                            `${when}: ${w.namespace}/${w.expect}: maxUnavailable ${JSON.stringify(generated[0].spec.maxUnavailable)} (a number of pods), selector ${JSON.stringify(generated[0].spec.selector)} (the workload's)`,
                        );
                    }
                }
                return problems;
            };
            const problems = await check("after creation");
            for (const w of workloads) {
                target.cluster.kubectl(["label", w.kind, w.name, "-n", w.namespace, "--overwrite", "release=2"]);
            }
            problems.push(...(await check("after an update")));
            assert.deepStrictEqual(problems, [], problems.join("\n"));
        });
    }

    /**
     * The regulated namespaces' approval bindings (components/policy/approvalBindings.ts), generated
     * by the real Kyverno in each API: for a namespace that existed before the policy
     * (generateExisting) and one created after it, never for a prod namespace that is not regulated;
     * restored when deleted (synchronized); kept in one namespace when another leaves the class. The
     * API server then decides what each group may do with the generated bindings alone.
     */
    for (const api of APIS) {
        it(`kyverno-generates-approval-bindings (${api})`, async function () {
            const cfg = addonConfig(STACK, target.config);
            const regulated = cfg.policy.regulated!;
            const classes = namespaceClasses(cfg, `bind-${api === "kyverno.io/v1" ? "cp" : "cel"}`);
            const [before, after, prod] = [classes.regulated.name, `${classes.regulated.name}-new`, classes.prod.name];
            const namespace = (name: string, labels: Record<string, string>) =>
                target.cluster.kubectl(
                    ["apply", "--server-side", "-f", "-"],
                    JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name, labels } }),
                );
            namespace(before, classes.regulated.labels);
            await up({ api, mode: "own" });
            namespace(after, classes.regulated.labels);
            namespace(prod, classes.prod.labels);
            const kubectl = path.join(w.bin, "kubectl");
            const bindings = (ns: string) =>
                (JSON.parse(target.cluster.kubectl(["get", "rolebindings", "-n", ns, "-o", "json"])) as { items: KubeObject[] }).items.filter((b) =>
                    b.metadata?.name?.startsWith("argo-rollouts-addon:"),
                );
            const expected = approvalSides(regulated).map(({ side, groups }) => approvalBinding(side, groups, before) as KubeObject);
            const shape = (b: KubeObject) => ({ name: b.metadata?.name, roleRef: b.roleRef, subjects: b.subjects });
            const generated = (ns: string) =>
                isDeepStrictEqual(
                    bindings(ns).map(shape),
                    expected.map((e) => shape(e)),
                );
            const log = () =>
                `${[before, after, prod].map((ns) => `${ns}: ${JSON.stringify(bindings(ns).map(shape))}`).join("\n")}\nbackground log:\n${kyverno.background.log}`;
            await waitFor(
                "the approval bindings of both regulated namespaces",
                120_000,
                () => {
                    kyverno.check();
                    return generated(before) && generated(after);
                },
                log,
            );
            assert.deepStrictEqual(bindings(prod), [], "a prod namespace outside the regulated class got approval bindings");
            const checked = verify().find((r) => r.id === "rbac.approval-bindings");
            assert.strictEqual(checked?.status, "PASS", `verify's rbac.approval-bindings: ${JSON.stringify(checked)}`);
            // `kubectl auth can-i` reads `rollouts/status` as the Rollout named status: the subresource is a flag.
            const can = (ns: string, group: string, verb: string, resource: string) => {
                const [kind, sub] = resource.split("/");
                const args = [
                    "auth",
                    "can-i",
                    verb,
                    kind,
                    ...(sub ? [`--subresource=${sub}`] : []),
                    "-n",
                    ns,
                    "--as=someone@platform.test",
                    `--as-group=${group}`,
                ];
                return run(kubectl, [`--kubeconfig=${target.cluster.kubeconfig}`, ...args]).stdout.trim();
            };
            for (const ns of [before, after]) {
                assert.strictEqual(can(ns, regulated.approverGroups[0], "patch", "rollouts/status"), "yes", `an approver cannot approve in ${ns}`);
                for (const group of regulated.deployerGroups) {
                    assert.strictEqual(can(ns, group, "get", "rollouts"), "yes", `a deployer (${group}) cannot read Rollouts in ${ns}`);
                    assert.strictEqual(can(ns, group, "patch", "rollouts/status"), "no", `a deployer (${group}) may approve in ${ns}`);
                }
            }
            assert.strictEqual(can(prod, regulated.approverGroups[0], "patch", "rollouts/status"), "no", "an approver may approve outside the regulated class");
            // A binding deleted by hand comes back: at once where the policy is synchronized (the
            // ClusterPolicy), at the namespace's next update where it is not (approvalBindings.ts).
            // A namespace leaving the class leaves the other's bindings.
            target.cluster.kubectl(["delete", "rolebinding", "-n", after, expected[0].metadata!.name!]);
            if (api !== "kyverno.io/v1") namespace(after, { ...classes.regulated.labels, "e2e.platform.test/touched": "1" });
            namespace(before, {});
            await new Promise((r) => setTimeout(r, 15_000));
            await waitFor(
                "the deleted binding restored, the other namespace's kept",
                90_000,
                () => {
                    kyverno.check();
                    return generated(after);
                },
                log,
            );
        });
    }

    it("kyverno-generates-pdb (complement)", async function () {
        await up({ api: "policies.kyverno.io/v1", mode: "complement" });
        const ns = "team-pdb-complement";
        const apply = (obj: unknown) => target.cluster.kubectl(["apply", "--server-side", "--field-manager=argocd-controller", "-f", "-"], JSON.stringify(obj));
        apply({
            apiVersion: "v1",
            kind: "Namespace",
            metadata: { name: ns, labels: namespaceClasses(addonConfig(STACK, target.config), "complement").dev.labels },
        });
        apply(mergePatch(admissionSamples().resources.rollout, { metadata: { namespace: ns } }));
        await new Promise((r) => setTimeout(r, 15_000));
        kyverno.check();
        const generated = (JSON.parse(target.cluster.kubectl(["get", "pdb", "-A", "-l", GENERATED_BY_POLICY, "-o", "json"])) as { items: PdbView[] }).items;
        const ours = generated.filter((p) => p.metadata.labels?.[GENERATED_BY_POLICY] === "generate-workload-pdb" && p.metadata.namespace === ns);
        assert.deepStrictEqual(
            ours.map((p) => p.metadata.name),
            [],
            "in complement mode this stack generated a budget: the platform's generator owns that",
        );
    });
});
