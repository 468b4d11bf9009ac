/** The value patterns the rollouts stage's sections share. */

export const SEMVER = /^[0-9]+\.[0-9]+\.[0-9]+$/;

export const VTAG = /^v[0-9]+\.[0-9]+\.[0-9]+(-rc[0-9]+)?$/;

export const CHART_REPO = /^(https|oci):\/\/[A-Za-z0-9.-]+(:[0-9]+)?(\/[A-Za-z0-9._~%/-]*)?$/;

export const REGISTRY = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;

export const REPOSITORY = /^[a-z0-9]+([._-][a-z0-9]+)*(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;

export const SHA256_HEX = /^[A-Fa-f0-9]{64}$/;

export const IMAGE_DIGEST = /^sha256:[a-f0-9]{64}$/;

/** Argo Rollouts durations as used here: a whole number of seconds, minutes or hours. */
export const DURATION = /^[1-9][0-9]*(s|m|h)$/;

const OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
export const CIDR = new RegExp(`^(${OCTET}\\.){3}${OCTET}\\/([0-9]|[12][0-9]|3[0-2])$`);

/**
 * The longest duration Go's time.ParseDuration reads, in whole seconds: a time.Duration is an
 * int64 of nanoseconds (go src/time/format.go, ParseDuration: "invalid duration" on overflow),
 * and Argo Rollouts reads every duration of a template with it.
 */
export const GO_MAX_DURATION_SECONDS = Number((2n ** 63n - 1n) / 1_000_000_000n);

/** The largest int32: Argo Rollouts' counts and limits (IntOrString's IntVal) and a pause's seconds. */
export const INT32_MAX = 2147483647;

/**
 * The rule of a canary pause: a duration Go reads whose seconds fit an int32. Argo Rollouts reads a
 * step's `pause.duration` with time.ParseDuration and converts its seconds with `int32(d.Seconds())`
 * (argo-rollouts v1.9.0 pkg/apis/rollouts/v1alpha1/types.go RolloutPause.DurationSeconds), which
 * wraps a longer pause into a negative or wrong one.
 */
export const PAUSE_RULE = {
    pattern: DURATION,
    valid: (d: string) => DURATION.test(d) && durationSeconds(d) <= INT32_MAX,
    describe: `a duration such as 30s, 2m or 1h, at most ${INT32_MAX}s (Argo Rollouts converts a pause's seconds to an int32)`,
};

/** Whether Go's time.ParseDuration reads a duration of the DURATION shape. */
export function goDuration(d: string): boolean {
    return DURATION.test(d) && durationSeconds(d) <= GO_MAX_DURATION_SECONDS;
}

/** The rule of every duration key: the DURATION shape, within what Go's time.ParseDuration reads. */
export const DURATION_RULE = {
    pattern: DURATION,
    valid: goDuration,
    describe: `a duration such as 30s, 2m or 1h, at most ${GO_MAX_DURATION_SECONDS}s (the longest Go's time.ParseDuration reads)`,
};

/**
 * A Slack channel as the notifications engine hands it to chat.postMessage (argoproj/notifications-engine
 * pkg/services/slack.go v0.4.0: the recipient goes to `slack.PostMessageContext(ctx, recipient, ...)`
 * unchanged): a name (`#deploys`, `deploys`) or a conversation ID (`C0123ABCD`; G for private
 * channels and D for direct messages), which Slack's API takes as the channel too.
 */
export const SLACK_CHANNEL = /^(#?[a-z0-9][a-z0-9._-]{0,79}|[CGD][A-Z0-9]{8,20})$/;

/** Seconds in an Argo Rollouts duration such as `2m`. */
export function durationSeconds(d: string): number {
    const m = /^([0-9]+)(s|m|h)$/.exec(d);
    if (!m) {
        throw new Error(`not a duration: ${d}`);
    }
    return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as "s" | "m" | "h"];
}
