import * as assert from "assert";
import type { KubeObject } from "../tools/verify/cluster";
import { foldedProbeRoutes, foldsInto, gatedRollouts, templateReferences } from "../tools/verify/probeRoutes";

const rollout = (namespace: string, name: string, strategy: unknown): KubeObject => ({ kind: "Rollout", metadata: { namespace, name }, spec: { strategy } });
const ref = (templateName: string, clusterScope = true) => ({ templates: [{ templateName, clusterScope }], args: [{ name: "service", value: "web" }] });

describe("probe routes Beyla folded (verify's metrics.query)", () => {
    it("a route holds a probe when it is /** or keeps the probe's segments with at least one *", () => {
        const cases: [string, string, boolean][] = [
            ["/healthz", "/*", true],
            ["/healthz/", "/*", true],
            ["/actuator/health/liveness", "/*/health/liveness", true],
            ["/actuator/health/liveness", "/**", true],
            ["/healthz", "/healthz", false],
            ["/healthz", "/api/*", false],
            ["/actuator/health/liveness", "/*", false],
        ];
        for (const [probe, route, folds] of cases) {
            assert.strictEqual(foldsInto(probe, route), folds, `${probe} in ${route}`);
        }
    });

    it("reads a Rollout's cluster template references, and gated Rollouts reference a request gate", () => {
        const pre = ref("argo-rollouts-addon-success-rate-finite");
        const rollouts = [
            rollout("a", "step", { canary: { analysis: ref("argo-rollouts-addon-success-rate"), steps: [{ setWeight: 10 }, { analysis: ref("x") }] } }),
            rollout("b", "bluegreen", { blueGreen: { prePromotionAnalysis: pre, postPromotionAnalysis: ref("argo-rollouts-addon-latency-p99-finite") } }),
            // The error budget counts no requests; a namespaced template of the same name is the team's own.
            rollout("b", "budget", { canary: { steps: [{ analysis: ref("argo-rollouts-addon-error-budget-wait") }] } }),
            rollout("b", "own", { canary: { analysis: ref("argo-rollouts-addon-success-rate", false) } }),
        ];
        assert.deepStrictEqual(
            templateReferences(rollouts[0]).map((t) => [t.where, t.template, t.args[0].name]),
            [
                ["canary.analysis", "argo-rollouts-addon-success-rate", "service"],
                ["canary.steps[1].analysis", "x", "service"],
            ],
        );
        assert.deepStrictEqual(
            templateReferences(rollouts[1]).map((t) => t.where),
            ["blueGreen.prePromotionAnalysis", "blueGreen.postPromotionAnalysis"],
        );
        assert.deepStrictEqual(
            gatedRollouts(rollouts).map((r) => r.metadata?.name),
            ["step", "bluegreen"],
        );
    });

    it("reports a gated Rollout's ReplicaSets whose folded route can hold a probe the gates would otherwise leave out", () => {
        const web = rollout("shop", "web", { canary: { analysis: ref("argo-rollouts-addon-success-rate") } });
        const probes = ["/healthz", "/actuator/health/readiness"];
        const s = (rs: string, route: string, ns = "shop") => ({
            metric: { k8s_namespace_name: ns, k8s_replicaset_name: rs, http_route: route },
            value: [1, "1"],
        });
        const answer = [
            s("web-6d9f7c8b5", "/*"),
            s("web-7b8c9d6f4", "/*"),
            s("web-6d9f7c8b5", "/actuator/health/*"),
            s("web-6d9f7c8b5", "/users/*"),
            { metric: {} },
        ];
        const gates = ["argo-rollouts-addon-success-rate"];
        assert.deepStrictEqual(foldedProbeRoutes(answer, [web], probes), [
            { rollout: { namespace: "shop", name: "web", gates }, route: "/*", probes: ["/healthz"], replicaSets: ["web-6d9f7c8b5", "web-7b8c9d6f4"] },
            {
                rollout: { namespace: "shop", name: "web", gates },
                route: "/actuator/health/*",
                probes: ["/actuator/health/readiness"],
                replicaSets: ["web-6d9f7c8b5"],
            },
        ]);
        // Another Rollout's ReplicaSet, another namespace, an excluded route, nothing excluded.
        assert.deepStrictEqual(foldedProbeRoutes([s("web-api-6d9f7c8b5", "/*"), s("web-6d9f7c8b5", "/*", "other")], [web], probes), []);
        assert.deepStrictEqual(foldedProbeRoutes([s("web-6d9f7c8b5", "/*")], [web], [...probes, "/*"]), []);
        assert.deepStrictEqual(foldedProbeRoutes(answer, [web], []), []);
    });
});
