// The policy folder's public surface: the stage's component (stage.ts) and its parts.
export * from "./approval";
export * from "./availability";
export * from "./builders";
export * from "./config";
export * from "./rolloutOnly";
export * from "./kyverno";
export * from "./preflight";
export * from "./rbac";
export * from "./selectors";
export * from "./stage";
export * from "./template";
export * from "./tierAdmission";
export * from "./workloads";
