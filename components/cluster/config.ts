import { field, readSection, type Values } from "../config/declare";
import { ConfigReader, DNS_LABEL, MIMIR_TENANT_RULE, show } from "../config/reader";

/** The `cluster` section (ADR-056 D5: the cluster's role and tenant; how the program reaches it; adoption). */

/** How the program reaches the cluster's API server. */
export type ClusterConnection = { kind: "eks"; clusterName: string; region: string } | { kind: "kubeconfig"; context: string; path?: string };

/** A Kubernetes version as Helm's --kube-version takes it: vMAJOR.MINOR or vMAJOR.MINOR.PATCH. */
export const KUBERNETES_VERSION = /^v[0-9]{1,3}\.[0-9]{1,3}(\.[0-9]{1,3})?$/;

/** The spoke waves the deploy pipeline runs one after another (one job each in .github/workflows/deploy.yml). */
export const DEPLOY_WAVES = 4;

const AWS_REGION = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$/;
const EKS_NAME = /^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/;
const NON_BLANK = /^\S+$/;

/** The `cluster` section: every key, once. */
export const CLUSTER_FIELDS = {
    name: field.string({
        rule: { pattern: DNS_LABEL, describe: "a DNS label (lowercase letters, digits, '-')", maxLength: 63 },
        required: true,
        doc: "the cluster's platform name, also the provider's clusterIdentifier; one stack file per cluster in the project",
    }),
    role: field.oneOf(["hub", "spoke"], {
        required: true,
        describe: "hub or spoke",
        doc: "hub (runs Mimir; its gates read it in-cluster) or spoke (reads its metrics back through the hub)",
    }),
    // Every hub deploys before any spoke; the spokes go in waves (tools/deployOrder.ts), as many as
    // the deploy pipeline has wave jobs (.github/workflows/deploy.yml).
    wave: field.integer({
        min: 1,
        max: DEPLOY_WAVES,
        default: 1,
        when: (c) => c.role === "spoke",
        doc: `spoke only: the deploy wave, 1 to ${DEPLOY_WAVES}; a wave starts once every hub and every earlier wave deployed and verified, and a failed wave stops the later ones`,
    }),
    mimirTenant: field.string({
        rule: MIMIR_TENANT_RULE,
        required: true,
        doc: "this cluster's Mimir tenant (X-Scope-OrgID); its metric gates read only this tenant; no other cluster of the project's stack files shares it, and a hub listing this cluster gives it the same",
    }),
    oidcGroupsPrefix: field.string({
        rule: { pattern: NON_BLANK, describe: "a prefix such as oidc: (no blanks)" },
        doc: "the prefix the API server gives the groups of OIDC tokens (kube-apiserver --oidc-groups-prefix, an EKS OIDC provider's groupsPrefix): ArgoCD sees the groups claim without it, so argocd.rbac's groups are policy.regulated's without it",
    }),
    eksClusterName: field.string({
        rule: { pattern: EKS_NAME, describe: "an EKS cluster name (1-100 letters, digits, '-', '_')" },
        doc: "EKS cluster to connect to, token through the aws CLI (exactly one of this and kubeconfigContext)",
    }),
    region: field.string({
        rule: { pattern: AWS_REGION, describe: "an AWS region such as eu-west-1" },
        readBySection: true,
        defaultDoc: "aws:region",
        doc: "AWS region of the EKS cluster; with eksClusterName only",
    }),
    kubeconfigContext: field.string({
        rule: { pattern: NON_BLANK, describe: "a kubeconfig context name" },
        doc: "kubeconfig context to connect with (exactly one of this and eksClusterName)",
    }),
    kubeconfigPath: field.string({
        rule: { pattern: NON_BLANK, describe: "a path to a kubeconfig file" },
        defaultDoc: "the kubeconfig default",
        doc: "kubeconfig file; with kubeconfigContext only",
    }),
    // Adopting is one deliberate run (docs/operations/adopt.md), never the default.
    adoptExisting: field.boolean({
        default: false,
        doc: "true for the one run that takes over objects another tool created (the adoption runbook); false again right after",
    }),
    // A downgrade is a decision someone takes after reading release notes, never a default.
    allowDowngrade: field.boolean({
        default: false,
        doc: "only with adoptExisting: let the adopting run move a running controller newer than controller.appVersion back (refused otherwise)",
    }),
    kubernetesVersion: field.string({
        rule: { pattern: KUBERNETES_VERSION, describe: "a Kubernetes version such as v1.33 or v1.33.4" },
        defaultDoc: "none (the plan does not show the chart's objects)",
        doc: "the cluster's Kubernetes version; the offline plan renders the chart for it (the provider renders it for the version the API server reports); read by the plan only",
    }),
} as const;

/** The section as read; `connection`: how the program reaches the cluster's API server. */
export type ClusterConfig = Omit<
    Values<typeof CLUSTER_FIELDS, "name" | "role" | "mimirTenant">,
    "eksClusterName" | "region" | "kubeconfigContext" | "kubeconfigPath" | "wave"
> & {
    connection: ClusterConnection;
};

export function readCluster(r: ConfigReader, value: unknown, ambient: { awsRegion?: string }): ClusterConfig | undefined {
    if (value === undefined) {
        r.problem("cluster", value, "is required: an object with name, role, mimirTenant and eksClusterName or kubeconfigContext");
        return undefined;
    }
    const section = readSection(r, "cluster", CLUSTER_FIELDS, value);
    if (!section) return undefined;
    const { name, role, mimirTenant, eksClusterName, kubeconfigContext, kubeconfigPath, adoptExisting, allowDowngrade, kubernetesVersion, raw: c } = section;
    let connection: ClusterConnection | undefined;
    // `~` (null) is no value: `eksClusterName: ~` is as unset as a missing key.
    const hasEks = c.eksClusterName != null;
    if (hasEks === (c.kubeconfigContext != null)) {
        r.problem(
            "cluster",
            { eksClusterName: c.eksClusterName, kubeconfigContext: c.kubeconfigContext },
            "set exactly one of cluster.eksClusterName (EKS, token through the aws CLI) or cluster.kubeconfigContext",
        );
    } else if (hasEks) {
        // Unset here, the region is aws:region's: a bad one is reported under the key the user set.
        const aws = c.region == null ? ambient.awsRegion : undefined;
        const rule = CLUSTER_FIELDS.region.rule;
        const region = aws === undefined ? r.string("cluster.region", c.region, rule) : AWS_REGION.test(aws) ? aws : undefined;
        if (aws !== undefined && !region) {
            const allowed = `must be ${rule.describe} (cluster.region is not set, so the EKS cluster's region is read from aws:region)`;
            r.problems.push({ key: "aws:region", given: show(aws), allowed, qualified: true });
        } else if (c.region == null && aws === undefined) {
            r.problem("cluster.region", undefined, "is required with cluster.eksClusterName (or set aws:region)");
        }
        if (c.kubeconfigPath !== undefined) r.problem("cluster.kubeconfigPath", c.kubeconfigPath, "only applies with cluster.kubeconfigContext");
        connection = eksClusterName && region ? { kind: "eks", clusterName: eksClusterName, region } : undefined;
    } else {
        if (c.region !== undefined) r.problem("cluster.region", c.region, "only applies with cluster.eksClusterName");
        connection = kubeconfigContext ? { kind: "kubeconfig", context: kubeconfigContext, ...(kubeconfigPath ? { path: kubeconfigPath } : {}) } : undefined;
    }
    if (role === "hub" && c.wave != null) r.problem("cluster.wave", c.wave, "only applies to a spoke: every hub deploys before any spoke");
    if (allowDowngrade && !adoptExisting) {
        r.problem(
            "cluster.allowDowngrade",
            allowDowngrade,
            "only applies with cluster.adoptExisting: true (the adopting run is the one whose preview cannot show a downgrade)",
        );
    }
    if (!name || !role || !mimirTenant || !connection) return undefined;
    return { name, role, mimirTenant, connection, adoptExisting, allowDowngrade, ...(kubernetesVersion ? { kubernetesVersion } : {}) };
}
