import * as assert from "assert";
import { execFile } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { promisify } from "util";
import { IssueComment, MAX_BODY, commentBody, commentMarker, findComment, targetFromEnv } from "../tools/prComment";
import { REPO_ROOT } from "../tools/stackFile";
import { boundaryNotice, diffPlans, hubChangeNotice, productRows, renderShortDiff } from "../tools/planDiff";
import { fakeGitHub } from "./harness";

describe("pull-request comment of the plan diff", () => {
    it("marks each stack's comment and finds only the bot's own for that stack", () => {
        const hub = commentBody("hub", "### diff\n");
        assert.ok(hub.startsWith(`${commentMarker("hub")}\n### diff\n`));
        const comments: IssueComment[] = [
            { id: 1, body: commentBody("hub", "quoted by a person"), user: { type: "User" } },
            { id: 2, body: commentBody("hub-eu", "x"), user: { type: "Bot" } },
            { id: 3, body: commentBody("hub", "x"), user: { type: "Bot" } },
            { id: 4, body: null, user: null },
        ];
        assert.strictEqual(findComment(comments, "hub")?.id, 3);
        assert.strictEqual(findComment(comments, "hub-eu")?.id, 2);
        assert.strictEqual(findComment(comments, "preprod"), undefined);
    });

    it("links the run and cuts a body GitHub would refuse", () => {
        const body = commentBody("hub", "x".repeat(100000), "https://github.test/o/r/actions/runs/7");
        assert.ok(body.length <= MAX_BODY, String(body.length));
        assert.match(
            body,
            /… \(cut to fit a comment\)\n\n---\nThe plan and the complete diff: the `plan-hub` artifact of \[this run\]\(https:\/\/github\.test\/o\/r\/actions\/runs\/7\)\.\n$/,
        );
    });

    it("says a controller move across the pod-template-hash boundary first, and a hub change a spoke needs, and whose rollout each tenant component reaches", () => {
        const values = (tag: string) => ({ controller: { image: { tag } } });
        const chart = (tag: string) => ({ urn: "c", name: "c", type: "kubernetes:helm.sh/v4:Chart", stage: null, inputs: { values: values(tag) } });
        assert.strictEqual(boundaryNotice([chart("v1.9.0")], [chart("v1.9.1")]), undefined);
        const components = (text: string) => productRows({ "delivery/prod-regulated-canary/strategy.yaml": text });
        const spoke = { stack: "eu", cluster: "eu", spokes: [], runsOn: "hub", groups: { regulated: { approverGroups: ["a", "b"] } } };
        const hub = (approverGroups: string[]) => [{ stack: "hub", cluster: "hub", spokes: [], groups: { rbac: { approverGroups } } }];
        assert.strictEqual(hubChangeNotice("eu", hub(["b", "a"]), [spoke]), undefined);
        const notices = [boundaryNotice([chart("v1.8.4")], [chart("v1.9.0")])!, hubChangeNotice("eu", hub(["a"]), [spoke])!];
        const body = commentBody("hub", renderShortDiff(diffPlans(components("[25]"), components("[10]")), { stack: "hub", against: "main", notices }));
        assert.match(
            body,
            /unchanged\.\n\n\*\*The controller .* v1\.8\.4 to v1\.9\.0, across the pod-template-hash boundary\*\*: every tenant Rollout .*upgrade\.md/,
        );
        assert.match(body, /\*\*This change needs a change of Pulumi\.hub\.yaml\*\*: .* its RBAC did not list argocd\.rbac\.approverGroups b before/);
        assert.match(body, /^- ~ changed `tenant component prod-regulated-canary` \(every regulated prod tenant on canary: their next rollout\)/m);
    });

    it("reads its arguments and the pull request from the Actions environment", () => {
        const event = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "event-")), "event.json");
        fs.writeFileSync(event, JSON.stringify({ pull_request: { number: 12 } }));
        assert.deepStrictEqual(targetFromEnv({ GITHUB_TOKEN: "t", GITHUB_REPOSITORY: "o/r", GITHUB_EVENT_PATH: event }), {
            api: "https://api.github.com",
            token: "t",
            repository: "o/r",
            pullRequest: 12,
        });
        assert.throws(() => targetFromEnv({ GITHUB_REPOSITORY: "o/r" }), /GITHUB_TOKEN, GITHUB_EVENT_PATH not set/);
        fs.writeFileSync(event, JSON.stringify({ push: {} }));
        assert.throws(() => targetFromEnv({ GITHUB_TOKEN: "t", GITHUB_REPOSITORY: "o/r", GITHUB_EVENT_PATH: event }), /not a pull request/);
    });

    describe("as the workflow runs it, against an API that keeps comments", () => {
        const comments: (IssueComment & { user: { type: string } })[] = [];
        let github: Awaited<ReturnType<typeof fakeGitHub>>;
        let dir: string;
        before(async () => {
            github = await fakeGitHub((method, url, body) => {
                if (method === "GET" && url.pathname === "/repos/o/r/issues/12/comments") {
                    const [page, per] = [Number(url.searchParams.get("page")), Number(url.searchParams.get("per_page"))];
                    return [200, comments.slice((page - 1) * per, page * per)];
                }
                if (method === "POST" && url.pathname === "/repos/o/r/issues/12/comments") {
                    comments.push({ id: 1000 + comments.length, body: body.body as string, user: { type: "Bot" } });
                    return [201, comments[comments.length - 1]];
                }
                const c = comments.find((x) => url.pathname === `/repos/o/r/issues/comments/${x.id}`);
                return method === "PATCH" && c ? [200, Object.assign(c, body)] : [404, { message: "Not Found" }];
            });
            dir = fs.mkdtempSync(path.join(os.tmpdir(), "comment-"));
            fs.writeFileSync(path.join(dir, "event.json"), JSON.stringify({ pull_request: { number: 12 } }));
            // More than a page of other comments before the stack's own.
            for (let i = 0; i < 120; i++) {
                comments.push({ id: i, body: `comment ${i}`, user: { type: "User" } });
            }
        });
        after(() => github.close());

        const post = (stack: string, text: string) => {
            const file = path.join(dir, `${stack}.md`);
            fs.writeFileSync(file, text);
            const env = {
                ...process.env,
                GITHUB_TOKEN: "test-token",
                GITHUB_REPOSITORY: "o/r",
                GITHUB_EVENT_PATH: path.join(dir, "event.json"),
                GITHUB_API_URL: github.api,
                GITHUB_SERVER_URL: "https://github.test",
                GITHUB_RUN_ID: "7",
            };
            // A non-zero exit rejects, with the command's stderr in its message.
            const args = ["--require", "./tools/swc-register.js", "tools/prComment.ts", "--stack", stack, "--file", file];
            return promisify(execFile)(process.execPath, args, { cwd: REPO_ROOT, env });
        };

        it("creates one comment per stack, then updates each in place", async () => {
            const first = await post("hub", "diff one\n");
            assert.match(first.stdout, /^created comment 1120 on pull request #12 \(stack hub\)$/m);
            await post("preprod", "diff of preprod\n");
            const { calls } = github;
            calls.length = 0;
            const again = await post("hub", "diff two\n");
            assert.match(again.stdout, /^updated comment 1120 /m);
            // Both pages read, then the one comment edited: nothing created.
            assert.deepStrictEqual(calls, ["GET /repos/o/r/issues/12/comments", "GET /repos/o/r/issues/12/comments", "PATCH /repos/o/r/issues/comments/1120"]);
            const bots = comments.filter((c) => c.user.type === "Bot");
            assert.strictEqual(bots.length, 2);
            assert.ok(bots[0].body!.startsWith(`${commentMarker("hub")}\ndiff two\n`));
            assert.match(bots[0].body!, /\[this run\]\(https:\/\/github\.test\/o\/r\/actions\/runs\/7\)/);
            assert.ok(bots[1].body!.startsWith(`${commentMarker("preprod")}\ndiff of preprod\n`));
        });
    });
});
