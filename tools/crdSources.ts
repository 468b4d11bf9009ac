/** The CRDs as `up` applies them (the ConfigGroup's files), from a folder of the same files (--crds <dir>) or from their URLs (--crds remote). */
import * as fs from "fs";
import * as path from "path";
import { httpGet } from "../components/cluster/live";
import { parseRendered } from "./chartRender";

export const CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup";

export type CrdSourceSpec = { kind: "dir"; dir: string } | { kind: "remote" };

/** `--crds <dir>|remote`, else ARGO_ROLLOUTS_CRDS; undefined when neither is given. */
export function crdSourceFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): CrdSourceSpec | undefined {
    const v = flag ?? (env.ARGO_ROLLOUTS_CRDS || undefined);
    if (!v) return undefined;
    return v === "remote" ? { kind: "remote" } : { kind: "dir", dir: path.resolve(v) };
}

export type SourcedObject = { object: Record<string, unknown>; source: string };

export type CrdRead = { objects: SourcedObject[] } | { notShown: string };

/** Every object of a file of several documents, by where it was read. */
const parseAll = (text: string, source: string): SourcedObject[] => parseRendered(text).map(({ object }) => ({ object, source }));

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
    if (source.kind === "dir") {
        const objects: SourcedObject[] = [];
        for (const f of files) {
            const file = path.join(source.dir, path.posix.basename(new URL(f, "file:///").pathname));
            if (!fs.existsSync(file)) {
                return { notShown: `${file} does not exist (the folder given must hold ${files.map((u) => path.posix.basename(u)).join(", ")})` };
            }
            objects.push(...parseAll(fs.readFileSync(file, "utf8"), file));
        }
        return { objects };
    }
    try {
        const texts = await Promise.all(files.map((f) => get(f)));
        return { objects: texts.flatMap((t, i) => parseAll(t, files[i])) };
    } catch (e) {
        return { notShown: `not reachable: ${(e as Error).message}; give a local folder of the files with --crds <dir>` };
    }
}
