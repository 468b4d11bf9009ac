import * as assert from "assert";
import type { KubeObject } from "../tools/verify/cluster";
import { FOLDED_ROUTE_QUERY, foldedProbeRoutes, foldsInto, gatedRollouts, routeSeries } from "../tools/verify/probeRoutes";

const rollout = (namespace: string, name: string, strategy: unknown): KubeObject => ({
    apiVersion: "argoproj.io/v1alpha1",
    kind: "Rollout",
    metadata: { namespace, name },
    spec: { strategy },
});
const ref = (templateName: string, clusterScope = true) => ({ templates: [{ templateName, clusterScope }] });

describe("probe routes Beyla folded (verify's metrics.query)", () => {
    it("a folded route holds a probe when it has a wildcard segment and every other segment is the probe's", () => {
        // Beyla's trie folds a whole level into `*`, keeping the number of segments.
        assert.ok(foldsInto("/healthz", "/*"));
        assert.ok(foldsInto("/healthz/", "/*"));
        assert.ok(foldsInto("/actuator/health/liveness", "/actuator/health/*"));
        assert.ok(foldsInto("/actuator/health/liveness", "/*/health/liveness"));
        assert.ok(foldsInto("/actuator/health/liveness", "/*/*/*"));
        // unmatched: wildcard reports every unmatched path as /**.
        assert.ok(foldsInto("/actuator/health/liveness", "/**"));
        assert.ok(!foldsInto("/healthz", "/healthz"), "not folded");
        assert.ok(!foldsInto("/healthz", "/api/*"), "two segments");
        assert.ok(!foldsInto("/actuator/health/liveness", "/*"), "one segment");
        assert.ok(!foldsInto("/actuator/health/liveness", "/actuator/info/*"));
    });

    it("gated Rollouts are those referencing a request gate, in background, step or pre/post-promotion analysis", () => {
        const rollouts = [
            rollout("a", "background", { canary: { analysis: ref("argo-rollouts-addon-success-rate") } }),
            rollout("a", "step", { canary: { steps: [{ setWeight: 10 }, { analysis: ref("argo-rollouts-addon-latency-p99-finite") }] } }),
            rollout("b", "bluegreen", {
                blueGreen: {
                    prePromotionAnalysis: ref("argo-rollouts-addon-success-rate-finite"),
                    postPromotionAnalysis: ref("argo-rollouts-addon-latency-p99-finite"),
                },
            }),
            // The error budget counts no requests; a namespaced template of the same name is the team's own.
            rollout("b", "budget", { canary: { steps: [{ analysis: ref("argo-rollouts-addon-error-budget-wait") }] } }),
            rollout("b", "own", { canary: { analysis: ref("argo-rollouts-addon-success-rate", false) } }),
            rollout("b", "plain", { canary: { steps: [{ setWeight: 100 }] } }),
        ];
        assert.deepStrictEqual(gatedRollouts(rollouts), [
            { namespace: "a", name: "background", gates: ["argo-rollouts-addon-success-rate"] },
            { namespace: "a", name: "step", gates: ["argo-rollouts-addon-latency-p99-finite"] },
            { namespace: "b", name: "bluegreen", gates: ["argo-rollouts-addon-success-rate-finite", "argo-rollouts-addon-latency-p99-finite"] },
        ]);
    });

    it("reports a gated Rollout's ReplicaSets whose folded route can hold a probe the gates would otherwise leave out", () => {
        const gated = [{ namespace: "shop", name: "web", gates: ["argo-rollouts-addon-success-rate"] }];
        const probes = ["/healthz", "/actuator/health/readiness"];
        const s = (replicaSet: string, route: string, namespace = "shop") => ({ namespace, replicaSet, route });
        const series = [s("web-6d9f7c8b5", "/*"), s("web-7b8c9d6f4", "/*"), s("web-6d9f7c8b5", "/actuator/health/*"), s("web-6d9f7c8b5", "/users/*")];
        assert.deepStrictEqual(foldedProbeRoutes(series, gated, probes), [
            { rollout: gated[0], route: "/*", probes: ["/healthz"], replicaSets: ["web-6d9f7c8b5", "web-7b8c9d6f4"] },
            { rollout: gated[0], route: "/actuator/health/*", probes: ["/actuator/health/readiness"], replicaSets: ["web-6d9f7c8b5"] },
        ]);
        // Another Rollout's ReplicaSet (web-api-<hash>), another namespace, an ungated Rollout.
        assert.deepStrictEqual(foldedProbeRoutes([s("web-api-6d9f7c8b5", "/*"), s("web-6d9f7c8b5", "/*", "other")], gated, probes), []);
        assert.deepStrictEqual(foldedProbeRoutes(series, [], probes), []);
        // A route listed among the excluded routes is not counted; with none excluded every request counts by choice.
        assert.deepStrictEqual(foldedProbeRoutes([s("web-6d9f7c8b5", "/*")], gated, [...probes, "/*"]), []);
        assert.deepStrictEqual(foldedProbeRoutes(series, gated, []), []);
    });

    it("reads Mimir's answer to the wildcard-route query, per workload and route", () => {
        assert.strictEqual(
            FOLDED_ROUTE_QUERY,
            'count by (k8s_namespace_name, k8s_replicaset_name, http_route) (http_server_request_duration_seconds_count{k8s_namespace_name!="",k8s_replicaset_name!="",http_route=~".*[*].*"})',
        );
        assert.deepStrictEqual(
            routeSeries([
                { metric: { k8s_namespace_name: "shop", k8s_replicaset_name: "web-6d9f7c8b5", http_route: "/*" }, value: [1, "2"] },
                { metric: {}, value: [1, "37"] },
                { metric: { k8s_namespace_name: "shop", http_route: "/*" }, value: [1, "1"] },
            ]),
            [{ namespace: "shop", replicaSet: "web-6d9f7c8b5", route: "/*" }],
        );
    });
});
