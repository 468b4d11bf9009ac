/**
 * A real Kubernetes control plane on 127.0.0.1, from binaries built out of their Go modules: etcd,
 * kube-apiserver (TLS, RBAC, service-account token signing so TokenRequest works),
 * kube-controller-manager (garbage collector, namespace, service-account and ReplicaSet
 * controllers), kube-scheduler, and kwok with untainted fake nodes (no kubelet: kwok marks the
 * nodes Ready and the pods scheduled to them Running). Every port is free-picked, every file is in
 * one temporary folder, and `stop()` ends every process by pid and removes the folder.
 *
 * The flag sets follow kwokctl's binary runtime (kubernetes-sigs/kwok pkg/kwokctl/components/*.go
 * at v0.8.0) and controller-runtime's envtest (pkg/internal/testing/controlplane/*.go at v0.24.1).
 */
import * as fs from "fs";
import * as https from "https";
import * as os from "os";
import * as path from "path";
import { Proc, freePort, logTail, runOk, startProc, stopAll, waitFor } from "./procs";

export interface Cluster {
    dir: string;
    bin: string;
    server: string;
    kubeconfig: string;
    /** The CA that signed every serving and client certificate of the run (PEM file). */
    caFile: string;
    caKey: string;
    procs: Proc[];
    kubectl(args: string[], input?: string): string;
    stop(): Promise<void>;
}

export interface ClusterOptions {
    bin: string;
    nodes?: number;
    /** Start-up bound; a component not ready by then fails the start with its log tail. */
    startTimeoutMs?: number;
    /** Keep the folder after stop (for debugging a failed run). */
    keep?: boolean;
}

function openssl(dir: string, args: string[]): void {
    runOk("openssl", args, { cwd: dir });
}

/** One CA, the API server's serving certificate, client certificates per component, the SA key pair. */
function writePki(dir: string): void {
    openssl(dir, [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=argo-rollouts-addon-e2e-ca",
    ]);
    const sign = (name: string, subj: string, ext: string) => {
        fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
        openssl(dir, ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subj]);
        openssl(dir, [
            "x509",
            "-req",
            "-in",
            `${name}.csr`,
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            `${name}.crt`,
            "-days",
            "2",
            "-extfile",
            `${name}.ext`,
        ]);
    };
    sign(
        "apiserver",
        "/CN=kube-apiserver",
        "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n",
    );
    const client = "extendedKeyUsage=clientAuth\n";
    // Users the RBAC bootstrap policy binds (kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy).
    sign("admin", "/O=system:masters/CN=kubernetes-admin", client);
    sign("controller-manager", "/CN=system:kube-controller-manager", client);
    sign("scheduler", "/CN=system:kube-scheduler", client);
    openssl(dir, ["genrsa", "-out", "sa.key", "2048"]);
    openssl(dir, ["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"]);
}

export function kubeconfigFor(server: string, caFile: string, user: { name: string; cert?: string; key?: string; token?: string }): string {
    const auth = user.token ? `    token: ${user.token}\n` : `    client-certificate: ${user.cert}\n    client-key: ${user.key}\n`;
    return [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: e2e",
        "  cluster:",
        `    server: ${server}`,
        `    certificate-authority: ${caFile}`,
        "contexts:",
        `- name: e2e`,
        "  context:",
        "    cluster: e2e",
        `    user: ${user.name}`,
        "current-context: e2e",
        "users:",
        `- name: ${user.name}`,
        "  user:",
        auth,
    ].join("\n");
}

function get(url: string, dir: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
        const req = https.get(
            url,
            {
                ca: fs.readFileSync(path.join(dir, "ca.crt")),
                cert: fs.readFileSync(path.join(dir, "admin.crt")),
                key: fs.readFileSync(path.join(dir, "admin.key")),
                timeout: 5000,
            },
            (res) => {
                let body = "";
                res.on("data", (c) => (body += c));
                res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
            },
        );
        req.on("error", reject);
        req.on("timeout", () => req.destroy(new Error("timeout")));
    });
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "argo-rollouts-addon-e2e-"));
    const timeout = opts.startTimeoutMs ?? 60_000;
    const bin = (name: string) => path.join(opts.bin, name);
    const procs: Proc[] = [];
    const stop = async () => {
        await stopAll();
        if (!opts.keep) {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    };
    try {
        writePki(dir);
        const [etcdClient, etcdPeer, apiPort] = [await freePort(), await freePort(), await freePort()];
        const logDir = dir;
        const alive = (p: Proc) => () => {
            if (p.exited) {
                throw new Error(`${p.name} exited (${p.exitCode}):\n${logTail(p)}`);
            }
        };

        const etcd = startProc(
            "etcd",
            bin("etcd"),
            [
                "--name=e2e",
                `--data-dir=${path.join(dir, "etcd")}`,
                `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
                `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
                `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
                `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
                `--initial-cluster=e2e=http://127.0.0.1:${etcdPeer}`,
                "--unsafe-no-fsync=true",
                "--quota-backend-bytes=2147483648",
                // The Kyverno and ApplicationSet CRDs are over a MiB each (kyverno config/crds; argo-cd manifests/crds).
                "--max-request-bytes=4194304",
            ],
            { logDir },
        );
        procs.push(etcd);

        const server = `https://127.0.0.1:${apiPort}`;
        const apiserver = startProc(
            "kube-apiserver",
            bin("kube-apiserver"),
            [
                `--etcd-servers=http://127.0.0.1:${etcdClient}`,
                "--bind-address=127.0.0.1",
                `--secure-port=${apiPort}`,
                // A loopback advertise address is refused by the endpoint reconcilers; with none the
                // kubernetes Service has no endpoints, which nothing here needs (kubernetes#121942).
                "--advertise-address=127.0.0.1",
                "--endpoint-reconciler-type=none",
                `--cert-dir=${path.join(dir, "apiserver-certs")}`,
                `--tls-cert-file=${path.join(dir, "apiserver.crt")}`,
                `--tls-private-key-file=${path.join(dir, "apiserver.key")}`,
                `--client-ca-file=${path.join(dir, "ca.crt")}`,
                "--authorization-mode=Node,RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                `--service-account-signing-key-file=${path.join(dir, "sa.key")}`,
                `--service-account-key-file=${path.join(dir, "sa.pub")}`,
                // The default 10.0.0.0/24 collides with kwok's default pod CIDR.
                "--service-cluster-ip-range=10.96.0.0/16",
                "--allow-privileged=true",
            ],
            { logDir },
        );
        procs.push(apiserver);
        await waitFor(
            "kube-apiserver /readyz",
            timeout,
            async () => {
                alive(etcd)();
                alive(apiserver)();
                return (await get(`${server}/readyz`, dir)).status === 200;
            },
            () => `kube-apiserver log:\n${logTail(apiserver)}\netcd log:\n${logTail(etcd)}`,
        );

        const kubeconfig = path.join(dir, "admin.kubeconfig");
        fs.writeFileSync(
            kubeconfig,
            kubeconfigFor(server, path.join(dir, "ca.crt"), { name: "admin", cert: path.join(dir, "admin.crt"), key: path.join(dir, "admin.key") }),
        );
        const kcmConfig = path.join(dir, "controller-manager.kubeconfig");
        fs.writeFileSync(
            kcmConfig,
            kubeconfigFor(server, path.join(dir, "ca.crt"), {
                name: "kcm",
                cert: path.join(dir, "controller-manager.crt"),
                key: path.join(dir, "controller-manager.key"),
            }),
        );
        const schedConfig = path.join(dir, "scheduler.kubeconfig");
        fs.writeFileSync(
            schedConfig,
            kubeconfigFor(server, path.join(dir, "ca.crt"), { name: "scheduler", cert: path.join(dir, "scheduler.crt"), key: path.join(dir, "scheduler.key") }),
        );

        const kcm = startProc(
            "kube-controller-manager",
            bin("kube-controller-manager"),
            [
                `--kubeconfig=${kcmConfig}`,
                `--authentication-kubeconfig=${kcmConfig}`,
                `--authorization-kubeconfig=${kcmConfig}`,
                "--bind-address=127.0.0.1",
                "--secure-port=0",
                "--leader-elect=false",
                "--use-service-account-credentials=true",
                `--root-ca-file=${path.join(dir, "ca.crt")}`,
                `--service-account-private-key-file=${path.join(dir, "sa.key")}`,
                `--cluster-signing-cert-file=${path.join(dir, "ca.crt")}`,
                `--cluster-signing-key-file=${path.join(dir, "ca.key")}`,
                // kwok renews node leases; the grace period is kwokctl's.
                "--node-monitor-period=25s",
                "--node-monitor-grace-period=3m20s",
            ],
            { logDir },
        );
        procs.push(kcm);
        const scheduler = startProc(
            "kube-scheduler",
            bin("kube-scheduler"),
            [
                `--kubeconfig=${schedConfig}`,
                `--authentication-kubeconfig=${schedConfig}`,
                `--authorization-kubeconfig=${schedConfig}`,
                "--bind-address=127.0.0.1",
                "--secure-port=0",
                "--leader-elect=false",
            ],
            { logDir },
        );
        procs.push(scheduler);
        const stages = fs
            .readdirSync(bin("kwok-stages"))
            .filter((f) => f.endsWith(".yaml"))
            .map((f) => `--config=${path.join(bin("kwok-stages"), f)}`);
        const kwok = startProc(
            "kwok",
            bin("kwok"),
            [
                `--kubeconfig=${kubeconfig}`,
                "--manage-all-nodes=true",
                "--cidr=10.244.0.0/16",
                "--node-ip=127.0.0.1",
                "--node-lease-duration-seconds=200",
                ...stages,
            ],
            { logDir },
        );
        procs.push(kwok);

        const kubectl = (args: string[], input?: string) => runOk(bin("kubectl"), [`--kubeconfig=${kubeconfig}`, ...args], { input });
        const nodes = opts.nodes ?? 3;
        const nodeDocs = Array.from({ length: nodes }, (_, i) => nodeManifest(`e2e-node-${i + 1}`)).join("\n---\n");
        await waitFor(
            "the default ServiceAccount and the node API",
            timeout,
            () => {
                for (const p of [kcm, scheduler, kwok]) {
                    alive(p)();
                }
                kubectl(["apply", "-f", "-"], nodeDocs);
                return true;
            },
            () => procs.map((p) => `${p.name}:\n${logTail(p, 10)}`).join("\n"),
        );
        await waitFor(
            `${nodes} Ready nodes`,
            timeout,
            () => {
                for (const p of [kcm, scheduler, kwok]) {
                    alive(p)();
                }
                const out = kubectl(["get", "nodes", "-o", 'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}']);
                return out.split("\n").filter((s) => s === "True").length === nodes;
            },
            () => `kwok log:\n${logTail(kwok)}`,
        );
        await waitFor(
            "the default ServiceAccount in default",
            timeout,
            () => kubectl(["get", "serviceaccount", "default", "-n", "default", "-o", "name"]).trim() !== "",
            () => `kube-controller-manager log:\n${logTail(kcm)}`,
        );

        return { dir, bin: opts.bin, server, kubeconfig, caFile: path.join(dir, "ca.crt"), caKey: path.join(dir, "ca.key"), procs, kubectl, stop };
    } catch (err) {
        await stop();
        throw err;
    }
}

/** A fake node kwok manages: untainted (the program's pods carry no kwok toleration), with capacity. */
function nodeManifest(name: string): string {
    return JSON.stringify({
        apiVersion: "v1",
        kind: "Node",
        metadata: {
            name,
            annotations: { "node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake" },
            labels: {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": `e2e-zone-${name.slice(-1)}`,
                type: "kwok",
            },
        },
        status: {
            allocatable: { cpu: "16", memory: "64Gi", pods: "110" },
            capacity: { cpu: "16", memory: "64Gi", pods: "110" },
        },
    });
}
