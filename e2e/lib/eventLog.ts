/**
 * Where a `pulumi preview` or `up` spends its time, from the CLI's `--event-log` (one JSON engine
 * event a line, shapes of pulumi/pulumi sdk/go/common/apitype/events.go at v3.248.0). The events'
 * own `timestamp` is in whole seconds, so each line is stamped with the time it reached the file
 * (tailed every few milliseconds) instead. The preflight's reads happen inside the program before it
 * declares anything, so no event marks them: a `--require`d probe records the program's HTTP(S)
 * requests (gRPC to the engine goes over http2 and is not counted).
 */
import * as fs from "fs";
import * as path from "path";

interface StepMetadata {
    op: string;
    urn: string;
    type: string;
    /** `custom` is false (omitted) for a component: its span is its children's. */
    old?: { custom?: boolean } | null;
    new?: { custom?: boolean } | null;
}

/** The fields of apitype.EngineEvent the breakdown reads. */
export interface EngineEvent {
    sequence: number;
    preludeEvent?: unknown;
    policyLoadEvent?: unknown;
    summaryEvent?: unknown;
    resourcePreEvent?: { metadata: StepMetadata };
    resOutputsEvent?: { metadata: StepMetadata };
}

/** An event and when it reached the log, in ms since the CLI was started. */
export interface Arrival {
    ms: number;
    event: EngineEvent;
}

/** One of the program's HTTP(S) requests, in ms since the CLI was started. */
export interface Request {
    start: number;
    end: number;
}

export interface Phases {
    /** CLI start to the first engine event: the backend, the stack, the plugins resolved. */
    engineStartMs: number;
    /** The policy pack's process started and its policies loaded: policyLoadEvent to the next event (the engine waits for every pack, pulumi/pulumi pkg/engine/update.go at v3.248.0). */
    policyPackMs: number;
    /** The Stack resource registered to the program's first read (or first declaration without reads). */
    programLoadMs: number;
    /** The program's reads of the cluster (the preflight): first request to last answer, and how many. */
    preflightReadsMs: number;
    preflightReads: number;
    /** The Stack resource registered to the last resource event: the program's whole run. */
    programSpanMs: number;
    /** The chart's step (kubernetes:helm.sh/v4:Chart) and its objects, start to finish, and when (ms since the CLI's start). */
    chartMs: number;
    chartFromMs: number;
    chartToMs: number;
    /** Steps of the kinds the provider awaits readiness for, the chart's too, summed (they overlap one another). */
    readinessMs: number;
    /**
     * Every other step by type: how many, their summed time (steps run in parallel; a component's
     * span covers its children's steps), and the first one's start and the last one's end, ms since
     * the CLI's start: the order the engine got to them in.
     */
    steps: Record<string, { count: number; ms: number; fromMs: number; toMs: number; component?: true }>;
    /** The program's end to the CLI's exit: the stack's policies, the snapshot, the summary. */
    finishMs: number;
    totalMs: number;
}

/**
 * Kinds whose create the kubernetes provider awaits on other controllers (pulumi/pulumi-kubernetes
 * provider/pkg/await/awaiters.go, v4.25.0); their steps are mostly readiness awaits.
 */
const AWAITED = /:(apps\/v1:(Deployment|StatefulSet|DaemonSet)|batch\/v1:Job|core\/v1:(Pod|Service|PersistentVolumeClaim)|networking\.k8s\.io\/v1:Ingress)$/;
const CHART = "kubernetes:helm.sh/v4:Chart";
const STACK = "pulumi:pulumi:Stack";

/** The breakdown of one run: its events as they arrived, the program's requests and the CLI's whole time. */
export function phases(arrivals: readonly Arrival[], requests: readonly Request[], totalMs: number): Phases {
    const at = (f: (e: EngineEvent) => boolean) => arrivals.find((a) => f(a.event))?.ms;
    const first = arrivals[0]?.ms ?? totalMs;
    const loads = arrivals.filter((a) => a.event.policyLoadEvent);
    const afterLoads = loads.length ? arrivals.find((a) => a.ms >= loads[loads.length - 1].ms && !a.event.policyLoadEvent)?.ms : undefined;
    const stackPre = at((e) => e.resourcePreEvent?.metadata.type === STACK) ?? first;
    // A preview reports the Stack's outputs as soon as it is registered: the program ends with its last resource event.
    const resources = arrivals.filter((a) => a.event.resourcePreEvent || a.event.resOutputsEvent);
    const stackOut = resources.length ? resources[resources.length - 1].ms : totalMs;
    const declared = at((e) => !!e.resourcePreEvent && e.resourcePreEvent.metadata.type !== STACK) ?? stackOut;
    const reads = requests.filter((r) => r.start >= stackPre);
    const readStart = reads.length ? Math.min(...reads.map((r) => r.start)) : declared;
    const pre = new Map<string, number>();
    const p: Phases = {
        engineStartMs: first,
        policyPackMs: loads.length ? (afterLoads ?? totalMs) - loads[0].ms : 0,
        programLoadMs: Math.min(readStart, declared) - stackPre,
        preflightReadsMs: reads.length ? Math.max(...reads.map((r) => r.end)) - readStart : 0,
        preflightReads: reads.length,
        programSpanMs: stackOut - stackPre,
        chartMs: 0,
        chartFromMs: 0,
        chartToMs: 0,
        readinessMs: 0,
        steps: {},
        finishMs: totalMs - stackOut,
        totalMs,
    };
    let chart: [number, number] | undefined;
    for (const { ms, event } of arrivals) {
        const m = event.resourcePreEvent?.metadata;
        if (m) pre.set(m.urn, ms);
        const o = event.resOutputsEvent?.metadata;
        const start = o && pre.get(o.urn);
        if (!o || start === undefined || o.type === STACK) continue;
        const inChart = o.type === CHART || o.urn.includes(`${CHART}$`);
        if (inChart) chart = [Math.min(chart?.[0] ?? start, start), Math.max(chart?.[1] ?? ms, ms)];
        if (AWAITED.test(o.type)) p.readinessMs += ms - start;
        else if (!inChart) {
            const component = (o.new ?? o.old)?.custom ? {} : { component: true as const };
            const s = (p.steps[o.type] ??= { count: 0, ms: 0, fromMs: start, toMs: ms, ...component });
            s.count++;
            s.ms += ms - start;
            [s.fromMs, s.toMs] = [Math.min(s.fromMs, start), Math.max(s.toMs, ms)];
        }
    }
    [p.chartFromMs, p.chartToMs] = chart ?? [0, 0];
    p.chartMs = p.chartToMs - p.chartFromMs;
    return p;
}

/** Parses the complete lines of an event log stamped with their arrival. */
export function parseLines(text: string, ms: number): Arrival[] {
    return text
        .split("\n")
        .filter((l) => l.trim())
        .map((l) => ({ ms, event: JSON.parse(l) as EngineEvent }));
}

/** Tails `file` from now on; `stop()` returns every event with the time it arrived (ms since `t0`). */
export function tailEventLog(file: string, t0: number): { stop(): Arrival[] } {
    const arrivals: Arrival[] = [];
    let offset = 0;
    let rest = "";
    const poll = () => {
        // The CLI creates the file once it starts; until then there is nothing to read.
        const size = fs.existsSync(file) ? fs.statSync(file).size : 0;
        if (size <= offset) return;
        const fd = fs.openSync(file, "r");
        const buf = Buffer.alloc(size - offset);
        fs.readSync(fd, buf, 0, buf.length, offset);
        fs.closeSync(fd);
        offset = size;
        const text = rest + buf.toString("utf8");
        const cut = text.lastIndexOf("\n") + 1;
        rest = text.slice(cut);
        arrivals.push(...parseLines(text.slice(0, cut), Date.now() - t0));
    };
    const timer = setInterval(poll, 5);
    return {
        stop() {
            clearInterval(timer);
            poll();
            return arrivals;
        },
    };
}

/**
 * A script for NODE_OPTIONS=--require that appends each HTTP(S) request of the process (start and
 * end, ms since the epoch) to $BENCH_REQUESTS_FILE; written into `dir`, returns its path.
 */
export function writeRequestProbe(dir: string): string {
    const file = path.join(dir, "bench-request-probe.js");
    fs.writeFileSync(
        file,
        `const fs = require("fs");
const out = process.env.BENCH_REQUESTS_FILE;
for (const mod of [require("http"), require("https")]) {
    const request = mod.request;
    mod.request = function (...args) {
        const start = Date.now();
        const req = request.apply(this, args);
        req.on("close", () => out && fs.appendFileSync(out, JSON.stringify({ start, end: Date.now() }) + "\\n"));
        return req;
    };
}
`,
    );
    return file;
}

/** The requests the probe recorded, in ms since `t0`. */
export function readRequests(file: string, t0: number): Request[] {
    if (!fs.existsSync(file)) return [];
    return fs
        .readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l)
        .map((l) => JSON.parse(l) as Request)
        .map((r) => ({ start: r.start - t0, end: r.end - t0 }));
}

/** The median of each figure over the runs (each step type over the runs that have it). */
export function medianPhases(runs: readonly Phases[]): Phases {
    const mid = (xs: number[]) => {
        const s = [...xs].sort((a, b) => a - b);
        return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    };
    const keys = Object.keys(runs[0]).filter((k) => k !== "steps") as Exclude<keyof Phases, "steps">[];
    const types = [...new Set(runs.flatMap((r) => Object.keys(r.steps)))].sort();
    const steps = Object.fromEntries(
        types.map((t) => {
            const has = runs.filter((r) => r.steps[t]);
            const of = (k: "count" | "ms" | "fromMs" | "toMs") => mid(has.map((r) => r.steps[t][k]));
            return [t, { ...has[0].steps[t], count: of("count"), ms: of("ms"), fromMs: of("fromMs"), toMs: of("toMs") }];
        }),
    );
    return { ...(Object.fromEntries(keys.map((k) => [k, mid(runs.map((r) => r[k]))])) as Omit<Phases, "steps">), steps };
}

/** A markdown table of the phases, one column per case; step types in the order they began (their earliest start in any column). */
export function breakdownTable(columns: readonly [string, Phases][]): string[] {
    const row = (label: string, f: (p: Phases) => string) => `| ${label} | ${columns.map(([, p]) => f(p)).join(" | ")} |`;
    const ms = (n: number) => n.toFixed(0);
    const types = [...new Set(columns.flatMap(([, p]) => Object.keys(p.steps)))];
    const began = (t: string) => Math.min(...columns.map(([, p]) => p.steps[t]?.fromMs ?? Infinity));
    const step = (t: string) => (p: Phases) =>
        p.steps[t] ? `${ms(p.steps[t].ms)} (${p.steps[t].count}) at ${ms(p.steps[t].fromMs)}-${ms(p.steps[t].toMs)}` : "";
    return [
        `| phase, ms | ${columns.map(([label]) => label).join(" | ")} |`,
        `|---|${columns.map(() => "---:").join("|")}|`,
        row("engine start (CLI to first event)", (p) => ms(p.engineStartMs)),
        row("policy pack: process and load", (p) => ms(p.policyPackMs)),
        row("program load (Stack registered to first read)", (p) => ms(p.programLoadMs)),
        row("preflight reads (first to last, count)", (p) => `${ms(p.preflightReadsMs)} (${p.preflightReads})`),
        row("program span (Stack registered to its last resource event)", (p) => ms(p.programSpanMs)),
        row("chart (its step and objects, wall, at from-to)", (p) => (p.chartMs ? `${ms(p.chartMs)} at ${ms(p.chartFromMs)}-${ms(p.chartToMs)}` : "0")),
        row("readiness awaits (awaited kinds' steps, the chart's too, summed)", (p) => ms(p.readinessMs)),
        ...types
            .sort((a, b) => began(a) - began(b))
            .map((t) =>
                row(`${columns.some(([, p]) => p.steps[t]?.component) ? "component" : "steps"}: ${t} (summed, count, at first start-last end)`, step(t)),
            ),
        row("finish (program end to CLI exit)", (p) => ms(p.finishMs)),
        row("total", (p) => ms(p.totalMs)),
    ];
}
