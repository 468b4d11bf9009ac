import * as assert from "assert";
import { POLICY_NAMES, PolicyConfig, PolicyContext, ValidatingPolicy, celPolicies } from "../components/policy";
import { checkExpression, checkPolicy } from "./kyvernoCel";
import { policyConfig, REGULATED } from "./stackConfig";

// ---------------------------------------------------------------------------------------------
// Configurations and samples.

const CTX: PolicyContext = { rolloutsController: { namespace: "argo-rollouts", name: "argo-rollouts" } };
const VARIANTS: [string, PolicyConfig][] = [
    ["defaults", policyConfig()],
    ["own, regulated, no deployer groups", policyConfig({ regulated: { ...REGULATED, deployerGroups: [] } })],
    ["own, regulated", policyConfig({ regulated: REGULATED, prodMinReplicas: 3, pdbMaxUnavailable: 2, topologyKeys: ["topology.kubernetes.io/zone"] })],
    ["complement, regulated", policyConfig({ availabilityPolicies: "complement", regulated: REGULATED })],
];

describe("Kyverno CEL policies", () => {
    describe("every expression parses and names only what its place declares (the engine decides types)", () => {
        const cases: [string, string[], string[] | undefined, string[]][] = [
            ['object.spec.replicas >= 2 && request.operation == "CREATE"', ["object", "request"], undefined, []],
            ["object.spec.replicas >=", ["object"], undefined, ["does not parse"]],
            ["object.spec.template.spec.containers.all(c, has(c.image))", ["object"], undefined, []],
            ["podSpec.containers.size() > 0", ["object"], undefined, ["undeclared reference to 'podSpec'"]],
            ["variables.pdbs.size() > 0", ["object", "variables"], ["pdbs"], []],
            ["variables.pdb.size() > 0", ["object", "variables"], ["pdbs"], ["undeclared variable 'pdb'"]],
            ["variables.pdbs.size() > 0", ["object"], undefined, ["undeclared reference to 'variables'"]],
            ['resource.List("policy/v1", "poddisruptionbudgets", "shop")', ["object"], undefined, ["undeclared reference to 'resource'"]],
        ];
        for (const [expression, globals, declared, problems] of cases) {
            it(`${expression} -> ${problems.join() || "accepted"}`, () => {
                const found = checkExpression(expression, globals, declared);
                assert.strictEqual(found.length, problems.length, found.join());
                problems.forEach((p, i) => assert.ok(found[i].startsWith(p), found[i]));
            });
        }

        for (const [label, cfg] of VARIANTS) {
            it(`finds nothing to refuse in any emitted policy (${label})`, () => {
                const policies = celPolicies(cfg, CTX);
                assert.ok(policies.length > 0);
                assert.deepStrictEqual(policies.flatMap(checkPolicy), []);
            });
        }
    });

    // What the policies decide is the real Kyverno's to say (engine-kyverno-cli, e2e/samples/admission.yaml);
    // here, what they are written to match.

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
