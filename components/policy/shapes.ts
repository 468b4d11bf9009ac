/**
 * Shapes of the Kyverno objects the policy stage writes: the fields used, named as in the upstream
 * CRDs (kyverno/kyverno `config/crds/policies.kyverno.io/*.yaml`, `config/crds/kyverno/kyverno.io_clusterpolicies.yaml`).
 */
import type { FailurePolicy, LabelSelector } from "./config";
import type { KyvernoValue } from "./template";

export type { LabelSelector } from "./config";

export type PolicyMetadata = { name: string; labels: Record<string, string>; annotations: Record<string, string> };
export type ResourceRule = { apiGroups: string[]; apiVersions: string[]; resources: string[]; operations: string[] };
export type MatchConstraints = { resourceRules: ResourceRule[]; namespaceSelector?: LabelSelector; objectSelector?: LabelSelector };
export type NamedExpression = { name: string; expression: string };

/** What every CEL policy's spec has; `webhookConfiguration.timeoutSeconds` gives it a webhook of its own (kyverno.ts). */
type CelSpec = { matchConstraints: MatchConstraints; webhookConfiguration?: { timeoutSeconds?: number } };

export interface ValidatingPolicy {
    apiVersion: "policies.kyverno.io/v1";
    kind: "ValidatingPolicy";
    metadata: PolicyMetadata;
    spec: CelSpec & {
        validationActions: ("Deny" | "Audit" | "Warn")[];
        failurePolicy: FailurePolicy;
        evaluation: { background: { enabled: boolean } };
        matchConditions?: NamedExpression[];
        variables?: NamedExpression[];
        validations: { expression: string; message: string }[];
    };
}

export interface MutatingPolicy {
    apiVersion: "policies.kyverno.io/v1";
    kind: "MutatingPolicy";
    metadata: PolicyMetadata;
    spec: CelSpec & {
        failurePolicy: FailurePolicy;
        evaluation: { mutateExisting: { enabled: boolean } };
        matchConditions: NamedExpression[];
        variables?: NamedExpression[];
        mutations: { patchType: "JSONPatch"; jsonPatch: { expression: string } }[];
    };
}

/** A GeneratingPolicy has no failurePolicy: generation runs after admission, in the background controller. */
export interface GeneratingPolicy {
    apiVersion: "policies.kyverno.io/v1";
    kind: "GeneratingPolicy";
    metadata: PolicyMetadata;
    spec: CelSpec & {
        evaluation: { synchronize: { enabled: boolean }; generateExisting: { enabled: boolean }; orphanDownstreamOnPolicyDelete?: { enabled: boolean } };
        matchConditions: NamedExpression[];
        variables: NamedExpression[];
        generate: { expression: string }[];
    };
}

export type CelPolicy = ValidatingPolicy | MutatingPolicy | GeneratingPolicy;

export type ConditionOperator = "Equals" | "NotEquals" | "GreaterThan" | "GreaterThanOrEquals" | "LessThan" | "AnyIn" | "AnyNotIn" | "AllNotIn";
export type Condition = { key: KyvernoValue; operator: ConditionOperator; value: KyvernoValue };
/** Kyverno conditions: every `all` holds and, when `any` is given, at least one of `any`. */
export type Conditions = { all?: Condition[]; any?: Condition[] };
export type ContextEntry = { name: string; apiCall?: { urlPath: string; jmesPath: string }; variable?: { jmesPath: string } };

export interface ClusterPolicyRule {
    name: string;
    match: { any: { resources: { kinds: string[]; operations?: string[]; namespaceSelector?: LabelSelector; selector?: LabelSelector } }[] };
    exclude?: { any: { resources: { namespaces: string[] } }[] };
    context?: ContextEntry[];
    preconditions?: Conditions;
    validate?: { failureAction: "Enforce" | "Audit"; message: string; deny: { conditions: Conditions }; allowExistingViolations?: boolean };
    mutate?: { patchStrategicMerge: KyvernoValue };
    generate?: {
        apiVersion: string;
        kind: string;
        name: string;
        namespace: string;
        synchronize: boolean;
        orphanDownstreamOnPolicyDelete?: boolean;
        data: KyvernoValue;
    };
}

export interface ClusterPolicy {
    apiVersion: "kyverno.io/v1";
    kind: "ClusterPolicy";
    metadata: PolicyMetadata;
    spec: {
        /** Deprecated since 1.13 in favour of the rule's `failureAction`, but the only field older releases read. */
        validationFailureAction?: "Enforce" | "Audit";
        webhookConfiguration?: { failurePolicy?: FailurePolicy; matchConditions?: NamedExpression[] };
        background: boolean;
        /** An Audit violation is also a warning in the admission response. */
        emitWarning?: boolean;
        generateExisting?: boolean;
        rules: ClusterPolicyRule[];
    };
}

export type KyvernoPolicy = CelPolicy | ClusterPolicy;
