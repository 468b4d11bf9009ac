import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { grepScenarios, parseE2eArgs } from "../e2e/lib/args";
import { parseBenchArgs } from "../tools/bench";
import { scriptArgs } from "../tools/cli";
import { parseDeployOrderArgs } from "../tools/deployOrder";
import { REPO_ROOT } from "../tools/stackFile";

const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };

/** The project's own commands: every npm script but the type-check, the tests, the linter and the formatter. */
const COMMANDS = Object.keys(pkg.scripts).filter((name) => !["typecheck", "test", "test:unit", "lint", "format"].includes(name));

/** `npm run <name> -- args`, as npm runs it: package.json's script with the same Node, from the project root. */
function run(name: string, args: string[]) {
    return spawnSync(process.execPath, [...scriptArgs(pkg.scripts[name], REPO_ROOT), ...args], { cwd: REPO_ROOT, encoding: "utf8", timeout: 60_000 });
}

describe("the project's commands", function () {
    this.timeout(120_000);

    it("are the ones the README lists, each loading its TypeScript through the swc loader, not ts-node", () => {
        assert.deepStrictEqual(COMMANDS.sort(), ["adopt-check", "bench", "delivery", "deploy-order", "docs", "drift-report", "e2e", "plan", "verify"]);
        for (const name of COMMANDS) {
            assert.match(pkg.scripts[name], /^node --require \.\/tools\/swc-register\.js (tools|e2e)\/[\w-]+\.ts$/, name);
        }
        const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
        for (const name of COMMANDS) {
            assert.ok(readme.includes(`npm run ${name}`) || readme.includes(`npm run --silent ${name}`), `README: npm run ${name}`);
        }
    });

    for (const name of ["plan", "verify", "drift-report", "adopt-check", "deploy-order", "delivery", "docs", "bench", "e2e"]) {
        it(`${name}: --help prints the usage and exits 0, doing nothing else`, () => {
            const res = run(name, ["--help"]);
            assert.strictEqual(res.status, 0, res.stderr);
            assert.match(res.stdout, new RegExp(`^usage: npm run (--silent )?${name}\\b`));
            assert.strictEqual(res.stderr, "");
        });
    }

    for (const name of ["deploy-order", "delivery", "drift-report", "bench", "e2e"]) {
        it(`${name}: an unknown argument is a usage error (exit 2) before anything runs`, () => {
            const res = run(name, ["--nope"]);
            assert.strictEqual(res.status, 2, res.stdout + res.stderr);
            assert.match(res.stderr, /unknown argument --nope; usage: npm run/);
            assert.strictEqual(res.stdout, "");
        });
    }

    it("deploy-order: --config-dir takes --flag=value, and refuses the flag without a value instead of reading the working folder", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "deploy-order-"));
        try {
            fs.writeFileSync(path.join(dir, "Pulumi.b.yaml"), "config:\n  argo-rollouts-addon:cluster:\n    role: spoke\n");
            fs.writeFileSync(path.join(dir, "Pulumi.a.yaml"), "config:\n  argo-rollouts-addon:cluster:\n    role: hub\n");
            const res = run("deploy-order", [`--config-dir=${dir}`]);
            assert.strictEqual(res.status, 0, res.stderr);
            assert.strictEqual(res.stdout, 'hubs=["a"]\nspokes=["b"]\nstacks=["a","b"]\n');
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
        assert.deepStrictEqual(parseDeployOrderArgs([]), { configDir: REPO_ROOT });
        assert.throws(() => parseDeployOrderArgs(["--config-dir"]), /^Error: --config-dir needs a value; usage: npm run --silent deploy-order/);
        assert.throws(() => parseDeployOrderArgs(["--config-dir="]), /--config-dir needs a value/);
        assert.strictEqual(parseDeployOrderArgs(["-h"]), "help");
    });

    it("bench: --runs takes a whole number of at least 1, --no-engine skips the engine", () => {
        assert.deepStrictEqual(parseBenchArgs([]), { runs: 3, engine: true });
        assert.deepStrictEqual(parseBenchArgs(["--runs=5", "--no-engine"]), { runs: 5, engine: false });
        assert.deepStrictEqual(parseBenchArgs(["--runs", "1"]), { runs: 1, engine: true });
        assert.deepStrictEqual(parseBenchArgs(["--json", "figures.json"]), { runs: 3, engine: true, json: path.resolve("figures.json") });
        for (const bad of ["0", "-1", "1.5", "2x", "1e3"]) {
            assert.throws(
                () => parseBenchArgs([`--runs=${bad}`]),
                new RegExp(`--runs "${bad.replace(".", "\\.")}": must be a whole number of at least 1`),
                bad,
            );
        }
        assert.throws(() => parseBenchArgs(["--runs"]), /--runs needs a value/);
        assert.throws(() => parseBenchArgs(["--runs", "--no-engine"]), /--runs needs a value/);
    });

    it("e2e: --json and --grep take a value, as --flag value or --flag=value", () => {
        assert.deepStrictEqual(parseE2eArgs([]), { keep: false });
        assert.deepStrictEqual(parseE2eArgs(["--json", "r.json", "--grep=smoke", "--keep"]), { json: "r.json", grep: "smoke", keep: true });
        assert.throws(() => parseE2eArgs(["--json"]), /--json needs a value; usage: npm run e2e/);
        assert.throws(() => parseE2eArgs(["--grep", "--keep"]), /--grep needs a value/);
        assert.strictEqual(parseE2eArgs(["--keep", "--help"]), "help");
    });

    it("e2e: --grep is a regular expression, as Mocha reads it, that must select a scenario; otherwise the error lists them", () => {
        const titles = ["greenfield greenfield-hub", "greenfield idempotent", "kyverno kyverno-ready (kyverno.io/v1, own)", "destroy destroy-keeps-crds"];
        assert.deepStrictEqual(grepScenarios("greenfield", titles), titles.slice(0, 2));
        assert.deepStrictEqual(grepScenarios("hub$|destroy", titles), [titles[0], titles[3]]);
        // Mocha's /re/flags form, and its regular-expression reading of parentheses.
        assert.deepStrictEqual(grepScenarios("/GREENFIELD-HUB/i", titles), [titles[0]]);
        assert.deepStrictEqual(grepScenarios("kyverno-ready \\(kyverno\\.io", titles), [titles[2]]);
        const listed =
            /; the scenarios are:\n {2}greenfield greenfield-hub\n {2}greenfield idempotent\n {2}kyverno kyverno-ready \(kyverno\.io\/v1, own\)\n {2}destroy destroy-keeps-crds$/;
        assert.throws(
            () => grepScenarios("kyverno-ready (kyverno.io", titles),
            (e: Error) =>
                /^--grep "kyverno-ready \(kyverno\.io" is not a regular expression \(.*Unterminated group.*\)/.test(e.message) && listed.test(e.message),
        );
        assert.throws(
            () => grepScenarios("smoke", titles),
            (e: Error) => /^--grep "smoke" matches no scenario/.test(e.message) && listed.test(e.message),
        );
        assert.throws(() => grepScenarios("/greenfield/z", titles), /is not a regular expression/);
    });

    it("e2e: a --grep that selects no scenario is refused (exit 2) with the scenarios' titles, before any engine is built", () => {
        // With ARGO_ROLLOUTS_ADDON_E2E_BIN the build script only names the folder ("engines: using
        // the binaries in ..."): its absence from stderr shows the build never started.
        const bin = fs.mkdtempSync(path.join(os.tmpdir(), "e2e-bin-"));
        try {
            const env: NodeJS.ProcessEnv = { ...process.env, ARGO_ROLLOUTS_ADDON_E2E_BIN: bin };
            delete env.ARGO_ROLLOUTS_ADDON_E2E_KYVERNO;
            for (const [pattern, why] of [
                ["no-such-scenario", "matches no scenario"],
                ["greenfield(", "is not a regular expression"],
            ]) {
                const res = spawnSync(process.execPath, [...scriptArgs(pkg.scripts.e2e, REPO_ROOT), "--grep", pattern], {
                    cwd: REPO_ROOT,
                    encoding: "utf8",
                    timeout: 60_000,
                    env,
                });
                assert.strictEqual(res.status, 2, res.stdout + res.stderr);
                assert.ok(res.stderr.startsWith(`e2e: --grep ${JSON.stringify(pattern)} ${why}`), res.stderr);
                // Titles as Mocha registers them, from the scenario files themselves.
                for (const title of [
                    "greenfield greenfield-hub",
                    "delivery canary-promote",
                    "kyverno kyverno-ready (kyverno.io/v1, own)",
                    "destroy destroy-keeps-crds",
                ]) {
                    assert.ok(res.stderr.includes(`\n  ${title}`), title);
                }
                assert.doesNotMatch(res.stderr, /engines:/);
                assert.strictEqual(res.stdout, "");
            }
        } finally {
            fs.rmSync(bin, { recursive: true, force: true });
        }
    });
});
