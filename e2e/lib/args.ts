/** The arguments of `npm run e2e`, read the way every command of the project reads its own (tools/cli.ts). */
import Mocha from "mocha";
import * as os from "os";
import { UsageError, readFlags } from "../../tools/cli";

export const E2E_USAGE = "usage: npm run e2e [-- --json FILE] [--grep PATTERN] [--jobs N] [--keep]";

export const E2E_HELP = `${E2E_USAGE}

Builds the engines (cached outside the clone) and runs every end-to-end scenario against local
control planes on 127.0.0.1; exit status 0 when no scenario failed (docs/operations/e2e.md).

  --json FILE      also write the report (engines, chart, every scenario's result) to FILE
  --grep PATTERN   run only the scenarios whose full title ("<group> <scenario>") matches
                   PATTERN, a regular expression (/PATTERN/FLAGS for flags), checked before
                   anything is built
  --jobs N         run up to N groups of scenario files side by side, each in a process and
                   world of its own (default: one more than the machine's cores, at most 4)
  --keep           keep the run's folders (logs, kubeconfigs, Pulumi state) after it ends`;

export interface E2eArgs {
    json?: string;
    grep?: string;
    keep: boolean;
    jobs: number;
}

/**
 * Groups side by side when --jobs is not given: one more than the cores, as the scenario processes
 * wait on the engines about a quarter of the time (docs/operations/e2e.md, Figures: on 2 cores three
 * at a time kept 1.83 cores busy); at most 4, as each group runs control planes of its own.
 */
export function defaultJobs(cores: number): number {
    return Math.min(cores + 1, 4);
}

/** The run's arguments; an unknown flag or a flag without its value is a usage error. */
export function parseE2eArgs(argv: readonly string[]): E2eArgs | "help" {
    const flags = readFlags(argv, { json: { type: "string" }, grep: { type: "string" }, keep: { type: "boolean" }, jobs: { type: "string" } }, E2E_USAGE);
    if (flags === "help") return flags;
    const jobs = flags.jobs ?? String(defaultJobs(os.availableParallelism()));
    if (!/^[1-9]\d?$/.test(jobs)) {
        throw new UsageError(`--jobs ${JSON.stringify(jobs)}: must be a whole number from 1 to 99; ${E2E_USAGE}`);
    }
    return { ...flags, keep: flags.keep === true, jobs: Number(jobs) };
}

/**
 * The scenarios `--grep` selects, out of every scenario's full title, checked before any engine is
 * built: a pattern that is no regular expression, or that matches no scenario, is a usage error
 * listing the scenarios. The pattern is compiled by Mocha itself (Mocha#grep: `/re/flags` or a
 * plain regular expression, tested against each test's fullTitle()), so what is checked here is
 * what the run selects.
 */
export function grepScenarios(pattern: string, titles: readonly string[]): string[] {
    const list = () => `the scenarios are:\n${titles.map((t) => `  ${t}`).join("\n")}`;
    let re: RegExp;
    try {
        re = new Mocha().grep(pattern).options.grep as RegExp;
    } catch (e) {
        throw new Error(`--grep ${JSON.stringify(pattern)} is not a regular expression (${(e as Error).message}); ${list()}`, { cause: e });
    }
    const chosen = titles.filter((t) => re.test(t));
    if (chosen.length === 0) {
        throw new Error(`--grep ${JSON.stringify(pattern)} matches no scenario; ${list()}`);
    }
    return chosen;
}

/** Every test's full title under `suite`, in the order Mocha runs them. */
export function scenarioTitles(suite: Mocha.Suite): string[] {
    return [...suite.tests.map((t) => t.fullTitle()), ...suite.suites.flatMap(scenarioTitles)];
}
