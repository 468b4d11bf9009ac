/**
 * The metric path (ADR-056 D5, as-built W8c): the shared templates query Mimir with this cluster's
 * tenant through the Prometheus provider, that address answers for the tenant (metricQuery.ts), and
 * on the hub every spoke's route forces the spoke's tenant (spokeRoutes.ts).
 */
import { TENANT_HEADER, inClusterMimirAddress } from "../../../components/mimir";
import { clusterAnalysisTemplateSpec, errorBudgetTemplates, sharedTemplates } from "../../../components/rollouts/analysis";
import type { AddonConfig } from "../../../stacks/config";
import type { KubeObject } from "../cluster";
import { CheckGroup, asArray, drift, field, ref } from "../context";
import { CheckResult, Finding, DOCS, outcome, skipped } from "../report";
import { probe } from "./metricQuery";
import { spokeRoutesCheck } from "./spokeRoutes";

/** The address the program gives the templates, when verify can know it from the stack file. */
export function expectedAddress(config: AddonConfig): string | undefined {
    if (config.cluster.role === "hub") {
        return inClusterMimirAddress(config.mimir);
    }
    const source = config.mimir.readEndpoint;
    return source?.kind === "url" ? source.url : undefined;
}

export interface PrometheusProvider {
    address?: string;
    headers?: { key: string; value: string }[];
}

/** A shared template as the stack declares it, for an address (the stack's, or the live one when only the hub stack knows it). */
export interface DeclaredTemplate {
    name: string;
    /** `finite` templates must end: they are referenced in steps and pre/post-promotion analysis. */
    runs: "background" | "finite";
    spec: (address: string) => Record<string, unknown>;
}

/** The four shared metric templates (background and finite) and the two error-budget templates. */
export function declaredTemplates(config: AddonConfig): DeclaredTemplate[] {
    const analysis = config.analysis;
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

/** The provider fields whose differences `templateProblems` names in its own words. */
const NAMED_PROVIDER_FIELDS = /^spec\.metrics\[\d+\]\.provider\.prometheus\.(address|headers)/;

/**
 * What is wrong with a live ClusterAnalysisTemplate for this cluster: a provider other than
 * Prometheus, another tenant or address, a finite template that does not end, and any other field
 * that is not what the stack declares (queries with their minRequests floor, conditions, limits).
 */
export function templateProblems(template: KubeObject, declared: DeclaredTemplate, tenant: string, address: string | undefined): string[] {
    const out: string[] = [];
    const metrics = asArray(field(template, "spec", "metrics"));
    for (const m of metrics) {
        const name = String(field(m, "name") ?? "?");
        const provider = field(m, "provider") as Record<string, unknown> | undefined;
        const prometheus = provider?.prometheus as PrometheusProvider | undefined;
        if (!prometheus) {
            // A Job provider's pod is denied by the registry policy (ADR-056 as-built).
            out.push(`metric ${name} uses the ${Object.keys(provider ?? {}).join(", ") || "no"} provider, not prometheus`);
            continue;
        }
        const header = (prometheus.headers ?? []).filter((h) => h.key.toLowerCase() === TENANT_HEADER.toLowerCase());
        if (header.length !== 1 || header[0].value !== tenant) {
            out.push(`metric ${name} sends ${TENANT_HEADER}: ${header.map((h) => h.value).join(", ") || "nothing"}, this cluster's tenant is ${tenant}`);
        }
        if (address !== undefined && prometheus.address !== address) {
            out.push(`metric ${name} queries ${prometheus.address ?? "no address"}, the stack's address is ${address}`);
        }
        // Argo Rollouts v1.9.0 refuses a Rollout whose step or pre/post-promotion analysis uses a
        // metric with an interval and no count (validation_references.go, Metric.EffectiveCount).
        if (declared.runs === "finite" && field(m, "interval") !== undefined && field(m, "count") === undefined) {
            out.push(
                `metric ${name} has an interval and no count, so it runs indefinitely: a Rollout referencing ${declared.name} in a step or pre/post-promotion analysis is refused (InvalidSpec)`,
            );
        }
    }
    const liveAddress = field(metrics[0], "provider", "prometheus", "address");
    const want = declared.spec(address ?? (typeof liveAddress === "string" ? liveAddress : ""));
    const endless = out.some((o) => o.includes("runs indefinitely"));
    for (const d of drift(want, field(template, "spec"), "spec")) {
        const path = d.split(" ")[0];
        if (!NAMED_PROVIDER_FIELDS.test(path) && !(endless && path.endsWith(".count"))) {
            out.push(d);
        }
    }
    return out;
}

/** `<service>.<namespace>.svc[.cluster.local]` addresses are in-cluster: verify goes through the service proxy. */
export const metricChecks: CheckGroup = async (ctx) => {
    const { config, cluster } = ctx;
    const tenant = config.cluster.mimirTenant;
    const address = expectedAddress(config);
    const declared = declaredTemplates(config);
    const templates = await Promise.all(
        declared.map(async (d) => ({ d, live: await cluster.get(`/apis/argoproj.io/v1alpha1/clusteranalysistemplates/${d.name}`) })),
    );
    const findings: Finding[] = [];
    for (const t of templates) {
        const object = ref("ClusterAnalysisTemplate", undefined, t.d.name);
        if (!t.live) {
            findings.push({ object, found: "not found: the rollouts stage declares it; run pulumi up" });
        } else {
            findings.push(...templateProblems(t.live, t.d, tenant, address).map((found) => ({ object, found })));
        }
    }
    const liveAddress = field(templates.find((t) => t.live)?.live, "spec", "metrics", 0, "provider", "prometheus", "address");
    const results: CheckResult[] = [
        outcome(
            "metrics.templates",
            `the ${declared.length} shared analysis templates are the stack's and query Mimir through the Prometheus provider as tenant ${tenant}`,
            DOCS.metrics,
            findings,
            `${declared.map((d) => d.name).join(", ")} at ${address ?? `${String(liveAddress ?? "unknown")} (from the hub stack)`}`,
        ),
    ];

    const what = `the analysis address answers a query for tenant ${tenant}`;
    const probeAddress = address ?? (typeof liveAddress === "string" ? liveAddress : undefined);
    results.push(
        probeAddress
            ? await probe(ctx, probeAddress, what)
            : skipped(
                  "metrics.query",
                  what,
                  DOCS.metrics,
                  "no analysis address: the templates are missing and the stack file names the hub's stack, not a URL",
              ),
    );

    results.push(await spokeRoutesCheck(ctx));
    return results;
};
