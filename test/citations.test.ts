import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../tools/stackFile";

/** Code and docs cite what users have: ADR-056 by decision, upstream by repository, path and tag. */
describe("citations", () => {
    const files: string[] = [];
    const walk = (dir: string) => {
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
            if (["node_modules", ".git"].includes(e.name)) continue;
            const p = path.join(dir, e.name);
            if (e.isDirectory()) {
                walk(p);
            } else if (/\.(ts|md|go|sh|yaml|json)$/.test(e.name) && !e.name.endsWith("go.sum") && e.name !== "package-lock.json") {
                files.push(p);
            }
        }
    };
    walk(REPO_ROOT);

    it("no file cites a document users do not have", () => {
        // Spelled in pieces so this file does not match itself.
        const forbidden = new RegExp(["design", "\\.md"].join("") + "|" + ["seed", " 0\\d\\d"].join("") + "|" + ["\\.\\./", "shared/"].join(""));
        const hits = files.flatMap((f) =>
            fs
                .readFileSync(f, "utf8")
                .split("\n")
                .map((line, i) => ({ line, i }))
                .filter(({ line }) => forbidden.test(line))
                .map(({ line, i }) => `${path.relative(REPO_ROOT, f)}:${i + 1}: ${line.trim()}`),
        );
        assert.ok(files.length > 50, `walked ${files.length} files`);
        assert.deepStrictEqual(hits, []);
    });
});
