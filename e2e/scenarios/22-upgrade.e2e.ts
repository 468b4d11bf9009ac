/**
 * The controller upgrade across the pod-template-hash boundary (docs/operations/upgrade.md), with
 * the real controllers deciding: the program installs chart 2.40.7 (Argo Rollouts v1.8.4, the
 * controller built from its module, e2e/engines/argo-rollouts-1.8) on the hub stack; tenant
 * Rollouts run on it, one paused mid-canary. The move to chart 2.41.0 is refused while it is
 * paused; once it is promoted, the runbook's steps as written move the stack, the harness plays the
 * kubelet's part by replacing the 1.8.4 process with the v1.9.0 one the new Deployment names, and
 * the scenario counts the tenant ReplicaSets that were replaced. One tenant's ReplicaSet carries a
 * mutation, as an admission webhook leaves it: the runbook promises a new ReplicaSet for that one
 * and no other (argo-rollouts v1.9.0 utils/replicaset/replicaset.go, FindNewReplicaSet), each
 * Rollout keeping its UID.
 */
import assert from "assert";
import * as path from "path";
import { PROJECT } from "../../components/config/reader";
import { CONTROLLER_RELEASES } from "../../components/rollouts/versions";
import { world } from "../lib/context";
import { ControllerProc, controllerLog, startController } from "../lib/controller";
import { POD_HASH, PublishedPlugin, RolloutView, pluginDownloadPatch, publishPlugin } from "../lib/delivery";
import { apiGet } from "../lib/kube";
import { runAsync, waitFor } from "../lib/procs";
import { PulumiEnv, failure } from "../lib/pulumi";
import { upgradeRunbookSteps } from "../lib/readme";
import { e2eRelease } from "../lib/releases";
import { ConfigMap } from "../lib/stacks";
import { StackTarget, World } from "../lib/world";

const STACK = "hub";
const TENANT_NS = "tenant-upgrade";
const [FROM, TO] = CONTROLLER_RELEASES;
const WAIT_MS = 150_000;

/** A canary Rollout; `pause: {}` waits for a promote, a duration goes on by itself. */
function rollout(name: string, pause: Record<string, unknown>, image = 1): Record<string, unknown> {
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Rollout",
        metadata: { name, namespace: TENANT_NS },
        spec: {
            replicas: 1,
            selector: { matchLabels: { app: name } },
            template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: `registry.platform.example/mirror/${name}:${image}` }] } },
            strategy: { canary: { steps: [{ setWeight: 50 }, { pause }] } },
        },
    };
}
const TENANTS = { web: { duration: "1s" }, api: { duration: "1s" }, shop: {} } as const;

interface ReplicaSetItem {
    metadata: { name: string; uid: string; labels?: Record<string, string>; ownerReferences?: { name: string }[] };
}

/** About how long this file runs beside another on 2 cores: orders the side-by-side run (e2e/lib/pool.ts). */
export const SECONDS = 150;

describe("upgrade", function () {
    this.timeout(15 * 60_000);
    /** Where the scenario is, on the run's output: it runs several pulumi commands and two controllers. */
    const note = (m: string) => console.log(`    upgrade-controller: ${m}`);
    let w: World;
    let env: PulumiEnv;
    let target: StackTarget;
    let plugin: PublishedPlugin;
    let controller: ControllerProc | undefined;

    /** The stack file on the 1.8 line, plugin downloaded from the run's server (as a cluster does). */
    const patch = (chartVersion: string) => (config: ConfigMap) => {
        const key = (k: string) => `${PROJECT}:${k}`;
        config[key("controller")] = { ...((config[key("controller")] as Record<string, unknown> | undefined) ?? {}), chartVersion };
        pluginDownloadPatch(plugin)(config);
    };
    const cluster = () => target.cluster;
    const ns = "argo-rollouts";
    const rollouts = async () => (await apiGet<{ items: RolloutView[] }>(cluster(), `/apis/argoproj.io/v1alpha1/namespaces/${TENANT_NS}/rollouts`)).items;
    const replicaSets = async () => (await apiGet<{ items: ReplicaSetItem[] }>(cluster(), `/apis/apps/v1/namespaces/${TENANT_NS}/replicasets`)).items;
    const settled = (r: RolloutView) =>
        r.status?.phase === "Healthy" && r.status.currentPodHash === r.status.stableRS && String(r.status.observedGeneration) === String(r.metadata.generation);
    const state = async () =>
        `${JSON.stringify((await rollouts()).map((r) => ({ name: r.metadata.name, status: r.status })))}\ncontroller log:\n${controller ? controllerLog(controller).split("\n").slice(-20).join("\n") : "none"}`;
    const untilAll = (what: string, done: (rs: RolloutView[]) => boolean) => waitFor(what, WAIT_MS, async () => done(await rollouts()), state);
    const promote = (name: string) => {
        // What `kubectl argo rollouts promote` does for a canary paused at a step (argo-rollouts
        // pkg/kubectl-argo-rollouts/cmd/promote/promote.go at v1.8.4: clear the pause conditions
        // through the status subresource, unpause the spec).
        cluster().kubectl([
            "patch",
            "rollouts.argoproj.io",
            name,
            "-n",
            TENANT_NS,
            "--subresource=status",
            "--type=merge",
            "-p",
            JSON.stringify({ status: { pauseConditions: null } }),
        ]);
        cluster().kubectl(["patch", "rollouts.argoproj.io", name, "-n", TENANT_NS, "--type=merge", "-p", JSON.stringify({ spec: { paused: false } })]);
    };
    const runController = async (release: typeof FROM) => {
        await controller?.stop();
        controller = await startController(cluster(), {
            bin: w.bin,
            dir: w.dir,
            namespace: ns,
            name: `rollouts-controller-${release.appVersion}`,
            binary: e2eRelease(release.appVersion).binary,
            // The plugin download is served with the run's CA; this stack has no readCaBundle to carry it.
            env: { SSL_CERT_FILE: w.files.caFile },
        });
    };

    before(async function () {
        w = await world();
        plugin = publishPlugin(w.bin, w.files);
        env = w.pulumi("upgrade");
        target = await w.cluster("upgrade", STACK, patch(FROM.chartVersion));
        await w.initStack(env, target);
        const up = await env.pulumi(["up", "--yes", "--skip-preview", "--policy-pack", "policy-pack"], { stack: STACK });
        assert.strictEqual(up.status, 0, `pulumi up of chart ${FROM.chartVersion} failed:\n${failure(up)}`);
        const image = cluster().kubectl(["get", "deployment", "argo-rollouts", "-n", ns, "-o", "jsonpath={.spec.template.spec.containers[0].image}"]);
        assert.match(image, new RegExp(`:${FROM.appVersion.replace(/\./g, "\\.")}@sha256:[a-f0-9]{64}$`));
        await runController(FROM);
        cluster().kubectl(["create", "namespace", TENANT_NS]);
        for (const [name, pause] of Object.entries(TENANTS)) {
            cluster().kubectl(["create", "-f", "-"], JSON.stringify(rollout(name, pause)));
        }
        await untilAll("every tenant Rollout Healthy on v1.8.4", (rs) => rs.length === 3 && rs.every(settled));
        // A new version of shop, stopped mid-canary at its indefinite pause.
        cluster().kubectl([
            "patch",
            "rollouts.argoproj.io",
            "shop",
            "-n",
            TENANT_NS,
            "--type=json",
            "-p",
            JSON.stringify([{ op: "replace", path: "/spec/template/spec/containers/0/image", value: "registry.platform.example/mirror/shop:2" }]),
        ]);
        await untilAll("shop paused mid-canary", (rs) => rs.some((r) => r.metadata.name === "shop" && (r.status?.pauseConditions ?? []).length > 0));
    });

    after(async function () {
        await controller?.stop();
    });

    it("upgrade-controller", async function () {
        const image = () => cluster().kubectl(["get", "deployment", "argo-rollouts", "-n", ns, "-o", "jsonpath={.spec.template.spec.containers[0].image}"]);
        // Refused while shop is paused, whatever the acknowledgement says, and nothing moves.
        for (const args of [
            ["config", "set", "--path", "controller.chartVersion", TO.chartVersion],
            ["config", "set", "--path", "controller.acknowledgeNewRevisions", TO.line],
        ]) {
            const r = await env.pulumi(args, { stack: STACK });
            assert.strictEqual(r.status, 0, failure(r));
        }
        note("previewing the move while shop is paused");
        const refused = await env.pulumi(["preview", "--policy-pack", "policy-pack"], { stack: STACK });
        assert.notStrictEqual(refused.status, 0, "the move across the boundary was previewed while a Rollout is paused");
        assert.match(
            refused.stdout + refused.stderr,
            new RegExp(
                `Argo Rollouts ${FROM.appVersion} -> ${TO.appVersion} changes how pod-template hashes are computed .*: up to 3 Rollout\\(s\\) in 1 namespace\\(s\\): ${TENANT_NS} \\(3\\)\\. Refused while a Rollout is paused or progressing`,
            ),
            failure(refused),
        );
        assert.match(refused.stdout + refused.stderr, new RegExp(`Rollout ${TENANT_NS}/shop: paused mid-rollout`));
        assert.match(image(), new RegExp(`:${FROM.appVersion.replace(/\./g, "\\.")}@sha256:[a-f0-9]{64}$`));
        // Back to the stack file as it was, then promote shop and let it finish on v1.8.4.
        await w.initStack(env, { ...target, config: w.stackConfig(STACK, cluster(), patch(FROM.chartVersion)) });
        promote("shop");
        await untilAll("shop promoted", (rs) => rs.every(settled));
        note("shop promoted on v1.8.4; the runbook");

        const before = await rollouts();
        const uids = Object.fromEntries(before.map((r) => [r.metadata.name, (r.metadata as { uid?: string }).uid]));
        const hashes = Object.fromEntries(before.map((r) => [r.metadata.name, r.status!.currentPodHash!]));
        // api's ReplicaSet as an admission webhook leaves it (Kyverno's autogen rules of pod policies
        // mutate ReplicaSets): its template is no longer the Rollout's own.
        const apiSet = (await replicaSets()).find((rs) => rs.metadata.labels?.[POD_HASH] === hashes.api)!;
        cluster().kubectl([
            "patch",
            "replicaset",
            apiSet.metadata.name,
            "-n",
            TENANT_NS,
            "--type=merge",
            "-p",
            JSON.stringify({ spec: { template: { spec: { securityContext: { runAsNonRoot: true } } } } }),
        ]);
        const setsBefore = new Set((await replicaSets()).map((rs) => rs.metadata.uid));

        // The runbook, step by step as written; the kubelet's part (the new controller) after its up.
        const shellEnv = { ...env.env, KUBECONFIG: cluster().kubeconfig, PATH: `${w.bin}${path.delimiter}${env.env.PATH}` };
        let preview = "";
        for (const step of upgradeRunbookSteps()) {
            for (const command of step.commands) {
                // The stand-in cluster pulls no image: the fixture's digest stays, the registry lookup is skipped.
                if (command.startsWith("#") || command.includes("crane digest")) {
                    continue;
                }
                if (step.title.startsWith("Watch") && command.startsWith("kubectl get rollouts")) {
                    // The new controller has looked at every Rollout; api, whose ReplicaSet was mutated, takes a
                    // new revision through its canary steps, as the runbook says.
                    await waitFor(
                        "the v1.9.0 controller reconciled every Rollout",
                        WAIT_MS,
                        () =>
                            Object.keys(TENANTS).every((n) =>
                                new RegExp(`"msg":"Reconciliation completed"[^\n]*"rollout":"${n}"`).test(controllerLog(controller!)),
                            ),
                        state,
                    );
                    await untilAll(
                        "api on a new revision, Healthy",
                        (rs) => rs.every((r) => settled(r)) && rs.some((r) => r.metadata.name === "api" && r.status?.currentPodHash !== hashes.api),
                    );
                }
                if (command.startsWith("pulumi up") && step.title.startsWith("Move")) {
                    const p = await env.pulumi(["preview", "--policy-pack", "policy-pack"], { stack: STACK });
                    assert.strictEqual(p.status, 0, failure(p));
                    preview = p.stdout + p.stderr;
                }
                note(command.length > 100 ? `${command.slice(0, 100)}...` : command);
                const r = await runAsync("bash", ["-o", "pipefail", "-c", command], { cwd: env.projectDir, env: shellEnv });
                assert.strictEqual(r.status, 0, `runbook step "${step.title}": ${command} failed:\n${failure(r)}`);
                if (step.title.startsWith("Settle")) {
                    assert.strictEqual(r.stdout.trim(), "", "a Rollout is still in flight");
                }
                if (command.startsWith("pulumi up") && step.title.startsWith("Move")) {
                    assert.match(image(), new RegExp(`:${TO.appVersion.replace(/\./g, "\\.")}@sha256:[a-f0-9]{64}$`));
                    await runController(TO);
                }
            }
        }
        assert.match(
            preview,
            new RegExp(
                `up to 3 Rollout\\(s\\) in 1 namespace\\(s\\): ${TENANT_NS} \\(3\\) \\(acknowledged by controller\\.acknowledgeNewRevisions = "${TO.line}"\\)`,
            ),
            "the preview did not say how many Rollouts may re-revision where",
        );

        const after = await rollouts();
        const replaced = (await replicaSets()).filter((rs) => !setsBefore.has(rs.metadata.uid));
        console.log(
            `    upgrade-controller: ${replaced.length} tenant ReplicaSet(s) replaced for ${after.length} Rollout(s) (${replaced.map((r) => r.metadata.name).join(", ")})`,
        );
        // The runbook's promise: one new ReplicaSet for each Rollout whose ReplicaSet was mutated, and no
        // other; every Rollout kept, the others on the ReplicaSet they had.
        assert.deepStrictEqual(
            replaced.map((rs) => rs.metadata.ownerReferences?.[0]?.name),
            ["api"],
        );
        for (const r of after) {
            assert.strictEqual((r.metadata as { uid?: string }).uid, uids[r.metadata.name], `${r.metadata.name} was replaced`);
            if (r.metadata.name !== "api") {
                assert.strictEqual(r.status?.currentPodHash, hashes[r.metadata.name], `${r.metadata.name} took a new revision`);
            }
        }
        assert.match(controllerLog(controller!), /"msg":"ComputePodTemplateHash hash changed \(expected: [^)]*\)"[^\n]*"rollout":"web"/);
    });
});
