/**
 * What every command of the project accepts the same way: `--flag value` and `--flag=value`, and
 * `--help`/`-h`, which prints the usage and exits 0.
 */

import { printable } from "../components/config/show";

/**
 * Splits `--flag=value` into `--flag value`; everything else is left as given. A switch (a flag
 * that takes no value, `switches`) given a value (`--json=false`) is a usage error naming it: read
 * as the switch plus a stray argument, `--json=false` would turn JSON on. An empty value
 * (`--kubeconfig=`) stays empty, for flagValue to refuse.
 */
export function splitEquals(argv: readonly string[], switches: readonly string[] = [], makeError: (m: string) => Error = (m) => new Error(m)): string[] {
    return argv.flatMap((a) => {
        const m = /^(--[A-Za-z][\w-]*)=([\s\S]*)$/.exec(a);
        if (m && switches.includes(m[1])) {
            throw makeError(`${m[1]} is a switch and takes no value (got ${a}): give ${m[1]} alone, or leave it out`);
        }
        return m ? [m[1], m[2]] : [a];
    });
}

/** Whether the arguments ask for help. */
export function wantsHelp(argv: readonly string[]): boolean {
    return argv.some((a) => a === "--help" || a === "-h");
}

/** The value of the flag at `i`; a missing value, or another flag in its place, is a usage error. */
export function flagValue(argv: readonly string[], i: number, usage: string, makeError: (m: string) => Error = (m) => new Error(m)): string {
    const v = argv[i + 1];
    if (v === undefined || v === "" || v.startsWith("--")) {
        throw makeError(`${argv[i]} needs a value${v === "" ? " (it was given an empty one)" : ""}; ${usage}`);
    }
    return v;
}

/**
 * A command's parsed arguments, or the end of the process: `--help` prints `help` and exits 0, a
 * bad argument prints its message and exits 2, before the command does anything.
 */
export function argsOrExit<T>(parse: () => T | "help", help: string): T {
    let parsed: T | "help";
    try {
        parsed = parse();
    } catch (err) {
        console.error(printable(err instanceof Error ? err.message : String(err)));
        process.exit(2);
    }
    if (parsed === "help") {
        console.log(help);
        process.exit(0);
    }
    return parsed;
}
