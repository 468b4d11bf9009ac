import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLEAN_MARK, VerifyJson, driftReport, issueMarker, managerAdvice, readInputs, readJson } from "../tools/driftReport";
import { UsageError } from "../tools/cli";
import { PreviewDigest, changedLines, driftedObjects, managersOf, ownsPath, parsePropertyPath } from "../tools/previewDigest";
import { Issue, findIssue, issueAction, issueTitle, syncIssue } from "../tools/driftIssue";
import { fakeGitHub } from "./harness";

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
        for (const [text, want] of [
            ["spec.template.spec.containers[0].args[2]", ["spec", "template", "spec", "containers", 0, "args", 2]],
            ['data["policy.argo-rollouts-addon.csv"]', ["data", "policy.argo-rollouts-addon.csv"]],
            ['metadata.labels["pod-security.kubernetes.io/enforce"]', ["metadata", "labels", "pod-security.kubernetes.io/enforce"]],
            ['metadata.annotations["a\\"b"].x', ["metadata", "annotations", 'a"b', "x"]],
        ] as const) {
            assert.deepStrictEqual(parsePropertyPath(text), want, text);
        }
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
        const managers = managersOf(shared, ["data", "k"]).map((m) => m.manager);
        assert.deepStrictEqual(managers, ["argocd-controller"]);
        assert.deepStrictEqual(managersOf({ data: {} }, ["data", "k"]), []);
    });

    it("writes the issue: the counts, a table per drifted object with its fields, live and declared values and the managers that wrote them (not the program), what to do, verify's FAIL rows", () => {
        const report = driftReport({ stack: "hub", preview: drifted, previewExit: 255, verify: verifyFail, runUrl: "https://github.test/o/r/actions/runs/7" });
        assert.strictEqual(report.clean, false);
        const md = report.markdown;
        assert.ok(md.startsWith(`${issueMarker("hub")}\n## Drift on stack \`hub\`\n`), md);
        assert.ok(!md.includes(CLEAN_MARK));
        assert.deepStrictEqual(section(md, "## Drift on stack `hub`").slice(0, 1), [
            "3 drifted objects, 1 verify FAIL. The next `pulumi up` reverts every field below to what the stack declares.",
        ]);
        // The refresh steps and the stack itself are not drift.
        assert.strictEqual(drifted.steps!.filter((s) => s.op === "refresh").length, 3);
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
        for (const [manager, advice] of [
            ["helm", /Helm release/],
            ["argocd-application-controller", /ArgoCD syncs an Application/],
            ["argocd-server", /ArgoCD UI or CLI/],
            ["kyverno", /Kyverno mutate policy/],
            ["kubectl-client-side-apply", /kubectl/],
            ["pulumi-kubernetes-0a1b2c3d", /another Pulumi program/],
            ["some-operator", /another writer/],
        ] as const) {
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
        const diagnostics = [
            { message: "error: configured Kubernetes cluster is unreachable\n  more", severity: "error" },
            { message: "a warning", severity: "warning" },
        ];
        const unverified = { stack: "hub", error: 'stack "hub": cannot verify: connection refused', results: [] };
        const unread = { preview: { error: "preview-hub.json is empty" }, previewExit: 255 };
        // Each input, the section that says why it is not clean, and what that section says.
        for (const [input, heading, says] of [
            [unread, "Drifted objects", "The preview printed no report: preview-hub.json is empty"],
            // Exit non-zero without a change: a policy violation (the digest leaves policy events out) or an error.
            [
                { preview: clean, previewExit: 255 },
                "Preview errors",
                "The preview exited 255 without naming a change: a policy violation or an error (the run's log has it).",
            ],
            [{ preview: { ...clean, diagnostics } }, "Preview errors", "- error: configured Kubernetes cluster is unreachable more"],
            [{ preview: clean, previewExit: 0, verify: unverified }, "verify", 'verify did not run its checks: stack "hub": cannot verify: connection refused'],
        ] as [Partial<Parameters<typeof driftReport>[0]>, string, string][]) {
            const report = driftReport({ stack: "hub", preview: clean, verify: verifyPass, ...input });
            assert.deepStrictEqual([report.clean, section(report.markdown, `### ${heading}`)], [false, [says]]);
        }
    });

    it("shows what was deleted on the cluster and what the stack no longer declares", () => {
        const step = drifted.steps!.find((s) => s.op === "update" && s.urn.includes("Namespace"))!;
        const bare = { ...step, detailedDiff: null, diffReasons: [] };
        const gone = [
            { ...bare, op: "create", oldState: undefined },
            { ...bare, op: "delete", newState: undefined },
        ];
        const md = driftReport({ stack: "hub", preview: { steps: gone }, verify: verifyPass }).markdown;
        assert.deepStrictEqual(section(md, "#### Namespace argo-rollouts (create)").slice(1), [
            "Missing on the cluster: deleted outside the program; the next `up` creates it again.",
        ]);
        assert.deepStrictEqual(section(md, "#### Namespace argo-rollouts (delete)").slice(1), [
            "No longer declared by the stack at `main`: the next `up` deletes it.",
        ]);
    });

    it("never shows a Secret's values, nor a URL's user-info or token from its inputs", () => {
        const url = "https://ci:hunter2@h.test/x?token=s3cret";
        const finding = { id: "x", status: "FAIL", what: url, findings: [{ object: url, found: url }] };
        const md = driftReport({ stack: "hub", preview: { diagnostics: [{ severity: "error", message: url }] }, verify: { results: [finding] } }).markdown;
        assert.ok(md.includes("https://h.test/x?[not shown]") && !/hunter2|s3cret/.test(md), md);
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

    it("compares texts of several lines line by line, reads a missing or empty JSON file as the reason there is no report, and refuses one of another shape", () => {
        assert.deepStrictEqual(changedLines("a\nb\nc\n", "a\nB\nc\n"), ["b", "B"]);
        assert.deepStrictEqual(changedLines("one", "two"), ["one", "two"]);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drift-"));
        fs.writeFileSync(path.join(dir, "empty.json"), "");
        assert.deepStrictEqual(readJson(path.join(dir, "empty.json")), { error: `${path.join(dir, "empty.json")} is empty` });
        assert.deepStrictEqual(readJson(path.join(dir, "none.json")), { error: `${path.join(dir, "none.json")} does not exist` });
        const write = (name: string, doc: unknown) => (fs.writeFileSync(path.join(dir, name), JSON.stringify(doc)), path.join(dir, name));
        for (const [p, v, why] of [
            [{ steps: "none" }, verifyPass, `${dir}/p.json: /steps must be a list, got a string`],
            [{ steps: [drifted.steps![0], { op: "update" }] }, verifyPass, `${dir}/p.json: /steps/1/urn must be a string, got nothing`],
            [{ steps: [null] }, verifyPass, `${dir}/p.json: /steps/0 must be an object, got null`],
            [drifted, { results: "FAIL" }, `${dir}/v.json: /results must be a list, got a string`],
        ] as const) {
            assert.throws(() => readInputs(write("p.json", p), write("v.json", v)), new UsageError(why));
        }
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

    it("leaves a closed issue closed while clean, and cuts a body GitHub would refuse", () => {
        // Opened, reopened, closed and none for a clean stack without one: the API test below.
        assert.deepStrictEqual(issueAction({ number: 7, state: "closed" }, cleanText), { action: "none" });
        const long = issueAction(undefined, driftText + "x".repeat(70000));
        assert.ok(long.action === "create" && long.body.length <= 65536 && long.body.endsWith("… (cut to fit an issue)\n"));
    });

    it("keeps one issue per stack through runs, against an API that keeps issues", async () => {
        const issues: (Issue & { title: string; state_reason?: string })[] = [
            { number: 1, state: "open", title: "unrelated", body: "hello", user: { type: "User" } },
        ];
        const github = await fakeGitHub((method, url, body) => {
            if (method === "GET") {
                assert.strictEqual(url.searchParams.get("state"), "all");
                return [200, issues];
            }
            if (method === "POST") {
                issues.push({ number: issues.length + 1, state: "open", title: body.title as string, body: body.body as string, user: { type: "Bot" } });
                return [200, issues[issues.length - 1]];
            }
            const issue = issues.find((i) => i.number === Number(url.pathname.split("/").pop()))!;
            return [200, Object.assign(issue, body)];
        });
        try {
            const repo = { api: github.api, token: "test-token", repository: "o/r" };
            assert.deepStrictEqual(await syncIssue(repo, "hub", cleanText), { action: "none" });
            assert.deepStrictEqual(await syncIssue(repo, "hub", driftText), { action: "created", number: 2 });
            const preprod = driftReport({ stack: "preprod", preview: drifted, verify: verifyPass }).markdown;
            assert.deepStrictEqual(await syncIssue(repo, "preprod", preprod), { action: "created", number: 3 });
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
                github.calls.filter((c) => !c.startsWith("GET")),
                ["POST /repos/o/r/issues", "POST /repos/o/r/issues", "PATCH /repos/o/r/issues/2", "PATCH /repos/o/r/issues/2", "PATCH /repos/o/r/issues/2"],
            );
        } finally {
            github.close();
        }
    });
});
