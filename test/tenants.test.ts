import * as assert from "assert";
import { aggregatedRolloutWrites } from "../components/guardrails";
import { AGGREGATE_TO_VIEW, TENANT_OPERATOR_ROLE, TENANT_VIEW_ROLE, tenantOperatorRules } from "../components/rollouts/tenants";
import { OfflineRun } from "../tools/offline";
import { byName, hubConfig, merged, planInline } from "./harness";
import { hubProblems } from "./stackConfig";

/** Every (group/resource, verb) a list of rules grants. */
const grants = (rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[]) =>
    new Set(rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res}:${v}`)))));

describe("tenant access to Rollouts", () => {
    let run: OfflineRun;
    before(async () => {
        run = await planInline(hubConfig());
    });

    it("lets every namespace viewer (and so editor and admin) read Rollouts and their analysis, and write nothing", () => {
        const view = byName(run, "tenant-rollouts-view");
        const meta = view.inputs.metadata as { name: string; labels: Record<string, string> };
        assert.strictEqual(meta.name, TENANT_VIEW_ROLE);
        assert.strictEqual(meta.labels[AGGREGATE_TO_VIEW], "true");
        const g = grants(view.inputs.rules as never);
        for (const res of ["rollouts", "analysisruns", "analysistemplates", "experiments", "rollouts/scale"]) {
            for (const verb of ["get", "list", "watch"]) {
                assert.ok(g.has(`argoproj.io/${res}:${verb}`), `${res} ${verb}`);
            }
        }
        assert.ok(![...g].some((x) => /:(create|update|patch|delete)$/.test(x)), "the view role writes nothing");
        assert.deepStrictEqual(aggregatedRolloutWrites(meta.labels, view.inputs.rules), []);
    });

    it("keeps the operator role out of every aggregate, bound only where the stack says", async () => {
        const operator = byName(run, "tenant-rollouts-operator");
        const meta = operator.inputs.metadata as { name: string; labels: Record<string, string> };
        assert.strictEqual(meta.name, TENANT_OPERATOR_ROLE);
        assert.ok(!Object.keys(meta.labels).some((k) => k.includes("aggregate-to")), JSON.stringify(meta.labels));
        assert.ok(!run.resources.some((r) => r.name.startsWith("tenant-rollouts-operator-")), "no binding without controller.tenantOperators");

        const bound = await planInline(
            merged(hubConfig(), { controller: { tenantOperators: [{ namespace: "shop-dev", groups: ["shop-devs", "shop-oncall"] }] } }),
        );
        const b = byName(bound, "tenant-rollouts-operator-shop-dev");
        assert.strictEqual(b.type, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding");
        assert.deepStrictEqual((b.inputs.metadata as { namespace: string }).namespace, "shop-dev");
        assert.deepStrictEqual(b.inputs.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: TENANT_OPERATOR_ROLE });
        assert.deepStrictEqual(
            (b.inputs.subjects as { name: string }[]).map((s) => s.name),
            ["shop-devs", "shop-oncall"],
        );
    });

    it("gives the operator restart, abort, retry, promote and scale, and never create or delete", () => {
        const g = grants(tenantOperatorRules());
        // kubectl-argo-rollouts v1.9.0: restart patches the Rollout, abort/retry/promote its status.
        for (const x of [
            "argoproj.io/rollouts:patch",
            "argoproj.io/rollouts/status:patch",
            "argoproj.io/rollouts/scale:patch",
            "argoproj.io/rollouts/scale:update",
            "argoproj.io/experiments:patch",
        ]) {
            assert.ok(g.has(x), x);
        }
        assert.ok(![...g].some((x) => /:(create|delete|deletecollection)$/.test(x)), "Rollouts come from git");
    });

    it("refuses an operator binding for the controller's or a platform namespace, twice the same namespace, or without groups", () => {
        const problems = (tenantOperators: unknown) => hubProblems({ controller: { tenantOperators } }).map((p) => `${p.key}: ${p.allowed}`);
        assert.match(
            problems([{ namespace: "argo-rollouts", groups: ["a"] }]).join("\n"),
            /controller\.tenantOperators\[0\]\.namespace: must be a tenant namespace, not the controller's own/,
        );
        assert.match(problems([{ namespace: "kube-system", groups: ["a"] }]).join("\n"), /not a platform namespace/);
        assert.match(
            problems([
                { namespace: "shop", groups: ["a"] },
                { namespace: "shop", groups: ["b"] },
            ]).join("\n"),
            /controller\.tenantOperators\[1\]\.namespace: must appear once/,
        );
        assert.match(problems([{ namespace: "shop" }]).join("\n"), /controller\.tenantOperators\[0\]\.groups: is required/);
        assert.match(problems({ namespace: "shop" }).join("\n"), /controller\.tenantOperators: must be a list/);
    });
});

describe("guardrail no-aggregated-rollout-writes", () => {
    it("refuses a role aggregated to edit that writes rollouts/status, as the chart's aggregate roles do", () => {
        const rules = [{ apiGroups: ["argoproj.io"], resources: ["rollouts", "rollouts/status"], verbs: ["get", "patch"] }];
        assert.match(
            aggregatedRolloutWrites({ "rbac.authorization.k8s.io/aggregate-to-edit": "true" }, rules)[0],
            /grants patch on argoproj.io rollouts, rollouts\/status and is aggregated/,
        );
        assert.deepStrictEqual(aggregatedRolloutWrites({}, rules), [], "a role nobody aggregates is bound on purpose");
        assert.deepStrictEqual(aggregatedRolloutWrites({ "rbac.authorization.k8s.io/aggregate-to-view": "false" }, rules), []);
    });
});
