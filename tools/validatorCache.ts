/**
 * A folder of compiled schema validators (tools/restatedValidate.ts): per cache key, the
 * validator's JavaScript and V8's code cache of it. It holds generated code only, never a plan
 * result: deleting it costs the next plan the compile and nothing else.
 *
 * Each file is `// sha256:<hex of the rest>` and a newline, then the data. A file whose checksum
 * does not match (cut short, corrupted, edited) is treated as absent and written anew. Files are
 * written to a temporary name in the same folder and renamed into place, so a reader never sees
 * half a file, and two plans writing the same entry at once each leave a whole one.
 */
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "./stackFile";

/** The project's name in package.json: its folder in the shared cache folder. */
const CACHE_NAME = "argo-rollouts-addon";

/**
 * Where the validators are cached: `<CACHE_DIR>/argo-rollouts-addon/validators` when the CACHE_DIR
 * environment variable names a folder, else `node_modules/.cache/argo-rollouts-addon/validators`
 * in the project. This is the convention of find-cache-dir, which nyc, AVA and babel-loader follow
 * (avajs/find-cache-dir readme.md, v5.0.0): CACHE_DIR wins unless it is "true", "false", "1" or "0".
 */
export function validatorCacheDir(env: NodeJS.ProcessEnv = process.env, root = REPO_ROOT): string {
    const override = env.CACHE_DIR;
    const base = override && !["true", "false", "1", "0"].includes(override) ? path.resolve(override) : path.join(root, "node_modules", ".cache");
    return path.join(base, CACHE_NAME, "validators");
}

/** The hex sha256 of `data`. */
export function sha256(data: string | Buffer): string {
    return crypto.createHash("sha256").update(data).digest("hex");
}

/**
 * What an entry holds: "js", a validator's JavaScript; "v8", V8's code cache of that JavaScript
 * once compiled (node:vm `script.createCachedData()`), which V8 itself refuses when it was made by
 * another V8 version or with other flags.
 */
export type EntryKind = "js" | "v8";

const HEADER = /^\/\/ sha256:([0-9a-f]{64})\n/;

/** A file's bytes for `data`: the checksum line, then the data. */
export function withChecksum(data: string | Buffer): Buffer {
    const bytes = Buffer.from(data);
    return Buffer.concat([Buffer.from(`// sha256:${sha256(bytes)}\n`), bytes]);
}

/** The data in a cache file's bytes, or undefined when its checksum line is missing or wrong. */
export function checkedData(file: Buffer): Buffer | undefined {
    const header = HEADER.exec(file.subarray(0, 80).toString("latin1"));
    if (!header) {
        return undefined;
    }
    const data = file.subarray(header[0].length);
    return sha256(data) === header[1] ? data : undefined;
}

/** The path of a key's entry. */
export function entryPath(dir: string, key: string, kind: EntryKind = "js"): string {
    if (!/^[0-9a-f]{64}$/.test(key)) {
        throw new Error(`not a cache key: ${key}`);
    }
    return path.join(dir, `${key}.${kind}`);
}

/** The data cached under `key`, or undefined when there is none or it is not whole. */
export function readEntry(dir: string, key: string, kind: EntryKind = "js"): Buffer | undefined {
    let file: Buffer;
    try {
        file = fs.readFileSync(entryPath(dir, key, kind));
    } catch {
        return undefined;
    }
    return checkedData(file);
}

/**
 * Caches `data` under `key`: a temporary file in the folder, renamed over the entry. Returns the
 * error when the folder cannot be created or written (a read-only checkout): the caller goes on
 * with the data it has.
 */
export function writeEntry(dir: string, key: string, data: string | Buffer, kind: EntryKind = "js"): Error | undefined {
    const file = entryPath(dir, key, kind);
    const temp = path.join(dir, `.${key}.${kind}.${process.pid}.${crypto.randomBytes(4).toString("hex")}.tmp`);
    try {
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(temp, withChecksum(data), { flag: "wx" });
        fs.renameSync(temp, file);
        return undefined;
    } catch (e) {
        try {
            fs.rmSync(temp, { force: true });
        } catch {
            // Nothing was written, or it cannot be removed either: the error that matters is e.
        }
        return e instanceof Error ? e : new Error(String(e));
    }
}
