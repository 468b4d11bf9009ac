import { MimirConfig, ReadEndpointSource, SpokeConfig, readMimirAndSpokes } from "../gateway/config";
import type { ClusterRole } from "../mimir";
import { AnalysisConfig, NetworkConfig, readAnalysis, readNetwork } from "../rollouts/config";
import { ConfigReader, Plain } from "./reader";

/**
 * The metric-gate configuration (ADR-056 D5 and the 2026-06-27 as-built W8c): where Mimir runs
 * on the hub, which spokes the hub routes, how a spoke finds its read endpoint (the gateway
 * stage's sections), the analysis thresholds and the controller's network policy (the rollouts
 * stage's).
 */

export interface MetricsConfig {
    mimir: MimirConfig;
    spokes: SpokeConfig[];
    readEndpoint?: ReadEndpointSource;
    analysis: AnalysisConfig;
    network: NetworkConfig;
}

/** Reads the metric-gate sections; `cluster` and `sharedGateway` come from the sections read before. */
export function readMetrics(
    r: ConfigReader,
    raw: Plain,
    cluster: { role?: ClusterRole; name?: string; mimirTenant?: string },
    sharedGateway?: { name: string; namespace: string; listener: string },
): MetricsConfig | undefined {
    const routes = readMimirAndSpokes(r, raw, cluster, sharedGateway);
    const analysis = readAnalysis(r, raw.analysis);
    const network = readNetwork(r, raw.network, cluster.role);
    if (!routes || !analysis || !network) {
        return undefined;
    }
    return { ...routes, analysis, network };
}
