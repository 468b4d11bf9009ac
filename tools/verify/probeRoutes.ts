/**
 * Probe requests Beyla folded into a wildcard route, which a request gate counts: Beyla 3.x folds a path level into `*` past 10
 * distinct segments and unmatched paths into `/**` (grafana/beyla v3.33.0 vendor/go.opentelemetry.io/obi/pkg/transform/routes.go).
 * A route that could hold a probe is reported; which paths were served is not modelled.
 */
import { BEYLA_REQUESTS, BEYLA_ROUTE_LABEL } from "../../components/rollouts/analysis";
import type { KubeObject } from "./cluster";
import { LATENCY_P99, LATENCY_P99_FINITE, SUCCESS_RATE, SUCCESS_RATE_FINITE } from "../../components/argoRollouts";

/** The templates that count the new version's requests (and so its probes); the error-budget ones do not. */
export const REQUEST_GATES: readonly string[] = [SUCCESS_RATE, SUCCESS_RATE_FINITE, LATENCY_P99, LATENCY_P99_FINITE];

/** The series whose route holds Beyla's wildcard, per workload and route. */
export const FOLDED_ROUTE_QUERY = `count by (k8s_namespace_name, k8s_replicaset_name, ${BEYLA_ROUTE_LABEL}) (${BEYLA_REQUESTS}{k8s_namespace_name!="",k8s_replicaset_name!="",${BEYLA_ROUTE_LABEL}=~".*[*].*"})`;

/** An analysis argument (argo-rollouts v1alpha1 Argument). */
export type Argument = { name: string; value?: string; valueFrom?: unknown };

/** One reference of a Rollout to a ClusterAnalysisTemplate, with the args passed along. */
export type TemplateReference = { rollout: string; where: string; template: string; args: Argument[] };

type Analysis = { templates?: { templateName?: string; clusterScope?: boolean }[]; args?: Argument[] } | undefined;

/** Every ClusterAnalysisTemplate a Rollout references: canary background and step analysis, blue/green pre/post-promotion. */
export function templateReferences(rollout: KubeObject): TemplateReference[] {
    const strategy = (rollout.spec as { strategy?: Record<string, Record<string, unknown>> } | undefined)?.strategy;
    const canary = strategy?.canary as { analysis?: Analysis; steps?: { analysis?: Analysis }[] } | undefined;
    const found: [string, Analysis][] = [
        ["canary.analysis", canary?.analysis],
        ...(canary?.steps ?? []).map((s, i): [string, Analysis] => [`canary.steps[${i}].analysis`, s.analysis]),
        ...(["prePromotionAnalysis", "postPromotionAnalysis"] as const).map((w): [string, Analysis] => [
            `blueGreen.${w}`,
            strategy?.blueGreen?.[w] as Analysis,
        ]),
    ];
    const name = `${rollout.metadata?.namespace ?? ""}/${rollout.metadata?.name ?? ""}`;
    return found.flatMap(([where, a]) =>
        (a?.templates ?? [])
            .filter((t) => t.clusterScope && t.templateName)
            .map((t) => ({ rollout: name, where, template: t.templateName!, args: a?.args ?? [] })),
    );
}

/** A route that can hold `probe`: `/**`, or as many segments with each the probe's own or `*`, at least one `*`. */
export function foldsInto(probe: string, route: string): boolean {
    const [p, r] = [probe, route].map((x) => x.replace(/^\/+|\/+$/g, "").split("/"));
    return route === "/**" || (r.includes("*") && p.length === r.length && r.every((s, i) => s === "*" || s === p[i]));
}

export type FoldedProbeRoute = { rollout: { namespace: string; name: string; gates: string[] }; route: string; probes: string[]; replicaSets: string[] };

/** The series of gated Rollouts (ReplicaSet `<rollout>-<hash>`) whose route can hold an excluded probe route. */
export function foldedProbeRoutes(answer: readonly unknown[], rollouts: readonly KubeObject[], excludeRoutes: readonly string[]): FoldedProbeRoute[] {
    const out = new Map<string, FoldedProbeRoute>();
    for (const item of answer) {
        const m = (item as { metric?: Record<string, string> } | undefined)?.metric ?? {};
        const [namespace, replicaSet, route] = [m.k8s_namespace_name, m.k8s_replicaset_name, m[BEYLA_ROUTE_LABEL]];
        const probes = excludeRoutes.filter((p) => route && foldsInto(p, route));
        if (!namespace || !replicaSet || excludeRoutes.includes(route) || probes.length === 0) continue;
        for (const r of rollouts.filter(
            (x) => x.metadata?.namespace === namespace && /^[a-z0-9]+$/.test(replicaSet.slice((x.metadata?.name ?? "").length + 1)),
        )) {
            const name = r.metadata?.name ?? "";
            const gates = [...new Set(templateReferences(r).map((t) => t.template))].filter((t) => REQUEST_GATES.includes(t));
            if (gates.length === 0 || !replicaSet.startsWith(`${name}-`)) continue;
            const key = `${namespace}/${name} ${route}`;
            const found = out.get(key) ?? { rollout: { namespace, name, gates }, route, probes, replicaSets: [] };
            found.replicaSets.push(replicaSet);
            out.set(key, found);
        }
    }
    return [...out.values()];
}

/** The Rollouts whose strategy references a shared request gate. */
export const gatedRollouts = (rollouts: readonly KubeObject[]): KubeObject[] =>
    rollouts.filter((r) => templateReferences(r).some((t) => REQUEST_GATES.includes(t.template)));
