/**
 * The one typed configuration of a stack. Built once by `parseAddonConfig` before any resource
 * is declared; components receive the parts they need and never read Pulumi config themselves.
 */

import type { ArgoCdConfig } from "../argocd/config";
import type { PolicyConfig } from "../policy/config";
import type { SharedGatewayConfig } from "../gateway/config";
import type { ClusterRole } from "../mimir";
import type { ControllerConfig, ImagesConfig, PluginConfig } from "../rollouts/config";
import { DeliveryConfig } from "./delivery";
import { MetricsConfig } from "./metrics";

/** The Pulumi project name, which is also the namespace of every config key. */
export const PROJECT = "argo-rollouts-addon";

/** How the program reaches the cluster's API server. */
export type ClusterConnection =
    | { kind: "eks"; clusterName: string; region: string }
    | { kind: "kubeconfig"; context: string; path?: string };

export interface ClusterConfig {
    /** The cluster's name in the platform; also the provider's `clusterIdentifier`. */
    name: string;
    role: ClusterRole;
    /** This cluster's Mimir tenant (`X-Scope-OrgID`); its metric gates read only this tenant. */
    mimirTenant: string;
    connection: ClusterConnection;
    /**
     * The one run that takes over objects another tool created (ADR-056 as-built: hub and preprod
     * already run Argo Rollouts): the provider updates an existing object on create instead of
     * failing with AlreadyExists, and takes its fields over from the previous field manager.
     */
    adoptExisting: boolean;
}

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
