/**
 * The engine part of `npm run bench`, in one run on the same kind of local control plane (each
 * case on a fresh cluster with the platform installed), as ratios of the same run:
 * - `pulumi preview` of the hub with the policy pack, against a floor program on the same engine
 *   (one ConfigMap through the same provider, loaded the same way: TypeScript with the program's
 *   tsconfig settings); target at most PREVIEW_TARGET_X_FLOOR;
 * - `pulumi up` of the hub with the policy pack, against a floor that applies the same objects
 *   without Pulumi: the offline plan's manifests.yaml (the CRDs as up reads them, the program's own
 *   objects) and patches.yaml applied server-side by kubectl, then `helm install --wait` of the same
 *   chart archive with the values of the plan's Chart resource; target at most UP_TARGET_X_FLOOR.
 *   `up` of the one-ConfigMap floor is measured too.
 * Each preview and up also writes its engine events (`--event-log`): the phases they show (e2e/lib/eventLog.ts)
 * are printed beside the same phases of the one-ConfigMap floor.
 * Prints markdown tables; `--json FILE` writes every figure with its floor.
 *
 *   node --require ./tools/swc-register.js e2e/bench.ts [--runs N] [--json FILE]     (npm run bench runs it)
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { killAllSync, runAsync } from "./lib/procs";
import { Phases, breakdownTable, medianPhases, phases, readRequests, tailEventLog, writeRequestProbe } from "./lib/eventLog";
import { failure } from "./lib/pulumi";
import { World, npmRunAsync } from "./lib/world";
import type { Cluster } from "./lib/cluster";
import { REPO_ROOT } from "../tools/stackFile";

interface Timing {
    previewMs: number;
    upMs: number;
    preview: Phases;
    up: Phases;
}

/** Targets of the hub against its floors (issue: a fast real preview; README, Performance). */
export const PREVIEW_TARGET_X_FLOOR = 2;
export const UP_TARGET_X_FLOOR = 3;

/** The figures `--json` writes: each with its floor and the ratio. */
export interface EngineFigures {
    runs: number;
    engines: string;
    preview: { hubMs: number; floorMs: number; floor: string; ratio: number; target: number; met: boolean };
    up: { hubMs: number; floorMs: number; floor: string; ratio: number; target: number; met: boolean };
    upAgainstConfigMap: { hubMs: number; floorMs: number; floor: string; ratio: number };
    /** The apply floor's parts: kubectl's server-side applies and helm install. */
    applyFloorParts: { kubectlMs: number; helmMs: number };
    /** Where each run's time went, median over the runs (e2e/lib/eventLog.ts). */
    breakdown: Record<"preview" | "up", { hub: Phases; floorConfigMap: Phases }>;
    samples: { floorConfigMap: Timing[]; hub: Timing[]; applyFloor: { kubectlMs: number; helmMs: number }[] };
}

function median(xs: number[]): number {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The floor program: a provider for the cluster and one ConfigMap, nothing else. */
function writeFloorProject(dir: string, kubeconfig: string): void {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
        path.join(dir, "Pulumi.yaml"),
        "name: floor\nruntime:\n  name: nodejs\n  options:\n    typescript: true\n    tsconfig: tsconfig.json\nmain: index.ts\n",
    );
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "floor", private: true, main: "index.ts" }));
    // The program's own load settings (tsconfig.pulumi.json): transpile-only, with swc.
    fs.writeFileSync(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({
            compilerOptions: { target: "ES2022", module: "commonjs", strict: true, noCheck: true, skipLibCheck: true },
            "ts-node": { swc: true },
        }),
    );
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

/**
 * One preview or up with an event log and the request probe in the program's Node: its time and
 * where it went. `run` gets the extra arguments and environment.
 */
async function measured(
    what: string,
    dir: string,
    probe: string,
    run: (args: string[], env: NodeJS.ProcessEnv) => Promise<{ status: number; stdout: string; stderr: string }>,
): Promise<{ ms: number; phases: Phases }> {
    const d = fs.mkdtempSync(path.join(dir, "bench-events-"));
    const [log, requests] = [path.join(d, "events.jsonl"), path.join(d, "requests.jsonl")];
    const t0 = Date.now();
    const tail = tailEventLog(log, t0);
    let arrivals: ReturnType<typeof tail.stop> = [];
    // `--event-log` exists only with PULUMI_DEBUG_COMMANDS (pulumi/pulumi pkg/cmd/pulumi/operations/up.go and
    // preview.go at v3.248.0); pkg/backend/display/display.go startEventLogger writes each event as it comes.
    const env = { PULUMI_DEBUG_COMMANDS: "true", NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${probe}`.trim(), BENCH_REQUESTS_FILE: requests };
    const ms = await timed(what, () => run(["--event-log", log], env).finally(() => (arrivals = tail.stop())));
    return { ms, phases: phases(arrivals, readRequests(requests, t0), ms) };
}

/** What the apply floor applies: the hub's offline plan (no chart section) and the chart's release. */
interface ApplyInputs {
    crds: string;
    crdNames: string[];
    objects: string;
    patches: string;
    release: { name: string; namespace: string; version: string; values: Record<string, unknown> };
}

/**
 * The hub's offline plan for the stack file the hub's up runs (its folder), with the CRDs read from
 * the URLs it names (the run's file server): the floor applies exactly what it lists.
 */
async function applyInputs(w: World, configDir: string): Promise<ApplyInputs> {
    const out = path.join(w.dir, "bench-plan");
    // Not blocking: the run's file server, in this process, answers the plan's requests for the CRDs.
    const plan = await npmRunAsync("plan", ["--stack", "hub", "--out", out, "--config-dir", configDir, "--crds", "remote"], {
        ...process.env,
        NODE_EXTRA_CA_CERTS: w.files.caFile,
        ARGO_ROLLOUTS_CHART: "",
    });
    if (plan.status !== 0 || !/CRD objects: 5 in manifests\.yaml/.test(plan.stdout)) {
        throw new Error(`the hub's offline plan for the apply floor failed or shows no CRDs:\n${failure(plan)}`);
    }
    const dir = path.join(out, "hub");
    const docs = YAML.parseAllDocuments(fs.readFileSync(path.join(dir, "manifests.yaml"), "utf8")).filter((d) => (d.toJS() as { kind?: string } | null)?.kind);
    const isCrd = (d: YAML.Document) => (d.toJS() as { kind: string }).kind === "CustomResourceDefinition";
    const rows = JSON.parse(fs.readFileSync(path.join(dir, "resources.json"), "utf8")) as { type: string; inputs: ApplyInputs["release"] }[];
    const chart = rows.find((r) => r.type === "kubernetes:helm.sh/v4:Chart");
    if (!chart) {
        throw new Error("the hub's offline plan has no chart");
    }
    const patches = YAML.parseAllDocuments(fs.readFileSync(path.join(dir, "patches.yaml"), "utf8")).filter((d) => (d.toJS() as { kind?: string } | null)?.kind);
    return {
        crds: docs
            .filter(isCrd)
            .map((d) => d.toString())
            .join("---\n"),
        crdNames: docs.filter(isCrd).map((d) => (d.toJS() as { metadata: { name: string } }).metadata.name),
        objects: docs
            .filter((d) => !isCrd(d))
            .map((d) => d.toString())
            .join("---\n"),
        patches: patches.map((d) => d.toString()).join("---\n"),
        release: { name: chart.inputs.name, namespace: chart.inputs.namespace, version: chart.inputs.version, values: chart.inputs.values },
    };
}

/**
 * The floor of up: the same objects applied without Pulumi, on the same kind of cluster: the CRDs
 * server-side and waited for (Established), the program's objects and patches server-side, then
 * `helm install --wait` of the chart archive the hub's up installs, with the same values.
 */
async function applyFloor(w: World, cluster: Cluster, inputs: ApplyInputs, chartArchive: string): Promise<{ kubectlMs: number; helmMs: number }> {
    const kubectl = path.join(w.bin, "kubectl");
    const helm = path.join(w.bin, "helm");
    const k = (args: string[], input?: string) => runAsync(kubectl, [`--kubeconfig=${cluster.kubeconfig}`, ...args], { input });
    const valuesFile = path.join(w.dir, "bench-values.json");
    fs.writeFileSync(valuesFile, JSON.stringify(inputs.release.values));
    const ssa = ["apply", "--server-side", "--field-manager", "bench-floor", "-f", "-"];
    const kubectlMs = await timed("kubectl apply of the CRDs, the objects and the patches", async () => {
        const crds = await k(ssa, inputs.crds);
        if (crds.status !== 0) {
            return crds;
        }
        const established = await k(["wait", "--for", "condition=Established", "--timeout", "120s", "crd", ...inputs.crdNames]);
        if (established.status !== 0) {
            return established;
        }
        const objects = await k(ssa, inputs.objects);
        if (objects.status !== 0 || !inputs.patches) {
            return objects;
        }
        return k([...ssa.slice(0, -2), "--force-conflicts", "-f", "-"], inputs.patches);
    });
    const helmMs = await timed("helm install", () =>
        runAsync(
            helm,
            [
                "install",
                inputs.release.name,
                chartArchive,
                "--namespace",
                inputs.release.namespace,
                "--values",
                valuesFile,
                "--wait",
                "--timeout",
                "5m",
                "--kubeconfig",
                cluster.kubeconfig,
            ],
            {
                env: {
                    ...process.env,
                    HELM_CACHE_HOME: path.join(w.dir, "helm-bench", "cache"),
                    HELM_CONFIG_HOME: path.join(w.dir, "helm-bench", "config"),
                    HELM_DATA_HOME: path.join(w.dir, "helm-bench", "data"),
                },
            },
        ),
    );
    return { kubectlMs, helmMs };
}

function parseArgs(argv: string[]): { runs: number; json?: string } {
    let runs = 3;
    let json: string | undefined;
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === "--runs") {
            runs = Number(argv[++i]);
        } else if (argv[i] === "--json" && argv[i + 1]) {
            json = path.resolve(argv[++i]);
        } else {
            throw new Error("usage: e2e/bench.ts [--runs N] [--json FILE]");
        }
    }
    if (!Number.isInteger(runs) || runs < 1) {
        throw new Error("usage: e2e/bench.ts [--runs N] [--json FILE]");
    }
    return { runs, ...(json ? { json } : {}) };
}

async function main(): Promise<void> {
    const { runs, json } = parseArgs(process.argv.slice(2));
    const build = spawnSync("bash", [path.join(__dirname, "engines", "build.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
    if (build.status !== 0) {
        throw new Error("the engines could not be built");
    }
    const bin = build.stdout.trim().split("\n").pop() ?? "";
    const w = await World.start(bin);
    const floor: Timing[] = [];
    const hub: Timing[] = [];
    const apply: { kubectlMs: number; helmMs: number }[] = [];
    let inputs: ApplyInputs | undefined;
    const probe = writeRequestProbe(w.dir);
    try {
        for (let i = 0; i < runs; i++) {
            // Floor: its own cluster, project and stack.
            const f = await w.cluster(`floor-${i}`, "hub");
            const fenv = w.pulumi(`floor-${i}`);
            const floorDir = path.join(w.dir, `floor-project-${i}`);
            writeFloorProject(floorDir, f.cluster.kubeconfig);
            const inFloor = (args: string[], env?: NodeJS.ProcessEnv) => fenv.pulumi([...args, "--cwd", floorDir], { env });
            await timed("floor stack init", () => inFloor(["stack", "init", "bench", "--secrets-provider", "passphrase"]));
            const fPreview = await measured("floor preview", w.dir, probe, (a, env) => inFloor(["preview", "--stack", "bench", ...a], env));
            const fUp = await measured("floor up", w.dir, probe, (a, env) => inFloor(["up", "--yes", "--skip-preview", "--stack", "bench", ...a], env));
            floor.push({ previewMs: fPreview.ms, upMs: fUp.ms, preview: fPreview.phases, up: fUp.phases });
            // The hub as the pipeline runs it: preview and up with the policy pack.
            const h = await w.cluster(`hub-${i}`, "hub");
            const henv = w.pulumi(`hub-${i}`);
            await w.initStack(henv, h);
            const withPack = (args: string[]) => (a: string[], env: NodeJS.ProcessEnv) =>
                henv.pulumi([...args, "--policy-pack", "policy-pack", ...a], { stack: "hub", env });
            const hPreview = await measured("hub preview", w.dir, probe, withPack(["preview"]));
            const hUp = await measured("hub up", w.dir, probe, withPack(["up", "--yes", "--skip-preview"]));
            hub.push({ previewMs: hPreview.ms, upMs: hUp.ms, preview: hPreview.phases, up: hUp.phases });
            // The same objects without Pulumi, on a cluster of their own with the same platform.
            inputs ??= await applyInputs(w, henv.projectDir);
            const archive = w.chartArchives.get(inputs.release.version);
            if (!archive) {
                throw new Error(`the run serves no chart ${inputs.release.version} for the apply floor`);
            }
            const a = await w.cluster(`apply-${i}`, "hub");
            apply.push(await applyFloor(w, a.cluster, inputs, archive));
            for (const name of [`floor-${i}`, `hub-${i}`, `apply-${i}`]) {
                await w.clusters.get(name)?.stop();
                w.clusters.delete(name);
            }
        }
    } finally {
        await w.stop();
    }
    const m = (xs: Timing[], k: "previewMs" | "upMs") => median(xs.map((x) => x[k]));
    const mp = (xs: Timing[], k: "preview" | "up") => medianPhases(xs.map((x) => x[k]));
    const applyMs = median(apply.map((a) => a.kubectlMs + a.helmMs));
    const engines = "Pulumi CLI v3.248.0, kubernetes provider v4.25.0, kube-apiserver v1.35.4, helm v3.20.2";
    const figures: EngineFigures = {
        runs,
        engines,
        preview: {
            hubMs: m(hub, "previewMs"),
            floorMs: m(floor, "previewMs"),
            floor: "pulumi preview of one ConfigMap",
            ratio: m(hub, "previewMs") / m(floor, "previewMs"),
            target: PREVIEW_TARGET_X_FLOOR,
            met: m(hub, "previewMs") / m(floor, "previewMs") <= PREVIEW_TARGET_X_FLOOR,
        },
        up: {
            hubMs: m(hub, "upMs"),
            floorMs: applyMs,
            floor: "the plan's manifests and patches applied server-side by kubectl, then helm install --wait of the same chart with the same values",
            ratio: m(hub, "upMs") / applyMs,
            target: UP_TARGET_X_FLOOR,
            met: m(hub, "upMs") / applyMs <= UP_TARGET_X_FLOOR,
        },
        upAgainstConfigMap: { hubMs: m(hub, "upMs"), floorMs: m(floor, "upMs"), floor: "pulumi up of one ConfigMap", ratio: m(hub, "upMs") / m(floor, "upMs") },
        applyFloorParts: { kubectlMs: median(apply.map((a) => a.kubectlMs)), helmMs: median(apply.map((a) => a.helmMs)) },
        breakdown: {
            preview: { hub: mp(hub, "preview"), floorConfigMap: mp(floor, "preview") },
            up: { hub: mp(hub, "up"), floorConfigMap: mp(floor, "up") },
        },
        samples: { floorConfigMap: floor, hub, applyFloor: apply },
    };
    console.log(
        `engine benchmark: pulumi preview and up on the real engine (${engines}), median of ${runs} runs, each case on a fresh local control plane with the platform`,
    );
    console.log("");
    console.log("| case | ms | floor | floor ms | x floor | target |");
    console.log("|---|---:|---|---:|---:|---|");
    const row = (label: string, f: { hubMs: number; floorMs: number; floor: string; ratio: number }, target?: { target: number; met: boolean }) =>
        console.log(
            `| ${label} | ${f.hubMs.toFixed(0)} | ${f.floor} | ${f.floorMs.toFixed(0)} | ${f.ratio.toFixed(2)} | ${target ? `<= ${target.target}: ${target.met ? "met" : "MISSED"}` : ""} |`,
        );
    row("hub preview, with the policy pack", figures.preview, figures.preview);
    row("hub up, with the policy pack", figures.up, figures.up);
    row("hub up, with the policy pack", figures.upAgainstConfigMap);
    console.log("");
    console.log(
        `apply floor: kubectl ${figures.applyFloorParts.kubectlMs.toFixed(0)} ms, helm install ${figures.applyFloorParts.helmMs.toFixed(0)} ms; one-ConfigMap floor up ${m(floor, "upMs").toFixed(0)} ms`,
    );
    console.log(`\nwhere the time goes (median of ${runs} runs; steps overlap, so summed steps can exceed the wall time):\n`);
    const b = figures.breakdown;
    const columns: [string, Phases][] = [
        ["hub preview", b.preview.hub],
        ["floor preview", b.preview.floorConfigMap],
        ["hub up", b.up.hub],
        ["floor up", b.up.floorConfigMap],
    ];
    console.log(breakdownTable(columns).join("\n"));
    if (json) {
        fs.writeFileSync(json, JSON.stringify(figures, null, 2) + "\n");
    }
}

process.on("exit", () => killAllSync());
main().catch((err) => {
    console.error(`engine benchmark: ${err instanceof Error ? err.message : String(err)}`);
    killAllSync();
    process.exit(1);
});
