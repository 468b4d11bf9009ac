// Pulumi entry point (Pulumi.yaml `main: stacks/`): the stack outputs are defineStack's result.
import { defineStack } from "./program";

export = defineStack();
