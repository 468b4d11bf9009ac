/**
 * The metrics path of the delivery scenarios: a real Prometheus for the PromQL engine, a stand-in
 * for Mimir's gateway in front of it, and synthetic Beyla RED series pushed into it.
 *
 * - Prometheus 3.x answers the gates' queries (its own parser and evaluator decide them) and takes
 *   the series through its OTLP receiver (`--web.enable-otlp-receiver`, POST /api/v1/otlp/v1/metrics;
 *   prometheus/prometheus web/api/v1/api.go at v3.14.0). OTLP names are translated with
 *   underscore escaping and unit suffixes by default (config/config.go), so Beyla's
 *   `http.server.request.duration` (unit s) arrives as `http_server_request_duration_seconds_*`
 *   and its `k8s.replicaset.name` attribute as `k8s_replicaset_name`, as Beyla exports them.
 * - The Mimir stand-in serves only the `/prometheus` prefix, over HTTPS with a certificate of the
 *   run's private CA when given one (as the hub's ingest Gateway serves a spoke's read endpoint),
 *   and, as Mimir with multi-tenancy on,
 *   refuses a request without `X-Scope-OrgID` (401 "no org id"); it also refuses any other tenant
 *   than the cluster's, so a gate that sent the wrong tenant fails instead of reading another
 *   tenant's data. Every request is recorded with its tenant.
 */
import * as fs from "fs";
import * as http from "http";
import * as https from "https";
import * as path from "path";
import { TENANT_HEADER } from "../../components/mimir";
import { Proc, freePort, logTail, startProc, waitFor } from "./procs";

export interface PromServer {
    url: string;
    proc: Proc;
}

/**
 * The recording rule Sloth generates for an SLO's remaining error budget (slok/sloth: the
 * `slo:period_error_budget_remaining:ratio` metadata rule), here recorded from the gauge
 * `SlothBudgets` pushes, so the error-budget templates read the rule they read on a platform, under
 * its own name and labels.
 */
export const SLOTH_BUDGET_RULES = `groups:
  - name: sloth-stand-in
    interval: 2s
    rules:
      - record: slo:period_error_budget_remaining:ratio
        expr: e2e_slo_budget_remaining
`;

/** Starts Prometheus with an empty scrape config, its OTLP receiver on, on a free port. */
export async function startPrometheus(bin: string, dir: string): Promise<PromServer> {
    const home = path.join(dir, "prometheus");
    fs.mkdirSync(home, { recursive: true });
    const config = path.join(home, "prometheus.yml");
    const rules = path.join(home, "sloth.rules.yml");
    fs.writeFileSync(rules, SLOTH_BUDGET_RULES);
    // Nothing is scraped: every sample is pushed. The out-of-order window admits a push that
    // arrives a little behind another one of the same series.
    fs.writeFileSync(
        config,
        `global:\n  evaluation_interval: 5s\nrule_files:\n  - ${JSON.stringify(rules)}\nstorage:\n  tsdb:\n    out_of_order_time_window: 1m\n`,
    );
    const port = await freePort();
    const proc = startProc(
        "prometheus",
        path.join(bin, "prometheus"),
        [`--config.file=${config}`, `--storage.tsdb.path=${path.join(home, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--web.enable-otlp-receiver"],
        { logDir: dir },
    );
    const url = `http://127.0.0.1:${port}`;
    await waitFor(
        "Prometheus /-/ready",
        60_000,
        async () => (await request(`${url}/-/ready`)).status === 200,
        () => logTail(proc),
    );
    return { url, proc };
}

export interface HttpAnswer {
    status: number;
    body: string;
}

export function request(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
        const req = http.request(url, { method: opts.method ?? "GET", headers: opts.headers, timeout: 10_000 }, (res) => {
            let body = "";
            res.on("data", (c) => (body += c));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("error", reject);
        req.on("timeout", () => req.destroy(new Error(`timeout: ${url}`)));
        req.end(opts.body);
    });
}

export interface MimirRequest {
    path: string;
    tenant: string | undefined;
    status: number;
    query?: string;
}

export interface MimirStandIn {
    /** The read endpoint a stack points `mimir.readEndpoint` at (ends in /prometheus). */
    readEndpoint: string;
    requests: MimirRequest[];
    close(): Promise<void>;
}

/** Mimir's gateway in front of `prom`, for one tenant; over HTTPS with `tls` (PEM files). */
export async function startMimirStandIn(prom: PromServer, tenant: string, tls?: { certFile: string; keyFile: string }): Promise<MimirStandIn> {
    const requests: MimirRequest[] = [];
    const header = TENANT_HEADER.toLowerCase();
    const handler: http.RequestListener = (req, res) => {
        let body = "";
        req.on("data", (c) => (body += c));
        req.on("end", () => {
            const url = new URL(req.url ?? "/", "http://mimir");
            const got = req.headers[header];
            const org = Array.isArray(got) ? got.join(",") : got;
            const query = url.searchParams.get("query") ?? new URLSearchParams(body).get("query") ?? undefined;
            const answer = (status: number, text: string, type = "text/plain") => {
                requests.push({ path: url.pathname, tenant: org, status, ...(query ? { query } : {}) });
                res.writeHead(status, { "content-type": type }).end(text);
            };
            if (!url.pathname.startsWith("/prometheus/")) {
                return answer(404, "404 page not found\n");
            }
            if (!org) {
                return answer(401, "no org id\n");
            }
            if (org !== tenant) {
                return answer(403, `tenant ${org} is not served here\n`);
            }
            const upstream = `${prom.url}${url.pathname.slice("/prometheus".length)}${url.search}`;
            request(upstream, {
                method: req.method,
                headers: { "content-type": req.headers["content-type"] ?? "application/x-www-form-urlencoded" },
                body: body || undefined,
            }).then(
                (r) => answer(r.status, r.body, "application/json"),
                (err: Error) => answer(502, err.message),
            );
        });
    };
    const server = tls ? https.createServer({ cert: fs.readFileSync(tls.certFile), key: fs.readFileSync(tls.keyFile) }, handler) : http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const addr = server.address();
    const port = typeof addr === "object" && addr ? addr.port : 0;
    return {
        readEndpoint: `${tls ? "https" : "http"}://127.0.0.1:${port}/prometheus`,
        requests,
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
}

/**
 * Beyla's request-duration histogram boundaries (OpenTelemetry's defaults,
 * go.opentelemetry.io/obi pkg/export/bucket.go `DefaultBuckets`, vendored by grafana/beyla).
 */
export const BEYLA_BOUNDS = [0, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** Traffic of one ReplicaSet's pods, per second: how many requests, which share 5xx, how slow, on which route. */
export interface Traffic {
    requestsPerSecond: number;
    errorRatio: number;
    latencySeconds: number;
    /** Beyla's `http.route` of these requests (default the demo app's `/color`). */
    route?: string;
}

/** The demo app's route (argoproj/rollouts-demo serves its color at /color). */
export const APP_ROUTE = "/color";

interface SeriesState {
    namespace: string;
    replicaSet: string;
    route: string;
    status: number;
    count: number;
    sum: number;
    buckets: number[];
    start: bigint;
}

/**
 * Cumulative Beyla series for the ReplicaSets of a run, pushed every `periodMs` while traffic is
 * set. A series exists only once a request was counted for it, as with Beyla (an expiring vector:
 * no traffic, no series).
 */
export class BeylaSeries {
    private traffic = new Map<string, Traffic & { namespace: string; replicaSet: string; route: string }>();
    private series = new Map<string, SeriesState>();
    private timer: NodeJS.Timeout | undefined;
    private last = Date.now();
    pushes = 0;
    lastError: string | undefined;

    constructor(
        private readonly prom: PromServer,
        private readonly periodMs = 2000,
    ) {}

    /** Sets (or with undefined, stops) the traffic of one ReplicaSet on one route (default the app's). */
    set(namespace: string, replicaSet: string, traffic: Traffic | undefined, route = traffic?.route ?? APP_ROUTE): void {
        const key = `${namespace}/${replicaSet}${route}`;
        if (traffic) {
            this.traffic.set(key, { ...traffic, route, namespace, replicaSet });
        } else {
            this.traffic.delete(key);
        }
    }

    clear(): void {
        this.traffic.clear();
    }

    start(): void {
        this.last = Date.now();
        this.timer = setInterval(() => void this.tick(), this.periodMs);
    }

    stop(): void {
        if (this.timer) {
            clearInterval(this.timer);
        }
        this.timer = undefined;
    }

    private account(t: Traffic & { namespace: string; replicaSet: string; route: string }, status: number, n: number): void {
        if (n <= 0) {
            return;
        }
        const key = `${t.namespace}/${t.replicaSet}/${status}${t.route}`;
        let s = this.series.get(key);
        if (!s) {
            s = {
                namespace: t.namespace,
                replicaSet: t.replicaSet,
                route: t.route,
                status,
                count: 0,
                sum: 0,
                buckets: new Array(BEYLA_BOUNDS.length + 1).fill(0),
                start: BigInt(Date.now()) * 1_000_000n,
            };
            this.series.set(key, s);
        }
        s.count += n;
        s.sum += n * t.latencySeconds;
        const i = BEYLA_BOUNDS.findIndex((b) => t.latencySeconds <= b);
        s.buckets[i === -1 ? BEYLA_BOUNDS.length : i] += n;
    }

    private async tick(): Promise<void> {
        const now = Date.now();
        const dt = (now - this.last) / 1000;
        this.last = now;
        for (const t of this.traffic.values()) {
            const total = Math.round(t.requestsPerSecond * dt);
            const failed = Math.round(total * t.errorRatio);
            this.account(t, 200, total - failed);
            this.account(t, 503, failed);
        }
        if (this.series.size === 0) {
            return;
        }
        const time = String(BigInt(now) * 1_000_000n);
        const attr = (key: string, value: string | number) => ({
            key,
            value: typeof value === "number" ? { intValue: String(value) } : { stringValue: value },
        });
        const dataPoints = [...this.series.values()].map((s) => ({
            attributes: [
                attr("k8s.namespace.name", s.namespace),
                attr("k8s.replicaset.name", s.replicaSet),
                attr("http.response.status.code", s.status),
                attr("http.route", s.route),
            ],
            startTimeUnixNano: String(s.start),
            timeUnixNano: time,
            count: String(s.count),
            sum: s.sum,
            bucketCounts: s.buckets.map(String),
            explicitBounds: BEYLA_BOUNDS,
        }));
        const body = JSON.stringify({
            resourceMetrics: [
                {
                    resource: { attributes: [attr("service.name", "beyla-e2e")] },
                    scopeMetrics: [
                        {
                            scope: { name: "argo-rollouts-addon-e2e" },
                            metrics: [{ name: "http.server.request.duration", unit: "s", histogram: { aggregationTemporality: 2, dataPoints } }],
                        },
                    ],
                },
            ],
        });
        try {
            const r = await request(`${this.prom.url}/api/v1/otlp/v1/metrics`, { method: "POST", headers: { "content-type": "application/json" }, body });
            this.pushes++;
            this.lastError = r.status === 200 ? undefined : `${r.status} ${r.body}`;
        } catch (err) {
            this.lastError = (err as Error).message;
        }
    }
}

/**
 * Remaining error budgets of SLOs, pushed every `periodMs` as the gauge `e2e.slo.budget.remaining`
 * with Sloth's `sloth_service` and `sloth_slo` labels (OTLP, no unit: Prometheus names it
 * `e2e_slo_budget_remaining`); the recording rule of SLOTH_BUDGET_RULES turns it into Sloth's
 * metadata series. An SLO never set has no series, as an SLO nobody authored.
 */
export class SlothBudgets {
    private budgets = new Map<string, { service: string; slo: string; remaining: number }>();
    private timer: NodeJS.Timeout | undefined;
    lastError: string | undefined;

    constructor(
        private readonly prom: PromServer,
        private readonly periodMs = 2000,
    ) {}

    /**
     * Sets an SLO's remaining budget and waits until Sloth's recorded series reads it, so the next
     * measurement of a gate sees the new value, not the one the rule recorded before.
     */
    async set(service: string, slo: string, remaining: number): Promise<void> {
        this.budgets.set(`${service}/${slo}`, { service, slo, remaining });
        await this.push();
        const query = `slo:period_error_budget_remaining:ratio{sloth_service="${service}",sloth_slo="${slo}"}`;
        await waitFor(
            `Sloth's rule to record ${remaining} for ${service}/${slo}`,
            30_000,
            async () => {
                const r = await request(`${this.prom.url}/api/v1/query?query=${encodeURIComponent(query)}`);
                const body = JSON.parse(r.body) as { data?: { result?: { value: [number, string] }[] } };
                const values = (body.data?.result ?? []).map((x) => Number(x.value[1]));
                return values.length === 1 && values[0] === remaining;
            },
            () => `last push: ${this.lastError ?? "accepted"}`,
        );
    }

    start(): void {
        this.timer = setInterval(() => void this.push(), this.periodMs);
    }

    stop(): void {
        if (this.timer) {
            clearInterval(this.timer);
        }
        this.timer = undefined;
    }

    private async push(): Promise<void> {
        if (this.budgets.size === 0) {
            return;
        }
        const time = String(BigInt(Date.now()) * 1_000_000n);
        const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });
        const dataPoints = [...this.budgets.values()].map((b) => ({
            attributes: [attr("sloth_service", b.service), attr("sloth_slo", b.slo)],
            timeUnixNano: time,
            asDouble: b.remaining,
        }));
        const body = JSON.stringify({
            resourceMetrics: [
                {
                    resource: { attributes: [attr("service.name", "sloth-e2e")] },
                    scopeMetrics: [{ scope: { name: "argo-rollouts-addon-e2e" }, metrics: [{ name: "e2e.slo.budget.remaining", gauge: { dataPoints } }] }],
                },
            ],
        });
        try {
            const r = await request(`${this.prom.url}/api/v1/otlp/v1/metrics`, { method: "POST", headers: { "content-type": "application/json" }, body });
            this.lastError = r.status === 200 ? undefined : `${r.status} ${r.body}`;
        } catch (err) {
            this.lastError = (err as Error).message;
        }
    }
}
