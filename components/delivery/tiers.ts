/**
 * The names of ADR-056 D3's delivery tiers, classes and shapes: what the stack's `delivery` section
 * (config.ts) is keyed by and what the strategy library (strategy.ts) decides on. Apart from both,
 * so the declaration can name them and the library can take its defaults from the declaration.
 */
export type Tier = "dev" | "test" | "preprod" | "prod";
/** The tiers below prod: the trivial auto-promoting canary (ADR-056 D3). */
export type LowerTier = Exclude<Tier, "prod">;
/** How strictly a prod app is gated: standard (metric gate) or regulated (+ human approval). */
export type ProdClass = "standard" | "regulated";
export type Shape = "canary" | "blueGreen";

export const TIERS: readonly Tier[] = ["dev", "test", "preprod", "prod"];
export const LOWER_TIERS: readonly LowerTier[] = ["dev", "test", "preprod"];
export const PROD_CLASSES: readonly ProdClass[] = ["standard", "regulated"];
export const SHAPES: readonly Shape[] = ["canary", "blueGreen"];

/** The platform's preview header (what the smoke canary sends); a team may name another. */
export const PREVIEW_HEADER = "x-rollouts-preview";
