/**
 * The end-to-end run: the program under the real Pulumi engine and kubernetes provider, against
 * real Kubernetes control planes on 127.0.0.1 (docs/operations/e2e.md: what it proves and does
 * not).
 *
 *   npm run e2e [-- --json FILE] [--grep PATTERN] [--jobs N] [--keep]
 *
 * It loads the scenarios (and refuses a --grep that is no regular expression or selects none, exit
 * 2), builds the engines (e2e/engines/build.sh; cached, or ARGO_ROLLOUTS_ADDON_E2E_BIN), then
 * runs the scenarios in e2e/scenarios, up to --jobs groups of files side by side (e2e/lib/pool.ts;
 * in file order within a group), prints one line per scenario and ends with
 * `N passed, N failed`. Exit status 0 when no scenario failed. ARGO_ROLLOUTS_ADDON_E2E_KYVERNO=1.19
 * also builds the optional e2e/engines/kyverno-1.19 and runs Kyverno v1.19.1 instead of CI's v1.17.2
 * (e2e/lib/kyvernoRelease.ts); the run then prints which Kyverno it runs before the scenarios.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import Mocha from "mocha";
import * as path from "path";
import { killAllSync } from "./lib/procs";
import { E2eReport, ScenarioReport, kyvernoLine, scenarioLine, summaryLine } from "./lib/report";
import { engineVersions, requiredVersion } from "./lib/engines";
import { kyvernoRelease } from "./lib/kyvernoRelease";
import { context, stopWorld } from "./lib/context";
import { E2E_HELP, grepScenarios, parseE2eArgs, scenarioTitles } from "./lib/args";
import { WORKER_FILES, runPool, workerGroups } from "./lib/pool";

/** Prints PASS/FAIL/SKIP lines as scenarios end and collects them for the summary and JSON. */
class ScenarioReporter extends Mocha.reporters.Base {
    static scenarios: ScenarioReport[] = [];
    constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
        super(runner, options);
        const record = (test: Mocha.Test, result: ScenarioReport["result"], detail: string) => {
            const s: ScenarioReport = { name: test.title, result, seconds: (test.duration ?? 0) / 1000, detail };
            ScenarioReporter.scenarios.push(s);
            console.log(scenarioLine(s));
        };
        runner.on(Mocha.Runner.constants.EVENT_TEST_PASS, (test) => record(test, "PASS", ""));
        runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, (test, err: Error) => {
            record(test, "FAIL", err?.message ?? String(err));
            console.log(indent(err?.stack ?? String(err)));
        });
        runner.on(Mocha.Runner.constants.EVENT_TEST_PENDING, (test) => record(test, "SKIP", context.skipReasons.get(test.title) ?? "skipped"));
        // A failing hook fails the scenarios it would have run.
        runner.on(Mocha.Runner.constants.EVENT_HOOK_END, () => undefined);
    }
}

function indent(text: string): string {
    return text
        .split("\n")
        .slice(0, 40)
        .map((l) => `    ${l}`)
        .join("\n");
}

async function main(): Promise<number> {
    const args = parseE2eArgs(process.argv.slice(2));
    if (args === "help") {
        console.log(E2E_HELP);
        return 0;
    }
    // Refused before anything is built when it names no Kyverno the run knows.
    const kyverno = kyvernoRelease();
    const root = path.resolve(__dirname, "..");
    // The scenarios are registered (their files loaded: describe/it only, nothing runs) before
    // anything is built, so that a --grep selecting nothing is refused at once, naming them.
    const mocha = new Mocha({ timeout: 20 * 60_000, reporter: ScenarioReporter as unknown as string, rootHooks: { afterAll: stopWorld } });
    const dir = path.join(root, "e2e", "scenarios");
    // A worker of a side-by-side run loads only the files of its group.
    const worker = process.env[WORKER_FILES]?.split(",");
    for (const f of worker ??
        fs
            .readdirSync(dir)
            .filter((f) => f.endsWith(".e2e.ts"))
            .sort()
            .map((f) => path.join(dir, f))) {
        mocha.addFile(f);
    }
    await mocha.loadFilesAsync();
    const selected = grepScenarios(args.grep ?? "", scenarioTitles(mocha.suite));
    if (args.grep !== undefined) {
        mocha.grep(args.grep);
    }
    // A worker takes the engines its parent built (ARGO_ROLLOUTS_ADDON_E2E_BIN, in context.bin).
    if (!worker) {
        for (const engines of kyverno.optional ? [[], [kyverno.engine]] : [[]]) {
            // An optional engine is built only when named; it links into the same directory.
            const build = spawnSync("bash", [path.join(root, "e2e", "engines", "build.sh"), ...engines], {
                encoding: "utf8",
                stdio: ["ignore", "pipe", "inherit"],
            });
            if (build.status !== 0) {
                console.error(`e2e: the engines ${engines.map((e) => `${e} `).join("")}could not be built (see above)`);
                return 1;
            }
            context.bin = build.stdout.trim().split("\n").pop() ?? "";
        }
        if (kyverno.optional) {
            console.log(kyvernoLine(kyverno, requiredVersion(kyverno.engine, "github.com/kyverno/kyverno")));
        }
    }
    // A worker, or a run one file at a time, runs its files in this process.
    const groups = worker || args.jobs === 1 ? [] : await fileGroups(mocha, selected);
    if (groups.length > 1) {
        // Each worker is this run with its own report file (runPool adds --json).
        const own = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--json") && all[i - 1] !== "--json");
        const pool = await runPool(groups, args.jobs, [...process.execArgv, process.argv[1], ...own], {
            ...process.env,
            ARGO_ROLLOUTS_ADDON_E2E_BIN: context.bin,
        });
        for (const files of pool.broken) {
            console.log(`FAIL ${files}: its worker ended without a report (its lines are above)`);
        }
        return report(args.json, { ...pool, failed: pool.broken.length > 0 });
    }
    context.keep = args.keep;
    for (const sig of ["SIGINT", "SIGTERM"] as const) {
        process.on(sig, () => {
            killAllSync();
            process.exit(130);
        });
    }
    process.on("exit", () => killAllSync());

    const failures = await new Promise<number>((resolve) => mocha.run(resolve));
    const { chart, plugin } = context;
    return report(args.json, { scenarios: ScenarioReporter.scenarios, chart, plugin, failed: failures > 0 });
}

/** The selected scenario files in groups, longest first, as e2e/lib/pool.ts runs them side by side. */
async function fileGroups(mocha: Mocha, selected: string[]): Promise<string[][]> {
    return workerGroups(
        await Promise.all(
            mocha.suite.suites.map(async (s) => {
                const { RUNS_AFTER, SECONDS } = (await import(s.file ?? "")) as { RUNS_AFTER?: string; SECONDS?: number };
                const titles = scenarioTitles(s);
                return {
                    file: s.file ?? "",
                    selected: titles.filter((t) => selected.includes(t)).length,
                    total: titles.length,
                    seconds: SECONDS,
                    runsAfter: RUNS_AFTER,
                };
            }),
        ),
    );
}

/** The closing line and the --json report; exit status 1 when a scenario failed, or a hook or a worker (`failed`). */
function report(json: string | undefined, r: Omit<E2eReport, "engines"> & { failed: boolean }): number {
    if (!process.env[WORKER_FILES]) {
        console.log(summaryLine(r.scenarios));
    }
    if (json) {
        const out: E2eReport = { engines: engineVersions(), chart: r.chart, plugin: r.plugin, scenarios: r.scenarios };
        fs.writeFileSync(json, JSON.stringify(out, null, 2) + "\n");
    }
    return r.failed || r.scenarios.some((s) => s.result === "FAIL") ? 1 : 0;
}

main().then(
    (code) => process.exit(code),
    (err) => {
        console.error(`e2e: ${err instanceof Error ? err.message : String(err)}`);
        killAllSync();
        process.exit(2);
    },
);
