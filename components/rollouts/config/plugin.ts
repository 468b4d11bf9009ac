import { defaultsOf, field, readSection } from "../../config/declare";
import { isEmptyDigest } from "../../config/reader";
import { ConfigReader, HTTPS_URL } from "../../config/reader";
import { REPOSITORY, SHA256_HEX, VTAG, imageDigestRule } from "./patterns";

/** The `plugin` section (ADR-056 D4): the Gateway API traffic-router plugin and how its binary reaches the controller. */
export interface PluginConfig {
    version: string;
    delivery: { mode: "download"; arch: "amd64" | "arm64"; baseUrl: string; sha256: string } | { mode: "image"; repository: string; digest: string };
    /** Grant the plugin TCPRoute and TLSRoute access (experimental channel routes; off unless used). */
    tcpRoutes: boolean;
    tlsRoutes: boolean;
}

const download = (section: { delivery?: unknown }) => section.delivery === "download";
const image = (section: { delivery?: unknown }) => section.delivery === "image";

/** The `plugin` section: every key, once. */
export const PLUGIN_FIELDS = {
    version: field.string({
        rule: { pattern: VTAG, describe: "a plugin release tag such as v0.15.0" },
        default: "v0.15.0",
        doc: "Gateway API plugin release tag",
    }),
    delivery: field.oneOf(["download", "image"], {
        default: "download",
        doc: "download (release asset over https) or image (an init container copies it from the plugin image)",
    }),
    arch: field.oneOf(["amd64", "arm64"], { default: "amd64", when: download, doc: "download: the nodes' architecture" }),
    // No checksum file is published with the plugin's releases: without a configured sha256 the
    // controller would run whatever the URL serves (argo-rollouts v1.9.0 utils/plugin/downloader.go:
    // an http(s) download is checked only when the plugin entry has a sha256).
    sha256: field.string({
        rule: {
            pattern: SHA256_HEX,
            valid: (v) => !isEmptyDigest(v),
            describe: "the 64-hex sha256 of gatewayapi-plugin-linux-<arch> (a download without a checksum is refused; never the sha256 of zero bytes)",
        },
        describeWith: (s) =>
            `the 64-hex sha256 of gatewayapi-plugin-linux-${s.arch} for ${s.version} (a download without a checksum is refused; never the sha256 of zero bytes, e3b0c442...b855, an empty file's)`,
        required: download,
        when: download,
        defaultDoc: "required for download",
        doc: "download: 64-hex sha256 of gatewayapi-plugin-linux-<arch>; the controller checks it",
    }),
    baseUrl: field.string({
        rule: { pattern: HTTPS_URL, describe: "an https:// URL (the controller checks the sha256 only for http(s) locations)" },
        default: "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi/releases/download",
        when: download,
        doc: "download: https:// base; the asset is <baseUrl>/<version>/gatewayapi-plugin-linux-<arch>",
    }),
    repository: field.string({
        rule: { pattern: REPOSITORY, describe: "an image repository path without registry or tag" },
        default: "argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi",
        when: image,
        doc: "image: repository under imageRegistry (default registry ghcr.io)",
    }),
    digest: field.string({
        rule: imageDigestRule("the plugin image"),
        required: image,
        when: image,
        defaultDoc: "required for image",
        doc: "image: sha256:<64 hex>; tags are mutable, so only a digest is accepted",
    }),
    tcpRoutes: field.boolean({ default: false, doc: "also grant the plugin TCPRoute access (experimental channel)" }),
    tlsRoutes: field.boolean({ default: false, doc: "also grant the plugin TLSRoute access (experimental channel)" }),
} as const;

export const PLUGIN_DEFAULTS = defaultsOf(PLUGIN_FIELDS);

export function readPlugin(r: ConfigReader, value: unknown): PluginConfig | undefined {
    const p = readSection(r, "plugin", PLUGIN_FIELDS, value);
    if (!p) return undefined;
    const { version, delivery: mode, raw } = p;
    const misplaced = (keys: string[], why: string) => keys.filter((k) => raw[k] !== undefined).forEach((k) => r.problem(`plugin.${k}`, raw[k], why));
    const download = mode === "download";
    misplaced(download ? ["repository", "digest"] : ["arch", "sha256", "baseUrl"], `only applies with plugin.delivery: ${download ? "image" : "download"}`);
    const delivery: PluginConfig["delivery"] | undefined = download
        ? p.sha256 && p.arch && p.baseUrl
            ? { mode: "download", arch: p.arch, baseUrl: p.baseUrl.replace(/\/+$/, ""), sha256: p.sha256.toLowerCase() }
            : undefined
        : p.digest && p.repository
          ? { mode: "image", repository: p.repository, digest: p.digest }
          : undefined;
    return delivery ? { version, delivery, tcpRoutes: p.tcpRoutes, tlsRoutes: p.tlsRoutes } : undefined;
}
