import * as assert from "assert";
import type { PolicyConfig } from "../components/policy/config";
import { cel, celPolicy } from "../components/policy/cel";
import { clusterPolicy, conditions } from "../components/policy/jmes";
import { surgeBelowHeadroom } from "../components/policy/rolloutOnly";
import { Cond, Rule, and, eq, field, groupIn, has, not, obj, or, userIn } from "../components/policy/rule";
import type { ContextEntry } from "../components/policy/shapes";
import { POD, REPLICASET, ROLLOUT } from "../components/policy/workloads";
import { deliveryPlan } from "../components/delivery/strategy";
import { COMPONENT_APP } from "../components/delivery/kustomize";

/**
 * The rule vocabulary (components/policy/rule.ts) and its two renderers: what each writes for each
 * kind of condition, so one declaration means the same in both Kyverno APIs. What Kyverno decides
 * with them is the end-to-end run's (engine-kyverno-cli, the kyverno scenarios).
 */

const CFG: PolicyConfig = {
    kyvernoApi: "policies.kyverno.io/v1",
    availabilityPolicies: "own",
    validationAction: "Enforce",
    mutationFailurePolicy: "Ignore",
    tenantNamespaceSelector: { matchLabels: { tier: "dev" } },
    pdbMaxUnavailable: 1,
    prodNamespaceLabels: { tier: "prod" },
    prodMinReplicas: 2,
    topologyKeys: ["zone"],
    excludeNamespaces: [],
};

const jmesOf = (c: Cond) => {
    const ctx: ContextEntry[] = [];
    return { conditions: conditions(c, ctx), ctx };
};

describe("kyverno rules: one declaration, two renderings", () => {
    describe("the vocabulary", () => {
        it("folds constants and flattens nesting, so a condition one API reads as false disappears", () => {
            const x = has(obj("spec.a"));
            assert.deepStrictEqual(and(true, x), x);
            assert.strictEqual(and(x, false), false);
            assert.strictEqual(or(x, true), true);
            assert.deepStrictEqual(and(and(x, x), x), { all: [x, x, x] });
            assert.deepStrictEqual(not(not(x)), x);
            assert.strictEqual(userIn([]), false, "nobody named: nobody matches");
            assert.strictEqual(groupIn([]), false);
        });
    });

    describe("CEL", () => {
        it("reads every field behind its guards, each guard once per conjunction, and what the API server always sends unguarded", () => {
            const c = and(has(obj("spec.strategy.canary")), eq(obj("spec.strategy.canary.maxSurge"), 1), eq(obj("metadata.namespace"), "shop"));
            assert.strictEqual(
                cel(c),
                "has(object.spec.strategy) && has(object.spec.strategy.canary) && has(object.spec.strategy.canary.maxSurge) && " +
                    'object.spec.strategy.canary.maxSurge == 1 && object.metadata.namespace == "shop"',
            );
        });

        it("keeps a disjunction's guards to itself, and indexes keys that are no identifier or a keyword", () => {
            const plugin = obj(["spec", "plugins", "argoproj-labs/gatewayAPI", "in"]);
            assert.strictEqual(
                cel(or(has(plugin), eq(plugin, "x"))),
                '(has(object.spec.plugins) && "argoproj-labs/gatewayAPI" in object.spec.plugins && "in" in object.spec.plugins["argoproj-labs/gatewayAPI"]) || ' +
                    '(has(object.spec.plugins) && "argoproj-labs/gatewayAPI" in object.spec.plugins && "in" in object.spec.plugins["argoproj-labs/gatewayAPI"] && ' +
                    'object.spec.plugins["argoproj-labs/gatewayAPI"]["in"] == "x")',
            );
            assert.strictEqual(cel(has(obj("spec.namespace"))), "has(object.spec.namespace)", "a reserved identifier is a field name");
        });

        it("counts a list from its end, and lets a default stand for an absent field", () => {
            assert.strictEqual(
                cel(eq(obj(["spec", "steps", -2, "setWeight"]), 100)),
                "has(object.spec.steps) && size(object.spec.steps) >= 2 && has(object.spec.steps[size(object.spec.steps) - 2].setWeight) && " +
                    "object.spec.steps[size(object.spec.steps) - 2].setWeight == 100",
            );
            assert.strictEqual(cel({ lt: obj("spec.minReplicas", 1), than: 2 }), "(has(object.spec.minReplicas) ? object.spec.minReplicas : 1) < 2");
        });

        it("reads the request's identity, lists and lookups as Kyverno's CEL libraries take them", () => {
            assert.strictEqual(cel(userIn(["a"])), 'has(request.userInfo.username) && request.userInfo.username == "a"');
            assert.strictEqual(cel(groupIn(["g", "h"])), 'has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ["g","h"])');
            assert.strictEqual(
                cel({
                    lookup: { name: "hpas", apiVersion: "autoscaling/v2", resource: "horizontalpodautoscalers" },
                    where: eq(field("item", "kind"), obj("kind")),
                }),
                'dyn(resource.List("autoscaling/v2", "horizontalpodautoscalers", object.metadata.namespace).items).exists(e, has(e.kind) && e.kind == object.kind)',
            );
            assert.strictEqual(cel({ celOnly: { var: "action" } }), "variables.action");
        });

        it("matches each kind once with every subresource and operation its checks name, and guards each check by what sets it apart", () => {
            const rule: Rule = {
                name: "r",
                scope: "tenant",
                background: false,
                checks: [
                    { id: "status", on: [{ kind: ROLLOUT, operations: ["UPDATE"], subresource: "status" }], deny: true, message: "status" },
                    { id: "delete", on: [{ kind: ROLLOUT, operations: ["DELETE"] }], deny: true, message: "delete" },
                    { id: "pods", on: [{ kind: POD }], deny: true, message: "pods" },
                ],
            };
            const p = celPolicy(CFG, rule);
            assert.deepStrictEqual(
                p.spec.matchConstraints.resourceRules.map((r) => [r.resources, r.operations]),
                [
                    [
                        ["rollouts", "rollouts/status"],
                        ["UPDATE", "DELETE"],
                    ],
                    [
                        ["pods", "pods/ephemeralcontainers"],
                        ["CREATE", "UPDATE"],
                    ],
                ],
            );
            assert.deepStrictEqual(
                p.spec.validations.map((v) => v.expression),
                [
                    '!(object.kind == "Rollout" && request.operation == "UPDATE" && (has(request.subResource) ? request.subResource : "") == "status")',
                    '!(object.kind == "Rollout" && request.operation == "DELETE" && (has(request.subResource) ? request.subResource : "") == "")',
                    '!(object.kind == "Pod" && request.operation in ["CREATE","UPDATE"] && (has(request.subResource) ? request.subResource : "") in ["","ephemeralcontainers"])',
                ],
            );
            assert.deepStrictEqual(p.spec.evaluation, { background: { enabled: false } });
            const single = celPolicy(CFG, { ...rule, checks: [rule.checks[2]] });
            assert.deepStrictEqual(single.spec.validations, [{ expression: "false", message: "pods" }], "a lone check judges all its rule matches");
        });
    });

    describe("JMESPath", () => {
        it("writes a refusal as Kyverno conditions, negations moved inward, one disjunction in `any`", () => {
            const approver = and(groupIn(["approvers"]), not(groupIn(["deployers"])));
            const { conditions: c } = jmesOf(and(not(or(userIn(["gitops"]), groupIn(["gitops-group"]))), has(obj("spec.paused")), not(approver)));
            assert.deepStrictEqual(c, {
                all: [
                    { key: "{{ request.userInfo.username || '' }}", operator: "AnyNotIn", value: ["gitops"] },
                    { key: "{{ request.userInfo.groups || `[]` }}", operator: "AllNotIn", value: ["gitops-group"] },
                    { key: "{{ request.object.spec.paused != `null` }}", operator: "Equals", value: true },
                ],
                any: [
                    { key: "{{ request.userInfo.groups || `[]` }}", operator: "AllNotIn", value: ["approvers"] },
                    { key: "{{ request.userInfo.groups || `[]` }}", operator: "AnyIn", value: ["deployers"] },
                ],
            });
        });

        it("compares numbers as text and orders them with Kyverno's operator, an absent one null", () => {
            assert.deepStrictEqual(jmesOf(eq(obj("spec.startingStep"), 2)).conditions.all, [
                { key: "{{ to_string(request.object.spec.startingStep) == '2' }}", operator: "Equals", value: true },
            ]);
            assert.deepStrictEqual(jmesOf({ lt: obj("spec.replicas"), than: 2 }).conditions.all, [
                { key: "{{ request.object.spec.replicas || `null` }}", operator: "LessThan", value: 2 },
            ]);
            assert.deepStrictEqual(jmesOf(not({ lt: obj("spec.minReplicas", 1), than: 2 })).conditions.all, [
                { key: "{{ (request.object.spec.minReplicas || `1`) }}", operator: "GreaterThanOrEquals", value: 2 },
            ]);
        });

        it("quotes keys, counts from a list's end, and escapes literals", () => {
            const plugin = obj(["spec", "plugins", "argoproj-labs/gatewayAPI", "namespace"]);
            assert.strictEqual(
                jmesOf(and(eq(plugin, "it's"), has(obj(["spec", "steps", -1, "setWeight"])))).conditions.all![0].key,
                "{{ request.object.spec.plugins.\"argoproj-labs/gatewayAPI\".namespace == 'it\\'s' }}",
            );
            assert.strictEqual(
                jmesOf(has(obj(["spec", "steps", -1, "setWeight"]))).conditions.all![0].key,
                "{{ request.object.spec.steps[-1].setWeight != `null` }}",
            );
        });

        it("loads each lookup and the namespace once, by an apiCall, the object's fields substituted into the filter", () => {
            const hpas = {
                lookup: { name: "hpas", apiVersion: "autoscaling/v2", resource: "horizontalpodautoscalers" },
                where: eq(field("item", "kind"), obj("kind")),
            };
            const { conditions: c, ctx } = jmesOf(and(not(hpas), hpas, not(eq(field("namespace", "status.phase"), "Terminating"))));
            assert.deepStrictEqual(ctx, [
                {
                    name: "hpas",
                    apiCall: {
                        urlPath: "/apis/autoscaling/v2/namespaces/{{ request.object.metadata.namespace }}/horizontalpodautoscalers",
                        jmesPath: "items[?kind == '{{ request.object.kind }}'] | length(@)",
                    },
                },
                { name: "namespaceObject", apiCall: { urlPath: "/api/v1/namespaces/{{ request.namespace }}", jmesPath: "@" } },
            ]);
            // A variable that reads a context entry starts with its name, or Kyverno refuses the policy
            // (pkg/validation/policy/validate.go `allowedVariables`): negations flip the comparator.
            assert.deepStrictEqual(
                c.all!.map((x) => x.key),
                ["{{ hpas == `0` }}", "{{ hpas > `0` }}", "{{ namespaceObject.status.phase != 'Terminating' }}"],
            );
        });

        it("compares a spec but for some fields with Kyverno's merge, and a list element with a filter", () => {
            assert.strictEqual(
                jmesOf({ specChangedBesides: ["paused"] }).conditions.all![0].key,
                '{{ merge(request.object.spec, `{"paused":null}`) != merge(request.oldObject.spec, `{"paused":null}`) }}',
            );
            assert.strictEqual(
                jmesOf({ some: obj("metadata.ownerReferences"), where: eq(field("item", "kind"), "Rollout") }).conditions.all![0].key,
                "{{ length(request.object.metadata.ownerReferences[?kind == 'Rollout'] || `[]`) > `0` }}",
            );
        });

        it("writes one rule per check and kind, inlines variables, reads celOnly as false and repeats the match conditions where no background scan runs", () => {
            const when = [{ name: "not-the-controller", cond: not(userIn(["controller"])) }];
            const rule: Rule = {
                name: "r",
                scope: "tenant",
                background: false,
                action: "Audit",
                when,
                vars: { gitops: userIn(["gitops"]) },
                checks: [
                    {
                        id: "change",
                        on: [{ kind: REPLICASET }, { kind: REPLICASET, operations: ["UPDATE"], subresource: "scale" }],
                        deny: not({ var: "gitops" }),
                        message: "m",
                    },
                    { id: "spec", on: [{ kind: ROLLOUT }], deny: and({ celOnly: has(obj("spec.a")) }, has(obj("spec.b"))), message: "n", judgeRequest: true },
                ],
            };
            const p = clusterPolicy(CFG, rule);
            assert.deepStrictEqual(
                p.spec.rules.map((r) => [r.name, r.match.any[0].resources.kinds, r.match.any[0].resources.operations]),
                [
                    ["change-replicaset", ["apps/v1/ReplicaSet"], ["CREATE", "UPDATE"]],
                    ["change-replicaset-scale", ["apps/v1/ReplicaSet/scale"], ["UPDATE"]],
                    ["spec-rollout", ["argoproj.io/v1alpha1/Rollout"], ["CREATE", "UPDATE"]],
                ],
            );
            assert.deepStrictEqual(p.spec.rules[0].validate!.deny.conditions, {
                all: [
                    { key: "{{ request.userInfo.username || '' }}", operator: "AnyNotIn", value: ["controller"] },
                    { key: "{{ request.userInfo.username || '' }}", operator: "AnyNotIn", value: ["gitops"] },
                ],
            });
            assert.deepStrictEqual(
                p.spec.rules[2].validate,
                {
                    failureAction: "Audit",
                    message: "n",
                    deny: { conditions: { all: [{ key: "{{ `false` }}", operator: "Equals", value: true }] } },
                    allowExistingViolations: false,
                },
                "celOnly && b is false here, and the rule judges the request",
            );
            assert.deepStrictEqual(p.spec.webhookConfiguration, {
                matchConditions: [{ name: "not-the-controller", expression: '!(has(request.userInfo.username) && request.userInfo.username == "controller")' }],
            });
            assert.strictEqual(p.spec.emitWarning, true, "an audited request is warned of in both APIs");
            const background = clusterPolicy(CFG, { ...rule, background: true, checks: [rule.checks[0]] });
            assert.deepStrictEqual(
                background.spec.rules[0].validate!.deny.conditions.all!.length,
                1,
                "a background rule cannot read the user: the webhook's match condition alone",
            );
            assert.strictEqual(clusterPolicy(CFG, { ...rule, action: undefined }).spec.emitWarning, undefined);
        });
    });

    describe("D8's headroom", () => {
        it("is the strategy library's canary maxSurge: less is refused, in every spelling", () => {
            const rendered = deliveryPlan({ ...COMPONENT_APP, route: undefined }, { tier: "dev" }).strategy as { canary: { maxSurge: number } };
            assert.strictEqual(rendered.canary.maxSurge, 1);
            const re = new RegExp(surgeBelowHeadroom());
            for (const refused of ["0", "00", "0%", "000%"]) {
                assert.ok(re.test(refused), refused);
            }
            for (const admitted of ["1", "01", "2", "25%", "1%", "10", "null"]) {
                assert.ok(!re.test(admitted), admitted);
            }
        });
    });
});
