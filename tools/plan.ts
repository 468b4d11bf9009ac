/**
 * The offline plan: evaluates the program for one stack file with Pulumi's mock runtime (no
 * credentials, no network, no Pulumi CLI) and writes what the stack declares.
 *
 *   npm run plan -- --stack hub [--out plan] [--against main]
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { ConfigError, PROJECT, printable } from "../components/config/reader";
import { STAGES } from "../components/stage";
import { checkPlan } from "./guard";
import { validateObject } from "./schemas";
import { OfflineRun, PlannedResource, kubernetesGvk, runOffline } from "./offline";
import { REPO_ROOT, StackFile, listStacks, placeholderWorld, readStackFile, referencedHubStack } from "./stackFile";
import { ROLLOUTS_CRDS } from "../components/rollouts/crds";
import { flagValue, splitEquals, wantsHelp } from "./cliArgs";
import { PlanRow, diffPlans, renderFullDiff, renderShortDiff } from "./planDiff";
import { planAtRef } from "./planAgainst";

/** Kubernetes types that are not whole objects: patches, and components rendered by the provider. */
const NOT_MANIFESTS = /(Patch$)|(^kubernetes:helm\.sh\/)|(^kubernetes:yaml\/)|(^kubernetes:kustomize\/)/;

/** Runs the program for one stack file under mocks. */
export async function planStack(file: StackFile, configDir = file.dir ?? REPO_ROOT): Promise<OfflineRun> {
    // The program module is loaded only now, after nothing else touched the runtime.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { defineStack } = require("../stacks/program") as typeof import("../stacks/program");
    const world = placeholderWorld(file);
    // A spoke's hub stack of this project, with its file here, is planned first: the spoke then
    // reads the endpoint the hub really routes for it rather than a placeholder.
    const hubStack = referencedHubStack(file);
    const [, project, hubName] = hubStack?.split("/") ?? [];
    if (hubStack && project === PROJECT && hubName && hubName !== file.stack && listStacks(configDir).includes(hubName)) {
        const hub = await planStack(readStackFile(hubName, configDir), configDir);
        world.stackOutputs = { ...world.stackOutputs, [hubStack]: hub.outputs };
    }
    return runOffline({ stack: file.stack, config: file.config, secretKeys: file.secretKeys, world, program: () => defineStack() });
}

/** The provider-rendered components whose children the mock runtime does not see. */
const CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup";
const HELM_CHART = "kubernetes:helm.sh/v4:Chart";

/** Whether a provider creates with server-side apply over existing objects (`upsertExistingObjects`). */
function upserts(provider: PlannedResource | undefined): boolean {
    return provider?.inputs.upsertExistingObjects === "true" || provider?.inputs.upsertExistingObjects === true;
}

/**
 * What a resource takes over if it already exists in the cluster: every object a creating
 * provider with `upsertExistingObjects` applies. Patches (which never own an object) and reads are
 * not adoptions. A CRD group lists the CRDs its files define; a chart stands for every object it
 * renders for its release. Undefined when the resource adopts nothing.
 */
export function adoptedBy(r: PlannedResource, byUrn: Map<string, PlannedResource>): string[] | undefined {
    const providerUrn = r.provider ?? r.providers.kubernetes ?? null;
    if (r.read || !providerUrn || !upserts(byUrn.get(providerUrn))) {
        return undefined;
    }
    if (r.type === CONFIG_GROUP) {
        const files = Array.isArray(r.inputs.files) ? (r.inputs.files as string[]) : [];
        return files.map((f) => {
            const crd = ROLLOUTS_CRDS.find((c) => f.endsWith(`/${c.file}`));
            return crd ? `CustomResourceDefinition ${crd.name}` : `every object in ${f}`;
        });
    }
    if (r.type === HELM_CHART) {
        return [`every object chart ${String(r.inputs.chart)} ${String(r.inputs.version)} renders for release ${String(r.inputs.name)} in namespace ${String(r.inputs.namespace)}`];
    }
    const gvk = kubernetesGvk(r.type);
    if (!r.custom || !gvk || NOT_MANIFESTS.test(r.type)) {
        return undefined;
    }
    const meta = (r.inputs.metadata ?? {}) as { name?: string; namespace?: string };
    return [`${gvk.kind} ${meta.namespace ? `${meta.namespace}/` : ""}${meta.name ?? r.name}`];
}

/** Every adoption of the run, by resource. */
export function adoptions(run: OfflineRun): { resource: PlannedResource; objects: string[] }[] {
    const byUrn = new Map(run.resources.map((r) => [r.urn, r]));
    return run.resources.flatMap((r) => {
        const objects = adoptedBy(r, byUrn);
        return objects ? [{ resource: r, objects }] : [];
    });
}

/** The rows of resources.json. */
export function resourceRows(run: OfflineRun): Record<string, unknown>[] {
    const byUrn = new Map(run.resources.map((r) => [r.urn, r]));
    return run.resources.map((r) => ({
        urn: r.urn,
        name: r.name,
        type: r.type,
        stage: r.stage,
        parent: r.parent,
        dependsOn: r.dependsOn,
        protect: r.protect,
        retainOnDelete: r.retainOnDelete,
        deleteBeforeReplace: r.deleteBeforeReplace,
        import: r.importId,
        provider: r.provider,
        adopts: adoptedBy(r, byUrn) ?? null,
        custom: r.custom,
        read: r.read,
        transforms: r.transforms.map((t) => t.name || "anonymous"),
        inputs: r.inputs,
    }));
}

/** Whole Kubernetes objects the stack declares (not reads, patches or charts), dependencies first. */
export function manifestResources(run: OfflineRun): PlannedResource[] {
    const objects = run.resources.filter((r) => r.custom && !r.read && kubernetesGvk(r.type) && !NOT_MANIFESTS.test(r.type));
    return topologicalOrder(objects, run.resources);
}

/** Orders `subset` so each resource comes after everything it (transitively) depends on. */
export function topologicalOrder(subset: PlannedResource[], all: PlannedResource[]): PlannedResource[] {
    const byUrn = new Map(all.map((r) => [r.urn, r]));
    const wanted = new Set(subset.map((r) => r.urn));
    const done = new Set<string>();
    const out: PlannedResource[] = [];
    const visit = (urn: string, path: Set<string>) => {
        if (done.has(urn) || path.has(urn)) {
            return;
        }
        path.add(urn);
        for (const dep of byUrn.get(urn)?.dependsOn ?? []) {
            visit(dep, path);
        }
        path.delete(urn);
        done.add(urn);
        if (wanted.has(urn)) {
            out.push(byUrn.get(urn)!);
        }
    };
    for (const r of subset) {
        visit(r.urn, new Set());
    }
    return out;
}

/** One YAML document per object, in dependency order. */
export function manifestsYaml(run: OfflineRun): string {
    return manifestResources(run)
        .map((r) => {
            const { apiVersion, kind, ...rest } = r.inputs;
            return YAML.stringify({ apiVersion, kind, ...rest }, { lineWidth: 0 });
        })
        .join("---\n");
}

/** The patches the stack applies to objects another owner keeps (argocd-cm, argocd-rbac-cm, AppProjects), dependencies first. */
export function patchResources(run: OfflineRun): PlannedResource[] {
    const patches = run.resources.filter((r) => r.custom && !r.read && kubernetesGvk(r.type) && /Patch$/.test(r.type));
    return topologicalOrder(patches, run.resources);
}

/**
 * patches.yaml: each patch as the fields it writes, one document each under a comment naming the
 * object, with texts (argocd-rbac-cm's policy CSV, argocd-cm's ignore rules) as readable lines.
 * Not applied as a whole object: server-side apply sets these fields only, the object's other
 * fields stay its owner's, and dropping the patch gives its fields up (pulumi/docs
 * themes/default/content/registry/packages/kubernetes/how-to-guides/managing-resources-with-server-side-apply.md).
 */
export function patchesYaml(run: OfflineRun): string {
    const patches = patchResources(run);
    if (patches.length === 0) {
        return `# stack ${run.stack}: no patches; this stack writes no field of an object another owner keeps.\n`;
    }
    return patches
        .map((r) => {
            const { apiVersion, kind, metadata, ...rest } = r.inputs;
            const meta = (metadata ?? {}) as { name?: string; namespace?: string };
            const doc = new YAML.Document({ apiVersion, kind, metadata, ...rest });
            const type = kubernetesGvk(r.type)!.kind;
            doc.commentBefore = ` ${type} of ${String(kind)} ${meta.namespace ? `${meta.namespace}/` : ""}${String(meta.name)} (stage ${r.stage ?? "none"}, resource ${r.name}): server-side apply of these fields only`;
            return doc.toString({ lineWidth: 0 });
        })
        .join("---\n");
}

/** The short summary the plan prints: resources per stage and kind, and the stage DAG. */
export function summary(run: OfflineRun): string {
    const lines = [`stack ${run.stack}: ${run.resources.length} resources`];
    for (const stage of [null, ...STAGES]) {
        const inStage = run.resources.filter((r) => r.stage === stage);
        const counts = new Map<string, number>();
        for (const r of inStage) {
            const label = (kubernetesGvk(r.type)?.kind ?? r.type) + (r.read ? " (read)" : "");
            counts.set(label, (counts.get(label) ?? 0) + 1);
        }
        const detail = [...counts.entries()].map(([k, n]) => `${k} x${n}`).join(", ");
        lines.push(`  ${(stage ?? "(stack)").padEnd(12)} ${String(inStage.length).padStart(3)}  ${detail}`);
    }
    lines.push(`  stages: ${STAGES.join(" -> ")}`);
    const adopted = adoptions(run);
    if (adopted.length === 0) {
        lines.push("  adopting: nothing (cluster.adoptExisting is false: a create of an existing object fails)");
        // stacks/preflight.ts: the offline plan has no cluster to read.
        lines.push("  existing objects: not checked here; pulumi preview and up read every object above against the cluster first and refuse another tool's (needs a cluster)");
    } else {
        const objects = adopted.flatMap((a) => a.objects);
        lines.push(`  adopting: ${objects.length} objects, each taken over if it exists (cluster.adoptExisting: the provider's upsertExistingObjects, and pulumi.com/patchForce on each whole object; the provider's enablePatchForce stays false):`);
        for (const o of objects) {
            lines.push(`    ${o}`);
        }
    }
    for (const chart of run.resources.filter((r) => r.type === HELM_CHART)) {
        // The mock runtime never sees a chart's children: the provider renders them at deploy time.
        lines.push(`  chart objects: not shown; the provider renders chart ${String(chart.inputs.chart)} ${String(chart.inputs.version)} for release ${String(chart.inputs.namespace)}/${String(chart.inputs.name)} at deploy time, with the values in resources.json (${chart.name}); pulumi preview lists them (needs a cluster)`);
    }
    for (const group of run.resources.filter((r) => r.type === CONFIG_GROUP)) {
        const files = Array.isArray(group.inputs.files) ? group.inputs.files.length : 0;
        lines.push(`  CRD objects: not shown; the provider reads the ${files} file(s) of ${group.name} (resources.json) at deploy time; pulumi preview lists them (needs a cluster)`);
    }
    lines.push("  controller release: not checked here; pulumi preview and up read the running controller first (a stack file naming no release keeps the line the cluster runs; a move across the pod-template-hash boundary needs controller.acknowledgeNewRevisions) (needs a cluster)");
    return lines.join("\n");
}

/**
 * Writes resources.json, manifests.yaml, patches.yaml and `extra` (the diff) under
 * `<outDir>/<stack>/`, all or none: they are written into a new folder beside it and swapped in by
 * renames, so an interrupt or a full disk leaves the previous plan or the new one, never a mix.
 */
export function writePlan(run: OfflineRun, outDir: string, extra: Record<string, string> = {}): string {
    const dir = path.join(outDir, run.stack);
    fs.mkdirSync(outDir, { recursive: true });
    const staging = fs.mkdtempSync(path.join(outDir, `.${run.stack}.new-`));
    try {
        fs.writeFileSync(path.join(staging, "resources.json"), JSON.stringify(resourceRows(run), null, 2) + "\n");
        fs.writeFileSync(path.join(staging, "manifests.yaml"), manifestsYaml(run));
        fs.writeFileSync(path.join(staging, "patches.yaml"), patchesYaml(run));
        for (const [name, text] of Object.entries(extra)) {
            fs.writeFileSync(path.join(staging, name), text);
        }
        const previous = fs.existsSync(dir) ? `${staging}.old` : undefined;
        if (previous) {
            fs.renameSync(dir, previous);
        }
        fs.renameSync(staging, dir);
        if (previous) {
            fs.rmSync(previous, { recursive: true, force: true });
        }
    } catch (e) {
        fs.rmSync(staging, { recursive: true, force: true });
        throw e;
    }
    return dir;
}

/** Removes the plan of a stack, so a failed plan never leaves the previous one looking current. */
export function removePlan(stack: string, outDir: string): void {
    fs.rmSync(path.join(outDir, stack), { recursive: true, force: true });
}

const USAGE = "usage: npm run plan -- --stack <name> [--out <dir>] [--config-dir <dir>] [--against <git ref>] [--stats <file>]";
const HELP = `${USAGE}

Plans a stack offline (no cluster, no credentials) and writes <out>/<stack>/resources.json,
manifests.yaml and patches.yaml, all or none; a failed plan removes the stack's previous plan.

  --stack <name>       the stack file Pulumi.<name>.yaml (required)
  --out <dir>          where the plan goes (default: plan/ in the project)
  --config-dir <dir>   where the stack files are (default: the project)
  --against <git ref>  also plan the stack as it was at that ref (a temporary worktree; the checkout
                       is left alone), print the review diff and write it: diff.md (complete) and
                       diff-summary.md (short, for a pull-request comment)
  --stats <file>       also write the run's figures there as JSON (npm run bench reads them)
  --help, -h           print this and exit

Flags take their value as the next argument or after "=" (--stack=hub).`;

export class PlanUsageError extends Error {}

export interface PlanArgs {
    stack: string;
    out: string;
    configDir: string;
    /** Where to write the run's figures (`PlanStats`), if anywhere. */
    stats?: string;
    /** The git ref to diff the plan against, if any. */
    against?: string;
}

export function parsePlanArgs(argv: readonly string[]): PlanArgs | "help" {
    if (wantsHelp(argv)) {
        return "help";
    }
    const args = splitEquals(argv);
    let stack: string | undefined;
    let out = path.join(REPO_ROOT, "plan");
    let configDir = REPO_ROOT;
    let stats: string | undefined;
    let against: string | undefined;
    const value = (i: number) => flagValue(args, i, USAGE, (m) => new PlanUsageError(m));
    for (let i = 0; i < args.length; i++) {
        if (args[i] === "--stack") {
            stack = value(i++);
        } else if (args[i] === "--out") {
            out = path.resolve(value(i++));
        } else if (args[i] === "--config-dir") {
            configDir = path.resolve(value(i++));
        } else if (args[i] === "--stats") {
            stats = path.resolve(value(i++));
        } else if (args[i] === "--against") {
            against = value(i++);
        } else {
            throw new PlanUsageError(`unknown argument ${args[i]}; ${USAGE}`);
        }
    }
    if (!stack) {
        throw new PlanUsageError(USAGE);
    }
    return { stack, out, configDir, ...(stats ? { stats } : {}), ...(against ? { against } : {}) };
}

/** The figures of one plan run, for `npm run bench`. */
export interface PlanStats {
    /** From the start of the plan (its tools loaded) to its end: the program's load and evaluation, the checks, the writing. */
    planMs: number;
    /** The process's CPU time so far, user and system, every thread: steadier than wall time on a busy machine. */
    cpuMs: number;
    /** The process's maximum resident set so far. */
    peakRssMiB: number;
    resources: number;
}

/** The figures of a run that started at `start` (process.hrtime.bigint()). */
export function planStats(start: bigint, resources: number): PlanStats {
    const cpu = process.cpuUsage();
    return { planMs: Number(process.hrtime.bigint() - start) / 1e6, cpuMs: (cpu.user + cpu.system) / 1000, peakRssMiB: process.resourceUsage().maxRSS / 1024, resources };
}

async function main(): Promise<void> {
    const start = process.hrtime.bigint();
    const parsed = parsePlanArgs(process.argv.slice(2));
    if (parsed === "help") {
        console.log(HELP);
        return;
    }
    const args = parsed;
    let finished = false;
    // A program that leaves an output pending would let Node exit quietly with status 0.
    process.on("beforeExit", () => {
        if (!finished) {
            console.error(printable(`stack "${args.stack}": the program did not finish (an output never resolved)`));
            process.exit(1);
        }
    });
    let run: OfflineRun;
    try {
        run = await planStack(readStackFile(args.stack, args.configDir), args.configDir);
    } catch (e) {
        // No plan of a stack that cannot be planned: the previous one would pass for current.
        removePlan(args.stack, args.out);
        throw e;
    }
    const violations = await checkPlan(run);
    const objects = manifestResources(run);
    const invalid = objects
        .map((r) => validateObject(r.inputs))
        .filter((res) => res.problems.length > 0);
    finished = true;
    const extra: Record<string, string> = {};
    let short: string | undefined;
    let diffError: Error | undefined;
    if (args.against) {
        try {
            const base = planAtRef({ repoRoot: REPO_ROOT, ref: args.against, stack: args.stack, configDir: args.configDir });
            const diff = diffPlans(base.rows, JSON.parse(JSON.stringify(resourceRows(run))) as PlanRow[]);
            const opts = { stack: run.stack, against: args.against, commit: base.commit, fullAt: `diff.md beside the plan (plan/${run.stack}/diff.md; in a pull request, the plan-${run.stack} artifact)` };
            const note = base.existed ? "" : `\nThe stack file Pulumi.${run.stack}.yaml did not exist at \`${args.against}\`: every object is new.\n`;
            extra["diff.md"] = renderFullDiff(diff, opts) + note;
            short = renderShortDiff(diff, opts) + note;
            extra["diff-summary.md"] = short;
        } catch (e) {
            diffError = e instanceof Error ? e : new Error(String(e));
        }
    }
    const dir = writePlan(run, args.out, extra);
    console.log(summary(run));
    const shown = path.relative(process.cwd(), dir) || dir;
    console.log(`wrote ${shown}/resources.json, manifests.yaml, patches.yaml${short ? `, diff.md and diff-summary.md` : ""}`);
    if (short) {
        console.log("");
        console.log(short);
    }
    // The plan itself stands; only the comparison failed.
    if (diffError) {
        console.error(`no diff against ${args.against}: ${diffError.message}`);
        process.exitCode = 1;
    }
    // The policy pack's checks, offline: a plan that breaks one fails like `pulumi preview` would.
    if (violations.length > 0) {
        console.error(printable(`stack "${run.stack}": ${violations.length} guardrail violation(s):`));
        for (const v of violations) {
            console.error(printable(`  - [${v.check}] ${v.urn ? `${v.urn.split("::").pop()}: ` : ""}${v.message}`));
        }
        process.exitCode = 1;
    } else {
        console.log("guardrails: every check passed");
    }
    if (invalid.length > 0) {
        console.error(printable(`stack "${run.stack}": ${invalid.length} object(s) fail schema validation:`));
        for (const res of invalid) {
            console.error(printable(`  - ${res.object} (${res.via}): ${res.problems.join("; ")}`));
        }
        process.exitCode = 1;
    } else {
        console.log(`schemas: all ${objects.length} objects valid`);
    }
    if (args.stats) {
        fs.writeFileSync(args.stats, JSON.stringify(planStats(start, run.resources.length)) + "\n");
    }
}

if (require.main === module) {
    main().catch((err: unknown) => {
        console.error(printable(err instanceof ConfigError || err instanceof Error ? err.message : String(err)));
        process.exit(err instanceof PlanUsageError ? 2 : 1);
    });
}
