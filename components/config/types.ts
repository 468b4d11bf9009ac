/**
 * The one typed configuration of a stack. Built once by `parseAddonConfig` before any resource
 * is declared; components receive the parts they need and never read Pulumi config themselves.
 */

import type { ArgoCdConfig } from "../argocd/config";
import type { ClusterConfig } from "../cluster/config";
import type { PolicyConfig } from "../policy/config";
import type { SharedGatewayConfig } from "../gateway/config";
import type { ControllerConfig, ImagesConfig, PluginConfig } from "../rollouts/config";
import { DeliveryConfig } from "./delivery";
import { MetricsConfig } from "./metrics";

/** The Pulumi project name, which is also the namespace of every config key. */
export const PROJECT = "argo-rollouts-addon";

export interface AddonConfig {
    stack: string;
    cluster: ClusterConfig;
    gateway: SharedGatewayConfig;
    images: ImagesConfig;
    controller: ControllerConfig;
    plugin: PluginConfig;
    /** Metric gates: Mimir, the hub's spokes or this spoke's read endpoint, analysis, network policy. */
    metrics: MetricsConfig;
    /** Error-budget freeze, notifications, smoke canary. */
    delivery: DeliveryConfig;
    policy: PolicyConfig;
    argocd: ArgoCdConfig;
}
