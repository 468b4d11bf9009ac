/**
 * The real Argo Rollouts controller as a local process against a run's cluster, with exactly the
 * identity the chart gives it: a TokenRequest token of the ServiceAccount the chart's Deployment
 * runs as, so every call is authorized by the RBAC the program declared. It reads
 * `argo-rollouts-config` from the API server, in the namespace the Deployment lives in
 * (POD_NAMESPACE; argo-rollouts utils/defaults/defaults.go at v1.9.0), and downloads the plugins
 * that ConfigMap lists once at start (controller/controller.go, utils/plugin/downloader.go).
 * The arguments are the ones the chart rendered on the Deployment, only the two listen ports
 * changed (both bind 0.0.0.0, controller/controller.go `listenAddr`). Its environment and its
 * ConfigMap volumes are the Deployment's too, played as a kubelet would (kubelet.ts): the trust of
 * a private CA (`mimir.readCaBundle`) reaches the process only through what the program declares.
 */
import * as fs from "fs";
import * as path from "path";
import { Cluster, kubeconfigFor } from "./cluster";
import { ContainerView, PlayedMount, Volume, playContainer } from "./kubelet";
import { Proc, freePort, logTail, run, startProc, stopProc, waitFor } from "./procs";
import { request } from "./metrics";

export interface ControllerProc {
    proc: Proc;
    /** The ServiceAccount the token belongs to, `system:serviceaccount:<ns>:<name>`. */
    identity: string;
    args: string[];
    /** The environment the Deployment gave the container, its mount paths mapped to the run's folders. */
    env: Record<string, string>;
    /** The ConfigMap volumes played for it. */
    mounts: PlayedMount[];
    healthz: string;
    stop(): Promise<void>;
}

interface DeploymentView {
    spec: { template: { spec: { serviceAccountName?: string; containers: ContainerView[]; volumes?: Volume[] } } };
}

/** The controller Deployment the chart rendered (name `argo-rollouts`, container `argo-rollouts`). */
export function chartDeployment(cluster: Cluster, namespace: string): { serviceAccount: string; args: string[]; container: ContainerView; volumes: Volume[] } {
    const d = JSON.parse(cluster.kubectl(["get", "deployment", "argo-rollouts", "-n", namespace, "-o", "json"])) as DeploymentView;
    const pod = d.spec.template.spec;
    const container = pod.containers.find((c) => c.name === "argo-rollouts") ?? pod.containers[0];
    return { serviceAccount: pod.serviceAccountName ?? "default", args: container.args ?? [], container, volumes: pod.volumes ?? [] };
}

/** A ConfigMap's data, or undefined when it does not exist. */
function configMapData(cluster: Cluster, namespace: string, name: string): Record<string, string> | undefined {
    const out = cluster.kubectl(["get", "configmap", name, "-n", namespace, "-o", "json", "--ignore-not-found"]).trim();
    return out === "" ? undefined : ((JSON.parse(out) as { data?: Record<string, string> }).data ?? {});
}

/**
 * The chart's arguments with the listen ports moved to free ones, each flag spelt as the chart
 * spelt it: v1.8.x knows only `--metricsport` (cmd/rollouts-controller/main.go at v1.8.4; chart
 * 2.40.7 renders it), v1.9.0 both spellings, so the one both know where nothing sets it (install.yaml).
 */
export function localArgs(args: readonly string[], ports: { healthz: number; metrics: number }): string[] {
    const metrics = args.map((a) => /^--(metricsPort|metricsport)(=|$)/.exec(a)?.[1]).find((f) => f !== undefined) ?? "metricsport";
    const out = args.filter((a) => !/^--(healthzPort|metricsPort)(=|$)/i.test(a));
    return [...out, `--healthzPort=${ports.healthz}`, `--${metrics}=${ports.metrics}`];
}

export async function startController(
    cluster: Cluster,
    opts: { bin: string; dir: string; namespace: string; name?: string; env?: NodeJS.ProcessEnv; hostname?: string; binary?: string },
): Promise<ControllerProc> {
    const name = opts.name ?? "rollouts-controller";
    const home = path.join(opts.dir, name);
    fs.mkdirSync(home, { recursive: true });
    const deployment = chartDeployment(cluster, opts.namespace);
    const played = playContainer(deployment.container, deployment.volumes, (cm) => configMapData(cluster, opts.namespace, cm), path.join(home, "volumes"));
    const token = cluster.kubectl(["create", "token", deployment.serviceAccount, "-n", opts.namespace, "--duration=2h"]).trim();
    const kubeconfig = path.join(home, "kubeconfig");
    fs.writeFileSync(kubeconfig, kubeconfigFor(cluster.server, cluster.caFile, { name: deployment.serviceAccount, token }), { mode: 0o600 });
    const ports = { healthz: await freePort(), metrics: await freePort() };
    const args = [`--kubeconfig=${kubeconfig}`, ...localArgs(deployment.args, ports)];
    // Another release's controller (e2e/lib/releases.ts) where a scenario names one.
    const binary = path.join(opts.bin, opts.binary ?? "rollouts-controller");
    const canUnshare = () => {
        try {
            return run("unshare", ["--uts", "true"]).status === 0;
        } catch {
            return false;
        }
    };
    if (opts.hostname && !canUnshare()) {
        throw new Error(
            "the controller plays a pod of its Deployment under that pod's hostname, which needs `unshare --uts` (root, or unprivileged user namespaces with --map-root-user)",
        );
    }
    // With a hostname, the process runs in its own UTS namespace under that name, as a kubelet
    // runs a pod's containers under the pod's name (the controller's leader identity is
    // `<hostname>_<uuid>`, controller/controller.go).
    const [command, argv] = opts.hostname
        ? ["unshare", ["--uts", "sh", "-c", 'hostname "$1" && shift && exec "$@"', "sh", opts.hostname, binary, ...args]]
        : [binary, args];
    const proc = startProc(name, command, argv, {
        logDir: opts.dir,
        cwd: home,
        env: {
            PATH: process.env.PATH ?? "/usr/bin:/bin",
            HOME: home,
            POD_NAMESPACE: opts.namespace,
            // The plugin process loads the default kubeconfig rules, not the controller's flag
            // (rollouts-plugin-trafficrouter-gatewayapi internal/utils/common.go), and go-plugin
            // hands it the controller's environment.
            KUBECONFIG: kubeconfig,
            ...played.env,
            ...opts.env,
        },
    });
    const healthz = `http://127.0.0.1:${ports.healthz}/healthz`;
    await waitFor(
        "the Argo Rollouts controller's /healthz",
        90_000,
        async () => {
            if (proc.exited) {
                throw new Error(`the controller exited ${proc.exitCode}`);
            }
            return (await request(healthz)).status === 200;
        },
        () => logTail(proc, 40),
    );
    return {
        proc,
        identity: `system:serviceaccount:${opts.namespace}:${deployment.serviceAccount}`,
        args,
        env: played.env,
        mounts: played.mounts,
        healthz,
        stop: () => stopProc(proc),
    };
}

/**
 * The refusal of the NamespaceLifecycle admission plugin: no new object in a namespace being deleted
 * (kubernetes/apiserver pkg/admission/plugin/namespace/lifecycle/admission.go, v0.35.4, "unable to
 * create new content in namespace %s because it is being terminated"). A 403 like RBAC's, but not a
 * permission: the controller meets it when a namespace holding a Rollout is deleted (the smoke
 * canary moved or turned off) and it recreates a ReplicaSet the namespace controller removed first.
 */
const NAMESPACE_TERMINATING = /unable to create new content in namespace \S+ because it is being terminated/;

/**
 * Lines of a controller log (the plugin's output is relayed into it by go-plugin) that say a call
 * was refused by authorization or could not be made for lack of permission.
 */
export function permissionErrors(log: string): string[] {
    return log
        .split("\n")
        .filter((l) => /\bforbidden\b|cannot (get|list|watch|create|update|patch|delete) resource|is not allowed to|Unauthorized/i.test(l))
        .filter((l) => !NAMESPACE_TERMINATING.test(l) || /cannot (get|list|watch|create|update|patch|delete) resource/.test(l));
}

export function controllerLog(c: Pick<ControllerProc, "proc">): string {
    return fs.readFileSync(c.proc.log, "utf8");
}
