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
    ambient: { awsRegion?: string; secretKeys: string[]; otherKeys: string[]; projectStacks?: ProjectStack[] };
}

/** What one stack file of the project says about its cluster: enough to check the stacks against each other. */
export interface ProjectStack {
    /** `<stack>` of `Pulumi.<stack>.yaml`. */
    stack: string;
    cluster?: string;
    role?: string;
    mimirTenant?: string;
    /** A hub's `spokes`: each spoke's name, and the tenant and hostname the hub gives it. */
    spokes: readonly { name: string; tenant?: string; hostname?: string }[];
    /** `argocd.runsOn`, where it names another cluster than this one. */
    runsOn?: string;
    /** A spoke's `mimir.readEndpoint` URL, or its `mimir.hubStack` (`<org>/<project>/<stack>`). */
    readEndpoint?: string;
    hubStack?: string;
    /** `policy.regulated`'s groups without `cluster.oidcGroupsPrefix` (as ArgoCD sees them), and `argocd.rbac`'s, each where set. */
    groups?: Partial<Record<"regulated" | "rbac", Partial<Record<"approverGroups" | "deployerGroups", readonly string[]>>>>;
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
    // The stack files are in the project's root (the CLI runs the program in `main:`, stacks/; the
    // offline plan sets the root to its --config-dir). Its own file is read narrowly too, so a
    // preview refuses what the plan refuses; a stack configured from elsewhere has no project.
    const root = pulumi.runtime.getRootDirectory();
    const projectStacks = root && fs.existsSync(path.join(root, `Pulumi.${stack}.yaml`)) ? readProjectStacks(root, stack) : undefined;
    return {
        stack,
        raw: Object.fromEntries(keys.map((k) => [k.slice(prefix.length), parseConfigText(all[k])])),
        ambient: {
            awsRegion: all["aws:region"],
            secretKeys: keys.filter((k) => isSecret(k)).map((k) => k.slice(prefix.length)),
            otherKeys: Object.keys(all).filter((k) => !k.startsWith(prefix)),
            ...(projectStacks ? { projectStacks } : {}),
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

/** `o` without its undefined values. */
function defined<T extends object>(o: T): T {
    return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/**
 * What a stack's `config:` says about its cluster (keys with the project's namespace or bare: the
 * Pulumi CLI reads a bare key as the project's, resource/config/key.go ParseKey, and stackYaml.ts
 * refuses a file that writes one key both ways); what is not text is left out.
 */
export function projectStack(stack: string, config: Plain): ProjectStack {
    const text = (v: unknown) => (typeof v === "string" ? v : undefined);
    const map = (v: unknown): Plain => (isPlainObject(v) ? v : {});
    const key = (k: string) => config[`${PROJECT}:${k}`] ?? config[k];
    const [cluster, mimir, argocd, regulated] = [key("cluster"), key("mimir"), key("argocd"), map(key("policy")).regulated].map(map);
    // ArgoCD sees a group without the API server's OIDC prefix (cluster.oidcGroupsPrefix).
    const texts = (v: unknown, prefix = "") =>
        Array.isArray(v) ? v.flatMap((g) => (typeof g !== "string" ? [] : g.startsWith(prefix) ? [g.slice(prefix.length)] : [g])) : undefined;
    const lists = (m: Plain, prefix?: string) => defined({ approverGroups: texts(m.approverGroups, prefix), deployerGroups: texts(m.deployerGroups, prefix) });
    const spokes = key("spokes");
    return defined({
        stack,
        cluster: text(cluster.name),
        role: text(cluster.role),
        mimirTenant: text(cluster.mimirTenant),
        spokes: (Array.isArray(spokes) ? (spokes as unknown[]) : []).flatMap((s) =>
            isPlainObject(s) && text(s.name) ? [defined({ name: text(s.name)!, tenant: text(s.tenant), hostname: text(s.hostname) })] : [],
        ),
        runsOn: text(argocd.runsOn) !== text(cluster.name) ? text(argocd.runsOn) : undefined,
        readEndpoint: text(mimir.readEndpoint),
        hubStack: text(mimir.hubStack),
        groups: { regulated: lists(regulated, text(cluster.oidcGroupsPrefix)), rbac: lists(map(argocd.rbac)) },
    });
}

/**
 * Every stack file of a project directory, read for what the stacks must agree on (project.ts);
 * undefined when there is none. A file refused is skipped (its own run names the file and the
 * line), unless it is `own`'s.
 */
export function readProjectStacks(dir: string, own?: string): ProjectStack[] | undefined {
    const files = fs.existsSync(dir) && fs.statSync(dir).isDirectory() ? fs.readdirSync(dir).filter((f) => /^Pulumi\.[A-Za-z0-9_.-]+\.yaml$/.test(f)) : [];
    const stacks = files.sort().flatMap((f): ProjectStack[] => {
        const stack = f.slice("Pulumi.".length, -".yaml".length);
        try {
            const doc = readStackYamlFile(dir, stack);
            return [projectStack(stack, isPlainObject(doc) && isPlainObject(doc.config) ? doc.config : {})];
        } catch (e) {
            if (stack === own) throw e;
            return [];
        }
    });
    return files.length > 0 ? stacks : undefined;
}
