/**
 * The pull-request workflow's plan diff (.github/workflows/preview.yml): one comment per stack,
 * updated in place, through GitHub's issue comments API with what Actions sets (GITHUB_TOKEN,
 * GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_EVENT_PATH, GITHUB_SERVER_URL and GITHUB_RUN_ID).
 */
import * as fs from "fs";
import { UsageError, argsOrExit, readFlags } from "./cli";

/** GitHub refuses a comment body over 65536 characters. */
export const MAX_BODY = 65536;

/** The hidden line that marks a stack's comment, so the next run finds it and edits it. */
export function commentMarker(stack: string): string {
    return `<!-- argo-rollouts-addon plan diff: stack ${stack} -->`;
}

/** The comment: the marker, the short diff, and where the run is; cut to what GitHub accepts. */
export function commentBody(stack: string, summary: string, runUrl?: string): string {
    const footer = runUrl ? `\n---\nThe plan and the complete diff: the \`plan-${stack}\` artifact of [this run](${runUrl}).\n` : "";
    const head = `${commentMarker(stack)}\n`;
    const room = MAX_BODY - head.length - footer.length;
    const cut = "\n\n… (cut to fit a comment)\n";
    const text = summary.length <= room ? summary : summary.slice(0, room - cut.length) + cut;
    return head + text + footer;
}

export interface IssueComment {
    id: number;
    body?: string | null;
    user?: { type?: string } | null;
}

/** The stack's earlier comment: the first one a bot (the workflow's token) wrote with its marker. */
export function findComment(comments: readonly IssueComment[], stack: string): IssueComment | undefined {
    const marker = commentMarker(stack);
    return comments.find((c) => c.user?.type === "Bot" && (c.body ?? "").startsWith(marker));
}

export interface GitHubTarget {
    /** `https://api.github.com`, or a GitHub Enterprise server's API. */
    api: string;
    token: string;
    /** `owner/name`. */
    repository: string;
    pullRequest: number;
}

/** One call of GitHub's REST API; an error names the response, never the request (it carries the token). */
export async function call(t: { api: string; token: string }, method: string, path: string, body?: unknown): Promise<unknown> {
    const headers = { authorization: `Bearer ${t.token}`, accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28" };
    const res = await fetch(`${t.api}${path}`, {
        method,
        headers: body ? { ...headers, "content-type": "application/json" } : headers,
        body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) {
        throw new Error(`GitHub ${method} ${path}: ${res.status} ${(await res.text()).slice(0, 300)}`);
    }
    return res.json();
}

/** Updates the stack's comment on the pull request, or creates it; returns what it did. */
export async function upsertComment(t: GitHubTarget, stack: string, body: string): Promise<{ action: "updated" | "created"; id: number }> {
    const comments: IssueComment[] = [];
    for (let page = 1; ; page++) {
        const batch = (await call(t, "GET", `/repos/${t.repository}/issues/${t.pullRequest}/comments?per_page=100&page=${page}`)) as IssueComment[];
        comments.push(...batch);
        if (batch.length < 100) {
            break;
        }
    }
    const existing = findComment(comments, stack);
    if (existing) {
        await call(t, "PATCH", `/repos/${t.repository}/issues/comments/${existing.id}`, { body });
        return { action: "updated", id: existing.id };
    }
    const created = (await call(t, "POST", `/repos/${t.repository}/issues/${t.pullRequest}/comments`, { body })) as IssueComment;
    return { action: "created", id: created.id };
}

const USAGE = "usage: tools/prComment.ts --stack <name> --file <diff-summary.md>";

export function parseCommentArgs(argv: readonly string[]): { stack: string; file: string } | "help" {
    const flags = readFlags(argv, { stack: { type: "string" }, file: { type: "string" } }, USAGE);
    if (flags !== "help" && (!flags.stack || !flags.file)) {
        throw new UsageError(USAGE);
    }
    return flags === "help" ? flags : { stack: flags.stack!, file: flags.file! };
}

/** The pull request and repository from the Actions environment, or what is missing. */
export function targetFromEnv(env: NodeJS.ProcessEnv): GitHubTarget {
    const missing = ["GITHUB_TOKEN", "GITHUB_REPOSITORY", "GITHUB_EVENT_PATH"].filter((k) => !env[k]);
    if (missing.length > 0) {
        throw new Error(`not in a pull request's workflow run: ${missing.join(", ")} not set`);
    }
    const event = JSON.parse(fs.readFileSync(env.GITHUB_EVENT_PATH!, "utf8")) as { pull_request?: { number?: number } };
    const pullRequest = event.pull_request?.number;
    if (typeof pullRequest !== "number") {
        throw new Error("the workflow's event is not a pull request: nothing to comment on");
    }
    return { api: env.GITHUB_API_URL ?? "https://api.github.com", token: env.GITHUB_TOKEN!, repository: env.GITHUB_REPOSITORY!, pullRequest };
}

async function main(): Promise<void> {
    const args = argsOrExit(() => parseCommentArgs(process.argv.slice(2)), USAGE);
    const target = targetFromEnv(process.env);
    const runUrl =
        process.env.GITHUB_SERVER_URL && process.env.GITHUB_RUN_ID
            ? `${process.env.GITHUB_SERVER_URL}/${target.repository}/actions/runs/${process.env.GITHUB_RUN_ID}`
            : undefined;
    const body = commentBody(args.stack, fs.readFileSync(args.file, "utf8"), runUrl);
    const done = await upsertComment(target, args.stack, body);
    console.log(`${done.action} comment ${done.id} on pull request #${target.pullRequest} (stack ${args.stack})`);
}

if (require.main === module) {
    main().catch((err: unknown) => {
        console.error(err instanceof Error ? err.message : String(err));
        process.exit(1);
    });
}
