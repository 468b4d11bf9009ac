/** The live cluster as verify and adopt-check see it, read-only by construction: GETs and access reviews only. */
import * as https from "https";
import type * as K8s from "@kubernetes/client-node";
import { ConnectOptions, ConnectionError, kubeConfigFor, loadClient } from "../../components/cluster/connect";
import { HttpAnswer, LiveObject, httpGet, statusMessage } from "../../components/cluster/live";

/** A Kubernetes object as the API server sends it; each check narrows the fields it reads. */
export interface KubeObject extends LiveObject {
    apiVersion?: string;
    kind?: string;
    metadata?: LiveObject["metadata"] & {
        uid?: string;
        generation?: number;
        labels?: Record<string, string>;
        annotations?: Record<string, string>;
        ownerReferences?: { apiVersion?: string; kind?: string; name?: string; controller?: boolean }[];
        deletionTimestamp?: string;
        creationTimestamp?: string;
    };
}

/** What a SubjectAccessReview asks; no namespace: every namespace (a cluster-wide grant is needed). */
export type ResourceQuestion = { verb: string; group: string; resource: string; subresource?: string; namespace?: string; name?: string };

export type Subject = { user?: string; groups?: string[] };

export interface AccessDecision {
    allowed: boolean;
    /** The authorizer's reason: RBAC names the binding and role that allowed it. */
    reason?: string;
}

export type { HttpAnswer };

export interface ReadOnlyCluster {
    readonly server: string;
    /** GET of one object; undefined when it does not exist (404). */
    get(path: string): Promise<KubeObject | undefined>;
    /** GET of a collection; undefined when the resource type is not served (404). */
    list(path: string, labelSelector?: string): Promise<KubeObject[] | undefined>;
    /** SubjectAccessReview: what the API server's authorizers decide for another subject. */
    review(subject: Subject, question: ResourceQuestion): Promise<AccessDecision>;
    /** SelfSubjectAccessReview: what verify's own credentials may do. */
    reviewSelf(question: ResourceQuestion): Promise<AccessDecision>;
    /** GET through the API server's service proxy (`services/proxy`), with extra headers. */
    proxyGet(
        namespace: string,
        service: string,
        port: number,
        path: string,
        query: Record<string, string>,
        headers: Record<string, string>,
    ): Promise<HttpAnswer>;
}

export { ConnectionError, ConnectOptions, describeEksCluster, kubeConfigFor, loadClient } from "../../components/cluster/connect";

/** A read the API server refused or failed (other than 404): reported on the check that needed it. */
export class ReadError extends Error {
    constructor(
        readonly path: string,
        readonly status: number,
        message: string,
    ) {
        super(message);
    }
}

const REQUEST_TIMEOUT_MS = 30_000;

/** The read-only cluster over the official client's KubeConfig (contexts, exec credentials such as `aws eks get-token`). */
export async function connect(opts: ConnectOptions): Promise<ReadOnlyCluster> {
    const k8s = await loadClient();
    const kc = await kubeConfigFor(k8s, opts).catch((e: Error) => {
        throw e instanceof ConnectionError ? e : new ConnectionError(e.message);
    });
    const server = kc.getCurrentCluster()?.server.replace(/\/+$/, "");
    if (!server) throw new ConnectionError("the kubeconfig names no current cluster");
    const send = async (path: string, headers: Record<string, string> = {}): Promise<HttpAnswer> => {
        const options: https.RequestOptions = { headers: { Accept: "application/json", ...headers } };
        await kc.applyToHTTPSOptions(options);
        return httpGet(new URL(server + path), options, REQUEST_TIMEOUT_MS).catch((e: Error) => {
            throw new ConnectionError(`${server}: ${e.message}`);
        });
    };
    const get = async (path: string): Promise<KubeObject | undefined> => {
        const answer = await send(path);
        if (answer.status === 401) {
            throw new ConnectionError(`${server} refused verify's credentials (401): check the kubeconfig user or the aws CLI's credentials`);
        }
        if (answer.status !== 200 && answer.status !== 404) {
            throw new ReadError(path, answer.status, `GET ${path}: ${answer.status} ${statusMessage(answer.body)}`);
        }
        return answer.status === 404 ? undefined : (JSON.parse(answer.body) as KubeObject);
    };
    const authz = kc.makeApiClient(k8s.AuthorizationV1Api);
    const ask = async (review: () => Promise<{ status?: K8s.V1SubjectAccessReviewStatus }>): Promise<AccessDecision> => {
        try {
            const { status } = await review();
            return { allowed: status?.allowed === true, ...(status?.reason ? { reason: status.reason } : {}) };
        } catch (e) {
            const code = (e as { code?: number }).code;
            if (code === 401) throw new ConnectionError(`${server} refused verify's credentials (401)`);
            throw new ReadError("/apis/authorization.k8s.io/v1", code ?? 0, `access review failed: ${code ?? ""} ${(e as Error).message.split("\n")[0]}`);
        }
    };
    const attributes = (q: ResourceQuestion): K8s.V1ResourceAttributes => Object.fromEntries(Object.entries(q).filter(([, v]) => v));
    // One request up front: an unreachable cluster or refused credentials stop verify before any check (exit 2).
    const version = await send("/version");
    if (version.status !== 200) {
        const why =
            version.status === 401 || version.status === 403 ? `refused verify's credentials (${version.status})` : `/version answered ${version.status}`;
        throw new ConnectionError(`${server} ${why}: ${statusMessage(version.body)}`);
    }
    return {
        server,
        get,
        list: async (path, labelSelector) => {
            const list = await get(labelSelector ? `${path}?labelSelector=${encodeURIComponent(labelSelector)}` : path);
            return list === undefined ? undefined : ((list.items as KubeObject[] | undefined) ?? []);
        },
        review: (subject, question) =>
            ask(() =>
                authz.createSubjectAccessReview({
                    body: {
                        apiVersion: "authorization.k8s.io/v1",
                        kind: "SubjectAccessReview",
                        spec: { ...subject, resourceAttributes: attributes(question) },
                    },
                }),
            ),
        reviewSelf: (question) =>
            ask(() =>
                authz.createSelfSubjectAccessReview({
                    body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: { resourceAttributes: attributes(question) } },
                }),
            ),
        proxyGet: (namespace, service, port, path, query, headers) => {
            const qs = new URLSearchParams(query).toString();
            return send(
                `/api/v1/namespaces/${encodeURIComponent(namespace)}/services/${encodeURIComponent(service)}:${port}/proxy${path}${qs ? `?${qs}` : ""}`,
                headers,
            );
        },
    };
}
