/** `metrics.spoke-routes` (hub, ADR-056 D5): the hub's spoke routes as declared and accepted, every other route on a spoke's hostname audited. */
import { spokeRoutes } from "../../../components/gateway/spokeRoutes";
import type { KubeObject, ResourceQuestion } from "../cluster";
import { describeQuestion } from "../access";
import { SpokeHost, hostRouteProblems, servesSpokeHost } from "../gatewayApi";
import { VerifyContext, asArray, drift, field, notTrue, ref } from "../context";
import type { Finding } from "../report";
import type { Judged } from "./metricQuery";

/** Why a live route of the hub's is not what it declares: any declared field, and a parent that has not accepted it. */
export function routeProblems(route: KubeObject | undefined, declared: Record<string, unknown>): string[] {
    if (!route) return ["not found: the hub's gateway stage declares it; run pulumi up"];
    const parents = asArray(field(route, "status", "parents"));
    return [
        ...drift(declared, route.spec, "spec"),
        ...(parents.length === 0 ? ["no status.parents: no Gateway has accepted it"] : []),
        ...parents.flatMap((p) =>
            notTrue({ status: p }, ["Accepted", "ResolvedRefs"]).map((c) => `parent ${String(field(p, "parentRef", "name") ?? "?")}: ${c}`),
        ),
    ];
}

/** Every other route on a spoke's listener and hostname, audited; `skipped` when verify may not list HTTPRoutes or get the Gateway. */
export async function auditSpokeHosts(
    { config, cluster }: VerifyContext,
    declared: ReadonlySet<string>,
): Promise<{ findings: Finding[]; audited: string[]; skipped?: string }> {
    const gw = config.mimir.ingestGateway;
    const questions: ResourceQuestion[] = [
        { verb: "list", group: "gateway.networking.k8s.io", resource: "httproutes" },
        { verb: "get", group: "gateway.networking.k8s.io", resource: "gateways", namespace: gw.namespace, name: gw.name },
    ];
    const refused: string[] = [];
    for (const q of questions) {
        if (!(await cluster.reviewSelf(q)).allowed) refused.push(`${describeQuestion(q)}${q.name ? ` (${q.name})` : ""}`);
    }
    if (refused.length > 0) {
        const skipped = `verify may not ${refused.join(" or ")}, so the other routes on the spokes' hostnames were not audited (see Verify's own permissions)`;
        return { findings: [], audited: [], skipped };
    }
    const gateway = await cluster.get(`/apis/gateway.networking.k8s.io/v1/namespaces/${gw.namespace}/gateways/${gw.name}`);
    const gatewayRef = ref("Gateway", gw.namespace, gw.name);
    if (!gateway) {
        return { findings: [{ object: gatewayRef, found: "not found: the spokes' routes attach to it (mimir.ingestGateway, else gateway)" }], audited: [] };
    }
    const routes = await cluster.list("/apis/gateway.networking.k8s.io/v1/httproutes");
    if (!routes) return { findings: [], audited: [], skipped: "the API server serves no HTTPRoutes (gateway.networking.k8s.io/v1)" };
    const listeners = asArray<{ name?: string }>(field(gateway, "spec", "listeners")).map((l) => l.name);
    const findings: Finding[] = [];
    const audited = new Set<string>();
    for (const spoke of config.spokes) {
        const listener = spoke.listener ?? gw.listener;
        if (!listeners.includes(listener)) {
            findings.push({ object: gatewayRef, found: `has no listener ${listener}, which spoke ${spoke.name}'s routes attach to` });
            continue;
        }
        const host: SpokeHost = { spoke: spoke.name, tenant: spoke.tenant, hostname: spoke.hostname, gateway: gw, listener };
        for (const route of routes) {
            const key = `${route.metadata?.namespace ?? ""}/${route.metadata?.name ?? ""}`;
            if (!declared.has(key) && servesSpokeHost(route, host)) {
                audited.add(key);
                const object = ref("HTTPRoute", route.metadata?.namespace, route.metadata?.name ?? "");
                findings.push(...hostRouteProblems(route, host, config.mimir).map((found) => ({ object, found })));
            }
        }
    }
    return { findings, audited: [...audited] };
}

/** The hub's own spoke routes and the audit of the others; SKIP when nothing is wrong but the others could not be audited. */
export async function spokeRouteFindings(ctx: VerifyContext): Promise<Judged> {
    const mimir = ctx.config.mimir;
    const findings: Finding[] = [];
    const checked: string[] = [];
    const declared = new Set<string>();
    for (const route of ctx.config.spokes.flatMap((s) => spokeRoutes(s, mimir))) {
        checked.push(`${route.name} (${route.purpose})`);
        declared.add(`${mimir.spokeRouteNamespace}/${route.name}`);
        const live = await ctx.cluster.get(`/apis/gateway.networking.k8s.io/v1/namespaces/${mimir.spokeRouteNamespace}/httproutes/${route.name}`);
        const object = ref("HTTPRoute", mimir.spokeRouteNamespace, route.name);
        findings.push(...routeProblems(live, route.spec as unknown as Record<string, unknown>).map((found) => ({ object, found })));
    }
    const audit = await auditSpokeHosts(ctx, declared);
    findings.push(...audit.findings);
    const ours = checked.join(", ") || "the hub declares no spoke route (the observability module owns every ingest route and no spoke has query: true)";
    if (audit.skipped !== undefined) {
        return findings.length > 0
            ? { findings, note: `other routes not audited: ${audit.skipped}` }
            : { skipped: `${ours}: as declared; but ${audit.skipped}` };
    }
    const others = audit.audited.length > 0 ? `other routes on the spokes' hostnames: ${audit.audited.join(", ")}` : "no other route on the spokes' hostnames";
    return { findings, note: `${ours}; ${others}` };
}
