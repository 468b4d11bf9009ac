/**
 * The policy stage's configuration section, `policy` (ADR-056 D2, D3, D8): its declaration,
 * defaults and reader (section.ts), its types (types.ts), regulated prod's sub-section
 * (regulated.ts) and its label selectors (selector.ts).
 */
export * from "./section";
export * from "./types";
export * from "./regulated";
export * from "./selector";
