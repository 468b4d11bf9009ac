/**
 * The admission layer made Rollout-aware (ADR-056 D2, D8): this stack's Kyverno policies exist,
 * Kyverno reports them ready, they enforce what the stack configures and match what it declares,
 * and no workload ends up with two PodDisruptionBudgets.
 */
import { POLICY_NAMES, policyContext } from "../../../components/policy";
import { KyvernoPolicy, kyvernoPolicies } from "../../../components/policy/kyverno";
import type { KubeObject } from "../cluster";
import { CheckGroup, asArray, conditions, condition, describeCondition, field, nameOf, namespaceOf, ref } from "../context";
import { Finding, README, outcome } from "../report";
import { LabelSelector, pdbSelects } from "../selectors";

const CEL_PLURALS: Record<string, string> = {
    ValidatingPolicy: "validatingpolicies",
    MutatingPolicy: "mutatingpolicies",
    GeneratingPolicy: "generatingpolicies",
};

export function policyPath(p: Pick<KyvernoPolicy, "apiVersion" | "kind"> & { metadata: { name: string } }): string {
    return p.kind === "ClusterPolicy" ? `/apis/kyverno.io/v1/clusterpolicies/${p.metadata.name}` : `/apis/${p.apiVersion}/${CEL_PLURALS[p.kind]}/${p.metadata.name}`;
}

/** Label Kyverno puts on what it generates (kyverno pkg/background/common/constants.go). */
export const GENERATED_BY_POLICY = "generate.kyverno.io/policy-name";

/**
 * Why Kyverno does not report `live` ready. CEL policies (policies.kyverno.io, Kyverno >= 1.17):
 * `status.conditionStatus.ready` is true only when every condition is True; the status controller
 * sets WebhookConfigured and RBACPermissionsGranted (kyverno pkg/controllers/policystatus,
 * kyverno/api ConditionStatus). ClusterPolicy: the `Ready` condition (api/kyverno/v1
 * policy_status.go). A CEL policy Kyverno cannot compile never exists: its policy webhook
 * (failurePolicy Fail) compiles every CEL policy on create and update and refuses it with the
 * compile error (pkg/webhooks/policy/handlers.go, pkg/cel/policies/*\/validate.go).
 */
export function notReady(live: KubeObject | undefined, declared: KyvernoPolicy): string[] {
    if (!live) {
        return [
            declared.kind === "ClusterPolicy"
                ? "not found: run pulumi up (the policy stage declares it)"
                : "not found: Kyverno refuses a CEL policy it cannot compile, so look for the compile error in the last pulumi up; otherwise run pulumi up",
        ];
    }
    if (declared.kind === "ClusterPolicy") {
        const c = condition(conditions(live), "Ready");
        return c?.status === "True" ? [] : [describeCondition(c, "Ready")];
    }
    const status = field(live, "status", "conditionStatus");
    const ready = field(status, "ready");
    const conds = conditions(live, (s) => field(s, "conditionStatus", "conditions"));
    const out = conds.filter((c) => c.status !== "True").map((c) => describeCondition(c, c.type));
    if (ready === undefined) {
        out.unshift("no status.conditionStatus.ready: Kyverno has not reported on it (Kyverno >= 1.17 running?)");
    } else if (ready !== true && out.length === 0) {
        out.push("status.conditionStatus.ready is false");
    }
    const message = field(status, "message");
    if (ready !== true && typeof message === "string" && message) {
        out.push(message);
    }
    return out;
}

/** What a policy matches: `group/resource` (CEL) or `group/version/Kind` (ClusterPolicy) entries. */
export function matchedTargets(policy: unknown, kind: string): string[] {
    if (kind === "ClusterPolicy") {
        return asArray(field(policy, "spec", "rules")).flatMap((r) => asArray(field(r, "match", "any")).flatMap((a) => asArray<string>(field(a, "resources", "kinds"))));
    }
    return asArray(field(policy, "spec", "matchConstraints", "resourceRules")).flatMap((r) =>
        asArray<string>(field(r, "apiGroups")).flatMap((g) => asArray<string>(field(r, "resources")).map((res) => `${g}/${res}`)),
    );
}

/** The failure action of every validate rule of a ClusterPolicy; Kyverno's default is Audit. */
function clusterPolicyActions(policy: unknown): string[] {
    const fallback = field(policy, "spec", "validationFailureAction") ?? "Audit";
    return asArray(field(policy, "spec", "rules"))
        .filter((r) => field(r, "validate") !== undefined)
        .map((r) => String(field(r, "validate", "failureAction") ?? fallback));
}

/** How `live` differs from `declared` in what it enforces and what it matches. */
export function notEnforced(live: KubeObject | undefined, declared: KyvernoPolicy): string[] {
    if (!live) {
        return ["not found"];
    }
    const out: string[] = [];
    const liveTargets = new Set(matchedTargets(live, declared.kind));
    for (const t of matchedTargets(declared, declared.kind)) {
        if (!liveTargets.has(t)) {
            out.push(`does not match ${t}`);
        }
    }
    if (declared.kind === "ClusterPolicy") {
        const want = clusterPolicyActions(declared);
        const have = clusterPolicyActions(live);
        if (want.length > 0 && (have.length !== want.length || have.some((a) => a !== want[0]))) {
            out.push(`validate rules act as ${have.join(", ") || "nothing"}, the stack configures ${want[0]}`);
        }
        return out;
    }
    if (declared.kind === "ValidatingPolicy") {
        const want = [...declared.spec.validationActions].sort().join(",");
        const have = asArray<string>(field(live, "spec", "validationActions")).sort().join(",");
        if (want !== have) {
            out.push(`validationActions are [${have}], the stack configures [${want}]`);
        }
    }
    if (declared.kind === "ValidatingPolicy" || declared.kind === "MutatingPolicy") {
        const have = field(live, "spec", "failurePolicy");
        if (have !== declared.spec.failurePolicy) {
            out.push(`failurePolicy is ${String(have)}, the stack declares ${declared.spec.failurePolicy}`);
        }
    }
    return out;
}

/** Whether a Kyverno policy of either API generates PodDisruptionBudgets. */
export function generatesPdbs(policy: KubeObject): boolean {
    if (policy.kind === "ClusterPolicy") {
        return asArray(field(policy, "spec", "rules")).some((r) => field(r, "generate", "kind") === "PodDisruptionBudget");
    }
    // A GeneratingPolicy builds its objects in CEL; the kind appears in the expressions' text.
    return /PodDisruptionBudget|poddisruptionbudgets/.test(JSON.stringify(field(policy, "spec") ?? {}));
}

export interface Workload {
    kind: string;
    namespace: string;
    name: string;
    podLabels: Record<string, string>;
}

/** Workloads whose pods two or more PodDisruptionBudgets select (evictions of those pods fail). */
export function doublyCovered(workloads: readonly Workload[], pdbs: readonly KubeObject[]): Finding[] {
    const out: Finding[] = [];
    for (const w of workloads) {
        const covering = pdbs.filter((p) => namespaceOf(p) === w.namespace && pdbSelects(field(p, "spec", "selector") as LabelSelector | undefined, w.podLabels));
        if (covering.length > 1) {
            const names = covering.map((p) => `${nameOf(p)}${p.metadata?.labels?.[GENERATED_BY_POLICY] ? ` (generated by ${p.metadata.labels[GENERATED_BY_POLICY]})` : ""}`);
            out.push({ object: ref(w.kind, w.namespace, w.name), found: `its pods are selected by ${covering.length} PodDisruptionBudgets: ${names.join(", ")}; evictions of them fail` });
        }
    }
    return out;
}

function workloads(kind: string, list: readonly KubeObject[] | undefined): Workload[] {
    return (list ?? [])
        .filter((o) => field(o, "spec", "template", "metadata", "labels") !== undefined)
        .map((o) => ({ kind, namespace: namespaceOf(o), name: nameOf(o), podLabels: field(o, "spec", "template", "metadata", "labels") as Record<string, string> }));
}

export const kyvernoChecks: CheckGroup = async ({ config, cluster }) => {
    const declared = kyvernoPolicies(config.policy, policyContext(config));
    const live = await Promise.all(declared.map(async (p) => ({ p, live: await cluster.get(policyPath(p)) })));
    const object = (p: KyvernoPolicy) => ref(p.kind, undefined, p.metadata.name);
    const results = [
        outcome(
            "kyverno.policies-ready",
            `the stack's ${declared.length} Kyverno policies (${config.policy.kyvernoApi}) exist and Kyverno reports them ready`,
            README.kyverno,
            live.flatMap(({ p, live: l }) => notReady(l, p).map((found) => ({ object: object(p), found }))),
        ),
        outcome(
            "kyverno.policies-enforced",
            `they match what the stack declares (Rollout included) and act as ${config.policy.validationAction}`,
            README.kyverno,
            live.flatMap(({ p, live: l }) => notEnforced(l, p).map((found) => ({ object: object(p), found }))),
        ),
    ];

    const [pdbs, deployments, statefulsets, rollouts, generating, clusterPolicies] = await Promise.all([
        cluster.list("/apis/policy/v1/poddisruptionbudgets"),
        cluster.list("/apis/apps/v1/deployments"),
        cluster.list("/apis/apps/v1/statefulsets"),
        cluster.list("/apis/argoproj.io/v1alpha1/rollouts"),
        cluster.list("/apis/policies.kyverno.io/v1/generatingpolicies"),
        cluster.list("/apis/kyverno.io/v1/clusterpolicies"),
    ]);
    const all = [...workloads("Deployment", deployments), ...workloads("StatefulSet", statefulsets), ...workloads("Rollout", rollouts)];
    const findings = doublyCovered(all, pdbs ?? []);
    const ours = declared.find((p) => p.metadata.name === POLICY_NAMES.pdb);
    const generators = [...(generating ?? []).map((g) => ({ ...g, kind: "GeneratingPolicy" })), ...(clusterPolicies ?? []).map((c) => ({ ...c, kind: "ClusterPolicy" }))];
    for (const g of generators) {
        if (generatesPdbs(g) && !(ours && g.kind === ours.kind && nameOf(g) === ours.metadata.name)) {
            findings.push({ object: ref(g.kind, undefined, nameOf(g)), found: `also generates PodDisruptionBudgets beside ${ours ? `${ours.kind} ${ours.metadata.name}` : "this stack's policy"}: two budgets over one workload's pods` });
        }
    }
    results.push(
        outcome(
            "kyverno.one-pdb-per-workload",
            "no two policies generate PodDisruptionBudgets and no workload's pods have two",
            README.kyverno,
            findings,
            `${all.length} workloads, ${(pdbs ?? []).length} PodDisruptionBudgets`,
        ),
    );
    return results;
};
