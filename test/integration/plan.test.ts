import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { scriptArgs } from "../../tools/cli";
import { REPO_ROOT } from "../../tools/stackFile";
import { FIXTURE_STACKS, HUB_TEXT, changedHub } from "../harness";

/** `npm run plan` as a user runs it: a process of its own, the files it writes, its exit status. */
describe("npm run plan", () => {
    const PLAN_FILES = ["delivery", "manifests.yaml", "outputs.json", "patches.yaml", "resources.json"];
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    describe("command line", () => {
        // The fixtures unless a test names its own folder: never the shipped stack files, which are the platform's.
        const plan = (args: string[]) =>
            spawnSync(
                process.execPath,
                [
                    ...scriptArgs(pkg.scripts.plan, REPO_ROOT),
                    ...args,
                    ...(args.some((a) => a.startsWith("--config-dir")) ? [] : ["--config-dir", FIXTURE_STACKS]),
                ],
                { cwd: REPO_ROOT, encoding: "utf8" },
            );

        it("writes resources.json, manifests.yaml and patches.yaml under <out>/<stack>/ in place of a previous plan, and the figures with --stats", () => {
            const out = fs.mkdtempSync(path.join(os.tmpdir(), "plan-"));
            fs.mkdirSync(path.join(out, "hub"));
            fs.writeFileSync(path.join(out, "hub", "diff.md"), "from an older plan against a ref");
            const stats = path.join(os.tmpdir(), "plan-stats.json");
            const res = plan(["--stack=hub", `--out=${out}`, "--stats", stats]);
            assert.strictEqual(res.status, 0, res.stderr);
            assert.deepStrictEqual(fs.readdirSync(path.join(out, "hub")).sort(), PLAN_FILES);
            assert.deepStrictEqual(fs.readdirSync(out), ["hub"], "no staging folder left behind");
            const rows = JSON.parse(fs.readFileSync(path.join(out, "hub", "resources.json"), "utf8")) as unknown[];
            assert.ok(rows.length > 10);
            assert.ok(fs.readFileSync(path.join(out, "hub", "manifests.yaml"), "utf8").includes("kind: ClusterRole"));
            assert.ok(fs.readFileSync(path.join(out, "hub", "patches.yaml"), "utf8").includes("name: argocd-rbac-cm"));
            const figures = JSON.parse(fs.readFileSync(stats, "utf8")) as Record<string, number>;
            assert.deepStrictEqual(Object.keys(figures).sort(), ["cpuMs", "peakRssMiB", "planMs", "resources"]);
            assert.strictEqual(figures.resources, rows.length);
            assert.ok(figures.planMs > 0 && figures.cpuMs > 0 && figures.peakRssMiB > 0);
        });

        // --help: test/integration/commands.test.ts.
        it("refuses a flag without its value (exit 2) instead of writing into the project", () => {
            const bad = plan(["--stack", "hub", "--out"]);
            assert.strictEqual(bad.status, 2);
            assert.match(bad.stderr, /^--out needs a value; usage: npm run plan/);
            assert.strictEqual(fs.existsSync(path.join(REPO_ROOT, "hub")), false, "wrote hub/ into the project");
        });

        it("exits 1 with the validation message for a bad config, writing nothing and removing the stack's previous plan", () => {
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stacks-"));
            fs.writeFileSync(path.join(dir, "Pulumi.hub.yaml"), HUB_TEXT.replace("role: hub", "role: primary"));
            const out = path.join(dir, "out");
            fs.mkdirSync(path.join(out, "hub"), { recursive: true });
            fs.writeFileSync(path.join(out, "hub", "resources.json"), "from an older plan");
            const res = plan(["--stack", "hub", "--config-dir", dir, "--out", out]);
            assert.strictEqual(res.status, 1);
            assert.match(
                res.stderr,
                /stack "hub": invalid configuration \(1 problem\):\n {2}- argo-rollouts-addon:cluster\.role = "primary": must be one of hub, spoke/,
            );
            assert.deepStrictEqual(fs.readdirSync(out), [], "the previous plan of a stack that no longer plans must go");
        });
    });

    describe("npm run plan -- --against <ref>", () => {
        let repo: string;
        const git = (...args: string[]) => {
            const res = spawnSync(
                "git",
                ["-C", repo, "-c", "user.name=plan test", "-c", "user.email=plan@test.invalid", "-c", "commit.gpgsign=false", ...args],
                { encoding: "utf8" },
            );
            assert.strictEqual(res.status, 0, res.stderr);
            return res.stdout;
        };
        // The project's plan command, run in the copy as `npm run plan` runs it there.
        const plan = (...args: string[]) => spawnSync(process.execPath, [...scriptArgs(pkg.scripts.plan, repo), ...args], { cwd: repo, encoding: "utf8" });

        before(() => {
            // A repository of its own holding the project's files as they are now: one commit, then
            // the fixture hub changed in its checkout.
            repo = fs.mkdtempSync(path.join(os.tmpdir(), "plan-repo-"));
            const files = spawnSync("git", ["-C", REPO_ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], { encoding: "utf8" })
                .stdout.split("\0")
                // A node_modules that is a symlink (a worktree's) is no folder to git's ignore rule: it is linked below.
                .filter((f) => f !== "" && f !== "node_modules");
            for (const f of files) {
                if (fs.existsSync(path.join(REPO_ROOT, f))) {
                    fs.mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
                    fs.copyFileSync(path.join(REPO_ROOT, f), path.join(repo, f));
                }
            }
            git("init", "--quiet");
            git("add", "-A");
            git("commit", "--quiet", "-m", "base");
            fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(repo, "node_modules"), "dir");
            fs.writeFileSync(path.join(repo, "test", "fixtures", "stacks", "Pulumi.hub.yaml"), changedHub());
        });

        it("plans the ref in a worktree it removes, prints the short diff and writes both, leaving the checkout as it was", () => {
            const status = git("status", "--porcelain");
            const headBefore = git("rev-parse", "HEAD");
            const out = path.join(repo, "out");
            const res = plan("--stack", "hub", "--config-dir", "test/fixtures/stacks", "--out", out, "--against", "HEAD");
            assert.strictEqual(res.status, 0, res.stderr);
            assert.match(res.stdout, /^### Offline plan of stack `hub` against `HEAD` \([0-9a-f]{12}\)$/m);
            assert.match(res.stdout, /^1 added, 0 removed, 5 changed, \d+ unchanged\.$/m);
            assert.match(res.stdout, /^- \+ added `HTTPRoute observability\/mimir-spoke-prod-read`$/m);
            assert.match(res.stdout, /^- ~ changed `tenant component prod-regulated-canary` \(every regulated prod tenant on canary: their next rollout\)/m);
            assert.match(res.stdout, /^wrote .*resources\.json, manifests\.yaml, patches\.yaml, outputs\.json, delivery\/, diff\.md and diff-summary\.md$/m);
            assert.deepStrictEqual(fs.readdirSync(path.join(out, "hub")).sort(), ["diff-summary.md", "diff.md", ...PLAN_FILES].sort());
            assert.match(fs.readFileSync(path.join(out, "hub", "diff.md"), "utf8"), /^ {4}\+ g, platform-release-approvers, role:release-managers$/m);
            assert.ok(res.stdout.includes(fs.readFileSync(path.join(out, "hub", "diff-summary.md"), "utf8")));
            // The checkout: same files changed, same HEAD, no worktree left registered.
            fs.rmSync(out, { recursive: true, force: true });
            assert.strictEqual(git("status", "--porcelain"), status);
            assert.strictEqual(git("rev-parse", "HEAD"), headBefore);
            assert.strictEqual(git("worktree", "list", "--porcelain").match(/^worktree /gm)?.length, 1);
            assert.ok(fs.existsSync(path.join(REPO_ROOT, "node_modules", "@pulumi", "pulumi")), "the packages linked into the worktree are still there");
        });

        it("shows every object added for a stack file the ref did not have", () => {
            const dir = path.join(repo, "test", "fixtures", "stacks");
            // A hub of another cluster: one stack file per cluster (components/config/project.ts).
            fs.writeFileSync(path.join(dir, "Pulumi.newhub.yaml"), HUB_TEXT.replace(/^( {4}(name|mimirTenant|runsOn): )hub$/gm, "$1newhub"));
            try {
                const res = plan("--stack", "newhub", "--config-dir", "test/fixtures/stacks", "--out", path.join(repo, "out2"), "--against", "HEAD");
                assert.strictEqual(res.status, 0, res.stderr);
                assert.match(res.stdout, /^\d+ added, 0 removed, 0 changed, 0 unchanged\.$/m);
                assert.match(res.stdout, /did not exist at `HEAD`: every object is new/);
            } finally {
                fs.rmSync(path.join(dir, "Pulumi.newhub.yaml"));
            }
        });

        it("writes the plan without a diff and exits 1 for a ref that is no commit", () => {
            const out = path.join(repo, "out3");
            const res = plan("--stack", "hub", "--config-dir", "test/fixtures/stacks", "--out", out, "--against", "no-such-ref");
            assert.strictEqual(res.status, 1);
            assert.match(res.stderr, /^no diff against no-such-ref: --against no-such-ref: not a commit of the repository at /m);
            assert.deepStrictEqual(fs.readdirSync(path.join(out, "hub")).sort(), PLAN_FILES);
        });
    });
});
