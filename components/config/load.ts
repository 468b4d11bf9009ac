import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { PROJECT, Plain } from "./reader";
import { parseStackYaml } from "./stackYaml";

/** A stack's configuration as the Pulumi CLI hands it to the program, before it is validated. */
export interface StackConfigValues {
    stack: string;
    /** Every key of the project's namespace, without the namespace, with structured values parsed. */
    raw: Plain;
    /** Keys of other namespaces the program honours, and which of the project's keys are secrets. */
    ambient: { awsRegion?: string; secretKeys: string[]; otherKeys: string[]; projectClusters?: string[]; projectStacks?: ProjectStack[] };
}

/** What one stack file of the project says about its cluster: enough to check the stacks against each other. */
export interface ProjectStack {
    /** `<stack>` of `Pulumi.<stack>.yaml`. */
    stack: string;
    cluster?: string;
    mimirTenant?: string;
    /** A hub's `spokes`: each spoke's name and the tenant the hub gives it. */
    spokes: { name: string; tenant?: string }[];
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
    const own = fs.existsSync(path.join(process.cwd(), `Pulumi.${stackName}.yaml`));
    const projectClusters = own ? projectClusterNames(process.cwd()) : undefined;
    const projectStacks = own ? readProjectStacks(process.cwd()) : undefined;
    return {
        stack: stackName,
        raw,
        ambient: {
            awsRegion: all["aws:region"],
            secretKeys,
            otherKeys: Object.keys(all).filter((k) => !k.startsWith(prefix)),
            ...(projectClusters ? { projectClusters } : {}),
            ...(projectStacks ? { projectStacks } : {}),
        },
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
    const stacks = readProjectStacks(dir);
    return stacks && [...new Set(stacks.map((s) => s.cluster).filter((c): c is string => c !== undefined))].sort();
}

/**
 * Every stack file of a project directory, read for what the stacks must agree on (one stack per
 * cluster, one Mimir tenant per cluster, a hub's spoke tenants as the spokes' own files give them).
 * Undefined when the directory has no stack file; a file that does not parse is skipped (its own
 * run reports it).
 */
export function readProjectStacks(dir: string): ProjectStack[] | undefined {
    let files: string[];
    try {
        files = fs
            .readdirSync(dir)
            .filter((f) => /^Pulumi\.[A-Za-z0-9_.-]+\.yaml$/.test(f))
            .sort();
    } catch {
        return undefined;
    }
    if (files.length === 0) {
        return undefined;
    }
    const text = (v: unknown) => (typeof v === "string" ? v : undefined);
    const out: ProjectStack[] = [];
    for (const f of files) {
        try {
            const doc = parseStackYaml(fs.readFileSync(path.join(dir, f), "utf8")) as { config?: Record<string, unknown> } | null;
            const cluster = (doc?.config?.[`${PROJECT}:cluster`] ?? {}) as { name?: unknown; mimirTenant?: unknown };
            const spokes = doc?.config?.[`${PROJECT}:spokes`];
            out.push({
                stack: f.slice("Pulumi.".length, -".yaml".length),
                ...(text(cluster.name) ? { cluster: text(cluster.name) } : {}),
                ...(text(cluster.mimirTenant) ? { mimirTenant: text(cluster.mimirTenant) } : {}),
                spokes: Array.isArray(spokes)
                    ? spokes.flatMap((s: { name?: unknown; tenant?: unknown } | null) =>
                          s && text(s.name) ? [{ name: text(s.name)!, ...(text(s.tenant) ? { tenant: text(s.tenant) } : {}) }] : [],
                      )
                    : [],
            });
        } catch {
            // Not this stack's problem: that stack's own run names the file and the line.
        }
    }
    return out;
}
