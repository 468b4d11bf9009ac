import { MimirConfig, SpokeConfig } from "../config";
import { PROMETHEUS_API_PREFIX, REMOTE_WRITE_PATH, TENANT_HEADER } from "../mimir";

/**
 * The hub's spoke-ingest HTTPRoutes (ADR-056 D5, as-built W8c): remote write for every spoke and,
 * opt-in, the Prometheus API so a spoke's metric gates can read its own metrics back.
 */

export interface HttpRouteRule {
    matches: { path: { type: "PathPrefix"; value: string } }[];
    filters: { type: "RequestHeaderModifier"; requestHeaderModifier: { set: { name: string; value: string }[] } }[];
    backendRefs: { group: ""; kind: "Service"; name: string; namespace?: string; port: number; weight: number }[];
}

export interface HttpRouteSpec {
    parentRefs: { group: "gateway.networking.k8s.io"; kind: "Gateway"; name: string; namespace: string; sectionName: string }[];
    hostnames: string[];
    rules: HttpRouteRule[];
}

export function spokeRouteName(spoke: Pick<SpokeConfig, "name">): string {
    return `mimir-spoke-${spoke.name}`;
}

/**
 * One rule to the Mimir gateway. The tenant header is `set`, never `add`: Gateway API
 * conformance makes `set` overwrite whatever the client sent, while `add` appends and would let a
 * spoke name another tenant (or several, `a|b`, with tenant federation on). Defaults are spelled
 * out (`group: ""`, `kind`, `weight`) because Cilium wants `group: ""` on Service backends and
 * ArgoCD shows server-filled defaults as drift.
 */
export function tenantRule(prefix: string, tenant: string, mimir: MimirConfig): HttpRouteRule {
    const crossNamespace = mimir.spokeRouteNamespace !== mimir.namespace;
    return {
        matches: [{ path: { type: "PathPrefix", value: prefix } }],
        filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: TENANT_HEADER, value: tenant }] } }],
        backendRefs: [
            {
                group: "",
                kind: "Service",
                name: mimir.gatewayService,
                ...(crossNamespace ? { namespace: mimir.namespace } : {}),
                port: mimir.gatewayServicePort,
                weight: 1,
            },
        ],
    };
}

/**
 * A spoke's route: it matches only that spoke's hostname (and listener, where spokes have their
 * own), so one spoke cannot ride another's route, and every rule forces that spoke's tenant.
 */
export function spokeRouteSpec(spoke: SpokeConfig, mimir: MimirConfig): HttpRouteSpec {
    const gw = mimir.ingestGateway;
    return {
        parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: gw.name, namespace: gw.namespace, sectionName: spoke.listener ?? gw.listener }],
        hostnames: [spoke.hostname],
        rules: [tenantRule(REMOTE_WRITE_PATH, spoke.tenant, mimir), ...(spoke.query ? [tenantRule(PROMETHEUS_API_PREFIX, spoke.tenant, mimir)] : [])],
    };
}

/**
 * The ReferenceGrant a route in another namespace needs to reach the Mimir gateway Service, or
 * undefined when routes live beside Mimir.
 */
export function mimirReferenceGrantSpec(mimir: MimirConfig): Record<string, unknown> | undefined {
    if (mimir.spokeRouteNamespace === mimir.namespace) {
        return undefined;
    }
    return {
        from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: mimir.spokeRouteNamespace }],
        to: [{ group: "", kind: "Service", name: mimir.gatewayService }],
    };
}

/** The URL a spoke's analysis reads its own metrics from; only spokes with `query` have one. */
export function spokeReadEndpoint(spoke: SpokeConfig, mimir: Pick<MimirConfig, "readScheme">): string | undefined {
    return spoke.query ? `${mimir.readScheme}://${spoke.hostname}${PROMETHEUS_API_PREFIX}` : undefined;
}

/** Every listener a hub's spokes attach to on the ingest Gateway. */
export function ingestListeners(spokes: SpokeConfig[], mimir: MimirConfig): string[] {
    return [...new Set([mimir.ingestGateway.listener, ...spokes.map((s) => s.listener ?? mimir.ingestGateway.listener)])];
}
