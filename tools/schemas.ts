/** Each whole object validated by the `validate()` of kubernetes-models; the kinds none covers are the API server's to check. */
import { SECRET } from "./offline";

type Model = { validate(): void };
type ModelClass = (new (data: never) => Model) & { apiVersion: string; kind: string };

/** The module of each kind's model, by `<apiVersion>/<kind>`: loaded one by one, as a package's index loads hundreds. */
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
    if (!file) return undefined;
    const kind = key.slice(key.lastIndexOf("/") + 1);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require(file) as Record<string, ModelClass>)[kind];
}

export interface SchemaResult {
    object: string;
    /** "none": the API server validates it against its CRD at up. */
    via: "package" | "none";
    problems: string[];
}

/** The object without the values the plan shows as "[secret]", whose real type is unknown here. */
export function withoutSecrets(value: unknown): unknown {
    if (Array.isArray(value)) return value.filter((v) => v !== SECRET).map(withoutSecrets);
    if (value !== null && typeof value === "object") {
        return Object.fromEntries(
            Object.entries(value)
                .filter(([, v]) => v !== SECRET)
                .map(([k, v]) => [k, withoutSecrets(v)]),
        );
    }
    return value;
}

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
    return { object, via: "none", problems: [] };
}
