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

/** A file flag's value, unless it is a folder, an `input` that does not exist, or an `output` whose folder does not: then a usage error. */
export function fileFlag(flag: string, file: string, kind: "input" | "output" | "optional input"): string {
    const [stat, folder] = [fs.statSync(file, { throwIfNoEntry: false }), path.dirname(path.resolve(file))];
    if (stat?.isDirectory()) throw new UsageError(`${flag} ${file}: must be a file, it is a folder`);
    if (!stat && kind === "input") throw new UsageError(`${flag} ${file}: must be a file, it does not exist`);
    if (kind === "output" && !fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory())
        throw new UsageError(`${flag} ${file}: must be a file, ${folder} is no folder`);
    return file;
}

/** The text of the file a flag names: a usage error unless it is a file. */
export const readText = (flag: string, file: string): string => fs.readFileSync(fileFlag(flag, file, "input"), "utf8");

/** A command's input file without the shape it needs: a usage error (exit 2) naming the file, the field's JSON pointer and what it must be, never the value. */
export function inputError(file: string, pointer: string, must: string, got: unknown): UsageError {
    const kind = Array.isArray(got)
        ? "a list"
        : got === null
          ? "null"
          : got === undefined
            ? "nothing"
            : `${typeof got === "object" ? "an" : "a"} ${typeof got}`;
    return new UsageError(`${file}: ${pointer} must be ${must}, got ${kind}`);
}

/** The objects of the list at `pointer` in an input file (none when absent), each checked for its `required` and `optional` text fields. */
export function objectsAt(
    file: string,
    pointer: string,
    list: unknown,
    required: readonly string[],
    optional: readonly string[] = [],
): Record<string, unknown>[] {
    if (list === undefined) return [];
    if (!Array.isArray(list)) throw inputError(file, pointer, "a list", list);
    return list.map((item: unknown, i) => {
        if (item === null || typeof item !== "object" || Array.isArray(item)) throw inputError(file, `${pointer}/${i}`, "an object", item);
        const o = item as Record<string, unknown>;
        const bad = [...required, ...optional.filter((k) => o[k] !== undefined)].find((k) => typeof o[k] !== "string");
        if (bad !== undefined) throw inputError(file, `${pointer}/${i}/${bad}`, "a string", o[bad]);
        return o;
    });
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

/** Runs a command's main: what it returns is printed; an error exits 1 with its message, a usage error (a bad input file's too) 2. */
export function runMain(main: () => Promise<string | void>): void {
    main().then(
        (out) => out !== undefined && console.log(out),
        (err: unknown) => {
            console.error(printable(err instanceof Error ? err.message : String(err)));
            process.exit(err instanceof UsageError ? 2 : 1);
        },
    );
}

/** How Node runs an npm script of the project: npm puts node_modules/.bin first on the PATH, and a package's command is its bin script. */
export function scriptArgs(script: string, root: string): string[] {
    if (/["'`$\\|&;<>(){}*?~]/.test(script)) throw new Error(`the script is not one plain command: ${script}`);
    const [program, ...args] = script.trim().split(/\s+/);
    return program === "node" ? args : [fs.realpathSync(path.join(root, "node_modules", ".bin", program)), ...args];
}
