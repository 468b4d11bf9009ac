import * as assert from "assert";
import { PolicyConfig, PolicyContext, celPolicies } from "../components/policy";
import { checkExpression, checkPolicy } from "./kyvernoCel";
import { policyConfig, REGULATED } from "./stackConfig";

const CTX: PolicyContext = { rolloutsController: { namespace: "argo-rollouts", name: "argo-rollouts" } };
const VARIANTS: [string, PolicyConfig][] = [
    ["defaults", policyConfig()],
    ["own, regulated, no deployer groups", policyConfig({ regulated: { ...REGULATED, deployerGroups: [] } })],
    ["own, regulated", policyConfig({ regulated: REGULATED, prodMinReplicas: 3, pdbMaxUnavailable: 2, topologyKeys: ["topology.kubernetes.io/zone"] })],
    ["complement, regulated", policyConfig({ availabilityPolicies: "complement", regulated: REGULATED })],
];

describe("Kyverno CEL policies: every expression parses and names only what its place declares (the engine decides types)", () => {
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
