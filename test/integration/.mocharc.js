// Mocha's settings for the integration tier (`npm run test:integration`, docs/maintainers/tests.md):
// the tests that must start a process to prove their point (a command as npm runs it, the program
// under the Pulumi CLI's transpiler, tsc on a type error, the policy pack under its runner). `.ci/run`
// runs it after npm test. Each test waits on processes of its own: the timeout is a guard against a
// hung one, never a speed limit.
module.exports = {
    require: ["./tools/swc-register.js", "./test/hooks.ts"],
    extension: ["ts"],
    spec: ["test/integration/**/*.test.ts"],
    parallel: true,
    jobs: 2,
    timeout: 600000,
    reporter: "spec",
};
