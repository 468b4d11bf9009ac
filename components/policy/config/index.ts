/**
 * The policy stage's configuration section, `policy` (ADR-056 D2, D3, D8): its declaration, types,
 * defaults, reader and preflight (section.ts), regulated prod's sub-section (regulated.ts) and its
 * label selectors (selector.ts).
 */
export { POLICY_DEFAULTS, POLICY_FIELDS, readPolicy } from "./section";
export { type AvailabilityPolicies, type FailurePolicy, type KyvernoApi, type PolicyConfig, type ValidationAction } from "./section";
export { type RegulatedConfig, type ServiceAccountRef } from "./regulated";
export { type LabelSelector } from "./selector";
