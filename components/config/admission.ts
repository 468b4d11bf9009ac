import { ConfigReader } from "./reader";

/**
 * The policy and argocd-apps stages' configuration (ADR-056 D2, D8 and the as-built
 * corrections). Each section is read by its own function; `parseAddonConfig` composes them.
 */

/** The policy stage's settings. */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface PolicyConfig {}

/** The argocd-apps stage's settings. */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface ArgoCdConfig {}

export function readPolicy(r: ConfigReader, value: unknown): PolicyConfig | undefined {
    return r.object("policy", value, []) ? {} : undefined;
}

export function readArgoCd(r: ConfigReader, value: unknown): ArgoCdConfig | undefined {
    return r.object("argocd", value, []) ? {} : undefined;
}
