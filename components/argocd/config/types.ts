/**
 * The types of the `argocd` section, apart from its reader (section.ts) so the checks it runs
 * (preflight.ts, rbac.ts, syncOptions.ts) name them without importing the reader back. What each
 * key means is its declaration's doc (ARGOCD_FIELDS, rendered in docs/configuration.md).
 */
import type { GroupKind, IgnoreRule } from "../ignoreRules";
import type { ArgoObjectOwner } from "../ownership";

/** A tenant AppProject: patched (`addon`) or read and checked (`external`), see ownership.ts. */
export interface ArgoProjectConfig {
    name: string;
    owner: ArgoObjectOwner;
    namespaceResources: GroupKind[];
}

/** A tenant ApplicationSet: patched (`addon`) or read and checked (`external`). */
export interface TenantApplicationSetConfig {
    name: string;
    owner: ArgoObjectOwner;
    syncOptions: string[];
    ignoreDifferences: IgnoreRule[];
}

/** `argocd.rbac`; unset `approverRole` writes no policy. */
export interface ArgoRbacConfig {
    approverRole?: string;
    deployerRoles: string[];
    projects: string[];
    actions: string[];
    regulatedProjects: string[];
    approverGroups: string[];
    deployerGroups: string[];
}

/** The argocd-apps stage's settings; `local`: `runsOn` is this stack's cluster, the only one where a stack touches ArgoCD's objects. */
export interface ArgoCdConfig {
    runsOn: string;
    local: boolean;
    namespace: string;
    projects: ArgoProjectConfig[];
    applicationSets: TenantApplicationSetConfig[];
    /** System-level rules written to argocd-cm. */
    ignoreDifferences: IgnoreRule[];
    allKinds: GroupKind[];
    rbac: ArgoRbacConfig;
}

/** What the stack's `policy.regulated` says about the groups and ArgoCD's API server identity (actionServiceAccounts). */
export interface RegulatedGroups {
    approverGroups: readonly string[];
    deployerGroups: readonly string[];
    actionServiceAccounts: readonly { namespace: string; name: string }[];
}
