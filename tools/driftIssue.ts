/** A stack's drift issue (.github/workflows/drift.yml), found by its marker: drift opens or reopens it, a clean report closes it. */
import { argsOrExit, readText, runMain } from "./cli";
import { CLEAN_MARK, issueMarker } from "./driftReport";
import { MAX_BODY, Repo, byBot, call, cutTo, pages, repoFromEnv, stackAndFile } from "./prComment";

export { MAX_BODY, Repo, repoFromEnv };

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
    const mine = issues.filter((i) => i.pull_request === undefined && byBot(i, `${issueMarker(stack)}\n`));
    return mine.find((i) => i.state === "open") ?? mine[0];
}

export const issueTitle = (stack: string): string => `Drift on stack ${stack}`;

export type IssueAction =
    { action: "create"; body: string } | { action: "update"; number: number; state: "open" | "closed"; body: string } | { action: "none" };

/** Open or update on drift, close when clean, nothing for a clean stack without an open issue. */
export function issueAction(existing: Issue | undefined, report: string): IssueAction {
    const body = cutTo(report, MAX_BODY, "an issue");
    if (report.split("\n", 3).includes(CLEAN_MARK)) {
        return existing?.state === "open" ? { action: "update", number: existing.number, state: "closed", body } : { action: "none" };
    }
    return existing ? { action: "update", number: existing.number, state: "open", body } : { action: "create", body };
}

export async function syncIssue(r: Repo, stack: string, report: string): Promise<{ action: string; number?: number }> {
    const issues = await pages<Issue>(r, `/repos/${r.repository}/issues?state=all`, (all) => findIssue(all, stack)?.state === "open");
    const todo = issueAction(findIssue(issues, stack), report);
    if (todo.action === "create") {
        const created = (await call(r, "POST", `/repos/${r.repository}/issues`, { title: issueTitle(stack), body: todo.body })) as Issue;
        return { action: "created", number: created.number };
    }
    if (todo.action === "update") {
        const closed = todo.state === "closed";
        await call(r, "PATCH", `/repos/${r.repository}/issues/${todo.number}`, {
            title: issueTitle(stack),
            body: todo.body,
            state: todo.state,
            ...(closed ? { state_reason: "completed" } : {}),
        });
        return { action: closed ? "closed" : "updated", number: todo.number };
    }
    return { action: "none" };
}

export const parseIssueArgs = (argv: readonly string[]) => stackAndFile(argv, "usage: tools/driftIssue.ts --stack <name> --file <drift report>");

if (require.main === module) {
    runMain(async () => {
        const args = argsOrExit(() => parseIssueArgs(process.argv.slice(2)), "usage: tools/driftIssue.ts --stack <name> --file <drift report>");
        const done = await syncIssue(repoFromEnv(process.env), args.stack, readText("--file", args.file));
        return done.number === undefined ? `stack ${args.stack}: no drift and no open issue` : `${done.action} issue #${done.number} (stack ${args.stack})`;
    });
}
