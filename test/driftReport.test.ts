import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as http from "http";
import { AddressInfo } from "net";
import * as os from "os";
import * as path from "path";
import { scriptArgs } from "../tools/cli";
import { CLEAN_MARK, VerifyJson, driftReport, issueMarker, managerAdvice, readJson } from "../tools/driftReport";
import { PreviewDigest, changedLines, driftedObjects, managersOf, ownsPath, parsePropertyPath } from "../tools/previewDigest";
import { Issue, findIssue, issueAction, issueTitle, syncIssue } from "../tools/driftIssue";
import { REPO_ROOT } from "../tools/stackFile";

const FIXTURES = path.join(__dirname, "fixtures", "drift");
const load = <T>(name: string): T => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), "utf8")) as T;
const drifted = load<PreviewDigest>("preview-drift.json");
const clean = load<PreviewDigest>("preview-clean.json");
const verifyPass = load<VerifyJson>("verify-pass.json");
const verifyFail = load<VerifyJson>("verify-fail.json");

/** The lines of a markdown section, from its heading to the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string[] {
    const lines = markdown.split("\n");
    const start = lines.indexOf(heading);
    assert.ok(start >= 0, `no section ${heading} in:\n${markdown}`);
    const level = heading.split(" ")[0].length;
    const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && l.split(" ")[0].length <= level);
    return lines.slice(start + 1, end < 0 ? undefined : end).filter((l) => l !== "");
}

describe("drift report", () => {
    it("reads the provider's property paths", () => {
        assert.deepStrictEqual(parsePropertyPath("spec.template.spec.containers[0].args[2]"), ["spec", "template", "spec", "containers", 0, "args", 2]);
        assert.deepStrictEqual(parsePropertyPath('data["policy.argo-rollouts-addon.csv"]'), ["data", "policy.argo-rollouts-addon.csv"]);
        assert.deepStrictEqual(parsePropertyPath('metadata.labels["pod-security.kubernetes.io/enforce"]'), [
            "metadata",
            "labels",
            "pod-security.kubernetes.io/enforce",
        ]);
        assert.deepStrictEqual(parsePropertyPath('metadata.annotations["a\\"b"].x'), ["metadata", "annotations", 'a"b', "x"]);
    });

    it("finds the owner of a field in managedFields: through list keys, and an atomic list as a whole", () => {
        const live = { spec: { containers: [{ name: "sidecar" }, { name: "main", args: ["a", "b"] }] } };
        const fields = { "f:spec": { "f:containers": { 'k:{"name":"main"}': { "f:args": {} } } } };
        assert.ok(ownsPath(fields, live, ["spec", "containers", 1, "args", 1]));
        assert.ok(!ownsPath(fields, live, ["spec", "containers", 0, "args", 0]), "another element's key");
        assert.ok(!ownsPath(fields, live, ["spec", "containers", 1, "image"]));
        assert.ok(ownsPath({ "f:spec": { "f:finalizers": { 'v:"kubernetes"': {} } } }, { spec: { finalizers: ["kubernetes"] } }, ["spec", "finalizers", 0]));
        assert.ok(!ownsPath(undefined, live, ["spec"]));
        // A field the program applies and another manager shares: the other one is named, never the program.
        const shared = {
            __fieldManager: "pulumi-kubernetes-5c8a3b2f",
            metadata: {
                managedFields: [
                    { manager: "pulumi-kubernetes-5c8a3b2f", operation: "Apply", fieldsV1: { "f:data": { "f:k": {} } } },
                    { manager: "argocd-controller", operation: "Apply", fieldsV1: { "f:data": { "f:k": {} } } },
                    { manager: "kubectl-edit", operation: "Update", fieldsV1: { "f:data": { "f:other": {} } } },
                ],
            },
            data: { k: "v", other: "w" },
        };
        assert.deepStrictEqual(
            managersOf(shared, ["data", "k"]).map((m) => m.manager),
            ["argocd-controller"],
        );
        assert.deepStrictEqual(managersOf({ data: {} }, ["data", "k"]), []);
    });

    it("names each drifted object with its fields, live and declared values and the managers that wrote them, not the program's own", () => {
        const objects = driftedObjects(drifted);
        assert.deepStrictEqual(
            objects.map((o) => [o.op, o.object, o.fields.map((f) => [f.path, f.kind, f.live, f.declared, f.managers.map((m) => m.manager)])]),
            [
                [
                    "update",
                    "Namespace argo-rollouts",
                    [['metadata.labels["pod-security.kubernetes.io/enforce"]', "update", "baseline", "restricted", ["kyverno"]]],
                ],
                [
                    "update",
                    "Deployment argo-rollouts/argo-rollouts",
                    [["spec.template.spec.containers[0].args[2]", "update", "--loglevel=debug", "--loglevel=info", ["helm"]]],
                ],
                [
                    "update",
                    "ConfigMap argocd/argocd-rbac-cm",
                    [
                        [
                            'data["policy.argo-rollouts-addon.csv"]',
                            "update",
                            // Only the policy line that differs, not the whole key.
                            "p, role:rollouts-approver, applications, action/argoproj.io/Rollout/promote-full, */*, allow",
                            "p, role:rollouts-approver, applications, action/argoproj.io/Rollout/promote-full, tenants-regulated/*, allow",
                            ["argocd-server"],
                        ],
                    ],
                ],
            ],
        );
        // The refresh steps and the stack itself are not drift.
        assert.strictEqual(drifted.steps!.filter((s) => s.op === "refresh").length, 3);
        assert.deepStrictEqual(driftedObjects(clean), []);
    });

    it("writes the issue: the counts, a table per object, who writes the fields and what to do, verify's FAIL rows", () => {
        const report = driftReport({ stack: "hub", preview: drifted, previewExit: 255, verify: verifyFail, runUrl: "https://github.test/o/r/actions/runs/7" });
        assert.strictEqual(report.clean, false);
        const md = report.markdown;
        assert.ok(md.startsWith(`${issueMarker("hub")}\n## Drift on stack \`hub\`\n`), md);
        assert.ok(!md.includes(CLEAN_MARK));
        assert.deepStrictEqual(section(md, "## Drift on stack `hub`").slice(0, 1), [
            "3 drifted objects, 1 verify FAIL. The next `pulumi up` reverts every field below to what the stack declares.",
        ]);
        assert.deepStrictEqual(section(md, "#### Deployment argo-rollouts/argo-rollouts (update)"), [
            "`urn:pulumi:hub::argo-rollouts-addon::argo-rollouts-addon:stages:Rollouts$kubernetes:helm.sh/v4:Chart$kubernetes:apps/v1:Deployment::rollouts-controller:argo-rollouts/argo-rollouts`",
            "| field | change | live | declared | written by |",
            "|---|---|---|---|---|",
            "| `spec.template.spec.containers[0].args[2]` | update | `--loglevel=debug` | `--loglevel=info` | `helm` (Update, 2026-12-01T22:47:03Z) |",
        ]);
        assert.deepStrictEqual(section(md, "#### ConfigMap argocd/argocd-rbac-cm (update)").slice(3), [
            '| `data["policy.argo-rollouts-addon.csv"]` | update | `p, role:rollouts-approver, applications, action/argoproj.io/Rollout/promote-full, */*, allow` | `p, role:rollouts-approver, applications, action/argoproj.io/Rollout/promote-full, tenants-regulated/*, allow` | `argocd-server` (Update, 2026-12-02T08:05:11Z) |',
        ]);
        assert.deepStrictEqual(section(md, "#### Namespace argo-rollouts (update)").slice(3), [
            '| `metadata.labels["pod-security.kubernetes.io/enforce"]` | update | `baseline` | `restricted` | `kyverno` (Update, 2026-12-01T03:00:12Z) |',
        ]);
        assert.deepStrictEqual(section(md, "### Who writes these fields"), [
            `- \`argocd-server\`: ${managerAdvice("argocd-server")}.`,
            `- \`helm\`: ${managerAdvice("helm")}.`,
            `- \`kyverno\`: ${managerAdvice("kyverno")}.`,
        ]);
        assert.deepStrictEqual(section(md, "### verify"), [
            "| check | requirement | found | read |",
            "|---|---|---|---|",
            "| FAIL `argocd.rbac` | argocd-rbac-cm holds the stack's rollout actions policy | ConfigMap argocd/argocd-rbac-cm: policy.argo-rollouts-addon.csv differs from the stack's policy | docs/operations/verify.md#verify-argocd |",
            "---",
            "The preview's JSON and verify's report: the `drift-hub` artifact of [this run](https://github.test/o/r/actions/runs/7).",
        ]);
        assert.ok(!md.includes("### Preview errors"));
    });

    it("tells each kind of writer apart", () => {
        const cases: [string, RegExp][] = [
            ["helm", /Helm release/],
            ["argocd-application-controller", /ArgoCD syncs an Application/],
            ["argocd-server", /ArgoCD UI or CLI/],
            ["kyverno", /Kyverno mutate policy/],
            ["kubectl-client-side-apply", /kubectl/],
            ["pulumi-kubernetes-0a1b2c3d", /another Pulumi program/],
            ["some-operator", /another writer/],
        ];
        for (const [manager, advice] of cases) {
            assert.match(managerAdvice(manager), advice, manager);
        }
    });

    it("says no drift when the refreshed preview proposes nothing and verify passed, marked clean for the issue step", () => {
        const report = driftReport({ stack: "preprod", preview: clean, previewExit: 0, verify: verifyPass });
        assert.strictEqual(report.clean, true);
        assert.deepStrictEqual(report.markdown.split("\n").slice(0, 3), [issueMarker("preprod"), CLEAN_MARK, "## Drift on stack `preprod`"]);
        assert.deepStrictEqual(section(report.markdown, "## Drift on stack `preprod`").slice(0, 1), [
            "No drift: the refreshed preview proposes no change and every verify check passed or was skipped.",
        ]);
        assert.deepStrictEqual(section(report.markdown, "### Drifted objects"), ["None."]);
        assert.deepStrictEqual(section(report.markdown, "### verify"), ["Every check passed or was skipped (4 checks)."]);
        // A verify FAIL alone is not clean.
        assert.strictEqual(driftReport({ stack: "preprod", preview: clean, previewExit: 0, verify: verifyFail }).clean, false);
    });

    it("never calls a preview that did not finish clean", () => {
        const noJson = driftReport({ stack: "hub", preview: { error: "preview-hub.json is empty" }, previewExit: 255, verify: verifyPass });
        assert.strictEqual(noJson.clean, false);
        assert.deepStrictEqual(section(noJson.markdown, "### Drifted objects"), ["The preview printed no report: preview-hub.json is empty"]);
        // Exit non-zero without a change: a policy violation (the digest leaves policy events out) or an error.
        const refused = driftReport({ stack: "hub", preview: clean, previewExit: 255, verify: verifyPass });
        assert.strictEqual(refused.clean, false);
        assert.deepStrictEqual(section(refused.markdown, "### Preview errors"), [
            "The preview exited 255 without naming a change: a policy violation or an error (the run's log has it).",
        ]);
        const errored = driftReport({
            stack: "hub",
            preview: {
                ...clean,
                diagnostics: [
                    { message: "error: configured Kubernetes cluster is unreachable\n  more", severity: "error" },
                    { message: "a warning", severity: "warning" },
                ],
            },
            verify: verifyPass,
        });
        assert.deepStrictEqual(section(errored.markdown, "### Preview errors"), ["- error: configured Kubernetes cluster is unreachable more"]);
        const unverified = driftReport({
            stack: "hub",
            preview: clean,
            previewExit: 0,
            verify: { stack: "hub", error: 'stack "hub": cannot verify: connection refused', results: [] },
        });
        assert.strictEqual(unverified.clean, false);
        assert.deepStrictEqual(section(unverified.markdown, "### verify"), ['verify did not run its checks: stack "hub": cannot verify: connection refused']);
    });

    it("shows what was deleted on the cluster and what the stack no longer declares", () => {
        const step = drifted.steps!.find((s) => s.op === "update" && s.urn.includes("Namespace"))!;
        const md = driftReport({
            stack: "hub",
            preview: {
                steps: [
                    { ...step, op: "create", oldState: undefined, detailedDiff: null, diffReasons: [] },
                    { ...step, op: "delete", newState: undefined, detailedDiff: null, diffReasons: [] },
                ],
            },
            verify: verifyPass,
        }).markdown;
        assert.deepStrictEqual(section(md, "#### Namespace argo-rollouts (create)").slice(1), [
            "Missing on the cluster: deleted outside the program; the next `up` creates it again.",
        ]);
        assert.deepStrictEqual(section(md, "#### Namespace argo-rollouts (delete)").slice(1), [
            "No longer declared by the stack at `main`: the next `up` deletes it.",
        ]);
    });

    it("never shows a Secret's values", () => {
        const step = drifted.steps!.find((s) => s.op === "update" && s.urn.includes("ConfigMapPatch"))!;
        const asSecret = (state: typeof step.oldState) => ({
            ...state,
            outputs: { ...state!.outputs, kind: "Secret" },
            inputs: { ...state!.inputs, kind: "Secret" },
        });
        const [o] = driftedObjects({ steps: [{ ...step, oldState: asSecret(step.oldState), newState: asSecret(step.newState) }] });
        assert.deepStrictEqual(
            [o.object, o.fields[0].live, o.fields[0].declared, o.fields[0].managers.map((m) => m.manager)],
            ["Secret argocd/argocd-rbac-cm", "[secret]", "[secret]", ["argocd-server"]],
        );
    });

    it("compares texts of several lines line by line, and reads a missing or empty JSON file as the reason there is no report", () => {
        assert.deepStrictEqual(changedLines("a\nb\nc\n", "a\nB\nc\n"), ["b", "B"]);
        assert.deepStrictEqual(changedLines("one", "two"), ["one", "two"]);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drift-"));
        fs.writeFileSync(path.join(dir, "empty.json"), "");
        assert.deepStrictEqual(readJson(path.join(dir, "empty.json")), { error: `${path.join(dir, "empty.json")} is empty` });
        assert.deepStrictEqual(readJson(path.join(dir, "none.json")), { error: `${path.join(dir, "none.json")} does not exist` });
    });

    it("npm run drift-report writes the report and exits 1 on drift, 0 when clean", function () {
        this.timeout(60_000);
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drift-"));
        const run = (preview: string, verify: string, out: string) => {
            const args = [
                "--stack",
                "hub",
                "--preview",
                path.join(FIXTURES, preview),
                "--verify",
                path.join(FIXTURES, verify),
                "--preview-exit",
                "0",
                "--out",
                path.join(dir, out),
            ];
            return spawnSync(process.execPath, [...scriptArgs(pkg.scripts["drift-report"], REPO_ROOT), ...args], { cwd: REPO_ROOT, encoding: "utf8" });
        };
        const bad = run("preview-drift.json", "verify-pass.json", "drift.md");
        assert.strictEqual(bad.status, 1, bad.stderr);
        assert.strictEqual(
            fs.readFileSync(path.join(dir, "drift.md"), "utf8"),
            driftReport({ stack: "hub", preview: drifted, previewExit: 0, verify: verifyPass }).markdown,
        );
        const good = run("preview-clean.json", "verify-pass.json", "clean.md");
        assert.strictEqual(good.status, 0, good.stderr);
        assert.ok(fs.readFileSync(path.join(dir, "clean.md"), "utf8").includes(CLEAN_MARK));
    });
});

describe("drift issue per stack", () => {
    const driftText = driftReport({ stack: "hub", preview: drifted, verify: verifyPass }).markdown;
    const cleanText = driftReport({ stack: "hub", preview: clean, previewExit: 0, verify: verifyPass }).markdown;

    it("finds the bot's issue of the stack by its marker, open first, never a person's or a pull request", () => {
        const issues: Issue[] = [
            { number: 1, state: "closed", body: driftText, user: { type: "Bot" } },
            { number: 2, state: "open", body: driftText, user: { type: "User" } },
            { number: 3, state: "open", body: driftText, user: { type: "Bot" }, pull_request: {} },
            { number: 4, state: "open", body: driftText.replace(issueMarker("hub"), issueMarker("hub-eu")), user: { type: "Bot" } },
            { number: 5, state: "open", body: driftText, user: { type: "Bot" } },
        ];
        assert.strictEqual(findIssue(issues, "hub")?.number, 5);
        assert.strictEqual(findIssue(issues.slice(0, 4), "hub")?.number, 1);
        assert.strictEqual(findIssue(issues, "hub-eu")?.number, 4);
        assert.strictEqual(findIssue(issues, "preprod"), undefined);
    });

    it("opens on drift, reopens a closed one, closes when clean, and opens none for a clean stack", () => {
        assert.deepStrictEqual(issueAction(undefined, driftText), { action: "create", body: driftText });
        assert.deepStrictEqual(issueAction({ number: 7, state: "closed" }, driftText), { action: "update", number: 7, state: "open", body: driftText });
        assert.deepStrictEqual(issueAction({ number: 7, state: "open" }, cleanText), { action: "update", number: 7, state: "closed", body: cleanText });
        assert.deepStrictEqual(issueAction({ number: 7, state: "closed" }, cleanText), { action: "none" });
        assert.deepStrictEqual(issueAction(undefined, cleanText), { action: "none" });
        const long = issueAction(undefined, driftText + "x".repeat(70000));
        assert.ok(long.action === "create" && long.body.length <= 65536 && long.body.endsWith("… (cut to fit an issue)\n"));
    });

    it("keeps one issue per stack through runs, against an API that keeps issues", async function () {
        this.timeout(30_000);
        const issues: (Issue & { title: string; state_reason?: string })[] = [
            { number: 1, state: "open", title: "unrelated", body: "hello", user: { type: "User" } },
        ];
        const calls: string[] = [];
        const server = http.createServer((req, res) => {
            let data = "";
            req.on("data", (c: Buffer) => (data += c.toString()));
            req.on("end", () => {
                const url = new URL(req.url!, "http://x");
                calls.push(`${req.method} ${url.pathname}`);
                assert.strictEqual(req.headers.authorization, "Bearer test-token");
                const send = (body: unknown) => {
                    res.writeHead(200, { "content-type": "application/json" });
                    res.end(JSON.stringify(body));
                };
                if (req.method === "GET") {
                    assert.strictEqual(url.searchParams.get("state"), "all");
                    return send(issues);
                }
                const body = JSON.parse(data) as { title: string; body: string; state?: "open" | "closed"; state_reason?: string };
                if (req.method === "POST") {
                    const issue = { number: issues.length + 1, state: "open" as const, title: body.title, body: body.body, user: { type: "Bot" } };
                    issues.push(issue);
                    return send(issue);
                }
                const issue = issues.find((i) => i.number === Number(url.pathname.split("/").pop()))!;
                Object.assign(issue, body);
                return send(issue);
            });
        });
        await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
        try {
            const repo = { api: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: "test-token", repository: "o/r" };
            assert.deepStrictEqual(await syncIssue(repo, "hub", cleanText), { action: "none" });
            assert.deepStrictEqual(await syncIssue(repo, "hub", driftText), { action: "created", number: 2 });
            assert.deepStrictEqual(await syncIssue(repo, "preprod", driftReport({ stack: "preprod", preview: drifted, verify: verifyPass }).markdown), {
                action: "created",
                number: 3,
            });
            assert.deepStrictEqual(await syncIssue(repo, "hub", driftText), { action: "updated", number: 2 });
            assert.deepStrictEqual(await syncIssue(repo, "hub", cleanText), { action: "closed", number: 2 });
            assert.deepStrictEqual(
                [issues[1].state, issues[1].state_reason, issues[1].title, issues[1].body],
                ["closed", "completed", issueTitle("hub"), cleanText],
            );
            assert.deepStrictEqual(await syncIssue(repo, "hub", driftText), { action: "updated", number: 2 });
            assert.strictEqual(issues[1].state, "open");
            assert.strictEqual(issues.length, 3, "one issue per stack");
            assert.deepStrictEqual(
                calls.filter((c) => !c.startsWith("GET")),
                ["POST /repos/o/r/issues", "POST /repos/o/r/issues", "PATCH /repos/o/r/issues/2", "PATCH /repos/o/r/issues/2", "PATCH /repos/o/r/issues/2"],
            );
        } finally {
            server.close();
        }
    });
});
