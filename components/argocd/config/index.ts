// The argocd-apps stage's configuration section, `argocd` (ADR-056 D2, D3 and the as-built
// corrections): its declaration, defaults and reader (section.ts), its types (types.ts).
export { ARGOCD_DEFAULTS, ARGOCD_FIELDS } from "./section";
export { type ArgoCdConfig, type ArgoProjectConfig, type ArgoRbacConfig, type RegulatedGroups, type TenantApplicationSetConfig } from "./section";
