// Mocha's settings. `npm test -- test/plan.test.ts` (or `npx mocha test/plan.test.ts`) runs the
// files named and nothing else; without a file, every test/**/*.test.ts (docs/maintainers/tests.md),
// the files spread over two worker processes (each file runs whole in one of them).
const named = process.argv.slice(2).filter((a) => /\.test\.ts$/.test(a));
module.exports = {
    require: ["ts-node/register/transpile-only", "./test/hooks.ts"],
    extension: ["ts"],
    spec: named.length > 0 ? [] : ["test/**/*.test.ts"],
    parallel: true,
    jobs: 2,
    timeout: 20000,
    reporter: "spec",
};
