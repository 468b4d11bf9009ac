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
    const prefix = `${PROJECT}:`;
    for (const [fullKey, text] of Object.entries(all)) {
        if (fullKey.startsWith(prefix)) {
            raw[fullKey.slice(prefix.length)] = parseConfigText(text);
        }
    }
    return parseAddonConfig(pulumi.getStack(), raw, { awsRegion: all["aws:region"] });
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
