import { MimirConfig } from "../gateway/config";
import { CanaryTarget, NetworkConfig } from "./config";

/**
 * CiliumNetworkPolicy bodies (cilium.io/v2, Cilium 1.19) for the metric gate: the controller
 * reaching Mimir (hub) or the hub's read endpoint (spoke), and what a default-deny controller
 * namespace still needs. Peers are selected by pod labels and namespace, never by pod IP.
 */

/** Cilium's label for a pod's namespace; peers in another namespace are selected with it. */
export const NAMESPACE_LABEL = "k8s:io.kubernetes.pod.namespace";

/** The controller pods, as the argo-rollouts chart labels them. */
export const CONTROLLER_POD_LABELS = {
    "app.kubernetes.io/name": "argo-rollouts",
    "app.kubernetes.io/component": "rollouts-controller",
};

/** The controller's metrics port (chart `controller.containerPorts.metrics`). */
export const CONTROLLER_METRICS_PORT = 8090;

type PortRule = { ports: { port: string; protocol: "TCP" | "UDP" }[]; rules?: Record<string, unknown> };
export type EgressRule = {
    toEndpoints?: { matchLabels: Record<string, string> }[];
    toEntities?: string[];
    toFQDNs?: { matchName: string }[];
    toCIDR?: string[];
    toPorts?: PortRule[];
};
export type IngressRule = { fromEndpoints?: { matchLabels: Record<string, string> }[]; toPorts?: PortRule[] };

export interface CiliumNetworkPolicySpec {
    description: string;
    endpointSelector: { matchLabels: Record<string, string> };
    enableDefaultDeny?: { ingress: boolean; egress: boolean };
    ingress?: IngressRule[];
    egress?: EgressRule[];
}

const tcp = (...ports: number[]): PortRule => ({ ports: ports.map((p) => ({ port: String(p), protocol: "TCP" as const })) });

/**
 * DNS to the cluster resolver. The DNS rule sends lookups through Cilium's proxy, which is what
 * lets `toFQDNs` rules learn the addresses behind a name.
 */
export function dnsEgress(network: Pick<NetworkConfig, "dnsNamespace" | "dnsPodLabels">): EgressRule {
    return {
        toEndpoints: [{ matchLabels: { [NAMESPACE_LABEL]: network.dnsNamespace, ...network.dnsPodLabels } }],
        toPorts: [
            {
                ports: [
                    { port: "53", protocol: "UDP" },
                    { port: "53", protocol: "TCP" },
                ],
                rules: { dns: [{ matchPattern: "*" }] },
            },
        ],
    };
}

/** Hub: the Mimir gateway pods, on the pods' port (L4 rules match the target port, not the Service's). */
export function mimirEgress(mimir: MimirConfig): EgressRule {
    return {
        toEndpoints: [{ matchLabels: { [NAMESPACE_LABEL]: mimir.namespace, ...mimir.gatewayPodLabels } }],
        toPorts: [tcp(mimir.gatewayTargetPort)],
    };
}

/** The host and port of an http(s) URL. */
export function hostAndPort(url: string): { host: string; port: number } {
    const u = new URL(url);
    return { host: u.hostname, port: u.port ? Number(u.port) : u.protocol === "https:" ? 443 : 80 };
}

/** Spoke: the hub's read endpoint, by its name (and by CIDR where the load balancer's are fixed). */
export function hubReadEgress(endpoint: string, network: Pick<NetworkConfig, "hubReadCidrs" | "hubReadFqdns">): EgressRule[] {
    const { host, port } = hostAndPort(endpoint);
    const names = [...new Set([host, ...network.hubReadFqdns])];
    const rules: EgressRule[] = [{ toFQDNs: names.map((matchName) => ({ matchName })), toPorts: [tcp(port)] }];
    if (network.hubReadCidrs.length > 0) {
        rules.push({ toCIDR: [...network.hubReadCidrs], toPorts: [tcp(port)] });
    }
    return rules;
}

/**
 * Download mode: where the controller fetches the plugin at start. A GitHub release download
 * redirects to GitHub's asset hosts, which must be reachable too.
 */
export function pluginDownloadHosts(downloadUrl: string): string[] {
    const { host } = hostAndPort(downloadUrl);
    return host === "github.com" ? ["github.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com"] : [host];
}

/** The egress the controller needs in any case: the API server, DNS, and the plugin download. */
export function controllerBaseEgress(network: NetworkConfig, pluginDownloadUrl: string | undefined): EgressRule[] {
    const rules: EgressRule[] = [{ toEntities: ["kube-apiserver"], toPorts: [tcp(443, 6443)] }, dnsEgress(network)];
    if (pluginDownloadUrl) {
        rules.push({ toFQDNs: pluginDownloadHosts(pluginDownloadUrl).map((matchName) => ({ matchName })), toPorts: [tcp(443)] });
    }
    return rules;
}

/** Default-deny only: the notification service, over https. */
export function notificationEgress(hosts: string[]): EgressRule[] {
    return hosts.length === 0 ? [] : [{ toFQDNs: hosts.map((matchName) => ({ matchName })), toPorts: [tcp(443)] }];
}

/** Default-deny only: the canary pods the controller must reach, namespace by namespace. */
export function canaryTargetEgress(targets: CanaryTarget[]): EgressRule[] {
    return targets.map((t) => ({ toEndpoints: [{ matchLabels: { [NAMESPACE_LABEL]: t.namespace } }], toPorts: [tcp(t.port)] }));
}

export interface ControllerNetworkPolicyInput {
    role: "hub" | "spoke";
    controllerNamespace: string;
    mimir: MimirConfig;
    network: NetworkConfig;
    /** Spoke: the read endpoint the hub routes for this spoke. */
    readEndpoint?: string;
    /** Download mode: the plugin's URL. */
    pluginDownloadUrl?: string;
    /** Where notifications go (Slack, a webhook). */
    notificationHosts?: string[];
}

/**
 * The controller's own policy. Without `controllerDefaultDeny` it only adds allows
 * (`enableDefaultDeny: false`): a Cilium policy with egress rules otherwise switches the selected
 * pods to default-deny and would cut the controller off the API server. With it, it is the
 * complete list of what the controller may reach, next to the namespace's default-deny.
 */
export function controllerNetworkPolicy(input: ControllerNetworkPolicyInput): CiliumNetworkPolicySpec {
    const n = input.network;
    const gate: EgressRule[] = input.role === "hub" ? [mimirEgress(input.mimir)] : hubReadEgress(input.readEndpoint ?? "", n);
    const strict = n.controllerDefaultDeny;
    const egress = strict
        ? [
              ...controllerBaseEgress(n, input.pluginDownloadUrl),
              ...gate,
              ...notificationEgress(input.notificationHosts ?? []),
              ...canaryTargetEgress(n.canaryTargets),
          ]
        : [...gate, dnsEgress(n)];
    const spec: CiliumNetworkPolicySpec = {
        description:
            input.role === "hub"
                ? "Argo Rollouts controller: metric gates query Mimir in-cluster (ADR-056 D5)"
                : "Argo Rollouts controller: metric gates read this spoke's tenant through the hub's spoke route (ADR-056 W8c)",
        endpointSelector: { matchLabels: { ...CONTROLLER_POD_LABELS } },
        egress,
    };
    if (strict) {
        if (n.metricsScrapeNamespaces.length > 0) {
            spec.ingress = [
                {
                    fromEndpoints: n.metricsScrapeNamespaces.map((ns) => ({ matchLabels: { [NAMESPACE_LABEL]: ns } })),
                    toPorts: [tcp(CONTROLLER_METRICS_PORT)],
                },
            ];
        }
    } else {
        spec.enableDefaultDeny = { ingress: false, egress: false };
    }
    return spec;
}

/** Default-deny for every pod of the controller namespace (Cilium's empty-rule pattern). */
export function namespaceDefaultDeny(): Record<string, unknown> {
    return {
        description: "Default deny: the controller namespace allows only what its policies list",
        endpointSelector: {},
        ingress: [{}],
        egress: [{}],
    };
}

/**
 * Hub: the matching ingress into the default-deny observability namespace, from the controller
 * pods only. Additive (`enableDefaultDeny: false`): it must not change how anything else reaches
 * the Mimir gateway.
 */
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
