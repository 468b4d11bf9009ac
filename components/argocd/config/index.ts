/**
 * The argocd-apps stage's configuration section, `argocd` (ADR-056 D2, D3 and the as-built
 * corrections): its declaration, types, defaults and reader (section.ts) and its list shapes
 * (lists.ts).
 */
export * from "./section";
export * from "./types";
export { API_GROUP, DNS_SUBDOMAIN } from "./lists";
