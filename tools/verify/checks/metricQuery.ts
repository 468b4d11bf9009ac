/**
 * `metrics.query`: the analysis address answers a query for this cluster's tenant with the series
 * the gates read, through the API server's service proxy or directly, trusting what the controller
 * trusts (ADR-056 D5).
 */
import { TENANT_HEADER } from "../../../components/mimir";
import { BEYLA_REQUESTS, BEYLA_ROUTE_LABEL } from "../../../components/rollouts/analysis";
import type { AddonConfig } from "../../../stacks/config";
import { VerifyContext, ref } from "../context";
import { CheckResult, DOCS, outcome, skipped } from "../report";
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

export async function probe(ctx: VerifyContext, address: string, what: string): Promise<CheckResult> {
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
