import * as assert from "assert";
import { execFile } from "child_process";
import * as fs from "fs";
import * as http from "http";
import { AddressInfo } from "net";
import * as os from "os";
import * as path from "path";
import { IssueComment, MAX_BODY, commentBody, commentMarker, findComment, targetFromEnv } from "../tools/prComment";
import { REPO_ROOT } from "../tools/stackFile";

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

    describe("as the workflow runs it, against an API that keeps comments", function () {
        this.timeout(60000);
        // The issue comments API's list (paged), create and update, in memory.
        const comments: (IssueComment & { user: { type: string } })[] = [];
        const calls: string[] = [];
        let server: http.Server;
        let dir: string;
        before(async () => {
            server = http.createServer((req, res) => {
                let data = "";
                req.on("data", (c: Buffer) => (data += c.toString()));
                req.on("end", () => {
                    const url = new URL(req.url!, "http://x");
                    calls.push(`${req.method} ${url.pathname}`);
                    assert.strictEqual(req.headers.authorization, "Bearer test-token");
                    const send = (status: number, body: unknown) => {
                        res.writeHead(status, { "content-type": "application/json" });
                        res.end(JSON.stringify(body));
                    };
                    if (req.method === "GET" && url.pathname === "/repos/o/r/issues/12/comments") {
                        const page = Number(url.searchParams.get("page"));
                        const per = Number(url.searchParams.get("per_page"));
                        return send(200, comments.slice((page - 1) * per, page * per));
                    }
                    if (req.method === "POST" && url.pathname === "/repos/o/r/issues/12/comments") {
                        const c = { id: 1000 + comments.length, body: (JSON.parse(data) as { body: string }).body, user: { type: "Bot" } };
                        comments.push(c);
                        return send(201, c);
                    }
                    const m = /^\/repos\/o\/r\/issues\/comments\/(\d+)$/.exec(url.pathname);
                    const c = m && comments.find((x) => x.id === Number(m[1]));
                    if (req.method === "PATCH" && c) {
                        c.body = (JSON.parse(data) as { body: string }).body;
                        return send(200, c);
                    }
                    send(404, { message: "Not Found" });
                });
            });
            await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
            dir = fs.mkdtempSync(path.join(os.tmpdir(), "comment-"));
            fs.writeFileSync(path.join(dir, "event.json"), JSON.stringify({ pull_request: { number: 12 } }));
            // More than a page of other comments before the stack's own.
            for (let i = 0; i < 120; i++) {
                comments.push({ id: i, body: `comment ${i}`, user: { type: "User" } });
            }
        });
        after(() => server.close());

        const post = (stack: string, text: string) => {
            const file = path.join(dir, `${stack}.md`);
            fs.writeFileSync(file, text);
            const env = {
                ...process.env,
                GITHUB_TOKEN: "test-token",
                GITHUB_REPOSITORY: "o/r",
                GITHUB_EVENT_PATH: path.join(dir, "event.json"),
                GITHUB_API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
                GITHUB_SERVER_URL: "https://github.test",
                GITHUB_RUN_ID: "7",
            };
            return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
                execFile(
                    process.execPath,
                    ["--require", "./tools/swc-register.js", "tools/prComment.ts", "--stack", stack, "--file", file],
                    { cwd: REPO_ROOT, env },
                    (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
                );
            });
        };

        it("creates one comment per stack, then updates each in place", async () => {
            const first = await post("hub", "diff one\n");
            assert.strictEqual(first.code, 0, first.stderr);
            assert.match(first.stdout, /^created comment 1120 on pull request #12 \(stack hub\)$/m);
            assert.strictEqual((await post("preprod", "diff of preprod\n")).code, 0);
            calls.length = 0;
            const again = await post("hub", "diff two\n");
            assert.strictEqual(again.code, 0, again.stderr);
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
