/** Every command's arguments: node:util parseArgs, strict; `--help` anywhere, and a usage error naming any bad argument. */
import * as fs from "fs";
import { ParseArgsConfig, parseArgs } from "node:util";
import * as path from "path";
import { printable } from "../components/config/show";

export class UsageError extends Error {}

/** The flags' values, or "help"; a bad argument throws a UsageError ending in `usage`. */
export function readFlags<const O extends NonNullable<ParseArgsConfig["options"]>>(argv: readonly string[], options: O, usage: string) {
    if (argv.some((a) => a === "--help" || a === "-h")) return "help" as const;
    const bad = (why: string) => new UsageError(`${why}; ${usage}`);
    try {
        const { values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
        const empty = Object.entries(values).find(([, v]) => v === "" || (Array.isArray(v) && v.includes("")));
        if (empty) throw bad(`--${empty[0]} needs a value (it was given an empty one)`);
        return values;
    } catch (e) {
        const { code, message } = e as { code?: string; message: string };
        const name = /'([^' ]+)/.exec(message)?.[1] ?? "";
        if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" || code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") throw bad(`unknown argument ${name}`);
        if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && message.includes("does not take an argument")) {
            throw bad(`${name} is a switch and takes no value (got ${argv.find((a) => a.startsWith(`${name}=`))}): give ${name} alone, or leave it out`);
        }
        throw code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" ? bad(`${name} needs a value`) : e;
    }
}

/**
 * A stack name as the Pulumi CLI allows one (pulumi/pulumi sdk/go/common/tokens/stack_name.go ParseStackName, v3.259.0: 1 to 100
 * letters, digits, "_", "." and "-"), but "." and "..", which the CLI allows and which as a folder's name are no stack's own.
 */
export const isStackName = (s: string): boolean => /^[A-Za-z0-9_.-]{1,100}$/.test(s) && s !== "." && s !== "..";

/** `value`, given for `flag`, when it is a stack name; else a usage error naming the flag, the value and what is allowed. */
export function stackFlag(value: string, flag = "--stack"): string {
    if (isStackName(value)) return value;
    throw new UsageError(`${flag} ${JSON.stringify(value)}: must be a stack name, 1 to 100 letters, digits, "_", "." or "-" as Pulumi allows, not "." or ".."`);
}

/** Removes the files of `dir` a command wrote (`wrote(path)`), then `dir` if that left it empty; nothing else, and never a folder. */
export function removeWritten(dir: string, wrote: (file: string) => boolean): void {
    if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return;
    const files = fs.readdirSync(dir).map((f) => path.join(dir, f));
    files.filter((f) => fs.lstatSync(f).isFile() && wrote(f)).forEach((f) => fs.rmSync(f));
    if (fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
}

/** A command's parsed arguments, or the end of the process: help exits 0, a bad argument exits 2. */
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

/** Runs a command's main: what it returns is printed; an error exits 1 with its message. */
export function runMain(main: () => Promise<string | void>): void {
    main().then(
        (out) => out !== undefined && console.log(out),
        (err: unknown) => {
            console.error(printable(err instanceof Error ? err.message : String(err)));
            process.exit(1);
        },
    );
}

/** How Node runs an npm script of the project: npm puts node_modules/.bin first on the PATH, and a package's command is its bin script. */
export function scriptArgs(script: string, root: string): string[] {
    if (/["'`$\\|&;<>(){}*?~]/.test(script)) throw new Error(`the script is not one plain command: ${script}`);
    const [program, ...args] = script.trim().split(/\s+/);
    return program === "node" ? args : [fs.realpathSync(path.join(root, "node_modules", ".bin", program)), ...args];
}
