/**
 * Namespaces Kubernetes itself owns (created by the API server: default, kube-system, kube-public,
 * kube-node-lease). The addon never declares, labels or runs anything in them: declaring one
 * would put it under this stack (and its Pod Security labels) and a destroy would try to delete it.
 */
export const PLATFORM_NAMESPACES: readonly string[] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/** The Pod Security admission labels (k8s.io/pod-security-admission api/constants.go: pod-security.kubernetes.io/<mode>[-version]). */
export const POD_SECURITY_LABEL = /^pod-security\.kubernetes\.io\/(enforce|audit|warn)(-version)?$/;

/**
 * A namespace name: a DNS-1123 label of at most 63 characters (k8s.io/apimachinery
 * pkg/api/validation/generic.go v0.34.0 `ValidateNamespaceName` = `NameIsDNSLabel`). The pattern
 * alone allows any length; the API server refuses the 64th character when the object is created.
 */
export const NAMESPACE_RULE = {
    pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    maxLength: 63,
    describe: "a namespace name (DNS label: at most 63 lowercase letters, digits, '-')",
};

/**
 * `kube-` is the prefix Kubernetes keeps for its own namespaces (kubernetes/website
 * content/en/docs/concepts/overview/working-with-objects/namespaces.md: "Avoid creating namespaces
 * with the prefix kube-, since it is reserved for Kubernetes system namespaces"): a namespace the
 * addon creates never takes it.
 */
export const RESERVED_NAMESPACE_PREFIX = "kube-";

/**
 * The label the API server sets on every namespace to its name (kubernetes/kubernetes
 * pkg/registry/core/namespace/strategy.go v1.34.0 `Canonicalize`, on create and update:
 * `ns.Labels[v1.LabelMetadataName] = ns.Name`): a value set here is overwritten, and every preview shows the diff again.
 */
export const METADATA_NAME_LABEL = "kubernetes.io/metadata.name";

/**
 * Why a namespace the addon creates (and a destroy deletes) must not be `ns`: one of Kubernetes'
 * own, the reserved prefix, or a namespace another key of the same stack names as someone else's
 * (`others`: key -> namespace). Undefined when it is free.
 */
export function foreignNamespace(ns: string, others: Readonly<Record<string, string | undefined>>): string | undefined {
    if (PLATFORM_NAMESPACES.includes(ns)) {
        return `one of Kubernetes' own namespaces (${PLATFORM_NAMESPACES.join(", ")})`;
    }
    if (ns.startsWith(RESERVED_NAMESPACE_PREFIX)) {
        return `a kube- namespace: Kubernetes reserves the prefix for its own`;
    }
    const owner = Object.entries(others).find(([, v]) => v === ns)?.[0];
    return owner ? `the namespace of ${owner} (someone else's: creating it fails, and a destroy would delete it)` : undefined;
}
