import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { cliTsconfig } from "../tools/bench";
import { REPO_ROOT } from "../tools/stackFile";

/**
 * How the Pulumi CLI loads the program. Its Node.js host registers ts-node with the tsconfig that
 * Pulumi.yaml's `runtime.options.tsconfig` names (PULUMI_NODEJS_TSCONFIG_PATH, pulumi
 * sdk/nodejs/cmd/pulumi-language-nodejs/main.go) and type-checks unless that tsconfig sets
 * `compilerOptions.noCheck` (@pulumi/pulumi cmd/run/run.js). The program skips that check, so
 * `npm test` must keep catching type errors (test/integration/runtime-load.test.ts shows both).
 */

// @pulumi/pulumi's own reader of a tsconfig's compilerOptions, the one cmd/run/run.js calls.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tsutils = require("@pulumi/pulumi/tsutils") as { loadTypeScriptCompilerOptions(p: string): Record<string, unknown> };

function readTsconfig(file: string): Record<string, unknown> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ts = require("typescript") as typeof import("typescript");
    const parsed = ts.parseConfigFileTextToJson(file, fs.readFileSync(path.join(REPO_ROOT, file), "utf8"));
    assert.strictEqual(parsed.error, undefined, `${file} does not parse`);
    return parsed.config as Record<string, unknown>;
}

describe("program load under the Pulumi CLI", () => {
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
        // Beside mocha, for the second core; a type error fails npm test as a failing test does.
        assert.match(pkg.scripts.test, /^sh -c 'npm run --silent typecheck & t=\$!; mocha "\$@"; m=\$\?; wait \$t && exit \$m' sh$/);
        assert.notStrictEqual(tsutils.loadTypeScriptCompilerOptions(path.join(REPO_ROOT, "tsconfig.json")).noCheck, true);
        const include = readTsconfig("tsconfig.json").include as string[];
        for (const folder of ["components", "stacks", "tools", "test", "policy-pack", "e2e"]) {
            assert.ok(include.includes(`${folder}/**/*.ts`), `tsconfig.json does not type-check ${folder}/`);
        }
    });
});
