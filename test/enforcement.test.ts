/** Turning the regulated tier rule's Enforce on, announced with names (components/policy/enforcement.ts, stacks/preflight.ts). */
import * as assert from "assert";
import type { LiveObject, LiveReader } from "../components/cluster/live";
import { enforcementNotice, regulatedProdQuery, selectorQuery } from "../components/policy/enforcement";
import { enforcementPreflight } from "../stacks/preflight";
import { REGULATED, parseHub } from "./stackConfig";

const RULE = "/apis/policies.kyverno.io/v1/validatingpolicies/require-prod-regulated-delivery";

/** A cluster of the given objects (by path) and lists (by path, query included); it records every request. */
function cluster(objects: Record<string, LiveObject>, lists: Record<string, LiveObject[]>): Pick<LiveReader, "get" | "list"> & { asked: string[] } {
    const asked: string[] = [];
    return { asked, get: async (p) => (asked.push(p), objects[p]), list: async (p) => (asked.push(p), lists[p]) };
}
const rollout = (namespace: string, name: string): LiveObject => ({ metadata: { namespace, name } });
const report = (namespace: string, name: string, result: string, policy = "require-prod-regulated-delivery"): LiveObject =>
    ({ metadata: { namespace }, scope: { kind: "Rollout", namespace, name }, results: [{ policy, result, message: `${name} has no gate` }] }) as LiveObject;

describe("turning Enforce on for the regulated tier", () => {
    const config = parseHub({ policy: { regulated: REGULATED } });
    // The policies' own selector (builders.ts namespaceSelector), as the API server's query: it, not the program, matches labels.
    const namespaces = `/api/v1/namespaces?labelSelector=${encodeURIComponent(regulatedProdQuery(config.policy))}`;

    it("writes a label selector as the API server's query, every operator", () => {
        const q = selectorQuery({
            matchLabels: { a: "1" },
            matchExpressions: [
                { key: "b", operator: "In", values: ["x", "y"] },
                { key: "c", operator: "NotIn", values: ["z"] },
                { key: "d", operator: "Exists" },
                { key: "e", operator: "DoesNotExist" },
            ],
        });
        assert.strictEqual(q, "a=1,b in (x,y),c notin (z),d,!e");
    });

    it("names the Rollouts Kyverno's reports fail once the rule is installed, and only those", async () => {
        const reports = [report("shop-prod", "cart", "fail"), report("shop-prod", "web", "pass"), report("shop-prod", "api", "fail", "other")];
        const warnings: string[] = [];
        const live = cluster({ [RULE]: {} }, { "/apis/wgpolicyk8s.io/v1alpha2/policyreports": reports });
        await enforcementPreflight(config, live, (m) => warnings.push(m));
        assert.strictEqual(warnings.length, 1);
        assert.match(warnings[0], /require-prod-regulated-delivery enforces, and Kyverno's policy reports say 1 Rollout\(s\) fail it/);
        assert.match(warnings[0], /\n {2}shop-prod\/cart: cart has no gate$/);
        assert.ok(!live.asked.includes("/apis/argoproj.io/v1alpha1/rollouts"), "installed: the reports decide, the Rollouts are not listed");
    });

    it("lists the regulated prod Rollouts Kyverno has not judged when this run installs the rule, found by the API server's selector", async () => {
        const warnings: string[] = [];
        const live = cluster(
            {},
            { [namespaces]: [{ metadata: { name: "pay-prod" } }], "/apis/argoproj.io/v1alpha1/rollouts": [rollout("pay-prod", "ledger"), rollout("web", "x")] },
        );
        await enforcementPreflight(config, live, (m) => warnings.push(m));
        assert.match(
            warnings[0],
            /installed by this run and enforces at once, .* none of the 1 Rollout\(s\) in regulated prod namespaces yet \(pay-prod\/ledger\).*policy\.validationAction: Audit/,
        );
    });

    it("reads nothing with the regulated rule in Audit, as a ClusterPolicy or without a regulated class, and says nothing when nobody fails", async () => {
        for (const patch of [
            { policy: { regulated: REGULATED, validationAction: "Audit" } },
            { policy: { regulated: REGULATED, kyvernoApi: "kyverno.io/v1" } },
            {},
        ]) {
            const live = cluster({}, {});
            await enforcementPreflight(parseHub(patch), live, assert.fail);
            assert.deepStrictEqual(live.asked, []);
        }
        assert.strictEqual(enforcementNotice("hub", { ruleInstalled: true, failing: [], regulatedProd: [rollout("a", "b") as never] }), undefined);
    });
});
