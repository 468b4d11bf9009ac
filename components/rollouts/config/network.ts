import { ConfigReader, DNS_LABEL, HOSTNAME } from "../../config/reader";
import { CIDR } from "./patterns";

/** The `network` section (ADR-056 D5, D7): the controller's network policy. */

export interface CanaryTarget {
    namespace: string;
    port: number;
}

export interface NetworkConfig {
    /** Whether the controller namespace gets a default-deny policy of its own. */
    controllerDefaultDeny: boolean;
    dnsNamespace: string;
    dnsPodLabels: Record<string, string>;
    /** Spoke: CIDRs of the hub read endpoint (the internal load balancer), when FQDNs are not used. */
    hubReadCidrs: string[];
    /** Spoke: extra FQDNs of the hub read endpoint (its host is always allowed). */
    hubReadFqdns: string[];
    /** Default-deny only: pods the controller must reach (web analysis against canary Services). */
    canaryTargets: CanaryTarget[];
    /** Default-deny only: namespaces whose pods may scrape the controller's metrics. */
    metricsScrapeNamespaces: string[];
}

export const NETWORK_DEFAULTS = {
    controllerDefaultDeny: false,
    dnsNamespace: "kube-system",
    dnsPodLabels: { "k8s-app": "kube-dns" },
} as const;

const NETWORK_KEYS = ["controllerDefaultDeny", "dnsNamespace", "dnsPodLabels", "hubReadCidrs", "hubReadFqdns", "canaryTargets", "metricsScrapeNamespaces"];

export function readNetwork(r: ConfigReader, value: unknown, role: "hub" | "spoke" | undefined): NetworkConfig | undefined {
    const d = NETWORK_DEFAULTS;
    const n = r.object("network", value, NETWORK_KEYS);
    if (!n) {
        return undefined;
    }
    const label = { pattern: DNS_LABEL, describe: "a namespace name", maxLength: 63 };
    const targets: CanaryTarget[] = [];
    if (n.canaryTargets !== undefined) {
        if (!Array.isArray(n.canaryTargets)) {
            r.problem("network.canaryTargets", n.canaryTargets, "must be a list of {namespace, port}");
        } else {
            n.canaryTargets.forEach((t, i) => {
                const o = r.object(`network.canaryTargets[${i}]`, t, ["namespace", "port"]) ?? {};
                const ns = r.requiredString(`network.canaryTargets[${i}].namespace`, o.namespace, label);
                const port = r.integer(`network.canaryTargets[${i}].port`, o.port, 1, 65535, 0);
                if (o.port === undefined) {
                    r.problem(`network.canaryTargets[${i}].port`, undefined, "is required: the pods' target port");
                }
                if (ns && port > 0) {
                    targets.push({ namespace: ns, port });
                }
            });
        }
    }
    const dnsPodLabels = n.dnsPodLabels === undefined ? { ...d.dnsPodLabels } : r.labels("network.dnsPodLabels", n.dnsPodLabels);
    const out: NetworkConfig = {
        controllerDefaultDeny: r.boolean("network.controllerDefaultDeny", n.controllerDefaultDeny, d.controllerDefaultDeny),
        dnsNamespace: r.string("network.dnsNamespace", n.dnsNamespace, label, d.dnsNamespace),
        dnsPodLabels,
        // /0 is every address: the controller's egress policy would allow everything.
        hubReadCidrs: r.strings("network.hubReadCidrs", n.hubReadCidrs, { pattern: CIDR, valid: (c) => !c.endsWith("/0"), describe: "an IPv4 CIDR of the hub's read endpoint such as 10.20.0.0/24 (octets up to 255, not /0)" }),
        hubReadFqdns: r.strings("network.hubReadFqdns", n.hubReadFqdns, { pattern: HOSTNAME, describe: "a fully qualified hostname" }),
        canaryTargets: targets,
        metricsScrapeNamespaces: r.strings("network.metricsScrapeNamespaces", n.metricsScrapeNamespaces, { pattern: DNS_LABEL, describe: "a namespace name" }),
    };
    if (role === "hub") {
        for (const k of ["hubReadCidrs", "hubReadFqdns"] as const) {
            if (out[k].length > 0) {
                r.problem(`network.${k}`, n[k], "only applies to a spoke (the hub reads Mimir in-cluster)");
            }
        }
    }
    if (!out.controllerDefaultDeny) {
        for (const k of ["canaryTargets", "metricsScrapeNamespaces"] as const) {
            if (n[k] !== undefined) {
                r.problem(`network.${k}`, n[k], "only applies with network.controllerDefaultDeny: true (without it nothing is denied)");
            }
        }
    }
    return out;
}
