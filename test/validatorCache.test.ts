import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { checkedData, entryPath, readEntry, validatorCacheDir, withChecksum, writeEntry } from "../tools/validatorCache";

describe("validator cache folder", () => {
    let dir: string;
    beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "validators-"))));
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("reads an entry only when its checksum matches, and writes it whole under a temporary name first", () => {
        const key = "a".repeat(64);
        assert.strictEqual(readEntry(dir, key), undefined);
        assert.strictEqual(writeEntry(dir, key, "module.exports = 1;"), undefined);
        assert.strictEqual(readEntry(dir, key)?.toString(), "module.exports = 1;");
        assert.deepStrictEqual(fs.readdirSync(dir), [`${key}.js`], "no temporary file left");
        assert.strictEqual(writeEntry(dir, key, "module.exports = 2;"), undefined, "an entry is replaced");
        assert.strictEqual(readEntry(dir, key)?.toString(), "module.exports = 2;");
        fs.appendFileSync(entryPath(dir, key), "\n");
        assert.strictEqual(readEntry(dir, key), undefined);
        assert.throws(() => entryPath(dir, "../x"), /not a cache key/);
    });

    it("keeps a key's JavaScript and its V8 code cache apart, bytes as written", () => {
        const key = "c".repeat(64);
        const bytes = Buffer.from([0, 255, 10, 13, 128, 47, 47]);
        assert.strictEqual(writeEntry(dir, key, bytes, "v8"), undefined);
        assert.strictEqual(writeEntry(dir, key, "x = 1;", "js"), undefined);
        assert.ok(readEntry(dir, key, "v8")?.equals(bytes));
        assert.strictEqual(readEntry(dir, key, "js")?.toString(), "x = 1;");
        assert.deepStrictEqual(fs.readdirSync(dir).sort(), [`${key}.js`, `${key}.v8`]);
    });

    it("takes a file's data only with its whole checksum line", () => {
        const file = withChecksum("x = 1;");
        assert.match(file.toString(), /^\/\/ sha256:[0-9a-f]{64}\nx = 1;$/);
        assert.strictEqual(checkedData(file)?.toString(), "x = 1;");
        assert.strictEqual(checkedData(file.subarray(0, -1)), undefined);
        assert.strictEqual(checkedData(file.subarray(1)), undefined);
        assert.strictEqual(checkedData(Buffer.from("x = 1;")), undefined);
    });

    it("reports, rather than throws, a folder it cannot create", () => {
        // A folder under a regular file cannot be created, whoever runs the test.
        fs.writeFileSync(path.join(dir, "file"), "");
        const error = writeEntry(path.join(dir, "file", "validators"), "b".repeat(64), "x");
        assert.ok(error instanceof Error);
        assert.match(error.message, /ENOTDIR|EEXIST/);
    });

    it("lives in node_modules/.cache, or under CACHE_DIR as find-cache-dir has it", () => {
        assert.strictEqual(validatorCacheDir({}, "/p"), "/p/node_modules/.cache/argo-rollouts-addon/validators");
        assert.strictEqual(validatorCacheDir({ CACHE_DIR: "/c" }, "/p"), "/c/argo-rollouts-addon/validators");
        for (const ignored of ["true", "false", "1", "0", ""]) {
            assert.strictEqual(validatorCacheDir({ CACHE_DIR: ignored }, "/p"), "/p/node_modules/.cache/argo-rollouts-addon/validators", ignored);
        }
    });
});
