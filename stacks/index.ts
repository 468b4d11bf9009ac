// Pulumi entry point (Pulumi.yaml `main: stacks/`): the configuration is read and checked against the
// live cluster before a single object reaches the engine (preflight.ts); the outputs are defineStack's.
import { loadAddonConfig } from "./config";
import { checkedStack } from "./preflight";
import { defineStack } from "./program";

export = (async () => checkedStack(loadAddonConfig(), defineStack))();
