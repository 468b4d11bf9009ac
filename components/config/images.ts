/**
 * Image references and checksums as the container runtimes read them (distribution/reference
 * v0.6.0, the parser containerd and CRI-O use through their clients): a reference the plan accepts
 * must name the image the node will pull, or the pod sits in ImagePullBackOff.
 */
import type { StringRule } from "./reader";

/**
 * The longest image name (registry host and repository path, without tag or digest)
 * (distribution/reference reference.go v0.6.0 `NameTotalLengthMax = 255`, `ErrNameTooLong`).
 */
export const NAME_TOTAL_LENGTH_MAX = 255;

/**
 * Whether the first path component of an image name is a registry host. Without a `.` or `:`, and
 * unless it is `localhost`, the runtime reads it as a Docker Hub namespace: `mirror/argoproj/x`
 * is pulled from docker.io/mirror/argoproj/x (distribution/reference normalize.go v0.6.0
 * `splitDockerDomain`).
 */
export function hasRegistryHost(name: string): boolean {
    const first = name.split("/")[0];
    return name.includes("/") ? /[.:]/.test(first) || first === "localhost" : /[.:]/.test(name) || name === "localhost";
}

/**
 * The sha256 of zero bytes: a checksum computed over an empty file (a failed download, an empty
 * layer) is never the asset's. Refused wherever a checksum or a digest is set.
 */
export const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** Whether a sha256 (hex, or `sha256:<hex>`, anywhere in a reference) is the digest of nothing. */
export function isEmptyDigest(value: string): boolean {
    return value.toLowerCase().includes(EMPTY_SHA256);
}

const COMPONENT = "[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*";
const HOST = "(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?";
/**
 * `registry/repository[:tag]@sha256:<64 hex>` (distribution/reference regexp.go v0.6.0
 * `ReferenceRegexp`, the digest required): a tag beside the digest is allowed, the runtime pulls
 * by the digest and the tag only documents it.
 */
const IMAGE_BY_DIGEST = new RegExp(`^(${HOST}(?:/${COMPONENT})+)(?::[\\w][\\w.-]{0,127})?@sha256:[a-f0-9]{64}$`);

/** An image pinned by digest, from a registry host, within the name limit, and not the digest of nothing. */
export const IMAGE_BY_DIGEST_RULE: StringRule = {
    pattern: IMAGE_BY_DIGEST,
    valid: (ref) => {
        const name = IMAGE_BY_DIGEST.exec(ref)?.[1] ?? "";
        return hasRegistryHost(name) && name.length <= NAME_TOTAL_LENGTH_MAX && !isEmptyDigest(ref);
    },
    describe: `an image reference pinned by digest, registry/repository[:tag]@sha256:<64 hex>: the registry a host (with a '.' or ':', or localhost; else it is a Docker Hub namespace), the name at most ${NAME_TOTAL_LENGTH_MAX} characters, never the sha256 of zero bytes`,
};
