import * as assert from "assert";
import { parseAddonConfig } from "../stacks/config";
import { PolicyConfig } from "../components/policy";
import { CelPolicy, MESSAGES, POLICY_NAMES, PolicyContext, ValidatingPolicy, celPolicies } from "../components/policy";
import { Admission, FakeCluster, Json, REQUEST_TYPE, admit, checkExpression, checkPolicy, sites } from "./kyvernoCel";
import { hubConfig, merged, withRegulatedArgoRbac } from "./harness";

// ---------------------------------------------------------------------------------------------
// Configurations and samples.

const REGULATED = {
    namespaceLabels: { "platform.test/class": "regulated" },
    approverGroups: ["release-approvers"],
    deployerGroups: ["shop-deployers"],
    gitopsServiceAccounts: ["argocd/argocd-application-controller"],
    actionServiceAccounts: ["argocd/argocd-server"],
};

function policyConfig(patch: Record<string, unknown> = {}): PolicyConfig {
    const { "aws:region": _region, ...rest } = merged(hubConfig(), { policy: patch });
    return parseAddonConfig("hub", withRegulatedArgoRbac(rest), { awsRegion: "eu-west-1" }).policy;
}

const CTX: PolicyContext = { rolloutsController: { namespace: "argo-rollouts", name: "argo-rollouts" } };
const CONTROLLER = "system:serviceaccount:argo-rollouts:argo-rollouts";
const ARGOCD_SYNC = "system:serviceaccount:argocd:argocd-application-controller";
const ARGOCD_SERVER = "system:serviceaccount:argocd:argocd-server";

const VARIANTS: [string, PolicyConfig][] = [
    ["defaults", policyConfig()],
    ["own, regulated, no deployer groups", policyConfig({ regulated: { ...REGULATED, deployerGroups: [] } })],
    ["own, regulated", policyConfig({ regulated: REGULATED, prodMinReplicas: 3, pdbMaxUnavailable: 2, topologyKeys: ["topology.kubernetes.io/zone"] })],
    ["complement, regulated", policyConfig({ availabilityPolicies: "complement", regulated: REGULATED })],
];

const named = (cfg: PolicyConfig, name: string): CelPolicy => {
    const found = celPolicies(cfg, CTX).find((p) => p.metadata.name === name);
    assert.ok(found, `no policy ${name}`);
    return found;
};

type Obj = {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: Record<string, Json>;
};

function rollout(spec: Record<string, Json> = {}, name = "checkout"): Obj {
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Rollout",
        metadata: { name, namespace: "shop" },
        spec: {
            replicas: 3,
            selector: { matchLabels: { app: name } },
            template: { metadata: { labels: { app: name, team: "shop" } }, spec: { containers: [{ name, image: `registry.platform.test/${name}:1` }] } },
            strategy: {
                canary: {
                    maxSurge: 1,
                    steps: [{ setWeight: 25 }, { pause: {} }, { setWeight: 100 }],
                    trafficRouting: { plugins: { "argoproj-labs/gatewayAPI": { httpRoute: name, namespace: "shop" } } },
                },
            },
            ...spec,
        },
    };
}

function deployment(spec: Record<string, Json> = {}): Obj {
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: "shop" },
        spec: {
            replicas: 2,
            selector: { matchLabels: { app: "web", tier: "front" } },
            template: { metadata: { labels: { app: "web", tier: "front" } }, spec: {} },
            ...spec,
        },
    };
}

function pdb(name: string, selector: Json | undefined, namespace = "shop"): Json {
    return {
        apiVersion: "policy/v1",
        kind: "PodDisruptionBudget",
        metadata: { name, namespace },
        spec: { maxUnavailable: 1, ...(selector === undefined ? {} : { selector }) },
    };
}

function hpa(target: { kind: string; name: string }, minReplicas?: number): Obj {
    return {
        apiVersion: "autoscaling/v2",
        kind: "HorizontalPodAutoscaler",
        metadata: { name: `${target.name}-hpa`, namespace: "shop" },
        spec: { scaleTargetRef: { apiVersion: "argoproj.io/v1alpha1", ...target }, maxReplicas: 10, ...(minReplicas === undefined ? {} : { minReplicas }) },
    };
}

const create = (object: Obj, extra: Partial<Admission> = {}): Admission => ({ object: object as unknown as Json, operation: "CREATE", ...extra });

describe("Kyverno CEL policies, type-checked and evaluated", () => {
    describe("the static rules of cel-go's checker", () => {
        const env = {
            idents: { resource: { k: "opaque", name: "resource.Context" } as const, object: { k: "dyn" } as const, request: REQUEST_TYPE },
            types: {},
        };

        it("refuses a library result typed Any as a comprehension range, and accepts it through dyn()", () => {
            const bad = checkExpression('resource.List("policy/v1", "poddisruptionbudgets", "shop").items.exists(p, true)', env);
            assert.deepStrictEqual(bad.problems, [
                "expression of type 'google.protobuf.Any' cannot be range of a comprehension (must be list, map, or dynamic)",
            ]);
            assert.deepStrictEqual(checkExpression('dyn(resource.List("policy/v1", "poddisruptionbudgets", "shop").items).exists(p, true)', env).problems, []);
            // Selecting from an Any is allowed (it yields dyn): only the iteration is refused.
            assert.deepStrictEqual(checkExpression('resource.List("policy/v1", "poddisruptionbudgets", "shop").items.size() >= 0', env).problems, []);
        });

        it("refuses a library call with the wrong arguments, and a mixed aggregate literal", () => {
            assert.match(
                checkExpression('resource.List("policy/v1", "poddisruptionbudgets")', env).problems.join(),
                /no matching overload for 'resource.Context.List'/,
            );
            assert.match(checkExpression('{"a": 1, "b": "x"}', env).problems.join(), /type mismatch/);
            assert.match(checkExpression("request.userInfo.group", env).problems.join(), /undefined field 'group'/);
        });

        it("caught the generator that never compiled: the previous generate-workload-pdb iterated resource.List(...).items", () => {
            const previous =
                'resource.List("policy/v1", "poddisruptionbudgets", object.metadata.namespace).items.exists(p, p.metadata.name != "x" && has(p.spec.selector) && ' +
                "has(p.spec.selector.matchLabels) && dyn(p.spec.selector.matchLabels) == dyn(object.spec.selector.matchLabels))";
            assert.match(checkExpression(previous, env).problems.join(), /google.protobuf.Any' cannot be range of a comprehension/);
        });

        for (const [label, cfg] of VARIANTS) {
            it(`finds nothing to refuse in any emitted policy (${label})`, () => {
                const policies = celPolicies(cfg, CTX);
                assert.ok(policies.length > 0);
                assert.deepStrictEqual(policies.flatMap(checkPolicy), []);
                // Every expression is parsed: checkPolicy saw them all.
                assert.ok(policies.flatMap(sites).length >= policies.length);
            });
        }

        it("keeps Kyverno's libraries and variables out of match conditions: the API server evaluates them too", () => {
            for (const p of celPolicies(policyConfig({ regulated: REGULATED }), CTX)) {
                for (const m of p.spec.matchConditions ?? []) {
                    assert.doesNotMatch(m.expression, /\b(resource|generator|variables)\./, `${p.metadata.name} ${m.name}`);
                }
            }
        });
    });

    describe("generate-workload-pdb", () => {
        const cfg = policyConfig();
        const gen = () => named(cfg, POLICY_NAMES.pdb);
        const budgetFor = (object: Obj, pdbs: Json[]) =>
            admit(gen(), create(object, { cluster: new FakeCluster({ "policy/v1/poddisruptionbudgets": pdbs }) })).generated;

        it("generates a budget with the workload's selector when none selects its pods", () => {
            assert.deepStrictEqual(budgetFor(rollout(), []), [
                {
                    apiVersion: "policy/v1",
                    kind: "PodDisruptionBudget",
                    metadata: { name: "checkout-pdb", namespace: "shop" },
                    spec: { maxUnavailable: 1, selector: { matchLabels: { app: "checkout" } } },
                },
            ]);
        });

        it("skips a workload whose pods another budget already selects, by selector coverage rather than equal labels", () => {
            // The previous generator compared matchLabels for equality: {app: web} != {app: web, tier: front},
            // so it added a second budget over the same pods and evictions failed.
            assert.deepStrictEqual(budgetFor(deployment(), [pdb("web-budget", { matchLabels: { app: "web" } })]), []);
            assert.deepStrictEqual(
                budgetFor(deployment(), [pdb("front", { matchExpressions: [{ key: "tier", operator: "In", values: ["front", "back"] }] })]),
                [],
            );
            assert.deepStrictEqual(budgetFor(deployment(), [pdb("all-of-shop", {})]), [], "an empty policy/v1 selector selects every pod");
            assert.deepStrictEqual(budgetFor(deployment(), [pdb("exists", { matchExpressions: [{ key: "app", operator: "Exists" }] })]), []);
        });

        it("still generates when the other budgets select other pods, select none, or are its own", () => {
            const others = [
                pdb("other-app", { matchLabels: { app: "checkout" } }),
                pdb("not-front", { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "NotIn", values: ["front"] }] }),
                pdb("no-tier", { matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] }),
                pdb("null-selector", undefined),
                pdb("web-pdb", { matchLabels: { app: "web" } }),
                pdb("other-namespace", { matchLabels: { app: "web" } }, "elsewhere"),
            ];
            assert.strictEqual(budgetFor(deployment(), others).length, 1);
        });

        it("lists only the workload's own namespace", () => {
            const cluster = new FakeCluster();
            admit(gen(), create(rollout(), { cluster }));
            assert.deepStrictEqual(cluster.calls, ["list policy/v1 poddisruptionbudgets shop"]);
        });

        it("does not match a workload that selects no pods by labels", () => {
            assert.strictEqual(admit(gen(), create(deployment({ selector: {} }))).matched, false);
        });
    });

    describe("mutate-topology-spread", () => {
        it("adds JSON patches with the Rollout's revision label, unless the template spreads already", () => {
            const p = named(policyConfig(), `${POLICY_NAMES.spread}-rollout`);
            const out = admit(p, create(rollout()));
            assert.deepStrictEqual(out.patches, [
                {
                    op: "add",
                    path: "/spec/template/spec/topologySpreadConstraints",
                    value: ["topology.kubernetes.io/zone", "kubernetes.io/hostname"].map((topologyKey) => ({
                        maxSkew: 1,
                        topologyKey,
                        whenUnsatisfiable: "ScheduleAnyway",
                        labelSelector: { matchLabels: { app: "checkout" } },
                        matchLabelKeys: ["rollouts-pod-template-hash"],
                    })),
                },
            ]);
            const spread = rollout();
            (spread.spec.template as { spec: Record<string, Json> }).spec.topologySpreadConstraints = [];
            assert.strictEqual(admit(p, create(spread)).matched, false);
            const { template: _t, ...refSpec } = rollout().spec;
            const workloadRef: Obj = { ...rollout(), spec: { ...refSpec, workloadRef: { apiVersion: "apps/v1", kind: "Deployment", name: "checkout" } } };
            assert.strictEqual(admit(p, create(workloadRef)).matched, false, "a workloadRef Rollout has no template to mutate");
        });

        it("fails open by default and closed when the platform asks for it", () => {
            assert.ok(
                celPolicies(policyConfig(), CTX)
                    .filter((p) => p.kind === "MutatingPolicy")
                    .every((p) => p.spec.failurePolicy === "Ignore"),
            );
            assert.ok(
                celPolicies(policyConfig({ mutationFailurePolicy: "Fail" }), CTX)
                    .filter((p) => p.kind === "MutatingPolicy")
                    .every((p) => p.spec.failurePolicy === "Fail"),
            );
        });
    });

    describe("require-prod-replica-floor", () => {
        const floor = () => named(policyConfig(), POLICY_NAMES.replicaFloor);
        const denied = (object: Obj, hpas: Obj[] = []) =>
            admit(floor(), create(object, { cluster: new FakeCluster({ "autoscaling/v2/horizontalpodautoscalers": hpas as unknown as Json[] }) })).denied;

        it("admits an HPA-managed Rollout that omits spec.replicas, and one an HPA scales", () => {
            const { replicas: _r, ...spec } = rollout().spec;
            const omitted: Obj = { ...rollout(), spec };
            assert.deepStrictEqual(denied(omitted, [hpa({ kind: "Rollout", name: "checkout" }, 2)]), []);
            // Without an HPA the controller would write replicas: 1 and be refused: refused at once, saying what to set.
            assert.deepStrictEqual(denied(omitted), [MESSAGES.replicasOmitted(2)]);
            assert.match(MESSAGES.replicasOmitted(2), /must set spec\.replicas \(at least 2\)/);
            // Another workload's HPA does not count.
            assert.deepStrictEqual(denied(omitted, [hpa({ kind: "Rollout", name: "other" }, 2)]), [MESSAGES.replicasOmitted(2)]);
            // The controller then writes replicas: 1 (argo-rollouts rollout/controller.go); an HPA scales it.
            assert.deepStrictEqual(denied(rollout({ replicas: 1 }), [hpa({ kind: "Rollout", name: "checkout" }, 2)]), []);
        });

        it("refuses too few replicas without an HPA, and an HPA below the floor", () => {
            assert.deepStrictEqual(denied(rollout({ replicas: 1 })), [MESSAGES.replicaFloor(2)]);
            assert.deepStrictEqual(denied(rollout({ replicas: 0 }), [hpa({ kind: "Rollout", name: "other" }, 3)]), [MESSAGES.replicaFloor(2)]);
            assert.deepStrictEqual(denied(hpa({ kind: "Rollout", name: "checkout" })), [MESSAGES.hpaFloor(2)], "minReplicas defaults to 1");
            assert.deepStrictEqual(denied(hpa({ kind: "Rollout", name: "checkout" }, 1)), [MESSAGES.hpaFloor(2)]);
            assert.deepStrictEqual(denied(hpa({ kind: "Rollout", name: "checkout" }, 2)), []);
            assert.deepStrictEqual(denied(hpa({ kind: "SomethingElse", name: "x" }, 1)), []);
        });

        it("admits a Deployment the API server defaulted to one replica when an HPA scales it", () => {
            assert.deepStrictEqual(denied(deployment({ replicas: 1 })), [MESSAGES.replicaFloor(2)]);
            assert.deepStrictEqual(denied(deployment({ replicas: 1 }), [hpa({ kind: "Deployment", name: "web" }, 2)]), []);
        });
    });

    describe("the Rollout-only guards", () => {
        const cfg = policyConfig({ availabilityPolicies: "complement" });
        it("refuses another namespace's route and a zero maxSurge, whatever its spelling", () => {
            const route = named(cfg, POLICY_NAMES.routeNamespace);
            assert.deepStrictEqual(admit(route, create(rollout())).denied, []);
            const elsewhere = rollout();
            (elsewhere.spec.strategy as { canary: { trafficRouting: { plugins: Record<string, Record<string, string>> } } }).canary.trafficRouting.plugins[
                "argoproj-labs/gatewayAPI"
            ].namespace = "payments";
            assert.deepStrictEqual(admit(route, create(elsewhere)).denied, [MESSAGES.routeNamespace]);
            const surge = named(cfg, POLICY_NAMES.maxSurge);
            for (const maxSurge of [0, "0", "0%", "00%"]) {
                const r = rollout();
                (r.spec.strategy as { canary: Record<string, Json> }).canary.maxSurge = maxSurge;
                assert.deepStrictEqual(admit(surge, create(r)).denied, [MESSAGES.maxSurge], String(maxSurge));
            }
            assert.deepStrictEqual(admit(surge, create(rollout({ strategy: { blueGreen: { activeService: "a" } } }))).denied, []);
        });

        it("never intercept the controller's own writes: its revision annotation on a Rollout admitted before the guard", () => {
            const old = rollout();
            (old.spec.strategy as { canary: Record<string, Json> }).canary.maxSurge = 0;
            const annotated: Obj = { ...old, metadata: { ...old.metadata, annotations: { "rollout.argoproj.io/revision": "2" } } };
            const write = (username: string): Admission => ({
                object: annotated as unknown as Json,
                oldObject: old as unknown as Json,
                operation: "UPDATE",
                subResource: "",
                username,
                groups: ["system:serviceaccounts"],
            });
            for (const name of [POLICY_NAMES.maxSurge, POLICY_NAMES.routeNamespace]) {
                const guard = named(cfg, name);
                assert.strictEqual(admit(guard, write(CONTROLLER)).matched, false, `${name}: the API server does not even call Kyverno for the controller`);
            }
            assert.deepStrictEqual(admit(named(cfg, POLICY_NAMES.maxSurge), write("bob")).denied, [MESSAGES.maxSurge], "anyone else still meets the guard");
        });
    });

    describe("restrict-regulated-rollout-changes", () => {
        const cfg = policyConfig({ regulated: REGULATED });
        const guard = () => named(cfg, POLICY_NAMES.approval) as ValidatingPolicy;
        const paused = (r: Obj): Obj =>
            ({ ...r, status: { pauseConditions: [{ reason: "CanaryPauseStep", startTime: "2026-07-01T00:00:00Z" }], currentStepIndex: 1 } }) as Obj;
        const approver = { username: "alice", groups: ["release-approvers", "system:authenticated"] };
        const deployer = { username: "bob", groups: ["shop-deployers", "system:authenticated"] };
        const both = { username: "carol", groups: ["release-approvers", "shop-deployers"] };
        const update = (oldObject: Obj, object: Obj, who: { username: string; groups?: string[] }, subResource = ""): Admission => ({
            object: object as unknown as Json,
            oldObject: oldObject as unknown as Json,
            operation: "UPDATE",
            subResource,
            ...who,
        });
        const outcome = (a: Admission) => admit(guard(), a);

        it("matches Rollouts and their status subresource in regulated namespaces, at admission only", () => {
            const p = guard();
            assert.deepStrictEqual(p.spec.matchConstraints.resourceRules[0].resources, ["rollouts", "rollouts/status"]);
            assert.deepStrictEqual(p.spec.evaluation, { background: { enabled: false } });
            assert.ok(!celPolicies(policyConfig(), CTX).some((x) => x.metadata.name === POLICY_NAMES.approval), "no guard without policy.regulated");
        });

        it("lets only the GitOps controller change the spec: a deployer cannot drop the approval pause", () => {
            const withoutPause = rollout({ strategy: { canary: { maxSurge: 1, steps: [{ setWeight: 25 }, { setWeight: 100 }] } } });
            assert.deepStrictEqual(outcome(update(paused(rollout()), withoutPause, deployer)).denied, [MESSAGES.approvalSpec]);
            assert.deepStrictEqual(outcome(update(paused(rollout()), withoutPause, approver)).denied, [MESSAGES.approvalSpec]);
            assert.deepStrictEqual(outcome(update(paused(rollout()), withoutPause, { username: ARGOCD_SYNC, groups: ["system:serviceaccounts"] })).denied, []);
            const newImage = rollout({
                template: {
                    metadata: { labels: { app: "checkout" } },
                    spec: { containers: [{ name: "checkout", image: "registry.platform.test/checkout:2" }] },
                },
            });
            assert.deepStrictEqual(outcome(update(rollout(), newImage, deployer)).denied, [MESSAGES.approvalSpec]);
        });

        it("lets metadata change and a pause through, and an unpause only for an approver who is no deployer", () => {
            const labelled = rollout();
            labelled.metadata.labels = { release: "2" };
            assert.deepStrictEqual(outcome(update(rollout(), labelled, deployer)).denied, []);
            assert.deepStrictEqual(outcome(update(rollout(), rollout({ paused: true }), deployer)).denied, []);
            assert.deepStrictEqual(outcome(update(rollout({ paused: true }), rollout({ paused: false }), approver)).denied, []);
            assert.deepStrictEqual(outcome(update(rollout({ paused: true }), rollout(), approver)).denied, [], "paused removed");
            assert.deepStrictEqual(outcome(update(rollout({ paused: true }), rollout({ paused: false }), deployer)).denied, [MESSAGES.approvalSpec]);
            assert.deepStrictEqual(outcome(update(rollout({ paused: true }), rollout({ paused: false }), both)).denied, [MESSAGES.approvalSpec]);
        });

        it("lets only approvers, ArgoCD's actions and the controller write status (promote, skip, abort)", () => {
            const promoted = { ...rollout(), status: { currentStepIndex: 1 } } as Obj;
            const promote = (who: { username: string; groups?: string[] }) => outcome(update(paused(rollout()), promoted, who, "status"));
            assert.deepStrictEqual(promote(deployer).denied, [MESSAGES.approvalStatus]);
            assert.deepStrictEqual(promote(both).denied, [MESSAGES.approvalStatus]);
            assert.deepStrictEqual(promote({ username: "dave", groups: [] }).denied, [MESSAGES.approvalStatus]);
            assert.deepStrictEqual(promote(approver).denied, []);
            assert.deepStrictEqual(promote({ username: ARGOCD_SERVER, groups: ["system:serviceaccounts"] }).denied, []);
            const byController = promote({ username: CONTROLLER, groups: ["system:serviceaccounts"] });
            assert.strictEqual(byController.matched, false, "the API server does not even call Kyverno for the controller");
        });

        it("lets only the GitOps controller create a Rollout: a first version skips every step", () => {
            assert.deepStrictEqual(outcome(create(rollout(), deployer)).denied, [MESSAGES.approvalCreate]);
            assert.deepStrictEqual(outcome(create(rollout(), { username: ARGOCD_SYNC })).denied, []);
        });
    });
    describe("restrict-regulated-rollout-pods", () => {
        const cfg = policyConfig({ regulated: REGULATED });
        const guard = () => named(cfg, POLICY_NAMES.approvalPods) as ValidatingPolicy;
        const hash = { "rollouts-pod-template-hash": "6d4f8b7c9" };
        const rs = (labels: Record<string, string>, owners: Json[] = []): Json => ({
            apiVersion: "apps/v1",
            kind: "ReplicaSet",
            metadata: { name: "checkout-6d4f8b7c9", namespace: "shop", labels, ...(owners.length ? { ownerReferences: owners } : {}) },
            spec: {
                replicas: 1,
                selector: { matchLabels: labels },
                template: { metadata: { labels }, spec: { containers: [{ name: "app", image: "app:1" }] } },
            },
        });
        const rollout = { apiVersion: "argoproj.io/v1alpha1", kind: "Rollout", name: "checkout", uid: "1", controller: true };
        const write = (object: Json, username: string, extra: Partial<Admission> = {}): Admission => ({
            object,
            oldObject: object,
            operation: "UPDATE",
            username,
            ...extra,
        });

        it("matches ReplicaSets, their scale, Pods and their ephemeral containers in regulated namespaces, at admission only", () => {
            const p = guard();
            assert.deepStrictEqual(
                p.spec.matchConstraints.resourceRules.map((r) => r.resources),
                [
                    ["replicasets", "replicasets/scale"],
                    ["pods", "pods/ephemeralcontainers"],
                ],
            );
            assert.deepStrictEqual(p.spec.evaluation, { background: { enabled: false } });
            assert.ok(!celPolicies(policyConfig(), CTX).some((x) => x.metadata.name === POLICY_NAMES.approvalPods), "no guard without policy.regulated");
        });

        it("is never called for the workload controllers, nor for a ReplicaSet or Pod of no Rollout: the match conditions, the API server's", () => {
            for (const user of [
                CONTROLLER,
                "system:serviceaccount:kube-system:replicaset-controller",
                "system:serviceaccount:kube-system:generic-garbage-collector",
                "system:kube-controller-manager",
            ]) {
                assert.strictEqual(admit(guard(), write(rs(hash, [rollout]), user)).matched, false, user);
            }
            assert.strictEqual(
                admit(guard(), write(rs({ app: "web", "pod-template-hash": "7f" }), "system:serviceaccount:kube-system:deployment-controller")).matched,
                false,
                "a Deployment's ReplicaSet",
            );
            assert.strictEqual(admit(guard(), write(rs({ app: "checkout" }, [rollout]), "bob")).matched, true, "owned by a Rollout");
            assert.strictEqual(
                admit(
                    guard(),
                    write({ apiVersion: "autoscaling/v1", kind: "Scale", metadata: { name: "web", namespace: "shop" }, spec: { replicas: 5 } }, "bob", {
                        subResource: "scale",
                    }),
                ).matched,
                true,
                "any scale",
            );
        });

        it("refuses everyone else, the GitOps controller and approvers included", () => {
            for (const who of [ARGOCD_SYNC, ARGOCD_SERVER, "alice"]) {
                assert.deepStrictEqual(admit(guard(), write(rs(hash), who, { groups: ["release-approvers"] })).denied, [MESSAGES.approvalPods], who);
            }
            const created = admit(guard(), { object: rs({ app: "checkout" }, [rollout]), operation: "CREATE", username: "bob" });
            assert.deepStrictEqual(created.denied, [MESSAGES.approvalPods]);
        });
    });
});
