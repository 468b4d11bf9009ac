/** The metric path (ADR-056 D5): the templates query Mimir as this cluster's tenant, the address answers, the spoke routes force the tenant. */
import { TENANT_HEADER, inClusterMimirAddress } from "../../../components/mimir";
import { clusterAnalysisTemplateSpec, errorBudgetTemplates, sharedTemplates } from "../../../components/rollouts/analysis";
import type { AddonConfig } from "../../../stacks/config";
import type { KubeObject } from "../cluster";
import { CheckGroup, asArray, drift, field, ref } from "../context";
import { DOCS, Finding, checks } from "../report";
import { Judged, probe } from "./metricQuery";
import { spokeRouteFindings } from "./spokeRoutes";

const C = checks(DOCS.metrics, {
    "metrics.templates": "the shared analysis templates are the stack's and query Mimir through the Prometheus provider as this cluster's tenant",
    "metrics.query": "the analysis address answers a query for this cluster's tenant",
    "metrics.spoke-routes":
        "every route on each spoke's hostname and listener reaches Mimir only for remote write and its read endpoints, setting the spoke's tenant; the hub's own spoke routes are as declared",
});

/** The address the program gives the templates, when the stack file says it (a spoke naming its hub stack does not). */
export function expectedAddress(config: AddonConfig): string | undefined {
    const source = config.mimir.readEndpoint;
    return config.cluster.role === "hub" ? inClusterMimirAddress(config.mimir) : source?.kind === "url" ? source.url : undefined;
}

/** A shared template as the stack declares it for an address; `finite` ones are referenced in steps and must end. */
export type DeclaredTemplate = { name: string; runs: "background" | "finite"; spec: (address: string) => Record<string, unknown> };

export function declaredTemplates(config: AddonConfig): DeclaredTemplate[] {
    const { analysis } = config;
    const tenant = config.cluster.mimirTenant;
    return [
        ...sharedTemplates(analysis).map((t) => ({
            name: t.name,
            runs: t.runs,
            spec: (address: string) => clusterAnalysisTemplateSpec(t, analysis, address, tenant),
        })),
        ...errorBudgetTemplates(config.errorBudget, analysis).map((t) => ({
            name: t.name,
            runs: "finite" as const,
            spec: (address: string) => t.spec(address, tenant),
        })),
    ];
}

/** A live template's problems: not Prometheus (a Job's pod is denied), another tenant or address, a finite one that never ends, any drift. */
export function templateProblems(template: KubeObject, declared: DeclaredTemplate, tenant: string, address: string | undefined): string[] {
    const out: string[] = [];
    const metrics = asArray(field(template, "spec", "metrics"));
    for (const m of metrics) {
        const name = String(field(m, "name") ?? "?");
        const provider = (field(m, "provider") ?? {}) as Record<string, unknown>;
        const prometheus = provider.prometheus as { address?: string; headers?: { key: string; value: string }[] } | undefined;
        if (!prometheus) {
            out.push(`metric ${name} uses the ${Object.keys(provider).join(", ") || "no"} provider, not prometheus`);
            continue;
        }
        const header = (prometheus.headers ?? []).filter((h) => h.key.toLowerCase() === TENANT_HEADER.toLowerCase()).map((h) => h.value);
        if (header.length !== 1 || header[0] !== tenant) {
            out.push(`metric ${name} sends ${TENANT_HEADER}: ${header.join(", ") || "nothing"}, this cluster's tenant is ${tenant}`);
        }
        if (address !== undefined && prometheus.address !== address) {
            out.push(`metric ${name} queries ${prometheus.address ?? "no address"}, the stack's address is ${address}`);
        }
        // Argo Rollouts v1.9.0 refuses a step or pre/post-promotion metric with an interval and no count (validation_references.go).
        if (declared.runs === "finite" && field(m, "interval") !== undefined && field(m, "count") === undefined) {
            out.push(
                `metric ${name} has an interval and no count, so it runs indefinitely: a Rollout referencing ${declared.name} in a step or pre/post-promotion analysis is refused (InvalidSpec)`,
            );
        }
    }
    const liveAddress = field(metrics[0], "provider", "prometheus", "address");
    const want = declared.spec(address ?? (typeof liveAddress === "string" ? liveAddress : ""));
    const endless = out.some((o) => o.includes("runs indefinitely"));
    const namedAbove = (path: string) => /^spec\.metrics\[\d+\]\.provider\.prometheus\.(address|headers)/.test(path) || (endless && path.endsWith(".count"));
    return [...out, ...drift(want, field(template, "spec"), "spec").filter((d) => !namedAbove(d.split(" ")[0]))];
}

const judged = (id: "metrics.query" | "metrics.spoke-routes", j: Judged) => ("skipped" in j ? C.skip(id, j.skipped) : C.done(id, j.findings, j.note));

export const metricChecks: CheckGroup = {
    ...C,
    run: async (ctx) => {
        const { config, cluster } = ctx;
        const address = expectedAddress(config);
        const declared = declaredTemplates(config);
        const templates = await Promise.all(
            declared.map(async (d) => ({ d, live: await cluster.get(`/apis/argoproj.io/v1alpha1/clusteranalysistemplates/${d.name}`) })),
        );
        const findings: Finding[] = templates.flatMap(({ d, live }) =>
            (live ? templateProblems(live, d, config.cluster.mimirTenant, address) : ["not found: the rollouts stage declares it; run pulumi up"]).map(
                (found) => ({
                    object: ref("ClusterAnalysisTemplate", undefined, d.name),
                    found,
                }),
            ),
        );
        const liveAddress = field(templates.find((t) => t.live)?.live, "spec", "metrics", 0, "provider", "prometheus", "address");
        const probeAddress = address ?? (typeof liveAddress === "string" ? liveAddress : undefined);
        const where = `${address ?? `${String(liveAddress ?? "unknown")} (from the hub stack)`}`;
        const spoke = config.cluster.role !== "hub" ? "cluster.role is spoke: a spoke routes no spokes; the hub's verify checks its routes" : undefined;
        return [
            C.done("metrics.templates", findings, `${declared.map((d) => d.name).join(", ")} at ${where}`),
            probeAddress
                ? judged("metrics.query", await probe(ctx, probeAddress))
                : C.skip("metrics.query", "no analysis address: the templates are missing and the stack file names the hub's stack, not a URL"),
            spoke || config.spokes.length === 0
                ? C.skip("metrics.spoke-routes", spoke ?? "no spokes in the stack")
                : judged("metrics.spoke-routes", await spokeRouteFindings(ctx)),
        ];
    },
};
