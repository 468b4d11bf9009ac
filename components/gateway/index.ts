// The gateway folder's public surface: the stage's component (stage.ts) and its parts.
export * from "./config";
export * from "./spokeRoutes";
export * from "./stage";
