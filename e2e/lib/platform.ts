/**
 * The platform as ADR-056's clusters have it before this program runs: the CRDs of Gateway API,
 * Cilium, Kyverno (both APIs) and ArgoCD from their modules; the shared Gateway with the listener
 * the stack names; the observability namespace with Mimir's gateway Service; ArgoCD's namespace
 * with argocd-cm, argocd-rbac-cm and the AppProject and ApplicationSet the stack keeps as
 * `owner: external`, built to ADR-056's requirements (the same objects the offline plan assumes);
 * and the tenants' namespaces, a lower-tier, a prod and (with policy.regulated) a regulated one,
 * labelled as the stack's selectors expect, as every cluster of the platform has them.
 */
import type { LabelSelector } from "../../components/policy/config";
import { allOf, requirements } from "../../components/policy/selectors";
import { AddonConfig } from "../../stacks/config";
import { configFromStackFile, fromConfigMap, placeholderKeptArgoObjects } from "../../tools/stackFile";
import { Cluster } from "./cluster";
import { KYVERNO_MODULE } from "./kyvernoRelease";
import { moduleVersion, moduleYamlDir } from "./modules";
import { waitFor } from "./procs";
import { ConfigMap } from "./stacks";

export const GATEWAY_API = "sigs.k8s.io/gateway-api";
export const CILIUM = "github.com/cilium/cilium";
export const KYVERNO = KYVERNO_MODULE;
export const ARGO_CD = "github.com/argoproj/argo-cd/v3";
export const ARGO_ROLLOUTS = "github.com/argoproj/argo-rollouts";

/** Each platform CRD source: module, directory, and (optionally) the files of it to take. */
const PLATFORM_CRDS: { module: string; dir: string; only?: RegExp }[] = [
    { module: GATEWAY_API, dir: "config/crd/standard" },
    { module: CILIUM, dir: "pkg/k8s/apis/cilium.io/client/crds/v2", only: /^cilium(clusterwide)?networkpolicies\.yaml$/ },
    { module: KYVERNO, dir: "config/crds/kyverno" },
    { module: KYVERNO, dir: "config/crds/policies.kyverno.io" },
    // Kyverno's report kinds: its admission controller watches them (cmd/kyverno/main.go).
    { module: KYVERNO, dir: "config/crds/reports" },
    { module: KYVERNO, dir: "config/crds/policyreport" },
    { module: ARGO_CD, dir: "manifests/crds" },
];

export function platformCrdVersions(): { name: string; version: string }[] {
    return [...new Set(PLATFORM_CRDS.map((c) => c.module))].map((m) => ({ name: m, version: moduleVersion(m) }));
}

/** Server-side apply: several of these CRDs are past client-side apply's annotation limit. */
export function applyServerSide(cluster: Cluster, docs: string, manager = "platform-e2e"): void {
    cluster.kubectl(["apply", "--server-side", `--field-manager=${manager}`, "--force-conflicts", "-f", "-"], docs);
}

function crdDocs(): string {
    return PLATFORM_CRDS.flatMap((src) => moduleYamlDir(src.module, src.dir, src.only)).join("\n---\n");
}

/** Waits until every CRD of the cluster is Established (a fresh CRD has no status at first). */
export async function waitEstablished(cluster: Cluster, timeoutMs = 60_000): Promise<void> {
    let last = "";
    await waitFor(
        "every CRD Established",
        timeoutMs,
        () => {
            last = cluster.kubectl([
                "get",
                "crd",
                "-o",
                'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Established")].status}{"\\n"}{end}',
            ]);
            return last
                .trim()
                .split("\n")
                .every((l) => l.endsWith("=True"));
        },
        () => last,
    );
}

/** The stack's configuration, read by the program's own reader. */
export function addonConfig(stack: string, config: ConfigMap): AddonConfig {
    return configFromStackFile(fromConfigMap(stack, config));
}

/** Labels that satisfy `selector` (the first allowed value where a key is restricted), or undefined. */
export function labelsFor(selector: LabelSelector): Record<string, string> | undefined {
    const allowed = new Map<string, string[] | undefined>();
    for (const r of requirements(selector)) {
        if (r.operator === "In") {
            const before = allowed.get(r.key);
            allowed.set(r.key, before === undefined ? [...(r.values ?? [])] : before.filter((v) => r.values?.includes(v)));
        } else if (r.operator === "Exists" && !allowed.has(r.key)) {
            allowed.set(r.key, undefined);
        }
    }
    const out: Record<string, string> = {};
    for (const [key, values] of allowed) {
        if (values !== undefined && values.length === 0) {
            return undefined;
        }
        out[key] = values?.[0] ?? "true";
    }
    return out;
}

/** The tenants' namespaces of the platform: one per scope the stack's policies select. */
export function tenantNamespaces(cfg: AddonConfig): { name: string; labels: Record<string, string> }[] {
    const p = cfg.policy;
    const scopes: [string, LabelSelector][] = [
        ["e2e-tenant-dev", p.tenantNamespaceSelector],
        ["e2e-tenant-prod", allOf(p.tenantNamespaceSelector, { matchLabels: p.prodNamespaceLabels })],
        ...(p.regulated
            ? [
                  [
                      "e2e-tenant-regulated",
                      allOf(p.tenantNamespaceSelector, { matchLabels: p.prodNamespaceLabels }, { matchLabels: p.regulated.namespaceLabels }),
                  ] as [string, LabelSelector],
              ]
            : []),
    ];
    return scopes.map(([name, selector]) => {
        const labels = labelsFor(selector);
        if (!labels) {
            throw new Error(`no namespace labels satisfy ${JSON.stringify(selector)} (${name})`);
        }
        return { name, labels };
    });
}

/** Installs the platform the stack expects onto the cluster. */
export async function installPlatform(cluster: Cluster, stack: string, config: ConfigMap): Promise<void> {
    applyServerSide(cluster, crdDocs());
    await waitEstablished(cluster);
    const cfg = addonConfig(stack, config);
    const objects: unknown[] = [];
    const ns = (name: string) => objects.push({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    ns(cfg.gateway.namespace);
    ns(cfg.mimir.namespace);
    for (const t of tenantNamespaces(cfg)) {
        objects.push({ apiVersion: "v1", kind: "Namespace", metadata: { name: t.name, labels: t.labels } });
    }
    objects.push({
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "GatewayClass",
        metadata: { name: "platform-e2e" },
        spec: { controllerName: "platform.test/e2e-gateway" },
    });
    objects.push({
        apiVersion: "v1",
        kind: "Secret",
        type: "kubernetes.io/tls",
        metadata: { name: `${cfg.gateway.name}-tls`, namespace: cfg.gateway.namespace },
        data: { "tls.crt": "", "tls.key": "" },
    });
    objects.push({
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "Gateway",
        metadata: { name: cfg.gateway.name, namespace: cfg.gateway.namespace },
        spec: {
            gatewayClassName: "platform-e2e",
            listeners: [
                {
                    name: cfg.gateway.listener,
                    port: 443,
                    protocol: "HTTPS",
                    tls: { mode: "Terminate", certificateRefs: [{ kind: "Secret", name: `${cfg.gateway.name}-tls` }] },
                    allowedRoutes: { namespaces: { from: "All" } },
                },
            ],
        },
    });
    const mimir = cfg.mimir;
    objects.push({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: mimir.gatewayService, namespace: mimir.namespace, labels: mimir.gatewayPodLabels },
        spec: { selector: mimir.gatewayPodLabels, ports: [{ name: "http", port: mimir.gatewayServicePort, targetPort: mimir.gatewayTargetPort }] },
    });
    if (cfg.argocd.local) {
        ns(cfg.argocd.namespace);
        // As ArgoCD's install manifests ship them (argo-cd manifests/base/config/argocd-rbac-cm.yaml
        // at v3.5.1: no data). Applying `data: {}` server-side would make this manager own the map
        // itself, and every other manager's key a conflict (docs/operations/troubleshooting.md,
        // "argocd-rbac-cm or argocd-cm: ...").
        for (const name of ["argocd-cm", "argocd-rbac-cm"]) {
            objects.push({
                apiVersion: "v1",
                kind: "ConfigMap",
                metadata: { name, namespace: cfg.argocd.namespace, labels: { "app.kubernetes.io/part-of": "argocd" } },
            });
        }
        for (const obj of Object.values(placeholderKeptArgoObjects(cfg.argocd))) {
            const meta = obj.metadata as { annotations?: Record<string, string> };
            delete meta.annotations;
            objects.push(obj);
        }
    }
    // Namespaces first, then everything that lives in them.
    const [first, rest] = [
        objects.filter((o) => (o as { kind: string }).kind === "Namespace"),
        objects.filter((o) => (o as { kind: string }).kind !== "Namespace"),
    ];
    applyServerSide(cluster, first.map((o) => JSON.stringify(o)).join("\n---\n"));
    applyServerSide(cluster, rest.map((o) => JSON.stringify(o)).join("\n---\n"));
}
