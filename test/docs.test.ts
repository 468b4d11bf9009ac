import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { ROOT, documentationFiles, headingAnchors, readDoc, relativeLinks } from "./markdown";

/**
 * The README and the pages under docs/ link to each other by relative path and heading anchor;
 * a page moved or a heading renamed must not leave a link pointing nowhere.
 */

/** Each link of `from` that does not reach an existing file and, with an anchor, one of its headings. */
function brokenLinks(from: string, markdown: string): string[] {
    const broken: string[] = [];
    for (const link of relativeLinks(markdown)) {
        const [target, fragment] = link.split("#", 2);
        const file = target === "" ? from : path.posix.normalize(path.posix.join(path.posix.dirname(from), target));
        if (file.startsWith("..") || !fs.existsSync(path.join(ROOT, file))) {
            broken.push(`${from}: ${link} (no file ${file})`);
        } else if (fragment !== undefined && !(file.endsWith(".md") && headingAnchors(readDoc(file)).has(`#${fragment}`))) {
            broken.push(`${from}: ${link} (no heading #${fragment} in ${file})`);
        }
    }
    return broken;
}

describe("documentation: the README and docs/", () => {
    const files = documentationFiles();

    it("has pages for each reader besides the README", () => {
        assert.ok(files.length > 10, `found only ${files.join(", ")}`);
        const without = ["docs/operations/", "docs/stages/", "docs/tenants/", "docs/maintainers/"].filter((dir) => !files.some((f) => f.startsWith(dir)));
        assert.deepStrictEqual(without, [], "folders without a page");
    });

    it("every relative link reaches an existing file and, with an anchor, a heading in it", () => {
        const broken = files.flatMap((f) => brokenLinks(f, readDoc(f)));
        assert.deepStrictEqual(broken, []);
    });

    it("the README links to every page under docs/", () => {
        const linked = new Set(relativeLinks(readDoc("README.md")).map((l) => l.split("#")[0]));
        const unlinked = files.filter((f) => f !== "README.md" && !linked.has(f));
        assert.deepStrictEqual(unlinked, []);
    });

    it("the day-2 runbooks name the stack's namespace through NS (controller.namespace), never a literal -n argo-rollouts in a command", () => {
        const literal = /(?:^|[\s`(])(?:-n|--namespace)(?:\s+|=)["']?argo-rollouts(?![\w-])/;
        assert.ok(
            ["kubectl -n argo-rollouts get po", "`helm list --namespace=argo-rollouts`"].every((c) => literal.test(c)) &&
                !literal.test('-n "${NS:-argo-rollouts}"'),
        );
        const pages = files.filter((f) => f.startsWith("docs/operations/"));
        assert.deepStrictEqual(
            pages.flatMap((f) =>
                readDoc(f)
                    .split("\n")
                    .filter((l) => literal.test(l))
                    .map((l) => `${f}: ${l.trim()}`),
            ),
            [],
        );
    });

    it("reads links it can check (a check that finds nothing proves nothing)", () => {
        assert.deepStrictEqual([...headingAnchors("# A\n```sh\n# not a heading\n```\n## A\n")], ["#a", "#a-1"]);
        assert.deepStrictEqual(relativeLinks("[x](a.md#b) [y](https://e.example/) [z](#c)\n```\n[no](d.md)\n```"), ["a.md#b", "#c"]);
        assert.deepStrictEqual(brokenLinks("docs/operations/x.md", "[v](verify.md) [w](verify.md#verify-argocd)"), []);
        assert.deepStrictEqual(brokenLinks("docs/operations/x.md", "[v](verify.md#nowhere) [m](missing.md)"), [
            "docs/operations/x.md: verify.md#nowhere (no heading #nowhere in docs/operations/verify.md)",
            "docs/operations/x.md: missing.md (no file docs/operations/missing.md)",
        ]);
        const links = files.flatMap((f) => relativeLinks(readDoc(f)));
        assert.ok(links.filter((l) => l.includes("#")).length > 50, `found only ${links.length} links`);
    });
});
