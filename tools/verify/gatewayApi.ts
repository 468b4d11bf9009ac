/**
 * Every HTTPRoute on a spoke's hostname and listener, for `metrics.spoke-routes` (ADR-056 D5): a Gateway merges the routes of one
 * listener and hostname (gateway-api v1.4.1 apis/v1/httproute_types.go), so another route's prefix reaches Mimir beside the hub's.
 * Not judged: the listener's allowedRoutes and ports (a route the listener would refuse is audited all the same).
 */
import { MIMIR_READ_PATHS, PROMETHEUS_API_PREFIX, PathMatch, TENANT_HEADER, pathMatches } from "../../components/mimir";
import { REMOTE_WRITE_MATCH } from "../../components/gateway/spokeRoutes";
import type { KubeObject } from "./cluster";
import { asArray, field } from "./context";

/** What a spoke may reach of Mimir through its hostname: remote write and Mimir's read endpoints. */
export const SPOKE_MIMIR_PATHS: readonly PathMatch[] = [REMOTE_WRITE_MATCH, ...MIMIR_READ_PATHS];

export type SpokeHost = { spoke: string; tenant: string; hostname: string; gateway: { namespace: string; name: string }; listener: string };

/** Whether a route names the spoke's listener in a parentRef and serves its hostname (none: the listener's). */
export function servesSpokeHost(route: KubeObject, host: SpokeHost): boolean {
    const ns = route.metadata?.namespace ?? "";
    const attached = asArray<{ kind?: string; name?: string; namespace?: string; sectionName?: string }>(field(route, "spec", "parentRefs")).some(
        (p) =>
            (p.kind ?? "Gateway") === "Gateway" &&
            p.name === host.gateway.name &&
            (p.namespace ?? ns) === host.gateway.namespace &&
            (p.sectionName ?? host.listener) === host.listener,
    );
    const hostname = host.hostname.toLowerCase();
    const hostnames = asArray<string>(field(route, "spec", "hostnames")).map((h) => h.toLowerCase());
    return attached && (hostnames.length === 0 || hostnames.some((h) => h === hostname || (h.startsWith("*.") && hostname.endsWith(h.slice(1)))));
}

const elements = (p: string): string[] => p.split("/").filter((e) => e !== "");

/** Whether every path a match admits is one of `allowed`, element by element; a RegularExpression never is. */
export function pathCovered(match: { type: string; value: string }, allowed: readonly PathMatch[]): boolean {
    if (match.type === "Exact") return allowed.some((a) => pathMatches(a, match.value));
    const inner = elements(match.value);
    return match.type === "PathPrefix" && allowed.some((a) => a.type === "PathPrefix" && elements(a.value).every((e, i) => e === inner[i]));
}

/** A path a too-wide match reaches, to name in a finding: the ruler's rule API where it can. */
export function uncoveredExample(match: { type: string; value: string }): string {
    const ruler = `${PROMETHEUS_API_PREFIX}/config/v1/rules`;
    if (match.type !== "PathPrefix") return match.type === "Exact" ? match.value : "whatever the expression admits";
    return pathMatches(match as PathMatch, ruler)
        ? `${ruler} (the ruler's rule API, which writes and deletes rule groups)`
        : `${match.value.replace(/\/+$/, "")}/... (anything below it)`;
}

/** A rule's path matches; none is `PathPrefix /`. */
export const ruleMatches = (rule: unknown): { type: string; value: string }[] => {
    const matches = asArray(field(rule, "matches")).map((m) => ({
        type: String(field(m, "path", "type") ?? "PathPrefix"),
        value: String(field(m, "path", "value") ?? "/"),
    }));
    return matches.length > 0 ? matches : [{ type: "PathPrefix", value: "/" }];
};

type Mimir = { namespace: string; gatewayService: string };
const isMimir = (ref: unknown, routeNamespace: string, mimir: Mimir): boolean =>
    (field(ref, "kind") ?? "Service") === "Service" &&
    field(ref, "name") === mimir.gatewayService &&
    (field(ref, "namespace") ?? routeNamespace) === mimir.namespace;

/** The values a filter list `set`s the tenant header to, and whether it `add`s or removes it. */
function tenantEdits(filters: unknown[]): { set: string[]; other: string[] } {
    const named = (op: string) =>
        filters.flatMap((f) =>
            asArray<{ name?: string; value?: string }>(field(f, "requestHeaderModifier", op)).filter(
                (h) => (h.name ?? "").toLowerCase() === TENANT_HEADER.toLowerCase(),
            ),
        );
    const removed = filters.some((f) =>
        asArray<string>(field(f, "requestHeaderModifier", "remove")).some((h) => h.toLowerCase() === TENANT_HEADER.toLowerCase()),
    );
    const added = named("add").map((h) => String(h.value));
    return {
        set: named("set").map((h) => String(h.value)),
        other: [...(added.length > 0 ? [`adds ${added.join(", ")}`] : []), ...(removed ? ["removes it"] : [])],
    };
}

/** How a rule reaches Mimir's gateway Service: as a backend, or as a RequestMirror target (a mirrored write still writes). */
export function mimirReaches(rule: unknown, routeNamespace: string, mimir: Mimir): { via: string; set: string[]; other: string[] }[] {
    const filters = asArray(field(rule, "filters"));
    return [
        ...asArray(field(rule, "backendRefs")).flatMap((b, i) =>
            isMimir(b, routeNamespace, mimir) ? [{ via: `backendRefs[${i}]`, ...tenantEdits([...filters, ...asArray(field(b, "filters"))]) }] : [],
        ),
        ...filters.flatMap((f, i) =>
            field(f, "type") === "RequestMirror" && isMimir(field(f, "requestMirror", "backendRef"), routeNamespace, mimir)
                ? [{ via: `filters[${i}] (RequestMirror)`, ...tenantEdits(filters.slice(0, i)) }]
                : [],
        ),
    ];
}

/** A rule to Mimir on a spoke's hostname must admit only remote write and the read endpoints, keep its path and set the tenant once. */
export function hostRouteProblems(route: KubeObject, host: SpokeHost, mimir: Mimir): string[] {
    const where = `serves ${host.hostname} (spoke ${host.spoke}) on ${host.gateway.namespace}/${host.gateway.name}/${host.listener}`;
    return asArray(field(route, "spec", "rules")).flatMap((rule, i) => {
        const reaches = mimirReaches(rule, route.metadata?.namespace ?? "", mimir);
        if (reaches.length === 0) return [];
        const matches = ruleMatches(rule);
        const name = typeof field(rule, "name") === "string" ? ` "${String(field(rule, "name"))}"` : "";
        const label = `rule ${i}${name} (${matches.map((m) => `${m.type} ${m.value}`).join(", ")}) ${where}`;
        const wide = matches.filter((m) => !pathCovered(m, SPOKE_MIMIR_PATHS)).map((m) => `${m.type} ${m.value} also reaches ${uncoveredExample(m)}`);
        const rewrites = [...asArray(field(rule, "filters")), ...asArray(field(rule, "backendRefs")).flatMap((b) => asArray(field(b, "filters")))].some(
            (f) => field(f, "type") === "URLRewrite" && field(f, "urlRewrite", "path") !== undefined,
        );
        return [
            ...(wide.length > 0
                ? [
                      `${label} and reaches Mimir's gateway Service beyond remote write and Mimir's read endpoints: ${wide.join("; ")}. Narrow it to remote write (PathPrefix /api/v1/push), or remove it: the hub's read route serves the spoke's read endpoints`,
                  ]
                : []),
            ...(rewrites
                ? [`${label} and rewrites the path before Mimir (URLRewrite), so its matches do not say which of Mimir's APIs it reaches: remove the rewrite`]
                : []),
            ...reaches
                .filter((r) => r.set.length !== 1 || r.set[0] !== host.tenant || r.other.length > 0)
                .map((r) => {
                    const did = [r.set.length > 0 ? `sets ${TENANT_HEADER} to ${r.set.join(", ")}` : `sets no ${TENANT_HEADER}`, ...r.other].join(", ");
                    return `${label} and reaches Mimir through ${r.via} but ${did}: every rule to Mimir on a spoke's hostname must set ${TENANT_HEADER}: ${host.tenant} with a RequestHeaderModifier set (never add), or another tenant's data is in reach`;
                }),
        ];
    });
}
