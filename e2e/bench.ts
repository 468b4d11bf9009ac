/**
 * The engine part of `npm run bench`: `pulumi preview` and `pulumi up` of the hub under the real
 * Pulumi CLI and kubernetes provider against a local control plane, and of a floor program on the
 * same engine (one ConfigMap through the same provider, loaded the same way: TypeScript with the
 * program's tsconfig settings), each on a fresh cluster with the platform installed, as ratios of
 * the same run. Prints a markdown table.
 *
 *   node --require ./tools/swc-register.js e2e/bench.ts [--runs N]     (npm run bench runs it)
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { killAllSync } from "./lib/procs";
import { failure } from "./lib/pulumi";
import { World } from "./lib/world";
import { REPO_ROOT } from "../tools/stackFile";

interface Timing {
    previewMs: number;
    upMs: number;
}

function median(xs: number[]): number {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The floor program: a provider for the cluster and one ConfigMap, nothing else. */
function writeFloorProject(dir: string, kubeconfig: string): void {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: floor\nruntime:\n  name: nodejs\n  options:\n    typescript: true\n    tsconfig: tsconfig.json\nmain: index.ts\n");
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "floor", private: true, main: "index.ts" }));
    // The program's own load settings (tsconfig.pulumi.json): transpile-only, with swc.
    fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "ES2022", module: "commonjs", strict: true, noCheck: true, skipLibCheck: true }, "ts-node": { swc: true } }));
    fs.writeFileSync(
        path.join(dir, "index.ts"),
        [
            'import * as k8s from "@pulumi/kubernetes";',
            `const provider = new k8s.Provider("floor", { kubeconfig: ${JSON.stringify(kubeconfig)}, context: "e2e", enableServerSideApply: true });`,
            'export const name = new k8s.core.v1.ConfigMap("floor", { metadata: { name: "floor", namespace: "default" }, data: { a: "b" } }, { provider }).metadata.name;',
            "",
        ].join("\n"),
    );
    fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"));
}

async function timed(what: string, f: () => Promise<{ status: number; stdout: string; stderr: string }>): Promise<number> {
    const start = process.hrtime.bigint();
    const r = await f();
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) {
        throw new Error(`${what} failed:\n${failure(r)}`);
    }
    return ms;
}

async function main(): Promise<void> {
    const argv = process.argv.slice(2);
    const runs = argv[0] === "--runs" ? Number(argv[1]) : 3;
    if (!Number.isInteger(runs) || runs < 1) {
        throw new Error("usage: e2e/bench.ts [--runs N]");
    }
    const build = spawnSync("bash", [path.join(__dirname, "engines", "build.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
    if (build.status !== 0) {
        throw new Error("the engines could not be built");
    }
    const bin = build.stdout.trim().split("\n").pop() ?? "";
    const w = await World.start(bin);
    const floor: Timing[] = [];
    const hub: Timing[] = [];
    try {
        for (let i = 0; i < runs; i++) {
            // Floor: its own cluster, project and stack.
            const f = await w.cluster(`floor-${i}`, "hub");
            const fenv = w.pulumi(`floor-${i}`);
            const floorDir = path.join(w.dir, `floor-project-${i}`);
            writeFloorProject(floorDir, f.cluster.kubeconfig);
            const inFloor = (args: string[]) => fenv.pulumi([...args, "--cwd", floorDir]);
            await timed("floor stack init", () => inFloor(["stack", "init", "bench", "--secrets-provider", "passphrase"]));
            const fPreview = await timed("floor preview", () => inFloor(["preview", "--stack", "bench"]));
            const fUp = await timed("floor up", () => inFloor(["up", "--yes", "--skip-preview", "--stack", "bench"]));
            floor.push({ previewMs: fPreview, upMs: fUp });
            // The hub as the pipeline runs it: preview and up with the policy pack.
            const h = await w.cluster(`hub-${i}`, "hub");
            const henv = w.pulumi(`hub-${i}`);
            await w.initStack(henv, h);
            const hPreview = await timed("hub preview", () => henv.pulumi(["preview", "--policy-pack", "policy-pack"], { stack: "hub" }));
            const hUp = await timed("hub up", () => henv.pulumi(["up", "--yes", "--skip-preview", "--policy-pack", "policy-pack"], { stack: "hub" }));
            hub.push({ previewMs: hPreview, upMs: hUp });
            for (const name of [`floor-${i}`, `hub-${i}`]) {
                await w.clusters.get(name)?.stop();
                w.clusters.delete(name);
            }
        }
    } finally {
        await w.stop();
    }
    const m = (xs: Timing[], k: keyof Timing) => median(xs.map((x) => x[k]));
    console.log(`engine benchmark: pulumi preview and up on the real engine (Pulumi CLI v3.248.0, kubernetes provider v4.25.0, kube-apiserver v1.35.4), median of ${runs} runs`);
    console.log("");
    console.log("| case | preview ms | up ms | preview x floor | up x floor |");
    console.log("|---|---:|---:|---:|---:|");
    console.log(`| floor: one ConfigMap | ${m(floor, "previewMs").toFixed(0)} | ${m(floor, "upMs").toFixed(0)} | 1.00 | 1.00 |`);
    console.log(`| hub, with the policy pack | ${m(hub, "previewMs").toFixed(0)} | ${m(hub, "upMs").toFixed(0)} | ${(m(hub, "previewMs") / m(floor, "previewMs")).toFixed(2)} | ${(m(hub, "upMs") / m(floor, "upMs")).toFixed(2)} |`);
}

process.on("exit", () => killAllSync());
main().catch((err) => {
    console.error(`engine benchmark: ${err instanceof Error ? err.message : String(err)}`);
    killAllSync();
    process.exit(1);
});
