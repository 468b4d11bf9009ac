/**
 * Reading the project's documentation as GitHub renders it: the README and the pages under
 * docs/, their headings' anchors and their relative links.
 */
import * as fs from "fs";
import * as path from "path";

export const ROOT = path.resolve(__dirname, "..");

/** README.md and every page under docs/, relative to the project root, with `/` separators. */
export function documentationFiles(): string[] {
    const docs = fs.existsSync(path.join(ROOT, "docs")) ? fs.readdirSync(path.join(ROOT, "docs"), { recursive: true, encoding: "utf8" }) : [];
    return ["README.md", ...docs.filter((f) => f.endsWith(".md")).map((f) => `docs/${f.split(path.sep).join("/")}`)];
}

export function readDoc(file: string): string {
    return fs.readFileSync(path.join(ROOT, file), "utf8");
}

/** The text outside fenced code blocks: a `#` comment in a shell block is no heading, a `](` in one no link. */
function prose(markdown: string): string[] {
    let fenced = false;
    return markdown.split("\n").filter((line) => {
        if (line.startsWith("```")) {
            fenced = !fenced;
            return false;
        }
        return !fenced;
    });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
    return `#${heading
        .trim()
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, "")
        .replace(/ /g, "-")}`;
}

/** Every heading anchor of a page; a repeated heading gets `-1`, `-2`, ... as on GitHub. */
export function headingAnchors(markdown: string): Set<string> {
    const seen = new Map<string, number>();
    const anchors = new Set<string>();
    for (const line of prose(markdown)) {
        const m = /^#{1,6} (.+)$/.exec(line);
        if (m) {
            const anchor = anchorOf(m[1]);
            const n = seen.get(anchor) ?? 0;
            seen.set(anchor, n + 1);
            anchors.add(n === 0 ? anchor : `${anchor}-${n}`);
        }
    }
    return anchors;
}

/** Every inline link target of a page that is not a URL: `file.md`, `file.md#anchor` or `#anchor`. */
export function relativeLinks(markdown: string): string[] {
    const targets = prose(markdown).flatMap((line) => [...line.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]));
    return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}
