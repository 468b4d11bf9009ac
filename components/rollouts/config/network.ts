import { field, readSection, type Values } from "../../config/declare";
import { ConfigReader, HOSTNAME, NAMESPACE_RULE } from "../../config/reader";
import { CIDR } from "./patterns";

/** The `network` section (ADR-056 D5, D7): the controller's network policy. */

/** The `network` section: every key, once. */
export const NETWORK_FIELDS = {
    controllerDefaultDeny: field.boolean({ default: false, doc: "give the controller namespace a default-deny policy and a complete allow list" }),
    dnsNamespace: field.string({ rule: NAMESPACE_RULE, default: "kube-system", doc: "namespace of the cluster resolver" }),
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
    canaryTargets: field.list({
        describe: "a list of {namespace, port}",
        doc: "default-deny only: pods the controller must reach (web analysis against canary Services)",
        items: {
            namespace: field.string({ rule: NAMESPACE_RULE, required: true, doc: "the canary pods' namespace" }),
            port: field.integer({ min: 1, max: 65535, required: true, doc: "the pods' target port" }),
        },
    }),
    metricsScrapeNamespaces: field.strings({
        rule: NAMESPACE_RULE,
        doc: "default-deny only: namespaces allowed to scrape the controller's metrics; required (at least one) when controller.serviceMonitor is true, or the policy denies every scrape",
    }),
} as const;

/** Pods the controller must reach (default-deny only). */
export type CanaryTarget = { namespace: string; port: number };
export type NetworkConfig = Omit<Values<typeof NETWORK_FIELDS>, "canaryTargets"> & { canaryTargets: CanaryTarget[] };

export function readNetwork(r: ConfigReader, value: unknown, role: "hub" | "spoke" | undefined): NetworkConfig | undefined {
    const n = readSection(r, "network", NETWORK_FIELDS, value);
    if (!n) return undefined;
    const { raw, canaryTargets, ...rest } = n;
    const misplaced = (keys: readonly (keyof NetworkConfig)[], why: string) => keys.forEach((k) => r.problem(`network.${k}`, raw[k], why));
    if (role === "hub") {
        misplaced(
            (["hubReadCidrs", "hubReadFqdns"] as const).filter((k) => n[k].length > 0),
            "only applies to a spoke (the hub reads Mimir in-cluster)",
        );
    }
    if (!n.controllerDefaultDeny) {
        misplaced(
            (["canaryTargets", "metricsScrapeNamespaces"] as const).filter((k) => raw[k] !== undefined),
            "only applies with network.controllerDefaultDeny: true (without it nothing is denied)",
        );
    }
    return { ...rest, canaryTargets: canaryTargets.flatMap((t) => (t.namespace && t.port !== undefined ? [{ namespace: t.namespace, port: t.port }] : [])) };
}
