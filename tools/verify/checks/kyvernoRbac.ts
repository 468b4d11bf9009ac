/**
 * Kyverno's RBAC (ADR-056 D2): the ClusterRoles the policy stage labels for Kyverno's aggregation,
 * and SubjectAccessReviews for Kyverno's controllers on what the policies need.
 */
import type { AvailabilityPolicies } from "../../../components/policy/config";
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
import type { KubeObject, ReadOnlyCluster, ResourceQuestion } from "../cluster";
import { CheckResult, Finding, DOCS, outcome, skipped } from "../report";
import { VerifyContext, asArray, field, mapLimit, ref } from "../context";
import { PolicyRule } from "../../../components/argoRollouts";

const RBAC = "/apis/rbac.authorization.k8s.io/v1";
const CONCURRENCY = 8;

/**
 * Kyverno's controllers by the component label its chart gives their Deployments (kyverno
 * charts/kyverno templates/<component>/_helpers.tpl: `app.kubernetes.io/component`; service
 * accounts `<release>-<component>` unless overridden, so they are read from the Deployments).
 */
export const KYVERNO_COMPONENTS: Readonly<Record<KyvernoController, string>> = {
    admission: "admission-controller",
    background: "background-controller",
    reports: "reports-controller",
};

export function questionsOf(rules: readonly PolicyRule[]): ResourceQuestion[] {
    return rules.flatMap((r) => r.apiGroups.flatMap((group) => r.resources.flatMap((resource) => r.verbs.map((verb) => ({ verb, group, resource })))));
}

/**
 * What is wrong with the live ClusterRole of a role the policy stage declares for Kyverno: missing,
 * without the aggregation label of a controller it is meant for (Kyverno's chart aggregates every
 * ClusterRole labelled `rbac.kyverno.io/aggregate-to-<controller>: "true"` into that controller's
 * role), or granting less than declared.
 */
export function kyvernoRoleProblems(role: KyvernoRole, live: KubeObject | undefined): string[] {
    if (!live) {
        return ["not found: the policy stage declares it; run pulumi up"];
    }
    const out: string[] = [];
    const labels = live.metadata?.labels ?? {};
    for (const c of role.controllers) {
        if (labels[KYVERNO_AGGREGATE_LABELS[c]] !== "true") {
            out.push(`lacks the label ${KYVERNO_AGGREGATE_LABELS[c]}: "true", so Kyverno's ${KYVERNO_COMPONENTS[c]} role does not aggregate it`);
        }
    }
    const rules = asArray<PolicyRule>(live.rules);
    for (const q of questionsOf(role.rules)) {
        if (!rules.some((r) => ruleAllows(r, q))) {
            out.push(`does not grant ${describeQuestion(q)}`);
        }
    }
    return out;
}

/** Kyverno's controllers' ServiceAccounts, read from their Deployments. */
async function kyvernoAccounts(
    cluster: ReadOnlyCluster,
    namespace: string,
): Promise<{ accounts: Map<KyvernoController, BindingSubject>; missing: Map<KyvernoController, Finding> }> {
    const deployments = (await cluster.list(`/apis/apps/v1/namespaces/${namespace}/deployments`)) ?? [];
    const accounts = new Map<KyvernoController, BindingSubject>();
    const missing = new Map<KyvernoController, Finding>();
    for (const [controller, component] of Object.entries(KYVERNO_COMPONENTS) as [KyvernoController, string][]) {
        const d = deployments.find((x) => x.metadata?.labels?.["app.kubernetes.io/component"] === component);
        const name = field(d, "spec", "template", "spec", "serviceAccountName");
        if (!d || typeof name !== "string") {
            missing.set(controller, {
                object: `namespace ${namespace}`,
                found: `no Kyverno Deployment labelled app.kubernetes.io/component=${component} (another namespace? pass --kyverno-namespace)`,
            });
        } else {
            accounts.set(controller, { kind: "ServiceAccount", name, namespace });
        }
    }
    return { accounts, missing };
}

async function askAll(cluster: ReadOnlyCluster, subject: BindingSubject, questions: ResourceQuestion[]): Promise<Finding[]> {
    const answers = await mapLimit(questions, CONCURRENCY, async (q) => ({ q, d: await cluster.review(reviewSubject(subject), q) }));
    return answers.filter((a) => !a.d.allowed).map((a) => ({ object: describeSubject(subject), found: `may not ${describeQuestion(a.q)}` }));
}

/**
 * The checks of Kyverno's RBAC, one per role the policy stage can declare. A role this mode does
 * not declare is skipped, except the PDB writes: in `complement` mode the platform's generator
 * needs them as much, so the background controller is still asked (whoever grants them).
 */
export async function kyvernoRbacChecks(ctx: VerifyContext): Promise<CheckResult[]> {
    const { config, cluster, options } = ctx;
    const mode: AvailabilityPolicies = config.policy.availabilityPolicies;
    const declared = kyvernoRoles(config.policy);
    const { accounts, missing } = await kyvernoAccounts(cluster, options.kyvernoNamespace);
    const specs: {
        id: string;
        role: string;
        what: string;
        controllers: KyvernoController[];
        rules?: PolicyRule[];
        askEvenIfUndeclared?: boolean;
        notDeclared?: string;
    }[] = [
        {
            id: "rbac.kyverno-reads-rollouts",
            role: KYVERNO_ROLES.readRollouts,
            what: "Kyverno's background and reports controllers may read Rollouts in every namespace, through the stage's aggregated role",
            controllers: ["background", "reports"],
        },
        {
            id: "rbac.kyverno-reads-approval-subresources",
            role: KYVERNO_ROLES.readApprovalSubresources,
            what: "Kyverno's reports controller may read the subresources the approval guards match (Rollout status, Pod ephemeral containers), so Kyverno reports the guards ready",
            controllers: ["reports"],
            notDeclared: "the approval guards are CEL policies only with policy.regulated and policy.kyvernoApi policies.kyverno.io/v1",
        },
        {
            id: "rbac.kyverno-generates-pdbs",
            role: KYVERNO_ROLES.generatePdb,
            what: "Kyverno's background controller may manage the PodDisruptionBudgets it generates",
            controllers: ["background"],
            rules: pdbGenerationRules(),
            askEvenIfUndeclared: true,
        },
        {
            id: "rbac.kyverno-policy-lookups",
            role: KYVERNO_ROLES.policyLookups,
            what: "Kyverno's controllers may list the HorizontalPodAutoscalers and PodDisruptionBudgets the floor and the generator look up",
            controllers: ["admission", "background", "reports"],
        },
    ];
    const results: CheckResult[] = [];
    for (const spec of specs) {
        const role = declared.find((r) => r.name === spec.role);
        if (!role && !spec.askEvenIfUndeclared) {
            results.push(
                skipped(
                    spec.id,
                    spec.what,
                    DOCS.rbac,
                    spec.notDeclared ??
                        `policy.availabilityPolicies is ${mode}: the stack declares no ${kyvernoRoleName({ name: spec.role })}; the platform's policies bring their own RBAC`,
                ),
            );
            continue;
        }
        const findings: Finding[] = [];
        if (role) {
            const live = await cluster.get(`${RBAC}/clusterroles/${encodeURIComponent(kyvernoRoleName(role))}`);
            findings.push(...kyvernoRoleProblems(role, live).map((found) => ({ object: ref("ClusterRole", undefined, kyvernoRoleName(role)), found })));
        }
        const controllers = role?.controllers ?? spec.controllers;
        const questions = questionsOf(role?.rules ?? spec.rules ?? []);
        for (const c of controllers) {
            const sa = accounts.get(c);
            if (!sa) {
                findings.push(missing.get(c)!);
            } else {
                findings.push(...(await askAll(cluster, sa, questions)));
            }
        }
        const note = role
            ? `${kyvernoRoleName(role)}, aggregated into ${controllers.map((c) => KYVERNO_COMPONENTS[c]).join(", ")}`
            : `availabilityPolicies ${mode}: granted by the platform, not by this stack`;
        results.push(outcome(spec.id, spec.what, DOCS.rbac, findings, note));
    }
    return results;
}
