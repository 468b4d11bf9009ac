/** The README's adoption runbook, read as a user reads it: each step's shell block, in order. */
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../tools/stackFile";

export interface ReadmeStep {
    title: string;
    commands: string[];
}

export function readmeRunbook(readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8")): ReadmeStep[] {
    const section = readme.slice(readme.indexOf("### Adopting an existing install"), readme.indexOf("## Configuration"));
    const steps: ReadmeStep[] = [];
    for (const m of section.matchAll(/^(\d+)\. ([^\n]*)[\s\S]*?```sh\n([\s\S]*?)```/gm)) {
        steps.push({ title: m[2].trim(), commands: m[3].split("\n").map((l) => l.trim()).filter((l) => l !== "") });
    }
    return steps;
}

/**
 * The destroy command the README documents ("CRDs are protected and survive `pulumi destroy`"),
 * as arguments to the pulumi CLI, with the flags a non-interactive run adds.
 */
export function readmeDestroy(readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8")): string[] {
    const start = readme.indexOf("### CRDs are protected and survive `pulumi destroy`");
    const section = readme.slice(start, readme.indexOf("\n### ", start + 1));
    const line = /```sh\n(pulumi destroy[^\n]*)\n/.exec(section)?.[1];
    if (!line) {
        throw new Error("the README documents no `pulumi destroy` command in its CRD protection section");
    }
    const words = line.replace(/\s+#.*$/, "").split(/\s+/).slice(1);
    // The stack is the run's own (`-s <stack>` / `--stack <stack>` in the README names an example).
    const args = words.filter((w, i) => !["-s", "--stack"].includes(w) && !["-s", "--stack"].includes(words[i - 1] ?? ""));
    return [...args, "--yes", "--skip-preview"];
}
