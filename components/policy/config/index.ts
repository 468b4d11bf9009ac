/**
 * The policy stage's configuration section, `policy` (ADR-056 D2, D3, D8): its declaration, types,
 * defaults and reader (section.ts) and its label selectors (selector.ts).
 */
export * from "./section";
export * from "./regulated";
export * from "./selector";
