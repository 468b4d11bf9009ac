import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { PROJECT, Plain, isPlainObject } from "./reader";
import { StackValue, StackYamlError, parseStackYaml } from "./stackYaml";

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

/** Reads every key of the project's namespace from the stack's configuration (structured values arrive as JSON text). */
export function readStackConfig(): StackConfigValues {
    const all = pulumi.runtime.allConfig();
    const prefix = `${PROJECT}:`;
    // `isConfigSecret` is exported by the SDK's runtime but not typed; without it no key is secret,
    // and a secret-only key (notificationsToken) is refused rather than leaked.
    const isSecret = (pulumi.runtime as unknown as { isConfigSecret?: (key: string) => boolean }).isConfigSecret ?? (() => false);
    const keys = Object.keys(all).filter((k) => k.startsWith(prefix));
    const stack = pulumi.getStack();
    // The CLI runs the program beside every stack file. Its own file is read narrowly too, so a
    // preview refuses what the plan refuses; a stack configured from elsewhere has no project.
    const own = fs.existsSync(path.join(process.cwd(), `Pulumi.${stack}.yaml`));
    const projectStacks = own ? readProjectStacks(process.cwd(), stack) : undefined;
    return {
        stack,
        raw: Object.fromEntries(keys.map((k) => [k.slice(prefix.length), parseConfigText(all[k])])),
        ambient: {
            awsRegion: all["aws:region"],
            secretKeys: keys.filter((k) => isSecret(k)).map((k) => k.slice(prefix.length)),
            otherKeys: Object.keys(all).filter((k) => !k.startsWith(prefix)),
            ...(projectStacks ? { projectClusters: projectClusterNames(projectStacks), projectStacks } : {}),
        },
    };
}

/** Pulumi hands structured config over as JSON; anything that is not JSON stays a string. */
export function parseConfigText(text: string): unknown {
    try {
        return /^\s*[{[]/.test(text) ? JSON.parse(text) : text;
    } catch {
        return text;
    }
}

/** `Pulumi.<stack>.yaml` of `dir`, read narrowly (stackYaml.ts); a refusal names the stack and the file. */
export function readStackYamlFile(dir: string, stack: string): StackValue {
    try {
        return parseStackYaml(fs.readFileSync(path.join(dir, `Pulumi.${stack}.yaml`)));
    } catch (e) {
        throw e instanceof StackYamlError ? new StackYamlError(`stack "${stack}": Pulumi.${stack}.yaml ${e.message}`) : e;
    }
}

/** The clusters the project's stack files manage, which `argocd.runsOn` must name one of. */
export function projectClusterNames(stacks: readonly ProjectStack[]): string[] {
    return [...new Set(stacks.flatMap((s) => s.cluster ?? []))].sort();
}

/**
 * Every stack file of a project directory, read for what the stacks must agree on (one stack per
 * cluster, one Mimir tenant per cluster, a hub's spoke tenants); undefined when there is none. A
 * file refused is skipped (its own run names the file and the line), unless it is `own`'s.
 */
export function readProjectStacks(dir: string, own?: string): ProjectStack[] | undefined {
    const files = fs.existsSync(dir) && fs.statSync(dir).isDirectory() ? fs.readdirSync(dir).filter((f) => /^Pulumi\.[A-Za-z0-9_.-]+\.yaml$/.test(f)) : [];
    const text = (v: unknown) => (typeof v === "string" ? v : undefined);
    const stacks = files.sort().flatMap((f): ProjectStack[] => {
        const stack = f.slice("Pulumi.".length, -".yaml".length);
        let config: Plain;
        try {
            const doc = readStackYamlFile(dir, stack);
            config = isPlainObject(doc) && isPlainObject(doc.config) ? doc.config : {};
        } catch (e) {
            if (stack === own) throw e;
            return [];
        }
        const cluster = isPlainObject(config[`${PROJECT}:cluster`]) ? (config[`${PROJECT}:cluster`] as Plain) : {};
        const spokes = config[`${PROJECT}:spokes`];
        return [
            {
                stack,
                ...(text(cluster.name) ? { cluster: text(cluster.name) } : {}),
                ...(text(cluster.mimirTenant) ? { mimirTenant: text(cluster.mimirTenant) } : {}),
                spokes: (Array.isArray(spokes) ? spokes : []).flatMap((s) =>
                    isPlainObject(s) && text(s.name) ? [{ name: text(s.name)!, ...(text(s.tenant) ? { tenant: text(s.tenant) } : {}) }] : [],
                ),
            },
        ];
    });
    return files.length > 0 ? stacks : undefined;
}
