/**
 * The documented adoption runbook (docs/operations/adopt.md), read as a user reads it: each step's
 * shell block, in order; and the documented destroy command (docs/operations/troubleshooting.md).
 */
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../tools/stackFile";

export const ADOPT_PAGE = path.join("docs", "operations", "adopt.md");
export const UPGRADE_PAGE = path.join("docs", "operations", "upgrade.md");
export const TROUBLESHOOTING_PAGE = path.join("docs", "operations", "troubleshooting.md");

export interface ReadmeStep {
    title: string;
    commands: string[];
}

/** The numbered steps of the adoption runbook, which ends where the page's adopt-check section begins. */
export function readmeRunbook(page = fs.readFileSync(path.join(REPO_ROOT, ADOPT_PAGE), "utf8")): ReadmeStep[] {
    return numberedSteps(page, 0, page.indexOf("\n## adopt-check"));
}

/** The numbered steps of the upgrade runbook (docs/operations/upgrade.md, its "Runbook" section). */
export function upgradeRunbookSteps(page = fs.readFileSync(path.join(REPO_ROOT, UPGRADE_PAGE), "utf8")): ReadmeStep[] {
    const start = page.indexOf("\n## Runbook");
    if (start < 0) {
        throw new Error(`${UPGRADE_PAGE} has no section "Runbook"`);
    }
    return numberedSteps(page, start, page.indexOf("\n## ", start + 1));
}

function numberedSteps(page: string, start: number, end: number): ReadmeStep[] {
    const section = end >= 0 ? page.slice(start, end) : page.slice(start);
    const steps: ReadmeStep[] = [];
    for (const m of section.matchAll(/^(\d+)\. ([^\n]*)[\s\S]*?```sh\n([\s\S]*?)```/gm)) {
        steps.push({
            title: m[2].trim(),
            commands: m[3]
                .split("\n")
                .map((l) => l.trim())
                .filter((l) => l !== ""),
        });
    }
    return steps;
}

/**
 * The destroy command the troubleshooting page documents ("CRDs are protected and survive
 * `pulumi destroy`"), as arguments to the pulumi CLI, with the flags a non-interactive run adds.
 */
export function readmeDestroy(page = fs.readFileSync(path.join(REPO_ROOT, TROUBLESHOOTING_PAGE), "utf8")): string[] {
    const start = page.indexOf("### CRDs are protected and survive `pulumi destroy`");
    if (start < 0) {
        throw new Error(`${TROUBLESHOOTING_PAGE} has no section "CRDs are protected and survive \`pulumi destroy\`"`);
    }
    // The entry ends at the next heading, an entry's (###) or a group's (##).
    const next = page.slice(start + 1).search(/\n#{2,3} /);
    const section = next >= 0 ? page.slice(start, start + 1 + next) : page.slice(start);
    const line = /```sh\n(pulumi destroy[^\n]*)\n/.exec(section)?.[1];
    if (!line) {
        throw new Error(`${TROUBLESHOOTING_PAGE} documents no \`pulumi destroy\` command in its CRD protection section`);
    }
    const words = line
        .replace(/\s+#.*$/, "")
        .split(/\s+/)
        .slice(1);
    // The stack is the run's own (`-s <stack>` / `--stack <stack>` on the page names an example).
    const args = words.filter((w, i) => !["-s", "--stack"].includes(w) && !["-s", "--stack"].includes(words[i - 1] ?? ""));
    return [...args, "--yes", "--skip-preview"];
}
