import type { PolicyConfig } from "./config";
import { MESSAGES, PDB_SUFFIX, POLICY_NAMES, clusterRule, constraints, kindLabel, metadata } from "./builders";
import { Rule, and, eq, field, has, not, obj } from "./rule";
import type { ClusterPolicy, GeneratingPolicy, MutatingPolicy } from "./shapes";
import { Template, kyvernoVar, ref, toCel, toKyverno } from "./template";
import { HPA, ROLLOUT, WORKLOADS, WorkloadKind } from "./workloads";

/**
 * ADR-085's availability policies, made Rollout-aware (ADR-056 D2, D8): a PodDisruptionBudget per
 * workload, topology spread, the prod replica floor, and no workloads in the default namespace.
 * Declared only when this program owns them (`policy.availabilityPolicies: own`).
 */

/**
 * The PodDisruptionBudget generated for a workload (ADR-085, D8): the workload's own selector, so a
 * Rollout's stable and canary pods share one budget; `maxUnavailable` a number of pods, because a
 * percentage is unreliable for Rollout-owned pools.
 */
export function pdbTemplate(maxUnavailable: number): Template {
    const metadata = { name: ref("metadata.name", PDB_SUFFIX), namespace: ref("metadata.namespace") };
    return { apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata, spec: { maxUnavailable, selector: ref("spec.selector") } };
}

/**
 * Topology spread constraints for a workload's pod template. `matchLabelKeys` counts only the current
 * revision's pods: `rollouts-pod-template-hash` on a Rollout (ADR-056 D2), `pod-template-hash` on a
 * Deployment. ScheduleAnyway: a canary pod must never stay Pending because a zone is short (D8's headroom).
 */
export function topologySpreadTemplate(w: WorkloadKind, topologyKeys: readonly string[]): Template[] {
    const revision: { [k: string]: Template } = w.revisionLabel ? { matchLabelKeys: [w.revisionLabel] } : {};
    return topologyKeys.map((topologyKey) => ({
        maxSkew: 1,
        topologyKey,
        whenUnsatisfiable: "ScheduleAnyway",
        labelSelector: ref("spec.selector"),
        ...revision,
    }));
}

const AVAILABILITY =
    "a PodDisruptionBudget with an integer maxUnavailable per Deployment, StatefulSet and Rollout, unless a budget already selects its pods (ADR-056 D2, D8)";
const SPREAD = (what: string) => `topology spread constraints for ${what}, unless it sets its own (ADR-056 D2)`;

/**
 * Whether a budget already selects the workload's pods, by the API server's rules for the label
 * selector at `selector` over pods labelled `labels`: every matchLabels entry, every matchExpressions
 * requirement (In, NotIn, Exists, DoesNotExist). The caller has checked that the selector is set (in
 * policy/v1 a null one selects no pods, an empty one every pod of the namespace). In CEL; and in
 * Kyverno's JMESPath, on the selector at `selector` (a path ending in `.`) with `labels` a JSON
 * literal, through `label_match` and `lookup` (kyverno/kyverno pkg/engine/jmespath/functions.go).
 */
export function celSelects(selector: string, labels: string): string {
    const requirement =
        `e.operator == "In" ? (e.key in ${labels} && ${labels}[e.key] in e.values) : e.operator == "NotIn" ? !(e.key in ${labels} && ${labels}[e.key] in e.values) : ` +
        `e.operator == "Exists" ? e.key in ${labels} : e.operator == "DoesNotExist" ? !(e.key in ${labels}) : false`;
    return (
        `(!has(${selector}.matchLabels) || ${selector}.matchLabels.all(k, k in ${labels} && ${labels}[k] == ${selector}.matchLabels[k])) && ` +
        `(!has(${selector}.matchExpressions) || ${selector}.matchExpressions.all(e, ${requirement}))`
    );
}

export function jmesSelects(selector: string, labels: string): string {
    const value = `lookup(${labels}, key)`;
    const unmet =
        `!((operator == 'In' && contains(values, ${value})) || (operator == 'NotIn' && !contains(values, ${value})) || ` +
        `(operator == 'Exists' && ${value} != \`null\`) || (operator == 'DoesNotExist' && ${value} == \`null\`))`;
    return `label_match(${selector}matchLabels || \`{}\`, ${labels}) && length((${selector}matchExpressions || \`[]\`)[?${unmet}]) == \`0\``;
}

/** The labels a workload's pods carry: the template's, or at least the selector's (a workloadRef Rollout). */
const POD_LABELS_CEL =
    "has(object.spec.template) && has(object.spec.template.metadata) && has(object.spec.template.metadata.labels) ? object.spec.template.metadata.labels : " +
    "has(object.spec.selector.matchLabels) ? object.spec.selector.matchLabels : {}";
const POD_LABELS_JMES = "request.object.spec.template.metadata.labels || request.object.spec.selector.matchLabels || `{}`";

export function availabilityCelPolicies(cfg: PolicyConfig): (GeneratingPolicy | MutatingPolicy)[] {
    const generator: GeneratingPolicy = {
        apiVersion: "policies.kyverno.io/v1",
        kind: "GeneratingPolicy",
        metadata: metadata(POLICY_NAMES.pdb, AVAILABILITY),
        spec: {
            // Not synchronized. On Kyverno 1.17 and 1.18 a synchronized GeneratingPolicy deletes every
            // resource it generated, for every workload, whenever one trigger generates none
            // (pkg/background/gpol/dynamic_watcher.go SyncWatchers at v1.17.2 and v1.18.2, fixed per
            // trigger in v1.19.0): the e2e scenario kyverno-generates-pdb saw a covered workload wipe
            // every generated budget. Unsynchronized, a budget stays when its workload goes (it then
            // selects nothing), and a team budget added later leaves two, which verify reports
            // (kyverno.one-pdb-per-workload). Existing workloads get theirs when the policy is created.
            evaluation: { synchronize: { enabled: false }, generateExisting: { enabled: true } },
            matchConstraints: constraints(cfg, WORKLOADS),
            // A workload whose pods are selected by labels: the generated budget selects the same pods.
            matchConditions: [
                {
                    name: "selects-pods-by-labels",
                    expression:
                        "has(object.spec.selector) && ((has(object.spec.selector.matchLabels) && size(object.spec.selector.matchLabels) > 0) || " +
                        "(has(object.spec.selector.matchExpressions) && size(object.spec.selector.matchExpressions) > 0))",
                },
            ],
            variables: [
                { name: "pdbName", expression: toCel(ref("metadata.name", PDB_SUFFIX)) },
                { name: "podLabels", expression: POD_LABELS_CEL },
                {
                    // Another budget over the same pods makes their evictions fail; the generated one does
                    // not count, or it would delete itself on the next update. dyn(): see cel.ts `lookup`.
                    name: "coveredElsewhere",
                    expression:
                        'dyn(resource.List("policy/v1", "poddisruptionbudgets", object.metadata.namespace).items).exists(p, ' +
                        `p.metadata.name != variables.pdbName && has(p.spec) && has(p.spec.selector) && ${celSelects("p.spec.selector", "variables.podLabels")})`,
                },
                { name: "pdb", expression: `[${toCel(pdbTemplate(cfg.pdbMaxUnavailable))}]` },
            ],
            generate: [{ expression: "generator.Apply(object.metadata.namespace, variables.coveredElsewhere ? [] : variables.pdb)" }],
        },
    };
    // One policy per kind: each carries its own revision label, and a MutatingPolicy has no per-mutation condition.
    const spread = WORKLOADS.map((w): MutatingPolicy => ({
        apiVersion: "policies.kyverno.io/v1",
        kind: "MutatingPolicy",
        metadata: metadata(`${POLICY_NAMES.spread}-${kindLabel(w)}`, SPREAD(`a ${w.kind}'s pods`)),
        spec: {
            failurePolicy: cfg.mutationFailurePolicy,
            // Admission only: mutating existing workloads would restart every one of them.
            evaluation: { mutateExisting: { enabled: false } },
            matchConstraints: constraints(cfg, [w]),
            // Self-guarded: every condition is evaluated, and one that errors fails the request.
            matchConditions: [
                { name: "has-pod-template", expression: "has(object.spec.template) && has(object.spec.template.spec)" },
                {
                    name: "no-spread-set",
                    expression: "!(has(object.spec.template) && has(object.spec.template.spec) && has(object.spec.template.spec.topologySpreadConstraints))",
                },
            ],
            // JSONPatch rather than ApplyConfiguration: it needs no schema of the Rollout CRD.
            mutations: [
                {
                    patchType: "JSONPatch",
                    jsonPatch: {
                        expression: `[JSONPatch{op: "add", path: "/spec/template/spec/topologySpreadConstraints", value: ${toCel(topologySpreadTemplate(w, cfg.topologyKeys))}}]`,
                    },
                },
            ],
        },
    }));
    return [generator, ...spread];
}

export function availabilityClusterPolicies(cfg: PolicyConfig): ClusterPolicy[] {
    const pdb = pdbTemplate(cfg.pdbMaxUnavailable) as { readonly [k: string]: Template };
    const { name, namespace } = pdb.metadata as { readonly [k: string]: Template };
    // The namespace's other budgets that select the workload's pods; `request.namespace` is empty for existing workloads.
    const covering =
        `items[?metadata.name != '${kyvernoVar("metadata.name")}${PDB_SUFFIX}' && spec.selector != \`null\` && ` +
        `${jmesSelects("spec.selector.", "`{{ podLabels }}`")}] | length(@)`;
    const selectsByLabels =
        "{{ add(length(request.object.spec.selector.matchLabels || `{}`), length(request.object.spec.selector.matchExpressions || `[]`)) }}";
    const generator: ClusterPolicy = {
        apiVersion: "kyverno.io/v1",
        kind: "ClusterPolicy",
        metadata: metadata(POLICY_NAMES.pdb, AVAILABILITY),
        spec: {
            background: true,
            generateExisting: true,
            rules: WORKLOADS.map((w) => ({
                // No operations filter: a synchronized downstream is cleaned up on the trigger's DELETE.
                ...clusterRule(cfg, "pdb", w, { operations: false }),
                context: [
                    { name: "podLabels", variable: { jmesPath: POD_LABELS_JMES } },
                    {
                        name: "coveringPdbs",
                        apiCall: { urlPath: `/apis/policy/v1/namespaces/${kyvernoVar("metadata.namespace")}/poddisruptionbudgets`, jmesPath: covering },
                    },
                ],
                preconditions: {
                    all: [
                        { key: selectsByLabels, operator: "GreaterThan", value: 0 },
                        { key: "{{ coveringPdbs }}", operator: "Equals", value: 0 },
                    ],
                },
                generate: {
                    ...{
                        apiVersion: pdb.apiVersion as string,
                        kind: pdb.kind as string,
                        name: toKyverno(name) as string,
                        namespace: toKyverno(namespace) as string,
                    },
                    ...{ synchronize: true, data: { spec: toKyverno(pdb.spec) } },
                },
            })),
        },
    };
    const spread: ClusterPolicy = {
        apiVersion: "kyverno.io/v1",
        kind: "ClusterPolicy",
        metadata: metadata(POLICY_NAMES.spread, SPREAD("the pods of a Deployment, StatefulSet or Rollout")),
        spec: {
            // Only the webhookConfiguration field: Kyverno refuses a ClusterPolicy that also sets the
            // deprecated spec.failurePolicy (api/kyverno/v1 spec_types.go validateDeprecatedFields at
            // v1.17.2; e2e kyverno-ready). Releases before 1.13 do not read it and fail closed.
            webhookConfiguration: { failurePolicy: cfg.mutationFailurePolicy },
            background: true,
            rules: WORKLOADS.map((w) => ({
                ...clusterRule(cfg, "spread", w),
                // A workloadRef Rollout has no pod template to mutate.
                preconditions: { all: [{ key: "{{ request.object.spec.workloadRef.name || '' }}", operator: "Equals", value: "" }] },
                // `+(...)`: add only when the workload sets no constraints of its own.
                mutate: {
                    patchStrategicMerge: {
                        spec: { template: { spec: { "+(topologySpreadConstraints)": toKyverno(topologySpreadTemplate(w, cfg.topologyKeys)) } } },
                    },
                },
            })),
        },
    };
    return [generator, spread];
}

/**
 * The prod replica floor. An omitted `spec.replicas` is not read as 1: a workload that leaves its
 * replicas to a HorizontalPodAutoscaler omits them, and the HPA's minReplicas carries the floor (an
 * HPA of another workload, or of another kind, does not count). The API server defaults a
 * Deployment's or StatefulSet's replicas to 1 before admission; the Rollout CRD has none, and the
 * controller reads an omitted value as 1 and writes it back (argo-rollouts v1.9.0
 * utils/defaults/defaults.go GetReplicasOrDefault, rollout/controller.go "Defaulting .spec.replica
 * to 1"), which the floor would refuse: a prod Rollout without an HPA must set its replicas, or it
 * would hang unreconciled instead of failing where the deployer sees it.
 */
export function availabilityRules(cfg: PolicyConfig): Rule[] {
    const n = cfg.prodMinReplicas;
    const replicas = obj("spec.replicas");
    const hpaManaged = not({ var: "hpaManaged" });
    const target = (key: string) => field("item", ["spec", "scaleTargetRef", key]);
    const workloads = WORKLOADS.map((kind) => ({ kind }));
    return [
        {
            name: POLICY_NAMES.replicaFloor,
            scope: "prod",
            background: true,
            vars: {
                hpaManaged: {
                    lookup: { name: "scalingHpas", apiVersion: "autoscaling/v2", resource: "horizontalpodautoscalers" },
                    where: and(eq(target("kind"), obj("kind")), eq(target("name"), obj("metadata.name"))),
                },
            },
            checks: [
                { id: "check", on: workloads, deny: and(has(replicas), { lt: replicas, than: n }, hpaManaged), message: MESSAGES.replicaFloor(n) },
                { id: "require-replicas", on: [{ kind: ROLLOUT }], deny: and(not(has(replicas)), hpaManaged), message: MESSAGES.replicasOmitted(n) },
                {
                    id: "check",
                    on: [{ kind: HPA }],
                    deny: and({ in: obj("spec.scaleTargetRef.kind"), among: WORKLOADS.map((w) => w.kind) }, { lt: obj("spec.minReplicas", 1), than: n }),
                    message: MESSAGES.hpaFloor(n),
                },
            ],
        },
        {
            name: POLICY_NAMES.defaultNamespace,
            scope: "default",
            background: true,
            checks: [{ id: "check", on: workloads, deny: eq(obj("metadata.namespace"), "default"), message: MESSAGES.defaultNamespace }],
        },
    ];
}
