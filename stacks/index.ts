// Pulumi entry point (Pulumi.yaml `main: stacks/`): the stack outputs are defineStack's result.
// The configuration is read, then checked against the live cluster (the running controller, a
// move across the pod-template-hash boundary, and, without adoption, every object the stack would
// create) before a single object reaches the engine (preflight.ts); the runtime awaits the
// exported promise.
import { loadAddonConfig } from "./config";
import { checkedStack } from "./preflight";
import { defineStack } from "./program";

export = (async () => checkedStack(loadAddonConfig(), defineStack))();
