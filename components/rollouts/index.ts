// The rollouts folder's public surface: the stage's component (stage.ts) and its parts.
export * from "./analysis";
export * from "./chartKeys";
export * from "./config";
export * from "./crds";
export * from "./network";
export * from "./notifications";
export * from "./plugin";
export * from "./rbac";
export * from "./stage";
export * from "./trust";
export * from "./values";
export * from "./versions";
export * from "./upgrade";
