/**
 * `metrics.spoke-routes` (hub, ADR-056 D5): each spoke's routes reach Mimir only for remote write
 * and its read endpoints, forcing the spoke's tenant; the hub's own routes are as declared.
 */
import { TENANT_HEADER } from "../../../components/mimir";
import { HttpRouteSpec, spokeRoutes } from "../../../components/gateway/spokeRoutes";
import type { KubeObject, ResourceQuestion } from "../cluster";
import { describeQuestion } from "../access";
import { SpokeHost, hostRouteProblems, liveListener, servesSpokeHost } from "../gatewayApi";
import { VerifyContext, asArray, canonical, condition, describeCondition, field, ref } from "../context";
import { CheckResult, Finding, DOCS, outcome, skipped } from "../report";

const matchKey = (m: unknown): string => `${String(field(m, "path", "type") ?? "PathPrefix")} ${String(field(m, "path", "value") ?? "/")}`;

/**
 * Why a live spoke route does not do what the hub declares: its Gateway listener and hostname, the
 * paths it routes (exactly the declared ones: remote write and Mimir's read endpoints, nothing
 * more), a tenant header `set` (never `add`) to the spoke's tenant on every rule to Mimir, and the
 * Gateway's acceptance.
 */
export function routeProblems(route: KubeObject | undefined, expected: HttpRouteSpec, tenant: string, gatewayService: string): string[] {
    if (!route) {
        return ["not found: the hub's gateway stage declares it; run pulumi up"];
    }
    const out: string[] = [];
    const hostnames = asArray<string>(field(route, "spec", "hostnames"));
    if (hostnames.join(",") !== expected.hostnames.join(",")) {
        out.push(`hostnames are [${hostnames.join(", ")}], expected [${expected.hostnames.join(", ")}]`);
    }
    const parents = asArray(field(route, "spec", "parentRefs"));
    const wantParents = expected.parentRefs.map((p) => `${p.namespace}/${p.name}/${p.sectionName}`);
    const haveParents = parents.map((p) => `${String(field(p, "namespace") ?? "")}/${String(field(p, "name") ?? "")}/${String(field(p, "sectionName") ?? "")}`);
    if (canonical([...haveParents].sort()) !== canonical([...wantParents].sort())) {
        out.push(`attaches to ${haveParents.join(", ") || "nothing"}, expected ${wantParents.join(", ")} (Gateway/listener)`);
    }
    const rules = asArray(field(route, "spec", "rules"));
    const tenantOf = (r: unknown, op: "set" | "add") =>
        asArray(field(r, "filters"))
            .filter((f) => field(f, "type") === "RequestHeaderModifier")
            .flatMap((f) => asArray<{ name: string; value: string }>(field(f, "requestHeaderModifier", op)))
            .filter((h) => h.name.toLowerCase() === TENANT_HEADER.toLowerCase())
            .map((h) => h.value);
    const wanted = new Set(expected.rules.flatMap((r) => r.matches.map(matchKey)));
    const live = new Set(rules.flatMap((r) => asArray(field(r, "matches")).map(matchKey)));
    for (const m of wanted) {
        if (!live.has(m)) {
            out.push(`no rule for ${m}`);
        }
    }
    for (const m of live) {
        if (!wanted.has(m)) {
            out.push(`routes ${m}, which the hub does not declare: only remote write and Mimir's read endpoints may be reachable`);
        }
    }
    rules.forEach((r, i) => {
        const paths = asArray(field(r, "matches")).map(matchKey).join(", ");
        const toMimir = asArray(field(r, "backendRefs")).some((b) => field(b, "name") === gatewayService);
        const set = tenantOf(r, "set");
        if (tenantOf(r, "add").length > 0) {
            out.push(`rule ${i} (${paths}) adds ${TENANT_HEADER} instead of setting it: a spoke could name another tenant`);
        }
        if (toMimir && (set.length !== 1 || set[0] !== tenant)) {
            out.push(`rule ${i} (${paths}) reaches Mimir setting ${TENANT_HEADER} to ${set.join(", ") || "nothing"}, not ${tenant}`);
        }
    });
    // Gateway API route status: each parent reports Accepted and ResolvedRefs.
    const statusParents = asArray(field(route, "status", "parents"));
    if (statusParents.length === 0) {
        out.push("no status.parents: no Gateway has accepted it");
    }
    for (const p of statusParents) {
        const conds = asArray<{ type: string; status: string; reason?: string; message?: string }>(field(p, "conditions"));
        for (const type of ["Accepted", "ResolvedRefs"]) {
            const c = condition(conds, type);
            if (c?.status !== "True") {
                out.push(`parent ${String(field(p, "parentRef", "name") ?? "?")}: ${describeCondition(c, type)}`);
            }
        }
    }
    return out;
}

const ROUTES_WHAT =
    "every route on each spoke's hostname and listener reaches Mimir only for remote write and its read endpoints, setting the spoke's tenant; the hub's own spoke routes are as declared";

/**
 * `metrics.spoke-routes` (hub): the routes the hub declares for its spokes, as declared
 * (`routeProblems`), and every other HTTPRoute attached to a spoke's listener that serves its
 * hostname, whoever owns it (`auditSpokeHosts`). FAIL on any finding; SKIP when nothing was found
 * wrong but the other routes could not be audited, since a PASS would claim more than was seen.
 */
export async function spokeRoutesCheck(ctx: VerifyContext): Promise<CheckResult> {
    const { config, cluster } = ctx;
    if (config.cluster.role !== "hub") {
        return skipped(
            "metrics.spoke-routes",
            ROUTES_WHAT,
            DOCS.metrics,
            "cluster.role is spoke: a spoke routes no spokes; the hub's verify checks its routes",
        );
    }
    if (config.spokes.length === 0) {
        return skipped("metrics.spoke-routes", ROUTES_WHAT, DOCS.metrics, "no spokes in the stack");
    }
    const mimir = config.mimir;
    const findings: Finding[] = [];
    const checked: string[] = [];
    const declared = new Set<string>();
    for (const spoke of config.spokes) {
        // pushRouteOwner addon: one route with remote write (and the read rule); observability:
        // the read route alone, beside the observability module's ingest route.
        for (const route of spokeRoutes(spoke, mimir)) {
            checked.push(`${route.name} (${route.purpose})`);
            declared.add(`${mimir.spokeRouteNamespace}/${route.name}`);
            const live = await cluster.get(`/apis/gateway.networking.k8s.io/v1/namespaces/${mimir.spokeRouteNamespace}/httproutes/${route.name}`);
            for (const found of routeProblems(live, route.spec, spoke.tenant, mimir.gatewayService)) {
                findings.push({ object: ref("HTTPRoute", mimir.spokeRouteNamespace, route.name), found });
            }
        }
    }
    const audit = await auditSpokeHosts(ctx, declared);
    findings.push(...audit.findings);
    const declaredNote =
        checked.length > 0
            ? checked.join(", ")
            : "the hub declares no spoke route (the observability module owns every ingest route and no spoke has query: true)";
    if (audit.skipped !== undefined) {
        return findings.length > 0
            ? outcome("metrics.spoke-routes", ROUTES_WHAT, DOCS.metrics, findings, `other routes not audited: ${audit.skipped}`)
            : skipped("metrics.spoke-routes", ROUTES_WHAT, DOCS.metrics, `${declaredNote}: as declared; but ${audit.skipped}`);
    }
    const others = audit.audited.length > 0 ? `other routes on the spokes' hostnames: ${audit.audited.join(", ")}` : "no other route on the spokes' hostnames";
    return outcome("metrics.spoke-routes", ROUTES_WHAT, DOCS.metrics, findings, `${declaredNote}; ${others}`);
}

/** The Gateway API objects verify reads for the audit (all namespaces for routes). */
const HTTPROUTES = "/apis/gateway.networking.k8s.io/v1/httproutes";

/**
 * Every HTTPRoute other than the hub's own that is attached to a spoke's listener on the ingest
 * Gateway and serves the spoke's hostname, audited rule by rule (tools/verify/gatewayApi.ts). It
 * needs `list` on HTTPRoutes in every namespace and `get` on the ingest Gateway: verify asks first
 * and says what it may not read instead of failing on it.
 */
export async function auditSpokeHosts(
    ctx: VerifyContext,
    declared: ReadonlySet<string>,
): Promise<{ findings: Finding[]; audited: string[]; skipped?: string }> {
    const { config, cluster } = ctx;
    const mimir = config.mimir;
    const gw = mimir.ingestGateway;
    const questions: ResourceQuestion[] = [
        { verb: "list", group: "gateway.networking.k8s.io", resource: "httproutes" },
        { verb: "get", group: "gateway.networking.k8s.io", resource: "gateways", namespace: gw.namespace, name: gw.name },
    ];
    const refused: string[] = [];
    for (const q of questions) {
        if (!(await cluster.reviewSelf(q)).allowed) {
            refused.push(`${describeQuestion(q)}${q.name ? ` (${q.name})` : ""}`);
        }
    }
    if (refused.length > 0) {
        return {
            findings: [],
            audited: [],
            skipped: `verify may not ${refused.join(" or ")}, so the other routes on the spokes' hostnames were not audited (see Verify's own permissions)`,
        };
    }
    const gateway = await cluster.get(`/apis/gateway.networking.k8s.io/v1/namespaces/${gw.namespace}/gateways/${gw.name}`);
    if (!gateway) {
        return {
            findings: [
                { object: ref("Gateway", gw.namespace, gw.name), found: "not found: the spokes' routes attach to it (mimir.ingestGateway, else gateway)" },
            ],
            audited: [],
        };
    }
    const routes = await cluster.list(HTTPROUTES);
    if (!routes) {
        return { findings: [], audited: [], skipped: "the API server serves no HTTPRoutes (gateway.networking.k8s.io/v1)" };
    }
    const listeners = config.spokes.map((s) => ({ spoke: s, name: s.listener ?? gw.listener, live: liveListener(gateway, s.listener ?? gw.listener) }));
    let namespaceLabels: Map<string, Record<string, string>> | undefined;
    if (listeners.some((l) => l.live?.allowedRoutes?.namespaces?.from === "Selector")) {
        const namespaces = (await cluster.list("/api/v1/namespaces")) ?? [];
        namespaceLabels = new Map(namespaces.map((n) => [n.metadata?.name ?? "", n.metadata?.labels ?? {}]));
    }
    const findings: Finding[] = [];
    const audited = new Set<string>();
    for (const { spoke, name, live } of listeners) {
        if (!live) {
            findings.push({ object: ref("Gateway", gw.namespace, gw.name), found: `has no listener ${name}, which spoke ${spoke.name}'s routes attach to` });
            continue;
        }
        const host: SpokeHost = {
            spoke: spoke.name,
            tenant: spoke.tenant,
            hostname: spoke.hostname,
            gateway: { namespace: gw.namespace, name: gw.name },
            listener: name,
        };
        for (const route of routes) {
            const key = `${route.metadata?.namespace ?? ""}/${route.metadata?.name ?? ""}`;
            if (declared.has(key) || !servesSpokeHost(route, host, live, (ns) => namespaceLabels?.get(ns))) {
                continue;
            }
            audited.add(key);
            for (const found of hostRouteProblems(route, host, mimir)) {
                findings.push({ object: ref("HTTPRoute", route.metadata?.namespace, route.metadata?.name ?? ""), found });
            }
        }
    }
    return { findings, audited: [...audited] };
}
