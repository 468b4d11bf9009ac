/**
 * The metric path (ADR-056 D5, as-built W8c): the shared templates query Mimir with this cluster's
 * tenant through the Prometheus provider, that address answers for the tenant, and on the hub
 * every spoke's route forces the spoke's tenant.
 */
import { TENANT_HEADER, inClusterMimirAddress } from "../../../components/mimir";
import { HttpRouteSpec, spokeRoutes } from "../../../components/gateway/spokeRoutes";
import { BEYLA_REQUESTS, BEYLA_ROUTE_LABEL, clusterAnalysisTemplateSpec, errorBudgetTemplates, sharedTemplates } from "../../../components/rollouts/analysis";
import type { AddonConfig } from "../../../stacks/config";
import type { KubeObject, ResourceQuestion } from "../cluster";
import { describeQuestion } from "../access";
import { SpokeHost, hostRouteProblems, liveListener, servesSpokeHost } from "../gatewayApi";
import { CheckGroup, VerifyContext, asArray, canonical, condition, describeCondition, drift, field, ref } from "../context";
import { CheckResult, Finding, DOCS, outcome, skipped } from "../report";
import { FOLDED_ROUTE_QUERY, foldedProbeRoutes, gatedRollouts, routeSeries } from "../probeRoutes";

/**
 * The labels every gate selects the measured ReplicaSet's series by (components/rollouts/analysis.ts,
 * the canary matchers): a series without them is one no gate can read.
 */
export const GATE_SELECTOR_LABELS = ["k8s_namespace_name", "k8s_replicaset_name"] as const;

/** The query verify sends: the series the gates read, with the labels they select on, counted, in this tenant only. */
export const PROBE_QUERY = `count(${BEYLA_REQUESTS}{${GATE_SELECTOR_LABELS.map((l) => `${l}!=""`).join(",")}})`;

/**
 * The same series that also carry Beyla's route (components/rollouts/analysis.ts, excludedRoutes):
 * without `http_route` the gates cannot leave the kubelet's probes out, so with
 * `analysis.excludeRoutes` set at least one must carry it.
 */
export const ROUTED_PROBE_QUERY = `count(${BEYLA_REQUESTS}{${[...GATE_SELECTOR_LABELS, BEYLA_ROUTE_LABEL].map((l) => `${l}!=""`).join(",")}})`;

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
export function inClusterService(address: string): { service: string; namespace: string; port: number; path: string } | undefined {
    const url = new URL(address);
    const m = /^([a-z0-9-]+)\.([a-z0-9-]+)\.svc(\.cluster\.local)?$/.exec(url.hostname);
    if (!m) {
        return undefined;
    }
    return { service: m[1], namespace: m[2], port: Number(url.port || (url.protocol === "https:" ? 443 : 80)), path: url.pathname.replace(/\/+$/, "") };
}

/** The command that runs the same query from inside the controller's network identity. */
export function inClusterCommand(config: AddonConfig, address: string): string {
    const image = config.smokeTest.loadImage || "<an image with curl, from your mirror>";
    const ns = config.controller.namespace;
    const url = `${address.replace(/\/+$/, "")}/api/v1/query?query=${encodeURIComponent(PROBE_QUERY)}`;
    return (
        `kubectl -n ${ns} debug "$(kubectl -n ${ns} get pod -l app.kubernetes.io/component=rollouts-controller -o name | head -1)" ` +
        `--profile=restricted --image=${image} -- curl -sS -H '${TENANT_HEADER}: ${config.cluster.mimirTenant}' '${url}'`
    );
}

/** Reads a Prometheus query API answer: `{"status":"success","data":{"resultType":"vector","result":[...]}}`. */
export function queryAnswer(status: number, body: string): { ok: true; series: number; result: unknown[] } | { ok: false; why: string } {
    let parsed: { status?: string; error?: string; data?: { resultType?: string; result?: unknown[] } } | undefined;
    try {
        parsed = JSON.parse(body) as typeof parsed;
    } catch {
        parsed = undefined;
    }
    if (status !== 200) {
        return { ok: false, why: `HTTP ${status}: ${(parsed?.error ?? body).toString().slice(0, 200).trim()}` };
    }
    if (parsed?.status !== "success" || parsed.data?.resultType !== "vector" || !Array.isArray(parsed.data.result)) {
        return { ok: false, why: `not a Prometheus vector answer: ${body.slice(0, 200)}` };
    }
    // `count(...)` answers one sample holding the count, or nothing when no series matched.
    const sample = parsed.data.result[0] as { value?: [number, string] } | undefined;
    return { ok: true, series: sample?.value ? Number(sample.value[1]) : 0, result: parsed.data.result };
}

/** Not reachable from where verify runs: SKIP, with the command to run from inside the cluster. */
const NETWORK_ERROR = /ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|timeout/i;

/**
 * Why the endpoint's certificate was refused, from Node's verification error (its OpenSSL code, or
 * its message when there is none): `untrusted` (no trusted CA issued it: what
 * `mimir.readCaBundle` fixes), `validity`, `hostname`, or `other` TLS trouble; undefined for an
 * error that is not about the certificate. The controller refuses the same certificates: Go's
 * verifier checks the chain to its roots, the validity and the name alike.
 */
export function certificateProblem(e: { code?: string; message: string }): "untrusted" | "validity" | "hostname" | "other" | undefined {
    const code = e.code ?? "";
    if (
        /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_UNTRUSTED|CERT_CHAIN_TOO_LONG)$/.test(
            code,
        )
    ) {
        return "untrusted";
    }
    if (/^CERT_(HAS_EXPIRED|NOT_YET_VALID)$/.test(code)) {
        return "validity";
    }
    if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
        return "hostname";
    }
    if (/unable to verify|unable to get (local )?issuer|self[- ]signed|signed by unknown authority/i.test(e.message)) {
        return "untrusted";
    }
    if (/certificate has expired|not yet valid/i.test(e.message)) {
        return "validity";
    }
    if (/altnames|does not match certificate/i.test(e.message)) {
        return "hostname";
    }
    return /certificate|TLS|SSL|CERT_/i.test(e.message) || /^(ERR_TLS|ERR_SSL|CERT_)/.test(code) ? "other" : undefined;
}

/** What to do about a refused certificate: for an untrusted one, name `mimir.readCaBundle`. */
export function certificateAdvice(kind: "untrusted" | "validity" | "hostname" | "other", readCaBundle: string | undefined, address: string): string {
    const same = "the controller's gates query it with the same trust and fail the same way";
    const key = "argo-rollouts-addon:mimir.readCaBundle";
    if (kind === "untrusted" && readCaBundle === undefined) {
        return `no CA verify trusts issued the endpoint's certificate (the public roots; the stack sets no mimir.readCaBundle); ${same}. Set ${key} in the spoke's stack file to the PEM of the private CA that issued it (the controller then trusts it too), or serve a certificate of a public CA`;
    }
    if (kind === "untrusted") {
        const n = ((readCaBundle ?? "").match(/-----BEGIN CERTIFICATE-----/g) ?? []).length;
        return `neither the public roots nor the ${n} CA certificate${n === 1 ? "" : "s"} of ${key} issued the endpoint's certificate; ${same}. Put the CA that issued it in mimir.readCaBundle (with any intermediate CA the endpoint does not send)`;
    }
    if (kind === "validity") {
        return `the endpoint's certificate is outside its validity period; ${same}. Renew it on the hub's ingest Gateway`;
    }
    if (kind === "hostname") {
        return `the endpoint's certificate does not name ${new URL(address).hostname}; ${same}. Serve a certificate for that hostname on the hub's ingest Gateway`;
    }
    return `the TLS handshake failed; ${same}`;
}

async function probe(ctx: VerifyContext, address: string, what: string): Promise<CheckResult> {
    const { config, cluster } = ctx;
    const tenant = config.cluster.mimirTenant;
    const headers = { [TENANT_HEADER]: tenant };
    const object = `${address} (tenant ${tenant})`;
    const instead = `run it from inside the cluster: ${inClusterCommand(config, address)}`;
    const service = inClusterService(address);
    if (service) {
        // Only the API server can reach an in-cluster address from here: its service proxy
        // forwards a GET (and its headers) to the Service. That needs `get` on services/proxy.
        const may = await cluster.reviewSelf({
            verb: "get",
            group: "",
            resource: "services",
            subresource: "proxy",
            namespace: service.namespace,
            name: service.service,
        });
        if (!may.allowed) {
            return skipped("metrics.query", what, DOCS.metrics, `verify may not get services/proxy in ${service.namespace}; ${instead}`);
        }
    }
    /** One query's answer, or the result that ends the check. */
    const ask = async (query: string): Promise<{ series: number; result: unknown[] } | CheckResult> => {
        let answer: { status: number; body: string };
        if (service) {
            answer = await cluster.proxyGet(service.namespace, service.service, service.port, `${service.path}/api/v1/query`, { query }, headers);
            if (answer.status === 503 || answer.status === 502) {
                return outcome("metrics.query", what, DOCS.metrics, [
                    { object, found: `the API server could not reach the Service (HTTP ${answer.status}); if the control plane cannot reach pods, ${instead}` },
                ]);
            }
        } else {
            try {
                answer = await ctx.options.httpGet(`${address.replace(/\/+$/, "")}/api/v1/query?query=${encodeURIComponent(query)}`, headers, {
                    extraCa: config.mimir.readCaBundle,
                });
            } catch (e) {
                const message = (e as Error).message;
                const refused = certificateProblem(e as Error & { code?: string });
                if (refused) {
                    return outcome("metrics.query", what, DOCS.metrics, [
                        { object, found: `${message}: ${certificateAdvice(refused, config.mimir.readCaBundle, address)}` },
                    ]);
                }
                if (NETWORK_ERROR.test(message)) {
                    return skipped("metrics.query", what, DOCS.metrics, `${address} is not reachable from here (${message}); ${instead}`);
                }
                throw e;
            }
        }
        const result = queryAnswer(answer.status, answer.body);
        return result.ok ? result : outcome("metrics.query", what, DOCS.metrics, [{ object, found: result.why }]);
    };
    /** One query's count of series, or the result that ends the check. */
    const count = async (query: string): Promise<number | CheckResult> => {
        const answer = await ask(query);
        return "series" in answer ? answer.series : answer;
    };
    const series = await count(PROBE_QUERY);
    if (typeof series !== "number") {
        return series;
    }
    if (series === 0) {
        // An answer without the series is no gate path: every measurement would be Inconclusive.
        return outcome("metrics.query", what, DOCS.metrics, [
            {
                object,
                found: `answered, but no ${BEYLA_REQUESTS} series with ${GATE_SELECTOR_LABELS.join(" and ")} in tenant ${tenant}: every gate of this cluster would be Inconclusive. The platform's Beyla must export its request metrics with their Kubernetes metadata to this tenant (docs/tenants/metric-gates.md)`,
            },
        ]);
    }
    if (config.analysis.excludeRoutes.length === 0) {
        return outcome(
            "metrics.query",
            what,
            DOCS.metrics,
            [],
            `${PROBE_QUERY} = ${series} series (analysis.excludeRoutes is empty: every request counts, probes included)`,
        );
    }
    const routed = await count(ROUTED_PROBE_QUERY);
    if (typeof routed !== "number") {
        return routed;
    }
    if (routed === 0) {
        return outcome("metrics.query", what, DOCS.metrics, [
            {
                object,
                found: `${series} series carry ${GATE_SELECTOR_LABELS.join(" and ")}, none carries ${BEYLA_ROUTE_LABEL}: the gates cannot leave out the kubelet's probes (analysis.excludeRoutes), so probes alone can fill analysis.minRequests and pass a version nobody calls. The platform's Beyla must export ${BEYLA_ROUTE_LABEL} (its routes section, on by default in Beyla 3.x; docs/tenants/metric-gates.md#probes-do-not-count), or set analysis.excludeRoutes: [] to count every request`,
            },
        ]);
    }
    const counted = `${PROBE_QUERY} = ${series} series, ${routed} with ${BEYLA_ROUTE_LABEL}`;
    const gated = gatedRollouts((await cluster.list("/apis/argoproj.io/v1alpha1/rollouts")) ?? []);
    if (gated.length === 0) {
        return outcome("metrics.query", what, DOCS.metrics, [], `${counted}; no Rollout references a request gate, so no folded probe route was looked for`);
    }
    const wildcard = await ask(FOLDED_ROUTE_QUERY);
    if (!("series" in wildcard)) {
        return wildcard;
    }
    const folded = foldedProbeRoutes(routeSeries(wildcard.result), gated, config.analysis.excludeRoutes);
    const findings = folded.map((f) => ({
        object: ref("Rollout", f.rollout.namespace, f.rollout.name),
        found:
            `its series (ReplicaSet ${f.replicaSets.join(", ")}) carry ${BEYLA_ROUTE_LABEL}="${f.route}", a route Beyla folded that can hold the probe route${f.probes.length === 1 ? "" : "s"} ${f.probes.join(", ")}; ` +
            `${f.rollout.gates.join(", ")} count${f.rollout.gates.length === 1 ? "s" : ""} it (analysis.excludeRoutes matches routes exactly), so probes can fill analysis.minRequests and dilute errors and p99. ` +
            `Keep the probes out in the platform's Beyla: routes.ignored_patterns with the probe paths and ignore_mode metrics (or all), or routes.patterns naming them (docs/tenants/metric-gates.md#when-beyla-folds-a-probes-route)`,
    }));
    const rollouts = `${gated.length} Rollout${gated.length === 1 ? "" : "s"} with a request gate`;
    return outcome(
        "metrics.query",
        what,
        DOCS.metrics,
        findings,
        findings.length > 0 ? `${counted}; ${rollouts}` : `${counted}; ${rollouts}, none with a probe route folded into a counted route`,
    );
}

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

const ROUTES_WHAT =
    "every route on each spoke's hostname and listener reaches Mimir only for remote write and its read endpoints, setting the spoke's tenant; the hub's own spoke routes are as declared";

/**
 * `metrics.spoke-routes` (hub): the routes the hub declares for its spokes, as declared
 * (`routeProblems`), and every other HTTPRoute attached to a spoke's listener that serves its
 * hostname, whoever owns it (`auditSpokeHosts`). FAIL on any finding; SKIP when nothing was found
 * wrong but the other routes could not be audited, since a PASS would claim more than was seen.
 */
async function spokeRoutesCheck(ctx: VerifyContext): Promise<CheckResult> {
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
