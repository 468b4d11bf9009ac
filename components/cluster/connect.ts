/**
 * How the preflight and the tools reach a stack's cluster the way its provider does (provider.ts):
 * the stack file's kubeconfig context, or an EKS cluster with its endpoint from `aws eks
 * describe-cluster` and a token from the aws CLI's exec plugin. Nothing here sends a request.
 */
import { execFile } from "child_process";
import * as os from "os";
import * as path from "path";
import { promisify } from "util";
import { pathToFileURL } from "url";
import type * as K8s from "@kubernetes/client-node";
import { eksKubeconfig } from "./eks";
import type { ClusterConnection } from "./config";

/** The API server could not be reached or refused the credentials. */
export class ConnectionError extends Error {}

export type ClientModule = typeof import("@kubernetes/client-node");

/**
 * `@kubernetes/client-node` 1.x is an ES module only. The project is CommonJS, where TypeScript
 * rewrites `import()` into `require()`; `require()` of an ES module works only from Node 20.19.
 * A dynamic import that TypeScript leaves alone loads it on every Node 20.
 */
const importModule = new Function("specifier", "return import(specifier)") as (specifier: string) => Promise<unknown>;

export async function loadClient(): Promise<ClientModule> {
    return (await importModule(pathToFileURL(require.resolve("@kubernetes/client-node")).href)) as ClientModule;
}

/** How to reach the cluster: the stack's connection, or an explicit kubeconfig/context override. */
export interface ConnectOptions {
    connection: ClusterConnection;
    kubeconfig?: string;
    context?: string;
    /** Runs `aws eks describe-cluster`; replaceable in tests. */
    describeEks?: (clusterName: string, region: string) => Promise<{ endpoint: string; certificateAuthority: string }>;
}

/** Endpoint and CA of an EKS cluster, as the program's provider gets them (provider.ts). */
export async function describeEksCluster(clusterName: string, region: string): Promise<{ endpoint: string; certificateAuthority: string }> {
    const command = `aws eks describe-cluster --name ${clusterName} --region ${region}`;
    const { stdout } = await promisify(execFile)("aws", [...command.split(" ").slice(1), "--output", "json"], { timeout: 60_000 }).catch((e) => {
        throw new ConnectionError(`${command} failed: ${String((e as { stderr?: string }).stderr || (e as Error).message).trim()}`);
    });
    const c = (JSON.parse(stdout) as { cluster?: { endpoint?: string; certificateAuthority?: { data?: string } } }).cluster;
    if (!c?.endpoint || !c.certificateAuthority?.data) throw new ConnectionError(`${command}: no endpoint or certificate authority in the answer`);
    return { endpoint: c.endpoint, certificateAuthority: c.certificateAuthority.data };
}

/** Builds the client configuration the way the program's provider connects (provider.ts). */
export async function kubeConfigFor(k8s: ClientModule, opts: ConnectOptions): Promise<K8s.KubeConfig> {
    const kc = new k8s.KubeConfig();
    const conn = opts.connection;
    if (opts.kubeconfig !== undefined || opts.context !== undefined || conn.kind === "kubeconfig") {
        const file = opts.kubeconfig ?? (conn.kind === "kubeconfig" ? conn.path : undefined);
        // A kubeconfig the client cannot parse comes back with its lines quoted, tokens included
        // (@kubernetes/client-node 1.4.0 `loadFromString` passes js-yaml's error on): the first line says why.
        const load = (read: () => void) => {
            try {
                read();
            } catch (e) {
                throw new ConnectionError(`kubeconfig ${file ?? "(default)"} cannot be read: ${(e as Error).message.split("\n")[0]}`);
            }
        };
        if (file) {
            load(() => kc.loadFromFile(file));
        } else {
            load(() => kc.loadFromDefault());
            // With no KUBECONFIG, no ~/.kube/config and no in-cluster token, the client falls back to
            // http://localhost:8080 under a context it names "loaded-context" (@kubernetes/client-node
            // 1.4.0 dist/config.js `loadFromDefault`, `loadFromClusterAndUser`): that is no kubeconfig.
            if (kc.getCurrentContext() === "loaded-context") {
                throw new ConnectionError(
                    `no kubeconfig: KUBECONFIG is not set and ${path.join(os.homedir(), ".kube", "config")} does not exist; give --kubeconfig, or set cluster.kubeconfigPath in the stack file`,
                );
            }
        }
        const context = opts.context ?? (conn.kind === "kubeconfig" ? conn.context : undefined);
        if (context !== undefined) {
            if (!kc.getContextObject(context)) {
                const names = kc.getContexts().map((c) => c.name);
                throw new ConnectionError(`kubeconfig ${file ?? "(default)"} has no context "${context}"; it has: ${names.join(", ") || "none"}`);
            }
            kc.setCurrentContext(context);
        }
        return kc;
    }
    const eks = await (opts.describeEks ?? describeEksCluster)(conn.clusterName, conn.region);
    kc.loadFromString(JSON.stringify(eksKubeconfig({ clusterName: conn.clusterName, region: conn.region, ...eks })));
    return kc;
}
