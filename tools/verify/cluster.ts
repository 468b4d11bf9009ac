/**
 * The live cluster as `npm run verify` sees it: read-only by construction. The only requests it
 * can send are GETs and access reviews (SubjectAccessReview, SelfSubjectAccessReview), which the
 * API server evaluates and does not store. Nothing here can create, change or delete an object.
 */
import * as https from "https";
import type * as K8s from "@kubernetes/client-node";
import { ConnectOptions, ConnectionError, kubeConfigFor, loadClient } from "../../components/cluster/connect";
import { HttpAnswer, httpGet } from "../httpGet";

/** A Kubernetes object as the API server sends it. */
export interface KubeObject {
    apiVersion?: string;
    kind?: string;
    metadata?: {
        name?: string;
        namespace?: string;
        uid?: string;
        generation?: number;
        labels?: Record<string, string>;
        annotations?: Record<string, string>;
        ownerReferences?: { apiVersion?: string; kind?: string; name?: string; controller?: boolean }[];
        deletionTimestamp?: string;
        creationTimestamp?: string;
        /** Who set which fields, as the API server tracks it (server-side apply and updates alike). */
        managedFields?: { manager?: string; operation?: string }[];
    };
    // Shapes differ per kind; each check narrows the fields it reads.
    [field: string]: unknown;
}

/** What a SubjectAccessReview asks: can this subject do this on this resource? */
export interface ResourceQuestion {
    verb: string;
    group: string;
    resource: string;
    subresource?: string;
    /** Empty: every namespace (a cluster-wide grant is needed). */
    namespace?: string;
    name?: string;
}

/** Who a SubjectAccessReview asks about: a user, groups, or both. */
export interface Subject {
    user?: string;
    groups?: string[];
}

export interface AccessDecision {
    allowed: boolean;
    denied?: boolean;
    /** The authorizer's reason: RBAC names the binding and role that allowed it. */
    reason?: string;
    evaluationError?: string;
}

export type { HttpAnswer };

/** The only operations verify has. */
export interface ReadOnlyCluster {
    /** The API server's address, for messages. */
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

// How the program's tools reach a stack's cluster lives with the program's provider (components/cluster/connect.ts).
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

/**
 * The read-only cluster over the official client: its KubeConfig does the connecting (contexts,
 * exec credential plugins such as `aws eks get-token`, certificates, proxies) and its typed
 * AuthorizationV1Api sends the reviews. Reads go through one GET path that returns the JSON the
 * API server sent, because the checks read custom resources and the service proxy, whose answers
 * the generated model classes do not describe.
 */
export async function connect(opts: ConnectOptions): Promise<ReadOnlyCluster> {
    const k8s = await loadClient();
    let kc: K8s.KubeConfig;
    try {
        kc = await kubeConfigFor(k8s, opts);
    } catch (e) {
        throw e instanceof ConnectionError ? e : new ConnectionError((e as Error).message);
    }
    const cluster = kc.getCurrentCluster();
    if (!cluster) {
        throw new ConnectionError("the kubeconfig names no current cluster");
    }
    const server = cluster.server.replace(/\/+$/, "");
    const authz = kc.makeApiClient(k8s.AuthorizationV1Api);

    const send = async (path: string, headers: Record<string, string> = {}): Promise<HttpAnswer> => {
        const options: https.RequestOptions = { headers: { Accept: "application/json", ...headers } };
        await kc.applyToHTTPSOptions(options);
        return httpGet(new URL(server + path), options, REQUEST_TIMEOUT_MS).catch((e: Error) => {
            throw new ConnectionError(`${server}: ${e.message}`);
        });
    };

    const getJson = async (path: string): Promise<KubeObject | undefined> => {
        const answer = await send(path);
        if (answer.status === 404) {
            return undefined;
        }
        if (answer.status === 401) {
            throw new ConnectionError(`${server} refused verify's credentials (401): check the kubeconfig user or the aws CLI's credentials`);
        }
        if (answer.status !== 200) {
            throw new ReadError(path, answer.status, `GET ${path}: ${answer.status} ${statusMessage(answer.body)}`);
        }
        return JSON.parse(answer.body) as KubeObject;
    };

    const decision = (status: K8s.V1SubjectAccessReviewStatus | undefined): AccessDecision => ({
        allowed: status?.allowed === true,
        ...(status?.denied !== undefined ? { denied: status.denied } : {}),
        ...(status?.reason ? { reason: status.reason } : {}),
        ...(status?.evaluationError ? { evaluationError: status.evaluationError } : {}),
    });
    const attributes = (q: ResourceQuestion): K8s.V1ResourceAttributes => ({
        verb: q.verb,
        group: q.group,
        resource: q.resource,
        ...(q.subresource ? { subresource: q.subresource } : {}),
        ...(q.namespace ? { namespace: q.namespace } : {}),
        ...(q.name ? { name: q.name } : {}),
    });
    const reviewFailed = (e: unknown): never => {
        const code = (e as { code?: number }).code;
        if (code === 401) {
            throw new ConnectionError(`${server} refused verify's credentials (401)`);
        }
        throw new ReadError("/apis/authorization.k8s.io/v1", code ?? 0, `access review failed: ${code ?? ""} ${(e as Error).message.split("\n")[0]}`);
    };

    const reader: ReadOnlyCluster = {
        server,
        get: getJson,
        async list(path, labelSelector) {
            const list = await getJson(labelSelector ? `${path}?labelSelector=${encodeURIComponent(labelSelector)}` : path);
            return list === undefined ? undefined : ((list.items as KubeObject[] | undefined) ?? []);
        },
        async review(subject, question) {
            try {
                const answer = await authz.createSubjectAccessReview({
                    body: {
                        apiVersion: "authorization.k8s.io/v1",
                        kind: "SubjectAccessReview",
                        spec: {
                            ...(subject.user ? { user: subject.user } : {}),
                            ...(subject.groups ? { groups: subject.groups } : {}),
                            resourceAttributes: attributes(question),
                        },
                    },
                });
                return decision(answer.status);
            } catch (e) {
                return reviewFailed(e);
            }
        },
        async reviewSelf(question) {
            try {
                const answer = await authz.createSelfSubjectAccessReview({
                    body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: { resourceAttributes: attributes(question) } },
                });
                return decision(answer.status);
            } catch (e) {
                return reviewFailed(e);
            }
        },
        async proxyGet(namespace, service, port, path, query, headers) {
            const qs = new URLSearchParams(query).toString();
            const target = `/api/v1/namespaces/${encodeURIComponent(namespace)}/services/${encodeURIComponent(service)}:${port}/proxy${path}${qs ? `?${qs}` : ""}`;
            return send(target, headers);
        },
    };
    // One request up front, so an unreachable cluster or refused credentials stop verify before
    // any check runs (exit 2), rather than failing every check.
    const version = await send("/version");
    if (version.status === 401 || version.status === 403) {
        throw new ConnectionError(`${server} refused verify's credentials (${version.status}): ${statusMessage(version.body)}`);
    }
    if (version.status !== 200) {
        throw new ConnectionError(`${server}/version answered ${version.status}: ${statusMessage(version.body)}`);
    }
    return reader;
}

/** The message of a Kubernetes Status body, or the start of whatever came back. */
export function statusMessage(body: string): string {
    try {
        const s = JSON.parse(body) as { message?: string };
        if (typeof s.message === "string") {
            return s.message;
        }
    } catch {
        // not JSON
    }
    return body.slice(0, 200);
}
