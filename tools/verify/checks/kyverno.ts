/**
 * The admission layer made Rollout-aware (ADR-056 D2, D3, D8): the policies this stack declares
 * for its `policy.availabilityPolicies` mode exist, Kyverno reports them ready, they carry what the
 * stack declares, ADR-085's availability policies match Rollout whoever owns them, and no
 * workload ends up with two PodDisruptionBudgets.
 */
import type { AvailabilityPolicies } from "../../../components/policy/config";
import { POLICY_NAMES, ownsAvailability, policyContext } from "../../../components/policy";
import { KyvernoPolicy, kyvernoPolicies } from "../../../components/policy/kyverno";
import type { KubeObject } from "../cluster";
import { configuredSelectors, kindSelectsRollout, resourceFiltersCheck, unmatchedSelectors } from "./kyvernoScope";
import { CheckGroup, asArray, conditions, condition, describeCondition, drift, field, nameOf, namespaceOf, ref } from "../context";
import { CheckResult, Finding, DOCS, outcome } from "../report";
import { LabelSelector, pdbSelects, selects } from "../selectors";

const CEL_PLURALS: Record<string, string> = {
    ValidatingPolicy: "validatingpolicies",
    MutatingPolicy: "mutatingpolicies",
    GeneratingPolicy: "generatingpolicies",
};

export function policyPath(p: Pick<KyvernoPolicy, "apiVersion" | "kind"> & { metadata: { name: string } }): string {
    return p.kind === "ClusterPolicy"
        ? `/apis/kyverno.io/v1/clusterpolicies/${p.metadata.name}`
        : `/apis/${p.apiVersion}/${CEL_PLURALS[p.kind]}/${p.metadata.name}`;
}

/** Every cluster-wide Kyverno policy kind, with the collection it is listed from. */
const POLICY_COLLECTIONS: readonly { kind: string; path: string }[] = [
    { kind: "ClusterPolicy", path: "/apis/kyverno.io/v1/clusterpolicies" },
    ...Object.entries(CEL_PLURALS).map(([kind, plural]) => ({ kind, path: `/apis/policies.kyverno.io/v1/${plural}` })),
];

/** Label Kyverno puts on what it generates (kyverno pkg/background/common/constants.go). */
export const GENERATED_BY_POLICY = "generate.kyverno.io/policy-name";

/**
 * ADR-085's availability policies (ADR-056 D2): declared by this stack in `own` mode, the
 * platform's in `complement` mode. Either way each must match Rollout, or it silently no-ops on one.
 */
export const AVAILABILITY_POLICY_NAMES: readonly string[] = [POLICY_NAMES.pdb, POLICY_NAMES.spread, POLICY_NAMES.replicaFloor, POLICY_NAMES.defaultNamespace];

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

/** What a policy matches: `group/resource` (CEL) or kind selector (ClusterPolicy) entries. */
export function matchedTargets(policy: unknown, kind: string): string[] {
    if (kind === "ClusterPolicy") {
        return asArray(field(policy, "spec", "rules")).flatMap((r) =>
            asArray(field(r, "match", "any")).flatMap((a) => asArray<string>(field(a, "resources", "kinds"))),
        );
    }
    return asArray(field(policy, "spec", "matchConstraints", "resourceRules")).flatMap((r) =>
        asArray<string>(field(r, "apiGroups")).flatMap((g) => asArray<string>(field(r, "resources")).map((res) => `${g}/${res}`)),
    );
}

/** Whether a live policy of either API matches Rollouts (the resource, not only a subresource). */
export function matchesRollout(policy: KubeObject, kind: string): boolean {
    if (kind === "ClusterPolicy") {
        return matchedTargets(policy, kind).some(kindSelectsRollout);
    }
    const any = (list: unknown, value: string) => asArray<string>(list).some((v) => v === "*" || v === value);
    return asArray(field(policy, "spec", "matchConstraints", "resourceRules")).some(
        (r) => any(field(r, "apiGroups"), "argoproj.io") && any(field(r, "apiVersions"), "v1alpha1") && any(field(r, "resources"), "rollouts"),
    );
}

/** The failure action of every validate rule of a ClusterPolicy; Kyverno's default is Audit. */
function clusterPolicyActions(policy: unknown): string[] {
    const fallback = field(policy, "spec", "validationFailureAction") ?? "Audit";
    return asArray(field(policy, "spec", "rules"))
        .filter((r) => field(r, "validate") !== undefined)
        .map((r) => String(field(r, "validate", "failureAction") ?? fallback));
}

/** Paths whose difference `notEnforced` already names in its own words. */
const NAMED_ELSEWHERE = [
    /^spec\.validationActions/,
    /^spec\.failurePolicy$/,
    /^spec\.validationFailureAction$/,
    /^spec\.rules\[\d+\]\.validate\.failureAction$/,
];

/** How `live` differs from `declared`: what it enforces, what it matches, and any other declared field. */
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
    }
    if (declared.kind === "ValidatingPolicy") {
        const want = [...declared.spec.validationActions].sort().join(",");
        const have = asArray<string>(field(live, "spec", "validationActions"))
            .sort()
            .join(",");
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
    // Whatever else differs: namespace selectors, groups and identities, expressions, rules.
    out.push(...drift(declared.spec, live.spec, "spec").filter((d) => !NAMED_ELSEWHERE.some((re) => re.test(d.split(" ")[0]))));
    return out;
}

/** Whether a Kyverno policy of either API generates PodDisruptionBudgets. */
export function generatesPdbs(policy: KubeObject): boolean {
    if (policy.kind === "ClusterPolicy") {
        return asArray(field(policy, "spec", "rules")).some((r) => field(r, "generate", "kind") === "PodDisruptionBudget");
    }
    if (policy.kind !== "GeneratingPolicy") {
        return false;
    }
    // A GeneratingPolicy builds its objects in CEL; the kind appears in the expressions' text.
    return /PodDisruptionBudget|poddisruptionbudgets/.test(JSON.stringify(field(policy, "spec", "generate") ?? []));
}

/**
 * Which PDB generators are wrong for the mode: `own` expects this stack's policy and no other;
 * `complement` expects the platform's own one, exactly one (ADR-056 D8: two budgets over the same
 * pods make every eviction fail).
 */
export function generatorProblems(mode: AvailabilityPolicies, generators: readonly KubeObject[], ours: KyvernoPolicy | undefined): Finding[] {
    const object = (g: KubeObject) => ref(g.kind ?? "", undefined, nameOf(g));
    if (mode === "own") {
        return generators
            .filter((g) => !(ours && g.kind === ours.kind && nameOf(g) === ours.metadata.name))
            .map((g) => ({
                object: object(g),
                found: `also generates PodDisruptionBudgets beside ${ours ? `${ours.kind} ${ours.metadata.name}` : "this stack's policy"}: two budgets over one workload's pods`,
            }));
    }
    if (generators.length === 0) {
        return [
            {
                object: "Kyverno policies",
                found: `none generates PodDisruptionBudgets: policy.availabilityPolicies is complement, so the platform's own ${POLICY_NAMES.pdb} must, and no Rollout gets a budget (ADR-056 D8)`,
            },
        ];
    }
    if (generators.length > 1) {
        return generators.map((g) => ({
            object: object(g),
            found: `one of ${generators.length} policies that generate PodDisruptionBudgets (${generators.map(object).join(", ")}): two budgets over one workload's pods`,
        }));
    }
    return [];
}

/**
 * For each of ADR-085's availability policies, what is wrong on the live cluster: none of that
 * name in either API (the CEL API splits topology spread per kind, `<name>-rollout`), or none of
 * them matches Rollout.
 */
export function availabilityProblems(live: readonly KubeObject[], mode: AvailabilityPolicies): Finding[] {
    const out: Finding[] = [];
    for (const name of AVAILABILITY_POLICY_NAMES) {
        const named = live.filter((p) => nameOf(p) === name || nameOf(p).startsWith(`${name}-`));
        if (named.length === 0) {
            out.push({
                object: `policy ${name}`,
                found:
                    mode === "complement"
                        ? "not found in either Kyverno API: policy.availabilityPolicies is complement, so the platform's must run here"
                        : "not found in either Kyverno API: run pulumi up",
            });
        } else if (!named.some((p) => matchesRollout(p, p.kind ?? ""))) {
            out.push({
                object: named.map((p) => ref(p.kind ?? "", undefined, nameOf(p))).join(", "),
                found: "does not match argoproj.io/v1alpha1 Rollout: it silently does nothing for a Rollout (ADR-056 D2)",
            });
        }
    }
    return out;
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
        const covering = pdbs.filter(
            (p) => namespaceOf(p) === w.namespace && pdbSelects(field(p, "spec", "selector") as LabelSelector | undefined, w.podLabels),
        );
        if (covering.length > 1) {
            const names = covering.map(
                (p) => `${nameOf(p)}${p.metadata?.labels?.[GENERATED_BY_POLICY] ? ` (generated by ${p.metadata.labels[GENERATED_BY_POLICY]})` : ""}`,
            );
            out.push({
                object: ref(w.kind, w.namespace, w.name),
                found: `its pods are selected by ${covering.length} PodDisruptionBudgets: ${names.join(", ")}; evictions of them fail`,
            });
        }
    }
    return out;
}

function workloads(kind: string, list: readonly KubeObject[] | undefined): Workload[] {
    return (list ?? [])
        .filter((o) => field(o, "spec", "template", "metadata", "labels") !== undefined)
        .map((o) => ({
            kind,
            namespace: namespaceOf(o),
            name: nameOf(o),
            podLabels: field(o, "spec", "template", "metadata", "labels") as Record<string, string>,
        }));
}

export const kyvernoChecks: CheckGroup = async ({ config, cluster, options }) => {
    const cfg = config.policy;
    const mode = cfg.availabilityPolicies;
    const declared = kyvernoPolicies(cfg, policyContext(config));
    const live = await Promise.all(declared.map(async (p) => ({ p, live: await cluster.get(policyPath(p)) })));
    const object = (p: KyvernoPolicy) => ref(p.kind, undefined, p.metadata.name);
    const namespaces = (await cluster.list("/api/v1/namespaces")) ?? [];
    const results: CheckResult[] = [
        outcome(
            "kyverno.selectors-match",
            "every namespace selector the policies are written with (tenant, prod and regulated) matches at least one namespace",
            DOCS.kyverno,
            unmatchedSelectors(cfg, namespaces),
            configuredSelectors(cfg)
                .map((s) => `${s.key}: ${namespaces.filter((n) => selects(s.selector, n.metadata?.labels ?? {})).length} namespace(s)`)
                .join("; "),
        ),
        outcome(
            "kyverno.policies-ready",
            `the stack's ${declared.length} Kyverno policies (${cfg.kyvernoApi}, availabilityPolicies ${mode}) exist and Kyverno reports them ready`,
            DOCS.kyverno,
            live.flatMap(({ p, live: l }) => notReady(l, p).map((found) => ({ object: object(p), found }))),
            declared.map((p) => p.metadata.name).join(", "),
        ),
        outcome(
            "kyverno.policies-enforced",
            `they carry what the stack declares (Rollout matched, namespaces, identities) and act as ${cfg.validationAction}`,
            DOCS.kyverno,
            live.flatMap(({ p, live: l }) => notEnforced(l, p).map((found) => ({ object: object(p), found }))),
        ),
    ];

    const lists = await Promise.all(POLICY_COLLECTIONS.map(async (c) => ((await cluster.list(c.path)) ?? []).map((o) => ({ ...o, kind: c.kind }))));
    const allPolicies = lists.flat();
    results.push(
        outcome(
            "kyverno.availability-rollout-aware",
            "ADR-085's availability policies run here and match Rollout",
            DOCS.kyverno,
            availabilityProblems(allPolicies, mode),
            ownsAvailability(cfg) ? "policy.availabilityPolicies is own: this stack's" : "policy.availabilityPolicies is complement: the platform's",
        ),
    );

    const [pdbs, deployments, statefulsets, rollouts] = await Promise.all([
        cluster.list("/apis/policy/v1/poddisruptionbudgets"),
        cluster.list("/apis/apps/v1/deployments"),
        cluster.list("/apis/apps/v1/statefulsets"),
        cluster.list("/apis/argoproj.io/v1alpha1/rollouts"),
    ]);
    const all = [...workloads("Deployment", deployments), ...workloads("StatefulSet", statefulsets), ...workloads("Rollout", rollouts)];
    const ours = declared.find((p) => p.metadata.name === POLICY_NAMES.pdb);
    const generators = allPolicies.filter(generatesPdbs);
    const findings = [...generatorProblems(mode, generators, ours), ...doublyCovered(all, pdbs ?? [])];
    results.push(
        outcome(
            "kyverno.one-pdb-per-workload",
            mode === "own"
                ? "only this stack's policy generates PodDisruptionBudgets and no workload's pods have two"
                : "exactly one policy (the platform's) generates PodDisruptionBudgets and no workload's pods have two",
            DOCS.kyverno,
            findings,
            `${generators.map((g) => `${g.kind} ${nameOf(g)}`).join(", ") || "no generator"}; ${all.length} workloads, ${(pdbs ?? []).length} PodDisruptionBudgets`,
        ),
    );
    results.push(await resourceFiltersCheck({ config, cluster, options }, namespaces));
    return results;
};
