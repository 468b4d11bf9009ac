import * as assert from "assert";
import { parseAddonConfig } from "../stacks/config";
import { POLICY_NAMES, PolicyConfig, PolicyContext, ValidatingPolicy, celPolicies } from "../components/policy";
import { REQUEST_TYPE, checkExpression, checkPolicy, sites } from "./kyvernoCel";
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
const VARIANTS: [string, PolicyConfig][] = [
    ["defaults", policyConfig()],
    ["own, regulated, no deployer groups", policyConfig({ regulated: { ...REGULATED, deployerGroups: [] } })],
    ["own, regulated", policyConfig({ regulated: REGULATED, prodMinReplicas: 3, pdbMaxUnavailable: 2, topologyKeys: ["topology.kubernetes.io/zone"] })],
    ["complement, regulated", policyConfig({ availabilityPolicies: "complement", regulated: REGULATED })],
];

describe("Kyverno CEL policies, type-checked", () => {
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

    // What the policies decide is the real Kyverno's to say (engine-kyverno-cli, e2e/samples/admission.yaml);
    // here, what they are written to match.
    it("lets the spread mutations fail open by default and closed when the platform asks for it", () => {
        for (const [cfg, policy] of [
            [policyConfig(), "Ignore"],
            [policyConfig({ mutationFailurePolicy: "Fail" }), "Fail"],
        ] as const) {
            const mutations = celPolicies(cfg, CTX).filter((p) => p.kind === "MutatingPolicy");
            assert.ok(mutations.length > 0 && mutations.every((p) => p.spec.failurePolicy === policy));
        }
    });

    it("matches a regulated Rollout and its status at admission only, and its ReplicaSets, their scale, Pods and ephemeral containers", () => {
        const cfg = policyConfig({ regulated: REGULATED });
        const named = (name: string) => celPolicies(cfg, CTX).find((p) => p.metadata.name === name) as ValidatingPolicy;
        const guard = named(POLICY_NAMES.approval);
        assert.deepStrictEqual(guard.spec.matchConstraints.resourceRules[0].resources, ["rollouts", "rollouts/status"]);
        assert.deepStrictEqual(guard.spec.evaluation, { background: { enabled: false } });
        const pods = named(POLICY_NAMES.approvalPods);
        assert.deepStrictEqual(
            pods.spec.matchConstraints.resourceRules.map((r) => r.resources),
            [
                ["replicasets", "replicasets/scale"],
                ["pods", "pods/ephemeralcontainers"],
            ],
        );
        assert.deepStrictEqual(pods.spec.evaluation, { background: { enabled: false } });
        for (const name of [POLICY_NAMES.approval, POLICY_NAMES.approvalPods]) {
            assert.ok(!celPolicies(policyConfig(), CTX).some((x) => x.metadata.name === name), `no ${name} without policy.regulated`);
        }
    });
});
