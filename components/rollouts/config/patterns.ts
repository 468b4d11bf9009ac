import { StringRule, isEmptyDigest } from "../../config/reader";

/** The value patterns the rollouts stage's sections share. */

export const SEMVER = /^[0-9]+\.[0-9]+\.[0-9]+$/;

export const VTAG = /^v[0-9]+\.[0-9]+\.[0-9]+(-rc[0-9]+)?$/;

export const CHART_REPO = /^(https|oci):\/\/[A-Za-z0-9.-]+(:[0-9]+)?(\/[A-Za-z0-9._~%/-]*)?$/;

export const REGISTRY = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;

export const REPOSITORY = /^[a-z0-9]+([._-][a-z0-9]+)*(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;

export const SHA256_HEX = /^[A-Fa-f0-9]{64}$/;

export const IMAGE_DIGEST = /^sha256:[a-f0-9]{64}$/;

/** An image pinned by its digest (tags are mutable): the rule of the plugin's and the controller's digest keys. */
export const imageDigestRule = (image: string): StringRule => ({
    pattern: IMAGE_DIGEST,
    valid: (v) => !isEmptyDigest(v),
    describe: `${image}'s digest, sha256:<64 hex> (lowercase; tags are mutable), never the sha256 of zero bytes`,
});

/** Argo Rollouts durations as used here: a whole number of seconds, minutes or hours. */
export const DURATION = /^[1-9][0-9]*(s|m|h)$/;

const OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
export const CIDR = new RegExp(`^(${OCTET}\\.){3}${OCTET}\\/([0-9]|[12][0-9]|3[0-2])$`);

/** The longest duration Go's time.ParseDuration reads (an int64 of nanoseconds, go src/time/format.go), as Argo Rollouts reads every duration. */
const GO_MAX_DURATION_SECONDS = Number((2n ** 63n - 1n) / 1_000_000_000n);

/** The largest int32: Argo Rollouts' counts and limits (IntOrString's IntVal) and a pause's seconds. */
export const INT32_MAX = 2147483647;

/** A canary pause: its seconds must fit the int32 Argo Rollouts converts them to (v1.9.0 types.go RolloutPause.DurationSeconds). */
export const PAUSE_RULE = {
    pattern: DURATION,
    valid: (d: string) => DURATION.test(d) && durationSeconds(d) <= INT32_MAX,
    describe: `a duration such as 30s, 2m or 1h, at most ${INT32_MAX}s (Argo Rollouts converts a pause's seconds to an int32)`,
};

/** The rule of every duration key: the DURATION shape, within what Go's time.ParseDuration reads. */
export const DURATION_RULE = {
    pattern: DURATION,
    valid: (d: string) => DURATION.test(d) && durationSeconds(d) <= GO_MAX_DURATION_SECONDS,
    describe: `a duration such as 30s, 2m or 1h, at most ${GO_MAX_DURATION_SECONDS}s (the longest Go's time.ParseDuration reads)`,
};

/** A Slack channel by name or conversation ID, handed to chat.postMessage unchanged (argoproj/notifications-engine v0.4.0 pkg/services/slack.go). */
export const SLACK_CHANNEL = /^(#?[a-z0-9][a-z0-9._-]{0,79}|[CGD][A-Z0-9]{8,20})$/;

/** Seconds in an Argo Rollouts duration such as `2m`. */
export function durationSeconds(d: string): number {
    const m = /^([0-9]+)(s|m|h)$/.exec(d);
    if (!m) throw new Error(`not a duration: ${d}`);
    return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as "s" | "m" | "h"];
}
