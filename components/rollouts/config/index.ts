/**
 * The rollouts stage's configuration sections (ADR-056 D4-D7): `imageRegistry`, `controller`,
 * `plugin`, `analysis`, `network`, `errorBudget` and `notifications` (with `notificationsToken`).
 */
export { ANALYSIS_DEFAULTS, ANALYSIS_FIELDS, readAnalysis } from "./analysis";
export type { AnalysisConfig } from "./analysis";
export { CONTROLLER_DEFAULTS, CONTROLLER_FIELDS, IMAGE_REGISTRY_FIELDS, KNOWN_CHART_APP_VERSIONS, readController, readImages } from "./controller";
export type { ControllerConfig } from "./controller";
export { ERROR_BUDGET_ARGS, ERROR_BUDGET_DEFAULTS, ERROR_BUDGET_FIELDS, readErrorBudget } from "./delivery";
export { NOTIFICATIONS_FIELDS, NOTIFICATIONS_TOKEN_FIELDS, NOTIFICATIONS_TOKEN_KEY, readNotifications } from "./delivery";
export type { ErrorBudgetConfig, NotificationsConfig } from "./delivery";
export { NETWORK_FIELDS, readNetwork } from "./network";
export type { CanaryTarget, NetworkConfig } from "./network";
export { PLUGIN_DEFAULTS, PLUGIN_FIELDS, readPlugin } from "./plugin";
export type { PluginConfig } from "./plugin";
export { durationSeconds } from "./patterns";
