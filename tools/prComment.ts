/** The plan diff's comment per stack on a pull request (.github/workflows/preview.yml), found by its marker, through GitHub's REST API. */
import * as fs from "fs";
import { UsageError, argsOrExit, readFlags, readText, runMain } from "./cli";

/** GitHub refuses a comment or issue body over 65536 characters. */
export const MAX_BODY = 65536;

/** `text` cut to leave `room` characters, saying so. */
export const cutTo = (text: string, room: number, what: string): string => {
    const cut = `\n\n… (cut to fit ${what})\n`;
    return text.length <= room ? text : text.slice(0, room - cut.length) + cut;
};

export const commentMarker = (stack: string): string => `<!-- argo-rollouts-addon plan diff: stack ${stack} -->`;

/** The comment: the marker, the short diff, and where the run is; cut to what GitHub accepts. */
export function commentBody(stack: string, summary: string, runUrl?: string): string {
    const footer = runUrl ? `\n---\nThe plan and the complete diff: the \`plan-${stack}\` artifact of [this run](${runUrl}).\n` : "";
    const head = `${commentMarker(stack)}\n`;
    return head + cutTo(summary, MAX_BODY - head.length - footer.length, "a comment") + footer;
}

export type IssueComment = { id: number; body?: string | null; user?: { type?: string } | null };

/** Whether a comment or an issue is the workflow's bot's, for the stack's marker. */
export const byBot = (item: { body?: string | null; user?: { type?: string } | null }, marker: string): boolean =>
    item.user?.type === "Bot" && (item.body ?? "").startsWith(marker);

export const findComment = (comments: readonly IssueComment[], stack: string): IssueComment | undefined => comments.find((c) => byBot(c, commentMarker(stack)));

export interface Repo {
    /** `https://api.github.com`, or a GitHub Enterprise server's API. */
    api: string;
    token: string;
    /** `owner/name`. */
    repository: string;
}

/** One call of GitHub's REST API; an error names the response, never the request (it carries the token). */
export async function call(t: Pick<Repo, "api" | "token">, method: string, path: string, body?: unknown): Promise<unknown> {
    const headers = { authorization: `Bearer ${t.token}`, accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28" };
    const res = await fetch(`${t.api}${path}`, {
        method,
        headers: body ? { ...headers, "content-type": "application/json" } : headers,
        body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`GitHub ${method} ${path}: ${res.status} ${(await res.text()).slice(0, 300)}`);
    return res.json();
}

/** Every page of a list, 100 at a time, until `enough` says so. */
export async function pages<T>(r: Repo, path: string, enough: (all: T[]) => boolean = () => false): Promise<T[]> {
    const all: T[] = [];
    for (let page = 1; page <= 50; page++) {
        const batch = (await call(r, "GET", `${path}${path.includes("?") ? "&" : "?"}per_page=100&page=${page}`)) as T[];
        all.push(...batch);
        if (batch.length < 100 || enough(all)) break;
    }
    return all;
}

export async function upsertComment(t: Repo & { pullRequest: number }, stack: string, body: string): Promise<{ action: "updated" | "created"; id: number }> {
    const existing = findComment(await pages<IssueComment>(t, `/repos/${t.repository}/issues/${t.pullRequest}/comments`), stack);
    if (existing) {
        await call(t, "PATCH", `/repos/${t.repository}/issues/comments/${existing.id}`, { body });
        return { action: "updated", id: existing.id };
    }
    const created = (await call(t, "POST", `/repos/${t.repository}/issues/${t.pullRequest}/comments`, { body })) as IssueComment;
    return { action: "created", id: created.id };
}

/** `--stack <name> --file <file>`, the arguments of both workflow commands. */
export function stackAndFile(argv: readonly string[], usage: string): { stack: string; file: string } | "help" {
    const flags = readFlags(argv, { stack: { type: "string" }, file: { type: "string" } }, usage);
    if (flags !== "help" && (!flags.stack || !flags.file)) throw new UsageError(usage);
    return flags === "help" ? flags : { stack: flags.stack!, file: flags.file! };
}

export const parseCommentArgs = (argv: readonly string[]) => stackAndFile(argv, "usage: tools/prComment.ts --stack <name> --file <diff-summary.md>");

/** The repository from the Actions environment, or what is missing. */
export function repoFromEnv(env: NodeJS.ProcessEnv, more: string[] = []): Repo {
    const missing = ["GITHUB_TOKEN", "GITHUB_REPOSITORY", ...more].filter((k) => !env[k]);
    if (missing.length > 0) throw new Error(`not in a ${more.length > 0 ? "pull request's " : ""}workflow run: ${missing.join(", ")} not set`);
    return { api: env.GITHUB_API_URL ?? "https://api.github.com", token: env.GITHUB_TOKEN!, repository: env.GITHUB_REPOSITORY! };
}

export function targetFromEnv(env: NodeJS.ProcessEnv): Repo & { pullRequest: number } {
    const repo = repoFromEnv(env, ["GITHUB_EVENT_PATH"]);
    const pullRequest = (JSON.parse(fs.readFileSync(env.GITHUB_EVENT_PATH!, "utf8")) as { pull_request?: { number?: number } }).pull_request?.number;
    if (typeof pullRequest !== "number") throw new Error("the workflow's event is not a pull request: nothing to comment on");
    return { ...repo, pullRequest };
}

if (require.main === module) {
    runMain(async () => {
        const args = argsOrExit(() => parseCommentArgs(process.argv.slice(2)), "usage: tools/prComment.ts --stack <name> --file <diff-summary.md>");
        const target = targetFromEnv(process.env);
        const { GITHUB_SERVER_URL: server, GITHUB_RUN_ID: run } = process.env;
        const runUrl = server && run ? `${server}/${target.repository}/actions/runs/${run}` : undefined;
        const done = await upsertComment(target, args.stack, commentBody(args.stack, readText("--file", args.file), runUrl));
        return `${done.action} comment ${done.id} on pull request #${target.pullRequest} (stack ${args.stack})`;
    });
}
