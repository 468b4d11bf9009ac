// The gateway folder's public surface: the stage's component (stage.ts) and the spoke routes it declares.
export { type HttpRouteSpec, readRule, spokeReadEndpoint, spokeRouteSpec, spokeRoutes } from "./spokeRoutes";
export { GatewayStage, type GatewayStageConfig } from "./stage";
