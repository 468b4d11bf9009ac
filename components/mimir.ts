// Mimir facts shared by the stages: Mimir serves remote write at /api/v1/push and the Prometheus API under /prometheus.

/** The hub runs Mimir; a spoke writes to it and reads its own metrics back through the route the hub declares for it (ADR-056 D5). */
export type MimirRole = "hub" | "spoke";

export const TENANT_HEADER = "X-Scope-OrgID";
export const REMOTE_WRITE_PATH = "/api/v1/push";
export const PROMETHEUS_API_PREFIX = "/prometheus";

/** A Gateway API path match: `Exact` is the whole path, `PathPrefix` matches whole path elements. */
export interface PathMatch {
    type: "Exact" | "PathPrefix";
    value: string;
}

/**
 * The Prometheus read endpoints of Mimir a spoke's metric gates may reach, and nothing else under
 * `/prometheus`: the ruler's write API (`POST`/`DELETE <prefix>/config/v1/rules/...`), remote read,
 * cardinality and admin endpoints stay out of reach (Mimir HTTP API reference,
 * grafana/mimir docs/sources/mimir/references/http-api/index.md). Query, range query, series,
 * label names and metadata are whole paths (`Exact`, so `/query` does not also match
 * `/query_exemplars`); label values is `<prefix>/api/v1/label/{name}/values`, the only endpoint
 * under `label/`, so a `PathPrefix` on that element (Gateway API matches prefixes element by
 * element: it does not match `labels`; gateway-api apis/v1/httproute_types.go, PathMatchPathPrefix).
 */
export const MIMIR_READ_PATHS: readonly PathMatch[] = [
    { type: "Exact", value: `${PROMETHEUS_API_PREFIX}/api/v1/query` },
    { type: "Exact", value: `${PROMETHEUS_API_PREFIX}/api/v1/query_range` },
    { type: "Exact", value: `${PROMETHEUS_API_PREFIX}/api/v1/series` },
    { type: "Exact", value: `${PROMETHEUS_API_PREFIX}/api/v1/labels` },
    { type: "PathPrefix", value: `${PROMETHEUS_API_PREFIX}/api/v1/label` },
    { type: "Exact", value: `${PROMETHEUS_API_PREFIX}/api/v1/metadata` },
];

/** Whether a Gateway API path match admits a request path (gateway-api apis/v1/httproute_types.go, PathMatchType). */
export function pathMatches(match: PathMatch, path: string): boolean {
    if (match.type === "Exact") return path === match.value;
    const elements = (p: string) => p.split("/").filter((e) => e !== "");
    const prefix = elements(match.value);
    const actual = elements(path);
    return prefix.length <= actual.length && prefix.every((e, i) => e === actual[i]);
}

/** The in-cluster address of the hub's Mimir Prometheus API (the provider appends /api/v1/query). */
export function inClusterMimirAddress(mimir: { gatewayService: string; namespace: string; gatewayServicePort: number }): string {
    return `http://${mimir.gatewayService}.${mimir.namespace}.svc:${mimir.gatewayServicePort}${PROMETHEUS_API_PREFIX}`;
}
