export { ConfigError, ConfigReader, OFFLINE_SECRET, PROJECT, SecretValue, parseQuantity, type ConfigProblem, type Plain, type StringRule } from "./reader";
export { parseConfigText, readStackConfig } from "./load";
