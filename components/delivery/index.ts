export * from "./strategy";
