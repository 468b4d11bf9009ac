/**
 * `pulumi destroy`, as docs/operations/troubleshooting.md documents it, on the greenfield hub after
 * a tenant has shipped a Rollout: everything the stack declared goes except the five CRDs, and the
 * tenant's Rollout stays.
 */
import assert from "assert";
import { world } from "../lib/context";
import { failure } from "../lib/pulumi";
import { readmeDestroy } from "../lib/readme";
import { ROLLOUTS_CRDS } from "../../components/argoRollouts";

/** It takes down the greenfield stacks: a side-by-side run keeps it in that file's process (e2e/lib/pool.ts). */
export const RUNS_AFTER = "10-greenfield.e2e.ts";
export const SECONDS = 30;

describe("destroy", function () {
    it("destroy-keeps-crds", async function () {
        const w = await world();
        const env = w.pulumi();
        const cluster = w.clusters.get("hub");
        assert.ok(cluster, "the greenfield hub is not up");
        cluster.kubectl(["create", "namespace", "tenant-destroy"]);
        cluster.kubectl(
            ["create", "-f", "-"],
            JSON.stringify({
                apiVersion: "argoproj.io/v1alpha1",
                kind: "Rollout",
                metadata: { name: "web", namespace: "tenant-destroy" },
                spec: {
                    replicas: 1,
                    selector: { matchLabels: { app: "web" } },
                    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "registry.platform.test/mirror/web:1" }] } },
                    strategy: { canary: { steps: [{ setWeight: 50 }] } },
                },
            }),
        );
        const uid = cluster.kubectl(["get", "rollouts.argoproj.io", "web", "-n", "tenant-destroy", "-o", "jsonpath={.metadata.uid}"]);
        const destroy = readmeDestroy();
        // preprod reads the hub's outputs: destroy the spoke first, then the hub, as documented.
        for (const stack of ["preprod", "hub"]) {
            const r = await env.pulumi(destroy, { stack });
            assert.strictEqual(r.status, 0, `pulumi ${destroy.join(" ")} of ${stack} failed:\n${failure(r)}`);
        }
        for (const [stack, c] of w.clusters) {
            if (stack !== "hub" && stack !== "preprod") {
                continue;
            }
            for (const { name } of ROLLOUTS_CRDS) {
                assert.strictEqual(c.kubectl(["get", "crd", name, "-o", "jsonpath={.metadata.name}"]), name, `destroy of ${stack} deleted ${name}`);
            }
            const templates = c.kubectl(["get", "clusteranalysistemplates", "-o", "name"]).trim();
            assert.strictEqual(templates, "", `destroy of ${stack} left the stack's templates: ${templates}`);
        }
        assert.strictEqual(
            cluster.kubectl(["get", "rollouts.argoproj.io", "web", "-n", "tenant-destroy", "-o", "jsonpath={.metadata.uid}"]),
            uid,
            "the tenant Rollout was lost",
        );
    });
});
