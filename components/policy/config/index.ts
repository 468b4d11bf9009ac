/**
 * The policy stage's configuration section, `policy` (ADR-056 D2, D3, D8): its declaration,
 * defaults and reader (section.ts), its types (types.ts), regulated prod's sub-section
 * (regulated.ts) and its label selectors (selector.ts).
 */
export { POLICY_DEFAULTS, POLICY_FIELDS, readPolicy } from "./section";
export { type AvailabilityPolicies, type FailurePolicy, type KyvernoApi, type PolicyConfig, type RegulatedConfig } from "./types";
export { type ServiceAccountRef, type ValidationAction } from "./types";
export { type LabelSelector } from "./selector";
