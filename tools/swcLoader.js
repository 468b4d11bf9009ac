// Loads the project's TypeScript with swc (@swc/core) instead of ts-node, for the offline plan and
// the policy pack (tools/swc-register.js): ts-node's transpiler was most of the plan's start-up.
// Nothing is type-checked here, as with `ts-node --transpile-only`: `npm test` type-checks every file.
// The options are tsconfig.json's compilerOptions as ts-node maps them for swc (TypeStrong/ts-node
// src/transpilers/swc.ts, v10.9.2); a test checks that tsconfig.json still says what they assume.
"use strict";
const fs = require("fs");
const Module = require("module");

/** The swc options for one file: tsconfig.json's target ES2022, module commonjs, esModuleInterop, strict. */
function swcOptions(filename) {
    return {
        filename,
        swcrc: false,
        // Only for `node --enable-source-maps`, the one reader of them: without it, a map triples what Node compiles.
        sourceMaps: process.sourceMapsEnabled ? "inline" : false,
        // esModuleInterop (noInterop: false); "use strict" in every module, as tsc emits under `strict`.
        module: { type: "commonjs", noInterop: false, strictMode: true, ignoreDynamic: false },
        jsc: {
            parser: { syntax: "typescript", tsx: false, decorators: false, dynamicImport: true },
            target: "es2022",
            // TypeScript's default for ES2022: a field declared without a value is undefined after super().
            transform: { useDefineForClassFields: true },
            keepClassNames: true,
        },
    };
}

/** JavaScript for one TypeScript file. */
function transpile(source, filename, swc = require("@swc/core")) {
    return swc.transformSync(source, swcOptions(filename)).code;
}

/** Registers the `.ts` loader unless one is already; with `replace`, in its place (the policy pack's runner registers a type-checking one). */
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
