/**
 * The live cluster as the preflight reads it before anything is declared: GETs only, each bounded,
 * through the stack's own connection (connect.ts), so a preview reads what its `up` would meet.
 */
import * as http from "http";
import * as https from "https";
import { ConnectOptions, ConnectionError, kubeConfigFor, loadClient } from "./connect";

/** A Kubernetes object as the API server sends it (the fields the preflight reads). */
export interface LiveObject {
    metadata?: { name?: string; namespace?: string; managedFields?: { manager?: string; operation?: string }[] };
    [field: string]: unknown;
}

/** GETs of one object or of a collection; undefined when it or its type does not exist (404). */
export interface LiveReader {
    get(path: string): Promise<LiveObject | undefined>;
    list(path: string): Promise<LiveObject[] | undefined>;
}

/** The REST path of one object or (without a name) of a collection, from its apiVersion and kind. */
export function apiPath(apiVersion: string, kind: string, namespace: string | undefined, name?: string): string {
    const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    return `${base}${namespace ? `/namespaces/${namespace}` : ""}/${plural(kind)}${name ? `/${name}` : ""}`;
}

/** The resource name of a kind, as the API server derives it for the kinds the stack declares. */
export function plural(kind: string): string {
    const k = kind.toLowerCase();
    if (k.endsWith("y")) return `${k.slice(0, -1)}ies`;
    return k.endsWith("s") ? `${k}es` : `${k}s`;
}

/** `Kind namespace/name` or `Kind name`. */
export function objectName(kind: string, namespace: string | undefined, name: string): string {
    return `${kind} ${namespace ? `${namespace}/` : ""}${name}`;
}

/** One GET is given this long, then the preflight stops with what it could not read. */
const TIMEOUT_MS = 15_000;

/** The stack's cluster, read-only. */
export async function liveReader(opts: ConnectOptions): Promise<LiveReader> {
    const kc = await kubeConfigFor(await loadClient(), opts);
    const server = kc.getCurrentCluster()?.server.replace(/\/+$/, "");
    if (!server) throw new ConnectionError("the kubeconfig names no current cluster");
    const get = async (path: string): Promise<LiveObject | undefined> => {
        const url = new URL(server + path);
        const options: https.RequestOptions = { method: "GET", headers: { Accept: "application/json" }, timeout: TIMEOUT_MS };
        await kc.applyToHTTPSOptions(options);
        const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
            const req = (url.protocol === "http:" ? http : https).request(url, options, (res) => {
                let text = "";
                res.setEncoding("utf8");
                res.on("data", (c: string) => (text += c));
                res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
                res.on("error", reject);
            });
            req.on("timeout", () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
            req.on("error", (e) => reject(new ConnectionError(`GET ${server}${path}: ${e.message}`)));
            req.end();
        });
        if (status === 404) return undefined;
        if (status !== 200) {
            const message = /^\{/.test(body) ? (JSON.parse(body) as { message?: string }).message : undefined;
            throw new ConnectionError(`GET ${server}${path}: ${status} ${message ?? body.slice(0, 200)}`);
        }
        return JSON.parse(body) as LiveObject;
    };
    return {
        get,
        list: async (path) => (await get(path))?.items as LiveObject[] | undefined,
    };
}
