/** `npm run bench`: each case in a fresh process against a floor measured in the same run (docs/maintainers/benchmarks.md). */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { PROJECT } from "../components/config/reader";
import { UsageError, argsOrExit, fileFlag, readFlags, runMain, scriptArgs } from "./cli";
import { REPO_ROOT, listStacks } from "./stackFile";
import { deployOrder } from "./deployOrder";

/** One run of a case: the figures the process reported (load or plan time, CPU, peak memory) and the whole process's time as the parent saw it. */
type Sample = Record<"processMs" | "peakRssMiB", number> & Record<string, number>;

const SPOKE_COUNTS = [1, 10, 100];

/** A hub's offline plan: at most three times the floor's time (schema validation with the packages as shipped is most of the rest). */
export const PLAN_TARGET_X_FLOOR = 3;

/** Program load under the CLI: at most twice the floor's time, and 250 MiB. */
export const LOAD_TARGETS = { timeXFloor: 2, peakMiB: 250 } as const;

/** Pulumi.yaml's `runtime.options.tsconfig`, resolved from `main` as @pulumi/pulumi v3.248.0 cmd/run/run.js does. */
export function cliTsconfig(root = REPO_ROOT): string {
    const project = YAML.parse(fs.readFileSync(path.join(root, "Pulumi.yaml"), "utf8")) as { main?: string; runtime?: { options?: { tsconfig?: string } } };
    const main = project.main ?? ".";
    const dir = fs.existsSync(path.join(root, main)) && fs.statSync(path.join(root, main)).isDirectory() ? main : path.dirname(main);
    return path.normalize(path.join(dir, project.runtime?.options?.tsconfig ?? "tsconfig.json"));
}

/**
 * The text of a hub's stack file with `n` synthetic spokes in place of its own, each with the read
 * rule, and a cluster and tenant of its own: beside the hub's file, one cluster per stack file.
 */
export function syntheticHubFile(n: number, root = REPO_ROOT, hub = "hub"): string {
    const doc = YAML.parseDocument(fs.readFileSync(path.join(root, `Pulumi.${hub}.yaml`), "utf8"));
    // Its ArgoCD runs where the hub's does: on itself when the hub's ran on the hub.
    const [cluster, argo] = [`${PROJECT}:cluster`, `${PROJECT}:argocd`];
    if (doc.getIn(["config", argo, "runsOn"]) === doc.getIn(["config", cluster, "name"])) doc.setIn(["config", argo, "runsOn"], `${hub}-${n}-spokes`);
    for (const key of ["name", "mimirTenant"]) doc.setIn(["config", cluster, key], `${hub}-${n}-spokes`);
    const spokes = Array.from({ length: n }, (_, i) => ({
        name: `spoke-${i}`,
        tenant: `spoke-${i}`,
        hostname: `mimir-spoke-${i}.hub.bench.example`,
        query: true,
    }));
    doc.setIn(["config", `${PROJECT}:spokes`], spokes);
    return doc.toString();
}

/** A folder with every stack file of the project (a plan reads the clusters of the files beside it) and `Pulumi.hub-<n>-spokes.yaml` for each count. */
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

/** The plan cases: every stack file of the project, then the synthetic hubs from their folder. */
export function planCases(
    stacks: readonly string[],
    syntheticDir: string,
    counts: readonly number[] = SPOKE_COUNTS,
): { label: string; stack: string; configDir?: string }[] {
    return [
        ...stacks.map((stack) => ({ label: stack, stack })),
        ...counts.map((n) => ({ label: `hub-${n}-spokes`, stack: `hub-${n}-spokes`, configDir: syntheticDir })),
    ];
}

/** Runs Node with `args` and reads the figures it reports: its last line of output, or the `--stats` file it writes. */
function sample(args: string[], env: NodeJS.ProcessEnv = process.env, statsFile?: string): Sample {
    const start = process.hrtime.bigint();
    const res = spawnSync(process.execPath, args, { cwd: REPO_ROOT, encoding: "utf8", env });
    const processMs = Number(process.hrtime.bigint() - start) / 1e6;
    if (res.status !== 0) throw new Error(`${args.join(" ")} failed:\n${res.stderr}`);
    const figures = statsFile ? fs.readFileSync(statsFile, "utf8") : (res.stdout.trim().split("\n").pop() ?? "{}");
    return { ...(JSON.parse(figures) as Sample), processMs };
}

/** The median of each figure over the runs; the peak memory is the highest. */
function median(samples: readonly Sample[]): Sample {
    const mid = (k: string) => [...samples.map((s) => s[k])].sort((a, b) => a - b)[Math.floor(samples.length / 2)];
    return { ...Object.fromEntries(Object.keys(samples[0]).map((k) => [k, mid(k)])), peakRssMiB: Math.max(...samples.map((s) => s.peakRssMiB)) } as Sample;
}

const USAGE = "usage: npm run bench [-- --runs N] [--no-engine] [--json FILE]";
const HELP = `${USAGE}

Measures the program's load, the offline plan of every stack and of synthetic hubs with 1, 10 and
100 spokes, and pulumi preview and up of the hub on the real engine, each as a ratio against a
floor measured in the same run, and where the engine's preview and up spend their time beside the
same phases of the floor (docs/maintainers/benchmarks.md). Prints markdown tables.

  --runs N      runs per case, the median is kept (default 3)
  --no-engine   skip the real engine's part (it builds the engines and starts local clusters)
  --json FILE   also write every figure with its floor and target there`;

export function parseBenchArgs(argv: readonly string[]): { runs: number; engine: boolean; json?: string } | "help" {
    const flags = readFlags(argv, { runs: { type: "string" }, "no-engine": { type: "boolean" }, json: { type: "string" } }, USAGE);
    if (flags === "help") return flags;
    const runs = /^[0-9]+$/.test(flags.runs ?? "3") ? Number(flags.runs ?? "3") : NaN;
    if (!Number.isSafeInteger(runs) || runs < 1) {
        throw new UsageError(`--runs ${JSON.stringify(flags.runs)}: must be a whole number of at least 1; ${USAGE}`);
    }
    return { runs, engine: !flags["no-engine"], ...(flags.json ? { json: path.resolve(fileFlag("--json", flags.json, "output")) } : {}) };
}

const ratios = (r: Sample, floor: Sample) => ({
    timeXFloor: r.processMs / floor.processMs,
    cpuXFloor: r.cpuMs / floor.cpuMs,
    memoryXFloor: r.peakRssMiB / floor.peakRssMiB,
});
const fixed = (n: number, digits = 0) => n.toFixed(digits);
const FLOOR = "plain Node loading @pulumi/pulumi + @pulumi/kubernetes";

async function main({ runs, engine, json }: { runs: number; engine: boolean; json?: string }): Promise<void> {
    const machine = `${os.cpus().length} cores, Node ${process.version}`;
    const figures: Record<string, unknown> = { machine: { cores: os.cpus().length, node: process.version }, runs };
    const writeJson = () => json && fs.writeFileSync(json, JSON.stringify(figures, null, 2) + "\n");
    const probe = (...args: string[]) => {
        // The CLI's own switch would override the tsconfig: measure what the tsconfig decides.
        const { PULUMI_NODEJS_TRANSPILE_ONLY: _, ...env } = process.env;
        return sample([path.join(REPO_ROOT, "tools", "load-probe.js"), ...args], env);
    };

    const tsconfig = cliTsconfig();
    const loads: [string, string[]][] = [
        [`floor: @pulumi/pulumi + @pulumi/kubernetes`, ["floor"]],
        [`program, as the CLI loads it (${tsconfig})`, ["program", tsconfig]],
        ["program, type-checked at load (tsconfig.json)", ["program", "tsconfig.json"]],
    ];
    const loaded = loads.map(([label, args]) => [label, median(Array.from({ length: runs }, () => probe(...args)))] as const);
    const [floor, cli] = [loaded[0][1], loaded[1][1]];
    console.log(`program load: median of ${runs} runs, ${machine}\n`);
    console.log("| case | load ms | process ms | peak MiB | time x floor | memory x floor |\n|---|---:|---:|---:|---:|---:|");
    for (const [label, r] of loaded) {
        const x = ratios(r, floor);
        console.log(
            `| ${label} | ${fixed(r.loadMs)} | ${fixed(r.processMs)} | ${fixed(r.peakRssMiB)} | ${fixed(x.timeXFloor, 2)} | ${fixed(x.memoryXFloor, 2)} |`,
        );
    }
    const timeX = cli.processMs / floor.processMs;
    const met = (ok: boolean) => (ok ? "met" : "MISSED");
    figures.load = {
        floor: { label: loads[0][0], ...floor },
        cases: loaded.slice(1).map(([label, r]) => ({ label, ...r, ...ratios(r, floor) })),
        target: { ...LOAD_TARGETS, met: timeX <= LOAD_TARGETS.timeXFloor && cli.peakRssMiB <= LOAD_TARGETS.peakMiB },
    };
    console.log(
        `\ntargets (program as the CLI loads it): <= ${LOAD_TARGETS.timeXFloor}x the floor's time: ${fixed(timeX, 2)}x ${met(timeX <= LOAD_TARGETS.timeXFloor)}; ` +
            `<= ${LOAD_TARGETS.peakMiB} MiB: ${fixed(cli.peakRssMiB)} MiB ${met(cli.peakRssMiB <= LOAD_TARGETS.peakMiB)}\n`,
    );

    // Each plan as `npm run plan` runs it, so the ratio counts everything the plan adds to what any Pulumi program pays.
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    const command = scriptArgs(pkg.scripts.plan, REPO_ROOT);
    const hub = deployOrder().hubs[0];
    if (!hub) throw new Error(`no stack file in ${REPO_ROOT} has role: hub; the synthetic hubs are made of one`);
    const synthetic = syntheticStacks(SPOKE_COUNTS, hub);
    const cases = planCases(listStacks(), synthetic);
    const plan = (c: (typeof cases)[number]) => {
        const out = fs.mkdtempSync(path.join(os.tmpdir(), "bench-plan-"));
        const stats = path.join(out, "stats.json");
        try {
            return sample(
                [...command, "--stack", c.stack, "--out", out, "--stats", stats, ...(c.configDir ? ["--config-dir", c.configDir] : [])],
                process.env,
                stats,
            );
        } finally {
            fs.rmSync(out, { recursive: true, force: true });
        }
    };
    // Round by round, the floor first: a machine that gets busier or quieter moves the floor with the cases.
    const floors: Sample[] = [];
    const samples = new Map<string, Sample[]>(cases.map((c) => [c.label, []]));
    try {
        for (let round = 0; round < runs; round++) {
            floors.push(probe("floor"));
            cases.forEach((c) => samples.get(c.label)!.push(plan(c)));
        }
    } finally {
        fs.rmSync(synthetic, { recursive: true, force: true });
    }
    const base = median(floors);
    const results = new Map([...samples].map(([label, s]) => [label, median(s)]));
    console.log(`plan benchmark: median of ${runs} runs, ${machine}; each plan as npm run plan runs it (${pkg.scripts.plan})`);
    console.log(`floor (${FLOOR}): ${fixed(base.processMs)} ms, ${fixed(base.cpuMs)} ms CPU, ${fixed(base.peakRssMiB)} MiB peak\n`);
    console.log(
        "| case | resources | plan ms | process ms | CPU ms | peak MiB | time x floor | CPU x floor | memory x floor |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    );
    for (const [name, r] of results) {
        const x = ratios(r, base);
        const row = [r.resources, r.planMs, r.processMs, r.cpuMs, r.peakRssMiB].map((n) => fixed(n));
        console.log(`| ${name} | ${row.join(" | ")} | ${fixed(x.timeXFloor, 2)} | ${fixed(x.cpuXFloor, 2)} | ${fixed(x.memoryXFloor, 2)} |`);
    }
    const hubX = results.get(hub)!.processMs / base.processMs;
    figures.plan = {
        floor: { label: FLOOR, ...base },
        cases: [...results].map(([label, r]) => ({ label, ...r, ...ratios(r, base) })),
        target: { stack: hub, timeXFloor: PLAN_TARGET_X_FLOOR, met: hubX <= PLAN_TARGET_X_FLOOR },
    };
    const [one, ten, hundred] = SPOKE_COUNTS.map((n) => results.get(`hub-${n}-spokes`)!.planMs);
    console.log(`\ntarget (${hub} plan): <= ${PLAN_TARGET_X_FLOOR}x the floor's time: ${fixed(hubX, 2)}x ${met(hubX <= PLAN_TARGET_X_FLOOR)}`);
    console.log(`\nplan time per added spoke: ${fixed((ten - one) / 9, 1)} ms (1->10), ${fixed((hundred - ten) / 90, 1)} ms (10->100)`);

    if (engine) {
        // The real engine in a process of its own, so the program's tools never import the end-to-end harness.
        const engineJson = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-engine-")), "engine.json");
        console.log("");
        const args = ["--require", "./tools/swc-register.js", "e2e/bench.ts", "--runs", String(runs), "--json", engineJson];
        const res = spawnSync(process.execPath, args, { cwd: REPO_ROOT, stdio: "inherit" });
        if (res.status !== 0) {
            writeJson();
            throw new Error("the engine benchmark failed (see above)");
        }
        figures.engine = JSON.parse(fs.readFileSync(engineJson, "utf8")) as unknown;
        fs.rmSync(path.dirname(engineJson), { recursive: true, force: true });
    }
    writeJson();
}

if (require.main === module) runMain(() => main(argsOrExit(() => parseBenchArgs(process.argv.slice(2)), HELP)));
