/**
 * The real Kyverno decides the policy stage (ADR-056 D2, D3): the shipped spoke stack on a cluster
 * of its own with Kyverno running, in each Kyverno API and each `policy.availabilityPolicies` mode.
 * Kyverno reports every policy the stack can declare ready; the webhook configuration it writes
 * calls each policy for exactly its namespaces; a policy it cannot compile is refused and verify
 * fails on it; its admission decisions match the unit tests' restated engines.
 * docs/operations/e2e.md, "Kyverno", says which Kyverno runs and what this does not prove.
 */
import assert from "assert";
import { world } from "../lib/context";
import { KyvernoProcs, WebhookConfiguration, startKyverno } from "../lib/kyverno";
import { addonConfig } from "../lib/platform";
import { run, waitFor } from "../lib/procs";
import { PulumiEnv, failure } from "../lib/pulumi";
import { ConfigMap } from "../lib/stacks";
import { StackTarget, World, npmRun } from "../lib/world";
import { celPolicies, kyvernoPolicies } from "../../components/policy/kyverno";
import { LabelSelector, selects } from "../../tools/verify/selectors";
import { GENERATED_BY_POLICY } from "../../tools/verify/checks/kyverno";
import { MESSAGES, PolicyConfig, PolicyContext, policyContext, tierMessage } from "../../components/policy";
import { stackStrategies } from "../../components/delivery/config";
import { componentPlan } from "../../components/delivery/kustomize";
import { Obj, Outcome, Request, hpa, sampleDeployment, sampleRollout, viaCel, viaClusterPolicy } from "../../test/admissionModel";
import type { Json } from "../../test/kyvernoCel";
import * as path from "path";
import { CheckResult } from "../../tools/verify/report";

const STACK = "preprod";
const SCENARIO_MS = 5 * 60_000;
type Api = "policies.kyverno.io/v1" | "kyverno.io/v1";
type Mode = "own" | "complement";
/** `hub`: the regulated identities also name a hub's ArgoCD (HUB_USER, HUB_GROUP). */
type Setting = { api: Api; mode: Mode; hub?: boolean };
const HUB_USER = "argocd-hub";
const HUB_GROUP = "e2e:argocd-hub";

describe("kyverno", function () {
    this.timeout(SCENARIO_MS);
    let w: World;
    let env: PulumiEnv;
    let target: StackTarget;
    let kyverno: KyvernoProcs;
    let setting: Setting = { api: "policies.kyverno.io/v1", mode: "complement" };

    const patch = () => (config: ConfigMap) => {
        const key = "argo-rollouts-addon:policy";
        const policy = config[key] as Record<string, unknown>;
        // A hub's ArgoCD arrives with its cluster Secret's identity: a user name, or a group.
        const regulated = setting.hub
            ? { regulated: { ...(policy.regulated as Record<string, unknown>), gitopsUsers: [HUB_USER], gitopsGroups: [HUB_GROUP] } }
            : {};
        config[key] = { ...policy, kyvernoApi: setting.api, availabilityPolicies: setting.mode, ...regulated };
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

    for (const api of ["policies.kyverno.io/v1", "kyverno.io/v1"] as const) {
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
            const declared = celPolicies(cfg.policy, policyContext(cfg));
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

    /**
     * The unit tests' admission samples (test/admissionModel.ts), in namespaces labelled as the
     * stack's selectors expect. Each is sent to the real API server as a server-side dry run, so
     * the real Kyverno's webhooks decide it and nothing is stored.
     */
    function admissionSamples(cfg: PolicyConfig, tag: string): { label: string; request: Request; exists?: Obj[] }[] {
        const dev = `adm-dev-${tag}`;
        const prod = `adm-prod-${tag}`;
        const devLabels = { "platform.test/tier": "dev" };
        const prodLabels = { ...devLabels, ...cfg.prodNamespaceLabels };
        const surge = (maxSurge: Json): Obj => {
            const r = sampleRollout({}, dev);
            (r.spec.strategy as { canary: Record<string, Json> }).canary.maxSurge = maxSurge;
            return r;
        };
        const elsewhere = sampleRollout({}, dev);
        (elsewhere.spec.strategy as { canary: { trafficRouting: { plugins: Record<string, Record<string, string>> } } }).canary.trafficRouting.plugins[
            "argoproj-labs/gatewayAPI"
        ].namespace = "payments";
        const omitted = (ns: string): Obj => {
            const r = sampleRollout({}, ns);
            delete r.spec.replicas;
            return r;
        };
        const inNs = (o: Obj, ns: string): Obj => ({ ...o, metadata: { ...o.metadata, namespace: ns } });
        // Its own name: the HPA stays in the namespace for every later sample, and scales only this one.
        const scaled: Obj = { ...omitted(prod), metadata: { name: "checkout-scaled", namespace: prod } };
        const scaler = inNs(hpa({ kind: "Rollout", name: scaled.metadata.name }, cfg.prodMinReplicas), prod);
        return [
            { label: "maxSurge 0", request: { object: surge(0), namespaceLabels: devLabels } },
            { label: 'maxSurge "0%"', request: { object: surge("0%"), namespaceLabels: devLabels } },
            { label: "a route in another namespace", request: { object: elsewhere, namespaceLabels: devLabels } },
            { label: "a Deployment in the default namespace", request: { object: sampleDeployment({}, "default"), namespaceLabels: {} } },
            { label: "a prod Rollout below the floor, no HPA", request: { object: sampleRollout({ replicas: 1 }, prod), namespaceLabels: prodLabels } },
            { label: "a prod Rollout without spec.replicas, no HPA", request: { object: omitted(prod), namespaceLabels: prodLabels } },
            {
                label: "a prod Rollout without spec.replicas that an HPA scales",
                request: { object: scaled, namespaceLabels: prodLabels, objects: { "autoscaling/v2/horizontalpodautoscalers": [scaler as unknown as Json] } },
                exists: [scaler],
            },
            { label: "a dev Rollout gets spread by rollouts-pod-template-hash", request: { object: sampleRollout({}, dev), namespaceLabels: devLabels } },
            { label: "a dev Deployment gets spread by pod-template-hash", request: { object: sampleDeployment({}, dev), namespaceLabels: devLabels } },
        ];
    }

    /** What the real Kyverno decided for one sample: our policies' messages in the refusal, and the spread it added. */
    function realOutcome(r: Request): Pick<Outcome, "denied" | "spread"> {
        const res = run(path.join(w.bin, "kubectl"), [`--kubeconfig=${target.cluster.kubeconfig}`, "create", "--dry-run=server", "-o", "json", "-f", "-"], {
            input: JSON.stringify(r.object),
        });
        const messages = Object.values(MESSAGES).map((m) =>
            typeof m === "function" ? (m as (n: number) => string)(addonConfig(STACK, target.config).policy.prodMinReplicas) : m,
        );
        if (res.status !== 0) {
            // Kyverno prints a ClusterPolicy's messages as folded YAML (wrapped, sometimes quoted).
            const flat = (t: string) => t.replace(/''/g, "'").replace(/\s+/g, " ");
            const denied = messages.filter((m) => flat(res.stderr).includes(flat(m))).sort();
            assert.ok(denied.length > 0, `the API server refused the sample with no message of ours:\n${res.stderr}`);
            return { denied, spread: [] };
        }
        const created = JSON.parse(res.stdout) as { spec: { template?: { spec?: { topologySpreadConstraints?: Json } } } };
        const spread = created.spec.template?.spec?.topologySpreadConstraints;
        return { denied: [], spread: spread === undefined ? [] : [spread] };
    }

    /** JSON with sorted keys: the API server's key order is not the restated engine's. */
    const canon = (v: unknown): string =>
        JSON.stringify(v, (_k, x: unknown) =>
            x && typeof x === "object" && !Array.isArray(x)
                ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
                : x,
        );

    for (const api of ["policies.kyverno.io/v1", "kyverno.io/v1"] as const) {
        it(`kyverno-admission (${api})`, async function () {
            await up({ api, mode: "own" });
            const cfg = addonConfig(STACK, target.config);
            const ctx: PolicyContext = policyContext(cfg);
            const tag = api === "kyverno.io/v1" ? "cp" : "cel";
            const samples = admissionSamples(cfg.policy, tag);
            const apply = (obj: unknown) =>
                target.cluster.kubectl(["apply", "--server-side", "--field-manager=argocd-controller", "-f", "-"], JSON.stringify(obj));
            for (const [ns, labels] of [
                [`adm-dev-${tag}`, samples[0].request.namespaceLabels],
                [`adm-prod-${tag}`, samples[4].request.namespaceLabels],
            ] as const) {
                apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels } });
            }
            for (const o of samples.flatMap((x) => x.exists ?? [])) {
                apply(o);
            }
            // Kyverno reads namespaces and HPAs from its informers: give them a moment.
            await new Promise((r) => setTimeout(r, 5_000));
            const model = api === "kyverno.io/v1" ? viaClusterPolicy : viaCel;
            const problems: string[] = [];
            for (const sample of samples) {
                kyverno.check();
                const modelled = model(cfg.policy, sample.request, ctx);
                // A refused request stores nothing: what a mutation would have added is not seen.
                const want = { denied: modelled.denied, spread: modelled.denied.length > 0 ? [] : modelled.spread };
                let got = realOutcome(sample.request);
                // A policy Kyverno has just configured may need a reconcile: ask once more on a difference.
                if (canon(got) !== canon({ denied: want.denied, spread: want.spread })) {
                    await new Promise((r) => setTimeout(r, 5_000));
                    got = realOutcome(sample.request);
                }
                if (JSON.stringify(got.denied) !== JSON.stringify(want.denied)) {
                    problems.push(`${sample.label}: Kyverno refused with [${got.denied.join(" | ")}], the restated engine with [${want.denied.join(" | ")}]`);
                }
                if (canon(got.spread) !== canon(want.spread)) {
                    problems.push(`${sample.label}: Kyverno added spread ${JSON.stringify(got.spread)}, the restated engine ${JSON.stringify(want.spread)}`);
                }
            }
            assert.deepStrictEqual(problems, [], `the restated ${api} engine disagrees with the real Kyverno:\n${problems.join("\n")}`);
        });
    }

    for (const api of ["policies.kyverno.io/v1", "kyverno.io/v1"] as const) {
        it(`kyverno-regulated (${api})`, async function () {
            await up({ api, mode: "complement" });
            const cfg = addonConfig(STACK, target.config);
            const regulated = cfg.policy.regulated;
            assert.ok(regulated, "the shipped preprod stack configures no policy.regulated");
            const tag = api === "kyverno.io/v1" ? "cp" : "cel";
            const ns = `team-regulated-${tag}`;
            const gitops = `system:serviceaccount:${regulated.gitopsServiceAccounts[0].namespace}:${regulated.gitopsServiceAccounts[0].name}`;
            assert.ok(regulated.actionServiceAccounts.length > 0, "the shipped preprod stack names no ArgoCD action identity");
            const server = `system:serviceaccount:${regulated.actionServiceAccounts[0].namespace}:${regulated.actionServiceAccounts[0].name}`;
            const controller = `system:serviceaccount:${cfg.controller.namespace}:argo-rollouts`;
            const deployer = regulated.deployerGroups[0];
            const approver = regulated.approverGroups[0];
            assert.ok(deployer && approver, "the stack names no deployer or approver group");
            const apply = (obj: unknown) => target.cluster.kubectl(["apply", "--server-side", "--field-manager=platform-e2e", "-f", "-"], JSON.stringify(obj));
            apply({
                apiVersion: "v1",
                kind: "Namespace",
                metadata: { name: ns, labels: { "platform.test/tier": "prod", ...cfg.policy.prodNamespaceLabels, ...regulated.namespaceLabels } },
            });
            // RBAC as a platform might grant it beyond the program's roles, so that admission is what
            // decides: the GitOps identity, the deployers and the approvers may write and delete
            // Rollouts and write their status.
            const writes = ["get", "list", "watch", "create", "update", "patch", "delete"];
            apply({
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "Role",
                metadata: { name: "e2e-rollout-writer", namespace: ns },
                rules: [{ apiGroups: ["argoproj.io"], resources: ["rollouts", "rollouts/status"], verbs: writes }],
            });
            apply({
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "RoleBinding",
                metadata: { name: "e2e-rollout-writer", namespace: ns },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "e2e-rollout-writer" },
                subjects: [
                    { kind: "User", name: gitops, apiGroup: "rbac.authorization.k8s.io" },
                    { kind: "User", name: server, apiGroup: "rbac.authorization.k8s.io" },
                    { kind: "Group", name: deployer, apiGroup: "rbac.authorization.k8s.io" },
                    { kind: "Group", name: approver, apiGroup: "rbac.authorization.k8s.io" },
                ],
            });
            const as = (who: { user: string; group?: string }, args: string[], input?: string) =>
                run(
                    path.join(w.bin, "kubectl"),
                    [`--kubeconfig=${target.cluster.kubeconfig}`, `--as=${who.user}`, ...(who.group ? [`--as-group=${who.group}`] : []), "-n", ns, ...args],
                    input === undefined ? {} : { input },
                );
            const asGitops = { user: gitops };
            const asDeployer = { user: "deployer@platform.test", group: deployer };
            const asApprover = { user: "approver@platform.test", group: approver };
            const asController = { user: controller };
            // ArgoCD's API server, as it runs an action or a resource patch or delete for a user.
            const asServer = { user: server };
            const rollout = (steps: Json[], paused: boolean) => {
                const r = sampleRollout({ replicas: Math.max(2, cfg.policy.prodMinReplicas), paused }, ns);
                (r.spec.strategy as { canary: Record<string, Json> }).canary.steps = steps;
                return r;
            };
            const gated: Json[] = [{ setWeight: 25 }, { pause: {} }, { setWeight: 100 }];
            const outcomes: string[] = [];
            const expect = (what: string, r: { status: number; stderr: string }, allowed: boolean, message?: string) => {
                const flat = (t: string) => t.replace(/''/g, "'").replace(/\s+/g, " ");
                const ok = allowed
                    ? r.status === 0
                    : r.status !== 0 && (message === undefined || flat(r.stderr).includes(flat(message)) || /forbidden/i.test(r.stderr));
                if (!ok) {
                    const how = allowed ? "refused" : r.status === 0 ? "admitted" : "refused without the guard's message";
                    outcomes.push(`${what}: ${how}${r.stderr ? `:\n      ${r.stderr.trim().split("\n").join("\n      ")}` : ""}`);
                }
            };
            // Kyverno needs its informers to see the namespace and the RoleBinding.
            await new Promise((r) => setTimeout(r, 5_000));
            kyverno.check();
            const create = (who: typeof asGitops) => as(who, ["create", "-f", "-"], JSON.stringify(rollout(gated, true)));
            expect("a deployer creates a regulated Rollout", create(asDeployer), false, MESSAGES.approvalCreate);
            expect("ArgoCD's API server creates it", create(asServer), false, MESSAGES.approvalCreate);
            expect("the GitOps controller creates it", create(asGitops), true);
            const patch = (who: typeof asGitops, body: unknown, status = false) =>
                as(who, ["patch", "rollout", "checkout", "--type=merge", ...(status ? ["--subresource=status"] : []), "-p", JSON.stringify(body)]);
            // Other steps that keep the tier's gate and approval: only the approval guard decides.
            const otherSteps: Json[] = [{ setWeight: 10 }, { pause: {} }, { setWeight: 100 }];
            expect("a deployer changes the steps", patch(asDeployer, { spec: { strategy: { canary: { steps: otherSteps } } } }), false, MESSAGES.approvalSpec);
            expect("an approver changes the steps", patch(asApprover, { spec: { strategy: { canary: { steps: otherSteps } } } }), false, MESSAGES.approvalSpec);
            expect(
                "the GitOps controller changes the steps",
                patch(asGitops, { spec: { strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }, { setWeight: 100 }] } } } }),
                true,
            );
            expect("a deployer writes status (promote)", patch(asDeployer, { status: { pauseConditions: null } }, true), false, MESSAGES.approvalStatus);
            expect("a deployer unpauses", patch(asDeployer, { spec: { paused: false } }), false, MESSAGES.approvalSpec);
            expect("a deployer deletes it", as(asDeployer, ["delete", "rollout", "checkout", "--wait=false"]), false, MESSAGES.approvalDelete);
            expect("an approver deletes it", as(asApprover, ["delete", "rollout", "checkout", "--wait=false"]), false, MESSAGES.approvalDelete);
            expect(
                "the controller writes its revision annotation",
                patch(asController, { metadata: { annotations: { "rollout.argoproj.io/revision": "1" } } }),
                true,
            );
            expect("the controller writes status", patch(asController, { status: { observedGeneration: "1" } }, true), true);
            expect(
                "ArgoCD's API server patches the steps (an ArgoCD resource update)",
                patch(asServer, { spec: { strategy: { canary: { steps: otherSteps } } } }),
                false,
                MESSAGES.approvalSpec,
            );
            expect(
                "ArgoCD's API server deletes it (an ArgoCD resource delete)",
                as(asServer, ["delete", "rollout", "checkout", "--wait=false"]),
                false,
                MESSAGES.approvalDelete,
            );
            expect("ArgoCD's resume action writes status", patch(asServer, { status: { pauseConditions: null } }, true), true);
            // The ClusterPolicy lets ArgoCD's server write status only (components/policy/approval.ts).
            const specActions = api === "policies.kyverno.io/v1";
            expect("ArgoCD's resume action unpauses", patch(asServer, { spec: { paused: false } }), specActions, MESSAGES.approvalSpec);
            expect(
                "ArgoCD's restart action sets restartAt",
                patch(asServer, { spec: { restartAt: "2026-12-01T10:00:00Z" } }),
                specActions,
                MESSAGES.approvalSpec,
            );
            expect("an approver writes status (promote)", patch(asApprover, { status: { pauseConditions: null } }, true), true);
            expect("an approver unpauses", patch(asApprover, { spec: { paused: false } }), true);
            expect("the GitOps controller deletes it (a prune)", as(asGitops, ["delete", "rollout", "checkout", "--wait=false"]), true);
            // The namespace's own deletion removes its Rollouts: the guard lets the namespace
            // controller through while the namespace is Terminating, or the namespace would hang.
            expect("the GitOps controller creates another", create(asGitops), true);
            target.cluster.kubectl(["delete", "namespace", ns, "--wait=false"]);
            await waitFor(
                `namespace ${ns} to be deleted with its Rollout`,
                90_000,
                () => {
                    kyverno.check();
                    return run(path.join(w.bin, "kubectl"), [`--kubeconfig=${target.cluster.kubeconfig}`, "get", "namespace", ns]).status !== 0;
                },
                () => target.cluster.kubectl(["get", "namespace", ns, "-o", "json"]),
            );
            kyverno.check();
            assert.deepStrictEqual(outcomes, [], `regulated admission, ${api}:\n${outcomes.join("\n")}`);
        });
    }

    /**
     * Tier admission (ADR-056 D3) by the real Kyverno: a Rollout of every prod component the stack
     * renders (its strategy as the component patches it in) is admitted in its class's namespace,
     * Rollouts without the class's gate or approval are refused (regulated, Enforce) or reported
     * (standard, Audit: a warning in the response), and each restated engine decides every sample
     * alike. Server-side dry runs as the GitOps identity, so the approval guard lets the creates
     * through and only the tier rules decide.
     */
    for (const api of ["policies.kyverno.io/v1", "kyverno.io/v1"] as const) {
        it(`tier-admission (${api})`, async function () {
            await up({ api, mode: "complement" });
            const cfg = addonConfig(STACK, target.config);
            const ctx = policyContext(cfg);
            const regulated = cfg.policy.regulated;
            assert.ok(regulated, "the shipped preprod stack configures no policy.regulated");
            assert.deepStrictEqual(
                ctx.tiers?.classes.map((c) => c.prodClass),
                ["standard", "regulated"],
                "the stack renders no strategy of a prod class",
            );
            const tag = api === "kyverno.io/v1" ? "cp" : "cel";
            const prodLabels = { "platform.test/tier": "prod", ...cfg.policy.prodNamespaceLabels };
            const namespaces = {
                standard: { name: `tier-standard-${tag}`, labels: prodLabels },
                regulated: { name: `tier-regulated-${tag}`, labels: { ...prodLabels, ...regulated.namespaceLabels } },
            };
            const gitops = `system:serviceaccount:${regulated.gitopsServiceAccounts[0].namespace}:${regulated.gitopsServiceAccounts[0].name}`;
            const gitopsGroups = ["system:serviceaccounts", `system:serviceaccounts:${regulated.gitopsServiceAccounts[0].namespace}`, "system:authenticated"];
            const apply = (obj: unknown) => target.cluster.kubectl(["apply", "--server-side", "--field-manager=platform-e2e", "-f", "-"], JSON.stringify(obj));
            for (const ns of Object.values(namespaces)) {
                apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns.name, labels: ns.labels } });
                apply({
                    apiVersion: "rbac.authorization.k8s.io/v1",
                    kind: "Role",
                    metadata: { name: "e2e-rollout-writer", namespace: ns.name },
                    rules: [{ apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: ["create"] }],
                });
                apply({
                    apiVersion: "rbac.authorization.k8s.io/v1",
                    kind: "RoleBinding",
                    metadata: { name: "e2e-rollout-writer", namespace: ns.name },
                    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "e2e-rollout-writer" },
                    subjects: [{ kind: "User", name: gitops, apiGroup: "rbac.authorization.k8s.io" }],
                });
            }
            const rollout = (strategy: unknown, ns: string): Obj => {
                const r = sampleRollout({ replicas: Math.max(2, cfg.policy.prodMinReplicas) }, ns);
                return { ...r, spec: { ...r.spec, strategy: strategy as Json } };
            };
            const samples: { label: string; object: Obj; labels: Record<string, string>; conforms: boolean }[] = [];
            for (const s of stackStrategies(cfg).filter((x) => x.tier === "prod")) {
                const ns = namespaces[s.prodClass!];
                samples.push({
                    label: `the ${s.id} component's Rollout`,
                    object: rollout(componentPlan(s).strategy, ns.name),
                    labels: ns.labels,
                    conforms: true,
                });
            }
            const bare = { canary: { maxSurge: 1, steps: [{ setWeight: 25 }, { pause: { duration: "6m" } }, { setWeight: 100 }] } };
            const regulatedCanary = componentPlan(stackStrategies(cfg).find((x) => x.id === "prod-regulated-canary")!).strategy as {
                canary: Record<string, Json>;
            };
            const regulatedBlueGreen = componentPlan(stackStrategies(cfg).find((x) => x.id === "prod-regulated-blueGreen")!).strategy as {
                blueGreen: Record<string, Json>;
            };
            const late = { canary: { ...regulatedCanary.canary, analysis: { ...(regulatedCanary.canary.analysis as Record<string, Json>), startingStep: 3 } } };
            const timed = {
                canary: {
                    ...regulatedCanary.canary,
                    steps: (regulatedCanary.canary.steps as Json[]).map((x) => (JSON.stringify(x) === '{"pause":{}}' ? { pause: { duration: "1h" } } : x)),
                },
            };
            samples.push(
                {
                    label: "a standard canary without the gate",
                    object: rollout(bare, namespaces.standard.name),
                    labels: namespaces.standard.labels,
                    conforms: false,
                },
                {
                    label: "a regulated canary without the gate",
                    object: rollout(bare, namespaces.regulated.name),
                    labels: namespaces.regulated.labels,
                    conforms: false,
                },
                {
                    label: "a regulated canary whose gate starts after the second weight",
                    object: rollout(late, namespaces.regulated.name),
                    labels: namespaces.regulated.labels,
                    conforms: false,
                },
                {
                    label: "a regulated canary with a timed pause for its approval",
                    object: rollout(timed, namespaces.regulated.name),
                    labels: namespaces.regulated.labels,
                    conforms: false,
                },
                {
                    label: "a regulated blue/green that promotes itself",
                    object: rollout({ blueGreen: { ...regulatedBlueGreen.blueGreen, autoPromotionEnabled: true } }, namespaces.regulated.name),
                    labels: namespaces.regulated.labels,
                    conforms: false,
                },
            );
            // Kyverno reads namespaces from its informers: give them a moment.
            await new Promise((r) => setTimeout(r, 5_000));
            const model = api === "kyverno.io/v1" ? viaClusterPolicy : viaCel;
            const tierMessages = ctx.tiers!.classes.flatMap((c) => (["canary", "blueGreen"] as const).map((shape) => tierMessage(c, shape)));
            const flat = (t: string) => t.replace(/''/g, "'").replace(/\s+/g, " ");
            // kubectl prints the response's warnings as `Warning: ...` lines, the refusal apart; both
            // APIs send an audited rule's warning with another rule's refusal too.
            const real = (o: Obj): { denied: string[]; audited: string[]; status: number } => {
                const res = run(
                    path.join(w.bin, "kubectl"),
                    [
                        `--kubeconfig=${target.cluster.kubeconfig}`,
                        `--as=${gitops}`,
                        ...gitopsGroups.map((g) => `--as-group=${g}`),
                        "create",
                        "--dry-run=server",
                        "-o",
                        "json",
                        "-f",
                        "-",
                    ],
                    { input: JSON.stringify(o) },
                );
                const lines = res.stderr.split("\n");
                const warnings = flat(lines.filter((l) => l.startsWith("Warning:")).join(" "));
                const refusal = flat(lines.filter((l) => !l.startsWith("Warning:")).join(" "));
                const said = (text: string) => tierMessages.filter((m) => text.includes(flat(m))).sort();
                return { denied: res.status !== 0 ? said(refusal) : [], audited: said(warnings), status: res.status };
            };
            const problems: string[] = [];
            for (const sample of samples) {
                kyverno.check();
                const modelled = model(cfg.policy, { object: sample.object, namespaceLabels: sample.labels, username: gitops, groups: gitopsGroups }, ctx);
                const want = { denied: modelled.denied, audited: modelled.audited.filter((m) => tierMessages.includes(m)) };
                let got = real(sample.object);
                if (JSON.stringify({ denied: got.denied, audited: got.audited }) !== JSON.stringify(want)) {
                    // A policy Kyverno has just configured may need a reconcile: ask once more.
                    await new Promise((r) => setTimeout(r, 5_000));
                    got = real(sample.object);
                }
                if (sample.conforms && (got.status !== 0 || got.audited.length > 0)) {
                    problems.push(
                        `${sample.label}: not admitted cleanly (exit ${got.status}, refused [${got.denied.join(" | ")}], reported [${got.audited.join(" | ")}])`,
                    );
                }
                if (!sample.conforms && got.denied.length + got.audited.length === 0) {
                    problems.push(`${sample.label}: neither refused nor reported by a tier rule`);
                }
                if (JSON.stringify(got.denied) !== JSON.stringify(want.denied) || JSON.stringify(got.audited) !== JSON.stringify(want.audited)) {
                    problems.push(
                        `${sample.label}: Kyverno refused [${got.denied.join(" | ")}] and reported [${got.audited.join(" | ")}], the restated engine refused [${want.denied.join(" | ")}] and reported [${want.audited.join(" | ")}]`,
                    );
                }
            }
            for (const ns of Object.values(namespaces)) {
                target.cluster.kubectl(["delete", "namespace", ns.name, "--wait=false"]);
            }
            assert.deepStrictEqual(problems, [], `tier admission, ${api}:\n${problems.join("\n")}`);
        });
    }

    /**
     * ArgoCD's remaining paths around the regulated approval (ADR-056 D3) that end in an admission
     * request, decided by the real Kyverno for impersonated identities, with RBAC that lets each of
     * them write Rollouts, ReplicaSets and Pods (so admission decides): the annotations a sync
     * reads from the live Rollout, Replace and Force, a hub's ArgoCD arriving as a user or a group,
     * and a Rollout's ReplicaSets and Pods; the legitimate writes beside them are admitted, and the
     * real ReplicaSet controller makes the Rollout's Pods. Kyverno's chart filters ReplicaSets out of
     * admission (config.resourceFilters), so the namespace's guard sees them only once the platform
     * drops those filters, as docs/stages/policy.md says; verify's kyverno.resource-filters says so.
     */
    for (const api of ["policies.kyverno.io/v1", "kyverno.io/v1"] as const) {
        it(`regulated-argocd-paths (${api})`, async function () {
            await up({ api, mode: "complement", hub: true });
            const cfg = addonConfig(STACK, target.config);
            const regulated = cfg.policy.regulated;
            assert.ok(
                regulated && regulated.actionServiceAccounts.length > 0 && regulated.gitopsServiceAccounts.length > 0,
                "the shipped preprod stack names no ArgoCD identities",
            );
            const tag = api === "kyverno.io/v1" ? "cp" : "cel";
            const ns = `team-regulated-paths-${tag}`;
            const sa = (a: { namespace: string; name: string }) => `system:serviceaccount:${a.namespace}:${a.name}`;
            const gitops = sa(regulated.gitopsServiceAccounts[0]);
            const server = sa(regulated.actionServiceAccounts[0]);
            const controller = `system:serviceaccount:${cfg.controller.namespace}:argo-rollouts`;
            const deployer = regulated.deployerGroups[0];
            const approver = regulated.approverGroups[0];
            const apply = (obj: unknown) => target.cluster.kubectl(["apply", "--server-side", "--field-manager=platform-e2e", "-f", "-"], JSON.stringify(obj));
            apply({
                apiVersion: "v1",
                kind: "Namespace",
                metadata: { name: ns, labels: { "platform.test/tier": "prod", ...cfg.policy.prodNamespaceLabels, ...regulated.namespaceLabels } },
            });
            // RBAC as a platform might grant it beyond the program's roles (deployers with `edit` on
            // ReplicaSets and Pods, say), so that admission is what decides.
            const writes = ["get", "list", "watch", "create", "update", "patch", "delete"];
            apply({
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "Role",
                metadata: { name: "e2e-workload-writer", namespace: ns },
                rules: [
                    { apiGroups: ["argoproj.io"], resources: ["rollouts", "rollouts/status"], verbs: writes },
                    { apiGroups: ["apps"], resources: ["replicasets", "replicasets/scale"], verbs: writes },
                    { apiGroups: [""], resources: ["pods", "pods/ephemeralcontainers"], verbs: writes },
                ],
            });
            apply({
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "RoleBinding",
                metadata: { name: "e2e-workload-writer", namespace: ns },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "e2e-workload-writer" },
                subjects: [
                    ...[gitops, server, HUB_USER].map((name) => ({ kind: "User", name, apiGroup: "rbac.authorization.k8s.io" })),
                    ...[deployer, approver, HUB_GROUP].map((name) => ({ kind: "Group", name, apiGroup: "rbac.authorization.k8s.io" })),
                ],
            });
            const kubectl = (args: string[], input?: string) =>
                run(path.join(w.bin, "kubectl"), [`--kubeconfig=${target.cluster.kubeconfig}`, ...args], input === undefined ? {} : { input });
            const as = (who: { user: string; group?: string }, args: string[], input?: string) =>
                kubectl([`--as=${who.user}`, ...(who.group ? [`--as-group=${who.group}`] : []), "-n", ns, ...args], input);
            const asGitops = { user: gitops };
            const asServer = { user: server };
            const asController = { user: controller };
            const asDeployer = { user: "deployer@platform.test", group: deployer };
            const asApprover = { user: "approver@platform.test", group: approver };
            const asHubUser = { user: HUB_USER };
            const asHubGroup = { user: "arn:aws:sts::123456789012:assumed-role/argocd-hub/1767225600", group: HUB_GROUP };
            const asGarbageCollector = { user: "system:serviceaccount:kube-system:generic-garbage-collector" };
            const outcomes: string[] = [];
            const expect = (what: string, r: { status: number; stderr: string }, allowed: boolean, message?: string) => {
                const flat = (t: string) => t.replace(/''/g, "'").replace(/\s+/g, " ");
                const ok = allowed ? r.status === 0 : r.status !== 0 && message !== undefined && flat(r.stderr).includes(flat(message));
                if (!ok) {
                    const how = allowed ? "refused" : r.status === 0 ? "admitted" : "refused without the guard's message";
                    outcomes.push(`${what}: ${how}${r.stderr ? `:\n      ${r.stderr.trim().split("\n").join("\n      ")}` : ""}`);
                }
            };
            const kyvernoConfig = JSON.parse(target.cluster.kubectl(["get", "configmap", "kyverno", "-n", "kyverno", "-o", "json"])) as {
                data: Record<string, string>;
            };
            const filters = kyvernoConfig.data.resourceFilters;
            const setFilters = (text: string) =>
                target.cluster.kubectl([
                    "patch",
                    "configmap",
                    "kyverno",
                    "-n",
                    "kyverno",
                    "--type=merge",
                    "-p",
                    JSON.stringify({ data: { resourceFilters: text } }),
                ]);
            try {
                // Kyverno's chart filters ReplicaSets out: verify says so, and what to set.
                assert.ok(filters.includes("[ReplicaSet,*,*]"), `Kyverno's chart no longer filters ReplicaSets: ${filters}`);
                let checked = verify().find((c) => c.id === "kyverno.resource-filters");
                assert.strictEqual(checked?.status, "FAIL", JSON.stringify(checked));
                assert.match(JSON.stringify(checked.findings), /\[ReplicaSet,\*,\*\].*config\.resourceFiltersExclude/);
                // The platform drops them, as the policy stage's page says.
                setFilters(filters.replace("[ReplicaSet,*,*]", "").replace("[ReplicaSet/?*,*,*]", ""));
                checked = verify().find((c) => c.id === "kyverno.resource-filters");
                assert.strictEqual(checked?.status, "PASS", JSON.stringify(checked));
                // Kyverno needs its informers to see the namespace, the RoleBinding and its configuration.
                await new Promise((r) => setTimeout(r, 5_000));
                kyverno.check();

                const rollout = (annotations: Record<string, string> = {}, steps: Json[] = [{ setWeight: 25 }, { pause: {} }, { setWeight: 100 }]) => {
                    const r = sampleRollout({ replicas: Math.max(2, cfg.policy.prodMinReplicas) }, ns);
                    (r.spec.strategy as { canary: Record<string, Json> }).canary.steps = steps;
                    return { ...r, metadata: { ...r.metadata, annotations } };
                };
                const syncApply = (who: typeof asGitops, obj: unknown) =>
                    as(who, ["apply", "--server-side", "--force-conflicts", "--field-manager=argocd-controller", "-f", "-"], JSON.stringify(obj));
                const patch = (who: typeof asGitops, kind: string, name: string, body: unknown, subresource?: string) =>
                    as(who, ["patch", kind, name, "--type=merge", ...(subresource ? [`--subresource=${subresource}`] : []), "-p", JSON.stringify(body)]);
                const options = (value: string) => ({ metadata: { annotations: { "argocd.argoproj.io/sync-options": value } } });

                expect("the GitOps sync identity applies the Rollout", syncApply(asGitops, rollout()), true);
                // The annotations ArgoCD's sync reads from the live object.
                expect(
                    "a deployer sets a sync option on the live Rollout",
                    patch(asDeployer, "rollout", "checkout", options("PruneLast=true")),
                    false,
                    MESSAGES.approvalSyncAnnotations,
                );
                // A CEL policy answers with its first failed validation, a ClusterPolicy with every rule's.
                expect(
                    "a deployer sets Replace=true on it",
                    patch(asDeployer, "rollout", "checkout", options("Replace=true")),
                    false,
                    MESSAGES.approvalSyncAnnotations,
                );
                expect(
                    "ArgoCD's API server sets it (an ArgoCD resource patch)",
                    patch(asServer, "rollout", "checkout", options("Force=true")),
                    false,
                    MESSAGES.approvalSyncAnnotations,
                );
                expect(
                    "ArgoCD's API server changes the sync wave",
                    patch(asServer, "rollout", "checkout", { metadata: { annotations: { "argocd.argoproj.io/sync-wave": "5" } } }),
                    false,
                    MESSAGES.approvalSyncAnnotations,
                );
                expect(
                    "an approver changes the hook annotations",
                    patch(asApprover, "rollout", "checkout", { metadata: { annotations: { "argocd.argoproj.io/hook": "PreSync" } } }),
                    false,
                    MESSAGES.approvalSyncAnnotations,
                );
                expect(
                    "the GitOps sync identity applies a sync option from git",
                    syncApply(asGitops, rollout({ "argocd.argoproj.io/sync-options": "ServerSideApply=true" })),
                    true,
                );
                expect(
                    "the GitOps sync identity applies Replace=true from git",
                    syncApply(asGitops, rollout({ "argocd.argoproj.io/sync-options": "ServerSideApply=true,Replace=true" })),
                    false,
                    MESSAGES.approvalReplaceSync,
                );
                expect(
                    "the GitOps sync identity applies Force=true from git",
                    syncApply(asGitops, rollout({ "argocd.argoproj.io/sync-options": "Force=true" })),
                    false,
                    MESSAGES.approvalReplaceSync,
                );
                // A hub's ArgoCD, as its cluster Secret's user name or group.
                const twoSteps: Json[] = [{ setWeight: 50 }, { pause: {} }, { setWeight: 100 }];
                expect(
                    "a hub's ArgoCD syncs as a user name (policy.regulated.gitopsUsers)",
                    patch(asHubUser, "rollout", "checkout", { spec: { strategy: { canary: { steps: twoSteps } } } }),
                    true,
                );
                expect(
                    "a hub's ArgoCD syncs in a group (policy.regulated.gitopsGroups)",
                    patch(asHubGroup, "rollout", "checkout", {
                        spec: { strategy: { canary: { steps: [{ setWeight: 25 }, { pause: {} }, { setWeight: 100 }] } } },
                    }),
                    true,
                );
                expect(
                    "a deployer still cannot change the steps",
                    patch(asDeployer, "rollout", "checkout", { spec: { strategy: { canary: { steps: twoSteps } } } }),
                    false,
                    MESSAGES.approvalSpec,
                );

                // The Rollout's ReplicaSet, as Argo Rollouts creates it (its controller: the Rollout).
                const owner = JSON.parse(target.cluster.kubectl(["get", "rollout", "checkout", "-n", ns, "-o", "json"])) as { metadata: { uid: string } };
                const hash = "6d4f8b7c9";
                const podTemplate = (image: string, labels: Record<string, string>) => ({
                    metadata: { labels },
                    spec: { ...(sampleRollout({}, ns).spec.template as { spec: Record<string, Json> }).spec, containers: [{ name: "app", image }] },
                });
                const replicaSet = (o: { name?: string; owned?: boolean; image?: string; replicas?: number } = {}) => {
                    const labels = { app: "checkout", "rollouts-pod-template-hash": hash };
                    return {
                        apiVersion: "apps/v1",
                        kind: "ReplicaSet",
                        metadata: {
                            name: o.name ?? `checkout-${hash}`,
                            namespace: ns,
                            labels,
                            ...(o.owned === false
                                ? {}
                                : {
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
                                  }),
                        },
                        spec: {
                            replicas: o.replicas ?? 1,
                            selector: { matchLabels: labels },
                            template: podTemplate(o.image ?? "registry.platform.test/mirror/app:1", labels),
                        },
                    };
                };
                expect("the Rollouts controller creates the Rollout's ReplicaSet", as(asController, ["create", "-f", "-"], JSON.stringify(replicaSet())), true);
                // The real ReplicaSet controller makes its Pod: the guard never stops it.
                let pod = "";
                await waitFor(
                    "the ReplicaSet controller's Pod of the Rollout's ReplicaSet",
                    60_000,
                    () => {
                        kyverno.check();
                        pod = kubectl([
                            "get",
                            "pods",
                            "-n",
                            ns,
                            "-l",
                            `rollouts-pod-template-hash=${hash}`,
                            "-o",
                            "jsonpath={.items[0].metadata.name}",
                        ]).stdout.trim();
                        return pod !== "";
                    },
                    () => kubectl(["get", "events", "-n", ns, "-o", "wide"]).stdout,
                );
                expect(
                    "a deployer edits the ReplicaSet's template",
                    patch(asDeployer, "replicaset", `checkout-${hash}`, {
                        spec: { template: { spec: { containers: [{ name: "app", image: "registry.platform.test/mirror/app:unapproved" }] } } },
                    }),
                    false,
                    MESSAGES.approvalPods,
                );
                expect(
                    "the GitOps sync identity edits it",
                    patch(asGitops, "replicaset", `checkout-${hash}`, { metadata: { labels: { release: "2" } } }),
                    false,
                    MESSAGES.approvalPods,
                );
                expect("a deployer scales it", as(asDeployer, ["scale", "replicaset", `checkout-${hash}`, "--replicas=3"]), false, MESSAGES.approvalPods);
                expect(
                    "a deployer creates a ReplicaSet with the revision's label beside it",
                    as(
                        asDeployer,
                        ["create", "-f", "-"],
                        JSON.stringify(replicaSet({ name: "checkout-extra", owned: false, image: "registry.platform.test/mirror/app:unapproved" })),
                    ),
                    false,
                    MESSAGES.approvalPods,
                );
                expect("the Rollouts controller scales its ReplicaSet", patch(asController, "replicaset", `checkout-${hash}`, { spec: { replicas: 2 } }), true);
                expect(
                    "the garbage collector patches its owner references",
                    as(asGarbageCollector, [
                        "patch",
                        "replicaset",
                        `checkout-${hash}`,
                        "--type=json",
                        "-p",
                        JSON.stringify([{ op: "replace", path: "/metadata/ownerReferences/0/blockOwnerDeletion", value: false }]),
                    ]),
                    true,
                );
                expect(
                    "the Rollouts controller writes the Rollout's status",
                    patch(asController, "rollout", "checkout", { status: { observedGeneration: "2" } }, "status"),
                    true,
                );
                // The Rollout's Pods.
                const bare = {
                    apiVersion: "v1",
                    kind: "Pod",
                    metadata: { name: "checkout-bare", namespace: ns, labels: { app: "checkout", "rollouts-pod-template-hash": hash } },
                    spec: podTemplate("registry.platform.test/mirror/app:unapproved", {}).spec,
                };
                expect(
                    "a deployer creates a Pod wearing the revision's label",
                    as(asDeployer, ["create", "-f", "-"], JSON.stringify(bare)),
                    false,
                    MESSAGES.approvalPods,
                );
                expect(
                    "a deployer relabels one of the Rollout's Pods",
                    patch(asDeployer, "pod", pod, { metadata: { labels: { "rollouts-pod-template-hash": "other" } } }),
                    false,
                    MESSAGES.approvalPods,
                );
                const live = JSON.parse(kubectl(["get", "pod", pod, "-n", ns, "-o", "json"]).stdout) as { spec: Record<string, unknown> };
                const debug = {
                    ...live,
                    spec: {
                        ...live.spec,
                        ephemeralContainers: [{ name: "debugger", image: "registry.platform.test/mirror/debug:1", targetContainerName: "app" }],
                    },
                };
                expect(
                    "a deployer adds an ephemeral container to one",
                    as(asDeployer, ["replace", "--raw", `/api/v1/namespaces/${ns}/pods/${pod}/ephemeralcontainers`, "-f", "-"], JSON.stringify(debug)),
                    false,
                    MESSAGES.approvalPods,
                );
                // The controller updates a Pod's labels with a PUT (rollout/ephemeralmetadata.go: Update), which is all its RBAC allows.
                const labelled = JSON.parse(kubectl(["get", "pod", pod, "-n", ns, "-o", "json"]).stdout) as { metadata: { labels: Record<string, string> } };
                labelled.metadata.labels = { ...labelled.metadata.labels, role: "canary" };
                expect("the Rollouts controller's ephemeral metadata on its Pod", as(asController, ["replace", "-f", "-"], JSON.stringify(labelled)), true);
                // The approval itself.
                expect("the approver's resume (status)", patch(asApprover, "rollout", "checkout", { status: { pauseConditions: null } }, "status"), true);
                expect(
                    "a deployer's resume (status)",
                    patch(asDeployer, "rollout", "checkout", { status: { pauseConditions: null } }, "status"),
                    false,
                    MESSAGES.approvalStatus,
                );
                kyverno.check();
                // verify asks whether the deployers may edit ReplicaSets there: this namespace's Role lets them.
                const rbac = verify().find((c) => c.id === "rbac.deployer-cannot-edit-replicasets");
                assert.strictEqual(rbac?.status, "FAIL", JSON.stringify(rbac));
                assert.match(JSON.stringify(rbac.findings), new RegExp(`may patch replicasets in ${ns}`));
            } finally {
                setFilters(filters);
                target.cluster.kubectl(["delete", "namespace", ns, "--wait=false"]);
            }
            assert.deepStrictEqual(outcomes, [], `regulated ArgoCD paths, ${api}:\n${outcomes.join("\n")}`);
        });
    }

    /** A minimal tenant workload of `kind` (kwok runs its pods; nothing is pulled). */
    function workload(kind: "Rollout" | "Deployment", name: string, ns: string): Record<string, unknown> {
        const labels = { "app.kubernetes.io/name": name };
        const template = {
            metadata: { labels },
            spec: {
                securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: "RuntimeDefault" } },
                containers: [
                    {
                        name: "app",
                        image: "registry.platform.test/mirror/app@sha256:" + "c".repeat(64),
                        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
                    },
                ],
            },
        };
        const spec = { replicas: 2, selector: { matchLabels: labels }, template };
        return kind === "Rollout"
            ? {
                  apiVersion: "argoproj.io/v1alpha1",
                  kind,
                  metadata: { name, namespace: ns },
                  spec: { ...spec, strategy: { canary: { maxSurge: 1, maxUnavailable: 0 } } },
              }
            : { apiVersion: "apps/v1", kind, metadata: { name, namespace: ns }, spec };
    }

    interface PdbView {
        metadata: { name: string; labels?: Record<string, string> };
        spec: { maxUnavailable?: number | string; selector?: LabelSelector };
    }

    for (const api of ["policies.kyverno.io/v1", "kyverno.io/v1"] as const) {
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
            const ns = existing ? "team-pdb-cluster-policy" : "team-pdb-cel";
            const apply = (obj: unknown) =>
                target.cluster.kubectl(["apply", "--server-side", "--field-manager=argocd-controller", "-f", "-"], JSON.stringify(obj));
            apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels: { "platform.test/tier": "dev" } } });
            // A workload another budget already covers gets none of ours.
            apply({
                apiVersion: "policy/v1",
                kind: "PodDisruptionBudget",
                metadata: { name: "team-owned-budget", namespace: ns },
                spec: { maxUnavailable: 1, selector: { matchLabels: { "app.kubernetes.io/name": "covered" } } },
            });
            await new Promise((r) => setTimeout(r, 2_000));
            apply(workload("Rollout", "checkout", ns));
            apply(workload("Deployment", "covered", ns));
            if (existing) {
                await up({ api, mode: "own" });
            }
            const pdbs = () => (JSON.parse(target.cluster.kubectl(["get", "pdb", "-n", ns, "-o", "json"])) as { items: PdbView[] }).items;
            await waitFor(
                "the generated PodDisruptionBudget of the Rollout",
                90_000,
                () => {
                    kyverno.check();
                    return pdbs().some((p) => p.metadata.name === "checkout-pdb");
                },
                () => `${JSON.stringify(pdbs().map((p) => p.metadata.name))}\nbackground log:\n${kyverno.background.log}`,
            );
            // Give the generator time to (wrongly) add one for the covered Deployment too.
            await new Promise((r) => setTimeout(r, 10_000));
            const all = pdbs();
            const forRollout = all.filter((p) => selects(p.spec.selector ?? {}, { "app.kubernetes.io/name": "checkout" }));
            assert.strictEqual(
                forRollout.length,
                1,
                `the Rollout's pods are selected by ${forRollout.length} budgets: ${JSON.stringify(all.map((p) => p.metadata.name))}`,
            );
            assert.strictEqual(
                typeof forRollout[0].spec.maxUnavailable,
                "number",
                `the generated budget's maxUnavailable is ${JSON.stringify(forRollout[0].spec.maxUnavailable)}, not a number of pods`,
            );
            const forCovered = all.filter((p) => selects(p.spec.selector ?? {}, { "app.kubernetes.io/name": "covered" }));
            assert.deepStrictEqual(
                forCovered.map((p) => p.metadata.name),
                ["team-owned-budget"],
                "a workload another budget covers got a generated one as well",
            );
        });
    }

    it("kyverno-generates-pdb (complement)", async function () {
        await up({ api: "policies.kyverno.io/v1", mode: "complement" });
        const ns = "team-pdb-complement";
        const apply = (obj: unknown) => target.cluster.kubectl(["apply", "--server-side", "--field-manager=argocd-controller", "-f", "-"], JSON.stringify(obj));
        apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels: { "platform.test/tier": "dev" } } });
        apply(workload("Rollout", "checkout", ns));
        await new Promise((r) => setTimeout(r, 15_000));
        kyverno.check();
        const generated = (JSON.parse(target.cluster.kubectl(["get", "pdb", "-A", "-l", GENERATED_BY_POLICY, "-o", "json"])) as { items: PdbView[] }).items;
        const ours = generated.filter(
            (p) =>
                p.metadata.labels?.[GENERATED_BY_POLICY] === "generate-workload-pdb" &&
                (p as unknown as { metadata: { namespace: string } }).metadata.namespace === ns,
        );
        assert.deepStrictEqual(
            ours.map((p) => p.metadata.name),
            [],
            "in complement mode this stack generated a budget: the platform's generator owns that",
        );
    });
});
