import * as assert from "assert";
import * as bindings from "../components/policy/approvalBindings";
import { POLICY_NAMES, kyvernoPolicies, kyvernoRoles, namespaceSelector, policyContext } from "../components/policy";
import { renderComponent } from "../components/delivery/kustomize";
import { stackStrategies } from "../components/delivery/config";
import { validateObject } from "../tools/schemas";
import { findWildcards } from "../components/argoRollouts";
import { REGULATED, parseHub, policyConfig } from "./stackConfig";

const { approvalBinding, approvalBindingCelPolicy, approvalBindingClusterPolicy, approvalRoleName, approvalRoleRules, approvalSides } = bindings;

const regulated = (patch: Record<string, unknown> = {}, kyvernoApi = "policies.kyverno.io/v1") =>
    policyConfig({ kyvernoApi, regulated: { ...REGULATED, ...patch } });

describe("approval roles (regulated prod, ADR-056 D3, ADR-049): the platform's, bound by Kyverno", () => {
    it("binds approvers always and deployers when the stack names any, each group once", () => {
        const sides = (p: Record<string, unknown>) => approvalSides(regulated(p).regulated!).map((s) => [s.side, s.groups]);
        assert.deepStrictEqual(sides({ deployerGroups: ["shop-deployers", "oncall", "oncall"] }), [
            ["approver", ["release-approvers"]],
            ["deployer", ["shop-deployers", "oncall"]],
        ]);
        assert.deepStrictEqual(sides({ deployerGroups: [] }), [["approver", ["release-approvers"]]]);
    });

    it("keeps status (promote, abort) with the approver and never with the deployer, with no wildcard", () => {
        const [approver, deployer] = [approvalRoleRules("approver"), approvalRoleRules("deployer")];
        assert.ok(approver.some((r) => r.resources.includes("rollouts/status") && r.verbs.includes("patch")));
        assert.ok(!approver.some((r) => r.resources.includes("rollouts") && r.verbs.some((v) => ["update", "patch", "delete"].includes(v))));
        // Read only: a deployer ships through git, and deleting the Rollout would have GitOps recreate it, promoted fully.
        assert.ok(deployer.every((r) => r.verbs.every((v) => ["get", "list", "watch"].includes(v))));
        assert.deepStrictEqual(findWildcards([...approver, ...deployer]), []);
    });

    it("renders, for a namespace, the binding the API server accepts", () => {
        const b = approvalBinding("approver", ["release-approvers"], "payments") as Record<string, unknown>;
        assert.deepStrictEqual(validateObject(b).problems, []);
        assert.deepStrictEqual(b.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: approvalRoleName("approver") });
    });

    it("generates the bindings on each regulated Namespace, existing ones included, kept in sync, in both APIs", () => {
        const [cel] = approvalBindingCelPolicy(regulated());
        assert.deepStrictEqual(cel.spec.evaluation, { synchronize: { enabled: false }, generateExisting: { enabled: true } });
        assert.deepStrictEqual(cel.spec.matchConstraints.objectSelector, namespaceSelector(regulated(), "regulated"));
        assert.deepStrictEqual(cel.spec.matchConstraints.resourceRules[0].resources, ["namespaces"]);
        assert.match(cel.spec.variables[0].expression, /"namespace": dyn\(object\.metadata\.name\)/);
        assert.match(cel.spec.variables[0].expression, /"name": dyn\("argo-rollouts-addon:rollout-deployer"\)/);

        const cfg = regulated({}, "kyverno.io/v1");
        const [cp] = approvalBindingClusterPolicy(cfg);
        assert.strictEqual(cp.spec.generateExisting, true);
        assert.deepStrictEqual(
            cp.spec.rules.map((r) => [
                r.match.any[0].resources.kinds,
                r.match.any[0].resources.selector,
                r.generate?.name,
                r.generate?.namespace,
                [r.generate?.synchronize, r.generate?.orphanDownstreamOnPolicyDelete],
            ]),
            ["approver", "deployer"].map((side) => [
                ["v1/Namespace"],
                namespaceSelector(cfg, "regulated"),
                `argo-rollouts-addon:rollout-${side}`,
                "{{ request.object.metadata.name }}",
                [true, true],
            ]),
        );
        assert.deepStrictEqual(
            [...approvalBindingCelPolicy(policyConfig()), ...approvalBindingClusterPolicy(policyConfig())],
            [],
            "no regulated class, no bindings",
        );
    });

    it("is declared with the stack's policies, and Kyverno may bind the two roles and no other", () => {
        const cfg = regulated();
        assert.ok(
            kyvernoPolicies(cfg, policyContext({ controller: { namespace: "argo-rollouts" }, policy: cfg })).some(
                (p) => p.metadata.name === POLICY_NAMES.approvalBindings,
            ),
        );
        const role = kyvernoRoles(cfg).find((r) => r.rules.some((x) => x.verbs.includes("bind")))!;
        assert.deepStrictEqual(role.controllers, ["background"]);
        const bind = role.rules.filter((x) => x.verbs.includes("bind"));
        assert.deepStrictEqual(bind, [
            {
                apiGroups: ["rbac.authorization.k8s.io"],
                resources: ["clusterroles"],
                verbs: ["bind"],
                resourceNames: ["approver", "deployer"].map((s) => approvalRoleName(s as "approver")),
            },
        ]);
        assert.ok(!kyvernoRoles(policyConfig()).some((r) => r.rules.some((x) => x.verbs.includes("bind"))));
    });

    it("ships no Role or RoleBinding in a tenant's regulated component", () => {
        const hub = parseHub({ policy: { regulated: REGULATED } });
        const strategies = stackStrategies(hub).filter((s) => s.prodClass === "regulated");
        assert.ok(strategies.length > 0);
        for (const s of strategies) {
            assert.doesNotMatch(Object.values(renderComponent(s)).join("\n"), /kind: (Role|RoleBinding|ClusterRole)\b/, s.id);
        }
    });
});
