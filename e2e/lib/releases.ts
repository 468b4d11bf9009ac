/**
 * The Argo Rollouts releases of the program's version table (components/rollouts/versions.ts) as
 * the run serves and runs them: where each release's module is pinned (its CRD manifests, the
 * source `controller.crdBaseUrl` points at) and the controller binary built from it. A release of
 * the table without an entry here fails the unit tests (test/e2e-lib.test.ts).
 */
import * as path from "path";
import { E2E_ROOT } from "./modules";

export interface E2eRelease {
    /** The folder whose go.mod pins github.com/argoproj/argo-rollouts at the release. */
    pins: string;
    /** The controller binary the engines build from that module. */
    binary: string;
}

export const E2E_RELEASES: Readonly<Record<string, E2eRelease>> = {
    // e2e/platform-crds/go.mod pins v1.9.0 beside the platform's CRD modules; e2e/engines/argo-rollouts builds it.
    "v1.9.0": { pins: path.join(E2E_ROOT, "platform-crds"), binary: "rollouts-controller" },
    // e2e/engines/argo-rollouts-1.8 pins and builds v1.8.4 (the appVersion of chart 2.40.7).
    "v1.8.4": { pins: path.join(E2E_ROOT, "engines", "argo-rollouts-1.8"), binary: "rollouts-controller-1.8" },
};

export function e2eRelease(appVersion: string): E2eRelease {
    const r = E2E_RELEASES[appVersion];
    if (!r) {
        throw new Error(`the end-to-end run has no module of Argo Rollouts ${appVersion} (e2e/lib/releases.ts)`);
    }
    return r;
}
