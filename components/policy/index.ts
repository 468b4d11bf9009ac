// The policy folder's public surface: the stage's component (stage.ts) and what other folders, the tools and the tests read.
export { gitopsIdentities } from "./approval";
export { MESSAGES, POLICY_NAMES, type PolicyContext, namespaceSelector, ownsAvailability, serviceAccountUser } from "./builders";
export { POLICY_DEFAULTS, type PolicyConfig } from "./config";
export { KYVERNO_WEBHOOK_TIMEOUT_SECONDS, celPolicies, clusterPolicies, kyvernoPolicies } from "./kyverno";
export { KYVERNO_AGGREGATE_LABELS, KYVERNO_ROLES, type KyvernoController, type KyvernoRole, kyvernoRoleName, kyvernoRoles, pdbGenerationRules } from "./rbac";
export { allOf, contradiction, selects } from "./selectors";
export { type CelPolicy, type ClusterPolicy, type ClusterPolicyRule, type Condition, type Conditions, type KyvernoPolicy } from "./shapes";
export { type LabelSelector, type NamedExpression, type ValidatingPolicy } from "./shapes";
export { PolicyStage, type PolicyStageConfig, policyContext } from "./stage";
export { type Template, ref, toCel, toKyverno } from "./template";
export { TIER_POLICY_NAMES, tierAdmission, tierMessage } from "./tierAdmission";
