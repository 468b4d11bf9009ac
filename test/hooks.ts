/**
 * Root hooks of every mocha run (.mocharc.json `require`). The tests, and the plans they start,
 * cache compiled schema validators (tools/validatorCache.ts) in a folder of their own run: they
 * neither depend on what an earlier plan left in the project's cache nor add to it.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "test-cache-"));
process.env.CACHE_DIR = cacheDir;

export const mochaHooks = {
    afterAll(): void {
        fs.rmSync(cacheDir, { recursive: true, force: true });
    },
};
