import { createHash } from "crypto";
import { GATEWAY_API_PLUGIN, restrictedContainerSecurityContext } from "../argoRollouts";
import { PluginConfig } from "./config";

/**
 * The Gateway API traffic-router plugin (ADR-056 D4): the L7 canary splits traffic by editing the
 * weights of the app's HTTPRoute backendRefs on the Cilium Gateway, without a mesh. How the
 * controller gets the plugin (a checked download or an image), and its entry in the plugin list.
 */

/** Where the plugin image keeps its binary (upstream Dockerfile, alpine based, USER 999). */
export const PLUGIN_IMAGE_BINARY = "/bin/rollouts-plugin-trafficrouter-gatewayapi";
/** The upstream registry of the plugin image, used when no mirror is configured. */
export const PLUGIN_UPSTREAM_REGISTRY = "ghcr.io";

/**
 * Image mode: the init container copies the binary into this volume, the controller copies it
 * from there into its own plugin-bin folder at start. It must not be the chart's plugin-bin
 * volume: the controller truncates its destination before copying, so a source at the same path
 * would be emptied.
 */
export const PLUGIN_SOURCE_VOLUME = "gatewayapi-plugin";
export const PLUGIN_SOURCE_DIR = "/plugin-source";
export const PLUGIN_SOURCE_FILE = `${PLUGIN_SOURCE_DIR}/gatewayapi-plugin`;

/** One entry of the chart's `controller.trafficRouterPlugins` (rendered into argo-rollouts-config). */
export interface TrafficRouterPlugin {
    name: string;
    location: string;
    sha256?: string;
}

/** The release asset URL of the plugin binary for one node architecture. */
export function pluginDownloadUrl(baseUrl: string, version: string, arch: string): string {
    return `${baseUrl}/${version}/gatewayapi-plugin-linux-${arch}`;
}

/** The pinned plugin image reference (by digest: tags are mutable). */
export function pluginImage(plugin: PluginConfig, registry: string | undefined): string | undefined {
    if (plugin.delivery.mode !== "image") {
        return undefined;
    }
    return `${registry ?? PLUGIN_UPSTREAM_REGISTRY}/${plugin.delivery.repository}@${plugin.delivery.digest}`;
}

/**
 * The plugin list entry. A download carries the configured sha256, which the controller checks
 * for http(s) locations only; an image is pinned by digest instead, and its location is the
 * file the init container copied.
 */
export function trafficRouterPlugin(plugin: PluginConfig): TrafficRouterPlugin {
    const d = plugin.delivery;
    if (d.mode === "download") {
        return { name: GATEWAY_API_PLUGIN, location: pluginDownloadUrl(d.baseUrl, plugin.version, d.arch), sha256: d.sha256 };
    }
    return { name: GATEWAY_API_PLUGIN, location: `file://${PLUGIN_SOURCE_FILE}` };
}

/**
 * A digest of the plugin list. The controller reads its plugins once at start, so the list's
 * digest goes on the pod template: any change to it rolls the controller pods.
 */
export function pluginListDigest(plugins: TrafficRouterPlugin[], image?: string): string {
    return createHash("sha256")
        .update(JSON.stringify({ plugins, image: image ?? null }))
        .digest("hex");
}

/** Image mode only: the init container, the shared volume and the controller's mount of it. */
export function pluginImageDelivery(
    plugin: PluginConfig,
    registry: string | undefined,
): { initContainers: Record<string, unknown>[]; volumes: Record<string, unknown>[]; volumeMounts: Record<string, unknown>[] } | undefined {
    const image = pluginImage(plugin, registry);
    if (!image) {
        return undefined;
    }
    return {
        initContainers: [
            {
                name: "copy-gatewayapi-plugin",
                image,
                imagePullPolicy: "IfNotPresent",
                // The image is alpine based, so cp exists; no shell is needed.
                command: ["cp", PLUGIN_IMAGE_BINARY, PLUGIN_SOURCE_FILE],
                securityContext: { ...restrictedContainerSecurityContext(), runAsUser: 999, runAsGroup: 999 },
                resources: { requests: { cpu: "10m", memory: "16Mi" }, limits: { cpu: "100m", memory: "64Mi" } },
                volumeMounts: [{ name: PLUGIN_SOURCE_VOLUME, mountPath: PLUGIN_SOURCE_DIR }],
            },
        ],
        volumes: [{ name: PLUGIN_SOURCE_VOLUME, emptyDir: { sizeLimit: "128Mi" } }],
        volumeMounts: [{ name: PLUGIN_SOURCE_VOLUME, mountPath: PLUGIN_SOURCE_DIR, readOnly: true }],
    };
}
