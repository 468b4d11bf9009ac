import { readArgoCd } from "../argocd/config";
import { readGateway } from "../gateway/config";
import { readPolicy } from "../policy/config";
import { readDelivery } from "./delivery";
import { readMetrics } from "./metrics";
import { readController, readImages, readPlugin } from "../rollouts/config";
import { ConfigError, ConfigReader, DNS_LABEL, MIMIR_TENANT_RULE, Plain, isPlainObject } from "./reader";
import { AddonConfig, ClusterConfig, ClusterConnection, PROJECT } from "./types";

/** Every default of the section, in one place; the README's config reference follows it. */
export const DEFAULTS = {
    cluster: {
        // Adopting is one deliberate run (README, "Adopting an existing install"), never the default.
        adoptExisting: false,
    },
} as const;

/** The keys a stack may set under the `argo-rollouts-addon:` namespace. */
export const TOP_LEVEL_KEYS = [
    "cluster",
    "gateway",
    "imageRegistry",
    "controller",
    "plugin",
    "mimir",
    "spokes",
    "analysis",
    "network",
    "errorBudget",
    "notifications",
    "notificationsToken",
    "smokeTest",
    "policy",
    "argocd",
] as const;

const CLUSTER_KEYS = ["name", "role", "mimirTenant", "eksClusterName", "region", "kubeconfigContext", "kubeconfigPath", "adoptExisting"];
const AWS_REGION = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$/;
const EKS_NAME = /^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/;

/**
 * Builds the stack's typed configuration from the raw values under the project namespace, or
 * throws one ConfigError listing every problem. `raw` maps keys without the namespace to values
 * as parsed from the stack file; `ambient` carries other namespaces' keys the program honours
 * (only `aws:region`).
 */
export function parseAddonConfig(stack: string, raw: Plain, ambient: { awsRegion?: string; secretKeys?: readonly string[] } = {}): AddonConfig {
    const r = new ConfigReader();
    const secretKeys = ambient.secretKeys ?? [];
    for (const key of Object.keys(raw)) {
        if (!(TOP_LEVEL_KEYS as readonly string[]).includes(key)) {
            r.problem(key, secretKeys.includes(key) ? "[not shown]" : raw[key], `unknown key; the ${PROJECT} namespace takes ${TOP_LEVEL_KEYS.join(", ")}`);
        }
    }

    const cluster = readCluster(r, raw.cluster, ambient);
    const gateway = readGateway(r, raw.gateway);
    const images = readImages(r, raw.imageRegistry);
    const controller = readController(r, raw.controller);
    const plugin = readPlugin(r, raw.plugin);
    const rawCluster = isPlainObject(raw.cluster) ? raw.cluster : {};
    const metrics = readMetrics(
        r,
        raw,
        {
            role: cluster?.role ?? (rawCluster.role === "hub" || rawCluster.role === "spoke" ? rawCluster.role : undefined),
            mimirTenant: cluster?.mimirTenant ?? (typeof rawCluster.mimirTenant === "string" ? rawCluster.mimirTenant : undefined),
        },
        gateway,
    );
    const delivery = readDelivery(r, raw, secretKeys);
    const policy = readPolicy(r, raw.policy);
    const argocd = readArgoCd(r, raw.argocd, cluster?.name);

    if (r.problems.length > 0 || !cluster || !gateway || !controller || !plugin || !metrics || !delivery || !policy || !argocd) {
        throw new ConfigError(stack, PROJECT, r.problems);
    }
    return { stack, cluster, gateway, images, controller, plugin, metrics, delivery, policy, argocd };
}

function readCluster(r: ConfigReader, value: unknown, ambient: { awsRegion?: string }): ClusterConfig | undefined {
    if (value === undefined) {
        r.problem("cluster", value, "is required: an object with name, role, mimirTenant and eksClusterName or kubeconfigContext");
        return undefined;
    }
    const c = r.object("cluster", value, CLUSTER_KEYS);
    if (!c) {
        return undefined;
    }
    const name = r.requiredString("cluster.name", c.name, { pattern: DNS_LABEL, describe: "a DNS label (lowercase letters, digits, '-')", maxLength: 63 });
    const role = r.requiredString("cluster.role", c.role, { oneOf: ["hub", "spoke"], describe: "hub or spoke" }) as ClusterConfig["role"] | undefined;
    const mimirTenant = r.requiredString("cluster.mimirTenant", c.mimirTenant, MIMIR_TENANT_RULE);

    let connection: ClusterConnection | undefined;
    const hasEks = c.eksClusterName !== undefined;
    const hasKubeconfig = c.kubeconfigContext !== undefined;
    if (hasEks === hasKubeconfig) {
        r.problem(
            "cluster",
            { eksClusterName: c.eksClusterName, kubeconfigContext: c.kubeconfigContext },
            "set exactly one of cluster.eksClusterName (EKS, token through the aws CLI) or cluster.kubeconfigContext",
        );
    } else if (hasEks) {
        const clusterName = r.string("cluster.eksClusterName", c.eksClusterName, { pattern: EKS_NAME, describe: "an EKS cluster name (1-100 letters, digits, '-', '_')" });
        const region = r.string("cluster.region", c.region ?? ambient.awsRegion, { pattern: AWS_REGION, describe: "an AWS region such as eu-west-1" });
        if (region === undefined && c.region === undefined && ambient.awsRegion === undefined) {
            r.problem("cluster.region", undefined, "is required with cluster.eksClusterName (or set aws:region)");
        }
        if (c.kubeconfigPath !== undefined) {
            r.problem("cluster.kubeconfigPath", c.kubeconfigPath, "only applies with cluster.kubeconfigContext");
        }
        if (clusterName && region) {
            connection = { kind: "eks", clusterName, region };
        }
    } else {
        const context = r.string("cluster.kubeconfigContext", c.kubeconfigContext, { pattern: /^\S+$/, describe: "a kubeconfig context name" });
        const path = r.string("cluster.kubeconfigPath", c.kubeconfigPath, { pattern: /^\S+$/, describe: "a path to a kubeconfig file" });
        if (c.region !== undefined) {
            r.problem("cluster.region", c.region, "only applies with cluster.eksClusterName");
        }
        if (context) {
            connection = { kind: "kubeconfig", context, ...(path ? { path } : {}) };
        }
    }
    const adoptExisting = r.boolean("cluster.adoptExisting", c.adoptExisting, DEFAULTS.cluster.adoptExisting);
    if (!name || !role || !mimirTenant || !connection) {
        return undefined;
    }
    return { name, role, mimirTenant, connection, adoptExisting };
}

