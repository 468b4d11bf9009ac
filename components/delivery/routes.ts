/**
 * The Services and HTTPRoutes a strategy needs (ADR-056 D4: the L7 canary through the app's own
 * HTTPRoute). Every default the API server would fill in is written out (`group: ""`, `kind`,
 * `weight`, the match types): Cilium wants `group: ""` on Service backends, and ArgoCD shows a
 * filled-in default as drift.
 */
import { AppRoute, AppSpec, HEADER_NAME, PREVIEW_HEADER_VALUE, Shape, StrategyOptions, appLabels } from "./types";

export const serviceNames = (app: Pick<AppSpec, "name">, shape: Shape): [string, string] =>
    shape === "canary" ? [`${app.name}-stable`, `${app.name}-canary`] : [`${app.name}-active`, `${app.name}-preview`];

export type ServiceObject = ReturnType<typeof service>;
export type RouteRule = ReturnType<typeof rule>;
export type HttpRouteObject = ReturnType<typeof route>;

export function service(app: AppSpec, name: string) {
    return {
        apiVersion: "v1" as const,
        kind: "Service" as const,
        metadata: { name, namespace: app.namespace, labels: appLabels(app) },
        // The controller adds rollouts-pod-template-hash to each Service's selector.
        spec: { type: "ClusterIP", selector: appLabels(app), ports: [{ name: "http", port: app.servicePort ?? 80, targetPort: app.port, protocol: "TCP" }] },
    };
}

function rule(app: AppSpec, backends: { name: string; weight: number }[], headers?: { type: "Exact"; name: string; value: string }[]) {
    return {
        matches: [{ path: { type: "PathPrefix" as const, value: "/" }, ...(headers ? { headers } : {}) }],
        backendRefs: backends.map((b) => ({ group: "" as const, kind: "Service" as const, name: b.name, port: app.servicePort ?? 80, weight: b.weight })),
    };
}

function route(app: AppSpec, name: string, gateway: AppRoute["gateway"], hostnames: string[], rules: RouteRule[]) {
    return {
        apiVersion: "gateway.networking.k8s.io/v1" as const,
        kind: "HTTPRoute" as const,
        metadata: { name, namespace: app.namespace, labels: appLabels(app) },
        spec: {
            parentRefs: [
                { group: "gateway.networking.k8s.io", kind: "Gateway", name: gateway.name, namespace: gateway.namespace, sectionName: gateway.listener },
            ],
            hostnames,
            rules,
        },
    };
}

/** The app's HTTPRoute to `backends` (a canary's stable at 100, canary at 0, for the plugin to move), after the rules `before`. */
export function appRoute(app: AppSpec, backends: { name: string; weight: number }[], before: RouteRule[] = []): HttpRouteObject | undefined {
    return app.route && route(app, app.route.name, app.route.gateway, [...app.route.hostnames], [...before, rule(app, backends)]);
}

/**
 * The header preview gate's rule: with `<header>: true`, every path to the preview Service. Across
 * rules Gateway API prefers the longest path, then a method, then the most header matches, then list
 * order (gateway-api apis/v1/httproute_types.go HTTPRouteRule.Matches; Cilium's
 * envoy_virtual_host.go SortableRoute), so it wins over the app's path-only rule by precedence and by
 * order. One backend: ArgoCD's weight rule (components/argocd/ignoreRules.ts) leaves it alone.
 */
export function previewHeaderRule(app: AppSpec, header: string, previewService: string): RouteRule {
    return rule(app, [{ name: previewService, weight: 100 }], [{ type: "Exact", name: header, value: PREVIEW_HEADER_VALUE }]);
}

/** The hostname preview gate's route `<route>-preview`: a precise hostname of its own, so it never takes production requests. */
export function previewHostnameRoute(app: AppSpec, gate: { hostname: string; gateway?: AppRoute["gateway"] }, previewService: string): HttpRouteObject {
    const r = app.route!;
    return route(app, `${r.name}-preview`, gate.gateway ?? r.gateway, [gate.hostname], [rule(app, [{ name: previewService, weight: 100 }])]);
}

/** A single host, Gateway API's PreciseHostname (apis/v1/shared_types.go): no wildcard. */
const PRECISE_HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The reasons a preview gate cannot be used (empty when fine). */
export function previewGateProblems(app: AppSpec, opts: StrategyOptions): string[] {
    const gate = opts.previewGate;
    if (gate !== undefined && (opts.tier !== "prod" || opts.shape !== "blueGreen")) {
        return [
            `previewGate applies to prod blueGreen only, got ${opts.tier}${opts.tier === "prod" ? ` ${opts.shape ?? "canary"}` : ""}: a prod canary's gate already measures the canary's slice of production traffic, and lower tiers are not gated (ADR-056 D3)`,
        ];
    }
    if (gate === undefined) return [];
    const { header, hostname } = gate as { header?: string; hostname?: string };
    const problems = app.route ? [] : ["previewGate needs the app's HTTPRoute: the preview rule is written into it, or beside it on its Gateway"];
    if ((header === undefined) === (hostname === undefined)) {
        problems.push(`previewGate takes either header or hostname, got ${JSON.stringify(gate)}`);
    } else if (header !== undefined && !HEADER_NAME.pattern.test(header)) {
        problems.push(`previewGate.header must be ${HEADER_NAME.describe}, got ${JSON.stringify(header)}`);
    } else if (hostname !== undefined && !PRECISE_HOSTNAME.test(hostname)) {
        problems.push(`previewGate.hostname must be a single lowercase DNS name, no wildcard, got ${JSON.stringify(hostname)}`);
    } else if (hostname !== undefined && app.route?.hostnames.includes(hostname)) {
        problems.push(
            `previewGate.hostname ${hostname} is one of the app's hostnames: its production requests would go to the preview; use a hostname of its own, or the header`,
        );
    }
    return problems;
}
