import type { ArgoRbacConfig } from "./config/section";

export { APPROVER_ROLLOUT_ACTIONS, ARGOCD_ROLLOUT_ACTIONS } from "./config/section";

/**
 * ArgoCD RBAC for Rollout actions (ADR-056 D3, regulated prod: deployer != approver, ADR-049). The
 * controller chart's aggregate roles are off, so Kubernetes RBAC does not let a namespace editor
 * promote; this closes the same door in ArgoCD's UI and CLI. argocd-rbac-cm merges every
 * `policy.<name>.csv` key below `policy.csv` (argo-cd util/rbac/rbac.go `PolicyCSV`): the program
 * writes its own key and never touches the platform's policy.
 */
export const ROLLOUT_ACTIONS_POLICY_KEY = "policy.argo-rollouts-addon.csv";

/**
 * What a deployer role must not do in a regulated project: each path creates, changes, replaces or
 * deletes a Rollout as ArgoCD's own identity, outside the approval gate (argo-cd v3.5.1
 * server/application/application.go): `create` an Application with an automated sync from any
 * revision; `update/*`, `delete/*` a resource (`getAppLiveResource`, fine-grained inheritance off
 * by default in ArgoCD 3; a deleted Rollout comes back through selfHeal promoted fully); `update`,
 * `delete` the Application; `sync` (a sync may ask for Replace=true with force, and a rollback is
 * a sync); `override` (a sync of local manifests). The deployers ship through git.
 */
export const REGULATED_DEPLOYER_DENIALS: readonly string[] = ["create", "update", "update/*", "delete", "delete/*", "sync", "override"];

/**
 * The same through ApplicationSets, whose RBAC object is `<template project>/<name>` (argo-cd v3.5.1
 * server/applicationset/applicationset.go): the ApplicationSet controller writes the Applications it
 * generates, as itself, for whoever wrote it.
 */
export const REGULATED_DEPLOYER_APPSET_DENIALS: readonly string[] = ["create", "update", "delete"];
/** The program's own ArgoCD role for the deployer groups: it only denies (never bound to a grant). */
export const DEPLOYER_DENY_ROLE = "role:argo-rollouts-addon-deployer";

/**
 * A field as Go's encoding/csv reads it back (argo-cd util/rbac/rbac.go `loadPolicyLine`): quoted
 * when it holds a comma, a quote, a blank or `#`, with quotes doubled.
 */
export function csvField(value: string): string {
    return /[",\s#]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * One line per action and project: `p, <subject>, applications, action/argoproj.io/Rollout/<action>,
 * <project>/*, allow|deny`. The approver is allowed; each deployer role is denied, and in ArgoCD a
 * deny wins over any allow, including a broad `action/*` the platform may grant elsewhere. Scoped to
 * named projects: no grant covers every project. Undefined when no approver is configured.
 */
export function rolloutActionsPolicyCsv(rbac: Readonly<ArgoRbacConfig>): string | undefined {
    if (rbac.approverRole === undefined || rbac.projects.length === 0) return undefined;
    const lines = ["# Rollout promotion and abort: the approver only (ADR-056 D3). Managed by argo-rollouts-addon."];
    const grant = (subject: string, effect: "allow" | "deny") => {
        for (const project of rbac.projects) {
            for (const action of rbac.actions) {
                lines.push(`p, ${subject}, applications, action/argoproj.io/Rollout/${action}, ${project}/*, ${effect}`);
            }
        }
    };
    // The deployer groups get a role of the program's that only denies, so binding them grants nothing.
    const deployers = [...rbac.deployerRoles, ...(rbac.deployerGroups.length > 0 ? [DEPLOYER_DENY_ROLE] : [])];
    grant(rbac.approverRole, "allow");
    for (const deployer of deployers) {
        grant(deployer, "deny");
    }
    if (rbac.regulatedProjects.length > 0) {
        lines.push("# Regulated projects: deployers create, change, replace or delete no Rollout through ArgoCD (ADR-056 D3).");
        for (const deployer of deployers) {
            for (const project of rbac.regulatedProjects) {
                for (const action of REGULATED_DEPLOYER_DENIALS) {
                    lines.push(`p, ${deployer}, applications, ${action}, ${project}/*, deny`);
                }
                for (const action of REGULATED_DEPLOYER_APPSET_DENIALS) {
                    lines.push(`p, ${deployer}, applicationsets, ${action}, ${project}/*, deny`);
                }
            }
        }
    }
    if (rbac.approverGroups.length + rbac.deployerGroups.length > 0) {
        lines.push("# The groups of argocd.rbac.approverGroups and deployerGroups.");
        lines.push(...rbac.approverGroups.map((g) => `g, ${csvField(g)}, ${rbac.approverRole}`));
        lines.push(...rbac.deployerGroups.map((g) => `g, ${csvField(g)}, ${DEPLOYER_DENY_ROLE}`));
    }
    return `${lines.join("\n")}\n`;
}
