// Mocha's settings for the unit tests. `npm test -- test/plan.test.ts` (or `npx mocha
// test/plan.test.ts`) runs the files named and nothing else; without a file, every
// test/**/*.test.ts but the integration tier's (test/integration/, its own settings there), the
// files spread over two worker processes (each file runs whole in one of them), verify's first:
// they take longest, and a long file started last would leave one worker idle while it runs.
// The TypeScript is transpiled by the plan's swc loader (tools/swcLoader.js), not ts-node:
// TypeScript's transpiler was most of a worker's time, and the type-check is npm test's
// (docs/maintainers/tests.md). The timeout is a guard against a hung test, never a speed limit:
// the suite passes on a machine whose cores are busy with other work.
const fs = require("fs");
const path = require("path");

const named = process.argv.slice(2).filter((a) => /\.test\.ts$/.test(a));
const all = fs
    .readdirSync(path.join(__dirname, "test"), { recursive: true })
    .map((f) => path.join("test", f))
    .filter((f) => f.endsWith(".test.ts") && !f.startsWith(path.join("test", "integration") + path.sep))
    .sort();
const verifyFirst = (f) => (f.startsWith(path.join("test", "verify") + path.sep) ? 0 : 1);
module.exports = {
    require: ["./tools/swc-register.js", "./test/hooks.ts"],
    extension: ["ts"],
    spec: named.length > 0 ? [] : all.sort((a, b) => verifyFirst(a) - verifyFirst(b)),
    parallel: true,
    jobs: 2,
    timeout: 300000,
    reporter: "spec",
};
