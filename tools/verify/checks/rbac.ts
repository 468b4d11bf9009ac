/**
 * RBAC as the API server decides it: SubjectAccessReviews for the controller, Kyverno's
 * controllers, namespace editors and regulated apps' deployers (ADR-056 D2, D3, ADR-040/049).
 */
import { approvalRoles } from "../../../components/delivery/strategy";
import { pdbGenerationRules } from "../../../components/policy";
import { PolicyRule } from "../../../components/rollouts/rbac";
import { RELEASE_NAME } from "../../../components/rollouts/values";
import { BindingSubject, ROLLOUT_PATH_CALLS, describeQuestion, describeSubject, reviewSubject, ruleAllows } from "../access";
import type { KubeObject, ResourceQuestion } from "../cluster";
import { CheckGroup, asArray, field, mapLimit, nameOf, namespaceOf, ref } from "../context";
import { CheckResult, Finding, README, outcome, skipped } from "../report";

const RBAC = "/apis/rbac.authorization.k8s.io/v1";
const CONCURRENCY = 8;

/**
 * Kyverno's controllers, by the component label its chart gives their Deployments
 * (kyverno charts/kyverno templates/<component>/_helpers.tpl: `app.kubernetes.io/component`;
 * service accounts `<release>-<component>` unless overridden, so they are read from the
 * Deployments). The background controller generates (PDBs) and the reports controller runs
 * background scans: both read the trigger resources. Kyverno's own status controller checks
 * get/list/watch of every matched resource before it reports a policy ready
 * (pkg/controllers/policystatus/controller.go `permissionsCheck`).
 */
export const KYVERNO_READERS = ["background-controller", "reports-controller"] as const;
const READ = ["get", "list", "watch"];

/** `<app>-rollout-deployer`: the strategy library names a regulated app's deployer Role this way. */
export const DEPLOYER_ROLE_SUFFIX = approvalRoles({ name: "", namespace: "" }).deployer.metadata.name;

/** Verbs that promote, resume or abort: all of them write the Rollout's status subresource. */
const STATUS_WRITES = ["patch", "update"];
const promoteQuestion = (verb: string, namespace?: string): ResourceQuestion => ({ verb, group: "argoproj.io", resource: "rollouts", subresource: "status", ...(namespace ? { namespace } : {}) });

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

export const rbacChecks: CheckGroup = async ({ config, cluster, options }) => {
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
            README.rbac,
            controllerAnswers.filter((a) => !a.d.allowed).map((a) => ({ object: describeSubject(sa), found: `may not ${describeQuestion(a.q)} (${a.q.source})${a.d.reason ? `: ${a.d.reason}` : ""}` })),
        ),
    );

    // Kyverno's controllers: their service accounts, from their Deployments.
    const kyvernoDeployments = (await cluster.list(`/apis/apps/v1/namespaces/${options.kyvernoNamespace}/deployments`)) ?? [];
    const kyvernoSa = new Map<string, BindingSubject>();
    const missing: Finding[] = [];
    for (const component of KYVERNO_READERS) {
        const d = kyvernoDeployments.find((x) => x.metadata?.labels?.["app.kubernetes.io/component"] === component);
        const name = field(d, "spec", "template", "spec", "serviceAccountName");
        if (!d || typeof name !== "string") {
            missing.push({ object: `namespace ${options.kyvernoNamespace}`, found: `no Kyverno Deployment labelled app.kubernetes.io/component=${component} (another namespace? pass --kyverno-namespace)` });
        } else {
            kyvernoSa.set(component, { kind: "ServiceAccount", name, namespace: options.kyvernoNamespace });
        }
    }
    const askAll = async (subject: BindingSubject, questions: ResourceQuestion[]): Promise<Finding[]> => {
        const answers = await mapLimit(questions, CONCURRENCY, async (q) => ({ q, d: await cluster.review(reviewSubject(subject), q) }));
        return answers.filter((a) => !a.d.allowed).map((a) => ({ object: describeSubject(subject), found: `may not ${describeQuestion(a.q)}` }));
    };
    const readRollouts = READ.map((verb) => ({ verb, group: "argoproj.io", resource: "rollouts" }));
    const readers: Finding[] = [...missing];
    for (const subject of kyvernoSa.values()) {
        readers.push(...(await askAll(subject, readRollouts)));
    }
    results.push(outcome("rbac.kyverno-reads-rollouts", "Kyverno's background and reports controllers may read Rollouts in every namespace", README.rbac, readers));

    const background = kyvernoSa.get("background-controller");
    const pdbQuestions = pdbGenerationRules().flatMap((r) => r.apiGroups.flatMap((group) => r.resources.flatMap((resource) => r.verbs.map((verb) => ({ verb, group, resource })))));
    results.push(
        background
            ? outcome("rbac.kyverno-generates-pdbs", "Kyverno's background controller may manage the PodDisruptionBudgets it generates", README.rbac, await askAll(background, pdbQuestions))
            : outcome("rbac.kyverno-generates-pdbs", "Kyverno's background controller may manage the PodDisruptionBudgets it generates", README.rbac, missing.filter((f) => f.found.includes("background-controller"))),
    );

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
                editors.push({ object: `${describeSubject(s)} (RoleBinding ${b.namespace}/${b.name})`, found: `may patch rollouts/status in ${b.namespace}: ${d.reason}` });
            }
        }
    }
    results.push(
        outcome(
            "rbac.editor-cannot-promote",
            "a namespace editor cannot patch rollouts/status",
            README.rbac,
            editors,
            editorBindings.length ? `asked for ${editorBindings.length} editor binding(s)` : "no RoleBinding to edit found; ClusterRole edit checked",
        ),
    );

    // Regulated apps: every subject bound to a `<app>-rollout-deployer` Role.
    const deployerBindings = allBindings.filter((b) => b.roleRef.kind === "Role" && b.roleRef.name.endsWith(DEPLOYER_ROLE_SUFFIX));
    if (deployerBindings.length === 0) {
        results.push(skipped("rbac.deployer-cannot-resume", "deployers cannot resume or promote in regulated namespaces", README.rbac, `no RoleBinding to a *${DEPLOYER_ROLE_SUFFIX} Role: no regulated app on this cluster`));
    } else {
        const deployers: Finding[] = [];
        for (const b of deployerBindings) {
            for (const s of b.subjects) {
                for (const verb of STATUS_WRITES) {
                    const d = await cluster.review(reviewSubject(s, b.namespace), promoteQuestion(verb, b.namespace));
                    if (d.allowed) {
                        deployers.push({ object: `${describeSubject(s)} (deployer of Role ${b.namespace}/${b.roleRef.name})`, found: `may ${verb} rollouts/status in ${b.namespace}${d.reason ? `: ${d.reason}` : ""}` });
                    }
                }
            }
        }
        const namespaces = [...new Set(deployerBindings.map((b) => b.namespace))];
        results.push(outcome("rbac.deployer-cannot-resume", "deployers cannot resume or promote in regulated namespaces", README.rbac, deployers, `regulated namespaces: ${namespaces.join(", ")}`));
    }
    return results;
};
