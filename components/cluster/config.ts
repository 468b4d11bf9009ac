import { ConfigReader, DNS_LABEL, MIMIR_TENANT_RULE } from "../config/reader";
import type { MimirRole } from "../mimir";

/**
 * The cluster section, `cluster`: which cluster this stack manages, its role in the Mimir
 * topology (ADR-056 D5), its Mimir tenant, how the program reaches its API server, and whether
 * this run adopts an existing install. Its types, defaults and reader.
 */

/** How the program reaches the cluster's API server. */
export type ClusterConnection =
    | { kind: "eks"; clusterName: string; region: string }
    | { kind: "kubeconfig"; context: string; path?: string };

export interface ClusterConfig {
    /** The cluster's name in the platform; also the provider's `clusterIdentifier`. */
    name: string;
    role: MimirRole;
    /** This cluster's Mimir tenant (`X-Scope-OrgID`); its metric gates read only this tenant. */
    mimirTenant: string;
    connection: ClusterConnection;
    /**
     * The one run that takes over objects another tool created (ADR-056 as-built: hub and preprod
     * already run Argo Rollouts): the provider updates an existing object on create instead of
     * failing with AlreadyExists, and takes its fields over from the previous field manager.
     */
    adoptExisting: boolean;
    /**
     * With adoptExisting: accept a running controller newer than `controller.appVersion`. The
     * adopting run previews every object as a create, so a downgrade would not show; it is refused
     * unless this is set for that run.
     */
    allowDowngrade: boolean;
}

/** Every default of the section, in one place; the README's config reference follows it. */
export const CLUSTER_DEFAULTS = {
    // Adopting is one deliberate run (docs/operations/adopt.md), never the default.
    adoptExisting: false,
    // A downgrade is a decision someone takes after reading release notes, never a default.
    allowDowngrade: false,
} as const;

const CLUSTER_KEYS = ["name", "role", "mimirTenant", "eksClusterName", "region", "kubeconfigContext", "kubeconfigPath", "adoptExisting", "allowDowngrade"];
const AWS_REGION = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$/;
const EKS_NAME = /^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/;

export function readCluster(r: ConfigReader, value: unknown, ambient: { awsRegion?: string }): ClusterConfig | undefined {
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
    // `~` (null) is no value: `eksClusterName: ~` is as unset as a missing key.
    const hasEks = c.eksClusterName !== undefined && c.eksClusterName !== null;
    const hasKubeconfig = c.kubeconfigContext !== undefined && c.kubeconfigContext !== null;
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
    const adoptExisting = r.boolean("cluster.adoptExisting", c.adoptExisting, CLUSTER_DEFAULTS.adoptExisting);
    const allowDowngrade = r.boolean("cluster.allowDowngrade", c.allowDowngrade, CLUSTER_DEFAULTS.allowDowngrade);
    if (allowDowngrade && !adoptExisting) {
        r.problem("cluster.allowDowngrade", allowDowngrade, "only applies with cluster.adoptExisting: true (the adopting run is the one whose preview cannot show a downgrade)");
    }
    if (!name || !role || !mimirTenant || !connection) {
        return undefined;
    }
    return { name, role, mimirTenant, connection, adoptExisting, allowDowngrade };
}
