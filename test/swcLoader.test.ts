import * as assert from "assert";
import * as fs from "fs";
import Module from "module";
import * as path from "path";
import { REPO_ROOT } from "../tools/stackFile";

/**
 * The loader `npm run plan` runs the project's TypeScript with (tools/swcLoader.js): swc instead of
 * ts-node, with tsconfig.json's compiler options, and no type-check of its own (the unit tests run
 * under it too: .mocharc.js; test/integration/swcLoader.test.ts runs it as npm run plan does).
 */

// eslint-disable-next-line @typescript-eslint/no-require-imports
const loader = require("../tools/swcLoader") as { transpile(source: string, filename: string): string };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ts = require("typescript") as typeof import("typescript");

/** What TypeScript's own transpiler makes of a file (`ts-node --transpile-only`) with tsconfig.json's compiler options. */
function viaTypeScript(source: string, filename: string): string {
    const config = ts.readConfigFile(path.join(REPO_ROOT, "tsconfig.json"), ts.sys.readFile).config as unknown;
    const compilerOptions = ts.parseJsonConfigFileContent(config, ts.sys, REPO_ROOT).options;
    return ts.transpileModule(source, { compilerOptions, fileName: filename }).outputText;
}

/** Runs transpiled code as a CommonJS module of the project and returns its exports. */
function run(code: string, filename: string): Record<string, unknown> {
    const m = new Module(filename) as Module & { _compile(code: string, filename: string): void };
    m.filename = filename;
    m.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(filename));
    m._compile(code, filename);
    return m.exports as Record<string, unknown>;
}

// What differs between transpilers when their options differ: class field semantics, CommonJS
// interop of default and namespace imports, enums, strict mode.
const SAMPLE = `
import path from "path";
import * as fs from "fs";
import YAML from "yaml";
import { EventEmitter } from "events";

export enum Colour { Red, Green = "green" }

class Base {
    constructor() {
        (this as { late?: string }).late = "set by the base";
    }
}
class Derived extends Base {
    late?: string;
    count = 1;
    static readonly kind = "derived";
}

export const late = new Derived().late;
export const fields = Object.keys(new Derived());
export const kind = Derived.kind;
export const className = Derived.name;
export const colours = [Colour.Red, Colour.Green, Colour[0]];
export const interop = [typeof path.join, typeof fs.readFileSync, typeof YAML.stringify, typeof EventEmitter];
export const strictThis = (function (this: unknown) { return this === undefined; })();
export const optional = ({} as { a?: { b?: number } }).a?.b ?? "none";
export async function later(): Promise<number> {
    return 2;
}
`;

describe("the plan's TypeScript loader (swc)", () => {
    const filename = path.join(REPO_ROOT, "tools", "loader-sample.ts");

    it("makes the same program as TypeScript's transpiler with tsconfig.json", async () => {
        const bySwc = run(loader.transpile(SAMPLE, filename), filename);
        const byTsc = run(viaTypeScript(SAMPLE, filename), filename);
        const plain = (e: Record<string, unknown>) => JSON.parse(JSON.stringify({ ...e, later: undefined })) as unknown;
        assert.deepStrictEqual(plain(bySwc), plain(byTsc));
        assert.strictEqual(await (bySwc.later as () => Promise<number>)(), 2);
        // Target ES2022 defines class fields: a declared field resets what the base constructor set.
        assert.strictEqual(bySwc.late, undefined);
        assert.deepStrictEqual(bySwc.fields, ["late", "count"]);
        assert.deepStrictEqual(bySwc.interop, ["function", "function", "function", "function"]);
        assert.strictEqual(bySwc.strictThis, true);
        assert.strictEqual(bySwc.className, "Derived");
    });

    it("supports `export =` as TypeScript does", () => {
        const source = `const value = { answer: 42 };\nexport = value;\n`;
        assert.deepStrictEqual(run(loader.transpile(source, filename), filename), { answer: 42 });
        assert.deepStrictEqual(run(viaTypeScript(source, filename), filename), { answer: 42 });
    });

    it("maps the code to its source only for a Node that reads maps (--enable-source-maps)", () => {
        const was = process.sourceMapsEnabled;
        const mapped = (on: boolean) => {
            process.setSourceMapsEnabled(on);
            return /sourceMappingURL=data:/.test(loader.transpile("export const a = 1;", filename));
        };
        assert.deepStrictEqual([mapped(true), mapped(false)], [true, false]);
        process.setSourceMapsEnabled(was);
    });

    it("assumes the compiler options tsconfig.json sets", () => {
        // tools/swcLoader.js restates these in swc's terms: change both together.
        const raw = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "tsconfig.json"), "utf8")) as { compilerOptions: Record<string, unknown> };
        const o = raw.compilerOptions;
        assert.deepStrictEqual([o.target, o.module, o.esModuleInterop, o.strict], ["ES2022", "commonjs", true, true]);
        const unfollowed = "useDefineForClassFields experimentalDecorators emitDecoratorMetadata jsx alwaysStrict importHelpers verbatimModuleSyntax"
            .split(" ")
            .filter((option) => option in o);
        assert.deepStrictEqual(unfollowed, [], "tsconfig.json sets options tools/swcLoader.js does not follow");
    });
});
