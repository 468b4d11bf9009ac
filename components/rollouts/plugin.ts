import { createHash } from "crypto";
import { GATEWAY_API_PLUGIN, restrictedContainerSecurityContext } from "../argoRollouts";
import { PluginConfig } from "./config";

/**
 * The Gateway API traffic-router plugin (ADR-056 D4): the L7 canary splits traffic by the weights of
 * the app's HTTPRoute backendRefs on the Cilium Gateway, without a mesh. How the controller gets the
 * plugin (a checked download, or an image), and its entry in the chart's plugin list.
 */

/** The upstream registry of the plugin image, used when no mirror is configured. */
export const PLUGIN_UPSTREAM_REGISTRY = "ghcr.io";
/**
 * Image mode: the init container copies the binary (the image is alpine based, USER 999) into a volume
 * of its own, which the controller copies into its plugin-bin at start; not plugin-bin itself, since
 * the controller truncates its destination before copying.
 */
const PLUGIN_SOURCE_DIR = "/plugin-source";
export const PLUGIN_SOURCE_FILE = `${PLUGIN_SOURCE_DIR}/gatewayapi-plugin`;

/** One entry of the chart's `controller.trafficRouterPlugins` (rendered into argo-rollouts-config). */
export interface TrafficRouterPlugin {
    name: string;
    location: string;
    sha256?: string;
}

/** The release asset URL of the plugin binary for one node architecture. */
export const pluginDownloadUrl = (baseUrl: string, version: string, arch: string): string => `${baseUrl}/${version}/gatewayapi-plugin-linux-${arch}`;

/** The plugin image, pinned by digest (tags are mutable). */
export function pluginImage(plugin: PluginConfig, registry: string | undefined): string | undefined {
    const d = plugin.delivery;
    return d.mode === "image" ? `${registry ?? PLUGIN_UPSTREAM_REGISTRY}/${d.repository}@${d.digest}` : undefined;
}

/**
 * The plugin list entry: a download carries the configured sha256, which the controller checks for
 * http(s) locations only (argo-rollouts v1.9.0 utils/plugin/downloader.go); an image is pinned by
 * digest, and its location is the file the init container copied.
 */
export function trafficRouterPlugin(plugin: PluginConfig): TrafficRouterPlugin {
    const d = plugin.delivery;
    return d.mode === "download"
        ? { name: GATEWAY_API_PLUGIN, location: pluginDownloadUrl(d.baseUrl, plugin.version, d.arch), sha256: d.sha256 }
        : { name: GATEWAY_API_PLUGIN, location: `file://${PLUGIN_SOURCE_FILE}` };
}

/** The plugin list's digest: the controller reads its plugins once at start, so a change must roll its pods. */
export function pluginListDigest(plugins: TrafficRouterPlugin[], image?: string): string {
    return createHash("sha256")
        .update(JSON.stringify({ plugins, image: image ?? null }))
        .digest("hex");
}

/** Image mode only: the init container, the shared volume and the controller's mount of it. */
export function pluginImageDelivery(plugin: PluginConfig, registry: string | undefined) {
    const image = pluginImage(plugin, registry);
    const volume = "gatewayapi-plugin";
    if (!image) return undefined;
    return {
        initContainers: [
            {
                name: "copy-gatewayapi-plugin",
                image,
                imagePullPolicy: "IfNotPresent",
                command: ["cp", "/bin/rollouts-plugin-trafficrouter-gatewayapi", PLUGIN_SOURCE_FILE],
                securityContext: { ...restrictedContainerSecurityContext(), runAsUser: 999, runAsGroup: 999 },
                resources: { requests: { cpu: "10m", memory: "16Mi" }, limits: { cpu: "100m", memory: "64Mi" } },
                volumeMounts: [{ name: volume, mountPath: PLUGIN_SOURCE_DIR }],
            },
        ],
        volumes: [{ name: volume, emptyDir: { sizeLimit: "128Mi" } }],
        volumeMounts: [{ name: volume, mountPath: PLUGIN_SOURCE_DIR, readOnly: true }],
    };
}
