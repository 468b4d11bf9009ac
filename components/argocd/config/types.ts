/**
 * The types of the `argocd` section (config/section.ts reads it): apart, so the checks the reader
 * runs (preflight.ts, rbac.ts, syncOptions.ts) name them without importing the reader back.
 */
import type { GroupKind, IgnoreRule } from "../ignoreRules";
import type { ArgoObjectOwner } from "../ownership";

/** A tenant AppProject: patched (`addon`) or read and checked (`external`), see ownership.ts. */
export interface ArgoProjectConfig {
    name: string;
    owner: ArgoObjectOwner;
    /** `addon` only: every other namespaced kind the project's Applications sync; the Rollout kinds are added. */
    namespaceResources: GroupKind[];
}

/** A tenant ApplicationSet: patched (`addon`) or read and checked (`external`), see ownership.ts. */
export interface TenantApplicationSetConfig {
    name: string;
    owner: ArgoObjectOwner;
    /** `addon` only: further sync options kept beside the program's own. */
    syncOptions: string[];
    /** `addon` only: further Application-level ignore rules kept beside the program's own. */
    ignoreDifferences: IgnoreRule[];
}

export interface ArgoRbacConfig {
    /** The ArgoCD role allowed to promote or abort a Rollout; unset writes no policy. */
    approverRole?: string;
    /** Roles explicitly denied those actions (deny wins in ArgoCD's RBAC). */
    deployerRoles: string[];
    /** Projects the grants are scoped to (`<project>/*`). */
    projects: string[];
    /** ArgoCD's built-in Rollout actions reserved to the approver. */
    actions: string[];
    /**
     * Projects whose Applications sync regulated namespaces (ADR-056 D3): there the deployer roles
     * are also denied every ArgoCD path that changes, replaces or deletes a Rollout as ArgoCD's own
     * identity (`regulatedDeployerDenials`).
     */
    regulatedProjects: string[];
    /** SSO groups verify asks ArgoCD's enforcer about: they must be able to run the approval actions. */
    approverGroups: string[];
    /** SSO groups verify asks ArgoCD's enforcer about: they must be refused every regulated path. */
    deployerGroups: string[];
}

/** The argocd-apps stage's settings. */
export interface ArgoCdConfig {
    /**
     * The cluster whose ArgoCD syncs this cluster's tenant Applications: this one (each cluster runs
     * its own), or another (a hub's ArgoCD syncing its spokes). Only where ArgoCD runs does a stack
     * touch ArgoCD's objects; the stack of that cluster lists them for every cluster it syncs.
     */
    runsOn: string;
    /** `runsOn` is this stack's cluster. */
    local: boolean;
    namespace: string;
    projects: ArgoProjectConfig[];
    applicationSets: TenantApplicationSetConfig[];
    /** System-level rules written to argocd-cm. */
    ignoreDifferences: IgnoreRule[];
    /** The kinds a rule for all kinds is written for. */
    allKinds: GroupKind[];
    rbac: ArgoRbacConfig;
}

/** What the stack's `policy.regulated` says about the groups and ArgoCD's identities, for the ArgoCD RBAC it needs. */
export interface RegulatedGroups {
    approverGroups: readonly string[];
    deployerGroups: readonly string[];
    /** ArgoCD's API server as the approval guard names it (policy.regulated.actionServiceAccounts). */
    actionServiceAccounts: readonly { namespace: string; name: string }[];
}
