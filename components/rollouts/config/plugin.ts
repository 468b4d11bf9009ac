import { ConfigReader, HTTPS_URL } from "../../config/reader";
import { VTAG, REPOSITORY, SHA256_HEX, IMAGE_DIGEST } from "./patterns";

/** The `plugin` section (ADR-056 D4): the Gateway API traffic-router plugin and how its binary reaches the controller. */

export type PluginArch = "amd64" | "arm64";

/** How the Gateway API plugin binary reaches the controller. */
export type PluginDelivery =
    | { mode: "download"; arch: PluginArch; baseUrl: string; sha256: string }
    | { mode: "image"; repository: string; digest: string };

export interface PluginConfig {
    version: string;
    delivery: PluginDelivery;
    /** Grant the plugin TCPRoute access (experimental channel routes; off unless used). */
    tcpRoutes: boolean;
    /** Grant the plugin TLSRoute access (experimental channel routes; off unless used). */
    tlsRoutes: boolean;
}

export const PLUGIN_DEFAULTS = {
    version: "v0.15.0",
    delivery: "download",
    arch: "amd64",
    baseUrl: "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi/releases/download",
    repository: "argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi",
    tcpRoutes: false,
    tlsRoutes: false,
} as const;

const PLUGIN_KEYS = ["version", "delivery", "arch", "sha256", "baseUrl", "repository", "digest", "tcpRoutes", "tlsRoutes"];

export function readPlugin(r: ConfigReader, value: unknown): PluginConfig | undefined {
    const d = PLUGIN_DEFAULTS;
    const p = r.object("plugin", value, PLUGIN_KEYS);
    if (!p) {
        return undefined;
    }
    const version = r.string("plugin.version", p.version, { pattern: VTAG, describe: "a plugin release tag such as v0.15.0" }, d.version);
    const mode = r.string("plugin.delivery", p.delivery, { oneOf: ["download", "image"], describe: "" }, d.delivery);
    const misplaced = (keys: string[], why: string) => {
        for (const k of keys) {
            if (p[k] !== undefined) {
                r.problem(`plugin.${k}`, p[k], why);
            }
        }
    };

    let delivery: PluginDelivery | undefined;
    if (mode === "download") {
        misplaced(["repository", "digest"], "only applies with plugin.delivery: image");
        const arch = r.string("plugin.arch", p.arch, { oneOf: ["amd64", "arm64"], describe: "" }, d.arch) as "amd64" | "arm64";
        const baseUrl = r.string("plugin.baseUrl", p.baseUrl, { pattern: HTTPS_URL, describe: "an https:// URL (the controller checks the sha256 only for http(s) locations)" }, d.baseUrl);
        // No checksum file is published with the plugin's releases: without a configured sha256 the
        // controller would run whatever the URL serves (argo-rollouts v1.9.0 utils/plugin/downloader.go:
        // an http(s) download is checked only when the plugin entry has a sha256).
        const sha256 = r.requiredString("plugin.sha256", p.sha256, {
            pattern: SHA256_HEX,
            describe: `the 64-hex sha256 of gatewayapi-plugin-linux-${arch} for ${version} (a download without a checksum is refused)`,
        });
        if (sha256) {
            delivery = { mode: "download", arch, baseUrl: baseUrl.replace(/\/+$/, ""), sha256: sha256.toLowerCase() };
        }
    } else {
        misplaced(["arch", "sha256", "baseUrl"], "only applies with plugin.delivery: download");
        const repository = r.string("plugin.repository", p.repository, { pattern: REPOSITORY, describe: "an image repository path without registry or tag" }, d.repository);
        const digest = r.requiredString("plugin.digest", p.digest, { pattern: IMAGE_DIGEST, describe: "the plugin image's digest, sha256: followed by 64 lowercase hex (tags are mutable)" });
        if (digest) {
            delivery = { mode: "image", repository, digest };
        }
    }
    const tcpRoutes = r.boolean("plugin.tcpRoutes", p.tcpRoutes, d.tcpRoutes);
    const tlsRoutes = r.boolean("plugin.tlsRoutes", p.tlsRoutes, d.tlsRoutes);
    return delivery ? { version, delivery, tcpRoutes, tlsRoutes } : undefined;
}
