/**
 * `npm run bench`, every case in a fresh process so its peak memory is its own, each against a floor
 * measured in the same run: program load as the Pulumi CLI does it (tools/load-probe.js) against
 * plain Node loading @pulumi/pulumi and @pulumi/kubernetes; the offline plan of every stack and of
 * synthetic hubs with 1, 10 and 100 spokes, run as `npm run plan` runs it; and preview and up on the
 * real engine (e2e/bench.ts). docs/maintainers/benchmarks.md says how each is measured.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { PROJECT } from "../components/config/reader";
import { UsageError, argsOrExit, readFlags, scriptArgs } from "./cli";
import type { PlanStats } from "./plan";
import { REPO_ROOT, listStacks } from "./stackFile";
import { deployOrder } from "./deployOrder";

interface Sample {
    /** Inside the plan's process, from its start (its tools loaded) to its end (PlanStats). */
    planMs: number;
    /** The whole process, start to exit, as the parent saw it. */
    processMs: number;
    /** CPU time of the process (every thread) as it reported it at its end. */
    cpuMs: number;
    peakRssMiB: number;
    resources: number;
}

const SPOKE_COUNTS = [1, 10, 100];

/**
 * Target for a hub's offline plan: at most three times the floor's time. Schema validation with
 * the packages as shipped compiles a kind's schema in every plan; a faster plan is not worth a
 * restatement of their validator to maintain.
 */
export const PLAN_TARGET_X_FLOOR = 3;

/** Targets for program load under the CLI: at most twice the floor's time, and 250 MiB. */
export const LOAD_TARGETS = { timeXFloor: 2, peakMiB: 250 } as const;

/**
 * The folder the Pulumi CLI runs the program in: Pulumi.yaml `main` when it names a folder. The
 * Node.js language host passes it as --pwd and @pulumi/pulumi's cmd/run/run.js changes to it before
 * it reads anything (pulumi/pulumi sdk/nodejs/cmd/pulumi-language-nodejs/main.go constructArguments,
 * sdk/nodejs/cmd/run/run.js, v3.248.0). Relative to the project root.
 */
export function programDirectory(root = REPO_ROOT): string {
    const project = YAML.parse(fs.readFileSync(path.join(root, "Pulumi.yaml"), "utf8")) as { main?: string };
    const main = project.main ?? ".";
    const isDir = fs.existsSync(path.join(root, main)) && fs.statSync(path.join(root, main)).isDirectory();
    return path.normalize(isDir ? main : path.dirname(main)).replace(/\/$/, "") || ".";
}

/**
 * The tsconfig the Pulumi CLI loads the program with, relative to the project root:
 * Pulumi.yaml `runtime.options.tsconfig`, which run.js resolves from the program directory (it
 * checks the file exists there and fails the run with "tsconfig path was set to ... but the file
 * was not found" otherwise).
 */
export function cliTsconfig(root = REPO_ROOT): string {
    const project = YAML.parse(fs.readFileSync(path.join(root, "Pulumi.yaml"), "utf8")) as { runtime?: { options?: { tsconfig?: string } } };
    return path.normalize(path.join(programDirectory(root), project.runtime?.options?.tsconfig ?? "tsconfig.json"));
}

interface LoadSample {
    loadMs: number;
    processMs: number;
    peakRssMiB: number;
}

function spawnLoad(args: string[]): LoadSample {
    const env = { ...process.env };
    // The CLI's own switch would override the tsconfig: measure what the tsconfig decides.
    delete env.PULUMI_NODEJS_TRANSPILE_ONLY;
    const start = process.hrtime.bigint();
    const res = spawnSync(process.execPath, [path.join(REPO_ROOT, "tools", "load-probe.js"), ...args], { cwd: REPO_ROOT, encoding: "utf8", env });
    const processMs = Number(process.hrtime.bigint() - start) / 1e6;
    if (res.status !== 0) {
        throw new Error(`load probe ${args.join(" ")} failed:\n${res.stderr}`);
    }
    return { ...(JSON.parse(res.stdout.trim().split("\n").pop() ?? "{}") as Omit<LoadSample, "processMs">), processMs };
}

function medianLoad(samples: LoadSample[]): LoadSample {
    return {
        loadMs: median(samples.map((s) => s.loadMs)),
        processMs: median(samples.map((s) => s.processMs)),
        peakRssMiB: Math.max(...samples.map((s) => s.peakRssMiB)),
    };
}

/** The spokes of a synthetic hub with `n` of them, each with the read rule. */
export function syntheticSpokes(n: number): Record<string, unknown>[] {
    return Array.from({ length: n }, (_, i) => ({ name: `spoke-${i}`, tenant: `spoke-${i}`, hostname: `mimir-spoke-${i}.hub.bench.example`, query: true }));
}

/** The text of a hub's stack file with `n` synthetic spokes in place of its own. */
export function syntheticHubFile(n: number, root = REPO_ROOT, hub = "hub"): string {
    const doc = YAML.parseDocument(fs.readFileSync(path.join(root, `Pulumi.${hub}.yaml`), "utf8"));
    doc.setIn(["config", `${PROJECT}:spokes`], syntheticSpokes(n));
    return doc.toString();
}

/**
 * A folder of stack files for the synthetic cases: every stack file of the project (the plan reads
 * the clusters of the files beside a stack's) and `Pulumi.hub-<n>-spokes.yaml`, made of `hub`, for
 * each count.
 */
export function syntheticStacks(counts: readonly number[], hub: string, root = REPO_ROOT): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-stacks-"));
    for (const stack of listStacks(root)) {
        fs.copyFileSync(path.join(root, `Pulumi.${stack}.yaml`), path.join(dir, `Pulumi.${stack}.yaml`));
    }
    for (const n of counts) {
        fs.writeFileSync(path.join(dir, `Pulumi.hub-${n}-spokes.yaml`), syntheticHubFile(n, root, hub));
    }
    return dir;
}

/** A plan case: its row's label, the stack, and the folder of its stack file. */
export interface PlanCase {
    label: string;
    stack: string;
    configDir?: string;
}

/** The plan cases: every stack file of the project, then the synthetic hubs. */
export function planCases(stacks: readonly string[], syntheticDir: string, counts: readonly number[] = SPOKE_COUNTS): PlanCase[] {
    return [
        ...stacks.map((stack) => ({ label: stack, stack })),
        ...counts.map((n) => ({ label: `hub-${n}-spokes`, stack: `hub-${n}-spokes`, configDir: syntheticDir })),
    ];
}

/** The floor's child: plain Node loading only the two Pulumi packages. */
const FLOOR_SCRIPT = [
    'require("@pulumi/pulumi"); require("@pulumi/kubernetes");',
    "const cpu = process.cpuUsage();",
    'process.stdout.write(JSON.stringify({ planMs: 0, cpuMs: (cpu.user + cpu.system) / 1000, peakRssMiB: process.resourceUsage().maxRSS / 1024, resources: 0 }) + "\\n");',
].join(" ");

/** The floor: plain Node loading the two Pulumi packages, with no TypeScript at all. */
function spawnFloor(): Sample {
    const start = process.hrtime.bigint();
    const res = spawnSync(process.execPath, ["-e", FLOOR_SCRIPT], { cwd: REPO_ROOT, encoding: "utf8" });
    const processMs = Number(process.hrtime.bigint() - start) / 1e6;
    if (res.status !== 0) {
        throw new Error(`the floor failed:\n${res.stderr}`);
    }
    return { ...(JSON.parse(res.stdout.trim().split("\n").pop() ?? "{}") as Omit<Sample, "processMs">), processMs };
}

/**
 * One plan case, run as `npm run plan` runs it (package.json's script, from the project root), so
 * the ratio to the floor counts everything the plan adds (its loader, the tools, the program, the
 * guardrails, schema validation, the mock runtime, writing the plan) to what any Pulumi program
 * pays. The plan writes its own figures (`--stats`).
 */
function spawnPlan(command: readonly string[], stack: string, configDir?: string): Sample {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "bench-plan-"));
    const stats = path.join(out, "stats.json");
    try {
        const args = [...command, "--stack", stack, "--out", out, "--stats", stats, ...(configDir ? ["--config-dir", configDir] : [])];
        const start = process.hrtime.bigint();
        const res = spawnSync(process.execPath, args, { cwd: REPO_ROOT, encoding: "utf8" });
        const processMs = Number(process.hrtime.bigint() - start) / 1e6;
        if (res.status !== 0) {
            throw new Error(`the plan of ${stack} failed:\n${res.stderr}`);
        }
        return { ...(JSON.parse(fs.readFileSync(stats, "utf8")) as PlanStats), processMs };
    } finally {
        fs.rmSync(out, { recursive: true, force: true });
    }
}

function median(values: number[]): number {
    const s = [...values].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
}

function summarise(samples: Sample[]): Sample {
    return {
        planMs: median(samples.map((s) => s.planMs)),
        processMs: median(samples.map((s) => s.processMs)),
        cpuMs: median(samples.map((s) => s.cpuMs)),
        peakRssMiB: Math.max(...samples.map((s) => s.peakRssMiB)),
        resources: samples[0].resources,
    };
}

const USAGE = "usage: npm run bench [-- --runs N] [--no-engine] [--json FILE]";
const HELP = `${USAGE}

Measures the program's load, the offline plan of every stack and of synthetic hubs with 1, 10 and
100 spokes, and pulumi preview and up of the hub on the real engine, each as a ratio against a
floor measured in the same run (docs/maintainers/benchmarks.md). Prints markdown tables.

  --runs N      runs per case, the median is kept (default 3)
  --no-engine   skip the real engine's part (it builds the engines and starts local clusters)
  --json FILE   also write every figure with its floor and target there`;

export interface BenchArgs {
    runs: number;
    engine: boolean;
    /** Where to write every figure as JSON, if anywhere. */
    json?: string;
}

/** The bench's arguments; an unknown flag, a flag without its value or a bad count is a usage error. */
export function parseBenchArgs(argv: readonly string[]): BenchArgs | "help" {
    const flags = readFlags(argv, { runs: { type: "string" }, "no-engine": { type: "boolean" }, json: { type: "string" } }, USAGE);
    if (flags === "help") {
        return flags;
    }
    const runs = /^[0-9]+$/.test(flags.runs ?? "3") ? Number(flags.runs ?? "3") : NaN;
    if (!Number.isSafeInteger(runs) || runs < 1) {
        throw new UsageError(`--runs ${JSON.stringify(flags.runs)}: must be a whole number of at least 1; ${USAGE}`);
    }
    return { runs, engine: !flags["no-engine"], ...(flags.json ? { json: path.resolve(flags.json) } : {}) };
}

async function main(parsed: BenchArgs): Promise<void> {
    const runs = parsed.runs;

    const tsconfig = cliTsconfig();
    const loads: [string, string[]][] = [
        ["floor: @pulumi/pulumi + @pulumi/kubernetes", ["floor"]],
        [`program, as the CLI loads it (${tsconfig})`, ["program", tsconfig]],
        ["program, type-checked at load (tsconfig.json)", ["program", "tsconfig.json"]],
    ];
    const loadResults = loads.map(([label, args]) => [label, medianLoad(Array.from({ length: runs }, () => spawnLoad(args)))] as const);
    const floor = loadResults[0][1];
    const cli = loadResults[1][1];
    console.log(`program load: median of ${runs} runs, ${os.cpus().length} cores, Node ${process.version}`);
    console.log("");
    console.log("| case | load ms | process ms | peak MiB | time x floor | memory x floor |");
    console.log("|---|---:|---:|---:|---:|---:|");
    for (const [label, r] of loadResults) {
        console.log(
            `| ${label} | ${r.loadMs.toFixed(0)} | ${r.processMs.toFixed(0)} | ${r.peakRssMiB.toFixed(0)} | ${(r.processMs / floor.processMs).toFixed(2)} | ${(r.peakRssMiB / floor.peakRssMiB).toFixed(2)} |`,
        );
    }
    const timeX = cli.processMs / floor.processMs;
    const figures: Record<string, unknown> = {
        machine: { cores: os.cpus().length, node: process.version },
        runs,
        load: {
            floor: { label: loadResults[0][0], ...floor },
            cases: loadResults
                .slice(1)
                .map(([label, r]) => ({ label, ...r, timeXFloor: r.processMs / floor.processMs, memoryXFloor: r.peakRssMiB / floor.peakRssMiB })),
            target: { ...LOAD_TARGETS, met: timeX <= LOAD_TARGETS.timeXFloor && cli.peakRssMiB <= LOAD_TARGETS.peakMiB },
        },
    };
    const writeJson = () => {
        if (parsed.json) {
            fs.writeFileSync(parsed.json, JSON.stringify(figures, null, 2) + "\n");
        }
    };
    console.log("");
    console.log(
        `targets (program as the CLI loads it): <= ${LOAD_TARGETS.timeXFloor}x the floor's time: ${timeX.toFixed(2)}x ${timeX <= LOAD_TARGETS.timeXFloor ? "met" : "MISSED"}; ` +
            `<= ${LOAD_TARGETS.peakMiB} MiB: ${cli.peakRssMiB.toFixed(0)} MiB ${cli.peakRssMiB <= LOAD_TARGETS.peakMiB ? "met" : "MISSED"}`,
    );
    console.log("");

    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    const command = scriptArgs(pkg.scripts.plan, REPO_ROOT);
    const stacks = listStacks();
    // The deploy order's hubs: the stack files whose cluster.role is hub, in name order.
    const hub = deployOrder().hubs[0];
    if (!hub) {
        throw new Error(`no stack file in ${REPO_ROOT} has role: hub; the synthetic hubs are made of one`);
    }
    const synthetic = syntheticStacks(SPOKE_COUNTS, hub);
    const cases = planCases(stacks, synthetic);
    // Round by round, the floor first: a machine that gets busier or quieter during the run moves
    // the floor with the cases instead of skewing their ratios.
    const floorSamples: Sample[] = [];
    const samples = new Map<string, Sample[]>(cases.map((c) => [c.label, []]));
    try {
        for (let round = 0; round < runs; round++) {
            floorSamples.push(spawnFloor());
            for (const c of cases) {
                samples.get(c.label)!.push(spawnPlan(command, c.stack, c.configDir));
            }
        }
    } finally {
        fs.rmSync(synthetic, { recursive: true, force: true });
    }
    const baseline = summarise(floorSamples);
    const results = new Map([...samples].map(([stack, s]) => [stack, summarise(s)]));

    console.log(
        `plan benchmark: median of ${runs} runs, ${os.cpus().length} cores, Node ${process.version}; each plan as npm run plan runs it (${pkg.scripts.plan})`,
    );
    console.log(
        `floor (plain Node loading @pulumi/pulumi + @pulumi/kubernetes): ${baseline.processMs.toFixed(0)} ms, ${baseline.cpuMs.toFixed(0)} ms CPU, ${baseline.peakRssMiB.toFixed(0)} MiB peak`,
    );
    console.log("");
    console.log("| case | resources | plan ms | process ms | CPU ms | peak MiB | time x floor | CPU x floor | memory x floor |");
    console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const [name, r] of results) {
        console.log(
            `| ${name} | ${r.resources} | ${r.planMs.toFixed(0)} | ${r.processMs.toFixed(0)} | ${r.cpuMs.toFixed(0)} | ${r.peakRssMiB.toFixed(0)} | ` +
                `${(r.processMs / baseline.processMs).toFixed(2)} | ${(r.cpuMs / baseline.cpuMs).toFixed(2)} | ${(r.peakRssMiB / baseline.peakRssMiB).toFixed(2)} |`,
        );
    }
    const hubX = results.get(hub)!.processMs / baseline.processMs;
    figures.plan = {
        floor: { label: "plain Node loading @pulumi/pulumi + @pulumi/kubernetes", ...baseline },
        cases: [...results].map(([label, r]) => ({
            label,
            ...r,
            timeXFloor: r.processMs / baseline.processMs,
            cpuXFloor: r.cpuMs / baseline.cpuMs,
            memoryXFloor: r.peakRssMiB / baseline.peakRssMiB,
        })),
        target: { stack: hub, timeXFloor: PLAN_TARGET_X_FLOOR, met: hubX <= PLAN_TARGET_X_FLOOR },
    };
    console.log("");
    console.log(`target (${hub} plan): <= ${PLAN_TARGET_X_FLOOR}x the floor's time: ${hubX.toFixed(2)}x ${hubX <= PLAN_TARGET_X_FLOOR ? "met" : "MISSED"}`);
    const [one, ten, hundred] = SPOKE_COUNTS.map((n) => results.get(`hub-${n}-spokes`)!);
    const perSpokeLow = (ten.planMs - one.planMs) / (10 - 1);
    const perSpokeHigh = (hundred.planMs - ten.planMs) / (100 - 10);
    console.log("");
    console.log(`plan time per added spoke: ${perSpokeLow.toFixed(1)} ms (1->10), ${perSpokeHigh.toFixed(1)} ms (10->100)`);

    if (!parsed.engine) {
        writeJson();
        return;
    }
    // The real engine: e2e/bench.ts builds the engines (cached) and starts its own clusters. A
    // separate process, so the program's tools never import the end-to-end harness.
    console.log("");
    const engineJson = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-engine-")), "engine.json");
    const engine = spawnSync(
        process.execPath,
        ["--require", path.join(REPO_ROOT, "tools", "swc-register.js"), path.join(REPO_ROOT, "e2e", "bench.ts"), "--runs", String(runs), "--json", engineJson],
        { cwd: REPO_ROOT, stdio: "inherit" },
    );
    if (engine.status !== 0) {
        writeJson();
        throw new Error("the engine benchmark failed (see above)");
    }
    figures.engine = JSON.parse(fs.readFileSync(engineJson, "utf8")) as unknown;
    fs.rmSync(path.dirname(engineJson), { recursive: true, force: true });
    writeJson();
}

if (require.main === module) {
    main(argsOrExit(() => parseBenchArgs(process.argv.slice(2)), HELP)).catch((err: unknown) => {
        console.error(err instanceof Error ? err.message : String(err));
        process.exit(1);
    });
}
