export * from "./load";
export * from "./reader";
