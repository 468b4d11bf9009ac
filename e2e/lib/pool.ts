/**
 * Scenario files side by side: `npm run e2e -- --jobs N` runs each group of scenario files in a
 * process of its own, with a world of its own (file server, clusters, Pulumi backends), at most N
 * at once. A scenario file shares its process with the file it names in `RUNS_AFTER` (the destroy
 * scenario takes down the greenfield stacks); every other file starts from nothing, so it can run
 * beside any other. The longest groups start first, so the short ones fill in around them: a file
 * exports `SECONDS`, about how long it runs beside another on 2 cores (a file without one counts
 * 60), scaled by the share of its scenarios the run selected. Each process's lines are forwarded whole as they come, and its report
 * (`--json`) is merged into the run's.
 */
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as readline from "readline";
import type { E2eReport, ScenarioReport } from "./report";

/** The environment a worker finds its scenario files in (comma-separated paths). */
export const WORKER_FILES = "ARGO_ROLLOUTS_ADDON_E2E_FILES";

export interface ScenarioFile {
    file: string;
    /** How many of its scenarios the run selected, of how many. */
    selected: number;
    total: number;
    /** Its exported `SECONDS`. */
    seconds?: number;
    /** The file this one continues (exported `RUNS_AFTER` of the scenario file), by base name. */
    runsAfter?: string;
}

/**
 * The files grouped by process, longest group first: a file joins the group of the file it runs
 * after, in the order the files sort; files with nothing selected are left out.
 */
export function workerGroups(files: readonly ScenarioFile[]): string[][] {
    const groups = new Map<string, ScenarioFile[]>();
    for (const f of [...files].sort((a, b) => a.file.localeCompare(b.file))) {
        const head = f.runsAfter ?? path.basename(f.file);
        groups.set(head, [...(groups.get(head) ?? []), f]);
    }
    const seconds = (g: ScenarioFile[]) => g.reduce((n, f) => n + ((f.seconds ?? 60) * f.selected) / Math.max(f.total, 1), 0);
    return [...groups.values()]
        .filter((g) => g.some((f) => f.selected > 0))
        .sort((a, b) => seconds(b) - seconds(a) || a[0].file.localeCompare(b[0].file))
        .map((g) => g.map((f) => f.file));
}

export interface PoolResult {
    scenarios: ScenarioReport[];
    chart: E2eReport["chart"];
    plugin: E2eReport["plugin"];
    /** Workers that ended without a report (a crash, a failed world): each fails the run. */
    broken: string[];
}

/**
 * Runs `groups` in worker processes, `jobs` at a time: each is this same run (`argv`) with the
 * built engines and its files in its environment and a report file of its own.
 */
export async function runPool(groups: string[][], jobs: number, argv: string[], env: NodeJS.ProcessEnv): Promise<PoolResult> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "argo-rollouts-addon-e2e-pool-"));
    const result: PoolResult = { scenarios: [], chart: "stand-in", plugin: "not run", broken: [] };
    const children = new Set<ReturnType<typeof spawn>>();
    const stop = () => children.forEach((c) => c.kill("SIGTERM"));
    process.once("SIGINT", stop).once("SIGTERM", stop);
    const queue = groups.map((files, i) => ({ files, json: path.join(dir, `worker-${i}.json`) }));
    const worker = async (): Promise<void> => {
        for (let next = queue.shift(); next; next = queue.shift()) {
            const { files, json } = next;
            const child = spawn(process.execPath, [...argv, "--json", json], {
                env: { ...env, [WORKER_FILES]: files.join(",") },
                stdio: ["ignore", "pipe", "pipe"],
            });
            children.add(child);
            // Whole lines only, so two workers' lines never interleave mid-line.
            readline.createInterface({ input: child.stdout }).on("line", (l) => process.stdout.write(`${l}\n`));
            readline.createInterface({ input: child.stderr }).on("line", (l) => process.stderr.write(`${l}\n`));
            await new Promise((resolve) => child.on("close", resolve));
            children.delete(child);
            if (!fs.existsSync(json)) {
                result.broken.push(files.map((f) => path.basename(f)).join(" + "));
                continue;
            }
            const report = JSON.parse(fs.readFileSync(json, "utf8")) as E2eReport;
            result.scenarios.push(...report.scenarios);
            result.chart = report.chart === "real" ? "real" : result.chart;
            result.plugin = report.plugin !== "not run" && result.plugin !== "real" ? report.plugin : result.plugin;
        }
    };
    await Promise.all(Array.from({ length: Math.min(jobs, groups.length) }, worker));
    fs.rmSync(dir, { recursive: true, force: true });
    return result;
}
