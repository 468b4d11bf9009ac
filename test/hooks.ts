/**
 * Loaded by every mocha process (.mocharc.js `require`). Everything a test writes to the temporary
 * folder (plans, stack files, caches, and what the commands it starts write there) goes into one
 * folder per process: TMPDIR points there for the tests and every process they start (Node's
 * `os.tmpdir()` reads it at each call), and it is removed when the process exits, so a test run
 * leaves nothing behind.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const runDir = fs.mkdtempSync(path.join(os.tmpdir(), "argo-rollouts-addon-test-"));
process.env.TMPDIR = runDir;

// On exit rather than in a root afterAll hook: in parallel mode every worker and the main process
// load this file, and only the workers run root hooks.
process.on("exit", () => fs.rmSync(runDir, { recursive: true, force: true }));
