/**
 * Probe requests that Beyla has folded into a wildcard route, where a request gate counts them.
 *
 * The gates leave the kubelet's probes out by their exact `http_route` (`analysis.excludeRoutes`,
 * components/rollouts/analysis.ts, excludedRoutes). Beyla 3.x does not always report a probe's
 * path as its route (grafana/beyla v3.33.0, read at that tag):
 *
 * - its default `routes.unmatched` is `low-cardinality` (pkg/beyla/config.go, DefaultConfig), which
 *   passes the heuristic's route through a per-process path trie
 *   (vendor/go.opentelemetry.io/obi/pkg/transform/routes.go, classifyFromPathWithCappedCardinality);
 *   the trie folds a path level into `*` as soon as the process has served more than
 *   `max_path_segment_cardinality` distinct segments there, 10 by default
 *   (vendor/go.opentelemetry.io/obi/pkg/obi/config.go; .../internal/transform/route/clusterurl/trie.go,
 *   PathTrie.insertSegments/collapseNode), and keeps it folded for the process's life: a service with
 *   ten top-level paths reports its `/healthz` as `/*`;
 * - `routes.unmatched: wildcard` reports every path no pattern matches as `/**` (routes.go, wildCard).
 *
 * A folded probe no longer equals any excluded route, so the gates count it again: the probes can
 * fill `analysis.minRequests` for a version nobody calls and dilute its errors and its p99.
 */
import { BEYLA_REQUESTS, BEYLA_ROUTE_LABEL } from "../../components/rollouts/analysis";
import type { KubeObject } from "./cluster";
import { LATENCY_P99, LATENCY_P99_FINITE, SUCCESS_RATE, SUCCESS_RATE_FINITE } from "../../components/argoRollouts";

/** The templates that count the new version's requests (and so its probes); the error-budget ones do not. */
export const REQUEST_GATES: readonly string[] = [SUCCESS_RATE, SUCCESS_RATE_FINITE, LATENCY_P99, LATENCY_P99_FINITE];

/**
 * The series whose route holds a wildcard (`*` is Beyla's default `routes.wildcard_char`,
 * vendor/go.opentelemetry.io/obi/pkg/obi/config.go), per workload and route, with the labels the
 * gates select a ReplicaSet by.
 */
export const FOLDED_ROUTE_QUERY = `count by (k8s_namespace_name, k8s_replicaset_name, ${BEYLA_ROUTE_LABEL}) (${BEYLA_REQUESTS}{k8s_namespace_name!="",k8s_replicaset_name!="",${BEYLA_ROUTE_LABEL}=~".*[*].*"})`;

export interface RouteSeries {
    namespace: string;
    replicaSet: string;
    route: string;
}

export interface GatedRollout {
    namespace: string;
    name: string;
    /** The request gates it references. */
    gates: string[];
}

export interface FoldedProbeRoute {
    rollout: GatedRollout;
    route: string;
    /** The excluded routes (probes) that this route can hold. */
    probes: string[];
    replicaSets: string[];
}

/** A route's path segments as Beyla's trie splits them (trie.go, Insert: trimmed of `/`, split on `/`). */
function segments(route: string): string[] {
    return route.replace(/^\/+|\/+$/g, "").split("/");
}

/**
 * Whether Beyla can have reported a request to `probe` as `route`: `/**` (every unmatched path), or
 * as many segments with each either the probe's own or `*` and at least one `*` (the trie replaces
 * a folded level's segment, keeping the others). `/*` holds `/healthz`; `/actuator/health/*` and
 * `/*\/health/liveness` hold `/actuator/health/liveness`.
 */
export function foldsInto(probe: string, route: string): boolean {
    if (route === "/**") {
        return true;
    }
    const p = segments(probe);
    const r = segments(route);
    return r.includes("*") && p.length === r.length && r.every((s, i) => s === "*" || s === p[i]);
}

/** The series of a Prometheus vector answer (`data.result`), keeping those with the three labels. */
export function routeSeries(result: readonly unknown[]): RouteSeries[] {
    const out: RouteSeries[] = [];
    for (const item of result) {
        const m = (item as { metric?: Record<string, string> } | undefined)?.metric ?? {};
        if (m.k8s_namespace_name && m.k8s_replicaset_name && m[BEYLA_ROUTE_LABEL]) {
            out.push({ namespace: m.k8s_namespace_name, replicaSet: m.k8s_replicaset_name, route: m[BEYLA_ROUTE_LABEL] });
        }
    }
    return out;
}

/** Every cluster-scoped template reference under `o` (canary background and step analysis, blue/green pre/post-promotion). */
function templateRefs(o: unknown, out: string[] = []): string[] {
    if (Array.isArray(o)) {
        o.forEach((x) => templateRefs(x, out));
    } else if (o && typeof o === "object") {
        const r = o as Record<string, unknown>;
        if (typeof r.templateName === "string" && r.clusterScope === true) {
            out.push(r.templateName);
        }
        Object.values(r).forEach((x) => templateRefs(x, out));
    }
    return out;
}

/** The Rollouts whose strategy references a shared request gate. */
export function gatedRollouts(rollouts: readonly KubeObject[]): GatedRollout[] {
    return rollouts.flatMap((r) => {
        const gates = [...new Set(templateRefs((r.spec as Record<string, unknown> | undefined)?.strategy).filter((t) => REQUEST_GATES.includes(t)))];
        return gates.length > 0 ? [{ namespace: r.metadata?.namespace ?? "", name: r.metadata?.name ?? "", gates }] : [];
    });
}

/**
 * The gated Rollouts' series whose route is a fold of an excluded (probe) route that the gates
 * count. A series is a Rollout's when it is in its namespace and its ReplicaSet is
 * `<rollout>-<pod template hash>` (what the gates select, components/rollouts/analysis.ts,
 * canaryMatchers). A route listed in `excludeRoutes` itself is not counted by the gates; with
 * `excludeRoutes: []` every request counts by choice, so nothing is reported.
 */
export function foldedProbeRoutes(series: readonly RouteSeries[], gated: readonly GatedRollout[], excludeRoutes: readonly string[]): FoldedProbeRoute[] {
    const out = new Map<string, FoldedProbeRoute>();
    for (const s of series) {
        if (excludeRoutes.includes(s.route)) {
            continue;
        }
        const probes = excludeRoutes.filter((p) => foldsInto(p, s.route));
        if (probes.length === 0) {
            continue;
        }
        for (const rollout of gated) {
            const hash = s.replicaSet.startsWith(`${rollout.name}-`) ? s.replicaSet.slice(rollout.name.length + 1) : "";
            if (s.namespace !== rollout.namespace || !/^[a-z0-9]+$/.test(hash)) {
                continue;
            }
            const key = `${rollout.namespace}/${rollout.name} ${s.route}`;
            const found = out.get(key) ?? { rollout, route: s.route, probes, replicaSets: [] };
            found.replicaSets.push(s.replicaSet);
            out.set(key, found);
        }
    }
    return [...out.values()];
}
