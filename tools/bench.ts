/**
 * Benchmark, every case in a fresh process so peak memory is the case's own:
 * - program load as the Pulumi CLI does it (the tsconfig Pulumi.yaml names, ts-node registered as
 *   @pulumi/pulumi's cmd/run/run.js registers it; tools/load-probe.js), against the floor of a Node
 *   process loading @pulumi/pulumi and @pulumi/kubernetes, and against the same load type-checked;
 * - the offline plan for the project's stacks and for synthetic hubs with 1, 10 and 100 spokes: wall
 *   time, peak memory and resource count, against a baseline process loading the two packages.
 *
 * - `pulumi preview` and `pulumi up` of the hub on the real engine against a local control plane,
 *   against a floor program of one ConfigMap on the same engine (e2e/bench.ts; skip with
 *   --no-engine).
 *
 *   npm run bench [-- --runs 3] [--no-engine]
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { PROJECT } from "../components/config/reader";
import { planStack, writePlan } from "./plan";
import { REPO_ROOT, StackFile, readStackFile } from "./stackFile";

interface Sample {
    /** Evaluating the program and writing the plan, inside the process. */
    planMs: number;
    /** The whole process, start to exit, as the parent saw it. */
    processMs: number;
    peakRssMiB: number;
    resources: number;
}

const SPOKE_COUNTS = [1, 10, 100];

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
    return { loadMs: median(samples.map((s) => s.loadMs)), processMs: median(samples.map((s) => s.processMs)), peakRssMiB: Math.max(...samples.map((s) => s.peakRssMiB)) };
}

/** The hub stack file with `n` synthetic spokes, each with the read rule. */
export function syntheticHub(n: number, root = REPO_ROOT): StackFile {
    const hub = readStackFile("hub", root);
    const spokes = Array.from({ length: n }, (_, i) => ({ name: `spoke-${i}`, tenant: `spoke-${i}`, hostname: `mimir-spoke-${i}.hub.bench.example`, query: true }));
    return { ...hub, stack: `hub-${n}-spokes`, config: { ...hub.config, [`${PROJECT}:spokes`]: JSON.stringify(spokes) } };
}

function caseFile(name: string): StackFile {
    const m = /^hub-([0-9]+)-spokes$/.exec(name);
    return m ? syntheticHub(Number(m[1])) : readStackFile(name);
}

/** Child mode: plan one case and print its figures as JSON. */
async function runCase(name: string): Promise<void> {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "bench-plan-"));
    const start = process.hrtime.bigint();
    const run = await planStack(caseFile(name));
    writePlan(run, out);
    const planMs = Number(process.hrtime.bigint() - start) / 1e6;
    fs.rmSync(out, { recursive: true, force: true });
    const peakRssMiB = process.resourceUsage().maxRSS / 1024;
    process.stdout.write(JSON.stringify({ planMs, peakRssMiB, resources: run.resources.length }) + "\n");
}

/** The floor's child: plain Node loading only the two Pulumi packages. */
const FLOOR_SCRIPT =
    'require("@pulumi/pulumi"); require("@pulumi/kubernetes"); process.stdout.write(JSON.stringify({ planMs: 0, peakRssMiB: process.resourceUsage().maxRSS / 1024, resources: 0 }) + "\\n");';

/** Child mode: the baseline, loading only the two Pulumi packages. */
function runBaseline(): void {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require("@pulumi/pulumi");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require("@pulumi/kubernetes");
    process.stdout.write(JSON.stringify({ planMs: 0, peakRssMiB: process.resourceUsage().maxRSS / 1024, resources: 0 }) + "\n");
}

/**
 * A plan case runs as `npm run plan` runs (package.json: `ts-node --transpile-only`); the floor is
 * plain Node loading the two Pulumi packages, with no TypeScript at all, so the ratio counts
 * everything the plan adds (TypeScript, the tools, schema validation, the mock runtime) to what any
 * Pulumi program pays.
 */
function spawnCase(args: string[]): Sample {
    const start = process.hrtime.bigint();
    const floor = args[0] === "--baseline";
    const res = floor
        ? spawnSync(process.execPath, ["-e", FLOOR_SCRIPT], { cwd: REPO_ROOT, encoding: "utf8" })
        : spawnSync(process.execPath, ["-r", "ts-node/register/transpile-only", __filename, ...args], { cwd: REPO_ROOT, encoding: "utf8" });
    const processMs = Number(process.hrtime.bigint() - start) / 1e6;
    if (res.status !== 0) {
        throw new Error(`bench case ${args.join(" ")} failed:\n${res.stderr}`);
    }
    const line = res.stdout.trim().split("\n").pop() ?? "{}";
    return { ...(JSON.parse(line) as Omit<Sample, "processMs">), processMs };
}

function median(values: number[]): number {
    const s = [...values].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
}

function summarise(samples: Sample[]): Sample {
    return {
        planMs: median(samples.map((s) => s.planMs)),
        processMs: median(samples.map((s) => s.processMs)),
        peakRssMiB: Math.max(...samples.map((s) => s.peakRssMiB)),
        resources: samples[0].resources,
    };
}

async function main(): Promise<void> {
    const argv = process.argv.slice(2);
    if (argv[0] === "--case") {
        return runCase(argv[1]);
    }
    if (argv[0] === "--baseline") {
        return runBaseline();
    }
    const runsAt = argv.indexOf("--runs");
    const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 3;
    if (!Number.isInteger(runs) || runs < 1) {
        throw new Error("--runs takes a whole number of at least 1");
    }

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
        console.log(`| ${label} | ${r.loadMs.toFixed(0)} | ${r.processMs.toFixed(0)} | ${r.peakRssMiB.toFixed(0)} | ${(r.processMs / floor.processMs).toFixed(2)} | ${(r.peakRssMiB / floor.peakRssMiB).toFixed(2)} |`);
    }
    const timeX = cli.processMs / floor.processMs;
    console.log("");
    console.log(
        `targets (program as the CLI loads it): <= ${LOAD_TARGETS.timeXFloor}x the floor's time: ${timeX.toFixed(2)}x ${timeX <= LOAD_TARGETS.timeXFloor ? "met" : "MISSED"}; ` +
            `<= ${LOAD_TARGETS.peakMiB} MiB: ${cli.peakRssMiB.toFixed(0)} MiB ${cli.peakRssMiB <= LOAD_TARGETS.peakMiB ? "met" : "MISSED"}`,
    );
    console.log("");

    const baseline = summarise(Array.from({ length: runs }, () => spawnCase(["--baseline"])));
    const cases = ["hub", "preprod", ...SPOKE_COUNTS.map((n) => `hub-${n}-spokes`)];
    const results = new Map<string, Sample>();
    for (const c of cases) {
        results.set(c, summarise(Array.from({ length: runs }, () => spawnCase(["--case", c]))));
    }

    console.log(`plan benchmark: median of ${runs} runs, ${os.cpus().length} cores, Node ${process.version}`);
    console.log(`floor (plain Node loading @pulumi/pulumi + @pulumi/kubernetes): ${baseline.processMs.toFixed(0)} ms, ${baseline.peakRssMiB.toFixed(0)} MiB peak`);
    console.log("");
    console.log("| case | resources | plan ms | process ms | peak MiB | time x floor | memory x floor |");
    console.log("|---|---:|---:|---:|---:|---:|---:|");
    for (const [name, r] of results) {
        console.log(
            `| ${name} | ${r.resources} | ${r.planMs.toFixed(0)} | ${r.processMs.toFixed(0)} | ${r.peakRssMiB.toFixed(0)} | ` +
                `${(r.processMs / baseline.processMs).toFixed(2)} | ${(r.peakRssMiB / baseline.peakRssMiB).toFixed(2)} |`,
        );
    }
    const [one, ten, hundred] = SPOKE_COUNTS.map((n) => results.get(`hub-${n}-spokes`)!);
    const perSpokeLow = (ten.planMs - one.planMs) / (10 - 1);
    const perSpokeHigh = (hundred.planMs - ten.planMs) / (100 - 10);
    console.log("");
    console.log(`plan time per added spoke: ${perSpokeLow.toFixed(1)} ms (1->10), ${perSpokeHigh.toFixed(1)} ms (10->100)`);

    if (argv.includes("--no-engine")) {
        return;
    }
    // The real engine: e2e/bench.ts builds the engines (cached) and starts its own clusters. A
    // separate process, so the program's tools never import the end-to-end harness.
    console.log("");
    const engine = spawnSync(process.execPath, [require.resolve("ts-node/dist/bin"), "--transpile-only", path.join(REPO_ROOT, "e2e", "bench.ts"), "--runs", String(runs)], { cwd: REPO_ROOT, stdio: "inherit" });
    if (engine.status !== 0) {
        throw new Error("the engine benchmark failed (see above)");
    }
}

if (require.main === module) {
    main().catch((err: unknown) => {
        console.error(err instanceof Error ? err.message : String(err));
        process.exit(1);
    });
}
