import * as pulumi from "@pulumi/pulumi";
import { PROJECT, Plain } from "./reader";

/** A stack's configuration as the Pulumi CLI hands it to the program, before it is validated. */
export interface StackConfigValues {
    stack: string;
    /** Every key of the project's namespace, without the namespace, with structured values parsed. */
    raw: Plain;
    /** Keys of other namespaces the program honours, and which of the project's keys are secrets. */
    ambient: { awsRegion?: string; secretKeys: string[]; otherKeys: string[] };
}

/**
 * Reads every key of the project's namespace from the stack's configuration. Structured values
 * arrive as JSON text; scalars as plain strings.
 */
export function readStackConfig(): StackConfigValues {
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
    return { stack: pulumi.getStack(), raw, ambient: { awsRegion: all["aws:region"], secretKeys, otherKeys: Object.keys(all).filter((k) => !k.startsWith(prefix)) } };
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
