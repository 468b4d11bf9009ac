import { readArgoCd } from "../argocd/config";
import { readCluster } from "../cluster/config";
import { readGateway } from "../gateway/config";
import { readPolicy } from "../policy/config";
import { readDelivery } from "./delivery";
import { readMetrics } from "./metrics";
import { readController, readImages, readPlugin } from "../rollouts/config";
import { ConfigError, ConfigReader, Plain, isPlainObject } from "./reader";
import { AddonConfig, PROJECT } from "./types";

/** The keys a stack may set under the `argo-rollouts-addon:` namespace. */
export const TOP_LEVEL_KEYS = [
    "cluster",
    "gateway",
    "imageRegistry",
    "controller",
    "plugin",
    "mimir",
    "spokes",
    "analysis",
    "network",
    "errorBudget",
    "notifications",
    "notificationsToken",
    "smokeTest",
    "policy",
    "argocd",
] as const;

/**
 * Builds the stack's typed configuration from the raw values under the project namespace, or
 * throws one ConfigError listing every problem. `raw` maps keys without the namespace to values
 * as parsed from the stack file; `ambient` carries other namespaces' keys the program honours
 * (only `aws:region`).
 */
export function parseAddonConfig(stack: string, raw: Plain, ambient: { awsRegion?: string; secretKeys?: readonly string[] } = {}): AddonConfig {
    const r = new ConfigReader();
    const secretKeys = ambient.secretKeys ?? [];
    for (const key of Object.keys(raw)) {
        if (!(TOP_LEVEL_KEYS as readonly string[]).includes(key)) {
            r.problem(key, secretKeys.includes(key) ? "[not shown]" : raw[key], `unknown key; the ${PROJECT} namespace takes ${TOP_LEVEL_KEYS.join(", ")}`);
        }
    }

    const cluster = readCluster(r, raw.cluster, ambient);
    const gateway = readGateway(r, raw.gateway);
    const images = readImages(r, raw.imageRegistry);
    const controller = readController(r, raw.controller);
    const plugin = readPlugin(r, raw.plugin);
    const rawCluster = isPlainObject(raw.cluster) ? raw.cluster : {};
    const metrics = readMetrics(
        r,
        raw,
        {
            role: cluster?.role ?? (rawCluster.role === "hub" || rawCluster.role === "spoke" ? rawCluster.role : undefined),
            mimirTenant: cluster?.mimirTenant ?? (typeof rawCluster.mimirTenant === "string" ? rawCluster.mimirTenant : undefined),
        },
        gateway,
    );
    const delivery = readDelivery(r, raw, secretKeys);
    const policy = readPolicy(r, raw.policy);
    const argocd = readArgoCd(r, raw.argocd, cluster?.name);

    if (r.problems.length > 0 || !cluster || !gateway || !controller || !plugin || !metrics || !delivery || !policy || !argocd) {
        throw new ConfigError(stack, PROJECT, r.problems);
    }
    return { stack, cluster, gateway, images, controller, plugin, metrics, delivery, policy, argocd };
}

