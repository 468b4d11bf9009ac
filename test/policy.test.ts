import * as assert from "assert";
import { isDeepStrictEqual } from "util";
import {
    ClusterPolicy,
    KYVERNO_AGGREGATE_LABELS,
    LabelSelector,
    POLICY_NAMES,
    PolicyConfig,
    ValidatingPolicy,
    allOf,
    KYVERNO_WEBHOOK_TIMEOUT_SECONDS,
    celPolicies,
    clusterPolicies,
    contradiction,
    kyvernoPolicies,
    kyvernoRoles,
    pdbGenerationRules,
    policyContext,
    ref,
    toCel,
} from "../components/policy";
import { OfflineRun } from "../tools/offline";
import { byName, hubConfig, merged, planInline, spokeConfig, transitiveDeps } from "./harness";
import { parseHub, policyConfig, REGULATED } from "./stackConfig";
import { findWildcards } from "../components/argoRollouts";
import type { Requirement } from "../components/policy/selectors";

// What the policies decide is the real Kyverno's to say: the end-to-end scenario engine-kyverno-cli
// sends it the admission samples of e2e/samples/admission.yaml in both APIs. These tests hold what
// the program declares.

/** The controller, and the tier admission of the harness's stack with regulated prod (both classes). */
const CTX = { ...policyContext(parseHub({ policy: { regulated: REGULATED } })), rolloutsController: { namespace: "argo-rollouts", name: "argo-rollouts" } };

describe("policy stage", () => {
    describe("object templates", () => {
        it("refuse a path that is not a plain field path", () => {
            assert.throws(() => toCel(ref("spec.selector) || true || (x")), /not a field path/);
        });
    });

    describe("namespace selectors", () => {
        it("find a label no namespace can satisfy", () => {
            const expr = (operator: Requirement["operator"], values?: string[]): Requirement => ({ key: "a", operator, ...(values ? { values } : {}) });
            const cases: [LabelSelector, string | undefined][] = [
                [allOf({ matchLabels: { a: "1" } }, { matchLabels: { a: "2" } }), "a"],
                [allOf({ matchExpressions: [expr("In", ["1", "2"])] }, { matchLabels: { a: "2" } }), undefined],
                [{ matchExpressions: [expr("Exists"), expr("DoesNotExist")] }, "a"],
                [{ matchExpressions: [expr("In", ["1"]), expr("NotIn", ["1"])] }, "a"],
            ];
            for (const [selector, label] of cases) {
                assert.strictEqual(contradiction(selector), label, JSON.stringify(selector));
            }
        });
    });

    describe("which policies each mode declares", () => {
        const names = (cfg: PolicyConfig) =>
            [...new Set(kyvernoPolicies(cfg, CTX).map((p) => p.metadata.name.replace(/-(deployment|statefulset|rollout)$/, "")))].sort();
        const regulatedOnly: string[] = [POLICY_NAMES.approvalBindings, POLICY_NAMES.approval, POLICY_NAMES.approvalPods, POLICY_NAMES.tierRegulated];
        const complement: string[] = [POLICY_NAMES.maxSurge, POLICY_NAMES.routeNamespace, POLICY_NAMES.tierStandard];
        for (const kyvernoApi of ["policies.kyverno.io/v1", "kyverno.io/v1"]) {
            it(`own: ADR-085's availability policies under their names, the guards and the approval guard (${kyvernoApi})`, () => {
                assert.deepStrictEqual(names(policyConfig({ kyvernoApi, regulated: REGULATED })), Object.values(POLICY_NAMES).sort());
                const own = Object.values(POLICY_NAMES).filter((n) => !regulatedOnly.includes(n));
                assert.deepStrictEqual(names(policyConfig({ kyvernoApi })), own.sort());
            });
            it(`complement: only what ADR-085's policies lack, and never a second PDB generator (${kyvernoApi})`, () => {
                const cfg = { kyvernoApi, availabilityPolicies: "complement" };
                assert.deepStrictEqual(names(policyConfig({ ...cfg, regulated: REGULATED })), [...complement, ...regulatedOnly].sort());
                // Without regulated prod, no regulated tier either.
                assert.deepStrictEqual(names(policyConfig(cfg)), [...complement].sort());
            });
        }
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
            for (const [cfg, failure] of [
                [policyConfig(), "Ignore"],
                [policyConfig({ mutationFailurePolicy: "Fail" }), "Fail"],
            ] as const) {
                const mutations = celPolicies(cfg, CTX).filter((p) => p.kind === "MutatingPolicy");
                assert.ok(mutations.length > 0 && mutations.every((p) => p.spec.failurePolicy === failure));
            }
        });

        it("write Rollout in its own ClusterPolicy rule, named by GVK, never through autogen (Kyverno #7446)", () => {
            for (const p of clusterPolicies(policyConfig({ regulated: REGULATED }), CTX)) {
                for (const r of p.spec.rules) {
                    assert.strictEqual(r.match.any.length, 1);
                    assert.strictEqual(r.match.any[0].resources.kinds.length, 1, `${p.metadata.name}/${r.name} mixes kinds`);
                }
                // The ReplicaSet and Pod guard matches what a Rollout runs on, never a Rollout.
                const kinds = {
                    [POLICY_NAMES.approvalPods]: ["apps/v1/ReplicaSet", "v1/Pod"],
                    [POLICY_NAMES.approvalBindings]: ["v1/Namespace"],
                }[p.metadata.name] ?? ["argoproj.io/v1alpha1/Rollout"];
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

    describe("Kyverno's RBAC", () => {
        it("grants read-only reads of Rollouts and HTTPRoutes to the background and reports controllers, and PDB writes and the lookups' reads only when this program generates and looks up", () => {
            for (const [mode, names] of [
                ["own", ["read-rollouts", "generate-pdb", "read-policy-lookups"]],
                ["complement", ["read-rollouts"]],
            ] as const) {
                const roles = kyvernoRoles(policyConfig({ availabilityPolicies: mode }));
                assert.strictEqual(roles.map((r) => r.name).join(), names.join());
                assert.deepStrictEqual(roles[0].controllers, ["background", "reports"]);
                assert.deepStrictEqual(roles[0].rules, [
                    { apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: ["get", "list", "watch"] },
                    { apiGroups: ["gateway.networking.k8s.io"], resources: ["httproutes"], verbs: ["get", "list", "watch"] },
                ]);
            }
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

        it("lets the reports controller read the subresources the CEL approval guards match, at admission only (e2e kyverno-ready)", () => {
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
            const guards = celPolicies(policyConfig({ regulated: REGULATED }), CTX).filter(
                (p): p is ValidatingPolicy => p.metadata.name === POLICY_NAMES.approval || p.metadata.name === POLICY_NAMES.approvalPods,
            );
            const matched = guards.map((g) => g.spec.matchConstraints.resourceRules.map((r) => r.resources));
            assert.deepStrictEqual(matched, [
                [["rollouts", "rollouts/status"]],
                [
                    ["replicasets", "replicasets/scale"],
                    ["pods", "pods/ephemeralcontainers"],
                ],
            ]);
            assert.ok(guards.every((g) => isDeepStrictEqual(g.spec.evaluation, { background: { enabled: false } })));
            // Every subresource the guards match is in the role, or in `view` (replicasets/scale).
            const unread = matched.flat(2).filter((r) => r.includes("/") && r !== "replicasets/scale" && !role.rules.some((x) => x.resources.includes(r)));
            assert.deepStrictEqual(unread, []);
        });
    });

    describe("declared resources", () => {
        let run: OfflineRun;
        let legacy: OfflineRun;
        let complementRun: OfflineRun;
        before(async () => {
            run = await planInline(merged(hubConfig(), { policy: { regulated: REGULATED } }), { stack: "hub" });
            legacy = await planInline(merged(hubConfig(), { policy: { kyvernoApi: "kyverno.io/v1", regulated: REGULATED } }), { stack: "hub" });
            complementRun = await planInline(merged(hubConfig(), { policy: { availabilityPolicies: "complement" } }), { stack: "hub" });
        });

        const policiesOf = (r: OfflineRun) => r.resources.filter((x) => x.stage === "policy" && /^kubernetes:(policies\.)?kyverno\.io\//.test(x.type));

        it("declares the CEL policies by default and ClusterPolicies when switched, named explicitly", () => {
            assert.deepStrictEqual(
                policiesOf(run)
                    .map((p) => p.type)
                    .sort(),
                [
                    ...Array(2).fill("kubernetes:policies.kyverno.io/v1:GeneratingPolicy"),
                    ...Array(3).fill("kubernetes:policies.kyverno.io/v1:MutatingPolicy"),
                    ...Array(8).fill("kubernetes:policies.kyverno.io/v1:ValidatingPolicy"),
                ],
            );
            const legacyTypes = policiesOf(legacy).map((p) => p.type);
            assert.deepStrictEqual(legacyTypes, Array(11).fill("kubernetes:kyverno.io/v1:ClusterPolicy"));
            for (const [r, policy] of [
                [run, { regulated: REGULATED }],
                [complementRun, { availabilityPolicies: "complement" }],
            ] as const) {
                const declared = policiesOf(r).map((p) => (p.inputs as { metadata: { name: string } }).metadata.name);
                assert.deepStrictEqual(
                    declared.sort(),
                    kyvernoPolicies(policyConfig(policy), CTX)
                        .map((p) => p.metadata.name)
                        .sort(),
                );
            }
        });

        it("declares no policy for a class of namespaces the stack declares absent: a staging spoke's prod, a hub's tenants", async () => {
            const names = async (policy: Record<string, unknown>) =>
                policiesOf(await planInline(spokeConfig({ policy }), { stack: "preprod" })).map((p) => p.name.replace(/^kyverno-[a-z]+-/, ""));
            const all = await names({});
            const [prod, P]: [string[], object] = [[POLICY_NAMES.replicaFloor, POLICY_NAMES.tierStandard], { prodNamespaceLabels: undefined }];
            assert.deepStrictEqual(
                await names({ ...P, absentClasses: ["prod"] }),
                all.filter((n) => !prod.includes(n)),
            );
            assert.deepStrictEqual(await names({ ...P, absentClasses: ["tenants"], tenantNamespaceSelector: undefined }), [POLICY_NAMES.defaultNamespace]);
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
            assert.throws(() => byName(complementRun, "kyverno-generate-pdb"), /found 0/);
        });

        it("sends the generated body unchanged, and names the rollouts controller's ServiceAccount as the one the approval guard lets through", () => {
            const guard = policiesOf(run).find((p) => (p.inputs as { metadata: { name: string } }).metadata.name === POLICY_NAMES.approval)!;
            assert.match(JSON.stringify(guard.inputs), /system:serviceaccount:argo-rollouts:argo-rollouts/);
            const gen = policiesOf(run).find((p) => (p.inputs as { metadata: { name: string } }).metadata.name === POLICY_NAMES.pdb)!;
            assert.deepStrictEqual(gen.inputs.spec, celPolicies(parseHub().policy, CTX).find((p) => p.metadata.name === POLICY_NAMES.pdb)!.spec);
        });
    });
});
