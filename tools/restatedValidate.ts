/**
 * Schema validation of the package models that compile their schema at run time, with the
 * compiled code cached (tools/validatorCache.ts).
 *
 * @kubernetes-models/argo-rollouts 0.3.2 and @kubernetes-models/gateway-api 0.5.1 validate through
 * @kubernetes-models/validate 3.1.2: one ajv that compiles a kind's schema the first time an object
 * of that kind is validated. ClusterAnalysisTemplate's schema, which inlines the whole Job spec a
 * job metric takes, becomes 1.6 MB of JavaScript; compiling it was most of a plan's time. Here that
 * package's setup is restated exactly, the kind's validator is generated once as a standalone
 * module (ajv `ajv/dist/standalone`) and cached under a key of everything that decides its code,
 * with V8's code cache of it, and later plans load the code instead of compiling the schema.
 *
 * The restatement is of tommy351/kubernetes-models-ts `core/validate/src/ajv.ts` (the ajv, its
 * options and formats) and `core/validate/src/validate.ts` (the error filter and message) at
 * @kubernetes-models/validate 3.1.2 (commit dc37447af38638bbb5d0f0681a5876028d7595ed, the release
 * of 3.1.2, @kubernetes-models/base 4.0.4, argo-rollouts 0.3.2 and gateway-api 0.5.1). It applies
 * only where a model's validate package is that version; anything else validates through the
 * model's own `validate()`.
 */
import { createRequire } from "module";
import * as fs from "fs";
import * as path from "path";
import * as vm from "vm";
import type AjvCore from "ajv";
import type { AnySchema, ErrorObject, ValidateFunction } from "ajv";
import { entryPath, readEntry, sha256, writeEntry } from "./validatorCache";

/** The version of @kubernetes-models/validate restated here. */
export const RESTATED_VERSION = "3.1.2";

/** The ajv options of @kubernetes-models/validate 3.1.2 (core/validate/src/ajv.ts). */
export const AJV_OPTIONS = { strictTypes: false, allErrors: true, verbose: true } as const;

// The three formats core/validate/src/ajv.ts adds after ajv-formats and ajv-formats-draft2019,
// as it writes them (3.1.2): "byte" replaces ajv-formats' own.
const rBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const rSignedNumber = /[+-]?(?:\d+|\d+\.\d+|\d+\.|\.\d+)/;
const rBinarySI = /[KMGTPE]i/;
const rDecimalSI = /(?:[YZEPTGMkhdcmunpfazy]|da)/;
const rDecimalExponent = new RegExp(`[eE]${rSignedNumber.source}`);
const rQuantitySuffix = new RegExp(`(?:${rBinarySI.source}|${rDecimalSI.source}|${rDecimalExponent.source})?`);
const rQuantity = new RegExp(`^${rSignedNumber.source}${rQuantitySuffix.source}$`);

export const CUSTOM_FORMATS = {
    byte: { type: "string", validate: (value: string) => rBase64.test(value) },
    quantity: { type: "string", validate: rQuantity },
    string: { type: "string", validate: (value: unknown) => typeof value === "string" },
} as const;

/**
 * Drops the errors of a nullable `$ref` (`oneOf: [{$ref}, {type: "null"}]`): the oneOf error and
 * its "must be null" error, keeping the errors of the `$ref` itself. Restated from
 * core/validate/src/validate.ts `excludeNullableRefErrors` (3.1.2).
 */
export function excludeNullableRefErrors(errors: readonly ErrorObject[]): ErrorObject[] {
    const result: ErrorObject[] = [];
    const schemaPathsToExclude = new Set<string>();
    for (const err of errors) {
        if (err.keyword === "oneOf") {
            const nullTypeIndex = (err.schema as { type?: unknown }[] | undefined)?.findIndex((x) => x.type === "null") ?? -1;
            if (nullTypeIndex > -1) {
                schemaPathsToExclude.add(`${err.schemaPath}/${nullTypeIndex}/type`);
                continue;
            }
        }
        result.push(err);
    }
    return result.filter((x) => !schemaPathsToExclude.has(x.schemaPath));
}

/** The @kubernetes-models/validate a model registers its schemas with and validates through. */
export interface ValidatePackage {
    /** Its main module, dist/index.js. */
    main: string;
    version: string;
    /** The module's exports: the model modules call `register` at validation time. */
    exports: { register?: unknown };
    /** Requires as the package does: its ajv and formats packages. */
    require: NodeJS.Require;
}

/** The version in the package.json of the package `name` whose module `file` is, looking upwards. */
export function packageVersion(file: string, name: string): string {
    for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
        const manifest = path.join(dir, "package.json");
        if (fs.existsSync(manifest)) {
            const pkg = JSON.parse(fs.readFileSync(manifest, "utf8")) as { name?: string; version?: string };
            if (pkg.name === name && pkg.version) {
                return pkg.version;
            }
        }
    }
    throw new Error(`no package.json of ${name} above ${file}`);
}

/** The validate package the model module `modelFile` resolves, as that module resolves it. */
export function validatePackageOf(modelFile: string): ValidatePackage {
    const main = createRequire(modelFile).resolve("@kubernetes-models/validate");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return { main, version: packageVersion(main, "@kubernetes-models/validate"), exports: require(main) as ValidatePackage["exports"], require: createRequire(main) };
}

/** A kind's schema id and every schema it registers (its own and those it references), in order. */
export interface KindSchemas {
    id: string;
    schemas: [string, AnySchema][];
}

/**
 * The schemas a model registers. @kubernetes-models/base 4.0.4 (core/base/src/model.ts) keeps a
 * kind's schema id and its `addSchema` under two symbols on the model's prototype; `addSchema`
 * calls the package's `register(id, schema)` for the kind and every schema it references. It is
 * called here with `register` recording instead, so nothing is compiled. Undefined when the model
 * is not laid out that way.
 */
export function collectSchemas(model: { prototype: object }, pkg: ValidatePackage): KindSchemas | undefined {
    const symbols = Object.getOwnPropertySymbols(model.prototype);
    const own = model.prototype as Record<symbol, unknown>;
    const idSymbol = symbols.find((s) => s.description === "SCHEMA_ID");
    const addSymbol = symbols.find((s) => s.description === "ADD_SCHEMA");
    const id = idSymbol && own[idSymbol];
    const addSchema = addSymbol && own[addSymbol];
    const register = Object.getOwnPropertyDescriptor(pkg.exports, "register");
    if (typeof id !== "string" || typeof addSchema !== "function" || typeof register?.value !== "function" || !register.writable) {
        return undefined;
    }
    const schemas = new Map<string, AnySchema>();
    pkg.exports.register = (schemaId: string, schema: AnySchema) => {
        // The package's register keeps the first schema of an id too.
        if (!schemas.has(schemaId)) {
            schemas.set(schemaId, schema);
        }
    };
    try {
        (addSchema as () => void)();
    } finally {
        pkg.exports.register = register.value;
    }
    return schemas.has(id) ? { id, schemas: [...schemas] } : undefined;
}

/** How the generated code names the formats: it is given them under this name (`loadStandalone`). */
export const FORMATS_MODULE = "argo-rollouts-addon/validate-formats";

type AjvModule = { default: typeof AjvCore; _: (strings: TemplateStringsArray, ...values: unknown[]) => unknown };

/**
 * A new ajv set up exactly as @kubernetes-models/validate 3.1.2 sets up its own: its options,
 * ajv-formats, ajv-formats-draft2019 and its three formats, from the same packages the validate
 * package resolves. Plus the two options standalone code needs (ajv-validator/ajv
 * docs/standalone.md, "Configuration and limitations", v8.20.0): `code.source`, which keeps the
 * generated code, and `code.formats`, the expression that code reaches the formats by (ajv-formats
 * would otherwise point it at its own module, which lacks the other formats). Neither changes what
 * is validated: a test compares verdicts and messages with the package's own ajv.
 */
export function restatedAjv(pkg: ValidatePackage): AjvCore {
    const ajvModule = pkg.require("ajv") as AjvModule;
    const ajv = new ajvModule.default({ ...AJV_OPTIONS, code: { source: true, formats: ajvModule._`require(${FORMATS_MODULE})` as never } });
    const plugin = (name: string) => {
        const m = pkg.require(name) as { __esModule?: boolean; default?: unknown };
        // As the package's build imports them (esModuleInterop): ajv-formats is an ES module's
        // CommonJS build, ajv-formats-draft2019 a plain CommonJS function.
        return (m.__esModule ? m.default : m) as (a: AjvCore) => void;
    };
    plugin("ajv-formats")(ajv);
    plugin("ajv-formats-draft2019")(ajv);
    for (const [name, format] of Object.entries(CUSTOM_FORMATS)) {
        ajv.addFormat(name, format as never);
    }
    return ajv;
}

/**
 * What of a format the generated code depends on: a RegExp is written into it, a function is
 * called, `true` (ajv-formats' "binary") accepts anything; of a definition, also its type.
 */
export function formatShape(format: unknown): unknown {
    if (format instanceof RegExp) {
        return `regexp ${String(format)}`;
    }
    if (typeof format === "function") {
        return "function";
    }
    if (format === null || typeof format !== "object") {
        return `${typeof format} ${String(format)}`;
    }
    const def = format as { type?: string; async?: boolean; validate?: unknown; compare?: unknown };
    return { type: def.type, async: def.async === true, validate: formatShape(def.validate), compare: typeof def.compare };
}

/** Bump when the code options above, the layout of a cached module or how it is loaded change. */
const CACHE_LAYOUT = 1;

/** Everything that decides a kind's generated code. */
export interface KeyInputs {
    layout: number;
    /** The validate package restated, with its version. */
    restates: string;
    /** ajv, ajv-formats and ajv-formats-draft2019, as the validate package resolves them. */
    versions: Record<string, string>;
    options: typeof AJV_OPTIONS;
    /** Each format the ajv knows, with what the code depends on of it (`formatShape`). */
    formats: [string, unknown][];
    /** The kind's schemas and those it references. */
    kind: KindSchemas;
}

/** The key inputs of a kind's validator, compiled by `ajv` (`restatedAjv(pkg)`). */
export function keyInputs(pkg: ValidatePackage, ajv: AjvCore, kind: KindSchemas): KeyInputs {
    const versions = Object.fromEntries(["ajv", "ajv-formats", "ajv-formats-draft2019"].map((name) => [name, packageVersion(pkg.require.resolve(name), name)]));
    const formats = Object.entries(ajv.formats).map(([name, format]): [string, unknown] => [name, formatShape(format)]);
    return { layout: CACHE_LAYOUT, restates: `@kubernetes-models/validate@${pkg.version}`, versions, options: AJV_OPTIONS, formats, kind };
}

/** The cache key: a hash of the key inputs. */
export function cacheKey(inputs: KeyInputs): string {
    return sha256(JSON.stringify(inputs));
}

/** The kind's validator as a standalone CommonJS module: compiles its schema with the restated ajv. */
export function compileStandalone(pkg: ValidatePackage, kind: KindSchemas): string {
    const ajv = restatedAjv(pkg);
    for (const [id, schema] of kind.schemas) {
        ajv.addSchema(schema, id);
    }
    const validate = ajv.getSchema(kind.id);
    if (!validate) {
        throw new Error(`no schema ${kind.id}`);
    }
    const standaloneCode = (pkg.require("ajv/dist/standalone") as { default: (a: AjvCore, v: ValidateFunction) => string }).default;
    return standaloneCode(ajv, validate);
}

/** A validator run from its standalone module's code. */
export interface LoadedValidator {
    validate: ValidateFunction;
    /** The compiled module, for V8's code cache of it (`script.createCachedData()`). */
    script: vm.Script;
    /** Whether V8 took the code cache it was given instead of compiling the code. */
    codeCacheUsed: boolean;
}

/**
 * Runs a standalone module's code and returns its validator. The code may require only the formats
 * (given as `formats`) and ajv's runtime helpers, from the ajv the validate package uses. With
 * `codeCache`, V8 uses it instead of parsing and compiling the code, unless it refuses it.
 */
export function loadStandalone(code: string, pkg: ValidatePackage, formats: object, filename: string, codeCache?: Buffer): LoadedValidator {
    const requireForCode = (id: string): unknown => {
        if (id === FORMATS_MODULE) {
            return formats;
        }
        if (id.startsWith("ajv/dist/runtime/")) {
            return pkg.require(id);
        }
        throw new Error(`the validator ${filename} requires ${id}`);
    };
    // A CommonJS module's wrapper, as Node's own; the code's "use strict" applies to it.
    const script = new vm.Script(`(function (require, module, exports) {${code}\n})`, { filename, ...(codeCache ? { cachedData: codeCache } : {}) });
    const module = { exports: {} as unknown };
    (script.runInThisContext() as (r: typeof requireForCode, m: typeof module, e: unknown) => void)(requireForCode, module, module.exports);
    if (typeof module.exports !== "function") {
        throw new Error(`the validator ${filename} exports no function`);
    }
    return { validate: module.exports as ValidateFunction, script, codeCacheUsed: codeCache !== undefined && !script.cachedDataRejected };
}

/** Validates one object: undefined when it is valid, else the message the package's `validate()` throws. */
export type Check = (data: unknown) => string | undefined;

/**
 * The check of a validator, as core/validate/src/validate.ts `validate` (3.1.2) runs it: refused
 * when it fails with errors, with ajv's text of the errors left after the nullable-ref filter.
 */
export function checkWith(validate: ValidateFunction, ajv: AjvCore): Check {
    return (data) => (validate(data) || !validate.errors ? undefined : ajv.errorsText(excludeNullableRefErrors(validate.errors)));
}

/**
 * How the cache served a kind: a hit (and whether V8's code cache of it was used too), or compiled,
 * with the error that kept it from being cached.
 */
export type CacheOutcome = { hit: true; codeCache: boolean } | { hit: false; writeError?: Error };

/** The validator cached under `key`, or undefined when there is none or its code does not load. */
function cachedValidator(dir: string, key: string, pkg: ValidatePackage, formats: object): LoadedValidator | undefined {
    const code = readEntry(dir, key, "js");
    if (code === undefined) {
        return undefined;
    }
    try {
        return loadStandalone(code.toString("utf8"), pkg, formats, entryPath(dir, key, "js"), readEntry(dir, key, "v8"));
    } catch {
        return undefined;
    }
}

/**
 * `check`, which after its first call caches V8's code cache of the validator's module: V8
 * compiles a function when it first runs, so only then does the code cache hold the validator.
 * Not cached when the folder cannot be written: the plan goes on the same.
 */
function cachingCodeOnFirstCall(check: Check, loaded: LoadedValidator, dir: string, key: string): Check {
    let first = true;
    return (data) => {
        const verdict = check(data);
        if (first) {
            first = false;
            writeEntry(dir, key, loaded.script.createCachedData(), "v8");
        }
        return verdict;
    };
}

/**
 * The check of a package model (`model`, defined in `modelFile`) through the restatement, with its
 * validator from the cache in `dir` or compiled and cached there (or only compiled, when `dir`
 * cannot be written). Undefined when the model does not validate through
 * @kubernetes-models/validate 3.1.2: the caller uses the model's `validate()`.
 */
export function restatedCheck(model: { prototype: object }, modelFile: string, dir: string, report: (outcome: CacheOutcome) => void = () => {}): Check | undefined {
    const pkg = validatePackageOf(modelFile);
    const kind = pkg.version === RESTATED_VERSION ? collectSchemas(model, pkg) : undefined;
    if (!kind) {
        return undefined;
    }
    const ajv = restatedAjv(pkg);
    const key = cacheKey(keyInputs(pkg, ajv, kind));
    let loaded = cachedValidator(dir, key, pkg, ajv.formats);
    if (loaded) {
        report({ hit: true, codeCache: loaded.codeCacheUsed });
    } else {
        const code = compileStandalone(pkg, kind);
        const writeError = writeEntry(dir, key, code, "js");
        report(writeError ? { hit: false, writeError } : { hit: false });
        // The code just generated runs, as it will when loaded from the cache.
        loaded = loadStandalone(code, pkg, ajv.formats, `${kind.id}.js`);
    }
    const check = checkWith(loaded.validate, ajv);
    return loaded.codeCacheUsed ? check : cachingCodeOnFirstCall(check, loaded, dir, key);
}
