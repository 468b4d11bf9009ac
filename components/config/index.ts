export * from "./load";
export * from "./keys";
export * from "./reader";
