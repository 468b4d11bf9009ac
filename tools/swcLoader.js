// Loads the project's TypeScript with swc (@swc/core) instead of ts-node, for the offline plan
// (tools/swc-register.js):
//
//   node --require ./tools/swc-register.js tools/plan.ts --stack hub
//
// ts-node loads the TypeScript compiler and runs its transpiler over every file, which was most of
// the plan's own start-up; @swc/core's transformSync does the same transpile in native code.
// Nothing is type-checked here, exactly as with `ts-node --transpile-only`: `npm test` type-checks
// every file with tsconfig.json first. Plain JavaScript on purpose: it is what loads TypeScript.
//
// The options are tsconfig.json's compilerOptions in swc's terms, mapped as ts-node maps them for
// its own swc transpiler (TypeStrong/ts-node src/transpilers/swc.ts, v10.9.2); a test checks that
// tsconfig.json still says what they assume.
"use strict";
const fs = require("fs");
const Module = require("module");

/** The swc options for one file: tsconfig.json's target ES2022, module commonjs, esModuleInterop, strict. */
function swcOptions(filename) {
    return {
        filename,
        swcrc: false,
        // For `node --enable-source-maps`, which then maps stack traces to the TypeScript. Not turned
        // on here: Node would then also read the source map of every package module it loads.
        sourceMaps: "inline",
        // esModuleInterop (noInterop: false); "use strict" in every module, as tsc emits under `strict`.
        module: { type: "commonjs", noInterop: false, strictMode: true, ignoreDynamic: false },
        jsc: {
            parser: { syntax: "typescript", tsx: false, decorators: false, dynamicImport: true },
            target: "es2022",
            // TypeScript's default for target ES2022 (useDefineForClassFields): class fields are
            // defined, not assigned, so a field declared without a value is undefined after super().
            transform: { useDefineForClassFields: true },
            keepClassNames: true,
        },
    };
}

/** JavaScript for one TypeScript file. */
function transpile(source, filename, swc = require("@swc/core")) {
    return swc.transformSync(source, swcOptions(filename)).code;
}

/**
 * Registers the `.ts` loader, unless one (ts-node's, in the tests) already is; with `replace`, in
 * place of it (the policy pack, whose runner registers a type-checking ts-node first).
 */
function register({ replace = false } = {}) {
    if (Module._extensions[".ts"] && !replace) {
        return;
    }
    const swc = require("@swc/core");
    Module._extensions[".ts"] = function loadTypeScript(module, filename) {
        module._compile(transpile(fs.readFileSync(filename, "utf8"), filename, swc), filename);
    };
}

module.exports = { swcOptions, transpile, register };
