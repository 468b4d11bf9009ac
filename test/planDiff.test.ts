import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { scriptArgs } from "../tools/cli";
import { planStack, resourceRows } from "../tools/plan";
import { configDirAtRef } from "../tools/planAgainst";
import { PlanRow, diffPlans, fieldChanges, lineDiff, objectLabel, renderFullDiff, renderShortDiff } from "../tools/planDiff";
import { REPO_ROOT, readStackFile } from "../tools/stackFile";
import { FIXTURE_STACKS } from "./harness";

const HUB = fs.readFileSync(path.join(FIXTURE_STACKS, "Pulumi.hub.yaml"), "utf8");

/** The fixture hub with a second spoke and the release approver's ArgoCD role renamed. */
function changedHub(): string {
    const spoke = "      query: true\n";
    assert.ok(HUB.includes(spoke) && HUB.includes("approverRole: role:release-approver"));
    return HUB.replace(spoke, `${spoke}    - name: prod\n      tenant: prod\n      hostname: mimir-prod.hub.platform.test\n      query: true\n`).replace(
        "approverRole: role:release-approver",
        "approverRole: role:release-managers",
    );
}

const row = (urn: string, inputs: Record<string, unknown>, extra: Partial<PlanRow> = {}): PlanRow => ({
    urn,
    name: urn,
    type: "kubernetes:core/v1:ConfigMap",
    stage: "rollouts",
    inputs,
    protect: false,
    ...extra,
});

describe("plan diff", () => {
    describe("fields", () => {
        it("names each changed field by its path, keys with dots or slashes quoted", () => {
            const before = { metadata: { labels: { "app.kubernetes.io/part-of": "a" }, name: "x" }, spec: { replicas: 1 } };
            const after = { metadata: { labels: { "app.kubernetes.io/part-of": "b" }, name: "x" }, spec: { replicas: 1, paused: true } };
            assert.deepStrictEqual(fieldChanges(before, after), [
                { path: 'metadata.labels["app.kubernetes.io/part-of"]', change: "changed", before: "a", after: "b" },
                { path: "spec.paused", change: "added", after: true },
            ]);
            assert.deepStrictEqual(fieldChanges(after, after), []);
        });

        it("compares lists of objects item by item and a list of scalars as one field", () => {
            const rules = (verbs: string[]) => ({
                rules: [
                    { apiGroups: ["argoproj.io"], verbs },
                    { apiGroups: [""], verbs: ["get"] },
                ],
            });
            // A verb inserted in the middle: one field, not every later index.
            assert.deepStrictEqual(fieldChanges(rules(["get", "list"]), rules(["get", "patch", "list"])), [
                { path: "rules[0].verbs", change: "changed", before: ["get", "list"], after: ["get", "patch", "list"] },
            ]);
            assert.deepStrictEqual(fieldChanges({ rules: [{ a: 1 }] }, { rules: [{ a: 1 }, { b: 2 }] }), [
                { path: "rules[1]", change: "added", after: { b: 2 } },
            ]);
            assert.deepStrictEqual(fieldChanges({ rules: [{ a: 1 }, { b: 2 }] }, { rules: [{ a: 1 }] }), [
                { path: "rules[1]", change: "removed", before: { b: 2 } },
            ]);
        });

        it("diffs texts by line, removed lines before added ones", () => {
            assert.deepStrictEqual(lineDiff("a\nb\nc", "a\nB\nc\nd"), ["- b", "+ B", "+ d"]);
            assert.deepStrictEqual(lineDiff("same", "same"), []);
        });
    });

    describe("objects", () => {
        it("labels objects by kind and namespace/name, a chart by its release", () => {
            assert.strictEqual(objectLabel(row("u", { kind: "ConfigMap", metadata: { name: "n", namespace: "ns" } })), "ConfigMap ns/n");
            assert.strictEqual(
                objectLabel({
                    ...row("u", { kind: "AppProject", metadata: { name: "tenants", namespace: "argocd" } }),
                    type: "kubernetes:argoproj.io/v1alpha1:AppProjectPatch",
                }),
                "AppProjectPatch argocd/tenants",
            );
            assert.strictEqual(
                objectLabel({
                    ...row("u", { chart: "argo-rollouts", version: "2.41.0", name: "argo-rollouts", namespace: "argo-rollouts" }),
                    type: "kubernetes:helm.sh/v4:Chart",
                }),
                "Chart argo-rollouts 2.41.0 (release argo-rollouts/argo-rollouts)",
            );
            assert.strictEqual(
                objectLabel({ ...row("u", {}), type: "argo-rollouts-addon:stages:Policy", name: "policy" }),
                "argo-rollouts-addon:stages:Policy policy",
            );
        });

        it("finds added, removed and changed objects and options, counts the unchanged, and leaves reads out", () => {
            const base = [row("same", { a: 1 }), row("gone", { a: 1 }), row("opt", { a: 1 }), row("read", { a: 1 }, { read: true })];
            const head = [
                row("same", { a: 1 }),
                row("new", { a: 1 }, { stage: "gateway" }),
                row("opt", { a: 1 }, { protect: true }),
                row("read", { a: 2 }, { read: true }),
            ];
            const diff = diffPlans(base, head);
            assert.strictEqual(diff.unchanged, 1);
            assert.deepStrictEqual(
                diff.changes.map((c) => [c.action, c.urn, c.stage, c.fields.map((f) => f.path)]),
                [
                    ["added", "new", "gateway", []],
                    ["changed", "opt", "rollouts", ["(option) protect"]],
                    ["removed", "gone", "rollouts", []],
                ],
            );
        });

        it("cuts the short diff at its limits and counts what it left out", () => {
            const base = Array.from({ length: 5 }, (_, i) => row(`o${i}`, { a: 1, b: 1, c: 1 }));
            const head = base.map((r) => ({ ...r, inputs: { a: 2, b: 2, c: 2 } }));
            const text = renderShortDiff(diffPlans(base, head), { stack: "hub", against: "main", fullAt: "FULL" }, { objects: 2, fields: 1 });
            assert.match(text, /^0 added, 0 removed, 5 changed, 0 unchanged\.$/m);
            assert.strictEqual(text.match(/^- ~ changed/gm)?.length, 2);
            assert.match(text, /`a` and 2 more$/m);
            assert.match(text, /^… and 3 more objects not listed here\.$/m);
            assert.match(text, /, and what is not listed here,: FULL\.$/m);
            const full = renderFullDiff(diffPlans(base, head), { stack: "hub", against: "main" });
            assert.strictEqual(full.match(/^- ~ changed/gm)?.length, 5);
            assert.strictEqual(full.match(/^ {2}- `c` 1 → 2$/gm)?.length, 5);
        });
    });

    describe("of a real change to the hub", function () {
        this.timeout(60000);
        let base: PlanRow[];
        let head: PlanRow[];
        before(async () => {
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "diff-"));
            fs.writeFileSync(path.join(dir, "Pulumi.hub.yaml"), changedHub());
            const rows = async (d: string) => JSON.parse(JSON.stringify(resourceRows(await planStack(readStackFile("hub", d), d)))) as PlanRow[];
            base = await rows(FIXTURE_STACKS);
            head = await rows(dir);
        });

        it("shows the new spoke's route added in the gateway stage and the ArgoCD RBAC rules changed, nothing else", () => {
            const diff = diffPlans(base, head);
            assert.deepStrictEqual(
                diff.changes.map((c) => [c.action, c.stage, c.label, c.fields.map((f) => f.path)]),
                [
                    ["added", "gateway", "HTTPRoute observability/mimir-spoke-prod-read", []],
                    ["changed", "argocd-apps", "ConfigMapPatch argocd/argocd-rbac-cm", ['data["policy.argo-rollouts-addon.csv"]']],
                ],
            );
            assert.strictEqual(diff.unchanged, base.filter((r) => !r.read).length - 1);
        });

        it("gives the rules as lines removed and added, and the new route whole, in the complete diff", () => {
            const full = renderFullDiff(diffPlans(base, head), { stack: "hub", against: "main" });
            assert.match(full, /^#### gateway\n\n- \+ added `HTTPRoute observability\/mimir-spoke-prod-read`$/m);
            assert.match(full, /^ {6}- mimir-prod\.hub\.platform\.test$/m);
            assert.match(full, /^ {4}- p, role:release-approver, applications, action\/argoproj\.io\/Rollout\/resume, tenants\/\*, allow$/m);
            assert.match(full, /^ {4}\+ p, role:release-managers, applications, action\/argoproj\.io\/Rollout\/resume, tenants\/\*, allow$/m);
            assert.match(full, /^ {4}\+ g, platform-release-approvers, role:release-managers$/m);
            // Only the rules that changed: the deployers' denials are the same on both sides.
            assert.doesNotMatch(full, /^ {4}[-+] p, role:tenant-deployer/m);
            const short = renderShortDiff(diffPlans(base, head), { stack: "hub", against: "main" });
            assert.match(
                short,
                /^- ~ changed `ConfigMapPatch argocd\/argocd-rbac-cm`: `data\["policy\.argo-rollouts-addon\.csv"\]` \(9 lines removed, 9 added\)$/m,
            );
        });
    });

    it("reads the ref's stack files from the same folder of the project, and an outside folder as it is", () => {
        assert.strictEqual(configDirAtRef("/repo", "/repo", "/tmp/t"), "/tmp/t");
        assert.strictEqual(configDirAtRef("/repo", "/repo/test/fixtures/stacks", "/tmp/t"), "/tmp/t/test/fixtures/stacks");
        assert.strictEqual(configDirAtRef("/repo", "/elsewhere", "/tmp/t"), "/elsewhere");
    });

    describe("npm run plan -- --against <ref>", function () {
        this.timeout(120000);
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
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
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
        after(() => fs.rmSync(repo, { recursive: true, force: true }));

        it("plans the ref in a worktree it removes, prints the short diff and writes both, leaving the checkout as it was", () => {
            const status = git("status", "--porcelain");
            const headBefore = git("rev-parse", "HEAD");
            const out = path.join(repo, "out");
            const res = plan("--stack", "hub", "--config-dir", "test/fixtures/stacks", "--out", out, "--against", "HEAD");
            assert.strictEqual(res.status, 0, res.stderr);
            assert.match(res.stdout, /^### Offline plan of stack `hub` against `HEAD` \([0-9a-f]{12}\)$/m);
            assert.match(res.stdout, /^1 added, 0 removed, 1 changed, \d+ unchanged\.$/m);
            assert.match(res.stdout, /^- \+ added `HTTPRoute observability\/mimir-spoke-prod-read`$/m);
            assert.match(res.stdout, /^wrote .*resources\.json, manifests\.yaml, patches\.yaml, diff\.md and diff-summary\.md$/m);
            assert.deepStrictEqual(fs.readdirSync(path.join(out, "hub")).sort(), [
                "diff-summary.md",
                "diff.md",
                "manifests.yaml",
                "patches.yaml",
                "resources.json",
            ]);
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
            fs.writeFileSync(path.join(dir, "Pulumi.newhub.yaml"), HUB);
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
            assert.deepStrictEqual(fs.readdirSync(path.join(out, "hub")).sort(), ["manifests.yaml", "patches.yaml", "resources.json"]);
        });
    });
});
