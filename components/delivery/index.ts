// The strategy library (ADR-056 D3): what other folders, tools and tenant programs use of it.
export { readDelivery, stackStrategies } from "./config";
export { DELIVERY_DEFAULTS, DELIVERY_FIELDS, type DeliveryConfig, type ProdClassConfig, type TierAdmissionAction } from "./fields";
export { COMPONENT_APP, componentPlan, deliveryStrategiesOutput, renderComponent, renderComponents } from "./kustomize";
export { DEFAULT_STEPS, checkOptions, defaultStepPause, deliveryPlan, tierStrategies, type DeliveryPlan } from "./strategy";
export { LOWER_TIERS, PREVIEW_HEADER, PREVIEW_HEADER_VALUE, PROD_CLASSES, SHAPES, TIERS, appLabels } from "./types";
export { type AnalysisRef, type AppSpec, type BlueGreenStrategy, type CanaryStep, type CanaryStrategy } from "./types";
export { type HttpRouteObject } from "./routes";
export { type GateTiming, type PreviewGate, type ProdClass, type Shape, type StrategyOptions, type Tier, type TierStrategy } from "./types";
