// Pulumi entry point (Pulumi.yaml `main: stacks/`): the stack outputs are defineStack's result.
// The configuration is read and, for an adopting run, checked against the live cluster before
// the first resource is declared (preflight.ts); the runtime awaits the exported promise.
import { loadAddonConfig } from "./config";
import { adoptionPreflight } from "./preflight";
import { defineStack } from "./program";

export = (async () => {
    const config = loadAddonConfig();
    await adoptionPreflight(config);
    return defineStack(config);
})();
