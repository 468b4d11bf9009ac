/**
 * The real Kyverno against a run's cluster, out of cluster as upstream documents it (kyverno
 * DEVELOPMENT.md "Debugging local code" and .vscode/launch.json at v1.17.2): the admission
 * controller (cmd/kyverno) serving its webhooks on 127.0.0.1, registered with
 * `--serverIP=127.0.0.1:<port>` so the webhook configurations it writes carry
 * `clientConfig.url = https://127.0.0.1:<port>/...` and its self-signed serving certificate that IP
 * (pkg/controllers/webhook/utils.go newClientConfig, pkg/tls/keypair.go), and the background
 * controller (cmd/background-controller) that carries out generate requests. CI runs v1.17.2;
 * ARGO_ROLLOUTS_ADDON_E2E_KYVERNO=1.19 runs v1.19.1 (e2e/lib/kyvernoRelease.ts names the binaries,
 * and moduleDir reads the chart from the module version that release pins). The flags below are
 * those of both (cmd/kyverno/main.go, cmd/internal/flag.go at v1.17.2 and v1.19.1).
 *
 * Kyverno's webhooks fail closed: a Kyverno that died would refuse every request its webhooks
 * match. So `stop` removes the webhook configurations Kyverno wrote before it stops the
 * processes (and once more after, in case the leader rewrote them), and `check` turns a dead
 * process into an error carrying its log tail.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { Cluster, kubeconfigFor } from "./cluster";
import { moduleDir } from "./modules";
import { kyvernoRelease } from "./kyvernoRelease";
import { KYVERNO } from "./platform";
import { Proc, freePort, logTail, runOk, startProc, stopProc, waitFor } from "./procs";

export const KYVERNO_NAMESPACE = "kyverno";
/** The label Kyverno puts on the webhook configurations it manages (pkg/config/config.go). */
export const KYVERNO_WEBHOOK_LABEL = "webhook.kyverno.io/managed-by=kyverno";

export interface KyvernoProcs {
    admission: Proc;
    background: Proc;
    /** Throws with the log tail of a Kyverno process that exited. */
    check(): void;
    /** The webhook configurations Kyverno wrote, as JSON. */
    webhooks(): { validating: WebhookConfiguration[]; mutating: WebhookConfiguration[] };
    stop(): Promise<void>;
}

export interface WebhookConfiguration {
    metadata: { name: string };
    webhooks?: {
        name: string;
        namespaceSelector?: LabelSelectorView;
        objectSelector?: LabelSelectorView;
        matchConditions?: { name: string }[];
        clientConfig: { url?: string };
        rules?: { resources?: string[] }[];
    }[];
}

export interface LabelSelectorView {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

function removeWebhooks(cluster: Cluster): void {
    for (const kind of ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]) {
        try {
            cluster.kubectl(["delete", kind, "-l", KYVERNO_WEBHOOK_LABEL, "--ignore-not-found", "--wait=false"]);
        } catch {
            /* the API server is gone with the cluster */
        }
    }
}

/** The chart templates of what a Kyverno install has besides its Deployments: identities, RBAC, configuration. */
const CHART_TEMPLATES = [
    ...["admission-controller", "background-controller", "reports-controller"].flatMap((c) =>
        ["serviceaccount", "clusterrole", "clusterrolebinding", "role", "rolebinding"].map((f) => `templates/${c}/${f}.yaml`),
    ),
    "templates/rbac/policies.yaml",
    "templates/rbac/updaterequests.yaml",
    "templates/config/configmap.yaml",
    "templates/config/metricsconfigmap.yaml",
];

/**
 * Renders Kyverno's own chart (charts/kyverno in the kyverno module, the engine's version) for
 * everything but its workloads, as `make debug-deploy` does upstream: the controllers'
 * ServiceAccounts, their ClusterRoles that aggregate every role labelled for them (so the roles
 * the program labels reach them exactly as on a cluster), their bindings, and the `kyverno`
 * ConfigMap with the chart's resource filters and webhook settings. The module carries the
 * grafana and crds subcharts but not the optional ones Chart.yaml lists, so a copy drops those
 * from its dependencies (all are disabled at the chart's defaults).
 */
function installKyvernoChartObjects(cluster: Cluster, opts: { bin: string; dir: string }): void {
    const src = path.join(moduleDir(KYVERNO), "charts", "kyverno");
    const chart = path.join(opts.dir, "kyverno-chart");
    fs.rmSync(chart, { recursive: true, force: true });
    fs.cpSync(src, chart, { recursive: true });
    fs.chmodSync(chart, 0o755);
    const chartYaml = path.join(chart, "Chart.yaml");
    fs.chmodSync(chartYaml, 0o644);
    const doc = YAML.parse(fs.readFileSync(chartYaml, "utf8")) as { dependencies?: { name: string }[] };
    const vendored = new Set(fs.readdirSync(path.join(chart, "charts")));
    doc.dependencies = (doc.dependencies ?? []).filter((d) => vendored.has(d.name));
    fs.writeFileSync(chartYaml, YAML.stringify(doc));
    const helmHome = path.join(opts.dir, "helm-kyverno");
    const version = JSON.parse(cluster.kubectl(["version", "-o", "json"])) as { serverVersion: { gitVersion: string } };
    const rendered = runOk(
        path.join(opts.bin, "helm"),
        [
            "template",
            "kyverno",
            chart,
            "--namespace",
            KYVERNO_NAMESPACE,
            "--kube-version",
            version.serverVersion.gitVersion,
            ...CHART_TEMPLATES.flatMap((t) => ["--show-only", t]),
        ],
        { env: { ...process.env, HELM_CACHE_HOME: helmHome, HELM_CONFIG_HOME: helmHome, HELM_DATA_HOME: helmHome } },
    );
    cluster.kubectl(
        ["apply", "--server-side", "--field-manager=platform-e2e", "-f", "-"],
        JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: KYVERNO_NAMESPACE } }),
    );
    cluster.kubectl(["apply", "--server-side", "--field-manager=platform-e2e", "-f", "-"], rendered);
}

/** A kubeconfig holding a TokenRequest token of one of Kyverno's ServiceAccounts. */
function serviceAccountKubeconfig(cluster: Cluster, dir: string, sa: string): string {
    const token = cluster.kubectl(["create", "token", sa, "-n", KYVERNO_NAMESPACE, "--duration=2h"]).trim();
    const file = path.join(dir, `${sa}.kubeconfig`);
    fs.writeFileSync(file, kubeconfigFor(cluster.server, cluster.caFile, { name: sa, token }), { mode: 0o600 });
    return file;
}

export async function startKyverno(cluster: Cluster, opts: { bin: string; dir: string }): Promise<KyvernoProcs> {
    const release = kyvernoRelease();
    installKyvernoChartObjects(cluster, opts);
    const webhookPort = await freePort();
    const env = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: opts.dir,
        // pkg/config/config.go: where Kyverno keeps its Secrets, Lease and ConfigMaps, and who it is.
        KYVERNO_NAMESPACE,
        KYVERNO_SERVICEACCOUNT_NAME: "kyverno-admission-controller",
        KYVERNO_DEPLOYMENT: "kyverno-admission-controller",
        KYVERNO_POD_NAME: "kyverno-admission-controller-e2e",
        INIT_CONFIG: "kyverno",
        METRICS_CONFIG: "kyverno-metrics",
    };
    // Metrics on 127.0.0.1 and free ports; controller-runtime's own metrics off (its default :8080
    // would clash).
    const common = ["--loggingFormat=text", "--disableLogColor", "-v=2", "--metricsHost=127.0.0.1", "--controllerRuntimeMetricsAddress=0"];
    // Each controller runs as its own ServiceAccount, with the RBAC its chart and the program give it.
    const admissionConfig = serviceAccountKubeconfig(cluster, opts.dir, "kyverno-admission-controller");
    const backgroundConfig = serviceAccountKubeconfig(cluster, opts.dir, "kyverno-background-controller");
    const admission = startProc(
        "kyverno-admission",
        path.join(opts.bin, release.admission),
        [
            ...common,
            `--kubeconfig=${admissionConfig}`,
            `--serverIP=127.0.0.1:${webhookPort}`,
            "--webhookServerHost=127.0.0.1",
            `--webhookServerPort=${webhookPort}`,
            `--caSecretName=kyverno-svc.${KYVERNO_NAMESPACE}.svc.kyverno-tls-ca`,
            `--tlsSecretName=kyverno-svc.${KYVERNO_NAMESPACE}.svc.kyverno-tls-pair`,
            `--backgroundServiceAccountName=system:serviceaccount:${KYVERNO_NAMESPACE}:kyverno-background-controller`,
            `--reportsServiceAccountName=system:serviceaccount:${KYVERNO_NAMESPACE}:kyverno-reports-controller`,
            `--metricsPort=${await freePort()}`,
        ],
        { logDir: opts.dir, env },
    );
    const background = startProc(
        "kyverno-background",
        path.join(opts.bin, release.background),
        [...common, `--kubeconfig=${backgroundConfig}`, `--metricsPort=${await freePort()}`],
        {
            logDir: opts.dir,
            env: {
                ...env,
                KYVERNO_SERVICEACCOUNT_NAME: "kyverno-background-controller",
                KYVERNO_DEPLOYMENT: "kyverno-background-controller",
                KYVERNO_POD_NAME: "kyverno-background-controller-e2e",
            },
        },
    );
    const check = () => {
        for (const p of [admission, background]) {
            if (p.exited) {
                throw new Error(`${p.name} exited ${p.exitCode}:\n${logTail(p, 40)}`);
            }
        }
    };
    const webhooks = () => ({
        validating: (
            JSON.parse(cluster.kubectl(["get", "validatingwebhookconfigurations", "-l", KYVERNO_WEBHOOK_LABEL, "-o", "json"])) as {
                items: WebhookConfiguration[];
            }
        ).items,
        mutating: (
            JSON.parse(cluster.kubectl(["get", "mutatingwebhookconfigurations", "-l", KYVERNO_WEBHOOK_LABEL, "-o", "json"])) as {
                items: WebhookConfiguration[];
            }
        ).items,
    });
    const stop = async () => {
        removeWebhooks(cluster);
        await stopProc(admission);
        await stopProc(background);
        removeWebhooks(cluster);
    };
    try {
        // Ready: the admission controller registered its resource webhooks at its 127.0.0.1 address.
        await waitFor(
            "Kyverno's webhooks registered at 127.0.0.1",
            120_000,
            () => {
                check();
                const all = [...webhooks().validating, ...webhooks().mutating];
                return all.length > 0 && all.every((c) => (c.webhooks ?? []).every((h) => h.clientConfig.url?.startsWith(`https://127.0.0.1:${webhookPort}/`)));
            },
            () => `admission log:\n${logTail(admission, 30)}\nbackground log:\n${logTail(background, 10)}`,
        );
    } catch (err) {
        await stop();
        throw err;
    }
    return { admission, background, check, webhooks, stop };
}

/**
 * Kyverno's resource filters (its ConfigMap's `resourceFilters`) as the run found them, and what
 * changes them: Kyverno reloads the ConfigMap without a restart. The chart filters ReplicaSets out
 * of admission (`[ReplicaSet,*,*]`, `[ReplicaSet/?*,*,*]`); the platform drops those two for the
 * regulated guard (docs/stages/policy.md).
 */
export function resourceFilters(cluster: Cluster): { original: string; set(text: string): void; dropReplicaSets(): void; restore(): void } {
    const configMap = JSON.parse(cluster.kubectl(["get", "configmap", "kyverno", "-n", KYVERNO_NAMESPACE, "-o", "json"])) as { data: Record<string, string> };
    const original = configMap.data.resourceFilters;
    const set = (text: string) =>
        cluster.kubectl(["patch", "configmap", "kyverno", "-n", KYVERNO_NAMESPACE, "--type=merge", "-p", JSON.stringify({ data: { resourceFilters: text } })]);
    return {
        original,
        set,
        dropReplicaSets: () => set(original.replace("[ReplicaSet,*,*]", "").replace("[ReplicaSet/?*,*,*]", "")),
        restore: () => set(original),
    };
}
