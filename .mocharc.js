// Mocha's settings for the unit tests. `npm test -- test/plan.test.ts` (or `npx mocha
// test/plan.test.ts`) runs the files named and nothing else; without a file, every
// test/**/*.test.ts but the integration tier's (test/integration/, its own settings there), the
// files spread over two worker processes (each file runs whole in one of them). The TypeScript is
// transpiled by the plan's swc loader (tools/swcLoader.js), not ts-node: TypeScript's transpiler
// was most of a worker's time, and the type-check is npm test's (docs/maintainers/tests.md).
// The timeout is a guard against a hung test, never a speed limit: the suite passes on a machine
// whose cores are busy with other work.
const named = process.argv.slice(2).filter((a) => /\.test\.ts$/.test(a));
module.exports = {
    require: ["./tools/swc-register.js", "./test/hooks.ts"],
    extension: ["ts"],
    spec: named.length > 0 ? [] : ["test/**/*.test.ts"],
    ignore: named.length > 0 ? [] : ["test/integration/**"],
    parallel: true,
    jobs: 2,
    timeout: 300000,
    reporter: "spec",
};
