import type { ArgoRbacConfig } from "./config/types";
import { loadArgoRbac } from "./enforcer";

/**
 * ArgoCD RBAC for Rollout actions (ADR-056 D3, regulated prod: deployer != approver, ADR-049).
 * The controller chart's aggregate roles are off (rollouts stage), so Kubernetes RBAC does not let
 * a namespace editor promote; this closes the same door in ArgoCD's UI and CLI.
 */

/**
 * argocd-rbac-cm merges every `policy.<name>.csv` key below `policy.csv` (argo-cd docs,
 * argocd-rbac-cm.yaml): the program writes its own key and never touches the platform's policy.
 */
export const ROLLOUT_ACTIONS_POLICY_KEY = "policy.argo-rollouts-addon.csv";

/**
 * ArgoCD's built-in Rollout actions, one folder each under argo-cd
 * `resource_customizations/argoproj.io/Rollout/actions/`: abort, promote-full, restart, resume and
 * retry in every 3.x release; pause and skip-current-step since v3.1.0. There is no `promote`: an
 * RBAC line naming an action ArgoCD does not have allows and denies nothing, silently.
 */
export const ARGOCD_ROLLOUT_ACTIONS: readonly string[] = ["abort", "pause", "promote-full", "restart", "resume", "retry", "skip-current-step"];

/** The actions ArgoCD 3.0 does not offer yet (added in v3.1.0). */
export const ROLLOUT_ACTIONS_SINCE_3_1: readonly string[] = ["pause", "skip-current-step"];

/**
 * The actions that move a rollout past a gate or stop it, reserved to the approver by default
 * (ADR-056 D3): `resume` clears a pause (the regulated manual gate is a `pause: {}` step, resume.lua),
 * `promote-full` skips every remaining step and analysis, `skip-current-step` skips one, `abort`
 * rolls back. `retry`, `pause` and `restart` pass no gate and stay with the deployers.
 */
export const APPROVER_ROLLOUT_ACTIONS: readonly string[] = ["resume", "promote-full", "skip-current-step", "abort"];

/**
 * What a deployer role must not do in a regulated project, each an ArgoCD path that creates,
 * changes, replaces or deletes a Rollout as ArgoCD's own identity, outside the approval gate
 * (argo-cd v3.5.1 server/application/application.go):
 * - `create`: an Application of the project, with an automated sync from any revision; the
 *   application controller then applies it (`Create` asks `create` and the project's
 *   destinations only).
 * - `update/*`, `delete/*`: a resource patch or delete (`getAppLiveResource` asks
 *   `update/<group>/<kind>/<ns>/<name>` while fine-grained inheritance is off, ArgoCD 3's default);
 *   a deleted Rollout comes back through selfHeal and is promoted fully as an initial deploy.
 * - `update`, `delete`: the Application itself (its source revision and sync options, or a
 *   cascading delete).
 * - `sync`: a sync may ask for `Replace=true` with force, which deletes and recreates (`Sync` checks
 *   `sync` alone; gitops-engine sync_context.go), and a rollback is a sync.
 * - `override`: a sync of local manifests.
 * The deployers ship through git, and the automated sync needs no user.
 */
export const REGULATED_DEPLOYER_DENIALS: readonly string[] = ["create", "update", "update/*", "delete", "delete/*", "sync", "override"];

/**
 * The same through ApplicationSets, whose RBAC object is `<template project>/<name>` (argo-cd
 * v3.5.1 server/applicationset/applicationset.go `Create`, `updateAppSet`, `Delete`;
 * pkg/apis/application/v1alpha1/applicationset_types.go `RBACName`): the ApplicationSet controller
 * creates, updates and deletes the Applications it generates, as the controller, for whoever wrote it.
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
    if (rbac.approverRole === undefined || rbac.projects.length === 0) {
        return undefined;
    }
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

/** What an AppProject's live spec says about its roles (`spec.roles`). */
export interface LiveProjectRoles {
    name: string;
    roles?: { name?: string; policies?: string[]; groups?: string[] }[];
}

/** argo-cd v3.5.1 util/settings/settings.go: the argocd-cm key, read with strconv.ParseBool, "" meaning true. */
export const FINE_GRAINED_INHERITANCE_KEY = "server.rbac.disableApplicationFineGrainedRBACInheritance";
const GO_TRUE = ["1", "t", "T", "TRUE", "true", "True"];
const GO_FALSE = ["0", "f", "F", "FALSE", "false", "False"];

/** A synthetic Application and Rollout for the questions: a grant scoped to fewer names is not seen. */
const ANY_APP = "any-application";
const ANY_ROLLOUT = "regulated-namespace/any-rollout";

/**
 * What ArgoCD must refuse a deployer in a regulated project, as enforcer questions: the approval
 * actions, every path of REGULATED_DEPLOYER_DENIALS (per Rollout for the resource paths) and of
 * REGULATED_DEPLOYER_APPSET_DENIALS.
 */
export function regulatedQuestions(rbac: Pick<ArgoRbacConfig, "actions">): { resource: "applications" | "applicationsets"; action: string }[] {
    return [
        ...rbac.actions.map((a) => ({ resource: "applications" as const, action: `action/argoproj.io/Rollout/${a}` })),
        ...REGULATED_DEPLOYER_DENIALS.map((a) => ({ resource: "applications" as const, action: a.replace(/\/\*$/, `/argoproj.io/Rollout/${ANY_ROLLOUT}`) })),
        ...REGULATED_DEPLOYER_APPSET_DENIALS.map((action) => ({ resource: "applicationsets" as const, action })),
    ];
}

/** The object a question about any Application (or ApplicationSet) of `project` names. */
export const anyObjectOf = (project: string): string => `${project}/${ANY_APP}`;

/**
 * What ArgoCD would let the configured groups do in the regulated projects, asked of ArgoCD's
 * enforcer as restated in enforcer.ts: deployers may not run an approval action or update,
 * delete, sync or override (the paths that change, replace or delete a Rollout as ArgoCD's own
 * identity, REGULATED_DEPLOYER_DENIALS, also per Rollout); approvers must be able to run the
 * approval actions. `apps`: the live Applications of those projects, asked about by name too.
 * Returns one line per problem, empty when the gate holds.
 */
export function regulatedRbacProblems(
    rbac: Readonly<ArgoRbacConfig>,
    live: {
        rbacCm?: Record<string, string>;
        argocdCm?: Record<string, string>;
        projects: readonly LiveProjectRoles[];
        apps: readonly { project: string; name: string }[];
    },
): string[] {
    const out: string[] = [];
    if (live.rbacCm === undefined) {
        return ["argocd-rbac-cm not found: ArgoCD grants only its built-in roles and policy.default"];
    }
    const inheritance = live.argocdCm?.[FINE_GRAINED_INHERITANCE_KEY] ?? "";
    if (GO_FALSE.includes(inheritance)) {
        out.push(
            `argocd-cm ${FINE_GRAINED_INHERITANCE_KEY} is "${inheritance}": an update or delete grant on an Application then patches or deletes its Rollouts, and a deny on update/* cannot take it back (argo-cd server/application/application.go getAppLiveResource); remove the key (ArgoCD 3 defaults to true)`,
        );
    } else if (inheritance !== "" && !GO_TRUE.includes(inheritance)) {
        out.push(
            `argocd-cm ${FINE_GRAINED_INHERITANCE_KEY} is "${inheritance}", which ArgoCD cannot parse as a boolean: every resource patch and delete fails; set "true" or remove the key`,
        );
    }
    const projects = live.projects.map((p) => ({
        name: p.name,
        roles: (p.roles ?? []).map((r) => ({ name: r.name ?? "", policies: r.policies ?? [], groups: r.groups ?? [] })),
    }));
    const enforcer = loadArgoRbac(live.rbacCm, projects);
    if (enforcer.error !== undefined) {
        return [...out, `argocd-rbac-cm does not load in ArgoCD (${enforcer.error}): ArgoCD denies every request, approvers included`];
    }
    const approvalActions = rbac.actions.map((a) => `action/argoproj.io/Rollout/${a}`);
    const deployerQuestions = regulatedQuestions(rbac);
    for (const project of rbac.regulatedProjects) {
        const objects = [`${project}/${ANY_APP}`, ...live.apps.filter((a) => a.project === project).map((a) => `${project}/${a.name}`)];
        for (const group of rbac.deployerGroups) {
            for (const { resource, action } of deployerQuestions) {
                const allowed = objects.filter((object) => enforcer.enforce({ groups: [group] }, { resource, action, object }));
                if (allowed.length > 0) {
                    out.push(
                        `deployer group ${group} may ${action} ${resource} on ${allowed.join(", ")}: deny it (argocd.rbac.deployerRoles deny it for the roles named there; a grant through policy.default or another role of the group is not taken back by a deny)`,
                    );
                }
            }
        }
        for (const group of rbac.approverGroups) {
            const refused = approvalActions.filter(
                (action) => !enforcer.enforce({ groups: [group] }, { resource: "applications", action, object: `${project}/${ANY_APP}` }),
            );
            if (refused.length > 0) {
                out.push(
                    `approver group ${group} cannot ${refused.join(", ")} in project ${project}: bind it to the approver role (g, ${group}, ${rbac.approverRole ?? "<argocd.rbac.approverRole>"})`,
                );
            }
        }
    }
    return out;
}
