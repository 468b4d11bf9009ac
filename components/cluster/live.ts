/**
 * The live cluster as the preflight reads it before anything is declared: GETs only, each bounded,
 * through the stack's own connection (connect.ts), so a preview reads what its `up` would meet.
 */
import * as http from "http";
import * as https from "https";
import { ConnectOptions, ConnectionError, kubeConfigFor, loadClient } from "./connect";

/** A Kubernetes object as the API server sends it (the fields the preflight reads). */
export interface LiveObject {
    metadata?: {
        name?: string;
        namespace?: string;
        labels?: Record<string, string>;
        annotations?: Record<string, string>;
        managedFields?: { manager?: string; operation?: string }[];
    };
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

export interface HttpAnswer {
    status: number;
    body: string;
}

/** The one GET the program and its tools send over HTTP(S); a socket error or no answer within `timeoutMs` rejects. */
export function httpGet(url: URL, options: https.RequestOptions, timeoutMs: number): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
        const req = (url.protocol === "http:" ? http : https).request(url, { ...options, method: "GET", timeout: timeoutMs }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
            res.on("error", reject);
        });
        req.on("timeout", () => req.destroy(new Error(`timeout: no answer within ${timeoutMs / 1000} s`)));
        req.on("error", reject);
        req.end();
    });
}

/** The message of a Kubernetes Status body, or the start of whatever came back. */
export function statusMessage(body: string): string {
    try {
        const message = (JSON.parse(body) as { message?: unknown }).message;
        return typeof message === "string" ? message : body.slice(0, 200);
    } catch {
        return body.slice(0, 200);
    }
}

/** The stack's cluster, read-only. */
export async function liveReader(opts: ConnectOptions): Promise<LiveReader> {
    const kc = await kubeConfigFor(await loadClient(), opts);
    const server = kc.getCurrentCluster()?.server.replace(/\/+$/, "");
    if (!server) throw new ConnectionError("the kubeconfig names no current cluster");
    const get = async (path: string): Promise<LiveObject | undefined> => {
        const options: https.RequestOptions = { headers: { Accept: "application/json" } };
        await kc.applyToHTTPSOptions(options);
        const { status, body } = await httpGet(new URL(server + path), options, TIMEOUT_MS).catch((e: Error) => {
            throw new ConnectionError(`GET ${server}${path}: ${e.message}`);
        });
        if (status === 404) return undefined;
        if (status !== 200) throw new ConnectionError(`GET ${server}${path}: ${status} ${statusMessage(body)}`);
        return JSON.parse(body) as LiveObject;
    };
    return {
        get,
        list: async (path) => (await get(path))?.items as LiveObject[] | undefined,
    };
}
