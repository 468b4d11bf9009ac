/**
 * The rollouts stage's configuration sections (ADR-056 D4, D5, D6, D7): `imageRegistry`,
 * `controller` and `plugin` (the controller chart and the Gateway API plugin), `analysis` (the
 * shared metric gates' thresholds and timing), `network` (the controller's network policy),
 * `errorBudget` (the error-budget gate's template) and `notifications` (with `notificationsToken`).
 * The rollouts stage declares what each of them configures. Their types, defaults and readers;
 * the analysis reader also refuses the timing traps of the metric gates.
 */
export * from "./analysis";
export * from "./controller";
export * from "./delivery";
export * from "./network";
export * from "./plugin";
export { durationSeconds } from "./patterns";
