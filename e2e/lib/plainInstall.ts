/**
 * The world the brownfield scenarios start from: Argo Rollouts applied from a module's own
 * manifests/install.yaml (no Helm), its real controller running as that Deployment's pod, and one
 * tenant canary Rollout Healthy on it; then the adoption runbook (docs/operations/adopt.md) run
 * step by step as written.
 */
import assert from "assert";
import * as fs from "fs";
import * as path from "path";
import type { Cluster } from "./cluster";
import { ControllerProc, controllerLog, startController } from "./controller";
import type { RolloutView } from "./delivery";
import { apiGet } from "./kube";
import { runAsync, waitFor } from "./procs";
import { PulumiEnv, failure } from "./pulumi";
import { ReadmeStep, readmeRunbook } from "./readme";
import type { World } from "./world";

export const PLAIN_NS = "argo-rollouts";

export interface PlainInstall {
    controller?: ControllerProc;
    /** Starts a controller of the install's binary under `name` (a pod of the Deployment). */
    start(name: string, binary?: string): Promise<ControllerProc>;
    rollout(): Promise<RolloutView & { metadata: { uid: string } }>;
    /** The tenant namespace's ReplicaSets, `name/uid`, sorted. */
    replicaSets(): Promise<string[]>;
    healthy(): Promise<boolean>;
    /** The Rollout's UID and ReplicaSets once Healthy on the old controller. */
    uid: string;
    sets: string[];
}

/** `moduleDir` holds the release's source; its install.yaml names `:latest`, pinned here to `tag` as a release asset pins it. */
export async function plainInstall(
    w: World,
    c: Cluster,
    o: { moduleDir: string; tag: string; tenantNs: string; controller: string; binary?: string },
): Promise<PlainInstall> {
    const manifests = fs
        .readFileSync(path.join(o.moduleDir, "manifests", "install.yaml"), "utf8")
        .replace(/argoproj\/argo-rollouts:latest/g, `argoproj/argo-rollouts:${o.tag}`);
    c.kubectl(["create", "namespace", PLAIN_NS]);
    c.kubectl(["create", "-n", PLAIN_NS, "-f", "-"], manifests);
    await waitFor(
        "the old install's CRDs Established",
        60_000,
        () => c.kubectl(["get", "crd", "rollouts.argoproj.io", "-o", 'jsonpath={.status.conditions[?(@.type=="Established")].status}']) === "True",
    );
    const start = (name: string, binary = o.binary) =>
        startController(c, { bin: w.bin, dir: w.dir, namespace: PLAIN_NS, name, ...(binary ? { binary } : {}), env: { SSL_CERT_FILE: w.files.caFile } });
    const controller = await start(o.controller);
    c.kubectl(["create", "namespace", o.tenantNs]);
    const labels = { app: "web" };
    const tenant = {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Rollout",
        metadata: { name: "web", namespace: o.tenantNs },
        spec: {
            replicas: 1,
            selector: { matchLabels: labels },
            template: { metadata: { labels }, spec: { containers: [{ name: "web", image: "registry.platform.example/mirror/web:1" }] } },
            strategy: { canary: { steps: [{ setWeight: 50 }, { pause: { duration: "1s" } }] } },
        },
    };
    c.kubectl(["create", "-f", "-"], JSON.stringify(tenant));
    const rollout = () => apiGet<RolloutView & { metadata: { uid: string } }>(c, `/apis/argoproj.io/v1alpha1/namespaces/${o.tenantNs}/rollouts/web`);
    const replicaSets = async () =>
        (await apiGet<{ items: { metadata: { name: string; uid: string } }[] }>(c, `/apis/apps/v1/namespaces/${o.tenantNs}/replicasets`)).items
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
        async () => `${JSON.stringify((await rollout()).status)}\n${controllerLog(controller).split("\n").slice(-15).join("\n")}`,
    );
    const sets = await replicaSets();
    assert.strictEqual(sets.length, 1, sets.join(", "));
    return { controller, start, rollout, replicaSets, healthy, uid: (await rollout()).metadata.uid, sets };
}

/**
 * The adoption runbook, each shell command as written (comments, Terraform and ArgoCD steps
 * skipped); `before` runs ahead of each command, `after` once it passed. The kubelet's part: the
 * old controller's pod stops when its Deployment is deleted.
 */
export async function runRunbook(
    w: World,
    env: PulumiEnv,
    c: Cluster,
    install: PlainInstall,
    hooks: { before?: (step: ReadmeStep, command: string) => Promise<void>; after?: (command: string) => Promise<void> } = {},
): Promise<void> {
    const shellEnv = { ...env.env, KUBECONFIG: c.kubeconfig, PATH: `${w.bin}${path.delimiter}${env.env.PATH}`, NODE_EXTRA_CA_CERTS: w.files.caFile };
    for (const step of readmeRunbook()) {
        for (const command of step.commands.filter((x) => !x.startsWith("#") && !/^(terraform|argocd) /.test(x))) {
            await hooks.before?.(step, command);
            const r = await runAsync("bash", ["-o", "pipefail", "-c", command], { cwd: env.projectDir, env: shellEnv });
            assert.strictEqual(r.status, 0, `runbook step "${step.title}": ${command} failed:\n${failure(r)}`);
            await hooks.after?.(command);
            if (command.includes("kubectl delete deployment argo-rollouts")) {
                await install.controller?.stop();
                install.controller = undefined;
            }
        }
    }
}

/** The stack's controller takes the tenant Rollout over where it was: same UID, same ReplicaSet (no new revision). */
export async function assertTakenOver(install: PlainInstall, name: string, binary?: string): Promise<void> {
    const controller = (install.controller = await install.start(name, binary));
    await waitFor(
        "the stack's controller reconciled the tenant Rollout",
        90_000,
        () => /"rollout":"web"/.test(controllerLog(controller)) && /Reconciliation completed/.test(controllerLog(controller)),
        () => controllerLog(controller).split("\n").slice(-15).join("\n"),
    );
    assert.ok(await install.healthy(), JSON.stringify((await install.rollout()).status));
    assert.strictEqual((await install.rollout()).metadata.uid, install.uid, "the tenant Rollout was replaced");
    assert.deepStrictEqual(await install.replicaSets(), install.sets, "a ReplicaSet was added: the tenant Rollout took a new revision");
}
