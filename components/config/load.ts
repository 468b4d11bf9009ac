import * as pulumi from "@pulumi/pulumi";
import { Plain } from "./reader";
import { parseAddonConfig } from "./parse";
import { AddonConfig, PROJECT } from "./types";

/**
 * Reads every key of the project's namespace from the stack's configuration and validates it.
 * Structured values arrive as JSON text; scalars as plain strings.
 */
export function loadAddonConfig(): AddonConfig {
    const all = pulumi.runtime.allConfig();
    const raw: Plain = {};
    const secretKeys: string[] = [];
    const prefix = `${PROJECT}:`;
    // `isConfigSecret` is exported by the SDK's runtime but not typed; without it no key is treated
    // as secret, and a secret-only key (notificationsToken) is refused rather than leaked.
    const isSecret = (pulumi.runtime as unknown as { isConfigSecret?: (key: string) => boolean }).isConfigSecret ?? (() => false);
    for (const [fullKey, text] of Object.entries(all)) {
        if (fullKey.startsWith(prefix)) {
            const key = fullKey.slice(prefix.length);
            raw[key] = parseConfigText(text);
            if (isSecret(fullKey)) {
                secretKeys.push(key);
            }
        }
    }
    return parseAddonConfig(pulumi.getStack(), raw, { awsRegion: all["aws:region"], secretKeys });
}

/** Pulumi hands structured config over as JSON; anything that is not JSON stays a string. */
export function parseConfigText(text: string): unknown {
    const trimmed = text.trim();
    if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
        try {
            return JSON.parse(trimmed);
        } catch {
            return text;
        }
    }
    return text;
}
