// The cluster folder's public surface: the stack's Kubernetes provider (provider.ts) and its parts.
export * from "./adoption";
export * from "./config";
export * from "./eks";
export * from "./provider";
