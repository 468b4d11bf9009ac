/** The admission layer made Rollout-aware (ADR-056 D2, D3, D8): the stack's policies as declared, ADR-085's matching Rollout, one PDB each. */
import { type AvailabilityPolicies, type PolicyConfig } from "../../../components/policy/config";
import { absent } from "../../../components/config/reader";
import { POLICY_NAMES, ownsAvailability, policyContext } from "../../../components/policy";
import { KyvernoPolicy, kyvernoPolicies } from "../../../components/policy/kyverno";
import type { KubeObject } from "../cluster";
import { configuredSelectors, kindSelectsRollout, resourceFilterFindings, unmatchedSelectors } from "./kyvernoScope";
import { regulatedNamespaces } from "./rbac";
import { CheckGroup, asArray, drift, field, nameOf, namespaceOf, notTrue, ref } from "../context";
import { DOCS, Finding, checks } from "../report";
import { LabelSelector, pdbSelects, selects } from "../selectors";

const C = checks(DOCS.kyverno, {
    "kyverno.selectors-match": "every namespace selector the policies are written with (tenant, prod and regulated) matches at least one namespace",
    "kyverno.policies-ready": "the stack's Kyverno policies (policy.kyvernoApi, policy.availabilityPolicies) exist and Kyverno reports them ready",
    "kyverno.policies-enforced": "they carry what the stack declares (Rollout matched, namespaces, identities) and act as policy.validationAction",
    "kyverno.availability-rollout-aware": "ADR-085's availability policies run here and match Rollout",
    "kyverno.one-pdb-per-workload":
        "the one policy the mode expects (own: this stack's; complement: the platform's) generates PodDisruptionBudgets and no workload's pods have two",
    "kyverno.resource-filters": "Kyverno's resourceFilters let the approval guards see a regulated namespace's Rollouts, ReplicaSets and Pods",
});

const CEL_PLURALS: Record<string, string> = {
    ValidatingPolicy: "validatingpolicies",
    MutatingPolicy: "mutatingpolicies",
    GeneratingPolicy: "generatingpolicies",
};

export const policyPath = (p: Pick<KyvernoPolicy, "apiVersion" | "kind"> & { metadata: { name: string } }): string =>
    p.kind === "ClusterPolicy" ? `/apis/kyverno.io/v1/clusterpolicies/${p.metadata.name}` : `/apis/${p.apiVersion}/${CEL_PLURALS[p.kind]}/${p.metadata.name}`;

const POLICY_COLLECTIONS = [
    { kind: "ClusterPolicy", path: "/apis/kyverno.io/v1/clusterpolicies" },
    ...Object.entries(CEL_PLURALS).map(([kind, plural]) => ({ kind, path: `/apis/policies.kyverno.io/v1/${plural}` })),
];

/** Label Kyverno puts on what it generates (kyverno pkg/background/common/constants.go). */
export const GENERATED_BY_POLICY = "generate.kyverno.io/policy-name";

/** ADR-085's availability policies and the namespaces each applies to: declared by this stack in `own` mode, the platform's in `complement` mode. */
const AVAILABILITY_POLICIES: Record<string, string> = {
    [POLICY_NAMES.pdb]: "tenant",
    [POLICY_NAMES.spread]: "tenant",
    [POLICY_NAMES.replicaFloor]: "prod",
    [POLICY_NAMES.defaultNamespace]: "default",
};

/** Why Kyverno does not report `live` ready; a CEL policy it cannot compile never exists (kyverno pkg/webhooks/policy/handlers.go). */
export function notReady(live: KubeObject | undefined, declared: KyvernoPolicy): string[] {
    if (!live) {
        return [
            declared.kind === "ClusterPolicy"
                ? "not found: run pulumi up (the policy stage declares it)"
                : "not found: Kyverno refuses a CEL policy it cannot compile, so look for the compile error in the last pulumi up; otherwise run pulumi up",
        ];
    }
    if (declared.kind === "ClusterPolicy") return notTrue(live, ["Ready"]);
    const status = field(live, "status", "conditionStatus");
    const ready = field(status, "ready");
    const types = asArray<{ type: string }>(field(status, "conditions")).map((c) => c.type);
    const out = notTrue(live, types, ["conditionStatus", "conditions"]);
    if (ready === undefined) {
        out.unshift("no status.conditionStatus.ready: Kyverno has not reported on it (Kyverno >= 1.17 running?)");
    } else if (ready !== true && out.length === 0) {
        out.push("status.conditionStatus.ready is false");
    }
    const message = field(status, "message");
    return ready !== true && typeof message === "string" && message ? [...out, message] : out;
}

/** What a policy matches: kind selectors (ClusterPolicy) or `group/resource` (CEL). */
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
    if (kind === "ClusterPolicy") return matchedTargets(policy, kind).some(kindSelectsRollout);
    const any = (list: unknown, value: string) => asArray<string>(list).some((v) => v === "*" || v === value);
    return asArray(field(policy, "spec", "matchConstraints", "resourceRules")).some(
        (r) => any(field(r, "apiGroups"), "argoproj.io") && any(field(r, "apiVersions"), "v1alpha1") && any(field(r, "resources"), "rollouts"),
    );
}

/** The failure action of every validate rule of a ClusterPolicy; Kyverno's default is Audit. */
const clusterPolicyActions = (policy: unknown): string[] =>
    asArray(field(policy, "spec", "rules"))
        .filter((r) => field(r, "validate") !== undefined)
        .map((r) => String(field(r, "validate", "failureAction") ?? field(policy, "spec", "validationFailureAction") ?? "Audit"));

/** Paths whose difference `notEnforced` names in its own words. */
const NAMED_ELSEWHERE = /^spec\.(validationActions|failurePolicy$|validationFailureAction$|rules\[\d+\]\.validate\.failureAction$)/;

/** How `live` differs from `declared`: what it enforces, what it matches, and any other declared field. */
export function notEnforced(live: KubeObject | undefined, declared: KyvernoPolicy): string[] {
    if (!live) return ["not found"];
    const liveTargets = new Set(matchedTargets(live, declared.kind));
    const out = matchedTargets(declared, declared.kind)
        .filter((t) => !liveTargets.has(t))
        .map((t) => `does not match ${t}`);
    if (declared.kind === "ClusterPolicy") {
        const [want, have] = [clusterPolicyActions(declared), clusterPolicyActions(live)];
        if (want.length > 0 && (have.length !== want.length || have.some((a) => a !== want[0]))) {
            out.push(`validate rules act as ${have.join(", ") || "nothing"}, the stack configures ${want[0]}`);
        }
    }
    if (declared.kind === "ValidatingPolicy") {
        const want = [...declared.spec.validationActions].sort().join(",");
        const have = asArray<string>(field(live, "spec", "validationActions"))
            .sort()
            .join(",");
        if (want !== have) out.push(`validationActions are [${have}], the stack configures [${want}]`);
    }
    if ((declared.kind === "ValidatingPolicy" || declared.kind === "MutatingPolicy") && field(live, "spec", "failurePolicy") !== declared.spec.failurePolicy) {
        out.push(`failurePolicy is ${String(field(live, "spec", "failurePolicy"))}, the stack declares ${declared.spec.failurePolicy}`);
    }
    return [...out, ...drift(declared.spec, live.spec, "spec").filter((d) => !NAMED_ELSEWHERE.test(d.split(" ")[0]))];
}

/** Whether a Kyverno policy of either API generates PodDisruptionBudgets (a GeneratingPolicy names the kind in its CEL). */
export function generatesPdbs(policy: KubeObject): boolean {
    if (policy.kind === "ClusterPolicy") {
        return asArray(field(policy, "spec", "rules")).some((r) => field(r, "generate", "kind") === "PodDisruptionBudget");
    }
    return policy.kind === "GeneratingPolicy" && /PodDisruptionBudget|poddisruptionbudgets/.test(JSON.stringify(field(policy, "spec", "generate") ?? []));
}

/** PDB generators wrong for the mode: `own` expects this stack's alone, `complement` exactly one (ADR-056 D8). */
export function generatorProblems(mode: AvailabilityPolicies, generators: readonly KubeObject[], ours: KyvernoPolicy | undefined): Finding[] {
    const object = (g: KubeObject) => ref(g.kind ?? "", undefined, nameOf(g));
    if (mode === "own") {
        const beside = ours ? `${ours.kind} ${ours.metadata.name}` : "this stack's policy";
        return generators
            .filter((g) => !(ours && g.kind === ours.kind && nameOf(g) === ours.metadata.name))
            .map((g) => ({ object: object(g), found: `also generates PodDisruptionBudgets beside ${beside}: two budgets over one workload's pods` }));
    }
    if (generators.length === 0) {
        const found = `none generates PodDisruptionBudgets: policy.availabilityPolicies is complement, so the platform's own ${POLICY_NAMES.pdb} must, and no Rollout gets a budget (ADR-056 D8)`;
        return [{ object: "Kyverno policies", found }];
    }
    const all = generators.map(object).join(", ");
    return generators.length === 1
        ? []
        : generators.map((g) => ({
              object: object(g),
              found: `one of ${generators.length} policies that generate PodDisruptionBudgets (${all}): two budgets over one workload's pods`,
          }));
}

/** Each of ADR-085's policies (but those of a class the stack declares absent) missing from both APIs (CEL splits topology spread per kind, `<name>-rollout`), or matching no Rollout. */
export function availabilityProblems(live: readonly KubeObject[], mode: AvailabilityPolicies, cfg: Pick<PolicyConfig, "absentClasses">): Finding[] {
    return Object.keys(AVAILABILITY_POLICIES).flatMap((name) => {
        if (absent(cfg, AVAILABILITY_POLICIES[name])) return [];
        const named = live.filter((p) => nameOf(p) === name || nameOf(p).startsWith(`${name}-`));
        if (named.length === 0) {
            const why = mode === "complement" ? "policy.availabilityPolicies is complement, so the platform's must run here" : "run pulumi up";
            return [{ object: `policy ${name}`, found: `not found in either Kyverno API: ${why}` }];
        }
        return named.some((p) => matchesRollout(p, p.kind ?? ""))
            ? []
            : [
                  {
                      object: named.map((p) => ref(p.kind ?? "", undefined, nameOf(p))).join(", "),
                      found: "does not match argoproj.io/v1alpha1 Rollout: it silently does nothing for a Rollout (ADR-056 D2)",
                  },
              ];
    });
}

export type Workload = { kind: string; namespace: string; name: string; podLabels: Record<string, string> };

/** Workloads whose pods two or more PodDisruptionBudgets select (evictions of those pods fail). */
export function doublyCovered(workloads: readonly Workload[], pdbs: readonly KubeObject[]): Finding[] {
    return workloads.flatMap((w) => {
        const covering = pdbs.filter(
            (p) => namespaceOf(p) === w.namespace && pdbSelects(field(p, "spec", "selector") as LabelSelector | undefined, w.podLabels),
        );
        const names = covering.map(
            (p) => `${nameOf(p)}${p.metadata?.labels?.[GENERATED_BY_POLICY] ? ` (generated by ${p.metadata.labels[GENERATED_BY_POLICY]})` : ""}`,
        );
        return covering.length > 1
            ? [
                  {
                      object: ref(w.kind, w.namespace, w.name),
                      found: `its pods are selected by ${covering.length} PodDisruptionBudgets: ${names.join(", ")}; evictions of them fail`,
                  },
              ]
            : [];
    });
}

const workloads = (kind: string, list: readonly KubeObject[] | undefined): Workload[] =>
    (list ?? [])
        .filter((o) => field(o, "spec", "template", "metadata", "labels") !== undefined)
        .map((o) => ({
            kind,
            namespace: namespaceOf(o),
            name: nameOf(o),
            podLabels: field(o, "spec", "template", "metadata", "labels") as Record<string, string>,
        }));

export const kyvernoChecks: CheckGroup = {
    ...C,
    run: async ({ config, cluster, options }) => {
        const cfg = config.policy;
        const mode = cfg.availabilityPolicies;
        const declared = kyvernoPolicies(cfg, policyContext(config));
        const live = await Promise.all(declared.map(async (p) => ({ p, live: await cluster.get(policyPath(p)) })));
        const each = (judge: (l: KubeObject | undefined, p: KyvernoPolicy) => string[]) =>
            live.flatMap(({ p, live: l }) => judge(l, p).map((found) => ({ object: ref(p.kind, undefined, p.metadata.name), found })));
        const namespaces = (await cluster.list("/api/v1/namespaces")) ?? [];
        const lists = await Promise.all(POLICY_COLLECTIONS.map(async (c) => ((await cluster.list(c.path)) ?? []).map((o) => ({ ...o, kind: c.kind }))));
        const allPolicies = lists.flat();
        const [pdbs = [], deployments, statefulsets, rollouts] = await Promise.all(
            ["/apis/policy/v1/poddisruptionbudgets", "/apis/apps/v1/deployments", "/apis/apps/v1/statefulsets", "/apis/argoproj.io/v1alpha1/rollouts"].map(
                (p) => cluster.list(p),
            ),
        );
        const all = [...workloads("Deployment", deployments), ...workloads("StatefulSet", statefulsets), ...workloads("Rollout", rollouts)];
        const generators = allPolicies.filter(generatesPdbs);
        const ours = declared.find((p) => p.metadata.name === POLICY_NAMES.pdb);
        const regulated = regulatedNamespaces(config, namespaces);
        const counted = (s: { selector: LabelSelector; key: string }) =>
            `${s.key}: ${namespaces.filter((n) => selects(s.selector, n.metadata?.labels ?? {})).length} namespace(s)`;
        const kyvernoConfig = regulated.length > 0 ? await cluster.get(`/api/v1/namespaces/${options.kyvernoNamespace}/configmaps/kyverno`) : undefined;
        const none = (["tenant", "prod"] as const).find((c) => absent(cfg, c));
        const declaredNone = `the stack declares no ${none} namespaces on this cluster (policy.absentClasses)`;
        return [
            none === "tenant"
                ? C.skip("kyverno.selectors-match", declaredNone)
                : C.done(
                      "kyverno.selectors-match",
                      unmatchedSelectors(cfg, namespaces),
                      [...configuredSelectors(cfg).map(counted), ...(none ? [`SKIP prod: ${declaredNone}`] : [])].join("; "),
                  ),
            C.done(
                "kyverno.policies-ready",
                each(notReady),
                `${cfg.kyvernoApi}, availabilityPolicies ${mode}: ${declared.map((p) => p.metadata.name).join(", ")}`,
            ),
            C.done("kyverno.policies-enforced", each(notEnforced), `validationAction ${cfg.validationAction}`),
            C.done(
                "kyverno.availability-rollout-aware",
                availabilityProblems(allPolicies, mode, cfg),
                ownsAvailability(cfg) ? "policy.availabilityPolicies is own: this stack's" : "policy.availabilityPolicies is complement: the platform's",
            ),
            C.done(
                "kyverno.one-pdb-per-workload",
                [...generatorProblems(mode, generators, ours), ...doublyCovered(all, pdbs)],
                `${generators.map((g) => `${g.kind} ${nameOf(g)}`).join(", ") || "no generator"}; ${all.length} workloads, ${pdbs.length} PodDisruptionBudgets`,
            ),
            !cfg.regulated
                ? C.skip("kyverno.resource-filters", "no policy.regulated in the stack")
                : regulated.length === 0
                  ? C.skip("kyverno.resource-filters", "no namespace of this cluster matches policy.regulated.namespaceLabels")
                  : C.done(
                        "kyverno.resource-filters",
                        resourceFilterFindings(kyvernoConfig, options.kyvernoNamespace, regulated),
                        `regulated namespaces: ${regulated.join(", ")}`,
                    ),
        ];
    },
};
