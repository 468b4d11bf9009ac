/**
 * RBAC as the API server decides it: SubjectAccessReviews for the controller, Kyverno's
 * controllers, namespace editors and regulated namespaces' deployers (ADR-056 D2, D3,
 * ADR-040/049), and the ClusterRoles the policy stage labels for Kyverno's aggregation.
 *
 * What a SubjectAccessReview can and cannot show: it asks the API server's authorizers (RBAC,
 * and any webhook authorizer) whether a subject may make a request. Admission runs later, on real
 * requests only, so no review sees a Kyverno policy. Where RBAC lets a request through and only
 * admission stops it (a deployer changing a regulated Rollout's steps or unpausing it), verify
 * checks the admission policy itself under kyverno.*, and its behaviour is tested offline.
 */
import { approvalRoles } from "../../../components/delivery/approval";
import { namespaceSelector } from "../../../components/policy";
import { TENANT_OPERATOR_ROLE, TENANT_VIEW_ROLE } from "../../../components/rollouts/tenants";
import type { AddonConfig } from "../../../stacks/config";
import { BindingSubject, ROLLOUT_PATH_CALLS, describeQuestion, describeSubject, reviewSubject, ruleAllows } from "../access";
import type { KubeObject, ReadOnlyCluster, ResourceQuestion } from "../cluster";
import { CheckResult, Finding, DOCS, outcome, skipped } from "../report";
import { CheckGroup, VerifyContext, asArray, field, mapLimit, nameOf, namespaceOf, ref } from "../context";
import { selects } from "../selectors";
import { kyvernoRbacChecks } from "./kyvernoRbac";
import { PolicyRule, RELEASE_NAME } from "../../../components/argoRollouts";

const RBAC = "/apis/rbac.authorization.k8s.io/v1";
const CONCURRENCY = 8;

/** `<app>-rollout-deployer`: the strategy library names a regulated app's deployer Role this way. */
export const DEPLOYER_ROLE_SUFFIX = approvalRoles({ name: "", namespace: "" }).deployer.metadata.name;

/** Verbs that promote, resume or abort: all of them write the Rollout's status subresource. */
const STATUS_WRITES = ["patch", "update"];
const promoteQuestion = (verb: string, namespace?: string): ResourceQuestion => ({
    verb,
    group: "argoproj.io",
    resource: "rollouts",
    subresource: "status",
    ...(namespace ? { namespace } : {}),
});

/** Most editor bindings whose subjects are asked about: enough to show a real person, few requests. */
const MAX_EDITOR_SUBJECTS = 20;

export interface Binding {
    namespace: string;
    name: string;
    roleRef: { kind: string; name: string };
    subjects: BindingSubject[];
}

export function bindings(list: readonly KubeObject[]): Binding[] {
    return list.map((b) => ({
        namespace: namespaceOf(b),
        name: nameOf(b),
        roleRef: { kind: String(field(b, "roleRef", "kind") ?? ""), name: String(field(b, "roleRef", "name") ?? "") },
        subjects: asArray<BindingSubject>(b.subjects),
    }));
}

/** Rules of `rules` that let their holder write a Rollout's status (i.e. promote). */
export function promotingRules(rules: readonly PolicyRule[]): PolicyRule[] {
    return rules.filter((r) => STATUS_WRITES.some((verb) => ruleAllows(r, promoteQuestion(verb))));
}

/** The namespaces `policy.regulated` applies to: tenant namespaces with its labels, not excluded. */
export function regulatedNamespaces(config: AddonConfig, namespaces: readonly KubeObject[]): string[] {
    if (!config.policy.regulated) {
        return [];
    }
    const selector = namespaceSelector(config.policy, "regulated");
    return namespaces.filter((n) => selects(selector, n.metadata?.labels ?? {})).map(nameOf);
}

/**
 * What a deployer must not be able to do in a regulated namespace (ADR-056 D3, ADR-049), as RBAC
 * decides it: write `rollouts/status` (promote, resume, skip and abort all do; the admission guard
 * refuses it too), and delete a Rollout, which only RBAC refuses: the admission guard lets deletes
 * through, GitOps recreates the Rollout, and Argo Rollouts promotes a new Rollout's first version
 * fully, without steps or analysis (argo-rollouts v1.9.0 rollout/sync.go `shouldFullPromote`,
 * "Initial deploy"; components/delivery/approval.ts gives deployers read only).
 */
const DEPLOYER_REFUSED: readonly ResourceQuestion[] = [
    ...STATUS_WRITES.map((verb) => promoteQuestion(verb)),
    { verb: "delete", group: "argoproj.io", resource: "rollouts" },
];

/**
 * What a deployer must not be able to do to a regulated Rollout's ReplicaSets (ADR-056 D3): create
 * one, change one (its template is what runs; Argo Rollouts does not revert an edit) or scale one.
 * The approval guard restrict-regulated-rollout-pods refuses them at admission too, but only where
 * Kyverno admits ReplicaSets at all (kyverno.resource-filters) and runs: RBAC is the first line.
 */
const DEPLOYER_REPLICASET_REFUSED: readonly ResourceQuestion[] = [
    ...["create", "update", "patch"].map((verb) => ({ verb, group: "apps", resource: "replicasets" })),
    ...["update", "patch"].map((verb) => ({ verb, group: "apps", resource: "replicasets", subresource: "scale" })),
];

interface DeployerSubject {
    subject: BindingSubject;
    namespace: string;
    via: string;
}

/**
 * Deployers in regulated namespaces: each group of `policy.regulated.deployerGroups`, and every
 * subject bound to a `<app>-rollout-deployer` Role there. A group is asked alone: a person in a
 * deployer group and an approver group gets the approver's RBAC, and only the admission guard
 * refuses them (it treats a deployer as no approver), which no access review can show. A string
 * is the reason there is nobody to ask.
 */
async function regulatedDeployers(
    ctx: VerifyContext,
    allBindings: readonly Binding[],
): Promise<{ namespaces: string[]; subjects: DeployerSubject[] } | string> {
    const { config, cluster } = ctx;
    const regulated = config.policy.regulated;
    if (!regulated) {
        return "no policy.regulated in the stack: no regulated namespaces on this cluster";
    }
    const namespaces = regulatedNamespaces(config, (await cluster.list("/api/v1/namespaces")) ?? []);
    if (namespaces.length === 0) {
        return "no namespace matches policy.regulated.namespaceLabels among the tenant namespaces";
    }
    // ArgoCD's identities may write status by design: its API server runs the approved Rollout
    // actions as its own (policy.regulated.actionServiceAccounts), the sync as the controller's; the
    // admission guard limits what each may write, and ArgoCD's RBAC who may make it write
    // (argocd.regulated-rbac asks ArgoCD's enforcer).
    const argo = [...regulated.gitopsServiceAccounts, ...regulated.actionServiceAccounts];
    const gitops = (s: BindingSubject) =>
        (s.kind === "ServiceAccount" && argo.some((g) => g.name === s.name && g.namespace === s.namespace)) ||
        (s.kind === "User" && regulated.gitopsUsers.includes(s.name)) ||
        (s.kind === "Group" && regulated.gitopsGroups.includes(s.name));
    const subjects: DeployerSubject[] = [];
    for (const ns of namespaces) {
        for (const group of regulated.deployerGroups) {
            subjects.push({ subject: { kind: "Group", name: group }, namespace: ns, via: "policy.regulated.deployerGroups" });
        }
        for (const b of allBindings.filter((x) => x.namespace === ns && x.roleRef.kind === "Role" && x.roleRef.name.endsWith(DEPLOYER_ROLE_SUFFIX))) {
            for (const s of b.subjects) {
                if (!(s.kind === "Group" && regulated.deployerGroups.includes(s.name)) && !gitops({ ...s, namespace: s.namespace ?? ns })) {
                    subjects.push({ subject: s, namespace: ns, via: `RoleBinding ${ns}/${b.name} to Role ${b.roleRef.name}` });
                }
            }
        }
    }
    if (subjects.length === 0) {
        return `policy.regulated.deployerGroups is empty and no RoleBinding to a *${DEPLOYER_ROLE_SUFFIX} Role in ${namespaces.join(", ")}`;
    }
    return { namespaces, subjects };
}

/** Asks each deployer each question in its namespace; one finding per allowed request. */
async function deployerFindings(
    cluster: ReadOnlyCluster,
    subjects: readonly DeployerSubject[],
    questions: readonly ResourceQuestion[],
    why: (q: ResourceQuestion) => string,
): Promise<Finding[]> {
    const findings: Finding[] = [];
    for (const { subject, namespace, via } of subjects) {
        for (const q of questions) {
            const d = await cluster.review(reviewSubject(subject, namespace), { ...q, namespace });
            if (d.allowed) {
                findings.push({
                    object: `${describeSubject(subject)} (${via})`,
                    found: `may ${q.verb} ${q.resource}${q.subresource ? `/${q.subresource}` : ""} in ${namespace}${why(q)}${d.reason ? ` (${d.reason})` : ""}`,
                });
            }
        }
    }
    return findings;
}

async function deployerCheck(ctx: VerifyContext, deployers: Awaited<ReturnType<typeof regulatedDeployers>>): Promise<CheckResult> {
    const id = "rbac.deployer-cannot-resume";
    const what = "deployers cannot write rollouts/status (promote, resume, abort) or delete a Rollout in regulated namespaces";
    if (typeof deployers === "string") {
        return skipped(id, what, DOCS.rbac, deployers);
    }
    const findings = await deployerFindings(ctx.cluster, deployers.subjects, DEPLOYER_REFUSED, (q) =>
        q.verb === "delete" ? ": GitOps would recreate it and its first version is promoted without a gate" : "",
    );
    return outcome(
        id,
        what,
        DOCS.rbac,
        findings,
        `RBAC refuses ${deployers.subjects.length} deployer subject(s) in ${deployers.namespaces.join(", ")}; spec changes and unpausing are refused by admission (restrict-regulated-rollout-changes, under kyverno.*), which access reviews cannot see`,
    );
}

async function deployerReplicaSetCheck(ctx: VerifyContext, deployers: Awaited<ReturnType<typeof regulatedDeployers>>): Promise<CheckResult> {
    const id = "rbac.deployer-cannot-edit-replicasets";
    const what = "deployers cannot create, change or scale ReplicaSets in regulated namespaces";
    if (typeof deployers === "string") {
        return skipped(id, what, DOCS.rbac, deployers);
    }
    const findings = await deployerFindings(
        ctx.cluster,
        deployers.subjects,
        DEPLOYER_REPLICASET_REFUSED,
        (q) =>
            `: a ReplicaSet ${q.subresource === "scale" ? "scaled" : q.verb === "create" ? "created" : "edited"} beside a Rollout runs a version nobody approved (Argo Rollouts does not revert it)`,
    );
    return outcome(
        id,
        what,
        DOCS.rbac,
        findings,
        `RBAC refuses ${deployers.subjects.length} deployer subject(s) in ${deployers.namespaces.join(", ")}; restrict-regulated-rollout-pods refuses the same at admission where Kyverno sees ReplicaSets (kyverno.resource-filters)`,
    );
}

/** What a namespace viewer must be able to read: a tenant team's view of its own rollouts. */
const TENANT_READS: readonly string[] = ["rollouts", "analysisruns", "analysistemplates", "experiments"];

/**
 * Tenants read their Rollouts: the built-in `view` ClusterRole, as the API server's aggregation
 * controller filled it, grants get, list and watch on each of TENANT_READS (through the stage's
 * `argo-rollouts-addon:rollouts-view`, or anything else the platform aggregates). `edit` and
 * `admin` include `view`.
 */
async function tenantReadCheck(ctx: VerifyContext): Promise<CheckResult> {
    const { cluster } = ctx;
    const view = await cluster.get(`${RBAC}/clusterroles/view`);
    const rules = asArray<PolicyRule>(view?.rules);
    const missing = TENANT_READS.flatMap((resource) =>
        ["get", "list", "watch"]
            .filter((verb) => !rules.some((r) => ruleAllows(r, { verb, group: "argoproj.io", resource })))
            .map((verb) => `${verb} ${resource}`),
    );
    const ours = await cluster.get(`${RBAC}/clusterroles/${encodeURIComponent(TENANT_VIEW_ROLE)}`);
    const findings: Finding[] = [];
    if (missing.length > 0) {
        findings.push({
            object: ref("ClusterRole", undefined, "view"),
            found: `does not grant ${missing.join(", ")} on argoproj.io${ours ? "" : `, and ClusterRole ${TENANT_VIEW_ROLE} does not exist`}: namespace viewers, editors and admins cannot see their Rollouts`,
        });
    }
    return outcome(
        "rbac.tenants-read-rollouts",
        "namespace viewers (and so editors and admins) may read Rollouts, AnalysisRuns, AnalysisTemplates and Experiments",
        DOCS.rbac,
        findings,
    );
}

/**
 * The operator role writes `rollouts/status` (abort, retry, promote): bound in a regulated
 * namespace it is an approval path, so every RoleBinding to it must be outside them.
 */
function operatorBindingCheck(config: AddonConfig, allBindings: readonly Binding[], regulated: readonly string[]): CheckResult {
    const id = "rbac.operators-outside-regulated";
    const what = `no RoleBinding to ${TENANT_OPERATOR_ROLE} in a regulated namespace`;
    const bound = allBindings.filter((b) => b.roleRef.kind === "ClusterRole" && b.roleRef.name === TENANT_OPERATOR_ROLE);
    if (!config.policy.regulated) {
        return skipped(id, what, DOCS.rbac, `no policy.regulated in the stack: no regulated namespaces on this cluster (${bound.length} operator binding(s))`);
    }
    const findings = bound
        .filter((b) => regulated.includes(b.namespace))
        .map((b) => ({
            object: `RoleBinding ${b.namespace}/${b.name}`,
            found: `binds ${TENANT_OPERATOR_ROLE} in regulated namespace ${b.namespace}: its subjects may write rollouts/status there, the approval; remove ${b.namespace} from controller.tenantOperators`,
        }));
    return outcome(id, what, DOCS.rbac, findings, `${bound.length} operator binding(s), none in ${regulated.length} regulated namespace(s)`);
}

export const rbacChecks: CheckGroup = async (ctx) => {
    const { config, cluster } = ctx;
    const ns = config.controller.namespace;
    const results: CheckResult[] = [];

    // The controller: every call its Rollout path makes.
    const sa: BindingSubject = { kind: "ServiceAccount", name: RELEASE_NAME, namespace: ns };
    const controllerCalls = ROLLOUT_PATH_CALLS.map((c) => ({ ...c, namespace: c.scope === "controller" ? ns : undefined }));
    const controllerAnswers = await mapLimit(controllerCalls, CONCURRENCY, async (q) => ({ q, d: await cluster.review(reviewSubject(sa), q) }));
    results.push(
        outcome(
            "rbac.controller",
            `the controller's ServiceAccount may make each of the ${controllerCalls.length} calls of the Rollout path`,
            DOCS.rbac,
            controllerAnswers
                .filter((a) => !a.d.allowed)
                .map((a) => ({ object: describeSubject(sa), found: `may not ${describeQuestion(a.q)} (${a.q.source})${a.d.reason ? `: ${a.d.reason}` : ""}` })),
        ),
    );

    results.push(...(await kyvernoRbacChecks(ctx)));

    // Namespace editors: the built-in `edit` ClusterRole, as aggregated, must not promote; the
    // chart's aggregate roles would add rollouts/status (chart templates/aggregate-roles.yaml).
    const editors: Finding[] = [];
    const edit = await cluster.get(`${RBAC}/clusterroles/edit`);
    const editRules = asArray<PolicyRule>(edit?.rules);
    if (promotingRules(editRules).length > 0) {
        const aggregated = (await cluster.list(`${RBAC}/clusterroles`, "rbac.authorization.k8s.io/aggregate-to-edit=true")) ?? [];
        const culprits = aggregated.filter((r) => promotingRules(asArray<PolicyRule>(r.rules)).length > 0).map(nameOf);
        editors.push({
            object: ref("ClusterRole", undefined, "edit"),
            found: `grants patch/update on argoproj.io rollouts/status${culprits.length ? `, aggregated from ${culprits.map((c) => `ClusterRole ${c}`).join(", ")}` : ""}: every namespace editor can promote`,
        });
    }
    const allBindings = bindings((await cluster.list(`${RBAC}/rolebindings`)) ?? []);
    const editorBindings = allBindings.filter((b) => b.roleRef.kind === "ClusterRole" && b.roleRef.name === "edit").slice(0, MAX_EDITOR_SUBJECTS);
    for (const b of editorBindings) {
        for (const s of b.subjects.slice(0, 1)) {
            const d = await cluster.review(reviewSubject(s, b.namespace), promoteQuestion("patch", b.namespace));
            // Only a grant through `edit` counts here: an editor may also hold an approver Role.
            if (d.allowed && (d.reason ?? "").includes('ClusterRole "edit"')) {
                editors.push({
                    object: `${describeSubject(s)} (RoleBinding ${b.namespace}/${b.name})`,
                    found: `may patch rollouts/status in ${b.namespace}: ${d.reason}`,
                });
            }
        }
    }
    results.push(
        outcome(
            "rbac.editor-cannot-promote",
            "a namespace editor cannot patch rollouts/status",
            DOCS.rbac,
            editors,
            editorBindings.length ? `asked for ${editorBindings.length} editor binding(s)` : "no RoleBinding to edit found; ClusterRole edit checked",
        ),
    );

    const deployers = await regulatedDeployers(ctx, allBindings);
    results.push(await deployerCheck(ctx, deployers));
    results.push(await deployerReplicaSetCheck(ctx, deployers));
    results.push(await tenantReadCheck(ctx));
    const regulated = config.policy.regulated ? regulatedNamespaces(config, (await cluster.list("/api/v1/namespaces")) ?? []) : [];
    results.push(operatorBindingCheck(config, allBindings, regulated));
    return results;
};
