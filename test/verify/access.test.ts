import * as assert from "assert";
import * as YAML from "yaml";
import { ROLLOUT_PATH_CALLS, ruleAllows, verifyRules } from "../../tools/verify/access";
import type { ResourceQuestion } from "../../tools/verify/cluster";
import { verifyMain } from "../../tools/verify";
import { fixture, healthyCluster, fixtureConfig, verifyConfig } from "./world";

import { useFakeCluster } from "./run";
import { controllerClusterRules, controllerNamespaceRules } from "../../components/rollouts/rbac";

/**
 * The RBAC question a request verify sent asks: `GET /api|/apis/.../<resource>[/<name>[/<sub>]]`
 * (a collection is `list`, an object `get`, the service proxy `get services/proxy`), or a `POST`
 * of an access review (`create`). Undefined for non-resource paths (`/version`).
 */
function requestQuestion(method: string, rawPath: string): ResourceQuestion | undefined {
    const path = rawPath.split("?")[0];
    const parts = path.split("/").filter(Boolean);
    if (parts[0] !== "api" && parts[0] !== "apis") {
        return undefined;
    }
    const group = parts[0] === "api" ? "" : parts[1];
    let rest = parts[0] === "api" ? parts.slice(2) : parts.slice(3);
    let namespace: string | undefined;
    if (rest[0] === "namespaces" && rest.length > 2) {
        namespace = rest[1];
        rest = rest.slice(2);
    }
    const [resource, name, subresource] = rest;
    const verb = method === "POST" ? "create" : name === undefined ? "list" : "get";
    return {
        verb,
        group,
        resource,
        ...(namespace ? { namespace } : {}),
        ...(name ? { name: name.split(":")[0] } : {}),
        ...(subresource ? { subresource } : {}),
    };
}

describe("verify's own permissions", () => {
    const { verify, server } = useFakeCluster();

    for (const stack of ["verifyConfig", "hub", "preprod"]) {
        it(`cover every request verify makes (${stack}), and nothing more than reads and access reviews`, async () => {
            const config = stack === "verifyConfig" ? verifyConfig() : fixtureConfig(stack);
            await verify(config, healthyCluster(config), {
                httpGet: async () => ({ status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) }),
            });
            const rules = verifyRules(config);
            const asked = server()
                .requests.map((r) => ({ r, q: requestQuestion(r.split(" ")[0], r.split(" ")[1]) }))
                .filter((x) => x.q !== undefined && x.q.resource !== "selfsubjectaccessreviews");
            assert.ok(asked.length > 40);
            assert.deepStrictEqual(
                asked.filter((x) => !rules.some((rule) => ruleAllows(rule, x.q!))).map((x) => x.r),
                [],
            );
            for (const rule of rules) {
                assert.ok(
                    rule.verbs.every((v) => ["get", "list"].includes(v) || (v === "create" && rule.resources.join() === "subjectaccessreviews")),
                    JSON.stringify(rule),
                );
                assert.ok(!rule.resources.includes("secrets"));
            }
            assert.strictEqual(
                rules.some((r) => r.resources.includes("services/proxy")),
                config.cluster.role === "hub",
            );
        });
    }

    it("--print-role prints them as a ClusterRole, the proxy pinned to the stack's Mimir gateway", async () => {
        const out: string[] = [];
        assert.strictEqual(
            await verifyMain(
                ["--print-role", "--stack", "hub"],
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
