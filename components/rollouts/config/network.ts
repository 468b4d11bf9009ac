import { defaultsOf, field, readSection } from "../../config/declare";
import { ConfigReader, HOSTNAME, NAMESPACE_RULE } from "../../config/reader";
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

const NAMESPACE = NAMESPACE_RULE;

/** The `network` section: every key, once. */
export const NETWORK_FIELDS = {
    controllerDefaultDeny: field.boolean({ default: false, doc: "give the controller namespace a default-deny policy and a complete allow list" }),
    dnsNamespace: field.string({ rule: NAMESPACE, default: "kube-system", doc: "namespace of the cluster resolver" }),
    dnsPodLabels: field.labels({ default: { "k8s-app": "kube-dns" }, doc: "labels of the cluster resolver's pods" }),
    // /0 is every address: the controller's egress policy would allow everything.
    hubReadCidrs: field.strings({
        rule: {
            pattern: CIDR,
            valid: (c) => !c.endsWith("/0"),
            describe: "an IPv4 CIDR of the hub's read endpoint such as 10.20.0.0/24 (octets up to 255, not /0)",
        },
        doc: "spoke: CIDRs of the hub's internal load balancer, when FQDN rules are not used",
    }),
    hubReadFqdns: field.strings({
        rule: { pattern: HOSTNAME, describe: "a fully qualified hostname" },
        doc: "spoke: more names of the hub read endpoint (its host is always allowed)",
    }),
    canaryTargets: field.listReadBySection({
        describe: "a list of {namespace, port}",
        doc: "default-deny only: pods the controller must reach (web analysis against canary Services)",
        items: {
            namespace: field.string({ rule: NAMESPACE, required: true, doc: "the canary pods' namespace" }),
            port: field.integer({ min: 1, max: 65535, doc: "the pods' target port (required)" }),
        },
    }),
    metricsScrapeNamespaces: field.strings({
        rule: NAMESPACE,
        doc: "default-deny only: namespaces allowed to scrape the controller's metrics; required (at least one) when controller.serviceMonitor is true, or the policy denies every scrape",
    }),
} as const;

export const NETWORK_DEFAULTS = defaultsOf<{ controllerDefaultDeny: boolean; dnsNamespace: string; dnsPodLabels: Record<string, string> }>(NETWORK_FIELDS);

export function readNetwork(r: ConfigReader, value: unknown, role: "hub" | "spoke" | undefined): NetworkConfig | undefined {
    const n = readSection(r, "network", NETWORK_FIELDS, value);
    if (!n) {
        return undefined;
    }
    const { raw } = n;
    const items = NETWORK_FIELDS.canaryTargets.items;
    const targets: CanaryTarget[] = [];
    if (raw.canaryTargets !== undefined) {
        if (!Array.isArray(raw.canaryTargets)) {
            r.problem("network.canaryTargets", raw.canaryTargets, "must be a list of {namespace, port}");
        } else {
            raw.canaryTargets.forEach((t, i) => {
                const o = readSection(r, `network.canaryTargets[${i}]`, items, t);
                if (o && o.raw.port === undefined) {
                    r.problem(`network.canaryTargets[${i}].port`, undefined, "is required: the pods' target port");
                }
                if (o?.namespace && o.port !== undefined) {
                    targets.push({ namespace: o.namespace, port: o.port });
                }
            });
        }
    }
    const out: NetworkConfig = {
        controllerDefaultDeny: n.controllerDefaultDeny,
        dnsNamespace: n.dnsNamespace,
        dnsPodLabels: n.dnsPodLabels,
        hubReadCidrs: n.hubReadCidrs,
        hubReadFqdns: n.hubReadFqdns,
        canaryTargets: targets,
        metricsScrapeNamespaces: n.metricsScrapeNamespaces,
    };
    if (role === "hub") {
        for (const k of ["hubReadCidrs", "hubReadFqdns"] as const) {
            if (out[k].length > 0) {
                r.problem(`network.${k}`, raw[k], "only applies to a spoke (the hub reads Mimir in-cluster)");
            }
        }
    }
    if (!out.controllerDefaultDeny) {
        for (const k of ["canaryTargets", "metricsScrapeNamespaces"] as const) {
            if (raw[k] !== undefined) {
                r.problem(`network.${k}`, raw[k], "only applies with network.controllerDefaultDeny: true (without it nothing is denied)");
            }
        }
    }
    return out;
}
