import { MIMIR_READ_PATHS, PROMETHEUS_API_PREFIX, PathMatch, REMOTE_WRITE_PATH, TENANT_HEADER } from "../mimir";
import { MimirConfig, SharedGatewayConfig, SpokeConfig } from "./config";

/**
 * The hub's spoke routes (ADR-056 D5, as-built W8c): remote write for every spoke and, opt-in, Mimir's
 * Prometheus read endpoints so a spoke's gates can read its own metrics back. Where the observability
 * module owns a spoke's ingest route, only the read route is declared, on the same hostname and
 * listener: Gateway API merges the rules of every route of one listener and hostname, and an `Exact`
 * match outranks any prefix (gateway-api apis/v1/httproute_types.go, HTTPRouteSpec.rules precedence).
 */

export interface HttpRouteRule {
    matches: { path: PathMatch }[];
    filters: { type: "RequestHeaderModifier"; requestHeaderModifier: { set: { name: string; value: string }[] } }[];
    backendRefs: { group: ""; kind: "Service"; name: string; namespace?: string; port: number; weight: number }[];
}

export interface HttpRouteSpec {
    parentRefs: { group: "gateway.networking.k8s.io"; kind: "Gateway"; name: string; namespace: string; sectionName: string }[];
    hostnames: string[];
    rules: HttpRouteRule[];
}

/** One HTTPRoute the hub declares for a spoke: `ingest` (remote write, and reads when it queries) or `read` alone. */
export interface SpokeRoute {
    name: string;
    purpose: "ingest" | "read";
    spec: HttpRouteSpec;
}

/**
 * One rule to the Mimir gateway. The tenant header is `set`, never `add`, which appends and would let
 * a spoke name another tenant (or several, `a|b`). Defaults are spelled out (`group: ""`, `kind`,
 * `weight`): Cilium wants `group: ""` on Service backends, and ArgoCD shows server-filled defaults as drift.
 */
function tenantRule(paths: readonly PathMatch[], tenant: string, mimir: MimirConfig): HttpRouteRule {
    const crossNamespace = mimir.spokeRouteNamespace !== mimir.namespace;
    return {
        matches: paths.map((path) => ({ path: { ...path } })),
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

/** Mimir's remote-write path, the one path of a spoke's push rule. */
export const REMOTE_WRITE_MATCH: PathMatch = { type: "PathPrefix", value: REMOTE_WRITE_PATH };

/** Mimir's read endpoints only (see MIMIR_READ_PATHS), in the spoke's own tenant. */
export function readRule(tenant: string, mimir: MimirConfig): HttpRouteRule {
    return tenantRule(MIMIR_READ_PATHS, tenant, mimir);
}

/** A spoke's route: only that spoke's hostname (and listener, where spokes have their own), so one spoke cannot ride another's. */
function routeSpec(spoke: Pick<SpokeConfig, "hostname" | "listener">, mimir: MimirConfig, rules: HttpRouteRule[]): HttpRouteSpec {
    const gw = mimir.ingestGateway;
    return {
        parentRefs: [
            { group: "gateway.networking.k8s.io", kind: "Gateway", name: gw.name, namespace: gw.namespace, sectionName: spoke.listener ?? gw.listener },
        ],
        hostnames: [spoke.hostname],
        rules,
    };
}

/** The ingest route of a spoke whose push route the program owns: every rule forces that spoke's tenant. */
export function spokeRouteSpec(spoke: Omit<SpokeConfig, "pushRouteOwner">, mimir: MimirConfig): HttpRouteSpec {
    return routeSpec(spoke, mimir, [tenantRule([REMOTE_WRITE_MATCH], spoke.tenant, mimir), ...(spoke.query ? [readRule(spoke.tenant, mimir)] : [])]);
}

/** The routes the hub declares for one spoke: its ingest route, or the read route alone beside the observability module's, or none. */
export function spokeRoutes(spoke: SpokeConfig, mimir: MimirConfig): SpokeRoute[] {
    if (spoke.pushRouteOwner === "addon") return [{ name: `mimir-spoke-${spoke.name}`, purpose: "ingest", spec: spokeRouteSpec(spoke, mimir) }];
    return spoke.query ? [{ name: `mimir-spoke-${spoke.name}-read`, purpose: "read", spec: routeSpec(spoke, mimir, [readRule(spoke.tenant, mimir)]) }] : [];
}

/** The ReferenceGrant routes in another namespace need to reach the Mimir gateway Service; undefined beside Mimir. */
export function mimirReferenceGrantSpec(mimir: MimirConfig): Record<string, unknown> | undefined {
    if (mimir.spokeRouteNamespace === mimir.namespace) return undefined;
    return {
        from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: mimir.spokeRouteNamespace }],
        to: [{ group: "", kind: "Service", name: mimir.gatewayService }],
    };
}

/** The URL a spoke's analysis reads its own metrics from (`query` only); the provider appends `/api/v1/query`, which the read rule matches exactly. */
export function spokeReadEndpoint(spoke: Omit<SpokeConfig, "pushRouteOwner">, mimir: Pick<MimirConfig, "readScheme">): string | undefined {
    return spoke.query ? `${mimir.readScheme}://${spoke.hostname}${PROMETHEUS_API_PREFIX}` : undefined;
}

/** A Gateway the gateway stage reads, with every listener the stack attaches routes to on it and the key naming each. */
export type GatewayRead = { name: string; namespace: string; wanted: { listener: string; key: string }[] };

/** The Gateways the stage reads: the shared one and, when a hub's spokes arrive on another (mimir.ingestGateway), that one. */
export function gatewaysRead(g: SharedGatewayConfig, spokes: SpokeConfig[], mimir: MimirConfig): GatewayRead[] {
    const ig = mimir.ingestGateway;
    const listeners = spokes.length ? [ig.listener, ...spokes.map((s) => s.listener ?? ig.listener)] : [];
    const onIngest = [...new Set(listeners)].map((listener) => ({ listener, key: "mimir.ingestGateway / spokes[].listener" }));
    const shared = { name: g.name, namespace: g.namespace, wanted: [{ listener: g.listener, key: "gateway.listener" }] };
    if (ig.name !== g.name || ig.namespace !== g.namespace)
        return onIngest.length ? [shared, { name: ig.name, namespace: ig.namespace, wanted: onIngest }] : [shared];
    return [{ ...shared, wanted: [...shared.wanted, ...onIngest.filter((w) => w.listener !== g.listener)] }];
}
