/**
 * `npm run plan -- --stack <name> --against <ref>`: plans the stack as it was at a git ref, from a
 * temporary detached worktree of the project's repository, and never touches the checkout (its
 * files, index and HEAD stay as they are). The worktree gets the checkout's node_modules as a
 * symlink: the packages are the checkout's, the code and stack files the ref's.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { PlanRow } from "./planDiff";
import { scriptArgs } from "./cli";

export interface BasePlan {
    /** The commit the ref names. */
    commit: string;
    /** The resources.json rows of the plan at the ref; empty when the stack file did not exist there. */
    rows: PlanRow[];
    /** Whether the stack file existed at the ref. */
    existed: boolean;
}

function git(repo: string, args: string[]): string {
    const res = spawnSync("git", ["-C", repo, ...args], { encoding: "utf8" });
    if (res.error) {
        throw new Error(`git ${args[0]}: ${res.error.message}`);
    }
    if (res.status !== 0) {
        throw new Error(`git ${args.join(" ")}: ${res.stderr.trim()}`);
    }
    return res.stdout.trim();
}

/**
 * Where the ref's stack files are: the same folder of the project at the ref when `configDir` is
 * inside the project; a folder outside it is not versioned with the project, so the ref reads it too.
 */
export function configDirAtRef(repoRoot: string, configDir: string, tree: string): string {
    const rel = path.relative(repoRoot, configDir);
    return rel.startsWith("..") || path.isAbsolute(rel) ? configDir : path.join(tree, rel);
}

/** Plans `stack` as it was at `ref` of the repository at `repoRoot`. */
export function planAtRef(opts: { repoRoot: string; ref: string; stack: string; configDir: string }): BasePlan {
    const { repoRoot, ref, stack } = opts;
    let commit: string;
    try {
        commit = git(repoRoot, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
    } catch {
        throw new Error(`--against ${ref}: not a commit of the repository at ${repoRoot} (fetch it first, e.g. git fetch origin main)`);
    }
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "plan-against-"));
    const tree = path.join(tmp, "tree");
    // An interrupt (Ctrl-C reaches the ref's plan too) would end this process by default before the
    // worktree is removed: while the ref is planned, it ends that plan only, and the command goes on
    // to remove the worktree and fail without a diff.
    const ignore = () => undefined;
    process.on("SIGINT", ignore);
    process.on("SIGTERM", ignore);
    try {
        git(repoRoot, ["worktree", "add", "--detach", "--quiet", tree, commit]);
        const modules = path.join(tree, "node_modules");
        if (!fs.existsSync(modules)) {
            fs.symlinkSync(path.join(repoRoot, "node_modules"), modules, "dir");
        }
        const configDir = configDirAtRef(repoRoot, opts.configDir, tree);
        if (!fs.existsSync(path.join(configDir, `Pulumi.${stack}.yaml`))) {
            return { commit, rows: [], existed: false };
        }
        // The ref's own plan command, as its package.json runs it.
        const pkg = JSON.parse(fs.readFileSync(path.join(tree, "package.json"), "utf8")) as { scripts: Record<string, string> };
        const out = path.join(tmp, "out");
        const res = spawnSync(process.execPath, [...scriptArgs(pkg.scripts.plan, tree), "--stack", stack, "--out", out, "--config-dir", configDir], {
            cwd: tree,
            encoding: "utf8",
        });
        const rowsFile = path.join(out, stack, "resources.json");
        // A plan that fails its guardrails still writes its plan (and exits 1): it is diffed all the same.
        if (!fs.existsSync(rowsFile)) {
            const why = `${res.stderr ?? ""}${res.error ? res.error.message : ""}`.trim().split("\n").slice(-20).join("\n");
            throw new Error(`stack "${stack}": the plan at ${ref} (${commit.slice(0, 12)}) failed (exit ${String(res.status)}):\n${why}`);
        }
        return { commit, rows: JSON.parse(fs.readFileSync(rowsFile, "utf8")) as PlanRow[], existed: true };
    } finally {
        // The link first, so nothing that removes the worktree can follow it into the checkout's packages.
        fs.rmSync(path.join(tree, "node_modules"), { force: true });
        if (fs.existsSync(tree)) {
            git(repoRoot, ["worktree", "remove", "--force", tree]);
        }
        fs.rmSync(tmp, { recursive: true, force: true });
        process.off("SIGINT", ignore);
        process.off("SIGTERM", ignore);
    }
}
