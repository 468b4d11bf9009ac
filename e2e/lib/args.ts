/**
 * The arguments of `npm run e2e`, read the way every command of the project reads its own
 * (tools/cliArgs.ts): `--flag value` or `--flag=value`, `--help` prints the usage and exits 0.
 */
import { flagValue, splitEquals, wantsHelp } from "../../tools/cliArgs";

export const E2E_USAGE = "usage: npm run e2e [-- --json FILE] [--grep PATTERN] [--keep]";

export const E2E_HELP = `${E2E_USAGE}

Builds the engines (cached outside the clone) and runs every end-to-end scenario against local
control planes on 127.0.0.1; exit status 0 when no scenario failed (docs/operations/e2e.md).

  --json FILE      also write the report (engines, chart, every scenario's result) to FILE
  --grep PATTERN   run only the scenarios whose name matches PATTERN
  --keep           keep the run's folders (logs, kubeconfigs, Pulumi state) after it ends`;

export interface E2eArgs {
    json?: string;
    grep?: string;
    keep: boolean;
}

/** The run's arguments; an unknown flag or a flag without its value is a usage error. */
export function parseE2eArgs(argv: readonly string[]): E2eArgs | "help" {
    if (wantsHelp(argv)) {
        return "help";
    }
    const args = splitEquals(argv, ["--keep"]);
    const out: E2eArgs = { keep: false };
    for (let i = 0; i < args.length; i++) {
        const a = args[i];
        if (a === "--json" || a === "--grep") {
            out[a === "--json" ? "json" : "grep"] = flagValue(args, i++, E2E_USAGE);
        } else if (a === "--keep") {
            out.keep = true;
        } else {
            throw new Error(`unknown argument ${a}; ${E2E_USAGE}`);
        }
    }
    return out;
}
