import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { scriptArgs } from "../../tools/cli";
import { VerifyJson, driftReport, readJson } from "../../tools/driftReport";
import { PreviewDigest } from "../../tools/previewDigest";
import { REPO_ROOT } from "../../tools/stackFile";

const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };

/** `npm run <name> -- args`, as npm runs it: package.json's script with the same Node, from the project root. */
function run(name: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
    return spawnSync(process.execPath, [...scriptArgs(pkg.scripts[name], REPO_ROOT), ...args], { cwd: REPO_ROOT, encoding: "utf8", env });
}

/** Each command as a process of its own: its usage, its usage errors and their exit status (the parsers' cases are test/commands.test.ts). */
describe("the project's commands, run as npm runs them", () => {
    // Every command has a usage; those that take no --stack refuse an unknown argument before anything runs.
    const refusing = ["deploy-order", "delivery", "drift-report", "bench", "e2e"];
    for (const name of ["plan", "verify", "drift-report", "adopt-check", "deploy-order", "delivery", "docs", "bench", "e2e"]) {
        it(`${name}: --help prints the usage and exits 0${refusing.includes(name) ? "; an unknown argument is a usage error (exit 2)" : ""}`, () => {
            const res = run(name, ["--help"]);
            assert.deepStrictEqual([res.status, res.stderr], [0, ""], res.stderr);
            assert.match(res.stdout, new RegExp(`^usage: npm run (--silent )?${name}\\b`));
            if (refusing.includes(name)) {
                const bad = run(name, ["--nope"]);
                assert.deepStrictEqual([bad.status, bad.stdout], [2, ""], bad.stdout + bad.stderr);
                assert.match(bad.stderr, /unknown argument --nope; usage: npm run/);
            }
        });
    }

    it("deploy-order: --config-dir takes --flag=value, and refuses the flag without a value instead of reading the working folder", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "deploy-order-"));
        fs.writeFileSync(path.join(dir, "Pulumi.b.yaml"), "config:\n  argo-rollouts-addon:cluster:\n    role: spoke\n");
        fs.writeFileSync(path.join(dir, "Pulumi.a.yaml"), "config:\n  argo-rollouts-addon:cluster:\n    role: hub\n");
        const res = run("deploy-order", [`--config-dir=${dir}`]);
        assert.strictEqual(res.status, 0, res.stderr);
        assert.strictEqual(res.stdout, 'hubs=["a"]\nwave1=["b"]\nwave2=[]\nwave3=[]\nwave4=[]\nspokes=["b"]\nstacks=["a","b"]\n');
    });

    it("drift-report: writes the report and exits 1 on drift, 0 when clean", () => {
        const fixture = (name: string) => path.join(__dirname, "..", "fixtures", "drift", name);
        const verify = `--verify=${fixture("verify-pass.json")}`;
        for (const [preview, status] of Object.entries({ "preview-drift.json": 1, "preview-clean.json": 0 })) {
            const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "drift-")), "drift.md");
            const res = run("drift-report", ["--stack=hub", `--preview=${fixture(preview)}`, verify, "--preview-exit=0", `--out=${out}`]);
            assert.strictEqual(res.status, status, res.stderr);
            const [digest, verified] = [readJson(fixture(preview)) as PreviewDigest, readJson(fixture("verify-pass.json")) as VerifyJson];
            assert.strictEqual(fs.readFileSync(out, "utf8"), driftReport({ stack: "hub", preview: digest, previewExit: 0, verify: verified }).markdown);
        }
    });

    it("e2e: a --grep that selects no scenario is refused (exit 2) with the scenarios' titles, before any engine is built", () => {
        // With ARGO_ROLLOUTS_ADDON_E2E_BIN the build script only names the folder ("engines: using
        // the binaries in ..."): its absence from stderr shows the build never started.
        const bin = fs.mkdtempSync(path.join(os.tmpdir(), "e2e-bin-"));
        const env: NodeJS.ProcessEnv = { ...process.env, ARGO_ROLLOUTS_ADDON_E2E_BIN: bin };
        delete env.ARGO_ROLLOUTS_ADDON_E2E_KYVERNO;
        for (const [pattern, why] of [
            ["no-such-scenario", "matches no scenario"],
            ["greenfield(", "is not a regular expression"],
        ]) {
            const res = run("e2e", ["--grep", pattern], env);
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
    });
});
