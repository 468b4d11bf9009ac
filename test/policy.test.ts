import * as assert from "assert";
import {
    ClusterPolicy,
    KYVERNO_AGGREGATE_LABELS,
    MESSAGES,
    POLICY_NAMES,
    PolicyConfig,
    Template,
    ValidatingPolicy,
    allOf,
    KYVERNO_WEBHOOK_TIMEOUT_SECONDS,
    celPolicies,
    clusterPolicies,
    contradiction,
    kyvernoPolicies,
    kyvernoRoles,
    namespaceSelector,
    pdbGenerationRules,
    policyContext,
    ref,
    selects,
    toCel,
    toKyverno,
} from "../components/policy";
import { OfflineRun } from "../tools/offline";
import { validateObject } from "../tools/schemas";
import { byName, hubConfig, merged, planInline, transitiveDeps } from "./harness";
import { Json } from "./kyvernoCel";
import {
    CTX,
    DEV,
    Obj,
    TIER,
    config,
    Outcome,
    PROD,
    REGULATED,
    REGULATED_PROD,
    REPLICASET_SCALE,
    Request,
    hpa,
    pdbObject,
    policyConfig,
    sampleDeployment,
    samplePod,
    sampleReplicaSet,
    sampleRollout,
    sampleStatefulSet,
    scaleOf,
    viaCel,
    viaClusterPolicy,
} from "./admissionModel";
import { applyClusterPolicy, evalJmes, parseJmes, substitute } from "./kyvernoJmes";
import { findWildcards } from "../components/argoRollouts";

// ---------------------------------------------------------------------------------------------
const ENGINES = [
    { label: "policies.kyverno.io/v1", run: viaCel },
    { label: "kyverno.io/v1 ClusterPolicy", run: viaClusterPolicy },
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

    describe("namespace selectors", () => {
        it("AND the tenant selector with the prod or regulated labels and the excluded namespaces", () => {
            const cfg = policyConfig({ regulated: REGULATED });
            const ns = (labels: Record<string, string>, name = "shop") => ({ ...labels, "kubernetes.io/metadata.name": name });
            assert.ok(selects(namespaceSelector(cfg), ns(DEV)));
            assert.ok(!selects(namespaceSelector(cfg), ns({})), "an unlabelled namespace is no tenant's");
            assert.ok(!selects(namespaceSelector(cfg), ns({ [TIER]: "platform" })), "platform namespaces are not tenant namespaces");
            assert.ok(!selects(namespaceSelector(cfg), ns(PROD, "kyverno")), "excluded by name whatever its labels");
            assert.ok(selects(namespaceSelector(cfg, "prod"), ns(PROD)) && !selects(namespaceSelector(cfg, "prod"), ns(DEV)));
            assert.ok(selects(namespaceSelector(cfg, "regulated"), ns(REGULATED_PROD)) && !selects(namespaceSelector(cfg, "regulated"), ns(PROD)));
            assert.ok(selects(namespaceSelector(cfg, "default"), ns({}, "default")) && !selects(namespaceSelector(cfg, "default"), ns(DEV)));
        });

        it("find a label no namespace can satisfy", () => {
            assert.strictEqual(contradiction(allOf({ matchLabels: { a: "1" } }, { matchLabels: { a: "2" } })), "a");
            assert.strictEqual(
                contradiction(allOf({ matchExpressions: [{ key: "a", operator: "In", values: ["1", "2"] }] }, { matchLabels: { a: "2" } })),
                undefined,
            );
            assert.strictEqual(
                contradiction({
                    matchExpressions: [
                        { key: "a", operator: "Exists" },
                        { key: "a", operator: "DoesNotExist" },
                    ],
                }),
                "a",
            );
            assert.strictEqual(
                contradiction({
                    matchExpressions: [
                        { key: "a", operator: "In", values: ["1"] },
                        { key: "a", operator: "NotIn", values: ["1"] },
                    ],
                }),
                "a",
            );
        });
    });

    describe("which policies each mode declares", () => {
        const names = (cfg: PolicyConfig) =>
            [...new Set(kyvernoPolicies(cfg, CTX).map((p) => p.metadata.name.replace(/-(deployment|statefulset|rollout)$/, "")))].sort();
        for (const api of ["policies.kyverno.io/v1", "kyverno.io/v1"]) {
            it(`own: ADR-085's availability policies under their names, the guards and the approval guard (${api})`, () => {
                assert.deepStrictEqual(names(policyConfig({ kyvernoApi: api, regulated: REGULATED })), Object.values(POLICY_NAMES).sort());
            });
            it(`complement: only what ADR-085's policies lack, and never a second PDB generator (${api})`, () => {
                assert.deepStrictEqual(
                    names(policyConfig({ kyvernoApi: api, availabilityPolicies: "complement", regulated: REGULATED })),
                    [
                        POLICY_NAMES.maxSurge,
                        POLICY_NAMES.approval,
                        POLICY_NAMES.approvalPods,
                        POLICY_NAMES.routeNamespace,
                        POLICY_NAMES.tierStandard,
                        POLICY_NAMES.tierRegulated,
                    ].sort(),
                );
                // Without regulated prod, no regulated tier either.
                assert.deepStrictEqual(
                    names(policyConfig({ kyvernoApi: api, availabilityPolicies: "complement" })),
                    [POLICY_NAMES.maxSurge, POLICY_NAMES.routeNamespace, POLICY_NAMES.tierStandard].sort(),
                );
            });
        }
    });

    for (const engine of ENGINES) {
        describe(`in ${engine.label}`, () => {
            const cfg = policyConfig({ regulated: REGULATED });

            it("applies every availability policy and both Rollout guards to a Rollout in a prod namespace", () => {
                assert.deepStrictEqual(
                    engine.run(cfg, { object: sampleRollout(), namespaceLabels: PROD }).applied,
                    [
                        POLICY_NAMES.pdb,
                        POLICY_NAMES.spread,
                        POLICY_NAMES.maxSurge,
                        POLICY_NAMES.replicaFloor,
                        POLICY_NAMES.routeNamespace,
                        POLICY_NAMES.tierStandard,
                    ].sort(),
                );
            });

            it("applies the availability policies but no Rollout guard to a Deployment in a prod namespace", () => {
                assert.deepStrictEqual(
                    engine.run(cfg, { object: sampleDeployment(), namespaceLabels: PROD }).applied,
                    [POLICY_NAMES.pdb, POLICY_NAMES.spread, POLICY_NAMES.replicaFloor].sort(),
                );
            });

            it("applies nothing outside the tenant namespaces, and only the default-namespace refusal in default", () => {
                assert.deepStrictEqual(engine.run(cfg, { object: sampleRollout({}, "tools"), namespaceLabels: {} }).applied, []);
                assert.deepStrictEqual(engine.run(cfg, { object: sampleRollout({}, "kube-system"), namespaceLabels: PROD }).applied, []);
                const inDefault = engine.run(cfg, { object: sampleDeployment({}, "default"), namespaceLabels: {} });
                assert.deepStrictEqual(inDefault.applied, [POLICY_NAMES.defaultNamespace]);
                assert.deepStrictEqual(inDefault.denied, [MESSAGES.defaultNamespace]);
            });

            it("leaves the replica floor out of a namespace not labelled prod", () => {
                assert.ok(!engine.run(cfg, { object: sampleRollout({ replicas: 1 }), namespaceLabels: DEV }).applied.includes(POLICY_NAMES.replicaFloor));
            });

            it("applies the approval guard to a regulated namespace's Rollouts and their status", () => {
                const update = { object: sampleRollout(), oldObject: sampleRollout(), operation: "UPDATE" as const, namespaceLabels: REGULATED_PROD };
                assert.ok(engine.run(cfg, update).applied.includes(POLICY_NAMES.approval));
                assert.ok(engine.run(cfg, { ...update, subResource: "status" }).applied.includes(POLICY_NAMES.approval));
                assert.ok(!engine.run(cfg, { ...update, namespaceLabels: PROD }).applied.includes(POLICY_NAMES.approval));
            });
        });
    }

    describe("same behaviour in both APIs", () => {
        const cfg = policyConfig({ regulated: REGULATED });
        const same = (label: string, r: Request, expect?: Partial<Outcome>) => {
            it(label, () => {
                const cel = viaCel(cfg, r);
                assert.deepStrictEqual(viaClusterPolicy(cfg, r), cel);
                for (const [k, v] of Object.entries(expect ?? {})) {
                    assert.deepStrictEqual(cel[k as keyof Outcome], v, k);
                }
            });
        };
        // A DELETE reaches the ClusterPolicy generator too (no operations filter, so a synchronized
        // budget goes with its workload), never the CEL one: only the verdicts are compared.
        const sameVerdict = (label: string, r: Request, denied: string[]) => {
            it(label, () => {
                const cel = viaCel(cfg, r);
                assert.deepStrictEqual(viaClusterPolicy(cfg, r).denied, cel.denied);
                assert.deepStrictEqual(cel.denied, denied);
                assert.deepStrictEqual([cel.generated, cel.spread], [[], []]);
            });
        };
        const budget = (name: string, selector: Json) => ({
            apiVersion: "policy/v1",
            kind: "PodDisruptionBudget",
            metadata: { name, namespace: "shop" },
            spec: { maxUnavailable: 1, selector },
        });
        const spreadFor = (selector: Json, hash?: string) => [
            ["topology.kubernetes.io/zone", "kubernetes.io/hostname"].map((topologyKey) => ({
                maxSkew: 1,
                topologyKey,
                whenUnsatisfiable: "ScheduleAnyway",
                labelSelector: selector,
                ...(hash ? { matchLabelKeys: [hash] } : {}),
            })),
        ];

        same(
            "a Rollout gets one budget and spread by rollouts-pod-template-hash",
            { object: sampleRollout(), namespaceLabels: DEV },
            {
                generated: [budget("checkout-pdb", { matchLabels: { app: "checkout" } })],
                spread: spreadFor({ matchLabels: { app: "checkout" } }, "rollouts-pod-template-hash"),
                denied: [],
            },
        );
        same(
            "a Deployment spreads by pod-template-hash, a StatefulSet as one set",
            { object: sampleDeployment(), namespaceLabels: DEV },
            { spread: spreadFor({ matchLabels: { app: "web", tier: "front" } }, "pod-template-hash") },
        );
        same(
            "a StatefulSet spreads as one set",
            { object: sampleStatefulSet(), namespaceLabels: DEV },
            { spread: spreadFor({ matchLabels: { app: "web", tier: "front" } }) },
        );
        same(
            "a budget that selects the pods by a subset of their labels suppresses generation",
            {
                object: sampleDeployment(),
                namespaceLabels: DEV,
                objects: { "policy/v1/poddisruptionbudgets": [pdbObject("web-budget", { matchLabels: { app: "web" } })] },
            },
            { generated: [] },
        );
        same(
            "so does one that selects them by expressions, or every pod of the namespace",
            {
                object: sampleDeployment(),
                namespaceLabels: DEV,
                objects: {
                    "policy/v1/poddisruptionbudgets": [
                        pdbObject("front", {
                            matchExpressions: [
                                { key: "tier", operator: "In", values: ["front"] },
                                { key: "canary", operator: "DoesNotExist" },
                            ],
                        }),
                    ],
                },
            },
            { generated: [] },
        );
        same(
            "an empty selector selects every pod",
            { object: sampleDeployment(), namespaceLabels: DEV, objects: { "policy/v1/poddisruptionbudgets": [pdbObject("all", {})] } },
            { generated: [] },
        );
        same(
            "budgets over other pods, over none, or the workload's own do not",
            {
                object: sampleDeployment(),
                namespaceLabels: DEV,
                objects: {
                    "policy/v1/poddisruptionbudgets": [
                        pdbObject("other", { matchLabels: { app: "checkout" } }),
                        pdbObject("not-front", { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["front"] }] }),
                        pdbObject("null-selector"),
                        pdbObject("web-pdb", { matchLabels: { app: "web" } }),
                    ],
                },
            },
            { generated: [budget("web-pdb", { matchLabels: { app: "web", tier: "front" } })] },
        );
        same(
            "a template that spreads already is left alone",
            {
                object: sampleRollout({ template: { metadata: { labels: { app: "checkout" } }, spec: { topologySpreadConstraints: [] } } }),
                namespaceLabels: DEV,
            },
            { spread: [] },
        );

        const omitted = (): Obj => {
            const r = sampleRollout();
            delete r.spec.replicas;
            return r;
        };
        same(
            "the floor admits a prod Rollout that leaves its replicas to an HPA",
            {
                object: omitted(),
                namespaceLabels: PROD,
                objects: { "autoscaling/v2/horizontalpodautoscalers": [hpa({ kind: "Rollout", name: "checkout" }, 2) as unknown as Json] },
            },
            { denied: [] },
        );
        same(
            "the floor refuses a prod Rollout that omits its replicas without an HPA, saying what to set",
            { object: omitted(), namespaceLabels: PROD },
            { denied: [MESSAGES.replicasOmitted(2)] },
        );
        same("an omitted replicas outside prod is left to the controller's default", { object: omitted(), namespaceLabels: DEV }, { denied: [] });
        same(
            "the floor refuses one replica without an HPA",
            { object: sampleRollout({ replicas: 1 }), namespaceLabels: PROD },
            { denied: [MESSAGES.replicaFloor(2)] },
        );
        same(
            "the floor admits one replica an HPA scales",
            {
                object: sampleDeployment({ replicas: 1 }),
                namespaceLabels: PROD,
                objects: { "autoscaling/v2/horizontalpodautoscalers": [hpa({ kind: "Deployment", name: "web" }, 2) as unknown as Json] },
            },
            { denied: [] },
        );
        same(
            "the floor refuses an HPA below it",
            { object: hpa({ kind: "Rollout", name: "checkout" }), namespaceLabels: PROD },
            { denied: [MESSAGES.hpaFloor(2)] },
        );
        same("the floor admits an HPA at it", { object: hpa({ kind: "Rollout", name: "checkout" }, 2), namespaceLabels: PROD }, { denied: [] });

        const elsewhere = sampleRollout();
        (elsewhere.spec.strategy as { canary: { trafficRouting: { plugins: Record<string, Record<string, string>> } } }).canary.trafficRouting.plugins[
            "argoproj-labs/gatewayAPI"
        ].namespace = "payments";
        same("another namespace's route is refused", { object: elsewhere, namespaceLabels: DEV }, { denied: [MESSAGES.routeNamespace] });
        for (const maxSurge of [0, "0%"]) {
            const r = sampleRollout();
            (r.spec.strategy as { canary: Record<string, Json> }).canary.maxSurge = maxSurge;
            same(`maxSurge ${JSON.stringify(maxSurge)} is refused`, { object: r, namespaceLabels: DEV }, { denied: [MESSAGES.maxSurge] });
            // The controller's revision annotation on a Rollout admitted before the guard existed.
            const annotated = sampleRollout();
            (annotated.spec.strategy as { canary: Record<string, Json> }).canary.maxSurge = maxSurge;
            annotated.metadata.annotations = { "rollout.argoproj.io/revision": "2" };
            same(
                `the controller's own update of a maxSurge ${JSON.stringify(maxSurge)} Rollout is never refused`,
                { object: annotated, oldObject: r, operation: "UPDATE", namespaceLabels: DEV, username: "system:serviceaccount:argo-rollouts:argo-rollouts" },
                { denied: [] },
            );
        }

        const approver = { username: "alice", groups: ["release-approvers"] };
        const deployer = { username: "bob", groups: ["shop-deployers"] };
        const regulated = (r: Partial<Request>): Request => ({
            object: sampleRollout(),
            oldObject: sampleRollout(),
            operation: "UPDATE",
            namespaceLabels: REGULATED_PROD,
            ...r,
        });
        // Fewer steps, still the regulated tier's gate and approval: only the approval guard decides.
        const fewerSteps = sampleRollout({
            strategy: {
                canary: {
                    maxSurge: 1,
                    steps: [{ setWeight: 50 }, { pause: {} }, { setWeight: 100 }],
                    analysis: (sampleRollout().spec.strategy as { canary: { analysis: Json } }).canary.analysis,
                },
            },
        });
        same("a deployer's spec change is refused in a regulated namespace", regulated({ object: fewerSteps, ...deployer }), {
            denied: [MESSAGES.approvalSpec],
        });
        same("the GitOps controller's is not", regulated({ object: fewerSteps, username: "system:serviceaccount:argocd:argocd-application-controller" }), {
            denied: [],
        });
        same("an approver unpauses", regulated({ oldObject: sampleRollout({ paused: true }), object: sampleRollout({ paused: false }), ...approver }), {
            denied: [],
        });
        same("a deployer does not", regulated({ oldObject: sampleRollout({ paused: true }), object: sampleRollout({ paused: false }), ...deployer }), {
            denied: [MESSAGES.approvalSpec],
        });
        same("a deployer may pause", regulated({ object: sampleRollout({ paused: true }), ...deployer }), { denied: [] });
        same("a deployer's promote (status) is refused", regulated({ subResource: "status", ...deployer }), { denied: [MESSAGES.approvalStatus] });
        same(
            "an approver in a deployer group cannot promote",
            regulated({ subResource: "status", username: "carol", groups: ["release-approvers", "shop-deployers"] }),
            { denied: [MESSAGES.approvalStatus] },
        );
        same("an approver's promote is admitted", regulated({ subResource: "status", ...approver }), { denied: [] });
        same("ArgoCD's resume action is admitted", regulated({ subResource: "status", username: "system:serviceaccount:argocd:argocd-server" }), {
            denied: [],
        });
        same("the controller is never stopped", regulated({ subResource: "status", username: "system:serviceaccount:argo-rollouts:argo-rollouts" }), {
            denied: [],
        });
        // ArgoCD's API server writes for any user ArgoCD's RBAC lets through: only what the actions write.
        const server = { username: "system:serviceaccount:argocd:argocd-server", groups: ["system:serviceaccounts", "system:serviceaccounts:argocd"] };
        // The CEL guard lets ArgoCD's spec actions through; the ClusterPolicy only its status writes
        // (components/policy/approval.ts: Kyverno v1.17.2 refused the narrower rule in e2e).
        it("ArgoCD's resume (spec.paused) and restart actions: admitted by the CEL guard, refused by the ClusterPolicy", () => {
            for (const r of [
                regulated({ oldObject: sampleRollout({ paused: true }), object: sampleRollout({ paused: false }), ...server }),
                regulated({ object: sampleRollout({ restartAt: "2026-12-01T10:00:00Z" }), ...server }),
            ]) {
                assert.deepStrictEqual(viaCel(cfg, r).denied, []);
                assert.deepStrictEqual(viaClusterPolicy(cfg, r).denied, [MESSAGES.approvalSpec]);
            }
        });
        same("ArgoCD's pause action is admitted", regulated({ object: sampleRollout({ paused: true }), ...server }), { denied: [] });
        same("ArgoCD's resource patch of the steps is refused", regulated({ object: fewerSteps, ...server }), { denied: [MESSAGES.approvalSpec] });
        same(
            "ArgoCD's resource patch of the steps beside an unpause is refused",
            regulated({ oldObject: sampleRollout({ paused: true }), object: { ...fewerSteps, spec: { ...fewerSteps.spec, paused: false } } as Obj, ...server }),
            { denied: [MESSAGES.approvalSpec] },
        );
        same("ArgoCD's server cannot create a Rollout", regulated({ operation: "CREATE", oldObject: undefined, ...server }), {
            denied: [MESSAGES.approvalCreate],
        });
        sameVerdict(
            "nor delete one (ArgoCD's resource delete; selfHeal would recreate it fully promoted)",
            regulated({ operation: "DELETE", oldObject: undefined, ...server }),
            [MESSAGES.approvalDelete],
        );
        same(
            "a deployer's restartAt is a spec change like any other",
            regulated({ object: sampleRollout({ restartAt: "2026-12-01T10:00:00Z" }), ...deployer }),
            { denied: [MESSAGES.approvalSpec] },
        );
        same("a deployer cannot create a Rollout there", regulated({ operation: "CREATE", oldObject: undefined, ...deployer }), {
            denied: [MESSAGES.approvalCreate],
        });
        // GitOps would recreate a deleted Rollout, and its first version skips every step.
        sameVerdict("a deployer cannot delete a Rollout there", regulated({ operation: "DELETE", oldObject: undefined, ...deployer }), [
            MESSAGES.approvalDelete,
        ]);
        sameVerdict("nor can an approver", regulated({ operation: "DELETE", oldObject: undefined, ...approver }), [MESSAGES.approvalDelete]);
        sameVerdict(
            "the GitOps controller may (a prune)",
            regulated({ operation: "DELETE", oldObject: undefined, username: "system:serviceaccount:argocd:argocd-application-controller" }),
            [],
        );
        sameVerdict(
            "so may the namespace's own deletion",
            regulated({
                operation: "DELETE",
                oldObject: undefined,
                namespacePhase: "Terminating",
                username: "system:serviceaccount:kube-system:namespace-controller",
            }),
            [],
        );
        sameVerdict(
            "a delete outside regulated namespaces is not the guard's",
            { object: sampleRollout(), operation: "DELETE", namespaceLabels: DEV, ...deployer },
            [],
        );
        // The annotations ArgoCD's sync reads from the live Rollout (gitops-engine sync_context.go).
        const gitops = { username: "system:serviceaccount:argocd:argocd-application-controller", groups: ["system:serviceaccounts"] };
        const withOptions = (options: string, spec: Record<string, Json> = {}): Obj => ({
            ...sampleRollout(spec),
            metadata: { ...sampleRollout().metadata, annotations: { "argocd.argoproj.io/sync-options": options } },
        });
        it("a deployer cannot give a regulated Rollout a sync option ArgoCD reads from the live object: each ClusterPolicy rule says why, a CEL policy its first failed validation", () => {
            const r = regulated({ object: withOptions("Replace=true"), ...deployer });
            assert.deepStrictEqual(viaCel(cfg, r).denied, [MESSAGES.approvalSyncAnnotations]);
            assert.deepStrictEqual(viaClusterPolicy(cfg, r).denied, [MESSAGES.approvalReplaceSync, MESSAGES.approvalSyncAnnotations].sort());
        });
        same("nor change it to one that only looks harmless", regulated({ object: withOptions("PruneLast=true"), ...deployer }), {
            denied: [MESSAGES.approvalSyncAnnotations],
        });
        same("nor can ArgoCD's resource patch or an approver", regulated({ object: withOptions("Prune=false"), ...server }), {
            denied: [MESSAGES.approvalSyncAnnotations],
        });
        same(
            "an approver's hook annotation on the live object is refused too",
            regulated({
                object: { ...sampleRollout(), metadata: { ...sampleRollout().metadata, annotations: { "helm.sh/hook": "pre-install" } } },
                ...approver,
            }),
            { denied: [MESSAGES.approvalSyncAnnotations] },
        );
        same(
            "other annotations stay free",
            regulated({
                object: { ...sampleRollout(), metadata: { ...sampleRollout().metadata, annotations: { "team.example/owner": "shop" } } },
                ...deployer,
            }),
            { denied: [] },
        );
        same("the GitOps controller changes the sync options git holds", regulated({ object: withOptions("ServerSideApply=true"), ...gitops }), { denied: [] });
        same("but never to Replace=true or Force=true, from git either", regulated({ object: withOptions("ServerSideApply=true, Force=true"), ...gitops }), {
            denied: [MESSAGES.approvalReplaceSync],
        });
        same("nor creates a Rollout with them", regulated({ operation: "CREATE", oldObject: undefined, object: withOptions("Replace=true"), ...gitops }), {
            denied: [MESSAGES.approvalReplaceSync],
        });
        same("Replace=false is no replace", regulated({ object: withOptions("Replace=false"), ...gitops }), { denied: [] });
        same(
            "an approver's status write to a Rollout that carries them is no sync option",
            regulated({ oldObject: withOptions("Replace=true"), object: withOptions("Replace=true"), subResource: "status", ...approver }),
            { denied: [] },
        );
        it("lets a stack allow Replace and Force, and keeps the annotations the GitOps controller's", () => {
            const allowing = policyConfig({ regulated: { ...REGULATED, allowReplaceOrForceSync: true } });
            for (const via of [viaCel, viaClusterPolicy]) {
                assert.deepStrictEqual(via(allowing, regulated({ object: withOptions("Replace=true"), ...gitops })).denied, [], via.name);
                assert.deepStrictEqual(
                    via(allowing, regulated({ object: withOptions("Replace=true"), ...deployer })).denied,
                    [MESSAGES.approvalSyncAnnotations],
                    via.name,
                );
            }
        });
        it("takes the GitOps identity as a hub's ArgoCD arrives: a user name or a group", () => {
            const hub = policyConfig({
                regulated: { ...REGULATED, gitopsServiceAccounts: [], gitopsUsers: ["argocd-hub"], gitopsGroups: ["platform:argocd-hub"] },
            });
            for (const via of [viaCel, viaClusterPolicy]) {
                assert.deepStrictEqual(via(hub, regulated({ object: fewerSteps, username: "argocd-hub" })).denied, [], via.name);
                assert.deepStrictEqual(
                    via(
                        hub,
                        regulated({
                            object: fewerSteps,
                            username: "arn:aws:sts::123456789012:assumed-role/argocd-hub/1767225600",
                            groups: ["platform:argocd-hub", "system:authenticated"],
                        }),
                    ).denied,
                    [],
                    via.name,
                );
                assert.deepStrictEqual(via(hub, regulated({ operation: "CREATE", oldObject: undefined, username: "argocd-hub" })).denied, [], via.name);
                assert.deepStrictEqual(
                    via(hub, regulated({ object: fewerSteps, ...gitops })).denied,
                    [MESSAGES.approvalSpec],
                    `${via.name}: a ServiceAccount no longer named`,
                );
                assert.deepStrictEqual(
                    via(hub, regulated({ object: withOptions("PruneLast=true"), username: "someone", groups: ["platform:argocd-hub"] })).denied,
                    [],
                    via.name,
                );
            }
        });

        // A regulated Rollout's ReplicaSets and Pods: only Argo Rollouts and Kubernetes' workload controllers write them.
        const inRegulated = (r: Partial<Request> & { object: Obj }): Request => ({ operation: "UPDATE", namespaceLabels: REGULATED_PROD, ...r });
        const rs = sampleReplicaSet();
        const rollouts = { username: "system:serviceaccount:argo-rollouts:argo-rollouts", groups: ["system:serviceaccounts"] };
        same(
            "a deployer's edit of a Rollout's ReplicaSet template is refused",
            inRegulated({ object: sampleReplicaSet({ image: "registry.test.example/app:unapproved" }), oldObject: rs, ...deployer }),
            { denied: [MESSAGES.approvalPods] },
        );
        same(
            "so is a ReplicaSet created beside the Rollout with its revision label",
            inRegulated({ operation: "CREATE", object: sampleReplicaSet({ owned: false }), ...deployer }),
            { denied: [MESSAGES.approvalPods] },
        );
        same("or owned by it", inRegulated({ operation: "CREATE", object: sampleReplicaSet({ labelled: false }), ...deployer }), {
            denied: [MESSAGES.approvalPods],
        });
        same(
            "or whose pods would wear the label (a Deployment's controller would make them)",
            inRegulated({
                operation: "CREATE",
                object: sampleReplicaSet({ owned: false, labelled: false, templateLabelled: true }),
                username: "system:serviceaccount:kube-system:deployment-controller",
            }),
            { denied: [MESSAGES.approvalPods] },
        );
        same(
            "dropping the owner and the label from one is a change of it",
            inRegulated({ object: sampleReplicaSet({ owned: false, labelled: false }), oldObject: rs, ...approver }),
            { denied: [MESSAGES.approvalPods] },
        );
        same(
            "a ReplicaSet of no Rollout is not the guard's",
            inRegulated({
                operation: "CREATE",
                object: sampleReplicaSet({ owned: false, labelled: false }),
                username: "system:serviceaccount:kube-system:deployment-controller",
            }),
            { denied: [] },
        );
        same(
            "a deployer's scale of a ReplicaSet is refused",
            inRegulated({ object: scaleOf(rs, 10), oldObject: scaleOf(rs, 3), subResource: "scale", resourceKind: REPLICASET_SCALE, ...deployer }),
            { denied: [MESSAGES.approvalPods] },
        );
        same(
            "Argo Rollouts creates, changes and scales its ReplicaSets",
            inRegulated({ object: sampleReplicaSet({ image: "registry.test.example/app:2" }), oldObject: rs, ...rollouts }),
            { denied: [] },
        );
        same(
            "the garbage collector patches their owner references",
            inRegulated({ object: sampleReplicaSet({ owned: false }), oldObject: rs, username: "system:serviceaccount:kube-system:generic-garbage-collector" }),
            { denied: [] },
        );
        same(
            "the ReplicaSet controller creates their Pods",
            inRegulated({ operation: "CREATE", object: samplePod(), username: "system:serviceaccount:kube-system:replicaset-controller" }),
            { denied: [] },
        );
        same(
            "so does kube-controller-manager under its own identity",
            inRegulated({ operation: "CREATE", object: samplePod(), username: "system:kube-controller-manager" }),
            { denied: [] },
        );
        same("a deployer's Pod wearing a revision's label is refused", inRegulated({ operation: "CREATE", object: samplePod(), ...deployer }), {
            denied: [MESSAGES.approvalPods],
        });
        same(
            "and so is an ephemeral container in a Rollout's Pod",
            inRegulated({
                object: samplePod({ ephemeral: "registry.test.example/debug:1" }),
                oldObject: samplePod(),
                subResource: "ephemeralcontainers",
                ...deployer,
            }),
            { denied: [MESSAGES.approvalPods] },
        );
        same("or taking the label off one", inRegulated({ object: samplePod({ labelled: false }), oldObject: samplePod(), ...deployer }), {
            denied: [MESSAGES.approvalPods],
        });
        same(
            "Argo Rollouts' ephemeral metadata on its Pods is admitted",
            inRegulated({
                object: { ...samplePod(), metadata: { ...samplePod().metadata, labels: { ...samplePod().metadata.labels, role: "canary" } } },
                oldObject: samplePod(),
                ...rollouts,
            }),
            { denied: [] },
        );
        same("a Pod of no Rollout is not the guard's", inRegulated({ operation: "CREATE", object: samplePod({ labelled: false }), ...deployer }), {
            denied: [],
        });
        same(
            "outside regulated namespaces the ReplicaSets are nobody's to guard",
            {
                operation: "UPDATE",
                namespaceLabels: PROD,
                object: sampleReplicaSet({ image: "registry.test.example/app:unapproved" }),
                oldObject: rs,
                ...deployer,
            },
            { denied: [] },
        );
    });

    describe("the ClusterPolicy engine restated for the tests", () => {
        it("lets an update through when the old object failed the same enforced rule, unless the rule says allowExistingViolations: false, as Kyverno does; the approval guards judge the request (e2e regulated-argocd-paths)", () => {
            const cfg = policyConfig({ kyvernoApi: "kyverno.io/v1", regulated: REGULATED });
            const guards = clusterPolicies(cfg, CTX).filter((p) => p.metadata.name === POLICY_NAMES.approval || p.metadata.name === POLICY_NAMES.approvalPods);
            for (const r of guards
                .flatMap((p) => p.spec.rules)
                .filter((x) => ["CREATE", "UPDATE"].every((o) => x.match.any[0].resources.operations?.includes(o)))) {
                assert.strictEqual(r.validate?.allowExistingViolations, false, `${r.name} lets a pre-existing violation through`);
            }
            const pods = guards.find((p) => p.metadata.name === POLICY_NAMES.approvalPods)!;
            const edit = {
                object: sampleReplicaSet({ image: "registry.test.example/app:unapproved" }) as unknown as Json,
                oldObject: sampleReplicaSet() as unknown as Json,
                operation: "UPDATE" as const,
                namespaceLabels: REGULATED_PROD,
                username: "bob",
                groups: ["shop-deployers"],
            };
            assert.deepStrictEqual(
                applyClusterPolicy(pods, edit).map((o) => o.denied),
                [MESSAGES.approvalPods],
            );
            const lenient = {
                ...pods,
                spec: { ...pods.spec, rules: pods.spec.rules.map((r) => ({ ...r, validate: { ...r.validate!, allowExistingViolations: undefined } })) },
            };
            assert.deepStrictEqual(applyClusterPolicy(lenient, edit), [], "Kyverno's default lets the edit of an already labelled ReplicaSet through");
        });

        it("evaluates Kyverno's JMESPath: filters, defaults for missing keys, functions", () => {
            const doc = { items: [{ a: { b: 1 } }, { a: {} }, { c: 2 }] } as Json;
            assert.deepStrictEqual(evalJmes(parseJmes("items[?a.b == `1`] | length(@)"), doc), 1);
            assert.deepStrictEqual(evalJmes(parseJmes("items[?a.b || `0`].a"), doc), [{ b: 1 }, {}]);
            assert.throws(() => evalJmes(parseJmes("items.x.y"), { items: { x: {} } } as Json), /y/);
            assert.strictEqual(evalJmes(parseJmes('label_match(`{"a":"1"}`, `{"a":"1","b":"2"}`)'), null), true);
            assert.strictEqual(evalJmes(parseJmes('lookup(`{"a":"1"}`, \'b\') == `null`'), null), true);
            assert.deepStrictEqual(
                substitute('{{ request.object.spec | merge(@, `{"paused": null}`) }}', { request: { object: { spec: { paused: true, x: 1 } } } }),
                { paused: null, x: 1 },
            );
            assert.strictEqual(substitute("n-{{ request.name }}", { request: { name: "a" } }), "n-a");
        });
    });

    describe("both APIs as written", () => {
        it("enforce or only audit, as configured", () => {
            const audit = policyConfig({ validationAction: "Audit", regulated: REGULATED });
            for (const p of celPolicies(audit, CTX).filter((x): x is ValidatingPolicy => x.kind === "ValidatingPolicy")) {
                assert.deepStrictEqual(p.spec.validationActions, ["Audit", "Warn"]);
            }
            for (const p of clusterPolicies(audit, CTX).filter((x) => x.spec.rules.some((r) => r.validate))) {
                assert.strictEqual(p.spec.validationFailureAction, "Audit");
                assert.ok(p.spec.rules.every((r) => r.validate?.failureAction === "Audit"));
            }
        });

        it("let mutations fail open unless the platform asks otherwise; validations always fail closed", () => {
            const spread = (cfg: PolicyConfig) => clusterPolicies(cfg, CTX).find((p) => p.metadata.name === POLICY_NAMES.spread)!;
            // Only webhookConfiguration: Kyverno refuses a ClusterPolicy that also sets the deprecated
            // spec.failurePolicy (api/kyverno/v1 spec_types.go validateDeprecatedFields; e2e kyverno-ready).
            assert.ok(!("failurePolicy" in spread(policyConfig()).spec));
            assert.deepStrictEqual(spread(policyConfig()).spec.webhookConfiguration, { failurePolicy: "Ignore" });
            assert.strictEqual(spread(policyConfig({ mutationFailurePolicy: "Fail" })).spec.webhookConfiguration?.failurePolicy, "Fail");
            assert.ok(celPolicies(policyConfig(), CTX).every((p) => p.kind !== "ValidatingPolicy" || p.spec.failurePolicy === "Fail"));
        });

        it("write Rollout in its own ClusterPolicy rule, named by GVK, never through autogen (Kyverno #7446)", () => {
            for (const p of clusterPolicies(policyConfig({ regulated: REGULATED }), CTX)) {
                for (const r of p.spec.rules) {
                    assert.strictEqual(r.match.any.length, 1);
                    assert.strictEqual(r.match.any[0].resources.kinds.length, 1, `${p.metadata.name}/${r.name} mixes kinds`);
                }
                // The ReplicaSet and Pod guard matches what a Rollout runs on, never a Rollout.
                const kinds = p.metadata.name === POLICY_NAMES.approvalPods ? ["apps/v1/ReplicaSet", "v1/Pod"] : ["argoproj.io/v1alpha1/Rollout"];
                assert.ok(
                    p.spec.rules.some((r) => kinds.some((k) => r.match.any[0].resources.kinds[0].startsWith(k))),
                    `${p.metadata.name} has no rule for ${kinds.join(" or ")}`,
                );
            }
        });

        it("run the approval guard at admission only: background scans have no user", () => {
            const cp = clusterPolicies(policyConfig({ kyvernoApi: "kyverno.io/v1", regulated: REGULATED }), CTX).find(
                (p) => p.metadata.name === POLICY_NAMES.approval,
            ) as ClusterPolicy;
            assert.strictEqual(cp.spec.background, false);
            assert.ok(cp.spec.rules.some((r) => r.match.any[0].resources.kinds[0] === "argoproj.io/v1alpha1/Rollout/status"));
        });
    });

    describe("schemas", () => {
        for (const api of ["policies.kyverno.io/v1", "kyverno.io/v1"]) {
            for (const mode of ["own", "complement"]) {
                it(`every ${api} policy in ${mode} mode, regulated, matches its CRD's schema`, () => {
                    for (const p of kyvernoPolicies(
                        policyConfig({ kyvernoApi: api, availabilityPolicies: mode, regulated: REGULATED, mutationFailurePolicy: "Fail" }),
                        CTX,
                    )) {
                        const result = validateObject(p as unknown as Record<string, unknown>);
                        // No CommonJS model package covers policies.kyverno.io/v1: the API server validates it against its CRD.
                        assert.strictEqual(result.via, api === "kyverno.io/v1" ? "package" : "none");
                        assert.deepStrictEqual(result.problems, [], `${p.kind} ${p.metadata.name}`);
                    }
                });
            }
        }
    });

    describe("Kyverno's RBAC", () => {
        it("grants read on Rollouts to the background and reports controllers in both modes, read-only", () => {
            for (const mode of ["own", "complement"]) {
                const read = kyvernoRoles(policyConfig({ availabilityPolicies: mode })).find((r) => r.name === "read-rollouts")!;
                assert.deepStrictEqual(read.controllers, ["background", "reports"]);
                assert.deepStrictEqual(read.rules, [{ apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: ["get", "list", "watch"] }]);
            }
        });

        it("grants PDB writes and the lookups' reads only when this program generates and looks up", () => {
            assert.deepStrictEqual(
                kyvernoRoles(policyConfig()).map((r) => r.name),
                ["read-rollouts", "generate-pdb", "read-policy-lookups"],
            );
            assert.deepStrictEqual(
                kyvernoRoles(policyConfig({ availabilityPolicies: "complement" })).map((r) => r.name),
                ["read-rollouts"],
            );
            const lookups = kyvernoRoles(policyConfig()).find((r) => r.name === "read-policy-lookups")!;
            assert.ok(lookups.rules.every((r) => r.verbs.join() === "get,list,watch"));
        });

        it("gives every CEL policy a webhook of its own, so Kyverno 1.17/1.18 call each for its own namespaces (e2e kyverno-webhook-selectors)", () => {
            for (const mode of ["own", "complement"] as const) {
                const policies = celPolicies(policyConfig({ availabilityPolicies: mode, regulated: REGULATED }), CTX);
                assert.ok(policies.length > 0);
                for (const p of policies) {
                    // Any of matchConditions, an Exact matchPolicy or a timeout makes Kyverno build a
                    // fine-grained webhook (pkg/controllers/webhook/validating.go buildWebhookRules);
                    // the timeout is the one that changes nothing else.
                    assert.deepStrictEqual(
                        (p.spec as { webhookConfiguration?: unknown }).webhookConfiguration,
                        { timeoutSeconds: KYVERNO_WEBHOOK_TIMEOUT_SECONDS },
                        p.metadata.name,
                    );
                }
            }
            assert.strictEqual(KYVERNO_WEBHOOK_TIMEOUT_SECONDS, 10);
        });

        it("does not synchronize the CEL PDB generator, which on Kyverno 1.17/1.18 would delete every budget when one workload is covered (e2e kyverno-generates-pdb)", () => {
            const gpol = celPolicies(policyConfig({ availabilityPolicies: "own" }), CTX).find((p) => p.kind === "GeneratingPolicy")!;
            assert.strictEqual(gpol.metadata.name, POLICY_NAMES.pdb);
            assert.deepStrictEqual((gpol.spec as { evaluation: unknown }).evaluation, { synchronize: { enabled: false }, generateExisting: { enabled: true } });
        });

        it("lets the reports controller read the subresources the CEL approval guards match (e2e kyverno-ready)", () => {
            const status = (cfg: PolicyConfig) => kyvernoRoles(cfg).find((r) => r.name === "read-approval-subresources");
            const role = status(policyConfig({ regulated: REGULATED }));
            assert.ok(role, "no read-approval-subresources role with policy.regulated");
            assert.deepStrictEqual(role.controllers, ["reports"]);
            assert.deepStrictEqual(role.rules, [
                { apiGroups: ["argoproj.io"], resources: ["rollouts/status"], verbs: ["get", "list", "watch"] },
                { apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["get", "list", "watch"] },
            ]);
            // It follows what the guard matches: no guard, or a ClusterPolicy (checked by no such controller), no role.
            assert.strictEqual(status(policyConfig()), undefined);
            assert.strictEqual(status(policyConfig({ regulated: REGULATED, kyvernoApi: "kyverno.io/v1" })), undefined);
            const guard = celPolicies(policyConfig({ regulated: REGULATED }), CTX).find((p) => p.metadata.name === POLICY_NAMES.approval)!;
            const matched = (guard.spec as { matchConstraints: { resourceRules: { resources: string[] }[] } }).matchConstraints.resourceRules.flatMap(
                (r) => r.resources,
            );
            assert.ok(matched.includes("rollouts/status"), `the guard no longer matches rollouts/status: ${matched.join(", ")}`);
            // Every subresource the guards match is in the role, or in `view` (replicasets/scale).
            const guards = celPolicies(policyConfig({ regulated: REGULATED }), CTX).filter(
                (p) => p.metadata.name === POLICY_NAMES.approval || p.metadata.name === POLICY_NAMES.approvalPods,
            );
            const subresources = guards
                .flatMap((g) =>
                    (g.spec as { matchConstraints: { resourceRules: { resources: string[] }[] } }).matchConstraints.resourceRules.flatMap((r) => r.resources),
                )
                .filter((r) => r.includes("/"));
            assert.deepStrictEqual(
                subresources.filter((r) => r !== "replicasets/scale" && !role.rules.some((x) => x.resources.includes(r))),
                [],
            );
        });
    });

    describe("declared resources", () => {
        let run: OfflineRun;
        let legacy: OfflineRun;
        let complement: OfflineRun;
        before(async () => {
            run = await planInline(merged(hubConfig(), { policy: { regulated: REGULATED } }), { stack: "hub" });
            legacy = await planInline(merged(hubConfig(), { policy: { kyvernoApi: "kyverno.io/v1", regulated: REGULATED } }), { stack: "hub" });
            complement = await planInline(merged(hubConfig(), { policy: { availabilityPolicies: "complement" } }), { stack: "hub" });
        });

        const policiesOf = (r: OfflineRun) => r.resources.filter((x) => x.stage === "policy" && /^kubernetes:(policies\.)?kyverno\.io\//.test(x.type));

        it("declares the CEL policies by default and ClusterPolicies when switched, named explicitly", () => {
            assert.deepStrictEqual(
                policiesOf(run)
                    .map((p) => p.type)
                    .sort(),
                [
                    "kubernetes:policies.kyverno.io/v1:GeneratingPolicy",
                    ...Array(3).fill("kubernetes:policies.kyverno.io/v1:MutatingPolicy"),
                    ...Array(8).fill("kubernetes:policies.kyverno.io/v1:ValidatingPolicy"),
                ],
            );
            assert.deepStrictEqual(
                policiesOf(legacy).map((p) => p.type),
                Array(10).fill("kubernetes:kyverno.io/v1:ClusterPolicy"),
            );
            assert.deepStrictEqual(
                policiesOf(complement)
                    .map((p) => (p.inputs as { metadata: { name: string } }).metadata.name)
                    .sort(),
                [POLICY_NAMES.maxSurge, POLICY_NAMES.tierStandard, POLICY_NAMES.routeNamespace],
            );
            assert.deepStrictEqual(
                policiesOf(run)
                    .map((p) => (p.inputs as { metadata: { name: string } }).metadata.name)
                    .sort(),
                kyvernoPolicies(config({ policy: { regulated: REGULATED } }).policy, policyContext(config({ policy: { regulated: REGULATED } })))
                    .map((p) => p.metadata.name)
                    .sort(),
            );
        });

        it("makes every policy wait for the Rollout CRDs and for Kyverno's RBAC", () => {
            const crds = byName(run, "rollouts-crds");
            const roles = ["kyverno-read-rollouts", "kyverno-generate-pdb", "kyverno-read-policy-lookups"].map((n) => byName(run, n).urn);
            for (const p of policiesOf(run)) {
                const deps = transitiveDeps(run, p.urn);
                assert.ok(deps.has(crds.urn), `${p.name} does not wait for the CRDs (Kyverno #7839)`);
                assert.ok(
                    roles.every((r) => p.dependsOn.includes(r)),
                    `${p.name} does not wait for Kyverno's RBAC`,
                );
            }
        });

        it("labels each role for the controllers that need it, with no wildcard", () => {
            const role = byName(run, "kyverno-generate-pdb");
            const inputs = role.inputs as {
                metadata: { name: string; labels: Record<string, string> };
                rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
            };
            assert.strictEqual(inputs.metadata.labels[KYVERNO_AGGREGATE_LABELS.background], "true");
            assert.strictEqual(inputs.metadata.labels[KYVERNO_AGGREGATE_LABELS.admission], undefined);
            assert.deepStrictEqual(inputs.rules, pdbGenerationRules());
            const read = byName(run, "kyverno-read-rollouts").inputs as { metadata: { labels: Record<string, string> } };
            assert.strictEqual(read.metadata.labels[KYVERNO_AGGREGATE_LABELS.reports], "true");
            assert.ok(!Object.keys(read.metadata.labels).some((l) => l.includes("aggregate-to-view") || l.includes("aggregate-to-edit")));
            for (const r of run.resources.filter((x) => x.stage === "policy" && x.type === "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")) {
                assert.deepStrictEqual(findWildcards((r.inputs as { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] }).rules), []);
            }
            assert.throws(() => byName(complement, "kyverno-generate-pdb"), /found 0/);
        });

        it("names the rollouts controller's ServiceAccount as the one the approval guard lets through", () => {
            const guard = policiesOf(run).find((p) => (p.inputs as { metadata: { name: string } }).metadata.name === POLICY_NAMES.approval)!;
            assert.match(JSON.stringify(guard.inputs), /system:serviceaccount:argo-rollouts:argo-rollouts/);
        });

        it("sends the generated body unchanged", () => {
            const gen = policiesOf(run).find((p) => p.type.endsWith(":GeneratingPolicy"))!;
            assert.deepStrictEqual(gen.inputs.spec, celPolicies(config().policy, CTX).find((p) => p.kind === "GeneratingPolicy")!.spec);
        });
    });
});
