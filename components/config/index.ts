export { ConfigError, ConfigReader, OFFLINE_SECRET, PROJECT, SecretValue, parseQuantity } from "./reader";
export type { ConfigProblem, Plain, StringRule } from "./reader";
export { parseConfigText, readStackConfig } from "./load";
