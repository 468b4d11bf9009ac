/**
 * Another shape of old install: Argo Rollouts applied from the argo-rollouts module's own manifests
 * (manifests/install.yaml, no Helm), its controller running (the real v1.9.0, as that Deployment's
 * pod) with a tenant Rollout on it. adopt-check names what adoption cannot take over (the
 * controller's selector, immutable and not the chart's), the adopting preview refuses it too, and
 * the adoption runbook's steps as written (docs/operations/adopt.md) adopt it: the tenant Rollout
 * keeps its UID and its ReplicaSet once the stack's controller runs.
 */
import assert from "assert";
import * as fs from "fs";
import * as path from "path";
import type { AdoptReport } from "../../tools/adopt/check";
import { world } from "../lib/context";
import { ControllerProc, controllerLog, startController } from "../lib/controller";
import { RolloutView, pluginDownloadPatch, publishPlugin } from "../lib/delivery";
import { apiGet } from "../lib/kube";
import { moduleDir } from "../lib/modules";
import { ARGO_ROLLOUTS } from "../lib/platform";
import { runAsync, waitFor } from "../lib/procs";
import { failure } from "../lib/pulumi";
import { readmeRunbook } from "../lib/readme";
import { npmRunAsync } from "../lib/world";

const TENANT_NS = "tenant-plain";
const NS = "argo-rollouts";

interface ReplicaSetItem {
    metadata: { name: string; uid: string };
}

describe("plain manifests", function () {
    // Two pulumi up, a preview, adopt-check and two controllers: bounded generously for a shared machine.
    this.timeout(15 * 60_000);
    const note = (m: string) => console.log(`    brownfield-plain-manifests: ${m}`);
    let controller: ControllerProc | undefined;

    after(async function () {
        await controller?.stop();
    });

    it("brownfield-plain-manifests", async function () {
        const w = await world();
        const plugin = publishPlugin(w.bin, w.files);
        const env = w.pulumi("plain");
        const target = await w.cluster("plain", "hub", pluginDownloadPatch(plugin));
        const c = target.cluster;
        // The old install: upstream's install.yaml at the module's tag, its image pinned to that tag as
        // a release's install.yaml asset pins it (the source tree says :latest).
        const tag = path.basename(moduleDir(ARGO_ROLLOUTS)).split("@")[1];
        const manifests = fs
            .readFileSync(path.join(moduleDir(ARGO_ROLLOUTS), "manifests", "install.yaml"), "utf8")
            .replace(/argoproj\/argo-rollouts:latest/g, `argoproj/argo-rollouts:${tag}`);
        c.kubectl(["create", "namespace", NS]);
        c.kubectl(["create", "-n", NS, "-f", "-"], manifests);
        await waitFor(
            "the old install's CRDs Established",
            60_000,
            () => c.kubectl(["get", "crd", "rollouts.argoproj.io", "-o", 'jsonpath={.status.conditions[?(@.type=="Established")].status}']) === "True",
        );
        controller = await startController(c, { bin: w.bin, dir: w.dir, namespace: NS, name: "old-install-controller" });
        c.kubectl(["create", "namespace", TENANT_NS]);
        c.kubectl(
            ["create", "-f", "-"],
            JSON.stringify({
                apiVersion: "argoproj.io/v1alpha1",
                kind: "Rollout",
                metadata: { name: "web", namespace: TENANT_NS },
                spec: {
                    replicas: 1,
                    selector: { matchLabels: { app: "web" } },
                    template: {
                        metadata: { labels: { app: "web" } },
                        spec: { containers: [{ name: "web", image: "registry.platform.example/mirror/web:1" }] },
                    },
                    strategy: { canary: { steps: [{ setWeight: 50 }, { pause: { duration: "1s" } }] } },
                },
            }),
        );
        const rollout = () => apiGet<RolloutView & { metadata: { uid: string } }>(c, `/apis/argoproj.io/v1alpha1/namespaces/${TENANT_NS}/rollouts/web`);
        const replicaSets = async () =>
            (await apiGet<{ items: ReplicaSetItem[] }>(c, `/apis/apps/v1/namespaces/${TENANT_NS}/replicasets`)).items
                .map((r) => `${r.metadata.name}/${r.metadata.uid}`)
                .sort();
        const healthy = async () => {
            const r = await rollout();
            return r.status?.phase === "Healthy" && r.status.currentPodHash === r.status.stableRS;
        };
        await waitFor(
            "the tenant Rollout Healthy on the old controller",
            90_000,
            healthy,
            async () => `${JSON.stringify((await rollout()).status)}\n${controllerLog(controller!).split("\n").slice(-15).join("\n")}`,
        );
        const uid = (await rollout()).metadata.uid;
        const sets = await replicaSets();
        assert.strictEqual(sets.length, 1, sets.join(", "));
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
        // The runbook, step by step as written; the old controller's pod goes with its Deployment.
        const steps = readmeRunbook();
        const shellEnv = { ...env.env, KUBECONFIG: c.kubeconfig, PATH: `${w.bin}${path.delimiter}${env.env.PATH}`, NODE_EXTRA_CA_CERTS: w.files.caFile };
        for (const step of steps) {
            for (const command of step.commands) {
                if (command.startsWith("#") || /^(terraform|argocd) /.test(command)) {
                    continue;
                }
                const r = await runAsync("bash", ["-o", "pipefail", "-c", command], { cwd: env.projectDir, env: shellEnv });
                assert.strictEqual(r.status, 0, `runbook step "${step.title}": ${command} failed:\n${failure(r)}`);
                if (command.includes("kubectl delete deployment argo-rollouts")) {
                    // The kubelet's part: the deleted Deployment's pod stops.
                    assert.strictEqual(
                        c.kubectl(["get", "deployment", "argo-rollouts", "-n", NS, "--ignore-not-found", "-o", "name"]),
                        "",
                        "the plain-manifest controller was not deleted",
                    );
                    await controller?.stop();
                    controller = undefined;
                }
            }
        }
        assert.match(
            c.kubectl(["get", "deployment", "argo-rollouts", "-n", NS, "-o", "jsonpath={.spec.selector.matchLabels}"]),
            /"app.kubernetes.io\/instance":"argo-rollouts"/,
        );

        note("the stack's controller");
        // The stack's controller takes the tenant Rollout over where it was: same UID, same ReplicaSet.
        controller = await startController(c, { bin: w.bin, dir: w.dir, namespace: NS, name: "adopted-controller", env: { SSL_CERT_FILE: w.files.caFile } });
        await waitFor(
            "the stack's controller reconciled the tenant Rollout",
            90_000,
            () =>
                /"msg":"Reconciliation completed"[^\n]*"rollout":"web"|"rollout":"web"[^\n]*"msg":"Reconciliation completed"/.test(controllerLog(controller!)),
            () => controllerLog(controller!).split("\n").slice(-15).join("\n"),
        );
        assert.ok(await healthy(), JSON.stringify((await rollout()).status));
        assert.strictEqual((await rollout()).metadata.uid, uid, "the tenant Rollout was replaced");
        assert.deepStrictEqual(await replicaSets(), sets, "the tenant Rollout's ReplicaSet was replaced");
    });
});
