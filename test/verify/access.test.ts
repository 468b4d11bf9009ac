import * as assert from "assert";
import * as YAML from "yaml";
import { ROLLOUT_PATH_CALLS, ruleAllows, verifyRules } from "../../tools/verify/access";
import { verifyMain } from "../../tools/verify";
import { fixtureConfig } from "./world";
import { FIXTURE_STACKS } from "../harness";
import { controllerClusterRules, controllerNamespaceRules } from "../../components/rollouts/rbac";

// Every request verify makes is one they allow: expectRequestsAllowed (run.ts), after each whole run of test/verify/index.test.ts.
describe("verify's own permissions", () => {
    it("--print-role prints them as a ClusterRole, the proxy pinned to the stack's Mimir gateway", async () => {
        const out: string[] = [];
        assert.strictEqual(
            await verifyMain(
                ["--print-role", "--stack", "hub", "--config-dir", FIXTURE_STACKS],
                (x) => out.push(x),
                () => undefined,
            ),
            0,
        );
        const role = YAML.parse(out.join("\n")) as { kind: string; metadata: { name: string }; rules: { resources: string[]; resourceNames?: string[] }[] };
        assert.strictEqual(role.kind, "ClusterRole");
        assert.deepStrictEqual(role.rules, verifyRules(fixtureConfig("hub")));
        assert.deepStrictEqual(role.rules.find((r) => r.resources.includes("services/proxy"))?.resourceNames, ["mimir-gateway"]);
    });

    it("the program's controller RBAC grants every call of the Rollout path verify asks about", () => {
        const cluster = controllerClusterRules({ tcpRoutes: false, tlsRoutes: false });
        const namespaced = controllerNamespaceRules();
        const missing = ROLLOUT_PATH_CALLS.filter((c) => !(c.scope === "cluster" ? cluster : [...cluster, ...namespaced]).some((r) => ruleAllows(r, c)));
        assert.deepStrictEqual(missing, []);
    });

    it("matches RBAC rules like the RBAC authorizer (wildcards, subresources, resource names)", () => {
        const q = { verb: "patch", group: "argoproj.io", resource: "rollouts", subresource: "status" };
        assert.ok(ruleAllows({ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }, q));
        assert.ok(ruleAllows({ apiGroups: ["argoproj.io"], resources: ["*/status"], verbs: ["patch"] }, q));
        assert.ok(!ruleAllows({ apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: ["patch"] }, q));
        assert.ok(!ruleAllows({ apiGroups: ["argoproj.io"], resources: ["rollouts/status"], verbs: ["patch"], resourceNames: ["one"] }, q));
    });
});
