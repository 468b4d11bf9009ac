/** `plan --against <ref>`: the stack planned at a git ref in a temporary detached worktree (the checkout untouched), and the review diff. */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { PlanRow, boundaryNotice, diffPlans, hubChangeNotice, productRows, renderFullDiff, renderShortDiff } from "./planDiff";
import { ProjectStack, readProjectStacks } from "../components/config/load";
import { NOTHING_RENDERED, ProviderRendered, RenderOptions, comparedRendered, renderProviderObjects } from "./planRendered";
import { scriptArgs } from "./cli";
import { CONFIG_GROUP } from "./crdSources";

export interface BasePlan {
    commit: string;
    /** The resources.json rows of the plan at the ref; empty when the stack file did not exist there. */
    rows: PlanRow[];
    existed: boolean;
    products?: Record<string, string>; // its outputs.json and delivery/ (planFiles.ts productFiles); none when the ref's plan writes none
    project?: ProjectStack[]; // the ref's stack files, as the rules between them read them
}

function git(repo: string, args: string[]): string {
    const res = spawnSync("git", ["-C", repo, ...args], { encoding: "utf8" });
    if (res.error || res.status !== 0) throw new Error(`git ${res.error ? args[0] : args.join(" ")}: ${res.error?.message ?? res.stderr.trim()}`);
    return res.stdout.trim();
}

/** Where the ref's stack files are: the same folder at the ref when it is in the project; one outside it is read as it is. */
export function configDirAtRef(repoRoot: string, configDir: string, tree: string): string {
    const rel = path.relative(repoRoot, configDir);
    return rel.startsWith("..") || path.isAbsolute(rel) ? configDir : path.join(tree, rel);
}

/** Plans `stack` as it was at `ref`, with the ref's own plan command as its package.json runs it. */
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
    // A Ctrl-C reaches the ref's plan too: it ends that plan only, and the worktree is still removed.
    const ignore = () => undefined;
    process.on("SIGINT", ignore).on("SIGTERM", ignore);
    try {
        git(repoRoot, ["worktree", "add", "--detach", "--quiet", tree, commit]);
        if (!fs.existsSync(path.join(tree, "node_modules"))) {
            fs.symlinkSync(path.join(repoRoot, "node_modules"), path.join(tree, "node_modules"), "dir");
        }
        const configDir = configDirAtRef(repoRoot, opts.configDir, tree);
        const project = readProjectStacks(configDir);
        if (!fs.existsSync(path.join(configDir, `Pulumi.${stack}.yaml`))) return { commit, rows: [], existed: false, project };
        const pkg = JSON.parse(fs.readFileSync(path.join(tree, "package.json"), "utf8")) as { scripts: Record<string, string> };
        const out = path.join(tmp, "out");
        const args = [...scriptArgs(pkg.scripts.plan, tree), "--stack", stack, "--out", out, "--config-dir", configDir];
        const res = spawnSync(process.execPath, args, { cwd: tree, encoding: "utf8" });
        const rowsFile = path.join(out, stack, "resources.json");
        // A plan that fails its guardrails still writes its plan (and exits 1): it is diffed all the same.
        if (!fs.existsSync(rowsFile)) {
            const why = `${res.stderr ?? ""}${res.error ? res.error.message : ""}`.trim().split("\n").slice(-20).join("\n");
            throw new Error(`stack "${stack}": the plan at ${ref} (${commit.slice(0, 12)}) failed (exit ${String(res.status)}):\n${why}`);
        }
        const files = fs.readdirSync(path.join(out, stack), { recursive: true, encoding: "utf8" }).filter((f) => /^(outputs\.json|delivery\/.+\.\w+)$/.test(f));
        const products = files.length > 0 ? Object.fromEntries(files.map((f) => [f, fs.readFileSync(path.join(out, stack, f), "utf8")])) : undefined;
        return { commit, rows: JSON.parse(fs.readFileSync(rowsFile, "utf8")) as PlanRow[], existed: true, products, project };
    } finally {
        // The link first, so nothing that removes the worktree can follow it into the checkout's packages.
        fs.rmSync(path.join(tree, "node_modules"), { force: true });
        if (fs.existsSync(tree)) git(repoRoot, ["worktree", "remove", "--force", tree]);
        fs.rmSync(tmp, { recursive: true, force: true });
        process.off("SIGINT", ignore).off("SIGTERM", ignore);
    }
}

/** The ref's chart objects and CRDs, each chart the one it pins (--charts); CRDs from a folder only where both sides name the same files. */
export async function renderedAtRef(rows: PlanRow[], headRows: PlanRow[], opts: RenderOptions): Promise<ProviderRendered> {
    const rendered = await renderProviderObjects(rows, opts);
    const files = (of: PlanRow[]) => JSON.stringify(of.filter((r) => r.type === CONFIG_GROUP).map((r) => r.inputs.files));
    // A folder holds one set of CRD files: it cannot stand for another release's.
    if (opts.crds?.kind === "dir" && files(rows) !== files(headRows)) {
        const notShown = `its CRD files are another release's than --crds ${opts.crds.dir} holds: plan with --crds remote to read each side's`;
        rendered.crds = rendered.crds.map((c) => ({ ...c, read: { notShown } }));
    }
    return rendered;
}

/** The review diff of this plan against the stack at `ref`: diff.md (complete) and diff-summary.md (short, for a pull-request comment). */
export async function reviewDiff(
    stack: string,
    ref: string,
    head: { rows: PlanRow[]; rendered: ProviderRendered; products: Record<string, string> },
    at: { repoRoot: string; configDir: string },
    renderOpts: RenderOptions,
): Promise<{ "diff.md": string; "diff-summary.md": string }> {
    const base = planAtRef({ ...at, ref, stack });
    const baseRendered = base.existed ? await renderedAtRef(base.rows, head.rows, renderOpts) : NOTHING_RENDERED;
    const compared = comparedRendered(head.rendered, baseRendered, base.existed);
    const compares = base.products !== undefined || !base.existed;
    const products = (files?: Record<string, string>) => (compares ? productRows(files ?? {}) : []);
    const diff = diffPlans([...base.rows, ...compared.base, ...products(base.products)], [...head.rows, ...compared.head, ...products(head.products)]);
    const notes = [
        base.existed ? [] : `The stack file Pulumi.${stack}.yaml did not exist at \`${ref}\`: every object is new.`,
        compares ? [] : `The stack outputs and tenant components are not compared: the plan at \`${ref}\` does not write them.`,
        compared.notes,
    ].flat();
    const fullAt = `diff.md beside the plan (plan/${stack}/diff.md; in a pull request, the plan-${stack} artifact)`;
    const opts = {
        stack,
        against: ref,
        commit: base.commit,
        fullAt,
        notices: [boundaryNotice(base.rows, head.rows) ?? [], hubChangeNotice(stack, base.project, readProjectStacks(at.configDir)) ?? []].flat(),
    };
    const note = notes.map((n) => `\n${n}\n`).join("");
    return { "diff.md": renderFullDiff(diff, opts) + note, "diff-summary.md": renderShortDiff(diff, opts) + note };
}
