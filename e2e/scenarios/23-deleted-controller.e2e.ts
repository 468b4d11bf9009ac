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
import { CONTROLLER_RELEASES } from "../../components/rollouts/versions";
import { world } from "../lib/context";
import { PLAIN_NS, PlainInstall, assertTakenOver, plainInstall, runRunbook } from "../lib/plainInstall";
import { pluginDownloadPatch, publishPlugin } from "../lib/delivery";
import { moduleDirPinnedIn } from "../lib/modules";
import { ARGO_ROLLOUTS } from "../lib/platform";
import { failure } from "../lib/pulumi";
import { e2eRelease } from "../lib/releases";

const TENANT_NS = "tenant-old-line";
const NS = PLAIN_NS;
const [OLD] = CONTROLLER_RELEASES;

/** About how long this file runs beside another on 2 cores: orders the side-by-side run (e2e/lib/pool.ts). */
export const SECONDS = 170;

describe("deleted controller", function () {
    // Two previews, one up, adopt-check and two controllers: bounded generously for a shared machine.
    this.timeout(15 * 60_000);
    const note = (m: string) => console.log(`    upgrade-deleted-controller: ${m}`);
    let install: PlainInstall | undefined;

    after(async function () {
        await install?.controller?.stop();
    });

    it("upgrade-deleted-controller", async function () {
        const w = await world();
        const plugin = publishPlugin(w.bin, w.files);
        const env = w.pulumi("deleted");
        const target = await w.cluster("deleted", "hub", pluginDownloadPatch(plugin));
        const c = target.cluster;
        const release = e2eRelease(OLD.appVersion);
        const from = { moduleDir: moduleDirPinnedIn(release.pins, ARGO_ROLLOUTS), tag: OLD.appVersion, tenantNs: TENANT_NS };
        install = await plainInstall(w, c, { ...from, controller: "old-line-controller", binary: release.binary });
        await w.initStack(env, target);

        note("the runbook, with the release skipped once");
        let decided = "";
        await runRunbook(w, env, c, install, {
            before: async (step, command) => {
                if (!command.startsWith("pulumi up") || !step.title.startsWith("Adopt in one run")) {
                    return;
                }
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
            },
            after: async (command) => {
                if (command.includes("--running-chart")) {
                    decided = (await env.pulumi(["config", "get", "--path", "controller.chartVersion"], { stack: "hub" })).stdout.trim();
                    assert.strictEqual(decided, OLD.chartVersion, "the runbook did not keep the line the cluster runs");
                }
            },
        });
        const image = c.kubectl(["get", "deployment", "argo-rollouts", "-n", NS, "-o", "jsonpath={.spec.template.spec.containers[0].image}"]);
        assert.match(image, new RegExp(`:${OLD.appVersion.replace(/\./g, "\\.")}@sha256:[a-f0-9]{64}$`), "the adopting run moved the controller off its line");

        note("the stack's controller, on the line that ran");
        await assertTakenOver(install, "adopted-old-line-controller");
    });
});
