/**
 * The drift workflow's issue per stack (.github/workflows/drift.yml), found by the hidden marker its
 * body starts with and edited in place: drift opens or reopens it, a clean report closes it, a clean
 * stack without an open issue gets none. GitHub's issues API, with GITHUB_TOKEN, GITHUB_REPOSITORY
 * and GITHUB_API_URL.
 */
import * as fs from "fs";
import { UsageError, argsOrExit, readFlags } from "./cli";
import { CLEAN_MARK, issueMarker } from "./driftReport";
import { call } from "./prComment";

/** GitHub refuses an issue body over 65536 characters. */
export const MAX_BODY = 65536;

export interface Issue {
    number: number;
    state: "open" | "closed";
    body?: string | null;
    user?: { type?: string } | null;
    /** Set when the "issue" is a pull request (the issues API lists both). */
    pull_request?: unknown;
}

/** The stack's drift issue: the first the workflow's bot wrote with the stack's marker, open ones first. */
export function findIssue(issues: readonly Issue[], stack: string): Issue | undefined {
    const marker = issueMarker(stack);
    const mine = issues.filter((i) => i.pull_request === undefined && i.user?.type === "Bot" && (i.body ?? "").startsWith(`${marker}\n`));
    return mine.find((i) => i.state === "open") ?? mine[0];
}

export function issueTitle(stack: string): string {
    return `Drift on stack ${stack}`;
}

export type IssueAction =
    { action: "create"; body: string } | { action: "update"; number: number; state: "open" | "closed"; body: string } | { action: "none" };

/** What to do with the stack's issue for this report: open or update on drift, close when clean, nothing for a clean stack without an open issue. */
export function issueAction(existing: Issue | undefined, report: string): IssueAction {
    const body = report.length <= MAX_BODY ? report : `${report.slice(0, MAX_BODY - 40)}\n\n… (cut to fit an issue)\n`;
    const clean = report.split("\n", 3).includes(CLEAN_MARK);
    if (clean) {
        return existing?.state === "open" ? { action: "update", number: existing.number, state: "closed", body } : { action: "none" };
    }
    return existing ? { action: "update", number: existing.number, state: "open", body } : { action: "create", body };
}

export interface Repo {
    api: string;
    token: string;
    /** `owner/name`. */
    repository: string;
}

/** Applies the report to the stack's issue; returns what it did. */
export async function syncIssue(r: Repo, stack: string, report: string): Promise<{ action: string; number?: number }> {
    const issues: Issue[] = [];
    for (let page = 1; page <= 50; page++) {
        const batch = (await call(r, "GET", `/repos/${r.repository}/issues?state=all&per_page=100&page=${page}`)) as Issue[];
        issues.push(...batch);
        if (batch.length < 100 || findIssue(issues, stack)?.state === "open") {
            break;
        }
    }
    const todo = issueAction(findIssue(issues, stack), report);
    if (todo.action === "create") {
        const created = (await call(r, "POST", `/repos/${r.repository}/issues`, { title: issueTitle(stack), body: todo.body })) as Issue;
        return { action: "created", number: created.number };
    }
    if (todo.action === "update") {
        await call(r, "PATCH", `/repos/${r.repository}/issues/${todo.number}`, {
            title: issueTitle(stack),
            body: todo.body,
            state: todo.state,
            ...(todo.state === "closed" ? { state_reason: "completed" } : {}),
        });
        return { action: todo.state === "closed" ? "closed" : "updated", number: todo.number };
    }
    return { action: "none" };
}

const USAGE = "usage: tools/driftIssue.ts --stack <name> --file <drift report>";

export function parseIssueArgs(argv: readonly string[]): { stack: string; file: string } | "help" {
    const flags = readFlags(argv, { stack: { type: "string" }, file: { type: "string" } }, USAGE);
    if (flags !== "help" && (!flags.stack || !flags.file)) {
        throw new UsageError(USAGE);
    }
    return flags === "help" ? flags : { stack: flags.stack!, file: flags.file! };
}

export function repoFromEnv(env: NodeJS.ProcessEnv): Repo {
    const missing = ["GITHUB_TOKEN", "GITHUB_REPOSITORY"].filter((k) => !env[k]);
    if (missing.length > 0) {
        throw new Error(`not in a workflow run: ${missing.join(", ")} not set`);
    }
    return { api: env.GITHUB_API_URL ?? "https://api.github.com", token: env.GITHUB_TOKEN!, repository: env.GITHUB_REPOSITORY! };
}

async function main(): Promise<void> {
    const args = argsOrExit(() => parseIssueArgs(process.argv.slice(2)), USAGE);
    const repo = repoFromEnv(process.env);
    const done = await syncIssue(repo, args.stack, fs.readFileSync(args.file, "utf8"));
    console.log(done.number === undefined ? `stack ${args.stack}: no drift and no open issue` : `${done.action} issue #${done.number} (stack ${args.stack})`);
}

if (require.main === module) {
    main().catch((err: unknown) => {
        console.error(err instanceof Error ? err.message : String(err));
        process.exit(1);
    });
}
