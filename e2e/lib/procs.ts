/**
 * Local processes of the end-to-end run: each engine is started detached in its own process group,
 * with its output in a log file of the run's folder, and stopped by pid when the run ends or fails.
 * Nothing outlives the run: `stopAll` signals every group it started, waits, then kills.
 */
import { ChildProcess, spawn, spawnSync, SpawnSyncOptions } from "child_process";
import * as fs from "fs";
import * as net from "net";
import * as path from "path";

export interface Proc {
    name: string;
    pid: number;
    log: string;
    child: ChildProcess;
    exited: boolean;
    exitCode: number | null;
}

const started: Proc[] = [];

/** Starts `bin args...` detached, output to `<logDir>/<name>.log`. */
export function startProc(name: string, bin: string, args: string[], opts: { logDir: string; env?: NodeJS.ProcessEnv; cwd?: string }): Proc {
    const log = path.join(opts.logDir, `${name}.log`);
    const fd = fs.openSync(log, "a");
    const child = spawn(bin, args, { cwd: opts.cwd ?? opts.logDir, env: opts.env ?? process.env, stdio: ["ignore", fd, fd], detached: true });
    fs.closeSync(fd);
    if (child.pid === undefined) {
        throw new Error(`${name}: could not start ${bin}`);
    }
    const proc: Proc = { name, pid: child.pid, log, child, exited: false, exitCode: null };
    child.on("exit", (code) => {
        proc.exited = true;
        proc.exitCode = code;
    });
    started.push(proc);
    return proc;
}

/** The last `lines` lines of a process's log, for an error message. */
export function logTail(proc: Pick<Proc, "log">, lines = 30): string {
    try {
        return fs.readFileSync(proc.log, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
        return "(no log)";
    }
}

function alive(pid: number): boolean {
    try {
        process.kill(pid, 0);
        return true;
    } catch {
        return false;
    }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Stops one process group: SIGTERM, up to `graceMs`, then SIGKILL. */
export async function stopProc(proc: Proc, graceMs = 10_000): Promise<void> {
    const signal = (s: NodeJS.Signals) => {
        try {
            process.kill(-proc.pid, s);
        } catch {
            /* already gone */
        }
    };
    signal("SIGTERM");
    const deadline = Date.now() + graceMs;
    while (alive(proc.pid) && Date.now() < deadline) {
        await sleep(100);
    }
    signal("SIGKILL");
    while (alive(proc.pid)) {
        await sleep(50);
    }
    const i = started.indexOf(proc);
    if (i >= 0) {
        started.splice(i, 1);
    }
}

/** Stops every process this run started, newest first. */
export async function stopAll(): Promise<void> {
    for (const proc of [...started].reverse()) {
        await stopProc(proc);
    }
}

/** Last resort on an abrupt exit of the harness: kill every group synchronously. */
export function killAllSync(): void {
    for (const proc of started) {
        try {
            process.kill(-proc.pid, "SIGKILL");
        } catch {
            /* gone */
        }
    }
}

/** A free TCP port on 127.0.0.1 (bound, read and released). */
export function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.unref();
        srv.on("error", reject);
        srv.listen(0, "127.0.0.1", () => {
            const addr = srv.address();
            srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
        });
    });
}

export interface RunResult {
    status: number;
    stdout: string;
    stderr: string;
}

/** Runs a command to completion, capturing its output; never throws on a non-zero exit. */
export function run(bin: string, args: string[], opts: SpawnSyncOptions = {}): RunResult {
    const r = spawnSync(bin, args, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, ...opts });
    if (r.error) {
        throw new Error(`${path.basename(bin)}: ${r.error.message}`);
    }
    return { status: r.status ?? 1, stdout: String(r.stdout ?? ""), stderr: String(r.stderr ?? "") };
}

/**
 * Runs a command to completion without blocking the event loop: the run's own servers (the CRD
 * and chart file server) keep answering the command while it runs.
 */
export function runAsync(bin: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<RunResult> {
    return new Promise((resolve, reject) => {
        const child = spawn(bin, args, { cwd: opts.cwd, env: opts.env, stdio: ["pipe", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        child.on("error", (err) => reject(new Error(`${path.basename(bin)}: ${err.message}`)));
        child.on("close", (code) => resolve({ status: code ?? 1, stdout, stderr }));
        child.stdin.end(opts.input ?? "");
    });
}

/** Like `run`, but a non-zero exit is an error carrying the command's output tail. */
export function runOk(bin: string, args: string[], opts: SpawnSyncOptions = {}): string {
    const r = run(bin, args, opts);
    if (r.status !== 0) {
        const tail = (r.stderr || r.stdout).trimEnd().split("\n").slice(-30).join("\n");
        throw new Error(`${path.basename(bin)} ${args.slice(0, 3).join(" ")} exited ${r.status}:\n${tail}`);
    }
    return r.stdout;
}

/** Polls `check` until it returns true, or fails after `timeoutMs` with `describe()`. */
export async function waitFor(
    what: string,
    timeoutMs: number,
    check: () => Promise<boolean> | boolean,
    describe: () => string | Promise<string> = () => "",
): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
        try {
            if (await check()) {
                return;
            }
        } catch (err) {
            last = err;
        }
        await sleep(250);
    }
    const why = last instanceof Error ? ` (last error: ${last.message})` : "";
    throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${why}\n${await describe()}`);
}
