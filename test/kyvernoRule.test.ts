import * as assert from "assert";
import { celPolicy } from "../components/policy/cel";
import { clusterPolicy, conditions } from "../components/policy/jmes";
import { surgeBelowHeadroom } from "../components/policy/rolloutOnly";
import { Cond, Rule, and, eq, groupIn, has, not, obj, or, userIn } from "../components/policy/rule";
import { POD, REPLICASET, ROLLOUT } from "../components/policy/workloads";
import { deliveryPlan } from "../components/delivery/strategy";
import { COMPONENT_APP } from "../components/delivery/kustomize";
import { policyConfig } from "./stackConfig";

/**
 * The rule vocabulary (components/policy/rule.ts) and its two renderers: what each writes for each
 * kind of condition, so one declaration means the same in both Kyverno APIs. What Kyverno decides
 * with them is the end-to-end run's (engine-kyverno-cli, the kyverno scenarios).
 */

const CFG = policyConfig();
const jmesOf = (c: Cond) => conditions(c, []);

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
            const rules = p.spec.matchConstraints.resourceRules.map((r) => `${r.resources.join(" ")}: ${r.operations.join(" ")}`);
            assert.deepStrictEqual(rules, ["rollouts rollouts/status: UPDATE DELETE", "pods pods/ephemeralcontainers: CREATE UPDATE"]);
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
        it("quotes keys, counts from a list's end, and escapes literals", () => {
            const plugin = obj(["spec", "plugins", "argoproj-labs/gatewayAPI", "namespace"]);
            assert.strictEqual(
                jmesOf(and(eq(plugin, "it's"), has(obj(["spec", "steps", -1, "setWeight"])))).all![0].key,
                "{{ request.object.spec.plugins.\"argoproj-labs/gatewayAPI\".namespace == 'it\\'s' }}",
            );
            assert.strictEqual(jmesOf(has(obj(["spec", "steps", -1, "setWeight"]))).all![0].key, "{{ request.object.spec.steps[-1].setWeight != `null` }}");
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
