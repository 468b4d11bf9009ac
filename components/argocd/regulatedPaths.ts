import type { ArgoRbacConfig } from "./config/types";
import { globRegExp, loadArgoRbac } from "./enforcer";
import { anyObjectOf, regulatedQuestions } from "./rbac";

/**
 * The paths around regulated prod's approval (ADR-056 D3, ADR-049) that run through ArgoCD's own
 * objects rather than a request a user makes, as verify finds them on a live ArgoCD: another
 * AppProject whose destinations reach a regulated namespace, a role or token of a regulated project
 * that may sync, change or approve, an Application that asks its sync to replace or force, and
 * Applications created outside ArgoCD's namespace; and who ArgoCD acts as on a regulated
 * namespace (sync impersonation), which the approval guard must name. Each restates the ArgoCD
 * code it cites (argo-cd v3.5.1).
 */

/** An AppProject destination (pkg/apis/application/v1alpha1 `ApplicationDestination`). */
export interface ArgoDestination {
    server?: string;
    name?: string;
    namespace?: string;
}

/** What verify reads of a live AppProject. */
export interface LiveProject {
    name: string;
    destinations: ArgoDestination[];
    sourceNamespaces: string[];
    destinationServiceAccounts: { server?: string; namespace?: string; defaultServiceAccount?: string }[];
    roles: { name: string; policies: string[]; groups: string[]; tokens: string[] }[];
}

/** The cluster ArgoCD runs in, as it names it (pkg/apis/application/v1alpha1/application_defaults.go). */
export const IN_CLUSTER = { server: "https://kubernetes.default.svc", name: "in-cluster" } as const;

/** util/glob `Match`: gobwas/glob without separators; a pattern that does not compile matches nothing. */
const globMatches = (pattern: string, value: string): boolean => globRegExp(pattern)?.test(value) ?? false;

/** app_project_types.go `globMatch` with negation allowed: `!pattern` matches what `pattern` does not. */
function destinationGlob(pattern: string, value: string): boolean {
    if (pattern.startsWith("!")) {
        return !globMatches(pattern.slice(1), value);
    }
    return pattern === "*" || globMatches(pattern, value);
}

const isDeny = (pattern: string | undefined): boolean => (pattern ?? "").startsWith("!");

/**
 * Whether a project's destinations permit a destination (app_project_types.go
 * `isDestinationMatched`): a destination matches by server or by name, and by namespace; a
 * negated server, name or namespace that does not match refuses it outright. Go's `&&` binds
 * before `||`, as in the second case here. `permitOnlyProjectScopedClusters` is not read: it needs
 * the cluster Secrets, which verify does not read, so a destination it would refuse still counts.
 */
export function destinationPermitted(destinations: readonly ArgoDestination[], dst: { server: string; name: string; namespace: string }): boolean {
    let any = false;
    for (const item of destinations) {
        const nameMatched = dst.name !== "" && destinationGlob(item.name ?? "", dst.name);
        const serverMatched = dst.server !== "" && destinationGlob(item.server ?? "", dst.server);
        const namespaceMatched = destinationGlob(item.namespace ?? "", dst.namespace);
        if ((serverMatched || nameMatched) && namespaceMatched) {
            any = true;
        } else if ((!nameMatched && isDeny(item.name)) || (!serverMatched && isDeny(item.server) && namespaceMatched)) {
            return false;
        } else if (!namespaceMatched && isDeny(item.namespace) && serverMatched) {
            return false;
        }
    }
    return any;
}

/** A destination that is regulated: this cluster's regulated namespaces, or a regulated project's own concrete destinations. */
export interface RegulatedTarget {
    server: string;
    name: string;
    namespace: string;
    /** Why it is regulated, for the finding. */
    why: string;
}

const GLOB = /[*?[\]{}!\\]/;

/**
 * The destinations an Application must not reach from outside the regulated projects: each
 * regulated namespace of this cluster as ArgoCD names this cluster, and each destination of a
 * regulated project that names one namespace (no pattern), on whichever cluster it names (a hub's
 * ArgoCD syncing a spoke's regulated namespaces).
 */
export function regulatedTargets(regulatedNamespaces: readonly string[], regulatedProjects: readonly LiveProject[]): RegulatedTarget[] {
    const out: RegulatedTarget[] = regulatedNamespaces.map((namespace) => ({
        ...IN_CLUSTER,
        namespace,
        why: "a regulated namespace of this cluster (policy.regulated.namespaceLabels)",
    }));
    for (const p of regulatedProjects) {
        for (const d of p.destinations) {
            const namespace = d.namespace ?? "";
            const cluster = d.server || d.name || "";
            if (namespace === "" || GLOB.test(namespace) || cluster === "" || GLOB.test(cluster)) {
                continue;
            }
            if (!out.some((t) => t.namespace === namespace && ((d.server && t.server === d.server) || (d.name && t.name === d.name)))) {
                out.push({ server: d.server ?? "", name: d.name ?? "", namespace, why: `a destination of regulated project ${p.name}` });
            }
        }
    }
    return out;
}

const describeTarget = (t: RegulatedTarget): string => `namespace ${t.namespace} on ${t.server || t.name}`;

/**
 * What reaches a regulated destination through ArgoCD without the regulated projects' RBAC (the
 * program's deployer denials are scoped to `argocd.rbac.regulatedProjects`, the approval guard to
 * namespaces): another project whose destinations permit one; a regulated project that takes
 * Applications from other namespaces (`sourceNamespaces`: there Kubernetes RBAC, not ArgoCD's,
 * decides who creates one, argo-cd docs "Applications in any namespace"); a role of a regulated
 * project, and its tokens, that may sync, change, delete or approve (a project token is judged by
 * its project's roles alone, server/rbacpolicy/rbacpolicy.go `enforceProjectToken`, so the
 * program's denials never reach it); an Application of a regulated project whose sync options ask
 * for Replace=true or Force=true (gitops-engine sync_context.go `applyObject`: the whole sync
 * replaces or forces, and the approval guard sees only a prune and a create of the sync identity).
 * One line per problem.
 */
export function regulatedProjectProblems(
    rbac: Readonly<Pick<ArgoRbacConfig, "regulatedProjects" | "actions">>,
    live: {
        projects: readonly LiveProject[];
        targets: readonly RegulatedTarget[];
        rbacCm?: Record<string, string>;
        apps: readonly { project: string; name: string; syncOptions: string[] }[];
        allowReplaceOrForceSync: boolean;
    },
): { object: string; found: string }[] {
    const out: { object: string; found: string }[] = [];
    const regulated = new Set(rbac.regulatedProjects);
    for (const p of live.projects.filter((x) => !regulated.has(x.name))) {
        const reached = live.targets.filter((t) => destinationPermitted(p.destinations, t));
        if (reached.length > 0) {
            out.push({
                object: `AppProject ${p.name}`,
                found: `is not among argocd.rbac.regulatedProjects, yet its destinations reach ${reached.map((t) => `${describeTarget(t)} (${t.why})`).join(", ")}: an Application of this project syncs there without the deployer denials; narrow its destinations (a "!<namespace>" entry refuses one) or list it in argocd.rbac.regulatedProjects`,
            });
        }
    }
    const enforcer =
        live.rbacCm === undefined
            ? undefined
            : loadArgoRbac(
                  live.rbacCm,
                  live.projects.map((p) => ({ name: p.name, roles: p.roles })),
              );
    const questions = regulatedQuestions(rbac);
    for (const p of live.projects.filter((x) => regulated.has(x.name))) {
        if (p.sourceNamespaces.length > 0) {
            out.push({
                object: `AppProject ${p.name}`,
                found: `takes Applications from namespaces ${p.sourceNamespaces.join(", ")} (spec.sourceNamespaces): whoever Kubernetes RBAC lets create an Application there creates one of this regulated project, with any source and an automated sync, and ArgoCD's RBAC is never asked; remove spec.sourceNamespaces`,
            });
        }
        if (enforcer === undefined || enforcer.error !== undefined) {
            continue;
        }
        for (const role of p.roles) {
            const subject = `proj:${p.name}:${role.name}`;
            const granted = questions.filter((q) => enforcer.enforce({ user: subject, groups: [] }, { ...q, object: anyObjectOf(p.name) }));
            if (granted.length > 0) {
                const holders = [
                    role.tokens.length > 0 ? `tokens ${role.tokens.join(", ")}` : "no token yet",
                    role.groups.length > 0 ? `groups ${role.groups.join(", ")}` : "no group",
                ].join(", ");
                out.push({
                    object: `AppProject ${p.name} role ${role.name}`,
                    found: `(${holders}) may ${granted.map((q) => `${q.action} ${q.resource}`).join(", ")}: a project role's tokens and groups act through ArgoCD's own identities, and the program's deployer denials never reach a project token; in a regulated project ship through git and approve through argocd.rbac.approverRole, so remove these grants from the role`,
                });
            }
        }
    }
    if (!live.allowReplaceOrForceSync) {
        for (const app of live.apps.filter((a) => regulated.has(a.project))) {
            const asked = app.syncOptions.map((o) => o.trim()).filter((o) => o === "Replace=true" || o === "Force=true");
            if (asked.length > 0) {
                out.push({
                    object: `Application ${app.name}`,
                    found: `of regulated project ${app.project} syncs with ${asked.join(", ")} (spec.syncPolicy.syncOptions): a sync may delete and recreate its Rollouts, whose first version is promoted without the approval, and admission sees only the sync identity's delete and create; remove them (policy.regulated.allowReplaceOrForceSync allows it)`,
                });
            }
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Who ArgoCD acts as

/** util/settings/settings.go: argocd-cm keys of sync impersonation. */
export const IMPERSONATION_ENABLED_KEY = "application.sync.impersonation.enabled";
export const IMPERSONATION_ENFORCED_KEY = "application.sync.impersonation.enforced";

/** settings.go `IsImpersonationEnabled`: exactly "true". */
export const impersonationEnabled = (argocdCm: Readonly<Record<string, string>>): boolean => argocdCm[IMPERSONATION_ENABLED_KEY] === "true";
/** settings.go `IsImpersonationEnforced`: on unless the key is there and "false". */
export const impersonationEnforced = (argocdCm: Readonly<Record<string, string>>): boolean =>
    argocdCm[IMPERSONATION_ENFORCED_KEY] === undefined || argocdCm[IMPERSONATION_ENFORCED_KEY] !== "false";

/**
 * util/settings/impersonation.go `DeriveServiceAccountToImpersonate`: the first of the project's
 * `destinationServiceAccounts` whose server and namespace globs match the Application's destination
 * names the ServiceAccount, in the destination namespace unless it says `<namespace>:<name>`.
 * "" when none matches; an error for a pattern that does not compile or a name with `!*[]{}\/`.
 */
export function serviceAccountToImpersonate(
    project: Pick<LiveProject, "destinationServiceAccounts">,
    destination: { server: string; namespace: string },
): string | { error: string } {
    for (const item of project.destinationServiceAccounts) {
        const server = globRegExp(item.server ?? "");
        const namespace = globRegExp(item.namespace ?? "");
        if (server === undefined || namespace === undefined) {
            return { error: `destinationServiceAccounts has a pattern that does not compile (${item.server ?? ""}, ${item.namespace ?? ""})` };
        }
        if (server.test(destination.server) && namespace.test(destination.namespace)) {
            const sa = item.defaultServiceAccount ?? "";
            if (sa.trim() === "" || /[!*[\]{}\\/]/.test(sa)) {
                return { error: `default service account contains invalid chars '${sa}'` };
            }
            return sa.includes(":") ? `system:serviceaccount:${sa}` : `system:serviceaccount:${destination.namespace}:${sa}`;
        }
    }
    return "";
}

/** How ArgoCD reaches one regulated namespace of this cluster for one regulated project. */
export interface ArgoIdentity {
    project: string;
    namespace: string;
    /** The user its syncs arrive as; undefined when ArgoCD refuses to sync there. */
    sync?: string;
    /** The user its API server's resource patches, deletes and actions arrive as. */
    server?: string;
    /** Why ArgoCD will not act there, or why the identity is what it is. */
    note: string;
}

/**
 * Who ArgoCD acts as on each regulated namespace of this cluster that a regulated project may
 * target. Without sync impersonation the application controller syncs and the API server acts,
 * each as its own ServiceAccount (the cluster's in-cluster config). With it, both impersonate the
 * ServiceAccount the project derives for the destination (controller/sync.go and
 * server/application/application.go `getApplicationClusterConfig` call
 * `DeriveServiceAccountToImpersonate` alike); where none is derived, ArgoCD refuses to act while
 * impersonation is enforced, and falls back to its own identities otherwise.
 */
export function argoIdentities(
    argocdCm: Readonly<Record<string, string>>,
    projects: readonly LiveProject[],
    namespaces: readonly string[],
    own: { controller?: string; server?: string },
): ArgoIdentity[] {
    const out: ArgoIdentity[] = [];
    const impersonating = impersonationEnabled(argocdCm);
    for (const p of projects) {
        for (const namespace of namespaces.filter((ns) => destinationPermitted(p.destinations, { ...IN_CLUSTER, namespace: ns }))) {
            if (!impersonating) {
                out.push({
                    project: p.name,
                    namespace,
                    sync: own.controller,
                    server: own.server,
                    note: `sync impersonation is off (argocd-cm ${IMPERSONATION_ENABLED_KEY}): ArgoCD acts as its own ServiceAccounts`,
                });
                continue;
            }
            const derived = serviceAccountToImpersonate(p, { server: IN_CLUSTER.server, namespace });
            if (typeof derived !== "string") {
                out.push({ project: p.name, namespace, note: `ArgoCD cannot derive the ServiceAccount to impersonate: ${derived.error}` });
            } else if (derived !== "") {
                out.push({
                    project: p.name,
                    namespace,
                    sync: derived,
                    server: derived,
                    note: `sync impersonation is on: the project's destinationServiceAccounts name ${derived} for ${namespace}, for the sync and the API server alike`,
                });
            } else if (impersonationEnforced(argocdCm)) {
                out.push({
                    project: p.name,
                    namespace,
                    note: `sync impersonation is on and enforced, and no destinationServiceAccounts entry of project ${p.name} matches ${namespace}: ArgoCD refuses to sync there`,
                });
            } else {
                out.push({
                    project: p.name,
                    namespace,
                    sync: own.controller,
                    server: own.server,
                    note: `sync impersonation is on but not enforced, and no destinationServiceAccounts entry of project ${p.name} matches ${namespace}: ArgoCD falls back to its own ServiceAccounts`,
                });
            }
        }
    }
    return out;
}

/** The approval guard's identities, as `request.userInfo` names them. */
export interface GuardIdentities {
    /** Users the guard lets sync (ServiceAccounts as system:serviceaccount:<ns>:<name>, and gitopsUsers). */
    gitops: string[];
    gitopsGroups: string[];
    action: string[];
}

const saRef = (user: string): string => user.replace(/^system:serviceaccount:([^:]+):/, "$1/");

/**
 * Where the approval guard's identities do not match how ArgoCD will act, with what to set: the
 * sync identity must be a GitOps identity, or every sync of a regulated Rollout is refused; the API
 * server's identity, where it is not the sync's, must be an action identity (or ArgoCD's actions
 * are refused); an identity named where ArgoCD never acts as it is an exemption nobody needs. Where
 * the sync and the API server are one identity (impersonation), the guard cannot tell a resource
 * patch from a sync: the action identities stay empty and ArgoCD's RBAC alone refuses deployers
 * those paths (argocd.regulated-rbac).
 */
export function identityProblems(guard: GuardIdentities, acting: readonly ArgoIdentity[]): string[] {
    const out: string[] = [];
    const syncs = [...new Set(acting.flatMap((a) => (a.sync ? [a.sync] : [])))];
    const servers = [...new Set(acting.flatMap((a) => (a.server && a.server !== a.sync ? [a.server] : [])))];
    const sameAsSync = [...new Set(acting.flatMap((a) => (a.server && a.server === a.sync ? [a.server] : [])))];
    for (const a of acting.filter((x) => x.sync === undefined)) {
        out.push(`project ${a.project}, namespace ${a.namespace}: ${a.note}`);
    }
    for (const a of acting.filter((x) => x.sync !== undefined && !guard.gitops.includes(x.sync))) {
        out.push(
            `project ${a.project}, namespace ${a.namespace}: ArgoCD syncs as ${a.sync} (${a.note}), which policy.regulated does not name: the approval guard refuses every sync of a regulated Rollout there; add ${saRef(a.sync!)} to policy.regulated.gitopsServiceAccounts`,
        );
    }
    for (const s of servers.filter((x) => !guard.action.includes(x) && !guard.gitops.includes(x))) {
        out.push(
            `ArgoCD's API server acts as ${s}, which policy.regulated does not name: the guard refuses its Rollout actions (an approver's resume through ArgoCD included); add ${saRef(s)} to policy.regulated.actionServiceAccounts`,
        );
    }
    if (sameAsSync.length > 0 && guard.action.length > 0) {
        out.push(
            `ArgoCD's API server acts as ${sameAsSync.join(", ")}, its sync identity, for its resource patches, deletes and Rollout actions: the guard cannot tell them from a sync, so policy.regulated.actionServiceAccounts (${guard.action.map(saRef).join(", ")}) limits nothing; set it to [] and keep deployers from update/*, delete/* and the approval actions through ArgoCD's RBAC (argocd.regulated-rbac)`,
        );
    }
    if (acting.length > 0) {
        const wanted = new Set([...syncs, ...servers]);
        for (const g of guard.gitops.filter((x) => x.startsWith("system:serviceaccount:") && !wanted.has(x))) {
            out.push(
                `policy.regulated.gitopsServiceAccounts names ${saRef(g)}, which ArgoCD does not sync any regulated namespace as (${[...new Set(acting.map((a) => a.note))].join("; ")}): an exemption nobody needs; remove it`,
            );
        }
        if (sameAsSync.length === 0) {
            for (const g of guard.action.filter((x) => !wanted.has(x))) {
                out.push(`policy.regulated.actionServiceAccounts names ${saRef(g)}, which ArgoCD does not act as on a regulated namespace: remove it`);
            }
        }
    }
    return out;
}
