/** `metrics.query`: the analysis address answers this cluster's tenant with the gates' series, trusting what the controller trusts (ADR-056 D5). */
import { TENANT_HEADER } from "../../../components/mimir";
import { BEYLA_REQUESTS, BEYLA_ROUTE_LABEL } from "../../../components/rollouts/analysis";
import type { AddonConfig } from "../../../stacks/config";
import { VerifyContext, ref } from "../context";
import type { Finding } from "../report";
import { FOLDED_ROUTE_QUERY, foldedProbeRoutes, gatedRollouts } from "../probeRoutes";

export type Judged = { findings: Finding[]; note?: string } | { skipped: string };

/** The labels every gate selects the measured ReplicaSet's series by (components/rollouts/analysis.ts). */
export const GATE_SELECTOR_LABELS = ["k8s_namespace_name", "k8s_replicaset_name"] as const;

const count = (labels: readonly string[]) => `count(${BEYLA_REQUESTS}{${labels.map((l) => `${l}!=""`).join(",")}})`;
export const PROBE_QUERY = count(GATE_SELECTOR_LABELS);
/** The same series with Beyla's route: without it the gates cannot leave the kubelet's probes out (`analysis.excludeRoutes`). */
export const ROUTED_PROBE_QUERY = count([...GATE_SELECTOR_LABELS, BEYLA_ROUTE_LABEL]);

export function inClusterService(address: string): { service: string; namespace: string; port: number; path: string } | undefined {
    const url = new URL(address);
    const m = /^([a-z0-9-]+)\.([a-z0-9-]+)\.svc(\.cluster\.local)?$/.exec(url.hostname);
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    return m ? { service: m[1], namespace: m[2], port, path: url.pathname.replace(/\/+$/, "") } : undefined;
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

/** A Prometheus query API answer: `{"status":"success","data":{"resultType":"vector","result":[...]}}`; `count(...)` answers one sample or none. */
export function queryAnswer(status: number, body: string): { ok: true; series: number; result: unknown[] } | { ok: false; why: string } {
    let parsed: { status?: string; error?: string; data?: { resultType?: string; result?: { value?: [number, string] }[] } } | undefined;
    try {
        parsed = JSON.parse(body) as typeof parsed;
    } catch {
        parsed = undefined;
    }
    if (status !== 200) return { ok: false, why: `HTTP ${status}: ${(parsed?.error ?? body).toString().slice(0, 200).trim()}` };
    const result = parsed?.status === "success" && parsed.data?.resultType === "vector" ? parsed.data.result : undefined;
    if (!Array.isArray(result)) return { ok: false, why: `not a Prometheus vector answer: ${body.slice(0, 200)}` };
    return { ok: true, series: result[0]?.value ? Number(result[0].value[1]) : 0, result };
}

/** Not reachable from where verify runs: SKIP, with the command to run from inside the cluster. */
const NETWORK_ERROR = /ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|timeout/i;

/** Why the endpoint's certificate was refused, from Node's OpenSSL code or message; undefined when not about the certificate. */
export function certificateProblem(e: { code?: string; message: string }): "untrusted" | "validity" | "hostname" | "other" | undefined {
    const text = `${e.code ?? ""} ${e.message}`;
    if (
        /UNABLE_TO_VERIFY_LEAF|UNABLE_TO_GET_ISSUER|SELF_SIGNED|CERT_UNTRUSTED|CERT_CHAIN_TOO_LONG|unable to (verify|get (local )?issuer)|self[- ]signed|unknown authority/i.test(
            text,
        )
    ) {
        return "untrusted";
    }
    if (/CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|certificate has expired|not yet valid/i.test(text)) return "validity";
    if (/ALTNAME|altnames|does not match certificate/i.test(text)) return "hostname";
    return /certificate|TLS|SSL|CERT_/i.test(text) ? "other" : undefined;
}

/** What to do about a refused certificate: for an untrusted one, name `mimir.readCaBundle`. */
export function certificateAdvice(kind: "untrusted" | "validity" | "hostname" | "other", readCaBundle: string | undefined, address: string): string {
    const same = "the controller's gates query it with the same trust and fail the same way";
    const key = "argo-rollouts-addon:mimir.readCaBundle";
    const n = ((readCaBundle ?? "").match(/-----BEGIN CERTIFICATE-----/g) ?? []).length;
    return {
        untrusted:
            readCaBundle === undefined
                ? `no CA verify trusts issued the endpoint's certificate (the public roots; the stack sets no mimir.readCaBundle); ${same}. Set ${key} in the spoke's stack file to the PEM of the private CA that issued it (the controller then trusts it too), or serve a certificate of a public CA`
                : `neither the public roots nor the ${n} CA certificate${n === 1 ? "" : "s"} of ${key} issued the endpoint's certificate; ${same}. Put the CA that issued it in mimir.readCaBundle (with any intermediate CA the endpoint does not send)`,
        validity: `the endpoint's certificate is outside its validity period; ${same}. Renew it on the hub's ingest Gateway`,
        hostname: `the endpoint's certificate does not name ${new URL(address).hostname}; ${same}. Serve a certificate for that hostname on the hub's ingest Gateway`,
        other: `the TLS handshake failed; ${same}`,
    }[kind];
}

class Stop {
    constructor(readonly judged: Judged) {}
}

export async function probe(ctx: VerifyContext, address: string): Promise<Judged> {
    const { config, cluster } = ctx;
    const tenant = config.cluster.mimirTenant;
    const headers = { [TENANT_HEADER]: tenant };
    const object = `${address} (tenant ${tenant})`;
    const fail = (found: string) => new Stop({ findings: [{ object, found }] });
    const instead = `run it from inside the cluster: ${inClusterCommand(config, address)}`;
    const service = inClusterService(address);
    // Only the API server's service proxy reaches an in-cluster address from here: it needs `get` on services/proxy.
    if (
        service &&
        !(await cluster.reviewSelf({ verb: "get", group: "", resource: "services", subresource: "proxy", namespace: service.namespace, name: service.service }))
            .allowed
    ) {
        return { skipped: `verify may not get services/proxy in ${service.namespace}; ${instead}` };
    }
    const ask = async (query: string) => {
        let answer: { status: number; body: string };
        if (service) {
            answer = await cluster.proxyGet(service.namespace, service.service, service.port, `${service.path}/api/v1/query`, { query }, headers);
            if (answer.status === 503 || answer.status === 502) {
                throw fail(`the API server could not reach the Service (HTTP ${answer.status}); if the control plane cannot reach pods, ${instead}`);
            }
        } else {
            const url = `${address.replace(/\/+$/, "")}/api/v1/query?query=${encodeURIComponent(query)}`;
            answer = await ctx.options.httpGet(url, headers, { extraCa: config.mimir.readCaBundle }).catch((e: Error & { code?: string }) => {
                const refused = certificateProblem(e);
                if (refused) throw fail(`${e.message}: ${certificateAdvice(refused, config.mimir.readCaBundle, address)}`);
                throw NETWORK_ERROR.test(e.message) ? new Stop({ skipped: `${address} is not reachable from here (${e.message}); ${instead}` }) : e;
            });
        }
        const result = queryAnswer(answer.status, answer.body);
        if (!result.ok) throw fail(result.why);
        return result;
    };
    try {
        const { series } = await ask(PROBE_QUERY);
        const labels = GATE_SELECTOR_LABELS.join(" and ");
        if (series === 0) {
            // An answer without the series is no gate path: every measurement would be Inconclusive.
            throw fail(
                `answered, but no ${BEYLA_REQUESTS} series with ${labels} in tenant ${tenant}: every gate of this cluster would be Inconclusive. The platform's Beyla must export its request metrics with their Kubernetes metadata to this tenant (docs/tenants/metric-gates.md)`,
            );
        }
        if (config.analysis.excludeRoutes.length === 0) {
            return { findings: [], note: `${PROBE_QUERY} = ${series} series (analysis.excludeRoutes is empty: every request counts, probes included)` };
        }
        const routed = (await ask(ROUTED_PROBE_QUERY)).series;
        if (routed === 0) {
            throw fail(
                `${series} series carry ${labels}, none carries ${BEYLA_ROUTE_LABEL}: the gates cannot leave out the kubelet's probes (analysis.excludeRoutes), so probes alone can fill analysis.minRequests and pass a version nobody calls. The platform's Beyla must export ${BEYLA_ROUTE_LABEL} (its routes section, on by default in Beyla 3.x; docs/tenants/metric-gates.md#probes-do-not-count), or set analysis.excludeRoutes: [] to count every request`,
            );
        }
        const counted = `${PROBE_QUERY} = ${series} series, ${routed} with ${BEYLA_ROUTE_LABEL}`;
        const gated = gatedRollouts((await cluster.list("/apis/argoproj.io/v1alpha1/rollouts")) ?? []);
        if (gated.length === 0) {
            return { findings: [], note: `${counted}; no Rollout references a request gate, so no folded probe route was looked for` };
        }
        const folded = foldedProbeRoutes((await ask(FOLDED_ROUTE_QUERY)).result, gated, config.analysis.excludeRoutes);
        const findings = folded.map((f) => ({
            object: ref("Rollout", f.rollout.namespace, f.rollout.name),
            found:
                `its series (ReplicaSet ${f.replicaSets.join(", ")}) carry ${BEYLA_ROUTE_LABEL}="${f.route}", a route Beyla folded that can hold the probe route${f.probes.length === 1 ? "" : "s"} ${f.probes.join(", ")}; ` +
                `${f.rollout.gates.join(", ")} count${f.rollout.gates.length === 1 ? "s" : ""} it (analysis.excludeRoutes matches routes exactly), so probes can fill analysis.minRequests and dilute errors and p99. ` +
                `Keep the probes out in the platform's Beyla: routes.ignored_patterns with the probe paths and ignore_mode metrics (or all), or routes.patterns naming them (docs/tenants/metric-gates.md#when-beyla-folds-a-probes-route)`,
        }));
        const rollouts = `${gated.length} Rollout${gated.length === 1 ? "" : "s"} with a request gate`;
        return {
            findings,
            note: findings.length > 0 ? `${counted}; ${rollouts}` : `${counted}; ${rollouts}, none with a probe route folded into a counted route`,
        };
    } catch (e) {
        if (e instanceof Stop) return e.judged;
        throw e;
    }
}
