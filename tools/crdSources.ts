/** The CRDs as `up` applies them (the ConfigGroup's files), from a folder of the same files (--crds <dir>) or from their URLs (--crds remote). */
import * as fs from "fs";
import * as path from "path";
import { httpGet } from "../components/cluster/live";
import * as YAML from "yaml";
import { parseRendered } from "./chartRender";
import { UsageError } from "./cli";

export const CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup";

export type CrdSourceSpec = { kind: "dir"; dir: string } | { kind: "remote" };

/** `--crds <dir>|remote`, else ARGO_ROLLOUTS_CRDS; undefined when neither is given; a folder asked for must be one. */
export function crdSourceFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): CrdSourceSpec | undefined {
    const v = flag ?? (env.ARGO_ROLLOUTS_CRDS || undefined);
    if (!v || v === "remote") return v ? { kind: "remote" } : undefined;
    if (!fs.statSync(v, { throwIfNoEntry: false })?.isDirectory()) {
        throw new UsageError(`${flag ? "--crds" : "ARGO_ROLLOUTS_CRDS"} ${v}: is no folder; give the folder holding the CRD files the stack names, or remote`);
    }
    return { kind: "dir", dir: path.resolve(v) };
}

export type SourcedObject = { object: Record<string, unknown>; source: string };

export type CrdRead = { objects: SourcedObject[] } | { notShown: string };

/** The CRDs of a file, by where it was read; or why it holds something else (malformed YAML, an HTML page, another kind). */
function parseCrds(text: string, source: string): SourcedObject[] {
    const broken = YAML.parseAllDocuments(text).find((d) => d.errors.length > 0)?.errors[0];
    const objects = broken ? [] : parseRendered(text).map(({ object }) => ({ object, source }));
    const why = broken ? `is not YAML (${broken.message.split("\n")[0]})` : "holds other than CustomResourceDefinitions (an HTML page?)";
    if (objects.length === 0 || objects.some((o) => o.object.kind !== "CustomResourceDefinition")) throw new Error(`${source} ${why}`);
    return objects;
}

/** The text at an HTTPS URL, or an error naming it (never its user-info or query). */
export async function httpsGet(url: string, timeoutMs = 15_000): Promise<string> {
    const u = new URL(url);
    const shown = `${u.protocol}//${u.host}${u.pathname}`;
    const res = await httpGet(u, {}, timeoutMs).catch((e: Error) => Promise.reject(new Error(`${shown}: ${e.message}`)));
    return res.status === 200 ? res.body : Promise.reject(new Error(`${shown}: HTTP ${res.status}`));
}

/** The manifests of the ConfigGroup's `files`, each by its file name in the folder or from its URL; or why they are not shown. */
export async function readCrdFiles(
    files: readonly string[],
    source: CrdSourceSpec | undefined,
    get: (url: string) => Promise<string> = httpsGet,
): Promise<CrdRead> {
    if (!source) {
        return { notShown: `give the folder of these files with --crds <dir> or ARGO_ROLLOUTS_CRDS, or --crds remote to read them from their URLs` };
    }
    // The URL's file name in the folder, or the URL itself.
    const sources = source.kind === "dir" ? files.map((f) => path.join(source.dir, path.posix.basename(new URL(f, "file:///").pathname))) : files;
    const missing = source.kind === "dir" && sources.find((f) => !fs.existsSync(f));
    if (missing) return { notShown: `${missing} does not exist (the folder given must hold ${files.map((u) => path.posix.basename(u)).join(", ")})` };
    const read = source.kind === "dir" ? async (f: string) => fs.readFileSync(f, "utf8") : get;
    const unreachable = (e: Error) => Promise.reject(new Error(`not reachable: ${e.message}; give a local folder of the files with --crds <dir>`));
    try {
        const texts = await Promise.all(sources.map((f) => read(f))).catch(unreachable);
        return { objects: texts.flatMap((t, i) => parseCrds(t, sources[i])) };
    } catch (e) {
        return { notShown: (e as Error).message };
    }
}
