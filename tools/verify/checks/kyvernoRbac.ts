/** Kyverno's RBAC (ADR-056 D2): the ClusterRoles the policy stage labels for aggregation, and access reviews of its controllers. */
import {
    KYVERNO_AGGREGATE_LABELS,
    KYVERNO_ROLES,
    KyvernoController,
    KyvernoRole,
    kyvernoRoleName,
    kyvernoRoles,
    pdbGenerationRules,
} from "../../../components/policy";
import { BindingSubject, describeQuestion, describeSubject, reviewSubject, ruleAllows } from "../access";
import type { KubeObject, ResourceQuestion } from "../cluster";
import { DOCS, Finding, checks } from "../report";
import { VerifyContext, asArray, field, mapLimit, ref } from "../context";
import { PolicyRule } from "../../../components/argoRollouts";

export const KYVERNO_RBAC = checks(DOCS.rbac, {
    "rbac.kyverno-reads-rollouts": "Kyverno's background and reports controllers may read Rollouts in every namespace, through the stage's aggregated role",
    "rbac.kyverno-reads-approval-subresources":
        "Kyverno's reports controller may read the subresources the approval guards match (Rollout status, Pod ephemeral containers), so Kyverno reports the guards ready",
    "rbac.kyverno-generates-pdbs": "Kyverno's background controller may manage the PodDisruptionBudgets it generates",
    "rbac.kyverno-policy-lookups": "Kyverno's controllers may list the HorizontalPodAutoscalers and PodDisruptionBudgets the floor and the generator look up",
});
type Id = (typeof KYVERNO_RBAC.ids)[number];

/** Kyverno's controllers by their chart's `app.kubernetes.io/component` label; their ServiceAccounts are read from the Deployments. */
export const KYVERNO_COMPONENTS: Readonly<Record<KyvernoController, string>> = {
    admission: "admission-controller",
    background: "background-controller",
    reports: "reports-controller",
};

export const questionsOf = (rules: readonly PolicyRule[]): ResourceQuestion[] =>
    rules.flatMap((r) => r.apiGroups.flatMap((group) => r.resources.flatMap((resource) => r.verbs.map((verb) => ({ verb, group, resource })))));

/** A declared Kyverno role's live ClusterRole: missing, without its `rbac.kyverno.io/aggregate-to-<controller>` label, or granting less. */
export function kyvernoRoleProblems(role: KyvernoRole, live: KubeObject | undefined): string[] {
    if (!live) return ["not found: the policy stage declares it; run pulumi up"];
    const labels = live.metadata?.labels ?? {};
    const rules = asArray<PolicyRule>(live.rules);
    return [
        ...role.controllers
            .filter((c) => labels[KYVERNO_AGGREGATE_LABELS[c]] !== "true")
            .map((c) => `lacks the label ${KYVERNO_AGGREGATE_LABELS[c]}: "true", so Kyverno's ${KYVERNO_COMPONENTS[c]} role does not aggregate it`),
        ...questionsOf(role.rules)
            .filter((q) => !rules.some((r) => ruleAllows(r, q)))
            .map((q) => `does not grant ${describeQuestion(q)}`),
    ];
}

/** Each check's role, the controllers it serves without one, and why a mode declares none. */
const SPECS: Record<Id, { role: string; controllers: KyvernoController[]; rules?: () => PolicyRule[]; notDeclared?: string }> = {
    "rbac.kyverno-reads-rollouts": { role: KYVERNO_ROLES.readRollouts, controllers: ["background", "reports"] },
    "rbac.kyverno-reads-approval-subresources": {
        role: KYVERNO_ROLES.readApprovalSubresources,
        controllers: ["reports"],
        notDeclared: "the approval guards are CEL policies only with policy.regulated and policy.kyvernoApi policies.kyverno.io/v1",
    },
    // In complement mode the platform's generator needs the PDB writes as much: asked whoever grants them.
    "rbac.kyverno-generates-pdbs": { role: KYVERNO_ROLES.generatePdb, controllers: ["background"], rules: pdbGenerationRules },
    "rbac.kyverno-policy-lookups": { role: KYVERNO_ROLES.policyLookups, controllers: ["admission", "background", "reports"] },
};

export async function kyvernoRbacChecks({ config, cluster, options }: VerifyContext) {
    const mode = config.policy.availabilityPolicies;
    const declared = kyvernoRoles(config.policy);
    const ns = options.kyvernoNamespace;
    const deployments = (await cluster.list(`/apis/apps/v1/namespaces/${ns}/deployments`)) ?? [];
    const account = (c: KyvernoController): BindingSubject | Finding => {
        const d = deployments.find((x) => x.metadata?.labels?.["app.kubernetes.io/component"] === KYVERNO_COMPONENTS[c]);
        const name = field(d, "spec", "template", "spec", "serviceAccountName");
        return typeof name === "string"
            ? { kind: "ServiceAccount", name, namespace: ns }
            : {
                  object: `namespace ${ns}`,
                  found: `no Kyverno Deployment labelled app.kubernetes.io/component=${KYVERNO_COMPONENTS[c]} (another namespace? pass --kyverno-namespace)`,
              };
    };
    const results = [];
    for (const id of KYVERNO_RBAC.ids) {
        const spec = SPECS[id];
        const role = declared.find((r) => r.name === spec.role);
        if (!role && !spec.rules) {
            const why = `policy.availabilityPolicies is ${mode}: the stack declares no ${kyvernoRoleName({ name: spec.role })}; the platform's policies bring their own RBAC`;
            results.push(KYVERNO_RBAC.skip(id, spec.notDeclared ?? why));
            continue;
        }
        const findings: Finding[] = [];
        if (role) {
            const name = kyvernoRoleName(role);
            const live = await cluster.get(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${encodeURIComponent(name)}`);
            findings.push(...kyvernoRoleProblems(role, live).map((found) => ({ object: ref("ClusterRole", undefined, name), found })));
        }
        const controllers = role?.controllers ?? spec.controllers;
        const questions = questionsOf(role?.rules ?? spec.rules?.() ?? []);
        for (const c of controllers) {
            const sa = account(c);
            if ("found" in sa) {
                findings.push(sa);
                continue;
            }
            const answers = await mapLimit(questions, 8, async (q) => ({ q, allowed: (await cluster.review(reviewSubject(sa), q)).allowed }));
            findings.push(...answers.filter((a) => !a.allowed).map((a) => ({ object: describeSubject(sa), found: `may not ${describeQuestion(a.q)}` })));
        }
        const note = role
            ? `${kyvernoRoleName(role)}, aggregated into ${controllers.map((c) => KYVERNO_COMPONENTS[c]).join(", ")}`
            : `availabilityPolicies ${mode}: granted by the platform, not by this stack`;
        results.push(KYVERNO_RBAC.done(id, findings, note));
    }
    return results;
}
