import * as pulumi from "@pulumi/pulumi";
import { CONTROLLER_CONTAINER, downgradeRefusal, imageTag } from "../components/cluster/adoption";
import { kubeConfigFor, loadClient } from "../components/cluster/connect";
import { RELEASE_NAME } from "../components/rollouts/values";
import type { AddonConfig } from "./config";

/**
 * What the adopting run checks on the live cluster before it declares anything. Every adopted
 * object previews as a create (`upsertExistingObjects`), so a controller newer than the stack's
 * would be downgraded, CRDs included, without a line of the preview saying so (ADR-056 as-built,
 * platform introduction). Only the adopting run reads: any other run shows a version change as
 * an update of the Deployment and the CRDs. The read goes through the stack's own connection
 * as verify makes it (components/cluster/connect.ts): one GET of the controller Deployment.
 */

/** The tag of the controller image running in the cluster, or undefined when none runs. */
export async function runningControllerVersion(config: AddonConfig): Promise<string | undefined> {
    const k8s = await loadClient();
    const kc = await kubeConfigFor(k8s, { connection: config.cluster.connection });
    let deployment: { spec?: { template?: { spec?: { containers?: { name?: string; image?: string }[] } } } };
    try {
        deployment = await kc.makeApiClient(k8s.AppsV1Api).readNamespacedDeployment({ name: RELEASE_NAME, namespace: config.controller.namespace });
    } catch (e) {
        if ((e as { code?: number }).code === 404) {
            return undefined; // nothing runs: nothing to downgrade
        }
        throw e;
    }
    const image = deployment.spec?.template?.spec?.containers?.find((c) => c.name === CONTROLLER_CONTAINER)?.image;
    return image ? imageTag(image) : undefined;
}

/** Refuses the adopting run of a downgrade; `read` is the live read (a parameter for the tests). */
export async function adoptionPreflight(config: AddonConfig, read: (c: AddonConfig) => Promise<string | undefined> = runningControllerVersion): Promise<void> {
    if (!config.cluster.adoptExisting) {
        return;
    }
    let running: string | undefined;
    try {
        running = await read(config);
    } catch (e) {
        throw new pulumi.RunError(`stack "${config.stack}": argo-rollouts-addon:cluster.adoptExisting is true, and the running controller's version cannot be read to rule out a downgrade: ${(e as Error).message}`);
    }
    const refusal = downgradeRefusal(config.stack, running, config.controller.appVersion, config.cluster.allowDowngrade);
    if (refusal) {
        throw new pulumi.RunError(refusal);
    }
}
