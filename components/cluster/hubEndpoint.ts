import * as pulumi from "@pulumi/pulumi";
import type { MimirConfig } from "../gateway/config";
import type { ClusterConfig } from "./config";

/** The stack output in which a hub publishes each spoke's read endpoint. */
export const SPOKE_READ_ENDPOINTS_OUTPUT = "spokeReadEndpoints";

/** Picks this spoke's endpoint from the hub's output, or explains why the hub has none. */
export function pickSpokeEndpoint(stack: string, hubStack: string, spoke: string, endpoints: unknown): string {
    const map = (endpoints ?? {}) as Record<string, unknown>;
    const url = map[spoke];
    if (typeof url !== "string" || url === "") {
        const known = Object.keys(map);
        throw new Error(
            `stack "${stack}": the hub stack ${hubStack} routes no read endpoint for spoke "${spoke}" ` +
                `(add it to the hub's spokes with query: true); it routes: ${known.length ? known.join(", ") : "none"}`,
        );
    }
    return url;
}

/**
 * A spoke's read endpoint: from the hub's stack (the hub owns the route and knows its URL) or,
 * where the hub stack lives in another backend, from config. Undefined on the hub.
 */
export function hubReadEndpoint(config: {
    stack: string;
    cluster: Pick<ClusterConfig, "name" | "role">;
    mimir: Pick<MimirConfig, "readEndpoint">;
}): pulumi.Output<string> | undefined {
    const source = config.mimir.readEndpoint;
    if (config.cluster.role !== "spoke" || !source) {
        return undefined;
    }
    if (source.kind === "url") {
        return pulumi.output(source.url);
    }
    const hub = new pulumi.StackReference("hub", { name: source.stack });
    return hub.requireOutput(SPOKE_READ_ENDPOINTS_OUTPUT).apply((endpoints) => pickSpokeEndpoint(config.stack, source.stack, config.cluster.name, endpoints));
}
