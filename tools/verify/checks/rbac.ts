/** RBAC as the API server decides it (ADR-056 D2, D3), by access reviews; what admission refuses is checked under kyverno.*. */
import { approvalRoleName, approvalSides } from "../../../components/policy/approvalBindings";
import { POLICY_NAMES, namespaceSelector } from "../../../components/policy";
import { absent } from "../../../components/config/reader";
import { TENANT_OPERATOR_ROLE, TENANT_VIEW_ROLE } from "../../../components/rollouts/tenants";
import type { AddonConfig } from "../../../stacks/config";
import { BindingSubject, ROLLOUT_PATH_CALLS, describeQuestion, describeSubject, reviewSubject, ruleAllows } from "../access";
import type { KubeObject, ReadOnlyCluster, ResourceQuestion } from "../cluster";
import { DOCS, Finding, checks } from "../report";
import { CheckGroup, asArray, field, mapLimit, nameOf, namespaceOf, ref } from "../context";
import { selects } from "../selectors";
import { KYVERNO_RBAC, kyvernoRbacChecks } from "./kyvernoRbac";
import { PolicyRule, RELEASE_NAME } from "../../../components/argoRollouts";

const C = checks(DOCS.rbac, {
    "rbac.controller": "the controller's ServiceAccount may make each call of the Rollout path",
    "rbac.editor-cannot-promote": "a namespace editor cannot patch rollouts/status",
    "rbac.deployer-cannot-resume": "deployers cannot write rollouts/status (promote, resume, abort) or delete a Rollout in regulated namespaces",
    "rbac.deployer-cannot-edit-replicasets": "deployers cannot create, change or scale ReplicaSets in regulated namespaces",
    "rbac.deployer-cannot-edit-deployments": "deployers cannot change Deployments in regulated namespaces",
    "rbac.tenants-read-rollouts": "namespace viewers (and so editors and admins) may read Rollouts, AnalysisRuns, AnalysisTemplates and Experiments",
    "rbac.operators-outside-regulated": `no RoleBinding to ${TENANT_OPERATOR_ROLE} in a regulated namespace`,
    "rbac.approval-bindings": "every regulated namespace binds the platform's approver and deployer roles to exactly policy.regulated's groups",
});

export const RBAC = "/apis/rbac.authorization.k8s.io/v1";
export const CONCURRENCY = 8;

/** The platform's deployer role, which Kyverno binds in every regulated namespace (components/policy/approvalBindings.ts). */
export const DEPLOYER_ROLE = approvalRoleName("deployer");

/** Promote, resume and abort all write the Rollout's status subresource. */
const promote = (verb: string, namespace?: string): ResourceQuestion => ({
    verb,
    group: "argoproj.io",
    resource: "rollouts",
    subresource: "status",
    ...(namespace ? { namespace } : {}),
});
const STATUS_WRITES = [promote("patch"), promote("update")];

/** Most editor bindings whose subjects are asked about: enough to show a real person, few requests. */
const MAX_EDITOR_SUBJECTS = 20;

export type Binding = { namespace: string; name: string; roleRef: { kind: string; name: string }; subjects: BindingSubject[] };

export const bindings = (list: readonly KubeObject[]): Binding[] =>
    list.map((b) => ({
        namespace: namespaceOf(b),
        name: nameOf(b),
        roleRef: { kind: String(field(b, "roleRef", "kind") ?? ""), name: String(field(b, "roleRef", "name") ?? "") },
        subjects: asArray<BindingSubject>(b.subjects),
    }));

export const promotingRules = (rules: readonly PolicyRule[]): PolicyRule[] => rules.filter((r) => STATUS_WRITES.some((q) => ruleAllows(r, q)));

/** The namespaces `policy.regulated` applies to: tenant namespaces with its labels, not excluded. */
export function regulatedNamespaces(config: AddonConfig, namespaces: readonly KubeObject[]): string[] {
    if (!config.policy.regulated) return [];
    const selector = namespaceSelector(config.policy, "regulated");
    return namespaces.filter((n) => selects(selector, n.metadata?.labels ?? {})).map(nameOf);
}

/**
 * What a regulated deployer must be refused (ADR-056 D3): rollouts/status, deleting a Rollout (its recreated first version is fully
 * promoted, argo-rollouts v1.9.0 rollout/sync.go `shouldFullPromote`), writing ReplicaSets, and changing Deployments: a
 * `workloadRef` Rollout takes its pod template from one (argo-rollouts v1.9.0 rollout/templateref.go), which tier admission
 * refuses in regulated namespaces, and a Deployment beside the Rollouts would run a version no approval saw.
 */
type DeployerCheck = "rbac.deployer-cannot-resume" | "rbac.deployer-cannot-edit-replicasets" | "rbac.deployer-cannot-edit-deployments";
const DEPLOYER_REFUSED: Record<DeployerCheck, readonly ResourceQuestion[]> = {
    "rbac.deployer-cannot-resume": [...STATUS_WRITES, { verb: "delete", group: "argoproj.io", resource: "rollouts" }],
    "rbac.deployer-cannot-edit-replicasets": [
        ...["create", "update", "patch"].map((verb) => ({ verb, group: "apps", resource: "replicasets" })),
        ...["update", "patch"].map((verb) => ({ verb, group: "apps", resource: "replicasets", subresource: "scale" })),
    ],
    "rbac.deployer-cannot-edit-deployments": ["update", "patch"].map((verb) => ({ verb, group: "apps", resource: "deployments" })),
};

type Deployer = { subject: BindingSubject; namespace: string; via: string };

/** Deployers in regulated namespaces: each deployer group and each subject bound to the deployer role but ArgoCD's; or why there is none. */
function regulatedDeployers(config: AddonConfig, namespaces: readonly string[], all: readonly Binding[]): Deployer[] | string {
    const regulated = config.policy.regulated;
    if (!regulated) return "no policy.regulated in the stack: no regulated namespaces on this cluster";
    if (namespaces.length === 0) return "no namespace matches policy.regulated.namespaceLabels among the tenant namespaces";
    const argo = [...regulated.gitopsServiceAccounts, ...regulated.actionServiceAccounts];
    const exempt = (s: BindingSubject) =>
        (s.kind === "ServiceAccount" && argo.some((g) => g.name === s.name && g.namespace === s.namespace)) ||
        (s.kind === "User" && regulated.gitopsUsers.includes(s.name)) ||
        (s.kind === "Group" && [...regulated.gitopsGroups, ...regulated.deployerGroups].includes(s.name));
    const out = namespaces.flatMap((ns) => [
        ...regulated.deployerGroups.map((name) => ({ subject: { kind: "Group", name }, namespace: ns, via: "policy.regulated.deployerGroups" })),
        ...all
            .filter((b) => b.namespace === ns && b.roleRef.kind === "ClusterRole" && b.roleRef.name === DEPLOYER_ROLE)
            .flatMap((b) =>
                b.subjects
                    .filter((s) => !exempt({ ...s, namespace: s.namespace ?? ns }))
                    .map((subject) => ({ subject, namespace: ns, via: `RoleBinding ${ns}/${b.name} to ClusterRole ${b.roleRef.name}` })),
            ),
    ]);
    return out.length > 0 ? out : `policy.regulated.deployerGroups is empty and no RoleBinding to ${DEPLOYER_ROLE} in ${namespaces.join(", ")}`;
}

async function deployerCheck(cluster: ReadOnlyCluster, id: keyof typeof DEPLOYER_REFUSED, deployers: Deployer[] | string, namespaces: readonly string[]) {
    if (typeof deployers === "string") return C.skip(id, deployers);
    const why = (q: ResourceQuestion) =>
        q.resource === "deployments"
            ? ": a Deployment's pod template is outside the approval guard (a workloadRef Rollout, or a Deployment beside the Rollouts, runs a version nobody approved)"
            : q.resource === "replicasets"
              ? `: a ReplicaSet ${q.subresource === "scale" ? "scaled" : q.verb === "create" ? "created" : "edited"} beside a Rollout runs a version nobody approved (Argo Rollouts does not revert it)`
              : q.verb === "delete"
                ? ": GitOps would recreate it and its first version is promoted without a gate"
                : "";
    const findings: Finding[] = [];
    for (const { subject, namespace, via } of deployers) {
        for (const q of DEPLOYER_REFUSED[id]) {
            const d = await cluster.review(reviewSubject(subject, namespace), { ...q, namespace });
            if (d.allowed) {
                const target = `${q.resource}${q.subresource ? `/${q.subresource}` : ""}`;
                findings.push({
                    object: `${describeSubject(subject)} (${via})`,
                    found: `may ${q.verb} ${target} in ${namespace}${why(q)}${d.reason ? ` (${d.reason})` : ""}`,
                });
            }
        }
    }
    const where = `RBAC refuses ${deployers.length} deployer subject(s) in ${namespaces.join(", ")}`;
    const admission = {
        "rbac.deployer-cannot-resume":
            "spec changes and unpausing are refused by admission (restrict-regulated-rollout-changes, under kyverno.*), which access reviews cannot see",
        "rbac.deployer-cannot-edit-replicasets":
            "restrict-regulated-rollout-pods refuses the same at admission where Kyverno sees ReplicaSets (kyverno.resource-filters)",
        "rbac.deployer-cannot-edit-deployments": "require-prod-regulated-delivery refuses a Rollout's spec.workloadRef at admission",
    }[id];
    return C.done(id, findings, `${where}; ${admission}`);
}

/**
 * The RoleBindings Kyverno generates in each regulated namespace (components/policy/approvalBindings.ts), as the generator writes
 * them: without one the approvers cannot promote or abort there (ADR-056 D3); one naming other groups hands the approval to them.
 */
function approvalBindingCheck(config: AddonConfig, regulated: readonly string[], all: readonly Binding[]) {
    const id = "rbac.approval-bindings";
    const cfg = config.policy;
    if (absent(cfg, "prod"))
        return C.skip(id, "declared absent: the stack declares no prod namespaces on this cluster (policy.absentClasses), so none is regulated");
    if (!cfg.regulated) return C.skip(id, "no policy.regulated in the stack: no regulated namespaces on this cluster");
    if (regulated.length === 0) return C.skip(id, "no namespace matches policy.regulated.namespaceLabels among the tenant namespaces");
    const sides = approvalSides(cfg.regulated);
    const fix =
        cfg.kyvernoApi === "kyverno.io/v1"
            ? `the ClusterPolicy ${POLICY_NAMES.approvalBindings} restores it while Kyverno runs: see kyverno.policies-ready`
            : `the GeneratingPolicy ${POLICY_NAMES.approvalBindings} does not synchronize: delete the binding, then label the namespace so Kyverno writes it again`;
    const findings = regulated.flatMap((ns) =>
        sides.flatMap(({ side, groups }) => {
            const name = approvalRoleName(side);
            const b = all.find((x) => x.namespace === ns && x.name === name);
            const [have, want] = [b?.subjects.map(describeSubject).sort() ?? [], groups.map((g) => describeSubject({ kind: "Group", name: g })).sort()];
            const found = !b
                ? `missing in ${ns}: the ${side}s (${want.join(", ")}) get no ClusterRole ${name} there`
                : b.roleRef.kind !== "ClusterRole" || b.roleRef.name !== name
                  ? `binds ${b.roleRef.kind} ${b.roleRef.name}, not ClusterRole ${name}`
                  : have.join() !== want.join()
                    ? `binds ${have.join(", ") || "no subject"}, not exactly policy.regulated.${side}Groups (${want.join(", ")})`
                    : undefined;
            return found ? [{ object: `RoleBinding ${ns}/${name}`, found: `${found}; ${fix}` }] : [];
        }),
    );
    return C.done(id, findings, `${regulated.length * sides.length} binding(s) in ${regulated.length} regulated namespace(s): ${regulated.join(", ")}`);
}

/** Tenants read their Rollouts: the built-in `view` ClusterRole, as aggregated, grants get, list and watch on each. */
async function tenantReadCheck(cluster: ReadOnlyCluster) {
    const rules = asArray<PolicyRule>((await cluster.get(`${RBAC}/clusterroles/view`))?.rules);
    const missing = ["rollouts", "analysisruns", "analysistemplates", "experiments"].flatMap((resource) =>
        ["get", "list", "watch"]
            .filter((verb) => !rules.some((r) => ruleAllows(r, { verb, group: "argoproj.io", resource })))
            .map((verb) => `${verb} ${resource}`),
    );
    if (missing.length === 0) return C.done("rbac.tenants-read-rollouts", []);
    const ours = await cluster.get(`${RBAC}/clusterroles/${encodeURIComponent(TENANT_VIEW_ROLE)}`);
    return C.done("rbac.tenants-read-rollouts", [
        {
            object: ref("ClusterRole", undefined, "view"),
            found: `does not grant ${missing.join(", ")} on argoproj.io${ours ? "" : `, and ClusterRole ${TENANT_VIEW_ROLE} does not exist`}: namespace viewers, editors and admins cannot see their Rollouts`,
        },
    ]);
}

/** Namespace editors: the aggregated `edit` ClusterRole must not promote (the chart's aggregate roles would add rollouts/status). */
async function editorCheck(cluster: ReadOnlyCluster, all: readonly Binding[]) {
    const findings: Finding[] = [];
    if (promotingRules(asArray<PolicyRule>((await cluster.get(`${RBAC}/clusterroles/edit`))?.rules)).length > 0) {
        const aggregated = (await cluster.list(`${RBAC}/clusterroles`, "rbac.authorization.k8s.io/aggregate-to-edit=true")) ?? [];
        const culprits = aggregated.filter((r) => promotingRules(asArray<PolicyRule>(r.rules)).length > 0).map((r) => `ClusterRole ${nameOf(r)}`);
        findings.push({
            object: ref("ClusterRole", undefined, "edit"),
            found: `grants patch/update on argoproj.io rollouts/status${culprits.length ? `, aggregated from ${culprits.join(", ")}` : ""}: every namespace editor can promote`,
        });
    }
    const editors = all.filter((b) => b.roleRef.kind === "ClusterRole" && b.roleRef.name === "edit").slice(0, MAX_EDITOR_SUBJECTS);
    for (const b of editors.filter((x) => x.subjects.length > 0)) {
        const s = b.subjects[0];
        const d = await cluster.review(reviewSubject(s, b.namespace), promote("patch", b.namespace));
        // Only a grant through `edit` counts here: an editor may also hold an approver Role.
        if (d.allowed && (d.reason ?? "").includes('ClusterRole "edit"')) {
            findings.push({
                object: `${describeSubject(s)} (RoleBinding ${b.namespace}/${b.name})`,
                found: `may patch rollouts/status in ${b.namespace}: ${d.reason}`,
            });
        }
    }
    const note = editors.length ? `asked for ${editors.length} editor binding(s)` : "no RoleBinding to edit found; ClusterRole edit checked";
    return C.done("rbac.editor-cannot-promote", findings, note);
}

export const rbacChecks: CheckGroup = {
    readme: C.readme,
    ids: ["rbac.controller", ...KYVERNO_RBAC.ids, ...C.ids.slice(1)],
    run: async (ctx) => {
        const { config, cluster } = ctx;
        const sa: BindingSubject = { kind: "ServiceAccount", name: RELEASE_NAME, namespace: config.controller.namespace };
        const calls = ROLLOUT_PATH_CALLS.map((c) => ({ ...c, namespace: c.scope === "controller" ? config.controller.namespace : undefined }));
        const answers = await mapLimit(calls, CONCURRENCY, async (q) => ({ q, d: await cluster.review(reviewSubject(sa), q) }));
        const refused = answers
            .filter((a) => !a.d.allowed)
            .map((a) => ({ object: describeSubject(sa), found: `may not ${describeQuestion(a.q)} (${a.q.source})${a.d.reason ? `: ${a.d.reason}` : ""}` }));
        const all = bindings((await cluster.list(`${RBAC}/rolebindings`)) ?? []);
        const regulated = config.policy.regulated ? regulatedNamespaces(config, (await cluster.list("/api/v1/namespaces")) ?? []) : [];
        const deployers = regulatedDeployers(config, regulated, all);
        const operators = all.filter((b) => b.roleRef.kind === "ClusterRole" && b.roleRef.name === TENANT_OPERATOR_ROLE);
        const operatorFindings = operators
            .filter((b) => regulated.includes(b.namespace))
            .map((b) => ({
                object: `RoleBinding ${b.namespace}/${b.name}`,
                found: `binds ${TENANT_OPERATOR_ROLE} in regulated namespace ${b.namespace}: its subjects may write rollouts/status there, the approval; remove ${b.namespace} from controller.tenantOperators`,
            }));
        return [
            C.done("rbac.controller", refused, `${calls.length} calls`),
            ...(await kyvernoRbacChecks(ctx)),
            await editorCheck(cluster, all),
            await deployerCheck(cluster, "rbac.deployer-cannot-resume", deployers, regulated),
            await deployerCheck(cluster, "rbac.deployer-cannot-edit-replicasets", deployers, regulated),
            await deployerCheck(cluster, "rbac.deployer-cannot-edit-deployments", deployers, regulated),
            await tenantReadCheck(cluster),
            config.policy.regulated
                ? C.done(
                      "rbac.operators-outside-regulated",
                      operatorFindings,
                      `${operators.length} operator binding(s), none in ${regulated.length} regulated namespace(s)`,
                  )
                : C.skip(
                      "rbac.operators-outside-regulated",
                      `no policy.regulated in the stack: no regulated namespaces on this cluster (${operators.length} operator binding(s))`,
                  ),
            approvalBindingCheck(config, regulated, all),
        ];
    },
};
