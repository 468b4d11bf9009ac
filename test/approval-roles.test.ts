import * as assert from "assert";
import { approvalRoles, deliveryPlan } from "../components/delivery";
import { validateObject } from "../tools/schemas";
import { findWildcards } from "../components/argoRollouts";

const app = { name: "checkout", namespace: "shop" };
const groups = { approverGroups: ["release-approvers"], deployerGroups: ["shop-deployers", "shop-deployers", "oncall"] };

describe("approval roles (regulated prod, ADR-056 D3, ADR-049)", () => {
    it("binds the approver Role to the approver groups and the deployer Role to the deployer groups", () => {
        const { approver, deployer, bindings } = approvalRoles(app, groups);
        assert.deepStrictEqual(
            bindings.map((b) => [b.metadata.name, b.roleRef, b.subjects.map((s) => `${s.kind}:${s.name}`)]),
            [
                [approver.metadata.name, { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: approver.metadata.name }, ["Group:release-approvers"]],
                [
                    deployer.metadata.name,
                    { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: deployer.metadata.name },
                    ["Group:shop-deployers", "Group:oncall"],
                ],
            ],
        );
        assert.ok(bindings.every((b) => b.metadata.namespace === "shop"));
    });

    it("binds nothing for a side without groups", () => {
        assert.deepStrictEqual(approvalRoles(app).bindings, []);
        assert.deepStrictEqual(
            approvalRoles(app, { approverGroups: ["a"], deployerGroups: [] }).bindings.map((b) => b.roleRef.name),
            ["checkout-rollout-approver"],
        );
    });

    it("keeps status (promote, abort) with the approver and never with the deployer, with no wildcard", () => {
        const { approver, deployer } = approvalRoles(app, groups);
        assert.ok(approver.rules.some((r) => r.resources.includes("rollouts/status") && r.verbs.includes("patch")));
        assert.ok(!approver.rules.some((r) => r.resources.includes("rollouts") && r.verbs.some((v) => ["update", "patch"].includes(v))));
        assert.ok(!deployer.rules.some((r) => r.resources.includes("rollouts/status")));
        // Read only: a deployer ships through git (the admission guard admits spec changes from the
        // GitOps identities only), and deleting the Rollout would have GitOps recreate it, promoted
        // fully without a gate.
        assert.ok(deployer.rules.every((r) => r.verbs.every((v) => ["get", "list", "watch"].includes(v))));
        assert.deepStrictEqual(findWildcards([...approver.rules, ...deployer.rules]), []);
    });

    it("renders objects the API server accepts", () => {
        const { approver, deployer, bindings } = approvalRoles(app, groups);
        for (const o of [approver, deployer, ...bindings]) {
            assert.deepStrictEqual(validateObject(o as unknown as Record<string, unknown>).problems, [], o.metadata.name);
        }
    });

    it("is what a regulated delivery plan carries", () => {
        const route = { name: "checkout", gateway: { name: "internal", namespace: "gateway-system", listener: "https" }, hostnames: ["shop.example.com"] };
        const plan = deliveryPlan({ ...app, port: 8080, route }, { tier: "prod", prodClass: "regulated", approval: groups });
        assert.deepStrictEqual(plan.roles, approvalRoles(app, groups));
    });
});
