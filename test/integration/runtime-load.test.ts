import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { cliTsconfig } from "../../tools/bench";
import { scriptArgs } from "../../tools/cli";
import { REPO_ROOT } from "../../tools/stackFile";
import { FIXTURE_STACKS } from "../harness";

/**
 * The program as the Pulumi CLI loads it (test/runtime-load.test.ts has the settings that make it
 * so): the CLI skips the type-check, so npm test's must catch a type error, and the CLI's
 * transpiler must make the same program as the plan's. Spawns tsc and the program; the figures
 * are the benchmark's, never asserted here.
 */
const TSC = path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "runtime-load-"));

describe("program load under the Pulumi CLI, in processes of its own", () => {
    it("fails the type-check on a type error in the program's code", () => {
        // The project's compiler options, on one file that misuses the program's types and one that
        // uses them right: only the misuse is reported.
        const dir = tempDir();
        const config = path.join(REPO_ROOT, "stacks", "config");
        fs.writeFileSync(
            path.join(dir, "good.ts"),
            `import { AddonConfig } from ${JSON.stringify(config)};\nexport const stack = (c: AddonConfig): string => c.stack;\n`,
        );
        fs.writeFileSync(
            path.join(dir, "bad.ts"),
            `import { AddonConfig } from ${JSON.stringify(config)};\nexport const replicas = (c: AddonConfig): string => c.controller.replicas;\n`,
        );
        fs.writeFileSync(
            path.join(dir, "tsconfig.json"),
            JSON.stringify({
                extends: path.join(REPO_ROOT, "tsconfig.json"),
                compilerOptions: { rootDir: "/", typeRoots: [path.join(REPO_ROOT, "node_modules", "@types")] },
                include: [],
                files: ["good.ts", "bad.ts"],
            }),
        );
        const res = spawnSync(process.execPath, [TSC, "--noEmit", "-p", path.join(dir, "tsconfig.json")], { cwd: REPO_ROOT, encoding: "utf8" });
        assert.notStrictEqual(res.status, 0, "tsc accepted a type error");
        const errors = res.stdout.split("\n").filter((l) => /error TS/.test(l));
        assert.strictEqual(errors.length, 1, res.stdout);
        assert.match(errors[0], /bad\.ts\(2,[0-9]+\): error TS2322: Type 'number' is not assignable to type 'string'/);
    });

    it("plans the same stack under the CLI's transpiler (ts-node with swc) and the plan's (tools/swcLoader.js)", () => {
        // Same resources, same inputs, same manifests.
        const plan = (args: string[], env: Record<string, string>, out: string) => {
            const res = spawnSync(process.execPath, [...args, "--stack", "hub", "--config-dir", FIXTURE_STACKS, "--out", out], {
                cwd: REPO_ROOT,
                encoding: "utf8",
                env: { ...process.env, ...env },
            });
            assert.strictEqual(res.status, 0, res.stderr);
            return ["resources.json", "manifests.yaml"].map((f) => fs.readFileSync(path.join(out, "hub", f), "utf8"));
        };
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
        const dir = tempDir();
        const cliProject = { TS_NODE_PROJECT: path.join(REPO_ROOT, cliTsconfig()) };
        const viaCli = plan(["-r", "ts-node/register", path.join(REPO_ROOT, "tools", "plan.ts")], cliProject, path.join(dir, "cli"));
        const viaPlanScript = plan(scriptArgs(pkg.scripts.plan, REPO_ROOT), {}, path.join(dir, "plan"));
        assert.ok((JSON.parse(viaCli[0]) as unknown[]).length > 20);
        assert.deepStrictEqual(viaPlanScript, viaCli);
    });

    it("loads the program the way the CLI does", () => {
        const res = spawnSync(process.execPath, [path.join(REPO_ROOT, "tools", "load-probe.js"), "program", cliTsconfig()], {
            cwd: REPO_ROOT,
            encoding: "utf8",
        });
        assert.strictEqual(res.status, 0, res.stderr);
        const figures = JSON.parse(res.stdout) as { loadMs: number; peakRssMiB: number };
        assert.ok(figures.loadMs > 0 && figures.peakRssMiB > 0);
    });
});
