import { field, readSection, type Values } from "../../config/declare";
import { ConfigReader, PEOPLE_GROUP_RULE, identityRule } from "../../config/reader";
import { emptyLabels } from "./selector";

/**
 * `policy.regulated`, regulated prod (ADR-056 D3, ADR-049 separation of duties): who approves, who
 * deploys and the identities ArgoCD acts as, read and checked. Part of the policy section
 * (section.ts).
 */

/** `<namespace>/<name>` of a ServiceAccount. */
const SERVICE_ACCOUNT = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * Groups that hold every user, every ServiceAccount, every node or every cluster admin
 * (Kubernetes' built-in groups): naming one as a GitOps identity would let them all past the guard.
 */
const BROAD_GROUPS = /^system:(authenticated|unauthenticated|serviceaccounts(:.*)?|nodes|masters)$/;

/** The `policy.regulated` section. */
export const REGULATED_FIELD = field.section({
    readBySection: true,
    defaultDoc: "unset: no regulated namespaces, no approval guard",
    doc: "regulated prod (D3, ADR-049): only the GitOps identities change a Rollout, only approvers approve",
    fields: {
        namespaceLabels: field.labels({ required: true, doc: "at least one label marking regulated namespaces (among the tenant namespaces)" }),
        approverGroups: field.strings({
            rule: PEOPLE_GROUP_RULE,
            size: { min: 1, max: 20 },
            required: true,
            doc: "the groups whose members approve: 1-20 (as request.userInfo.groups names them; blanks inside allowed); without them nobody passes the approval pause; never a Kubernetes system: group, never * or ? (kyverno.io/v1 matches them as wildcards, CEL exactly)",
        }),
        deployerGroups: field.strings({
            rule: PEOPLE_GROUP_RULE,
            size: { min: 0, max: 20 },
            required: true,
            doc: "the groups whose members ship (the deployer Role is bound to them, ArgoCD denies them the approval); never an approver group, a system: group, * or ?; [] only where nobody ships by hand",
        }),
        gitopsServiceAccounts: field.strings({
            rule: { pattern: SERVICE_ACCOUNT, describe: "<namespace>/<name> of a ServiceAccount, such as argocd/argocd-application-controller" },
            size: { min: 0, max: 20 },
            defaultDoc: "required unless gitopsUsers or gitopsGroups",
            doc: "0-20 <namespace>/<name>: the ServiceAccounts ArgoCD syncs as (its application controller, or with sync impersonation the AppProject's destination ServiceAccount), which alone create, change and prune a regulated Rollout",
        }),
        gitopsUsers: field.strings({
            rule: identityRule("user"),
            size: { min: 0, max: 20 },
            doc: "0-20 user names a hub's ArgoCD syncs this cluster as (its cluster Secret's identity, on EKS the IAM role's mapped user name); never a ServiceAccount's, never * or ?",
        }),
        gitopsGroups: field.strings({
            rule: identityRule("group"),
            size: { min: 0, max: 20 },
            doc: "0-20 groups a hub's ArgoCD syncs this cluster as (on EKS the IAM role's mapped groups, where the user name varies by session); never an approver or deployer group, nor a group of every user, ServiceAccount, node or admin, nor * or ?",
        }),
        actionServiceAccounts: field.strings({
            rule: { pattern: SERVICE_ACCOUNT, describe: "<namespace>/<name> of a ServiceAccount, such as argocd/argocd-server" },
            size: { min: 0, max: 20 },
            doc: "0-20 <namespace>/<name>: the identities ArgoCD's API server runs Rollout actions, resource patches and deletes as; none where they are the sync's (a hub's ArgoCD, or sync impersonation)",
        }),
        allowReplaceOrForceSync: field.boolean({
            default: false,
            doc: "let a regulated Rollout carry the ArgoCD sync option Replace=true or Force=true, from any identity: ArgoCD reads them from the live object, and a sync may then delete and recreate the Rollout, whose first version is promoted fully, without the approval",
        }),
    },
});

/** A ServiceAccount, as `request.userInfo.username` names it: `system:serviceaccount:<namespace>:<name>`. */
export type ServiceAccountRef = { namespace: string; name: string };

/** `policy.regulated` as read: the ServiceAccounts split into namespace and name. */
export type RegulatedConfig = Omit<Values<typeof REGULATED_FIELD.fields>, "gitopsServiceAccounts" | "actionServiceAccounts"> & {
    gitopsServiceAccounts: ServiceAccountRef[];
    actionServiceAccounts: ServiceAccountRef[];
};

export function readRegulated(r: ConfigReader, value: unknown): RegulatedConfig | undefined {
    const g = readSection(r, "policy.regulated", REGULATED_FIELD.fields, value);
    if (!g) return undefined;
    // A required list not set is reported by readSection, and read as empty here.
    const { raw, gitopsServiceAccounts: accounts, gitopsUsers: users, gitopsGroups: groups, approverGroups = [], deployerGroups = [] } = g;
    // ArgoCD's API server patches and deletes resources, and runs the Rollout actions, as its own
    // identity for any user ArgoCD's RBAC lets through (argo-cd v3.5.1 server/application/application.go
    // `PatchResource`, `DeleteResource`, `RunResourceActionV2`): exempting it like the sync identity
    // would let an ArgoCD `update` or `delete` change or recreate a regulated Rollout.
    for (const a of accounts.filter((a) => a.split("/")[1] === "argocd-server")) {
        r.problem(
            "policy.regulated.gitopsServiceAccounts",
            a,
            "must not name ArgoCD's API server: it acts for any user ArgoCD's RBAC lets through (resource patch, delete, Rollout actions). List it in policy.regulated.actionServiceAccounts, where the guard lets it write only what ArgoCD's Rollout actions write (status, spec.paused, spec.restartAt)",
        );
    }
    for (const a of g.actionServiceAccounts.filter((a) => accounts.includes(a))) {
        r.problem(
            "policy.regulated.actionServiceAccounts",
            a,
            "must not repeat a policy.regulated.gitopsServiceAccounts identity: an action identity is exempted for the actions' writes only",
        );
    }
    // A ServiceAccount authenticates as system:serviceaccount:<namespace>:<name> (k8s.io/apiserver
    // pkg/authentication/serviceaccount/util.go `MakeUsername`), which the guard builds from
    // gitopsServiceAccounts; no anonymous request may pass as the sync.
    for (const u of users.filter((u) => u.startsWith("system:serviceaccount:") || u === "system:anonymous")) {
        r.problem(
            "policy.regulated.gitopsUsers",
            u,
            u === "system:anonymous"
                ? "must not name the anonymous user: every unauthenticated request would pass as ArgoCD's sync"
                : "must not name a ServiceAccount: list it in policy.regulated.gitopsServiceAccounts as <namespace>/<name>",
        );
    }
    for (const group of groups) {
        if (BROAD_GROUPS.test(group)) {
            r.problem(
                "policy.regulated.gitopsGroups",
                group,
                "must not be a Kubernetes group of every user, ServiceAccount, node or cluster admin: each of them would pass the guard as ArgoCD's sync",
            );
        } else if (approverGroups.includes(group) || deployerGroups.includes(group)) {
            r.problem(
                "policy.regulated.gitopsGroups",
                group,
                `must not be ${approverGroups.includes(group) ? "an approver" : "a deployer"} group: its members would pass the guard as ArgoCD's sync (ADR-056 D3, ADR-049)`,
            );
        }
    }
    emptyLabels(r, "policy.regulated.namespaceLabels", raw.namespaceLabels, "marks a regulated namespace");
    // Without the GitOps identities nobody may create or change a regulated Rollout, ArgoCD's sync included.
    if ([raw.gitopsServiceAccounts, raw.gitopsUsers, raw.gitopsGroups].every((v) => v === undefined || v === null)) {
        r.problem(
            "policy.regulated.gitopsServiceAccounts",
            raw.gitopsServiceAccounts,
            "is required (or policy.regulated.gitopsUsers, gitopsGroups): the identities ArgoCD syncs this cluster as, such as argocd/argocd-application-controller, or a hub's cluster Secret identity (without them ArgoCD cannot sync a regulated Rollout)",
        );
    } else if (accounts.length + users.length + groups.length === 0) {
        r.problem(
            "policy.regulated.gitopsServiceAccounts",
            [],
            "must name at least one identity, here or in policy.regulated.gitopsUsers or gitopsGroups: without one ArgoCD cannot sync a regulated Rollout",
        );
    }
    const ref = (a: string): ServiceAccountRef => ({ namespace: a.split("/")[0], name: a.split("/")[1] });
    return { ...g, approverGroups, deployerGroups, gitopsServiceAccounts: accounts.map(ref), actionServiceAccounts: g.actionServiceAccounts.map(ref) };
}
