import * as pulumi from "@pulumi/pulumi";
import type { MimirConfig } from "../gateway/config";
import type { ClusterConfig } from "./config";

/** The stack output in which a hub publishes each spoke's read endpoint. */
export const SPOKE_READ_ENDPOINTS_OUTPUT = "spokeReadEndpoints";

/** Picks this spoke's endpoint from the hub's output, or explains why the hub has none. */
export function pickSpokeEndpoint(stack: string, hubStack: string, spoke: string, endpoints: unknown): string {
    const map = (endpoints ?? {}) as Record<string, unknown>;
    const url = map[spoke];
    if (typeof url === "string" && url !== "") return url;
    throw new pulumi.RunError(
        `stack "${stack}": the hub stack ${hubStack} routes no read endpoint for spoke "${spoke}" ` +
            `(add it to the hub's spokes with query: true); it routes: ${Object.keys(map).join(", ") || "none"}`,
    );
}

/**
 * A spoke's read endpoint: from the hub's stack output or, where the hub stack lives in another
 * backend, from config; undefined on the hub. Awaited before anything is declared, so a spoke the
 * hub does not route fails the run once; a StackReference's outputs are known in a preview too
 * (@pulumi/pulumi stackReference.ts at sdk/v3.248.0, getOutputDetails).
 */
export async function hubReadEndpoint(config: {
    stack: string;
    cluster: Pick<ClusterConfig, "name" | "role">;
    mimir: Pick<MimirConfig, "readEndpoint">;
}): Promise<pulumi.Input<string> | undefined> {
    const source = config.mimir.readEndpoint;
    if (config.cluster.role !== "spoke" || !source) return undefined;
    if (source.kind === "url") return source.url;
    const hub = new pulumi.StackReference("hub", { name: source.stack });
    const details = await hub.getOutputDetails(SPOKE_READ_ENDPOINTS_OUTPUT);
    const url = pickSpokeEndpoint(config.stack, source.stack, config.cluster.name, details.value ?? details.secretValue);
    // A secret output stays secret in the templates that carry it.
    return details.secretValue !== undefined ? pulumi.secret(url) : url;
}
