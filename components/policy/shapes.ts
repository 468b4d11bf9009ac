/**
 * Shapes of the Kyverno objects the policy stage writes: the fields used, named as in the upstream
 * CRDs (kyverno/kyverno `config/crds/policies.kyverno.io/*.yaml`, `config/crds/kyverno/kyverno.io_clusterpolicies.yaml`).
 */
import type { FailurePolicy, LabelSelector } from "./config";
import type { KyvernoValue } from "./template";

export type { LabelSelector } from "./config";

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

/** A CEL policy's `spec.webhookConfiguration` (kyverno/api policies.kyverno.io WebhookConfiguration). */
export interface CelWebhookConfiguration {
    timeoutSeconds?: number;
}

export interface ValidatingPolicy {
    apiVersion: "policies.kyverno.io/v1";
    kind: "ValidatingPolicy";
    metadata: PolicyMetadata;
    spec: {
        validationActions: ("Deny" | "Audit" | "Warn")[];
        failurePolicy: FailurePolicy;
        evaluation: { background: { enabled: boolean } };
        matchConstraints: MatchConstraints;
        matchConditions?: NamedExpression[];
        variables?: NamedExpression[];
        validations: { expression: string; message: string }[];
        webhookConfiguration?: CelWebhookConfiguration;
    };
}

export interface MutatingPolicy {
    apiVersion: "policies.kyverno.io/v1";
    kind: "MutatingPolicy";
    metadata: PolicyMetadata;
    spec: {
        failurePolicy: FailurePolicy;
        evaluation: { mutateExisting: { enabled: boolean } };
        matchConstraints: MatchConstraints;
        matchConditions: NamedExpression[];
        variables?: NamedExpression[];
        mutations: { patchType: "JSONPatch"; jsonPatch: { expression: string } }[];
        webhookConfiguration?: CelWebhookConfiguration;
    };
}

/** A GeneratingPolicy has no failurePolicy: generation runs after admission, in the background controller. */
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
        webhookConfiguration?: CelWebhookConfiguration;
    };
}

export type CelPolicy = ValidatingPolicy | MutatingPolicy | GeneratingPolicy;

export type ConditionOperator = "Equals" | "NotEquals" | "GreaterThan" | "GreaterThanOrEquals" | "LessThan" | "AnyIn" | "AnyNotIn" | "AllNotIn";

export interface Condition {
    key: KyvernoValue;
    operator: ConditionOperator;
    value: KyvernoValue;
}

/** Kyverno conditions: every `all` holds and, when `any` is given, at least one of `any`. */
export interface Conditions {
    all?: Condition[];
    any?: Condition[];
}

export interface ContextEntry {
    name: string;
    apiCall?: { urlPath: string; jmesPath: string };
    variable?: { jmesPath: string };
}

export interface ClusterPolicyRule {
    name: string;
    match: { any: { resources: { kinds: string[]; operations?: string[]; namespaceSelector?: LabelSelector } }[] };
    exclude?: { any: { resources: { namespaces: string[] } }[] };
    context?: ContextEntry[];
    preconditions?: Conditions;
    validate?: { failureAction: "Enforce" | "Audit"; message: string; deny: { conditions: Conditions }; allowExistingViolations?: boolean };
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
        webhookConfiguration?: { failurePolicy?: FailurePolicy; matchConditions?: NamedExpression[] };
        background: boolean;
        /** An Audit violation is also a warning in the admission response. */
        emitWarning?: boolean;
        generateExisting?: boolean;
        rules: ClusterPolicyRule[];
    };
}

export type KyvernoPolicy = CelPolicy | ClusterPolicy;
