import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import * as YAML from "yaml";
import { PROJECT, Plain } from "./reader";

/** A stack's configuration as the Pulumi CLI hands it to the program, before it is validated. */
export interface StackConfigValues {
    stack: string;
    /** Every key of the project's namespace, without the namespace, with structured values parsed. */
    raw: Plain;
    /** Keys of other namespaces the program honours, and which of the project's keys are secrets. */
    ambient: { awsRegion?: string; secretKeys: string[]; otherKeys: string[]; projectClusters?: string[] };
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
    // The Pulumi CLI runs the program in the project's directory, beside every stack file; a stack
    // whose own file is not there (configuration from elsewhere) has no project to check against.
    const stackName = pulumi.getStack();
    const projectClusters = fs.existsSync(path.join(process.cwd(), `Pulumi.${stackName}.yaml`)) ? projectClusterNames(process.cwd()) : undefined;
    return {
        stack: stackName,
        raw,
        ambient: { awsRegion: all["aws:region"], secretKeys, otherKeys: Object.keys(all).filter((k) => !k.startsWith(prefix)), ...(projectClusters ? { projectClusters } : {}) },
    };
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

/**
 * The `cluster.name` of every stack file in a project directory (`Pulumi.<stack>.yaml`): the
 * clusters this project manages, which `argocd.runsOn` must name one of. Undefined when the
 * directory has no stack file; a file that does not parse is skipped (its own run reports it).
 */
export function projectClusterNames(dir: string): string[] | undefined {
    let files: string[];
    try {
        files = fs.readdirSync(dir).filter((f) => /^Pulumi\.[A-Za-z0-9_.-]+\.yaml$/.test(f));
    } catch {
        return undefined;
    }
    if (files.length === 0) {
        return undefined;
    }
    const names = new Set<string>();
    for (const f of files) {
        try {
            const doc = YAML.parse(fs.readFileSync(path.join(dir, f), "utf8"), { merge: true }) as { config?: Record<string, { name?: unknown } | undefined> } | null;
            const name = doc?.config?.[`${PROJECT}:cluster`]?.name;
            if (typeof name === "string") {
                names.add(name);
            }
        } catch {
            // Not this stack's problem: that stack's own run names the file and the line.
        }
    }
    return [...names].sort();
}
