/**
 * Direct reads and watches of a run's API server as the cluster admin, for what a scenario
 * observes while engines act (every write of a route, not a sample of them).
 */
import * as fs from "fs";
import * as https from "https";
import * as path from "path";
import * as readline from "readline";
import { Cluster } from "./cluster";

function tlsOptions(cluster: Cluster): https.RequestOptions {
    return {
        ca: fs.readFileSync(cluster.caFile),
        cert: fs.readFileSync(path.join(cluster.dir, "admin.crt")),
        key: fs.readFileSync(path.join(cluster.dir, "admin.key")),
    };
}

export function apiGet<T = unknown>(cluster: Cluster, apiPath: string): Promise<T> {
    return new Promise((resolve, reject) => {
        const req = https.get(`${cluster.server}${apiPath}`, { ...tlsOptions(cluster), timeout: 10_000 }, (res) => {
            let body = "";
            res.on("data", (c) => (body += c));
            res.on("end", () => {
                if (res.statusCode !== 200) {
                    reject(new Error(`GET ${apiPath}: ${res.statusCode} ${body.slice(0, 300)}`));
                    return;
                }
                resolve(JSON.parse(body) as T);
            });
        });
        req.on("error", reject);
        req.on("timeout", () => req.destroy(new Error(`timeout: GET ${apiPath}`)));
    });
}

export interface WatchEvent<T> {
    type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
    object: T;
}

export interface Watch<T> {
    events: WatchEvent<T>[];
    stop(): void;
}

/** Watches a collection from now on (`?watch=1`), keeping every event in order. */
export function watch<T>(cluster: Cluster, collectionPath: string): Watch<T> {
    const events: WatchEvent<T>[] = [];
    const sep = collectionPath.includes("?") ? "&" : "?";
    const req = https.get(`${cluster.server}${collectionPath}${sep}watch=1`, { ...tlsOptions(cluster) }, (res) => {
        // One event per line; stop() aborts the response, which ends the watch quietly.
        readline
            .createInterface({ input: res })
            .on("error", () => undefined)
            .on("line", (line) => {
                if (line.trim()) {
                    events.push(JSON.parse(line) as WatchEvent<T>);
                }
            });
    });
    req.on("error", () => undefined);
    return { events, stop: () => req.destroy() };
}
