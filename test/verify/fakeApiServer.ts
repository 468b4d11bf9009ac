/**
 * A local HTTP server on 127.0.0.1 that answers like the Kubernetes API server for the requests
 * verify makes: GETs of objects and collections (equality label selectors), the service proxy, and
 * access reviews. Any other request is refused and recorded, so a test fails if verify ever writes.
 */
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import type { KubeObject } from "../../tools/verify/cluster";

export interface ReviewSpec {
    user?: string;
    groups?: string[];
    resourceAttributes?: { verb?: string; group?: string; resource?: string; subresource?: string; namespace?: string; name?: string };
}

export interface FakeWorld {
    objects: KubeObject[];
    /** SubjectAccessReview: the decision for a subject; default deny. */
    authorize?: (spec: ReviewSpec) => { allowed: boolean; reason?: string };
    /** SelfSubjectAccessReview: verify's own permissions; default allow. */
    authorizeSelf?: (attrs: NonNullable<ReviewSpec["resourceAttributes"]>) => { allowed: boolean; reason?: string };
    proxy?: (req: { namespace: string; service: string; port: string; path: string; query: URLSearchParams; headers: http.IncomingHttpHeaders }) => {
        status: number;
        body: string;
    };
}

export interface FakeApiServer {
    kubeconfig: string;
    /** Every request, as `METHOD path`. */
    requests: string[];
    /** Requests that would have changed the cluster. */
    violations: string[];
    close(): Promise<void>;
}

export function objectPath(o: KubeObject): string {
    const kind = (o.kind ?? "").toLowerCase();
    // A consonant before the y: policy -> policies; a vowel: gateway -> gateways; ingress -> ingresses.
    const plural = /[^aeiou]y$/.test(kind) ? `${kind.slice(0, -1)}ies` : /s$/.test(kind) ? `${kind}es` : `${kind}s`;
    const ns = o.metadata?.namespace ? `/namespaces/${o.metadata.namespace}` : "";
    return `${o.apiVersion === "v1" ? "/api/v1" : `/apis/${o.apiVersion}`}${ns}/${plural}/${o.metadata?.name}`;
}

/** The collections an object is listed in: its namespace's and every namespace's. */
function collectionsOf(o: KubeObject): string[] {
    const p = objectPath(o);
    const collection = p.slice(0, p.lastIndexOf("/"));
    return [collection, collection.replace(/\/namespaces\/[^/]+/, "")];
}

const status = (code: number, message: string) => JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", message, code });

export async function startFakeApiServer(world: FakeWorld): Promise<FakeApiServer> {
    const requests: string[] = [];
    const violations: string[] = [];
    const server = http.createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://127.0.0.1");
        // The API server takes a percent-encoded path as the decoded one (a ClusterRole named with ":").
        const pathname = decodeURIComponent(url.pathname);
        const method = req.method ?? "GET";
        requests.push(`${method} ${pathname}${url.search}`);
        const send = (code: number, body: string) => res.writeHead(code, { "Content-Type": "application/json" }).end(body);
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
            const review = /^\/apis\/authorization\.k8s\.io\/v1\/(self)?subjectaccessreviews$/.exec(pathname);
            if (method === "POST" && review) {
                const spec = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { spec?: ReviewSpec }).spec ?? {};
                const decision = review[1]
                    ? (world.authorizeSelf ?? (() => ({ allowed: true })))(spec.resourceAttributes ?? {})
                    : (world.authorize ?? (() => ({ allowed: false })))(spec);
                const kind = review[1] ? "SelfSubjectAccessReview" : "SubjectAccessReview";
                return send(201, JSON.stringify({ kind, apiVersion: "authorization.k8s.io/v1", spec, status: decision }));
            }
            if (method !== "GET") {
                violations.push(`${method} ${pathname}`);
                return send(405, status(405, "the fake API server refuses writes: verify must be read-only"));
            }
            if (pathname === "/version") return send(200, JSON.stringify({ major: "1", minor: "33", gitVersion: "v1.33.4-eks-fake" }));
            const proxy = /^\/api\/v1\/namespaces\/([^/]+)\/services\/([^/:]+):([^/]+)\/proxy(\/.*)$/.exec(pathname);
            if (proxy) {
                const [, namespace, service, port, p] = proxy;
                const answer = world.proxy?.({ namespace, service, port, path: p, query: url.searchParams, headers: req.headers }) ?? {
                    status: 503,
                    body: "no endpoints",
                };
                return send(answer.status, answer.body);
            }
            const exact = world.objects.find((o) => objectPath(o) === pathname);
            if (exact) return send(200, JSON.stringify(exact));
            // A collection ends in a plural resource right after the version or a namespace (`/apis/g/v/r`, `/api/v1/namespaces/n/r`).
            const parts = pathname.split("/").filter(Boolean);
            const rest = parts.slice(parts[0] === "api" ? 2 : 3);
            const collection = (rest[0] === "namespaces" && rest.length > 1 ? rest.slice(2) : rest).length === 1;
            const selector = (url.searchParams.get("labelSelector") ?? "").split(",").filter(Boolean);
            const labelled = (o: KubeObject, [k, v]: string[]) => (v === undefined ? k in (o.metadata?.labels ?? {}) : o.metadata?.labels?.[k] === v);
            const items = world.objects.filter((o) => collectionsOf(o).includes(pathname) && selector.every((term) => labelled(o, term.split("="))));
            return collection
                ? send(200, JSON.stringify({ kind: "List", apiVersion: "v1", metadata: { resourceVersion: "1" }, items }))
                : send(404, status(404, `${pathname} not found`));
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verify-kubeconfig-"));
    const kubeconfig = path.join(dir, "config");
    const cluster = { server: `http://127.0.0.1:${(server.address() as { port: number }).port}`, "insecure-skip-tls-verify": true };
    fs.writeFileSync(
        kubeconfig,
        JSON.stringify({
            apiVersion: "v1",
            kind: "Config",
            clusters: [{ name: "fake", cluster }],
            users: [{ name: "fake", user: { token: "fake-token" } }],
            contexts: [{ name: "fake", context: { cluster: "fake", user: "fake" } }],
            "current-context": "fake",
        }),
    );
    return {
        kubeconfig,
        requests,
        violations,
        close: () =>
            new Promise<void>((resolve) => {
                server.closeAllConnections();
                server.close(() => resolve());
                fs.rmSync(dir, { recursive: true, force: true });
            }),
    };
}
