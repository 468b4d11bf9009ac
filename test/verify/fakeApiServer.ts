/**
 * A local HTTP server on 127.0.0.1 that answers like the Kubernetes API server for the requests
 * verify makes: GET of objects and collections (with equality label selectors), the service
 * proxy, and SubjectAccessReview / SelfSubjectAccessReview creation. Any other write is recorded
 * as a violation and refused, so a test fails if verify ever writes.
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
    /** Answers of the service proxy. */
    proxy?: (req: { namespace: string; service: string; port: string; path: string; query: URLSearchParams; headers: http.IncomingHttpHeaders }) => {
        status: number;
        body: string;
    };
    /** Collections that are not served (404), e.g. a CRD that is not installed. */
    notServed?: string[];
}

export interface FakeApiServer {
    url: string;
    kubeconfig: string;
    /** Every request, as `METHOD path`. */
    requests: string[];
    /** Requests that would have changed the cluster. */
    violations: string[];
    world: FakeWorld;
    close(): Promise<void>;
}

const REVIEWS = new Set(["/apis/authorization.k8s.io/v1/subjectaccessreviews", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]);

export function plural(kind: string): string {
    const lower = kind.toLowerCase();
    // A consonant before the y: policy -> policies; a vowel: gateway -> gateways.
    return /[^aeiou]y$/.test(lower) ? `${lower.slice(0, -1)}ies` : `${lower}s`;
}

export function objectPath(o: KubeObject): string {
    const base = o.apiVersion === "v1" ? "/api/v1" : `/apis/${o.apiVersion}`;
    const ns = o.metadata?.namespace ? `/namespaces/${o.metadata.namespace}` : "";
    return `${base}${ns}/${plural(o.kind ?? "")}/${o.metadata?.name}`;
}

function matchesSelector(o: KubeObject, selector: string | null): boolean {
    if (!selector) {
        return true;
    }
    const labels = o.metadata?.labels ?? {};
    return selector.split(",").every((term) => {
        const [k, v] = term.split("=");
        return v === undefined ? k in labels : labels[k] === v;
    });
}

/** Collections an object belongs to: its namespace's and the all-namespaces one. */
function collectionsOf(o: KubeObject): string[] {
    const p = objectPath(o);
    const collection = p.slice(0, p.lastIndexOf("/"));
    const all = collection.replace(/\/namespaces\/[^/]+/, "");
    return collection === all ? [collection] : [collection, all];
}

const status = (code: number, message: string) =>
    JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason: code === 404 ? "NotFound" : "Forbidden", code });

export async function startFakeApiServer(world: FakeWorld): Promise<FakeApiServer> {
    const requests: string[] = [];
    const violations: string[] = [];
    const server = http.createServer((req, res) => {
        const parsed = new URL(req.url ?? "/", "http://127.0.0.1");
        // The API server takes a percent-encoded path as the decoded one (a ClusterRole named with ":").
        const url = { pathname: decodeURIComponent(parsed.pathname), search: parsed.search, searchParams: parsed.searchParams };
        const method = req.method ?? "GET";
        requests.push(`${method} ${url.pathname}${url.search}`);
        const send = (code: number, body: string) => {
            res.writeHead(code, { "Content-Type": "application/json" });
            res.end(body);
        };
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
            if (method === "POST" && REVIEWS.has(url.pathname)) {
                const review = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { spec?: ReviewSpec };
                const spec = review.spec ?? {};
                const self = url.pathname.endsWith("selfsubjectaccessreviews");
                const decision = self
                    ? (world.authorizeSelf ?? (() => ({ allowed: true })))(spec.resourceAttributes ?? {})
                    : (world.authorize ?? (() => ({ allowed: false })))(spec);
                send(
                    201,
                    JSON.stringify({
                        kind: self ? "SelfSubjectAccessReview" : "SubjectAccessReview",
                        apiVersion: "authorization.k8s.io/v1",
                        metadata: {},
                        spec,
                        status: decision,
                    }),
                );
                return;
            }
            if (method !== "GET") {
                violations.push(`${method} ${url.pathname}`);
                send(405, status(405, "the fake API server refuses writes: verify must be read-only"));
                return;
            }
            if (url.pathname === "/version") {
                send(200, JSON.stringify({ major: "1", minor: "33", gitVersion: "v1.33.4-eks-fake" }));
                return;
            }
            const proxy = /^\/api\/v1\/namespaces\/([^/]+)\/services\/([^/:]+):([^/]+)\/proxy(\/.*)$/.exec(url.pathname);
            if (proxy) {
                const answer = world.proxy
                    ? world.proxy({ namespace: proxy[1], service: proxy[2], port: proxy[3], path: proxy[4], query: url.searchParams, headers: req.headers })
                    : { status: 503, body: "no endpoints" };
                send(answer.status, answer.body);
                return;
            }
            const exact = world.objects.find((o) => objectPath(o) === url.pathname);
            if (exact) {
                send(200, JSON.stringify(exact));
                return;
            }
            if (world.notServed?.includes(url.pathname)) {
                send(404, status(404, `the server could not find the requested resource`));
                return;
            }
            const items = world.objects.filter((o) => collectionsOf(o).includes(url.pathname) && matchesSelector(o, url.searchParams.get("labelSelector")));
            const isCollection =
                world.objects.some((o) => collectionsOf(o).includes(url.pathname)) ||
                (/\/(namespaces\/[^/]+\/)?[a-z]+$/.test(url.pathname) && !looksLikeObject(url.pathname));
            if (items.length > 0 || isCollection) {
                send(200, JSON.stringify({ kind: "List", apiVersion: "v1", metadata: { resourceVersion: "1" }, items }));
                return;
            }
            send(404, status(404, `${url.pathname} not found`));
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const url = `http://127.0.0.1:${port}`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verify-kubeconfig-"));
    const kubeconfig = path.join(dir, "config");
    fs.writeFileSync(
        kubeconfig,
        JSON.stringify({
            apiVersion: "v1",
            kind: "Config",
            clusters: [{ name: "fake", cluster: { server: url, "insecure-skip-tls-verify": true } }],
            users: [{ name: "fake", user: { token: "fake-token" } }],
            contexts: [{ name: "fake", context: { cluster: "fake", user: "fake" } }],
            "current-context": "fake",
        }),
    );
    return {
        url,
        kubeconfig,
        requests,
        violations,
        world,
        close: () =>
            new Promise<void>((resolve) => {
                server.closeAllConnections();
                server.close(() => resolve());
                fs.rmSync(dir, { recursive: true, force: true });
            }),
    };
}

/**
 * Whether a path names one object rather than a collection: collections end in a plural resource
 * directly after the version or a namespace (`/apis/g/v/r`, `/apis/g/v/namespaces/n/r`, `/api/v1/r`).
 */
function looksLikeObject(p: string): boolean {
    const parts = p.split("/").filter(Boolean);
    const afterVersion = parts[0] === "api" ? parts.slice(2) : parts.slice(3);
    const rest = afterVersion[0] === "namespaces" ? afterVersion.slice(2) : afterVersion;
    return rest.length !== 1;
}
