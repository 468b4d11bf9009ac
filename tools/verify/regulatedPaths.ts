/** The paths around regulated prod's approval (ADR-056 D3) on a live ArgoCD, each following the argo-cd v3.5.1 code it cites. */

import type { ArgoRbacConfig } from "../../components/argocd/config";
import { REGULATED_DEPLOYER_APPSET_DENIALS, REGULATED_DEPLOYER_DENIALS } from "../../components/argocd/rbac";
import { ArgoRbac, globMatch, loadArgoRbac } from "./argocdRbac";
import type { KubeObject } from "./cluster";
import { asArray, asRecord, field, nameOf } from "./context";

/** argo-cd v3.5.1 util/settings/settings.go: the argocd-cm key, read with strconv.ParseBool, "" meaning true. */
export const FINE_GRAINED_INHERITANCE_KEY = "server.rbac.disableApplicationFineGrainedRBACInheritance";

/** A synthetic Application and Rollout for the questions: a grant scoped to fewer names is not seen. */
const anyObjectOf = (project: string): string => `${project}/any-application`;

/** What ArgoCD must refuse a deployer in a regulated project: the approval actions and the program's deployer denials. */
export function regulatedQuestions(rbac: Pick<ArgoRbacConfig, "actions">): { resource: "applications" | "applicationsets"; action: string }[] {
    return [
        ...rbac.actions.map((a) => ({ resource: "applications" as const, action: `action/argoproj.io/Rollout/${a}` })),
        ...REGULATED_DEPLOYER_DENIALS.map((a) => ({
            resource: "applications" as const,
            action: a.replace(/\/\*$/, "/argoproj.io/Rollout/regulated-namespace/any-rollout"),
        })),
        ...REGULATED_DEPLOYER_APPSET_DENIALS.map((action) => ({ resource: "applicationsets" as const, action })),
    ];
}

/** What argocd-rbac-cm lets the configured groups do in the regulated projects: deployers none of `regulatedQuestions`, approvers the approvals. */
export async function regulatedRbacProblems(
    rbac: Readonly<ArgoRbacConfig>,
    live: {
        rbacCm?: Record<string, string>;
        argocdCm?: Record<string, string>;
        projects: readonly LiveProject[];
        apps: readonly { project: string; name: string }[];
    },
): Promise<string[]> {
    if (live.rbacCm === undefined) return ["argocd-rbac-cm not found: ArgoCD grants only its built-in roles and policy.default"];
    const out: string[] = [];
    const inheritance = live.argocdCm?.[FINE_GRAINED_INHERITANCE_KEY] ?? "";
    if (["0", "f", "F", "FALSE", "false", "False"].includes(inheritance)) {
        out.push(
            `argocd-cm ${FINE_GRAINED_INHERITANCE_KEY} is "${inheritance}": an update or delete grant on an Application then patches or deletes its Rollouts, and a deny on update/* cannot take it back (argo-cd server/application/application.go getAppLiveResource); remove the key (ArgoCD 3 defaults to true)`,
        );
    } else if (!["", "1", "t", "T", "TRUE", "true", "True"].includes(inheritance)) {
        out.push(
            `argocd-cm ${FINE_GRAINED_INHERITANCE_KEY} is "${inheritance}", which ArgoCD cannot parse as a boolean: every resource patch and delete fails; set "true" or remove the key`,
        );
    }
    const enforcer = await loadArgoRbac(live.rbacCm, live.projects);
    if (enforcer.error !== undefined) {
        return [...out, `argocd-rbac-cm does not load in ArgoCD (${enforcer.error}): ArgoCD denies every request, approvers included`];
    }
    for (const project of rbac.regulatedProjects) {
        const objects = [anyObjectOf(project), ...live.apps.filter((a) => a.project === project).map((a) => `${project}/${a.name}`)];
        for (const group of rbac.deployerGroups) {
            for (const { resource, action } of regulatedQuestions(rbac)) {
                const allowed = objects.filter((object) => enforcer.enforce({ groups: [group] }, { resource, action, object }));
                if (allowed.length > 0) {
                    out.push(
                        `deployer group ${group} may ${action} ${resource} on ${allowed.join(", ")}: deny it (argocd.rbac.deployerRoles deny it for the roles named there; a grant through policy.default or another role of the group is not taken back by a deny)`,
                    );
                }
            }
        }
        for (const group of rbac.approverGroups) {
            const refused = rbac.actions.filter(
                (a) =>
                    !enforcer.enforce(
                        { groups: [group] },
                        { resource: "applications", action: `action/argoproj.io/Rollout/${a}`, object: anyObjectOf(project) },
                    ),
            );
            if (refused.length > 0) {
                out.push(
                    `approver group ${group} cannot ${refused.map((a) => `action/argoproj.io/Rollout/${a}`).join(", ")} in project ${project}: bind it to the approver role (g, ${group}, ${rbac.approverRole ?? "<argocd.rbac.approverRole>"})`,
                );
            }
        }
    }
    return out;
}

/** An AppProject destination (pkg/apis/application/v1alpha1 `ApplicationDestination`). */
export type ArgoDestination = { server?: string; name?: string; namespace?: string };

export interface LiveProject {
    name: string;
    destinations: ArgoDestination[];
    sourceNamespaces: string[];
    destinationServiceAccounts: { server?: string; namespace?: string; defaultServiceAccount?: string }[];
    roles: { name: string; policies: string[]; groups: string[]; tokens: string[] }[];
}

/** The cluster ArgoCD runs in, as it names it (pkg/apis/application/v1alpha1/application_defaults.go). */
export const IN_CLUSTER = { server: "https://kubernetes.default.svc", name: "in-cluster" } as const;

/** app_project_types.go `globMatch` with negation allowed: `!pattern` matches what `pattern` does not. */
function destinationGlob(pattern: string, value: string): boolean {
    if (pattern.startsWith("!")) return !globMatch(pattern.slice(1), value);
    return pattern === "*" || globMatch(pattern, value);
}

const isDeny = (pattern: string | undefined): boolean => (pattern ?? "").startsWith("!");

/** Whether a project's destinations permit one (app_project_types.go `isDestinationMatched`; `permitOnlyProjectScopedClusters` not read). */
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
export type RegulatedTarget = { server: string; name: string; namespace: string; why: string };

const GLOB = /[*?[\]{}!\\]/;

/** Where only the regulated projects may deploy: this cluster's regulated namespaces, and each regulated project's concrete destinations. */
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
            if (namespace === "" || GLOB.test(namespace) || cluster === "" || GLOB.test(cluster)) continue;
            if (!out.some((t) => t.namespace === namespace && ((d.server && t.server === d.server) || (d.name && t.name === d.name)))) {
                out.push({ server: d.server ?? "", name: d.name ?? "", namespace, why: `a destination of regulated project ${p.name}` });
            }
        }
    }
    return out;
}

const describeTarget = (t: RegulatedTarget): string => `namespace ${t.namespace} on ${t.server || t.name}`;

/**
 * What reaches a regulated destination around the regulated projects' RBAC: another project's destinations, `sourceNamespaces`,
 * a role whose tokens may sync or approve (server/rbacpolicy/rbacpolicy.go `enforceProjectToken`), and Replace=true or Force=true
 * syncs (gitops-engine sync_context.go: admission sees only a delete and a create).
 */
export async function regulatedProjectProblems(
    rbac: Readonly<Pick<ArgoRbacConfig, "regulatedProjects" | "actions">>,
    live: {
        projects: readonly LiveProject[];
        targets: readonly RegulatedTarget[];
        rbacCm?: Record<string, string>;
        apps: readonly { project: string; name: string; syncOptions: string[] }[];
        allowReplaceOrForceSync: boolean;
    },
): Promise<{ object: string; found: string }[]> {
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
    const enforcer: ArgoRbac | undefined = live.rbacCm === undefined ? undefined : await loadArgoRbac(live.rbacCm, live.projects);
    const questions = regulatedQuestions(rbac);
    for (const p of live.projects.filter((x) => regulated.has(x.name))) {
        if (p.sourceNamespaces.length > 0) {
            out.push({
                object: `AppProject ${p.name}`,
                found: `takes Applications from namespaces ${p.sourceNamespaces.join(", ")} (spec.sourceNamespaces): whoever Kubernetes RBAC lets create an Application there creates one of this regulated project, with any source and an automated sync, and ArgoCD's RBAC is never asked; remove spec.sourceNamespaces`,
            });
        }
        if (enforcer === undefined || enforcer.error !== undefined) continue;
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

/**
 * ApplicationSets that choose an Application's project or revision from their generators' data (ADR-056 D3). The
 * ApplicationSet controller creates Applications with no user's RBAC asked (argo-cd v3.5.1
 * docs/operator-manual/applicationset/Security.md, "Templated project field"), and renders `{{ }}` in every string of the
 * template and its `templatePatch` (applicationset/utils/utils.go, controllers/template/patch.go): whoever writes a
 * generator's input (a git file, a pull request, a cluster label) then picks a regulated project or the revision it ships.
 */
export function templatedSetProblems(sets: readonly KubeObject[]): { object: string; found: string }[] {
    return sets.flatMap((set) => {
        const spec = field(set, "spec", "template", "spec");
        const revisions = [field(spec, "source"), ...asArray(field(spec, "sources"))].map((s) => field(s, "targetRevision"));
        const patch = field(set, "spec", "templatePatch");
        const templated = [
            ...(String(field(spec, "project") ?? "").includes("{{") ? ["spec.template.spec.project"] : []),
            ...(revisions.some((r) => String(r ?? "").includes("{{")) ? ["spec.template.spec.source(s).targetRevision"] : []),
            ...(typeof patch === "string" && /\b(project|targetRevision)\s*:/.test(patch) ? ["spec.templatePatch"] : []),
        ];
        return templated.length === 0
            ? []
            : [
                  {
                      object: `ApplicationSet ${nameOf(set)}`,
                      found: `templates ${templated.join(", ")} while regulated projects exist: whoever writes its generators' input chooses the project or the revision of the Applications it creates, and no user's ArgoCD RBAC is asked; write the project and targetRevision as literals`,
                  },
              ];
    });
}

/** A live AppProject, as the regulated checks read it: destinations, source namespaces, impersonation and roles with their tokens. */
export function liveProject(o: KubeObject): LiveProject {
    const spec = field(o, "spec");
    const byRole = asRecord(field(o, "status", "jwtTokensByRole") as Record<string, string> | undefined) as unknown as Record<string, unknown>;
    return {
        name: nameOf(o),
        destinations: asArray(field(spec, "destinations")),
        sourceNamespaces: asArray<string>(field(spec, "sourceNamespaces")),
        destinationServiceAccounts: asArray(field(spec, "destinationServiceAccounts")),
        roles: asArray(field(spec, "roles")).map((r) => {
            const name = String(field(r, "name") ?? "");
            const tokens = [...asArray(field(r, "jwtTokens")), ...asArray(field(byRole?.[name], "items"))].map((t) =>
                String(field(t, "id") ?? field(t, "iat") ?? ""),
            );
            return { name, policies: asArray<string>(field(r, "policies")), groups: asArray<string>(field(r, "groups")), tokens: [...new Set(tokens)] };
        }),
    };
}
