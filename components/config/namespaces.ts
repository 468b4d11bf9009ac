/**
 * Namespaces Kubernetes itself owns (created by the API server: default, kube-system, kube-public,
 * kube-node-lease). The addon never declares, labels or runs anything in them: declaring one
 * would put it under this stack (and its Pod Security labels) and a destroy would try to delete it.
 */
export const PLATFORM_NAMESPACES: readonly string[] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/** The Pod Security admission labels (k8s.io/pod-security-admission api/constants.go: pod-security.kubernetes.io/<mode>[-version]). */
export const POD_SECURITY_LABEL = /^pod-security\.kubernetes\.io\/(enforce|audit|warn)(-version)?$/;
