/**
 * Upstream manifests read from Go modules. e2e/platform-crds/go.mod pins each module and go.sum
 * holds its hash; `go mod download -json` fetches the zip through the module proxy (or reuses the
 * module cache) and prints the directory it unpacked to. The kyverno module is the exception when
 * ARGO_ROLLOUTS_ADDON_E2E_KYVERNO selects another release than CI's: then the engine folder of that
 * release pins it (e2e/lib/kyvernoRelease.ts), so the chart and CRDs are those of the Kyverno that runs.
 */
import * as fs from "fs";
import * as path from "path";
import { KYVERNO_MODULE, kyvernoRelease } from "./kyvernoRelease";
import { runOk } from "./procs";

export const E2E_ROOT = path.resolve(__dirname, "..");
const CRD_MODULES_DIR = path.join(E2E_ROOT, "platform-crds");

/** The folder whose go.mod and go.sum pin a module. */
function pinDir(module: string): string {
    return (module === KYVERNO_MODULE ? kyvernoRelease().modulePins : undefined) ?? CRD_MODULES_DIR;
}

const dirs = new Map<string, string>();

/** The unpacked directory of a module pinned in e2e/platform-crds/go.mod (or, for Kyverno, by the selected release). */
export function moduleDir(module: string): string {
    return moduleDirPinnedIn(pinDir(module), module);
}

/** The unpacked directory of a module at the version the go.mod of `pins` (a folder) requires. */
export function moduleDirPinnedIn(pins: string, module: string): string {
    const key = `${pins}\0${module}`;
    const cached = dirs.get(key);
    if (cached) {
        return cached;
    }
    const out = runOk("go", ["mod", "download", "-json", module], { cwd: pins, env: { ...process.env, GOTOOLCHAIN: "local", GOFLAGS: "-mod=readonly" } });
    const info = JSON.parse(out) as { Dir?: string; Version?: string; Error?: string };
    if (!info.Dir) {
        throw new Error(`go mod download ${module}: ${info.Error ?? "no Dir"}`);
    }
    dirs.set(key, info.Dir);
    return info.Dir;
}

/** The version go.mod pins for a module. */
export function moduleVersion(module: string): string {
    const dir = pinDir(module);
    const gomod = fs.readFileSync(path.join(dir, "go.mod"), "utf8");
    const m = gomod.match(new RegExp(`^\\s*${module.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\s+(\\S+)`, "m"));
    if (!m) {
        throw new Error(`${module} is not pinned in e2e/${path.relative(E2E_ROOT, dir)}/go.mod`);
    }
    return m[1];
}

/** Files of a module (paths relative to its root), read as text. */
export function moduleFiles(module: string, relPaths: readonly string[]): string[] {
    const dir = moduleDir(module);
    return relPaths.map((p) => fs.readFileSync(path.join(dir, p), "utf8"));
}

/** Every *.yaml file of one directory of a module (or those whose name matches `only`), kustomization files aside. */
export function moduleYamlDir(module: string, relDir: string, only?: RegExp): string[] {
    const dir = path.join(moduleDir(module), relDir);
    return fs
        .readdirSync(dir)
        .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml" && (only === undefined || only.test(f)))
        .sort()
        .map((f) => fs.readFileSync(path.join(dir, f), "utf8"));
}
