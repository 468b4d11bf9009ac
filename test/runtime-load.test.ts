import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { cliTsconfig } from "../tools/bench";
import { scriptArgs } from "../tools/cli";
import { REPO_ROOT } from "../tools/stackFile";

/**
 * How the Pulumi CLI loads the program. Its Node.js host registers ts-node with the tsconfig that
 * Pulumi.yaml's `runtime.options.tsconfig` names (PULUMI_NODEJS_TSCONFIG_PATH, pulumi
 * sdk/nodejs/cmd/pulumi-language-nodejs/main.go) and type-checks unless that tsconfig sets
 * `compilerOptions.noCheck` (@pulumi/pulumi cmd/run/run.js). The program skips that check, so
 * `npm test` must keep catching type errors, and the transpiler the CLI uses must produce the same
 * program as the one the tests run.
 */

// @pulumi/pulumi's own reader of a tsconfig's compilerOptions, the one cmd/run/run.js calls.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tsutils = require("@pulumi/pulumi/tsutils") as { loadTypeScriptCompilerOptions(p: string): Record<string, unknown> };

const TSC = path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");

function readTsconfig(file: string): Record<string, unknown> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ts = require("typescript") as typeof import("typescript");
    const parsed = ts.parseConfigFileTextToJson(file, fs.readFileSync(path.join(REPO_ROOT, file), "utf8"));
    assert.strictEqual(parsed.error, undefined, `${file} does not parse`);
    return parsed.config as Record<string, unknown>;
}

function tempDir(): string {
    return fs.mkdtempSync(path.join(os.tmpdir(), "runtime-load-"));
}

describe("program load under the Pulumi CLI", function () {
    // Spawns tsc and the program; the figures are the benchmark's, never asserted here.
    this.timeout(120000);

    it("names a tsconfig that loads the program transpile-only, with swc, on top of the project's", () => {
        const project = YAML.parse(fs.readFileSync(path.join(REPO_ROOT, "Pulumi.yaml"), "utf8")) as { runtime: { options: Record<string, unknown> } };
        assert.strictEqual(project.runtime.options.typescript, true);
        const file = cliTsconfig();
        assert.notStrictEqual(file, "tsconfig.json", "the CLI would type-check the whole program at every preview");
        // run.js looks for the file from the program folder (Pulumi.yaml main), not the project root.
        assert.ok(
            fs.existsSync(path.join(REPO_ROOT, file)),
            `${file} (the tsconfig option resolved from the program folder) does not exist: the CLI fails with "tsconfig path was set to ... but the file was not found"`,
        );
        assert.strictEqual(tsutils.loadTypeScriptCompilerOptions(path.join(REPO_ROOT, file)).noCheck, true);
        const config = readTsconfig(file);
        assert.strictEqual(config.extends, "./tsconfig.json", "same compiler options as the type-check");
        assert.deepStrictEqual(config["ts-node"], { swc: true });
    });

    it("keeps the type-check in npm test, with a tsconfig that checks", () => {
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
        assert.match(pkg.scripts.typecheck, /^tsc --noEmit -p tsconfig\.json$/);
        assert.match(pkg.scripts.test, /^npm run typecheck && /);
        assert.notStrictEqual(tsutils.loadTypeScriptCompilerOptions(path.join(REPO_ROOT, "tsconfig.json")).noCheck, true);
        const include = readTsconfig("tsconfig.json").include as string[];
        for (const folder of ["components", "stacks", "tools", "test", "policy-pack"]) {
            assert.ok(
                include.some((g) => g.startsWith(`${folder}/`)),
                `tsconfig.json does not type-check ${folder}/`,
            );
        }
    });

    it("fails the type-check on a type error in the program's code", () => {
        // The project's compiler options, on one file that misuses the program's types and one that
        // uses them right: only the misuse is reported.
        const dir = tempDir();
        try {
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
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("plans the same stack under the CLI's transpiler, the plan's and the tests'", () => {
        // The tests run through TypeScript's transpiler (ts-node), the CLI through ts-node with swc,
        // and npm run plan through its own swc loader. All must produce the same program: same
        // resources, same inputs, same manifests.
        const plan = (args: string[], env: Record<string, string>, out: string) => {
            const res = spawnSync(process.execPath, [...args, "--stack", "hub", "--out", out], {
                cwd: REPO_ROOT,
                encoding: "utf8",
                env: { ...process.env, ...env },
            });
            assert.strictEqual(res.status, 0, res.stderr);
            return ["resources.json", "manifests.yaml"].map((f) => fs.readFileSync(path.join(out, "hub", f), "utf8"));
        };
        const script = path.join(REPO_ROOT, "tools", "plan.ts");
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
        const dir = tempDir();
        try {
            const viaCli = plan(["-r", "ts-node/register", script], { TS_NODE_PROJECT: path.join(REPO_ROOT, cliTsconfig()) }, path.join(dir, "cli"));
            const viaTypeScript = plan(
                ["-r", "ts-node/register", script],
                { TS_NODE_PROJECT: path.join(REPO_ROOT, "tsconfig.json"), TS_NODE_TRANSPILE_ONLY: "true" },
                path.join(dir, "ts"),
            );
            const viaPlanScript = plan(scriptArgs(pkg.scripts.plan, REPO_ROOT), {}, path.join(dir, "plan"));
            assert.ok((JSON.parse(viaCli[0]) as unknown[]).length > 20);
            assert.deepStrictEqual(viaCli, viaTypeScript);
            assert.deepStrictEqual(viaPlanScript, viaTypeScript);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
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
