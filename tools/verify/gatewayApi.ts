/**
 * Which HTTPRoutes serve a spoke's hostname on the hub's ingest listener, and which of their rules
 * reach Mimir, for `metrics.spoke-routes` (ADR-056 D5, as-built W8c). A Gateway merges the rules
 * of every HTTPRoute attached to one listener for one hostname and sends each request to the most
 * specific match among them (gateway-api v1.4.1 apis/v1/httproute_types.go, `HTTPRouteRule.Matches`
 * precedence, `HTTPRouteSpec.Hostnames`): the hub's read route forces the spoke's tenant and admits
 * only Mimir's read endpoints, but another route on the same hostname with a `/prometheus` prefix
 * still reaches the ruler and every other API under it. So every attached route is audited, not
 * only the program's. The semantics are the specification's, restated here; where a field makes
 * the outcome unknowable (a RegularExpression path, a URL rewrite), the rule is reported.
 */
import { LabelSelector } from "../../components/policy/config";
import { MIMIR_READ_PATHS, PROMETHEUS_API_PREFIX, PathMatch, TENANT_HEADER, pathMatches } from "../../components/mimir";
import { REMOTE_WRITE_MATCH } from "../../components/gateway/spokeRoutes";
import type { KubeObject } from "./cluster";
import { asArray, field } from "./context";
import { selects } from "./selectors";

const GATEWAY_GROUP = "gateway.networking.k8s.io";

/** What a spoke may reach of Mimir through its hostname: remote write and Mimir's read endpoints. */
export const SPOKE_MIMIR_PATHS: readonly PathMatch[] = [REMOTE_WRITE_MATCH, ...MIMIR_READ_PATHS];

/** A Gateway listener, as the live Gateway has it (gateway-api apis/v1/gateway_types.go `Listener`). */
export interface Listener {
    name: string;
    hostname?: string;
    port?: number;
    protocol?: string;
    allowedRoutes?: {
        namespaces?: { from?: "All" | "Same" | "Selector"; selector?: LabelSelector };
        kinds?: { group?: string; kind: string }[];
    };
}

/** A Gateway listener of a live Gateway by name. */
export function liveListener(gateway: KubeObject | undefined, name: string): Listener | undefined {
    return asArray<Listener>(field(gateway, "spec", "listeners")).find((l) => l.name === name);
}

/**
 * Whether a hostname of a route or a listener matches a request's host: equal, or a wildcard
 * `*.example.com` matching any host with one or more labels before `.example.com` (not
 * `example.com` itself). DNS names compare without case (`HTTPRouteSpec.Hostnames`).
 */
export function hostnameMatches(pattern: string, host: string): boolean {
    const p = pattern.toLowerCase();
    const h = host.toLowerCase();
    if (p.startsWith("*.")) {
        // `.example.com`: at least one label before it, by the dot.
        return h.endsWith(p.slice(1));
    }
    return p === h;
}

/**
 * Whether a route attached to a listener serves requests for `host`: the listener's hostname, when
 * it has one, must match it, and so must one of the route's hostnames; a route without hostnames
 * takes the listener's (`HTTPRouteSpec.Hostnames`: route hostnames that do not match the
 * listener's are ignored).
 */
export function routeServesHost(routeHostnames: readonly string[], listenerHostname: string | undefined, host: string): boolean {
    if (listenerHostname && !hostnameMatches(listenerHostname, host)) {
        return false;
    }
    return routeHostnames.length === 0 || routeHostnames.some((h) => hostnameMatches(h, host));
}

export interface ParentRef {
    group?: string;
    kind?: string;
    namespace?: string;
    name?: string;
    sectionName?: string;
    port?: number;
}

/**
 * Whether a parentRef names a listener: group and kind default to the Gateway's, the namespace to
 * the route's; without `sectionName` it names every listener of the Gateway, and a `port` narrows
 * to listeners on that port (gateway-api apis/v1/shared_types.go `ParentReference`).
 */
export function refersToListener(
    ref: ParentRef,
    routeNamespace: string,
    gateway: { namespace: string; name: string },
    listener: Pick<Listener, "name" | "port">,
): boolean {
    return (
        (ref.group ?? GATEWAY_GROUP) === GATEWAY_GROUP &&
        (ref.kind ?? "Gateway") === "Gateway" &&
        (ref.namespace ?? routeNamespace) === gateway.namespace &&
        ref.name === gateway.name &&
        (ref.sectionName === undefined || ref.sectionName === listener.name) &&
        (ref.port === undefined || ref.port === listener.port)
    );
}

/**
 * Whether a listener lets an HTTPRoute of `routeNamespace` attach (apis/v1/gateway_types.go
 * `AllowedRoutes`): namespaces `Same` by default, `All`, or those its selector selects; kinds as
 * listed, or by the listener's protocol (HTTP and HTTPS carry HTTPRoutes).
 */
export function listenerAdmits(
    listener: Listener,
    routeNamespace: string,
    gatewayNamespace: string,
    namespaceLabels: (ns: string) => Record<string, string> | undefined,
): boolean {
    const kinds = listener.allowedRoutes?.kinds ?? [];
    const kindOk =
        kinds.length === 0
            ? ["HTTP", "HTTPS", undefined].includes(listener.protocol)
            : kinds.some((k) => (k.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && k.kind === "HTTPRoute");
    if (!kindOk) {
        return false;
    }
    const from = listener.allowedRoutes?.namespaces?.from ?? "Same";
    if (from === "All") {
        return true;
    }
    if (from === "Same") {
        return routeNamespace === gatewayNamespace;
    }
    const selector = listener.allowedRoutes?.namespaces?.selector;
    const labels = namespaceLabels(routeNamespace);
    // Without the namespace's labels, assume it is selected: an audit must not miss a route.
    return selector !== undefined && (labels === undefined || selects(selector, labels));
}

/** Path elements, a trailing `/` ignored (`PathMatchPathPrefix`). */
const elements = (p: string): string[] => p.split("/").filter((e) => e !== "");

/**
 * Whether every path a route's path match admits is one of `allowed`: an `Exact` path one of them
 * admits, a `PathPrefix` inside an allowed `PathPrefix` (element by element). A RegularExpression
 * is never covered: what it admits is implementation-specific.
 */
export function pathCovered(match: PathMatch | { type: "RegularExpression"; value: string }, allowed: readonly PathMatch[]): boolean {
    if (match.type === "Exact") {
        return allowed.some((a) => pathMatches(a, match.value));
    }
    if (match.type === "PathPrefix") {
        const inner = elements(match.value);
        return allowed.some((a) => a.type === "PathPrefix" && elements(a.value).every((e, i) => e === inner[i]));
    }
    return false;
}

/** Mimir paths a too-wide match reaches that matter, for the message. */
const MIMIR_EXAMPLES: readonly { path: string; what: string }[] = [
    { path: `${PROMETHEUS_API_PREFIX}/config/v1/rules`, what: "the ruler's rule API, which writes and deletes rule groups" },
    { path: `${PROMETHEUS_API_PREFIX}/api/v1/read`, what: "remote read" },
];

/** A path the match admits beyond `allowed`, to name in a finding. */
export function uncoveredExample(match: { type: string; value: string }, allowed: readonly PathMatch[]): string {
    if (match.type === "Exact") {
        return match.value;
    }
    if (match.type === "PathPrefix") {
        const m = match as PathMatch;
        const known = MIMIR_EXAMPLES.find((x) => pathMatches(m, x.path) && !allowed.some((a) => pathMatches(a, x.path)));
        return known ? `${known.path} (${known.what})` : `${match.value.replace(/\/+$/, "")}/... (anything below it)`;
    }
    return "whatever the expression admits";
}

/** A rule's path matches; none is `PathPrefix /` (every request), the API server's default. */
export function ruleMatches(rule: unknown): { type: string; value: string }[] {
    const matches = asArray(field(rule, "matches"));
    if (matches.length === 0) {
        return [{ type: "PathPrefix", value: "/" }];
    }
    return matches.map((m) => ({ type: String(field(m, "path", "type") ?? "PathPrefix"), value: String(field(m, "path", "value") ?? "/") }));
}

const isMimir = (ref: unknown, routeNamespace: string, mimir: { namespace: string; gatewayService: string }): boolean =>
    (field(ref, "group") ?? "") === "" &&
    (field(ref, "kind") ?? "Service") === "Service" &&
    field(ref, "name") === mimir.gatewayService &&
    (field(ref, "namespace") ?? routeNamespace) === mimir.namespace;

/** The header modifications a filter list makes to the tenant header: values `set`, and whether it `add`s or removes it. */
function tenantEdits(filters: unknown[]): { set: string[]; add: string[]; remove: boolean } {
    const out = { set: [] as string[], add: [] as string[], remove: false };
    for (const f of filters.filter((x) => field(x, "type") === "RequestHeaderModifier")) {
        const named = (op: string) =>
            asArray<{ name?: string; value?: string }>(field(f, "requestHeaderModifier", op)).filter(
                (h) => (h.name ?? "").toLowerCase() === TENANT_HEADER.toLowerCase(),
            );
        out.set.push(...named("set").map((h) => String(h.value)));
        out.add.push(...named("add").map((h) => String(h.value)));
        out.remove ||= asArray<string>(field(f, "requestHeaderModifier", "remove")).some((h) => h.toLowerCase() === TENANT_HEADER.toLowerCase());
    }
    return out;
}

/**
 * How a rule reaches Mimir's gateway Service: as a backend (with the rule's filters and the
 * backend's own, which apply after them) or as the target of a RequestMirror filter (the mirrored
 * request carries the rule's header changes made before it; its answer is dropped, but a mirrored
 * write still writes). Empty when the rule does not reach Mimir.
 */
export function mimirReaches(
    rule: unknown,
    routeNamespace: string,
    mimir: { namespace: string; gatewayService: string },
): { via: string; set: string[]; add: string[]; remove: boolean }[] {
    const ruleFilters = asArray(field(rule, "filters"));
    const out: { via: string; set: string[]; add: string[]; remove: boolean }[] = [];
    asArray(field(rule, "backendRefs")).forEach((b, i) => {
        if (isMimir(b, routeNamespace, mimir)) {
            const edits = tenantEdits([...ruleFilters, ...asArray(field(b, "filters"))]);
            out.push({ via: `backendRefs[${i}]`, ...edits });
        }
    });
    ruleFilters.forEach((f, i) => {
        if (field(f, "type") === "RequestMirror" && isMimir(field(f, "requestMirror", "backendRef"), routeNamespace, mimir)) {
            out.push({ via: `filters[${i}] (RequestMirror)`, ...tenantEdits(ruleFilters.slice(0, i)) });
        }
    });
    return out;
}

/** Whether a rule rewrites the path before forwarding: then its matches say nothing of the path Mimir sees. */
const rewritesPath = (rule: unknown): boolean =>
    [...asArray(field(rule, "filters")), ...asArray(field(rule, "backendRefs")).flatMap((b) => asArray(field(b, "filters")))].some(
        (f) => field(f, "type") === "URLRewrite" && field(f, "urlRewrite", "path") !== undefined,
    );

export interface SpokeHost {
    spoke: string;
    tenant: string;
    hostname: string;
    gateway: { namespace: string; name: string };
    listener: string;
}

/**
 * What is wrong with one route's rules for a spoke's hostname, as findings: each rule that reaches
 * Mimir must admit only remote write and Mimir's read endpoints, must not rewrite the path, and
 * must `set` the spoke's tenant (never `add` or remove it). The caller has established that the
 * route is attached to the spoke's listener and serves its hostname.
 */
export function hostRouteProblems(
    route: KubeObject,
    host: SpokeHost,
    mimir: { namespace: string; gatewayService: string },
    allowed: readonly PathMatch[] = SPOKE_MIMIR_PATHS,
): string[] {
    const ns = route.metadata?.namespace ?? "";
    const where = `serves ${host.hostname} (spoke ${host.spoke}) on ${host.gateway.namespace}/${host.gateway.name}/${host.listener}`;
    const out: string[] = [];
    asArray(field(route, "spec", "rules")).forEach((rule, i) => {
        const reaches = mimirReaches(rule, ns, mimir);
        if (reaches.length === 0) {
            return;
        }
        const matches = ruleMatches(rule);
        const name = typeof field(rule, "name") === "string" ? ` "${String(field(rule, "name"))}"` : "";
        const label = `rule ${i}${name} (${matches.map((m) => `${m.type} ${m.value}`).join(", ")})`;
        const wide = matches.filter((m) => !pathCovered(m as PathMatch, allowed));
        if (wide.length > 0) {
            out.push(
                `${label} ${where} and reaches Mimir's gateway Service beyond remote write and Mimir's read endpoints: ${wide.map((m) => `${m.type} ${m.value} also reaches ${uncoveredExample(m, allowed)}`).join("; ")}. ` +
                    `Narrow it to remote write (PathPrefix /api/v1/push), or remove it: the hub's read route serves the spoke's read endpoints`,
            );
        }
        if (rewritesPath(rule)) {
            out.push(
                `${label} ${where} and rewrites the path before Mimir (URLRewrite), so its matches do not say which of Mimir's APIs it reaches: remove the rewrite`,
            );
        }
        for (const r of reaches) {
            if (r.set.length !== 1 || r.set[0] !== host.tenant || r.add.length > 0 || r.remove) {
                const did = [
                    r.set.length > 0 ? `sets ${TENANT_HEADER} to ${r.set.join(", ")}` : `sets no ${TENANT_HEADER}`,
                    ...(r.add.length > 0 ? [`adds ${r.add.join(", ")}`] : []),
                    ...(r.remove ? ["removes it"] : []),
                ].join(", ");
                out.push(
                    `${label} ${where} and reaches Mimir through ${r.via} but ${did}: every rule to Mimir on a spoke's hostname must set ${TENANT_HEADER}: ${host.tenant} with a RequestHeaderModifier set (never add), or another tenant's data is in reach`,
                );
            }
        }
    });
    return out;
}

/**
 * Whether a live route is attached to a spoke's listener and serves its hostname: one of its
 * parentRefs names the listener, the listener admits the route, and the hostnames intersect.
 * Attachment is judged from the objects, not from the route's status: a route a Gateway has not
 * (yet) accepted is still a route that would serve the hostname.
 */
export function servesSpokeHost(
    route: KubeObject,
    host: SpokeHost,
    listener: Listener,
    namespaceLabels: (ns: string) => Record<string, string> | undefined,
): boolean {
    const ns = route.metadata?.namespace ?? "";
    const attached = asArray<ParentRef>(field(route, "spec", "parentRefs")).some((p) => refersToListener(p, ns, host.gateway, listener));
    return (
        attached &&
        listenerAdmits(listener, ns, host.gateway.namespace, namespaceLabels) &&
        routeServesHost(asArray<string>(field(route, "spec", "hostnames")), listener.hostname, host.hostname)
    );
}
