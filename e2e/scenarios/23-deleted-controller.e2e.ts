/**
 * The adoption runbook's path that deletes the old controller (docs/operations/adopt.md step 5), on a
 * cluster of the 1.8 line: Argo Rollouts v1.8.4 applied from its module's manifests/install.yaml, its
 * real controller (e2e/engines/argo-rollouts-1.8) running a tenant Rollout, and a stack file that names
 * no release. Once the controller is deleted nothing in the cluster says which line ran, so the
 * release is decided before: skipped, the adopting preview refuses (ReplicaSets show Rollouts ran);
 * followed to the letter, the stack keeps chart 2.40.7, and the stack's v1.8.4 controller takes the
 * Rollout over with no ReplicaSet added (argoproj/argo-rollouts #4696 never triggers).
 */
import assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { CONTROLLER_RELEASES } from "../../components/rollouts/versions";
import { world } from "../lib/context";
import { ControllerProc, controllerLog, startController } from "../lib/controller";
import { RolloutView, pluginDownloadPatch, publishPlugin } from "../lib/delivery";
import { apiGet } from "../lib/kube";
import { moduleDirPinnedIn } from "../lib/modules";
import { ARGO_ROLLOUTS } from "../lib/platform";
import { runAsync, waitFor } from "../lib/procs";
import { failure } from "../lib/pulumi";
import { readmeRunbook } from "../lib/readme";
import { e2eRelease } from "../lib/releases";

const TENANT_NS = "tenant-old-line";
const NS = "argo-rollouts";
const [OLD] = CONTROLLER_RELEASES;

describe("deleted controller", function () {
    // Two previews, one up, adopt-check and two controllers: bounded generously for a shared machine.
    this.timeout(15 * 60_000);
    const note = (m: string) => console.log(`    upgrade-deleted-controller: ${m}`);
    let controller: ControllerProc | undefined;

    after(async function () {
        await controller?.stop();
    });

    it("upgrade-deleted-controller", async function () {
        const w = await world();
        const plugin = publishPlugin(w.bin, w.files);
        const env = w.pulumi("deleted");
        const target = await w.cluster("deleted", "hub", pluginDownloadPatch(plugin));
        const c = target.cluster;
        const release = e2eRelease(OLD.appVersion);
        // The release's install.yaml, its image pinned to its tag as the release asset pins it (the source tree says :latest).
        const manifests = fs
            .readFileSync(path.join(moduleDirPinnedIn(release.pins, ARGO_ROLLOUTS), "manifests", "install.yaml"), "utf8")
            .replace(/argoproj\/argo-rollouts:latest/g, `argoproj/argo-rollouts:${OLD.appVersion}`);
        c.kubectl(["create", "namespace", NS]);
        c.kubectl(["create", "-n", NS, "-f", "-"], manifests);
        await waitFor(
            "the old install's CRDs Established",
            60_000,
            () => c.kubectl(["get", "crd", "rollouts.argoproj.io", "-o", 'jsonpath={.status.conditions[?(@.type=="Established")].status}']) === "True",
        );
        const start = async (name: string) =>
            startController(c, { bin: w.bin, dir: w.dir, namespace: NS, name, binary: release.binary, env: { SSL_CERT_FILE: w.files.caFile } });
        controller = await start("old-line-controller");
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
            (await apiGet<{ items: { metadata: { name: string; uid: string } }[] }>(c, `/apis/apps/v1/namespaces/${TENANT_NS}/replicasets`)).items
                .map((r) => `${r.metadata.name}/${r.metadata.uid}`)
                .sort();
        const healthy = async () => {
            const r = await rollout();
            return r.status?.phase === "Healthy" && r.status.currentPodHash === r.status.stableRS;
        };
        await waitFor("the tenant Rollout Healthy on v1.8.4", 90_000, healthy, async () => JSON.stringify((await rollout()).status));
        const uid = (await rollout()).metadata.uid;
        const sets = await replicaSets();
        assert.strictEqual(sets.length, 1, sets.join(", "));
        await w.initStack(env, target);

        note("the runbook, with the release skipped once");
        const shellEnv = { ...env.env, KUBECONFIG: c.kubeconfig, PATH: `${w.bin}${path.delimiter}${env.env.PATH}`, NODE_EXTRA_CA_CERTS: w.files.caFile };
        let decided = "";
        for (const step of readmeRunbook()) {
            for (const command of step.commands) {
                if (command.startsWith("#") || /^(terraform|argocd) /.test(command)) {
                    continue;
                }
                if (command.startsWith("pulumi up") && step.title.startsWith("Adopt in one run")) {
                    // The runbook without its decision: no controller runs, the stack file names no release.
                    const rm = await env.pulumi(["config", "rm", "--path", "controller.chartVersion"], { stack: "hub" });
                    assert.strictEqual(rm.status, 0, failure(rm));
                    const refused = await env.pulumi(["preview", "--policy-pack", "policy-pack"], { stack: "hub" });
                    assert.notStrictEqual(refused.status, 0, "the adopting preview chose a release with no controller left to say which line ran");
                    assert.match(
                        refused.stdout + refused.stderr,
                        /no Argo Rollouts controller runs, yet ReplicaSets labelled rollouts-pod-template-hash/,
                        failure(refused),
                    );
                    const back = await env.pulumi(["config", "set", "--path", "controller.chartVersion", decided], { stack: "hub" });
                    assert.strictEqual(back.status, 0, failure(back));
                }
                const r = await runAsync("bash", ["-o", "pipefail", "-c", command], { cwd: env.projectDir, env: shellEnv });
                assert.strictEqual(r.status, 0, `runbook step "${step.title}": ${command} failed:\n${failure(r)}`);
                if (command.includes("--running-chart")) {
                    decided = (await env.pulumi(["config", "get", "--path", "controller.chartVersion"], { stack: "hub" })).stdout.trim();
                    assert.strictEqual(decided, OLD.chartVersion, "the runbook did not keep the line the cluster runs");
                }
                if (command.includes("kubectl delete deployment argo-rollouts")) {
                    // The kubelet's part: the deleted Deployment's pod stops.
                    await controller?.stop();
                    controller = undefined;
                }
            }
        }
        const image = c.kubectl(["get", "deployment", "argo-rollouts", "-n", NS, "-o", "jsonpath={.spec.template.spec.containers[0].image}"]);
        assert.match(image, new RegExp(`:${OLD.appVersion.replace(/\./g, "\\.")}@sha256:[a-f0-9]{64}$`), "the adopting run moved the controller off its line");

        note("the stack's controller, on the line that ran");
        controller = await start("adopted-old-line-controller");
        await waitFor(
            "the stack's controller reconciled the tenant Rollout",
            90_000,
            () => /"rollout":"web"/.test(controllerLog(controller!)) && /Reconciliation completed/.test(controllerLog(controller!)),
            () => controllerLog(controller!).split("\n").slice(-15).join("\n"),
        );
        assert.ok(await healthy(), JSON.stringify((await rollout()).status));
        assert.strictEqual((await rollout()).metadata.uid, uid, "the tenant Rollout was replaced");
        assert.deepStrictEqual(await replicaSets(), sets, "a ReplicaSet was added: the tenant Rollout took a new revision");
    });
});
