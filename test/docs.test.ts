import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { ROOT, anchorOf, documentationFiles, headingAnchors, readDoc, relativeLinks } from "./markdown";

/**
 * The README and the pages under docs/ link to each other by relative path and heading anchor;
 * a page moved or a heading renamed must not leave a link pointing nowhere.
 */

/** Each link of `from` that does not reach an existing file and, with an anchor, one of its headings. */
function brokenLinks(from: string, markdown: string, exists: (file: string) => boolean, anchorsOf: (file: string) => Set<string>): string[] {
    const broken: string[] = [];
    for (const link of relativeLinks(markdown)) {
        const [target, fragment] = link.split("#", 2);
        const file = target === "" ? from : path.posix.normalize(path.posix.join(path.posix.dirname(from), target));
        if (file.startsWith("..") || !exists(file)) {
            broken.push(`${from}: ${link} (no file ${file})`);
        } else if (fragment !== undefined && !(file.endsWith(".md") && anchorsOf(file).has(`#${fragment}`))) {
            broken.push(`${from}: ${link} (no heading #${fragment} in ${file})`);
        }
    }
    return broken;
}

describe("documentation: the README and docs/", () => {
    const files = documentationFiles();
    const exists = (file: string) => fs.existsSync(path.join(ROOT, file));
    const anchorsOf = (file: string) => headingAnchors(readDoc(file));

    it("has pages for each reader besides the README", () => {
        assert.ok(files.length > 10, `found only ${files.join(", ")}`);
        for (const dir of ["docs/operations/", "docs/stages/", "docs/tenants/", "docs/maintainers/"]) {
            assert.ok(
                files.some((f) => f.startsWith(dir)),
                `no page under ${dir}`,
            );
        }
    });

    it("every relative link reaches an existing file and, with an anchor, a heading in it", () => {
        const broken = files.flatMap((f) => brokenLinks(f, readDoc(f), exists, anchorsOf));
        assert.deepStrictEqual(broken, []);
    });

    it("the README links to every page under docs/", () => {
        const linked = new Set(relativeLinks(readDoc("README.md")).map((l) => l.split("#")[0]));
        const unlinked = files.filter((f) => f !== "README.md" && !linked.has(f));
        assert.deepStrictEqual(unlinked, []);
    });

    it("reads links it can check (a check that finds nothing proves nothing)", () => {
        assert.strictEqual(anchorOf("`pulumi preview` fails: the shared Gateway has no listener"), "#pulumi-preview-fails-the-shared-gateway-has-no-listener");
        assert.strictEqual(anchorOf("Verify's own permissions"), "#verifys-own-permissions");
        assert.deepStrictEqual([...headingAnchors("# A\n```sh\n# not a heading\n```\n## A\n")], ["#a", "#a-1"]);
        assert.deepStrictEqual(relativeLinks("[x](a.md#b) [y](https://e.example/) [z](#c)\n```\n[no](d.md)\n```"), ["a.md#b", "#c"]);
        const page = "docs/operations/verify.md";
        const fake = (name: string) => name === page;
        const none = () => new Set<string>();
        assert.deepStrictEqual(brokenLinks("docs/operations/x.md", "[v](verify.md)", fake, none), []);
        assert.deepStrictEqual(brokenLinks("docs/operations/x.md", "[v](verify.md#nowhere) [m](missing.md)", fake, none), [
            "docs/operations/x.md: verify.md#nowhere (no heading #nowhere in docs/operations/verify.md)",
            "docs/operations/x.md: missing.md (no file docs/operations/missing.md)",
        ]);
        const links = files.flatMap((f) => relativeLinks(readDoc(f)));
        assert.ok(links.filter((l) => l.includes("#")).length > 50, `found only ${links.length} links`);
    });
});
