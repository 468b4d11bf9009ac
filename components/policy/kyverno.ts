import type { PolicyConfig } from "../config/admission";
import { GATEWAY_API_PLUGIN } from "../rollouts/plugin";
import { PART_OF } from "../stage";
import { KyvernoValue, Template, kyvernoVar, ref, toCel, toKyverno } from "./template";
import { ROLLOUT, WORKLOADS, WorkloadKind, gvk } from "./workloads";

/**
 * The admission layer made Rollout-aware (ADR-056 D2, D8): ADR-085's availability policies with
 * Rollout matched explicitly, and two Rollout-only guards. Every policy is built for both Kyverno
 * APIs from the same names, messages and object templates, so the engine is a per-stack switch
 * with the same behaviour: `policies.kyverno.io/v1` (stable since Kyverno 1.18) by default, and
 * `kyverno.io/v1` ClusterPolicy (deprecated since 1.18, removal planned for 1.20) for older clusters.
 */

export const POLICY_NAMES = {
    pdb: "generate-workload-pdb",
    spread: "mutate-topology-spread",
    replicaFloor: "require-prod-replica-floor",
    defaultNamespace: "disallow-default-namespace",
    routeNamespace: "restrict-rollout-route-namespace",
    maxSurge: "require-canary-max-surge",
} as const;

export const MESSAGES = {
    replicaFloor: (n: number) => `in a prod namespace spec.replicas must be at least ${n}; a Rollout counts like a Deployment (ADR-056 D2)`,
    defaultNamespace: "workloads must not run in the default namespace (ADR-056 D2)",
    routeNamespace:
        "a Rollout's gatewayAPI traffic-routing plugin may only name routes in the Rollout's own namespace: the controller can update routes in every namespace, so another namespace's route would be another tenant's (ADR-056 D4)",
    maxSurge: "a canary Rollout needs maxSurge of at least 1, so the canary has headroom and cannot deadlock against the PodDisruptionBudget (ADR-056 D8)",
} as const;

/** The suffix of a generated PodDisruptionBudget's name: `<workload>-pdb`. */
export const PDB_SUFFIX = "-pdb";

/** The maxSurge a canary gets when it sets none (Argo Rollouts' default). */
export const DEFAULT_CANARY_MAX_SURGE = "25%";

/** maxSurge values that give a canary no headroom: 0, "0", "0%", "00%". */
export const ZERO_SURGE = "^0+%?$";

const OPERATIONS = ["CREATE", "UPDATE"];
const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

/**
 * The PodDisruptionBudget generated for a workload (ADR-085, D8): selects the workload's pods, so
 * stable and canary pods of a Rollout share one budget; `maxUnavailable` is a number of pods,
 * because a percentage is unreliable for Rollout-owned pools.
 */
export function pdbTemplate(maxUnavailable: number): Template {
    return {
        apiVersion: "policy/v1",
        kind: "PodDisruptionBudget",
        metadata: { name: ref("metadata.name", PDB_SUFFIX), namespace: ref("metadata.namespace") },
        spec: { maxUnavailable, selector: { matchLabels: ref("spec.selector.matchLabels") } },
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

// ---------------------------------------------------------------------------------------------
// Shapes of the objects written (the fields used; see the upstream CRD schemas).

export interface LabelSelector {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[];
}

export interface PolicyMetadata {
    name: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
}

export interface ResourceRule {
    apiGroups: string[];
    apiVersions: string[];
    resources: string[];
    operations: string[];
}

export interface MatchConstraints {
    resourceRules: ResourceRule[];
    namespaceSelector?: LabelSelector;
}

export interface NamedExpression {
    name: string;
    expression: string;
}

export interface ValidatingPolicy {
    apiVersion: "policies.kyverno.io/v1";
    kind: "ValidatingPolicy";
    metadata: PolicyMetadata;
    spec: {
        validationActions: ("Deny" | "Audit" | "Warn")[];
        failurePolicy: "Fail";
        evaluation: { background: { enabled: boolean } };
        matchConstraints: MatchConstraints;
        matchConditions?: NamedExpression[];
        variables?: NamedExpression[];
        validations: { expression: string; message: string }[];
    };
}

export interface MutatingPolicy {
    apiVersion: "policies.kyverno.io/v1";
    kind: "MutatingPolicy";
    metadata: PolicyMetadata;
    spec: {
        failurePolicy: "Fail";
        evaluation: { mutateExisting: { enabled: boolean } };
        matchConstraints: MatchConstraints;
        matchConditions: NamedExpression[];
        mutations: { patchType: "JSONPatch"; jsonPatch: { expression: string } }[];
    };
}

export interface GeneratingPolicy {
    apiVersion: "policies.kyverno.io/v1";
    kind: "GeneratingPolicy";
    metadata: PolicyMetadata;
    spec: {
        evaluation: { synchronize: { enabled: boolean }; generateExisting: { enabled: boolean } };
        matchConstraints: MatchConstraints;
        matchConditions: NamedExpression[];
        variables: NamedExpression[];
        generate: { expression: string }[];
    };
}

export type CelPolicy = ValidatingPolicy | MutatingPolicy | GeneratingPolicy;

export interface Condition {
    key: KyvernoValue;
    operator: "Equals" | "NotEquals" | "GreaterThan" | "LessThan" | "AnyNotIn";
    value: KyvernoValue;
}

export interface ClusterPolicyRule {
    name: string;
    match: { any: { resources: { kinds: string[]; operations?: string[]; namespaceSelector?: LabelSelector } }[] };
    exclude?: { any: { resources: { namespaces: string[] } }[] };
    context?: { name: string; apiCall: { urlPath: string; jmesPath: string } }[];
    preconditions?: { all: Condition[] };
    validate?: { failureAction: "Enforce" | "Audit"; message: string; deny: { conditions: { any: Condition[] } } };
    mutate?: { patchStrategicMerge: KyvernoValue };
    generate?: { apiVersion: string; kind: string; name: string; namespace: string; synchronize: boolean; data: KyvernoValue };
}

export interface ClusterPolicy {
    apiVersion: "kyverno.io/v1";
    kind: "ClusterPolicy";
    metadata: PolicyMetadata;
    spec: {
        /** Deprecated since 1.13 in favour of the rule's `failureAction`, but the only field older releases read. */
        validationFailureAction?: "Enforce" | "Audit";
        background: boolean;
        generateExisting?: boolean;
        rules: ClusterPolicyRule[];
    };
}

export type KyvernoPolicy = CelPolicy | ClusterPolicy;

function metadata(name: string, description: string): PolicyMetadata {
    return {
        name,
        labels: { ...PART_OF },
        annotations: { "policies.kyverno.io/title": name, "policies.kyverno.io/description": description },
    };
}

const kindLabel = (w: WorkloadKind): string => w.kind.toLowerCase();

// ---------------------------------------------------------------------------------------------
// policies.kyverno.io/v1

function resourceRules(kinds: readonly WorkloadKind[]): ResourceRule[] {
    return kinds.map((w) => ({ apiGroups: [w.group], apiVersions: [w.version], resources: [w.resource], operations: [...OPERATIONS] }));
}

function namespaceSelector(cfg: PolicyConfig, prodOnly: boolean): LabelSelector | undefined {
    const selector: LabelSelector = {};
    if (prodOnly) {
        selector.matchLabels = { ...cfg.prodNamespaceLabels };
    }
    if (cfg.excludeNamespaces.length > 0) {
        selector.matchExpressions = [{ key: NAMESPACE_NAME_LABEL, operator: "NotIn", values: [...cfg.excludeNamespaces] }];
    }
    return Object.keys(selector).length > 0 ? selector : undefined;
}

function constraints(cfg: PolicyConfig, kinds: readonly WorkloadKind[], prodOnly = false): MatchConstraints {
    const ns = namespaceSelector(cfg, prodOnly);
    return { resourceRules: resourceRules(kinds), ...(ns ? { namespaceSelector: ns } : {}) };
}

function validating(cfg: PolicyConfig, name: string, kinds: readonly WorkloadKind[], check: { expression: string; message: string; variables?: NamedExpression[]; prodOnly?: boolean }): ValidatingPolicy {
    return {
        apiVersion: "policies.kyverno.io/v1",
        kind: "ValidatingPolicy",
        metadata: metadata(name, check.message),
        spec: {
            validationActions: cfg.validationAction === "Enforce" ? ["Deny"] : ["Audit", "Warn"],
            failurePolicy: "Fail",
            evaluation: { background: { enabled: true } },
            matchConstraints: constraints(cfg, kinds, check.prodOnly),
            ...(check.variables ? { variables: check.variables } : {}),
            validations: [{ expression: check.expression, message: check.message }],
        },
    };
}

/** A workload whose pods are selected by labels: the generated budget selects the same pods. */
const SELECTS_BY_LABELS = "has(object.spec.selector) && has(object.spec.selector.matchLabels) && size(object.spec.selector.matchLabels) > 0";

/** The gatewayAPI plugin's config in a canary Rollout, or an empty map. Indexed, because `namespace` is a CEL reserved word. */
const GATEWAY_API_CONFIG =
    "has(object.spec.strategy) && has(object.spec.strategy.canary) && has(object.spec.strategy.canary.trafficRouting) && " +
    `has(object.spec.strategy.canary.trafficRouting.plugins) && ${JSON.stringify(GATEWAY_API_PLUGIN)} in object.spec.strategy.canary.trafficRouting.plugins ` +
    `? object.spec.strategy.canary.trafficRouting.plugins[${JSON.stringify(GATEWAY_API_PLUGIN)}] : dyn({})`;

export function celPolicies(cfg: PolicyConfig): CelPolicy[] {
    const pdb: GeneratingPolicy = {
        apiVersion: "policies.kyverno.io/v1",
        kind: "GeneratingPolicy",
        metadata: metadata(POLICY_NAMES.pdb, "a PodDisruptionBudget with an integer maxUnavailable per Deployment, StatefulSet and Rollout, unless one already selects its pods (ADR-056 D2, D8)"),
        spec: {
            // Synchronized: the budget follows the workload's selector and goes with the workload.
            // Existing workloads get theirs when the policy is created: a Rollout had none before.
            evaluation: { synchronize: { enabled: true }, generateExisting: { enabled: true } },
            matchConstraints: constraints(cfg, WORKLOADS),
            matchConditions: [{ name: "selects-pods-by-labels", expression: SELECTS_BY_LABELS }],
            variables: [
                { name: "pdbName", expression: toCel(ref("metadata.name", PDB_SUFFIX)) },
                {
                    // Another budget over the same pods makes evictions of those pods fail; the
                    // generated one itself does not count, or it would delete itself on the next update.
                    name: "coveredElsewhere",
                    expression:
                        'resource.List("policy/v1", "poddisruptionbudgets", object.metadata.namespace).items.exists(p, ' +
                        "p.metadata.name != variables.pdbName && has(p.spec.selector) && has(p.spec.selector.matchLabels) && " +
                        "dyn(p.spec.selector.matchLabels) == dyn(object.spec.selector.matchLabels))",
                },
                { name: "pdb", expression: `[${toCel(pdbTemplate(cfg.pdbMaxUnavailable))}]` },
            ],
            generate: [{ expression: "generator.Apply(object.metadata.namespace, variables.coveredElsewhere ? [] : variables.pdb)" }],
        },
    };

    // One policy per kind: each carries its own revision label, and a MutatingPolicy has no
    // per-mutation condition.
    const spread: MutatingPolicy[] = WORKLOADS.map((w) => ({
        apiVersion: "policies.kyverno.io/v1",
        kind: "MutatingPolicy",
        metadata: metadata(`${POLICY_NAMES.spread}-${kindLabel(w)}`, `topology spread constraints for a ${w.kind}'s pods, unless it sets its own (ADR-056 D2)`),
        spec: {
            failurePolicy: "Fail",
            // Admission only: mutating existing workloads would restart every one of them.
            evaluation: { mutateExisting: { enabled: false } },
            matchConstraints: constraints(cfg, [w]),
            matchConditions: [
                { name: "has-pod-template", expression: "has(object.spec.template) && has(object.spec.template.spec)" },
                // Self-guarded: every condition is evaluated, and one that errors fails the request.
                { name: "no-spread-set", expression: "!(has(object.spec.template) && has(object.spec.template.spec) && has(object.spec.template.spec.topologySpreadConstraints))" },
            ],
            // JSONPatch rather than ApplyConfiguration: it needs no schema of the Rollout CRD.
            mutations: [
                {
                    patchType: "JSONPatch",
                    jsonPatch: { expression: `[JSONPatch{op: "add", path: "/spec/template/spec/topologySpreadConstraints", value: ${toCel(topologySpreadTemplate(w, cfg.topologyKeys))}}]` },
                },
            ],
        },
    }));

    return [
        pdb,
        ...spread,
        validating(cfg, POLICY_NAMES.replicaFloor, WORKLOADS, {
            expression: `(has(object.spec.replicas) ? object.spec.replicas : 1) >= ${cfg.prodMinReplicas}`,
            message: MESSAGES.replicaFloor(cfg.prodMinReplicas),
            prodOnly: true,
        }),
        validating(cfg, POLICY_NAMES.defaultNamespace, WORKLOADS, {
            expression: 'object.metadata.namespace != "default"',
            message: MESSAGES.defaultNamespace,
        }),
        validating(cfg, POLICY_NAMES.routeNamespace, [ROLLOUT], {
            variables: [{ name: "gatewayApi", expression: GATEWAY_API_CONFIG }],
            expression: '!("namespace" in variables.gatewayApi) || variables.gatewayApi["namespace"] == "" || variables.gatewayApi["namespace"] == object.metadata.namespace',
            message: MESSAGES.routeNamespace,
        }),
        validating(cfg, POLICY_NAMES.maxSurge, [ROLLOUT], {
            expression: `!(has(object.spec.strategy) && has(object.spec.strategy.canary) && has(object.spec.strategy.canary.maxSurge)) || !string(object.spec.strategy.canary.maxSurge).matches(${JSON.stringify(ZERO_SURGE)})`,
            message: MESSAGES.maxSurge,
        }),
    ];
}

// ---------------------------------------------------------------------------------------------
// kyverno.io/v1 ClusterPolicy: one rule per kind, so Rollout is always its own rule (Kyverno #7446).

function clusterRule(cfg: PolicyConfig, name: string, w: WorkloadKind, opts: { operations?: boolean; prodOnly?: boolean } = {}): ClusterPolicyRule {
    const resources = {
        kinds: [gvk(w)],
        ...(opts.operations === false ? {} : { operations: [...OPERATIONS] }),
        ...(opts.prodOnly ? { namespaceSelector: { matchLabels: { ...cfg.prodNamespaceLabels } } } : {}),
    };
    return {
        name: `${name}-${kindLabel(w)}`,
        match: { any: [{ resources }] },
        ...(cfg.excludeNamespaces.length > 0 ? { exclude: { any: [{ resources: { namespaces: [...cfg.excludeNamespaces] } }] } } : {}),
    };
}

function clusterValidating(cfg: PolicyConfig, name: string, kinds: readonly WorkloadKind[], check: { deny: Condition; message: string; prodOnly?: boolean }): ClusterPolicy {
    return {
        apiVersion: "kyverno.io/v1",
        kind: "ClusterPolicy",
        metadata: metadata(name, check.message),
        spec: {
            // Both: the rule-level field (1.13+) wins where it is known; older releases prune it and
            // read the policy-level one, so neither silently falls back to Audit.
            validationFailureAction: cfg.validationAction,
            background: true,
            rules: kinds.map((w) => ({
                ...clusterRule(cfg, "check", w, { prodOnly: check.prodOnly }),
                validate: { failureAction: cfg.validationAction, message: check.message, deny: { conditions: { any: [check.deny] } } },
            })),
        },
    };
}

const PDB_SELECTORS = "otherPdbSelectors";

export function clusterPolicies(cfg: PolicyConfig): ClusterPolicy[] {
    const pdb = pdbTemplate(cfg.pdbMaxUnavailable) as { readonly [k: string]: Template };
    const pdbMeta = pdb.metadata as { readonly [k: string]: Template };
    const generate: ClusterPolicy = {
        apiVersion: "kyverno.io/v1",
        kind: "ClusterPolicy",
        metadata: metadata(POLICY_NAMES.pdb, "a PodDisruptionBudget with an integer maxUnavailable per Deployment, StatefulSet and Rollout, unless one already selects its pods (ADR-056 D2, D8)"),
        spec: {
            background: true,
            generateExisting: true,
            rules: WORKLOADS.map((w) => ({
                // No operations filter: a synchronized downstream is cleaned up on the trigger's DELETE.
                ...clusterRule(cfg, "pdb", w, { operations: false }),
                context: [
                    {
                        // Selectors of the namespace's other budgets, each as canonical JSON (sorted keys),
                        // because AnyNotIn compares strings, not maps. `request.namespace` is empty for
                        // existing workloads, so the namespace comes from the object.
                        name: PDB_SELECTORS,
                        apiCall: {
                            urlPath: `/apis/policy/v1/namespaces/${kyvernoVar("metadata.namespace")}/poddisruptionbudgets`,
                            jmesPath: `items[?metadata.name != '${kyvernoVar("metadata.name")}${PDB_SUFFIX}'].spec.selector.matchLabels | map(&to_string(@), @)`,
                        },
                    },
                ],
                preconditions: {
                    all: [
                        { key: "{{ length(request.object.spec.selector.matchLabels || `{}`) }}", operator: "GreaterThan", value: 0 },
                        { key: "{{ to_string(request.object.spec.selector.matchLabels) }}", operator: "AnyNotIn", value: `{{ ${PDB_SELECTORS} }}` },
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

    const spread: ClusterPolicy = {
        apiVersion: "kyverno.io/v1",
        kind: "ClusterPolicy",
        metadata: metadata(POLICY_NAMES.spread, "topology spread constraints for the pods of a Deployment, StatefulSet or Rollout, unless it sets its own (ADR-056 D2)"),
        spec: {
            background: true,
            rules: WORKLOADS.map((w) => ({
                ...clusterRule(cfg, "spread", w),
                // A workloadRef Rollout has no pod template to mutate.
                preconditions: { all: [{ key: "{{ request.object.spec.workloadRef.name || '' }}", operator: "Equals", value: "" }] },
                // `+(...)`: add only when the workload sets no constraints of its own.
                mutate: { patchStrategicMerge: { spec: { template: { spec: { "+(topologySpreadConstraints)": toKyverno(topologySpreadTemplate(w, cfg.topologyKeys)) } } } } },
            })),
        },
    };

    return [
        generate,
        spread,
        clusterValidating(cfg, POLICY_NAMES.replicaFloor, WORKLOADS, {
            // JMESPath `||` falls back only on null, so an explicit 0 is still 0.
            deny: { key: "{{ request.object.spec.replicas || `1` }}", operator: "LessThan", value: cfg.prodMinReplicas },
            message: MESSAGES.replicaFloor(cfg.prodMinReplicas),
            prodOnly: true,
        }),
        clusterValidating(cfg, POLICY_NAMES.defaultNamespace, WORKLOADS, {
            deny: { key: kyvernoVar("metadata.namespace"), operator: "Equals", value: "default" },
            message: MESSAGES.defaultNamespace,
        }),
        clusterValidating(cfg, POLICY_NAMES.routeNamespace, [ROLLOUT], {
            deny: {
                key: `{{ request.object.spec.strategy.canary.trafficRouting.plugins.${JSON.stringify(GATEWAY_API_PLUGIN)}.namespace || request.object.metadata.namespace }}`,
                operator: "NotEquals",
                value: kyvernoVar("metadata.namespace"),
            },
            message: MESSAGES.routeNamespace,
        }),
        clusterValidating(cfg, POLICY_NAMES.maxSurge, [ROLLOUT], {
            deny: {
                key: `{{ regex_match('${ZERO_SURGE}', to_string(request.object.spec.strategy.canary.maxSurge || '${DEFAULT_CANARY_MAX_SURGE}')) }}`,
                operator: "Equals",
                value: true,
            },
            message: MESSAGES.maxSurge,
        }),
    ];
}

/** The stack's policies in the configured API. */
export function kyvernoPolicies(cfg: PolicyConfig): KyvernoPolicy[] {
    return cfg.kyvernoApi === "kyverno.io/v1" ? clusterPolicies(cfg) : celPolicies(cfg);
}
