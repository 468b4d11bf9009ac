export * from "./load";
export * from "./keys";
export * from "./namespaces";
export * from "./reader";
export * from "./identity";
export * from "./images";
