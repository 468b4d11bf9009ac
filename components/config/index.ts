export * from "./types";
export * from "./reader";
export * from "./secret";
export * from "./parse";
export * from "./load";
export * from "./metrics";
export * from "./delivery";
