/** Who ArgoCD acts as on the regulated namespaces (ADR-056 D3), against the identities the approval guard names (argo-cd v3.5.1 util/settings). */
import { globRegExp } from "./argocdRbac";
import type { ReadOnlyCluster } from "./cluster";
import { field } from "./context";
import { IN_CLUSTER, LiveProject, destinationPermitted } from "./regulatedPaths";

/** util/settings/settings.go: argocd-cm keys of sync impersonation (`IsImpersonationEnabled`: exactly "true"; `IsImpersonationEnforced`: unless "false"). */
const ENABLED_KEY = "application.sync.impersonation.enabled";
const ENFORCED_KEY = "application.sync.impersonation.enforced";

/** util/settings/impersonation.go `DeriveServiceAccountToImpersonate`: the first entry matching the destination, "" when none. */
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
            if (sa.trim() === "" || /[!*[\]{}\\/]/.test(sa)) return { error: `default service account contains invalid chars '${sa}'` };
            return sa.includes(":") ? `system:serviceaccount:${sa}` : `system:serviceaccount:${destination.namespace}:${sa}`;
        }
    }
    return "";
}

/** How ArgoCD reaches one regulated namespace for one regulated project: the users its syncs and its API server's writes arrive as (no sync: it refuses to sync there), and why. */
export type ArgoIdentity = { project: string; namespace: string; sync?: string; server?: string; note: string };

/**
 * Who ArgoCD acts as on each regulated namespace a regulated project may target: its own ServiceAccounts, or with sync impersonation
 * the derived one, for the sync and the API server alike (`getApplicationClusterConfig`); none derived while enforced: nobody.
 */
export function argoIdentities(
    argocdCm: Readonly<Record<string, string>>,
    projects: readonly LiveProject[],
    namespaces: readonly string[],
    own: { controller?: string; server?: string },
): ArgoIdentity[] {
    const impersonating = argocdCm[ENABLED_KEY] === "true";
    return projects.flatMap((p) =>
        namespaces
            .filter((ns) => destinationPermitted(p.destinations, { ...IN_CLUSTER, namespace: ns }))
            .map((namespace): ArgoIdentity => {
                const base = { project: p.name, namespace };
                const fallback = { ...base, sync: own.controller, server: own.server };
                const derived = impersonating ? serviceAccountToImpersonate(p, { server: IN_CLUSTER.server, namespace }) : "";
                const none = `no destinationServiceAccounts entry of project ${p.name} matches ${namespace}`;
                if (!impersonating) {
                    return { ...fallback, note: `sync impersonation is off (argocd-cm ${ENABLED_KEY}): ArgoCD acts as its own ServiceAccounts` };
                } else if (typeof derived !== "string") {
                    return { ...base, note: `ArgoCD cannot derive the ServiceAccount to impersonate: ${derived.error}` };
                } else if (derived !== "") {
                    return {
                        ...base,
                        sync: derived,
                        server: derived,
                        note: `sync impersonation is on: the project's destinationServiceAccounts name ${derived} for ${namespace}, for the sync and the API server alike`,
                    };
                }
                return argocdCm[ENFORCED_KEY] !== "false"
                    ? { ...base, note: `sync impersonation is on and enforced, and ${none}: ArgoCD refuses to sync there` }
                    : { ...fallback, note: `sync impersonation is on but not enforced, and ${none}: ArgoCD falls back to its own ServiceAccounts` };
            }),
    );
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
 * Where the guard's identities miss how ArgoCD acts: the sync identity must be a GitOps one, the API server's an action one; an
 * identity ArgoCD never acts as is an exemption nobody needs, and one shared by both makes the action identities moot.
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

/** ArgoCD's application controller's and API server's ServiceAccounts, read from their workloads by `app.kubernetes.io/component`. */
export async function argoCdServiceAccounts(cluster: ReadOnlyCluster, ns: string): Promise<{ controller?: string; server?: string }> {
    const workloads = [
        ...((await cluster.list(`/apis/apps/v1/namespaces/${ns}/statefulsets`)) ?? []),
        ...((await cluster.list(`/apis/apps/v1/namespaces/${ns}/deployments`)) ?? []),
    ];
    const sa = (component: string): string | undefined => {
        const w = workloads.find((x) => x.metadata?.labels?.["app.kubernetes.io/component"] === component);
        return w ? `system:serviceaccount:${ns}:${String(field(w, "spec", "template", "spec", "serviceAccountName") ?? "default")}` : undefined;
    };
    return { controller: sa("application-controller"), server: sa("server") };
}
