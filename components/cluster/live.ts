/**
 * The live cluster as the program's preflight reads it before anything is declared: GETs only,
 * each bounded in time, through the stack's own connection (connect.ts), so a preview reads what
 * the `up` after it would meet. Nothing here can create, change or delete an object.
 */
import * as http from "http";
import * as https from "https";
import { ConnectOptions, ConnectionError, kubeConfigFor, loadClient } from "./connect";

/** A Kubernetes object as the API server sends it (the fields the preflight reads). */
export interface LiveObject {
    apiVersion?: string;
    kind?: string;
    metadata?: {
        name?: string;
        namespace?: string;
        uid?: string;
        labels?: Record<string, string>;
        annotations?: Record<string, string>;
        managedFields?: { manager?: string; operation?: string }[];
    };
    [field: string]: unknown;
}

/** GETs of one object or of a collection; undefined when it or its type does not exist (404). */
export interface LiveReader {
    readonly server: string;
    get(path: string): Promise<LiveObject | undefined>;
    list(path: string, labelSelector?: string): Promise<LiveObject[] | undefined>;
}

/** One GET is given this long, then the preflight stops with what it could not read. */
export const LIVE_READ_TIMEOUT_MS = 15_000;

/** The REST path of one object or (without a name) of a collection, from its apiVersion and kind. */
export function apiPath(apiVersion: string, kind: string, namespace: string | undefined, name?: string): string {
    const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    return `${base}${namespace ? `/namespaces/${namespace}` : ""}/${plural(kind)}${name ? `/${name}` : ""}`;
}

/** The resource name of a kind, as the API server derives it for the kinds the stack declares. */
export function plural(kind: string): string {
    const k = kind.toLowerCase();
    if (k.endsWith("y")) {
        return `${k.slice(0, -1)}ies`;
    }
    return k.endsWith("s") ? `${k}es` : `${k}s`;
}

/** `Kind namespace/name` or `Kind name`. */
export function objectName(kind: string, namespace: string | undefined, name: string): string {
    return `${kind} ${namespace ? `${namespace}/` : ""}${name}`;
}

/** The stack's cluster, read-only. */
export async function liveReader(opts: ConnectOptions): Promise<LiveReader> {
    const k8s = await loadClient();
    const kc = await kubeConfigFor(k8s, opts);
    const cluster = kc.getCurrentCluster();
    if (!cluster) {
        throw new ConnectionError("the kubeconfig names no current cluster");
    }
    const server = cluster.server.replace(/\/+$/, "");
    const get = async (path: string): Promise<LiveObject | undefined> => {
        const url = new URL(server + path);
        const options: https.RequestOptions = { method: "GET", headers: { Accept: "application/json" }, timeout: LIVE_READ_TIMEOUT_MS };
        await kc.applyToHTTPSOptions(options);
        const transport = url.protocol === "http:" ? http : https;
        const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
            const req = transport.request(url, options, (res) => {
                const chunks: Buffer[] = [];
                res.on("data", (c: Buffer) => chunks.push(c));
                res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
                res.on("error", reject);
            });
            req.on("timeout", () => req.destroy(new Error(`no answer within ${LIVE_READ_TIMEOUT_MS / 1000} s`)));
            req.on("error", (e) => reject(new ConnectionError(`GET ${server}${path}: ${e.message}`)));
            req.end();
        });
        if (answer.status === 404) {
            return undefined;
        }
        if (answer.status !== 200) {
            let message = answer.body.slice(0, 200);
            try {
                message = (JSON.parse(answer.body) as { message?: string }).message ?? message;
            } catch {
                // not JSON
            }
            throw new ConnectionError(`GET ${server}${path}: ${answer.status} ${message}`);
        }
        return JSON.parse(answer.body) as LiveObject;
    };
    return {
        server,
        get,
        async list(path, labelSelector) {
            const list = await get(labelSelector ? `${path}?labelSelector=${encodeURIComponent(labelSelector)}` : path);
            return list === undefined ? undefined : ((list.items as LiveObject[] | undefined) ?? []);
        },
    };
}
