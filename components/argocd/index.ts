// The argocd folder's public surface: the stage's component (stage.ts) and its parts.
export * from "./config";
export * from "./ignoreRules";
export * from "./keptObjects";
export * from "./ownership";
export * from "./preflight";
export * from "./projects";
export * from "./rbac";
export * from "./regulatedPaths";
export * from "./stage";
export * from "./syncOptions";
