/**
 * Another shape of old install: Argo Rollouts applied from the argo-rollouts module's own manifests
 * (manifests/install.yaml, no Helm), its controller running (the real v1.9.0, as that Deployment's
 * pod) with a tenant Rollout on it. adopt-check names what adoption cannot take over (the
 * controller's selector, immutable and not the chart's), the adopting preview refuses it too, and
 * the adoption runbook's steps as written (docs/operations/adopt.md) adopt it: the tenant Rollout
 * keeps its UID and its ReplicaSet once the stack's controller runs.
 */
import assert from "assert";
import * as path from "path";
import type { AdoptReport } from "../../tools/adopt/check";
import { world } from "../lib/context";
import { PLAIN_NS, PlainInstall, assertTakenOver, plainInstall, runRunbook } from "../lib/plainInstall";
import { pluginDownloadPatch, publishPlugin } from "../lib/delivery";
import { moduleDir } from "../lib/modules";
import { ARGO_ROLLOUTS } from "../lib/platform";
import { failure } from "../lib/pulumi";
import { npmRunAsync } from "../lib/world";

const TENANT_NS = "tenant-plain";
const NS = PLAIN_NS;

/** About how long this file runs beside another on 2 cores: orders the side-by-side run (e2e/lib/pool.ts). */
export const SECONDS = 200;

describe("plain manifests", function () {
    // Two pulumi up, a preview, adopt-check and two controllers: bounded generously for a shared machine.
    this.timeout(15 * 60_000);
    const note = (m: string) => console.log(`    brownfield-plain-manifests: ${m}`);
    let install: PlainInstall | undefined;

    after(async function () {
        await install?.controller?.stop();
    });

    it("brownfield-plain-manifests", async function () {
        const w = await world();
        const plugin = publishPlugin(w.bin, w.files);
        const env = w.pulumi("plain");
        const target = await w.cluster("plain", "hub", pluginDownloadPatch(plugin));
        const c = target.cluster;
        const tag = path.basename(moduleDir(ARGO_ROLLOUTS)).split("@")[1];
        install = await plainInstall(w, c, { moduleDir: moduleDir(ARGO_ROLLOUTS), tag, tenantNs: TENANT_NS, controller: "old-install-controller" });
        await w.initStack(env, target);
        note("the old install runs, the tenant Rollout is Healthy; adopt-check");

        // adopt-check names the controller the chart cannot take over, and the adopting preview refuses it.
        // Without blocking: the run's own file server answers its CRD source.
        const check = await npmRunAsync(
            "adopt-check",
            ["--stack", "hub", "--json", "--kubeconfig", c.kubeconfig, "--context", "e2e", "--config-dir", env.projectDir],
            { ...process.env, NODE_EXTRA_CA_CERTS: w.files.caFile },
        );
        const report = JSON.parse(check.stdout) as AdoptReport;
        assert.strictEqual(check.status, 1, check.stderr);
        const breaks = report.breaks.map((b) => `${b.object}: ${b.found}`);
        assert.ok(
            breaks.some((b) => b.startsWith(`Deployment ${NS}/argo-rollouts: selects {app.kubernetes.io/name=argo-rollouts}, the chart {`)),
            breaks.join("\n"),
        );
        const deployment = report.objects.find((o) => o.object === `Deployment ${NS}/argo-rollouts`);
        assert.ok(deployment?.changes?.includes("spec.selector.matchLabels.app.kubernetes.io/instance"), JSON.stringify(deployment));
        // The CRDs' fields are compared against the manifests the stack applies.
        assert.ok(
            report.objects.filter((o) => o.declaredBy === "crds").every((o) => Array.isArray(o.changes)),
            JSON.stringify(report.objects.filter((o) => o.declaredBy === "crds")),
        );
        const set = await env.pulumi(["config", "set", "--path", "cluster.adoptExisting", "true"], { stack: "hub" });
        assert.strictEqual(set.status, 0, failure(set));
        const preview = await env.pulumi(["preview", "--policy-pack", "policy-pack"], { stack: "hub" });
        assert.notStrictEqual(preview.status, 0, "the adopting preview accepted a controller whose selector the chart cannot take");
        assert.match(
            preview.stdout + preview.stderr,
            /Deployment argo-rollouts\/argo-rollouts: selects \{app\.kubernetes\.io\/name=argo-rollouts\}, the chart .*: a Deployment's selector is immutable/,
            failure(preview),
        );
        await env.pulumi(["config", "set", "--path", "cluster.adoptExisting", "false"], { stack: "hub" });

        note("the runbook");
        await runRunbook(w, env, c, install, {
            after: async (command) => {
                if (command.includes("kubectl delete deployment argo-rollouts")) {
                    const left = c.kubectl(["get", "deployment", "argo-rollouts", "-n", NS, "--ignore-not-found", "-o", "name"]);
                    assert.strictEqual(left, "", "the plain-manifest controller was not deleted");
                }
            },
        });
        assert.match(
            c.kubectl(["get", "deployment", "argo-rollouts", "-n", NS, "-o", "jsonpath={.spec.selector.matchLabels}"]),
            /"app.kubernetes.io\/instance":"argo-rollouts"/,
        );

        note("the stack's controller");
        await assertTakenOver(install, "adopted-controller");
    });
});
