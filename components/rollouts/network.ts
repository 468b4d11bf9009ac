import { MimirConfig } from "../gateway/config";
import { NetworkConfig, NotificationsConfig, PluginConfig } from "./config";
import { notificationHosts } from "./notifications";
import { trafficRouterPlugin } from "./plugin";

/**
 * CiliumNetworkPolicy bodies (cilium.io/v2, Cilium 1.19) for the metric gate (ADR-056 D5): the
 * controller reaching Mimir (hub) or the hub's read endpoint (spoke), and what a default-deny
 * controller namespace still needs. Peers are selected by pod labels and namespace, never by pod IP;
 * L4 rules match the pod's target port, not the Service's.
 */

/** Cilium's label for a pod's namespace; peers in another namespace are selected with it. */
const NAMESPACE_LABEL = "k8s:io.kubernetes.pod.namespace";
/** The controller pods, as the argo-rollouts chart labels them, and their metrics port (`controller.containerPorts.metrics`). */
const CONTROLLER_POD_LABELS = { "app.kubernetes.io/name": "argo-rollouts", "app.kubernetes.io/component": "rollouts-controller" };
const CONTROLLER_METRICS_PORT = 8090;

type PortRule = { ports: { port: string; protocol: "TCP" | "UDP" }[]; rules?: Record<string, unknown> };
type Peers = { matchLabels: Record<string, string> }[];
type EgressRule = { toEndpoints?: Peers; toEntities?: string[]; toFQDNs?: { matchName: string }[]; toCIDR?: string[]; toPorts?: PortRule[] };

export interface CiliumNetworkPolicySpec {
    description: string;
    endpointSelector: { matchLabels: Record<string, string> };
    enableDefaultDeny?: { ingress: boolean; egress: boolean };
    ingress?: { fromEndpoints?: Peers; toPorts?: PortRule[] }[];
    egress?: EgressRule[];
}

const tcp = (...ports: number[]): PortRule => ({ ports: ports.map((p) => ({ port: String(p), protocol: "TCP" as const })) });
const fqdns = (names: string[], port: number): EgressRule => ({ toFQDNs: names.map((matchName) => ({ matchName })), toPorts: [tcp(port)] });

/** DNS to the cluster resolver, through Cilium's DNS proxy, which is what lets `toFQDNs` rules learn a name's addresses. */
function dnsEgress(network: Pick<NetworkConfig, "dnsNamespace" | "dnsPodLabels">): EgressRule {
    const dns = [
        { port: "53", protocol: "UDP" as const },
        { port: "53", protocol: "TCP" as const },
    ];
    return {
        toEndpoints: [{ matchLabels: { [NAMESPACE_LABEL]: network.dnsNamespace, ...network.dnsPodLabels } }],
        toPorts: [{ ports: dns, rules: { dns: [{ matchPattern: "*" }] } }],
    };
}

/** The host and port of an http(s) URL. */
function hostAndPort(url: string): { host: string; port: number } {
    const u = new URL(url);
    return { host: u.hostname, port: u.port ? Number(u.port) : u.protocol === "https:" ? 443 : 80 };
}

/** The metric gate's egress: hub, the Mimir gateway pods; spoke, the hub's read endpoint (the metrics address) by name, and by CIDR where its load balancer's are fixed. */
function gateEgress(role: "hub" | "spoke", mimir: MimirConfig, endpoint: string, network: NetworkConfig): EgressRule[] {
    if (role === "hub") {
        return [{ toEndpoints: [{ matchLabels: { [NAMESPACE_LABEL]: mimir.namespace, ...mimir.gatewayPodLabels } }], toPorts: [tcp(mimir.gatewayTargetPort)] }];
    }
    const { host, port } = hostAndPort(endpoint);
    const byCidr = network.hubReadCidrs.length > 0 ? [{ toCIDR: [...network.hubReadCidrs], toPorts: [tcp(port)] }] : [];
    return [fqdns([...new Set([host, ...network.hubReadFqdns])], port), ...byCidr];
}

/** A GitHub release download redirects to GitHub's asset hosts, which must be reachable too. */
function pluginDownloadHosts(downloadUrl: string): string[] {
    const { host } = hostAndPort(downloadUrl);
    return host === "github.com" ? ["github.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com"] : [host];
}

/**
 * The controller's own policy. Without `controllerDefaultDeny` it only adds allows
 * (`enableDefaultDeny: false`): a policy with egress rules otherwise switches the pods to
 * default-deny and would cut the controller off the API server. With it, it is the complete list of
 * what the controller may reach: the API server, DNS, the plugin download, the gate, notifications
 * and the canary pods; and who may scrape its metrics.
 */
export function controllerNetworkPolicy(
    cfg: { cluster: { role: "hub" | "spoke" }; mimir: MimirConfig; network: NetworkConfig; plugin: PluginConfig; notifications: NotificationsConfig },
    metricsAddress: string,
): CiliumNetworkPolicySpec {
    const { role } = cfg.cluster;
    const n = cfg.network;
    const gate = gateEgress(role, cfg.mimir, metricsAddress, n);
    const plugin = trafficRouterPlugin(cfg.plugin).location;
    const hosts = notificationHosts(cfg.notifications);
    const spec: CiliumNetworkPolicySpec = {
        description:
            role === "hub"
                ? "Argo Rollouts controller: metric gates query Mimir in-cluster (ADR-056 D5)"
                : "Argo Rollouts controller: metric gates read this spoke's tenant through the hub's spoke route (ADR-056 W8c)",
        endpointSelector: { matchLabels: { ...CONTROLLER_POD_LABELS } },
        egress: n.controllerDefaultDeny
            ? [
                  { toEntities: ["kube-apiserver"], toPorts: [tcp(443, 6443)] },
                  dnsEgress(n),
                  ...(plugin.startsWith("https://") ? [fqdns(pluginDownloadHosts(plugin), 443)] : []),
                  ...gate,
                  ...(hosts.length > 0 ? [fqdns(hosts, 443)] : []),
                  ...n.canaryTargets.map((t) => ({ toEndpoints: [{ matchLabels: { [NAMESPACE_LABEL]: t.namespace } }], toPorts: [tcp(t.port)] })),
              ]
            : [...gate, dnsEgress(n)],
    };
    if (!n.controllerDefaultDeny) {
        spec.enableDefaultDeny = { ingress: false, egress: false };
    } else if (n.metricsScrapeNamespaces.length > 0) {
        spec.ingress = [
            { fromEndpoints: n.metricsScrapeNamespaces.map((ns) => ({ matchLabels: { [NAMESPACE_LABEL]: ns } })), toPorts: [tcp(CONTROLLER_METRICS_PORT)] },
        ];
    }
    return spec;
}

/** Default-deny for every pod of the controller namespace (Cilium's empty-rule pattern). */
export function namespaceDefaultDeny(): Record<string, unknown> {
    return { description: "Default deny: the controller namespace allows only what its policies list", endpointSelector: {}, ingress: [{}], egress: [{}] };
}

/** Hub: the matching ingress into the default-deny observability namespace, from the controller pods only, additive. */
export function mimirIngressNetworkPolicy(mimir: MimirConfig, controllerNamespace: string): CiliumNetworkPolicySpec {
    return {
        description: "Mimir gateway: Argo Rollouts metric gates from the controller pods (ADR-056 D5)",
        endpointSelector: { matchLabels: { ...mimir.gatewayPodLabels } },
        enableDefaultDeny: { ingress: false, egress: false },
        ingress: [
            {
                fromEndpoints: [{ matchLabels: { [NAMESPACE_LABEL]: controllerNamespace, ...CONTROLLER_POD_LABELS } }],
                toPorts: [tcp(mimir.gatewayTargetPort)],
            },
        ],
    };
}
