import type { PolicyConfig } from "./config";
import { MESSAGES, PDB_SUFFIX, POLICY_NAMES, clusterRule, constraints, kindLabel, metadata } from "./builders";
import { Cond, Rule, and, eq, field, has, not, obj } from "./rule";
import type { ClusterPolicy, GeneratingPolicy, MutatingPolicy } from "./shapes";
import { Template, kyvernoVar, ref, toCel, toKyverno } from "./template";
import { HPA, ROLLOUT, WORKLOADS, WorkloadKind } from "./workloads";

/**
 * ADR-085's availability policies, made Rollout-aware (ADR-056 D2, D8): a PodDisruptionBudget per
 * workload, topology spread, the prod replica floor, and no workloads in the default namespace.
 * Declared only when this program owns them (`policy.availabilityPolicies: own`).
 */

/**
 * The PodDisruptionBudget generated for a workload (ADR-085, D8): selects the workload's pods with
 * the workload's own selector, so stable and canary pods of a Rollout share one budget;
 * `maxUnavailable` is a number of pods, because a percentage is unreliable for Rollout-owned pools.
 */
export function pdbTemplate(maxUnavailable: number): Template {
    return {
        apiVersion: "policy/v1",
        kind: "PodDisruptionBudget",
        metadata: { name: ref("metadata.name", PDB_SUFFIX), namespace: ref("metadata.namespace") },
        spec: { maxUnavailable, selector: ref("spec.selector") },
    };
}

/**
 * Topology spread constraints for a workload's pod template. `matchLabelKeys` limits the count to
 * the pods of the current revision: `rollouts-pod-template-hash` on a Rollout (ADR-056 D2),
 * `pod-template-hash` on a Deployment. ScheduleAnyway: a canary pod must never stay Pending
 * because a zone is short (D8's headroom).
 */
export function topologySpreadTemplate(w: WorkloadKind, topologyKeys: readonly string[]): Template[] {
    return topologyKeys.map((topologyKey) => ({
        maxSkew: 1,
        topologyKey,
        whenUnsatisfiable: "ScheduleAnyway",
        labelSelector: ref("spec.selector"),
        ...(w.revisionLabel ? { matchLabelKeys: [w.revisionLabel] } : {}),
    }));
}

const AVAILABILITY =
    "a PodDisruptionBudget with an integer maxUnavailable per Deployment, StatefulSet and Rollout, unless a budget already selects its pods (ADR-056 D2, D8)";

// ---------------------------------------------------------------------------------------------
// Selector coverage: does an existing budget already select the workload's pods?

/**
 * CEL: whether the label selector at `selector` selects pods labelled `labels`, by the API
 * server's rules: every matchLabels entry present and equal, every matchExpressions requirement
 * met (In, NotIn, Exists, DoesNotExist). The caller has checked that `selector` is set: in
 * policy/v1 a null selector selects no pods and an empty one selects every pod of the namespace
 * (k8s.io/api `policy/v1` PodDisruptionBudgetSpec.selector).
 */
export function celSelects(selector: string, labels: string): string {
    const requirement =
        `e.operator == "In" ? (e.key in ${labels} && ${labels}[e.key] in e.values) : ` +
        `e.operator == "NotIn" ? !(e.key in ${labels} && ${labels}[e.key] in e.values) : ` +
        `e.operator == "Exists" ? e.key in ${labels} : ` +
        `e.operator == "DoesNotExist" ? !(e.key in ${labels}) : false`;
    return (
        `(!has(${selector}.matchLabels) || ${selector}.matchLabels.all(k, k in ${labels} && ${labels}[k] == ${selector}.matchLabels[k])) && ` +
        `(!has(${selector}.matchExpressions) || ${selector}.matchExpressions.all(e, ${requirement}))`
    );
}

/**
 * JMESPath (Kyverno's dialect) for the same test on the selector at `selector` (a path ending in
 * `.`), with `labels` a JSON literal. matchLabels with Kyverno's `label_match(selector, labels)`
 * (every entry of the first in the second), each requirement with `lookup(labels, key)`, null for
 * an absent key (kyverno/kyverno `pkg/engine/jmespath/functions.go`, `jpLabelMatch`, `jpLookup`).
 */
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

/** A workload whose pods are selected by labels: the generated budget selects the same pods. */
const SELECTS_BY_LABELS =
    "has(object.spec.selector) && ((has(object.spec.selector.matchLabels) && size(object.spec.selector.matchLabels) > 0) || " +
    "(has(object.spec.selector.matchExpressions) && size(object.spec.selector.matchExpressions) > 0))";

// ---------------------------------------------------------------------------------------------
// policies.kyverno.io/v1

export function pdbGeneratingPolicy(cfg: PolicyConfig): GeneratingPolicy {
    return {
        apiVersion: "policies.kyverno.io/v1",
        kind: "GeneratingPolicy",
        metadata: metadata(POLICY_NAMES.pdb, AVAILABILITY),
        spec: {
            // Not synchronized. On Kyverno 1.17 and 1.18 a synchronized GeneratingPolicy deletes
            // every resource it generated, for every workload, whenever one trigger generates none
            // (pkg/background/gpol/dynamic_watcher.go SyncWatchers at v1.17.2 and v1.18.2, fixed per
            // trigger in v1.19.0): a workload another budget covers would wipe every generated
            // budget. The e2e scenario kyverno-generates-pdb saw exactly that on 1.17.2. Unsynchronized,
            // a generated budget stays when its workload goes (it then selects nothing), and a team
            // budget added later leaves two, which verify's kyverno.one-pdb-per-workload reports.
            // Existing workloads get theirs when the policy is created: a Rollout had none before.
            evaluation: { synchronize: { enabled: false }, generateExisting: { enabled: true } },
            matchConstraints: constraints(cfg, WORKLOADS),
            matchConditions: [{ name: "selects-pods-by-labels", expression: SELECTS_BY_LABELS }],
            variables: [
                { name: "pdbName", expression: toCel(ref("metadata.name", PDB_SUFFIX)) },
                { name: "podLabels", expression: POD_LABELS_CEL },
                {
                    // Another budget over the same pods makes evictions of those pods fail; the
                    // generated one itself does not count, or it would delete itself on the next update.
                    // resource.List returns map(string, Any) (kyverno/sdk extensions/cel/libs/resource/lib.go)
                    // and cel-go refuses an Any as a comprehension range (checker/checker.go
                    // checkComprehension), so the items are dyn().
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
}

/** One policy per kind: each carries its own revision label, and a MutatingPolicy has no per-mutation condition. */
export function spreadMutatingPolicies(cfg: PolicyConfig): MutatingPolicy[] {
    return WORKLOADS.map((w) => ({
        apiVersion: "policies.kyverno.io/v1",
        kind: "MutatingPolicy",
        metadata: metadata(`${POLICY_NAMES.spread}-${kindLabel(w)}`, `topology spread constraints for a ${w.kind}'s pods, unless it sets its own (ADR-056 D2)`),
        spec: {
            failurePolicy: cfg.mutationFailurePolicy,
            // Admission only: mutating existing workloads would restart every one of them.
            evaluation: { mutateExisting: { enabled: false } },
            matchConstraints: constraints(cfg, [w]),
            matchConditions: [
                { name: "has-pod-template", expression: "has(object.spec.template) && has(object.spec.template.spec)" },
                // Self-guarded: every condition is evaluated, and one that errors fails the request.
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
}

export function availabilityCelPolicies(cfg: PolicyConfig): (GeneratingPolicy | MutatingPolicy)[] {
    return [pdbGeneratingPolicy(cfg), ...spreadMutatingPolicies(cfg)];
}

// ---------------------------------------------------------------------------------------------
// kyverno.io/v1 ClusterPolicy

const COVERING = "coveringPdbs";
const POD_LABELS = "podLabels";

export function pdbClusterPolicy(cfg: PolicyConfig): ClusterPolicy {
    const pdb = pdbTemplate(cfg.pdbMaxUnavailable) as { readonly [k: string]: Template };
    const pdbMeta = pdb.metadata as { readonly [k: string]: Template };
    return {
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
                    { name: POD_LABELS, variable: { jmesPath: POD_LABELS_JMES } },
                    {
                        // The namespace's other budgets whose selector selects the workload's pods.
                        // `request.namespace` is empty for existing workloads, so the namespace comes from the object.
                        name: COVERING,
                        apiCall: {
                            urlPath: `/apis/policy/v1/namespaces/${kyvernoVar("metadata.namespace")}/poddisruptionbudgets`,
                            jmesPath:
                                `items[?metadata.name != '${kyvernoVar("metadata.name")}${PDB_SUFFIX}' && spec.selector != \`null\` && ` +
                                `${jmesSelects("spec.selector.", `\`{{ ${POD_LABELS} }}\``)}] | length(@)`,
                        },
                    },
                ],
                preconditions: {
                    all: [
                        {
                            key: "{{ add(length(request.object.spec.selector.matchLabels || `{}`), length(request.object.spec.selector.matchExpressions || `[]`)) }}",
                            operator: "GreaterThan",
                            value: 0,
                        },
                        { key: `{{ ${COVERING} }}`, operator: "Equals", value: 0 },
                    ],
                },
                generate: {
                    apiVersion: pdb.apiVersion as string,
                    kind: pdb.kind as string,
                    name: toKyverno(pdbMeta.name) as string,
                    namespace: toKyverno(pdbMeta.namespace) as string,
                    synchronize: true,
                    data: { spec: toKyverno(pdb.spec) },
                },
            })),
        },
    };
}

export function spreadClusterPolicy(cfg: PolicyConfig): ClusterPolicy {
    return {
        apiVersion: "kyverno.io/v1",
        kind: "ClusterPolicy",
        metadata: metadata(
            POLICY_NAMES.spread,
            "topology spread constraints for the pods of a Deployment, StatefulSet or Rollout, unless it sets its own (ADR-056 D2)",
        ),
        spec: {
            // Only the webhookConfiguration field: Kyverno refuses a ClusterPolicy that also sets the
            // deprecated spec.failurePolicy ("remove the deprecated field", api/kyverno/v1
            // spec_types.go validateDeprecatedFields at v1.17.2; the e2e scenario kyverno-ready
            // showed it). Releases before 1.13 do not read this field and fail closed.
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
}

export function availabilityClusterPolicies(cfg: PolicyConfig): ClusterPolicy[] {
    return [pdbClusterPolicy(cfg), spreadClusterPolicy(cfg)];
}

/**
 * The prod replica floor. An omitted `spec.replicas` is not read as 1: a workload that leaves its
 * replicas to a HorizontalPodAutoscaler omits them, and the HPA's minReplicas carries the floor.
 * The Rollout CRD has no default for replicas, so an HPA-managed Rollout arrives without them; the
 * controller then writes 1 (argo-rollouts v1.9.0 `rollout/controller.go`, "Defaulting .spec.replica
 * to 1"), which passes while an HPA scales the Rollout. The API server defaults a Deployment's or
 * StatefulSet's replicas to 1 before admission, so for those only the HPA shows the difference.
 */
export function availabilityRules(cfg: PolicyConfig): Rule[] {
    const n = cfg.prodMinReplicas;
    const replicas = obj("spec.replicas");
    // The workload's HPA: another's, or an HPA of another kind, does not count.
    const scaled: Cond = {
        lookup: { name: "scalingHpas", apiVersion: "autoscaling/v2", resource: "horizontalpodautoscalers" },
        where: and(eq(field("item", "spec.scaleTargetRef.kind"), obj("kind")), eq(field("item", "spec.scaleTargetRef.name"), obj("metadata.name"))),
    };
    const hpaManaged: Cond = { var: "hpaManaged" };
    return [
        {
            name: POLICY_NAMES.replicaFloor,
            scope: "prod",
            background: true,
            vars: { hpaManaged: scaled },
            checks: [
                {
                    id: "check",
                    on: WORKLOADS.map((kind) => ({ kind })),
                    deny: and(has(replicas), { lt: replicas, than: n }, not(hpaManaged)),
                    message: MESSAGES.replicaFloor(n),
                },
                // The API server defaults a Deployment's and a StatefulSet's replicas; the Rollout CRD
                // has none, and the controller then reads an omitted value as 1 (argo-rollouts v1.9.0
                // utils/defaults/defaults.go GetReplicasOrDefault) and writes it back, which the floor
                // refuses: the Rollout would hang unreconciled instead of failing here.
                { id: "require-replicas", on: [{ kind: ROLLOUT }], deny: and(not(has(replicas)), not(hpaManaged)), message: MESSAGES.replicasOmitted(n) },
                {
                    id: "check",
                    on: [{ kind: HPA }],
                    // The floor applies to what the HPA of a pod controller says, not to the controller.
                    deny: and({ in: obj("spec.scaleTargetRef.kind"), among: WORKLOADS.map((w) => w.kind) }, { lt: obj("spec.minReplicas", 1), than: n }),
                    message: MESSAGES.hpaFloor(n),
                },
            ],
        },
        {
            name: POLICY_NAMES.defaultNamespace,
            scope: "default",
            background: true,
            checks: [
                { id: "check", on: WORKLOADS.map((kind) => ({ kind })), deny: eq(obj("metadata.namespace"), "default"), message: MESSAGES.defaultNamespace },
            ],
        },
    ];
}
