/**
 * Mimir facts shared by the stages: the tenant header and the Prometheus API prefix
 * (Mimir serves remote write at /api/v1/push and the Prometheus API under /prometheus).
 */
export const TENANT_HEADER = "X-Scope-OrgID";
export const REMOTE_WRITE_PATH = "/api/v1/push";
export const PROMETHEUS_API_PREFIX = "/prometheus";

/** The in-cluster address of the hub's Mimir Prometheus API (the provider appends /api/v1/query). */
export function inClusterMimirAddress(mimir: { gatewayService: string; namespace: string; gatewayServicePort: number }): string {
    return `http://${mimir.gatewayService}.${mimir.namespace}.svc:${mimir.gatewayServicePort}${PROMETHEUS_API_PREFIX}`;
}
