/** Old controllers found by what every controller has, not by the image path (components/cluster/oldInstall.ts). */
import * as assert from "assert";
import { CONTROLLER_LEASE, oldInstallProblems } from "../components/cluster/oldInstall";
import type { LiveObject } from "../components/cluster/live";

const deployment = (name: string, image: string, extra: { labels?: Record<string, string>; command?: string[]; args?: string[] } = {}): LiveObject => ({
    metadata: { name, namespace: "tools", ...(extra.labels ? { labels: extra.labels } : {}) },
    spec: { template: { spec: { containers: [{ name: "main", image, command: extra.command, args: extra.args }] } } },
});

describe("old controllers, however they were pulled", () => {
    it("finds a controller by its Lease, its component label or its binary, and nothing else", () => {
        const mirror = "mirror.example/argo-rollouts:v1.8.3";
        const cases: [LiveObject, string | undefined][] = [
            [deployment("leader", "mirror.example/rollouts:v1.8.3"), "v1.8.3"],
            [deployment("labelled", mirror, { labels: { "app.kubernetes.io/component": "rollouts-controller" } }), "v1.8.3"],
            [deployment("binary", mirror, { command: ["/bin/rollouts-controller"] }), "v1.8.3"],
            [deployment("scoped", mirror, { command: ["/bin/rollouts-controller"], args: ["--namespaced"] }), undefined],
            [deployment("dashboard", "mirror.example/kubectl-argo-rollouts:v1.8.3"), undefined],
            [deployment("web", mirror), undefined],
        ];
        const lease = (namespace: string, holder: string): LiveObject => ({
            metadata: { name: CONTROLLER_LEASE, namespace },
            spec: { holderIdentity: holder },
        });
        const problems = oldInstallProblems({
            namespace: "argo-rollouts",
            name: "argo-rollouts",
            deployments: cases.map(([d]) => d),
            // The holder is the leader's pod, `<deployment>-<hash>-<suffix>_<uuid>`; a Lease left by a deleted controller names no Deployment.
            leases: [lease("tools", "leader-5d8f9c7b6-x2x9q_6b1f0f6e-1c2d"), lease("other", "web-7c9d8b6f5-abcde_1")],
            chartSelector: {},
            pdb: undefined,
        });
        assert.deepStrictEqual(
            problems.map((p) => `${p.object}: ${/runs Argo Rollouts (\S+)/.exec(p.found)?.[1]}`),
            cases.filter(([, tag]) => tag).map(([d, tag]) => `Deployment tools/${d.metadata?.name}: ${tag}`),
        );
    });
});
