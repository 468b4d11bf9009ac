/**
 * Schema validation of every whole Kubernetes object the program declares, in the tests and in
 * the offline plan.
 *
 * Where a well-kept package of schema-validated models exists for a kind (kubernetes-models and
 * @kubernetes-models/*), its `validate()` is used: it checks types, enums and required fields
 * against the upstream schema (it lets unknown fields through). The newest releases of those
 * packages are ESM-only and need Node 22, so the last dual CommonJS releases are pinned. For
 * kinds no such release covers (CiliumNetworkPolicy, Kyverno's policies.kyverno.io/v1 types), a
 * strict typed model of the fields the program sets is used instead: it refuses unknown fields.
 *
 * Each model validates as its authors ship it. The models of @kubernetes-models/argo-rollouts and
 * @kubernetes-models/gateway-api compile their kind's schema the first time an object of that kind
 * is validated (most of a plan's time: docs/maintainers/benchmarks.md has the figures).
 */
import { SECRET } from "./offline";

interface Model {
    validate(): void;
}
type ModelClass = (new (data: never) => Model) & { apiVersion: string; kind: string };

/**
 * The module of each kind validated with a package's model, by `<apiVersion>/<kind>`; it exports
 * the model under the kind's name. Each is loaded only when a plan has an object of that kind
 * (`loadModel`): a package's index (`kubernetes-models/v1`) loads every kind of its group, hundreds
 * of modules, and loading a model registers its schema with the package's validator.
 */
export const PACKAGE_MODELS: Readonly<Record<string, string>> = {
    "v1/Namespace": "kubernetes-models/v1/Namespace",
    "v1/Service": "kubernetes-models/v1/Service",
    "v1/ConfigMap": "kubernetes-models/v1/ConfigMap",
    "v1/Secret": "kubernetes-models/v1/Secret",
    "apps/v1/Deployment": "kubernetes-models/apps/v1/Deployment",
    "policy/v1/PodDisruptionBudget": "kubernetes-models/policy/v1/PodDisruptionBudget",
    "rbac.authorization.k8s.io/v1/Role": "kubernetes-models/rbac.authorization.k8s.io/v1/Role",
    "rbac.authorization.k8s.io/v1/ClusterRole": "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole",
    "rbac.authorization.k8s.io/v1/RoleBinding": "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding",
    "rbac.authorization.k8s.io/v1/ClusterRoleBinding": "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding",
    "argoproj.io/v1alpha1/Rollout": "@kubernetes-models/argo-rollouts/argoproj.io/v1alpha1/Rollout",
    "argoproj.io/v1alpha1/AnalysisTemplate": "@kubernetes-models/argo-rollouts/argoproj.io/v1alpha1/AnalysisTemplate",
    "argoproj.io/v1alpha1/ClusterAnalysisTemplate": "@kubernetes-models/argo-rollouts/argoproj.io/v1alpha1/ClusterAnalysisTemplate",
    "gateway.networking.k8s.io/v1/HTTPRoute": "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute",
    "gateway.networking.k8s.io/v1beta1/ReferenceGrant": "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1beta1/ReferenceGrant",
    "kyverno.io/v1/ClusterPolicy": "@kubernetes-models/kyverno/kyverno.io/v1/ClusterPolicy",
};

/** The package model of a kind (`<apiVersion>/<kind>`), or undefined when no package covers it. */
export function loadModel(key: string): ModelClass | undefined {
    const file = Object.hasOwn(PACKAGE_MODELS, key) ? PACKAGE_MODELS[key] : undefined;
    if (!file) {
        return undefined;
    }
    const kind = key.slice(key.lastIndexOf("/") + 1);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require(file) as Record<string, ModelClass>)[kind];
}

// ---------------------------------------------------------------------------------------------
// Strict typed models: every field the program sets, nothing else.

type Shape =
    | { t: "string"; pattern?: RegExp; oneOf?: readonly string[] }
    | { t: "int"; min?: number; max?: number }
    | { t: "bool" }
    | { t: "object"; fields: Record<string, Shape>; required?: string[] }
    | { t: "map"; values: Shape }
    | { t: "array"; items: Shape; min?: number };

const str = (pattern?: RegExp): Shape => ({ t: "string", ...(pattern ? { pattern } : {}) });
const oneOf = (...values: string[]): Shape => ({ t: "string", oneOf: values });
const bool: Shape = { t: "bool" };
const arr = (items: Shape, min?: number): Shape => ({ t: "array", items, ...(min !== undefined ? { min } : {}) });
const obj = (fields: Record<string, Shape>, required: string[] = []): Shape => ({ t: "object", fields, required });
const map = (values: Shape): Shape => ({ t: "map", values });

/** Checks `value` against `shape`; returns the problems with their paths. */
export function checkShape(shape: Shape, value: unknown, path = ""): string[] {
    const at = path || "(root)";
    switch (shape.t) {
        case "string":
            if (typeof value !== "string") {
                return [`${at}: must be a string`];
            }
            if (shape.oneOf && !shape.oneOf.includes(value)) {
                return [`${at}: must be one of ${shape.oneOf.join(", ")}`];
            }
            return shape.pattern && !shape.pattern.test(value) ? [`${at}: ${JSON.stringify(value)} does not match ${shape.pattern}`] : [];
        case "int":
            return Number.isInteger(value) &&
                (shape.min === undefined || (value as number) >= shape.min) &&
                (shape.max === undefined || (value as number) <= shape.max)
                ? []
                : [`${at}: must be an integer`];
        case "bool":
            return typeof value === "boolean" ? [] : [`${at}: must be true or false`];
        case "array": {
            if (!Array.isArray(value)) {
                return [`${at}: must be a list`];
            }
            const size = shape.min !== undefined && value.length < shape.min ? [`${at}: needs at least ${shape.min} entries`] : [];
            return [...size, ...value.flatMap((v, i) => checkShape(shape.items, v, `${path}[${i}]`))];
        }
        case "map":
            if (value === null || typeof value !== "object" || Array.isArray(value)) {
                return [`${at}: must be a map`];
            }
            return Object.entries(value).flatMap(([k, v]) => checkShape(shape.values, v, `${path}.${k}`));
        case "object": {
            if (value === null || typeof value !== "object" || Array.isArray(value)) {
                return [`${at}: must be an object`];
            }
            const o = value as Record<string, unknown>;
            const unknown = Object.keys(o)
                .filter((k) => !(k in shape.fields))
                .map((k) => `${path}.${k}: unknown field`);
            const missing = (shape.required ?? []).filter((k) => o[k] === undefined).map((k) => `${path}.${k}: required`);
            const nested = Object.entries(o)
                .filter(([k]) => k in shape.fields)
                .flatMap(([k, v]) => checkShape(shape.fields[k], v, `${path}.${k}`));
            return [...unknown, ...missing, ...nested];
        }
    }
}

const labelSelector = obj({
    matchLabels: map(str()),
    matchExpressions: arr(obj({ key: str(), operator: oneOf("In", "NotIn", "Exists", "DoesNotExist"), values: arr(str()) }, ["key", "operator"])),
});
const metadata = obj({ name: str(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/), namespace: str(), labels: map(str()), annotations: map(str()) }, ["name"]);

// Cilium 1.19 `cilium.io/v2` CiliumNetworkPolicy (fields as in the upstream CRD).
const ciliumPorts = obj(
    {
        ports: arr(obj({ port: str(/^([0-9]{1,5}|[a-z][-a-z0-9]*)$/), protocol: oneOf("TCP", "UDP", "SCTP", "ANY") }, ["port"]), 1),
        rules: obj({ dns: arr(obj({ matchName: str(), matchPattern: str() })) }),
    },
    ["ports"],
);
const ciliumEgress = obj({
    toEndpoints: arr(labelSelector),
    toEntities: arr(oneOf("all", "world", "cluster", "host", "init", "ingress", "unmanaged", "remote-node", "health", "none", "kube-apiserver")),
    toFQDNs: arr(obj({ matchName: str(/^[a-z0-9.*-]+$/), matchPattern: str(/^[a-z0-9.*-]+$/) })),
    toCIDR: arr(str(/^[0-9.]+\/[0-9]{1,2}$/)),
    toPorts: arr(ciliumPorts),
});
const ciliumIngress = obj({ fromEndpoints: arr(labelSelector), fromEntities: arr(str()), toPorts: arr(ciliumPorts) });
export const CILIUM_NETWORK_POLICY = obj(
    {
        apiVersion: oneOf("cilium.io/v2"),
        kind: oneOf("CiliumNetworkPolicy"),
        metadata,
        spec: obj(
            {
                description: str(),
                endpointSelector: labelSelector,
                enableDefaultDeny: obj({ ingress: bool, egress: bool }),
                ingress: arr(ciliumIngress),
                egress: arr(ciliumEgress),
            },
            ["endpointSelector"],
        ),
    },
    ["apiVersion", "kind", "metadata", "spec"],
);

// Kyverno `policies.kyverno.io/v1`, served from 1.17 (fields as in the upstream CRDs,
// kyverno/kyverno `config/crds/policies.kyverno.io/*.yaml`).
const celPair = obj({ name: str(/^[A-Za-z][A-Za-z0-9_-]*$/), expression: str() }, ["name", "expression"]);
const matchConstraints = obj(
    {
        resourceRules: arr(
            obj({
                apiGroups: arr(str()),
                apiVersions: arr(str()),
                operations: arr(oneOf("CREATE", "UPDATE", "DELETE", "CONNECT", "*")),
                // A resource, or a resource and its subresource (`rollouts/status`).
                resources: arr(str(/^[a-z0-9*][a-z0-9.*-]*(\/[a-z*]+)?$/)),
            }),
            1,
        ),
        namespaceSelector: labelSelector,
        objectSelector: labelSelector,
    },
    ["resourceRules"],
);
const failurePolicy = oneOf("Fail", "Ignore");
// `webhookConfiguration.timeoutSeconds`: 1 to 30 (the CRDs' description; Kyverno's default is 10).
const kyvernoCommon = {
    matchConstraints,
    matchConditions: arr(celPair),
    variables: arr(celPair),
    webhookConfiguration: obj({ timeoutSeconds: { t: "int", min: 1, max: 30 } }),
};
const kyvernoPolicy = (kind: string, spec: Record<string, Shape>, required: string[]): Shape =>
    obj(
        {
            apiVersion: oneOf("policies.kyverno.io/v1"),
            kind: oneOf(kind),
            metadata,
            spec: obj({ ...kyvernoCommon, ...spec }, ["matchConstraints", ...required]),
        },
        ["apiVersion", "kind", "metadata", "spec"],
    );
export const VALIDATING_POLICY = kyvernoPolicy(
    "ValidatingPolicy",
    {
        failurePolicy,
        validations: arr(obj({ expression: str(), message: str(), messageExpression: str() }, ["expression"]), 1),
        validationActions: arr(oneOf("Deny", "Audit", "Warn"), 1),
        evaluation: obj({ background: obj({ enabled: bool }), admission: obj({ enabled: bool }) }),
    },
    ["validations"],
);
export const MUTATING_POLICY = kyvernoPolicy(
    "MutatingPolicy",
    {
        failurePolicy,
        mutations: arr(
            obj(
                {
                    patchType: oneOf("ApplyConfiguration", "JSONPatch"),
                    applyConfiguration: obj({ expression: str() }, ["expression"]),
                    jsonPatch: obj({ expression: str() }, ["expression"]),
                },
                ["patchType"],
            ),
            1,
        ),
        reinvocationPolicy: oneOf("Never", "IfNeeded"),
        evaluation: obj({ mutateExisting: obj({ enabled: bool }), admission: obj({ enabled: bool }), background: obj({ enabled: bool }) }),
    },
    ["mutations"],
);
// No failurePolicy: the GeneratingPolicy CRD has none.
export const GENERATING_POLICY = kyvernoPolicy(
    "GeneratingPolicy",
    {
        generate: arr(obj({ expression: str() }, ["expression"]), 1),
        evaluation: obj({
            generateExisting: obj({ enabled: bool }),
            synchronize: obj({ enabled: bool }),
            orphanDownstreamOnPolicyDelete: obj({ enabled: bool }),
            admission: obj({ enabled: bool }),
        }),
    },
    ["generate"],
);

/** Kinds validated with the typed models above. */
export const TYPED_MODELS: Readonly<Record<string, Shape>> = {
    "cilium.io/v2/CiliumNetworkPolicy": CILIUM_NETWORK_POLICY,
    "policies.kyverno.io/v1/ValidatingPolicy": VALIDATING_POLICY,
    "policies.kyverno.io/v1/MutatingPolicy": MUTATING_POLICY,
    "policies.kyverno.io/v1/GeneratingPolicy": GENERATING_POLICY,
};

export interface SchemaResult {
    object: string;
    via: "package" | "typed model" | "none";
    problems: string[];
}

/**
 * The object without the values the plan shows as "[secret]": their real type is unknown here
 * (a whole Secret `stringData` map is one secret), so they are left out of the check.
 */
export function withoutSecrets(value: unknown): unknown {
    if (Array.isArray(value)) {
        return value.filter((v) => v !== SECRET).map(withoutSecrets);
    }
    if (value !== null && typeof value === "object") {
        return Object.fromEntries(
            Object.entries(value)
                .filter(([, v]) => v !== SECRET)
                .map(([k, v]) => [k, withoutSecrets(v)]),
        );
    }
    return value;
}

/** Validates one object against its kind's schema. */
export function validateObject(input: Record<string, unknown>): SchemaResult {
    const o = withoutSecrets(input) as Record<string, unknown>;
    const key = `${String(o.apiVersion)}/${String(o.kind)}`;
    const name = String((o.metadata as { name?: string } | undefined)?.name ?? "?");
    const object = `${String(o.kind)} ${name}`;
    const Model = loadModel(key);
    if (Model) {
        // The model's constructor drops undefined values and sets apiVersion and kind.
        const model = new Model(o as never);
        try {
            model.validate();
            return { object, via: "package", problems: [] };
        } catch (err) {
            return { object, via: "package", problems: [err instanceof Error ? err.message : String(err)] };
        }
    }
    const shape = TYPED_MODELS[key];
    if (shape) {
        return { object, via: "typed model", problems: checkShape(shape, o) };
    }
    return { object, via: "none", problems: [`no schema for ${key}: add a package model or a typed model`] };
}
