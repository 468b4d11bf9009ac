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
import { KUBERNETES_VERSION } from "../components/cluster/config";
import { flagValue, splitEquals, wantsHelp } from "./cliArgs";
import { PlanRow, diffPlans, renderFullDiff, renderShortDiff } from "./planDiff";
import { planAtRef } from "./planAgainst";
import { ChartRender, HELM_CHART, RenderedObject, chartPathFrom, chartRelease, renderChart } from "./chartRender";
import { CONFIG_GROUP, CrdRead, CrdSourceSpec, crdSourceFrom, readCrdFiles } from "./crdSources";
import { ROLLOUTS_CRDS } from "../components/argoRollouts";

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
        return [
            `every object chart ${String(r.inputs.chart)} ${String(r.inputs.version)} renders for release ${String(r.inputs.name)} in namespace ${String(r.inputs.namespace)}`,
        ];
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

/**
 * What the provider renders of the stack's components, which the mock runtime never sees: each
 * Chart row's objects (tools/chartRender.ts) and each ConfigGroup row's CRDs (tools/crdSources.ts),
 * or why they are not shown.
 */
export interface ProviderRendered {
    charts: { row: PlanRow; render: ChartRender }[];
    crds: { row: PlanRow; read: CrdRead }[];
}

export interface RenderOptions {
    /** The pinned chart's folder or .tgz. */
    chartPath?: string;
    /** The Kubernetes version the chart renders for (vX.Y[.Z]). */
    kubeVersion?: string;
    crds?: CrdSourceSpec;
    env?: NodeJS.ProcessEnv;
}

export const NOTHING_RENDERED: ProviderRendered = { charts: [], crds: [] };

/** Renders the charts and reads the CRDs of a plan's rows (this plan's, or the one at `--against`'s ref). */
export async function renderProviderObjects(rows: readonly PlanRow[], opts: RenderOptions): Promise<ProviderRendered> {
    const charts = rows.filter((r) => r.type === HELM_CHART).map((row) => ({ row, render: renderChart(chartRelease(row.inputs), opts) }));
    const crds: ProviderRendered["crds"] = [];
    for (const row of rows.filter((r) => r.type === CONFIG_GROUP)) {
        const files = Array.isArray(row.inputs.files) ? (row.inputs.files as string[]) : [];
        crds.push({ row, read: await readCrdFiles(files, opts.crds) });
    }
    return { charts, crds };
}

/** The identity of a Kubernetes object: the type token and the namespace/name. */
function objectType(o: Record<string, unknown>): string {
    const apiVersion = String(o.apiVersion);
    return `kubernetes:${apiVersion.includes("/") ? apiVersion : `core/${apiVersion}`}:${String(o.kind)}`;
}

function objectName(o: Record<string, unknown>): string {
    const meta = (o.metadata ?? {}) as { name?: unknown; namespace?: unknown };
    return `${typeof meta.namespace === "string" ? `${meta.namespace}/` : ""}${String(meta.name)}`;
}

/**
 * The rendered objects as resources.json-like rows, so the review diff compares them like the
 * program's own: under the component that renders them, marked as the chart's or the CRDs'.
 */
export function renderedRows(r: ProviderRendered): PlanRow[] {
    const row = (parent: PlanRow, object: Record<string, unknown>, renderedBy: string, source: string | undefined): PlanRow => ({
        urn: `${parent.urn}$${objectType(object)}::${objectName(object)}`,
        name: objectName(object),
        type: objectType(object),
        stage: parent.stage,
        parent: parent.urn,
        renderedBy,
        source: source ?? null,
        inputs: object,
    });
    return [
        ...r.crds.flatMap((c) => ("objects" in c.read ? c.read.objects.map((o) => row(c.row, o.object, "CRDs", o.source)) : [])),
        ...r.charts.flatMap((c) => ("objects" in c.render ? c.render.objects.map((o) => row(c.row, o.object, "chart", o.source)) : [])),
    ];
}

function document(object: Record<string, unknown>, comment: string): string {
    const { apiVersion, kind, ...rest } = object;
    const doc = new YAML.Document({ apiVersion, kind, ...rest });
    doc.commentBefore = comment;
    return doc.toString({ lineWidth: 0 });
}

/**
 * manifests.yaml: every whole object `up` applies, one YAML document each under a comment naming
 * its owner, in three sections: the CRDs (when read), the program's own objects in dependency
 * order, the chart's (when rendered), as helm orders them. The file's first comment says what is
 * not shown and how to show it.
 */
export function manifestsYaml(run: OfflineRun, rendered: ProviderRendered = NOTHING_RENDERED): string {
    const header: string[] = [` stack ${run.stack}: what up applies as whole objects: the CRDs, the program's own objects, the chart's`];
    const docs: string[] = [];
    for (const c of rendered.crds) {
        if ("notShown" in c.read) {
            header.push(` CRDs of ${c.row.name}: not shown; ${c.read.notShown}`);
            continue;
        }
        for (const o of c.read.objects) {
            docs.push(
                document(
                    o.object,
                    ` CRDs: ${String(o.object.kind)} ${objectName(o.object)}, of ConfigGroup ${c.row.name} (stage ${c.row.stage ?? "none"}), from ${o.source}`,
                ),
            );
        }
    }
    for (const r of manifestResources(run)) {
        docs.push(document(r.inputs, ` program: ${kubernetesGvk(r.type)!.kind} ${objectName(r.inputs)}, resource ${r.name} (stage ${r.stage ?? "none"})`));
    }
    for (const c of rendered.charts) {
        if ("notShown" in c.render) {
            header.push(` chart objects of ${c.row.name}: not shown; ${c.render.notShown}`);
            continue;
        }
        const { chart } = c.render;
        for (const o of c.render.objects as RenderedObject[]) {
            const release = `${String(c.row.inputs.namespace)}/${String(c.row.inputs.name)}`;
            docs.push(
                document(
                    o.object,
                    ` chart: ${String(o.object.kind)} ${objectName(o.object)}, chart ${chart.name} ${chart.version} release ${release} (resource ${c.row.name}, stage ${c.row.stage ?? "none"})${o.source ? `, ${o.source}` : ""}`,
                ),
            );
        }
    }
    if (rendered.charts.length === 0 && run.resources.some((r) => r.type === HELM_CHART)) {
        header.push(" chart objects: not shown; plan with --chart <path> (or ARGO_ROLLOUTS_CHART) to show them");
    }
    if (rendered.crds.length === 0 && run.resources.some((r) => r.type === CONFIG_GROUP)) {
        header.push(" CRDs: not shown; plan with --crds <dir>|remote (or ARGO_ROLLOUTS_CRDS) to show them");
    }
    const head = header.map((l) => `#${l}`).join("\n") + "\n";
    return head + docs.join("---\n");
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
export function summary(run: OfflineRun, rendered: ProviderRendered = NOTHING_RENDERED): string {
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
        lines.push(
            "  existing objects: not checked here; pulumi preview and up read every object above against the cluster first and refuse another tool's (needs a cluster)",
        );
    } else {
        const objects = adopted.flatMap((a) => a.objects);
        lines.push(
            `  adopting: ${objects.length} objects, each taken over if it exists (cluster.adoptExisting: the provider's upsertExistingObjects, and pulumi.com/patchForce on each whole object; the provider's enablePatchForce stays false):`,
        );
        for (const o of objects) {
            lines.push(`    ${o}`);
        }
    }
    for (const chart of run.resources.filter((r) => r.type === HELM_CHART)) {
        const render = rendered.charts.find((c) => c.row.urn === chart.urn)?.render;
        if (render && "objects" in render) {
            lines.push(
                `  chart objects: ${render.objects.length} in manifests.yaml, chart ${render.chart.name} ${render.chart.version} rendered by helm for release ${String(chart.inputs.namespace)}/${String(chart.inputs.name)} with the values in resources.json (${chart.name}), as the provider renders it`,
            );
        } else {
            // The mock runtime never sees a chart's children: the provider renders them at deploy time.
            const why = render ? render.notShown : "plan with --chart <path> (or ARGO_ROLLOUTS_CHART) and a Kubernetes version to show them";
            lines.push(`  chart objects: not shown; ${why}; pulumi preview lists them (needs a cluster)`);
        }
    }
    for (const group of run.resources.filter((r) => r.type === CONFIG_GROUP)) {
        const files = Array.isArray(group.inputs.files) ? group.inputs.files.length : 0;
        const read = rendered.crds.find((c) => c.row.urn === group.urn)?.read;
        if (read && "objects" in read) {
            lines.push(`  CRD objects: ${read.objects.length} in manifests.yaml, from the ${files} file(s) of ${group.name}`);
        } else {
            lines.push(
                `  CRD objects: not shown; the provider reads the ${files} file(s) of ${group.name} (resources.json) at deploy time: ${read ? read.notShown : "plan with --crds <dir>|remote (or ARGO_ROLLOUTS_CRDS) to show them"}; pulumi preview lists them (needs a cluster)`,
            );
        }
    }
    lines.push(
        "  controller release: not checked here; pulumi preview and up read the running controller first (a stack file naming no release keeps the line the cluster runs; a move across the pod-template-hash boundary needs controller.acknowledgeNewRevisions) (needs a cluster)",
    );
    return lines.join("\n");
}

/**
 * Writes resources.json, manifests.yaml, patches.yaml and `extra` (the diff) under
 * `<outDir>/<stack>/`, all or none: they are written into a new folder beside it and swapped in by
 * renames, so an interrupt or a full disk leaves the previous plan or the new one, never a mix.
 */
export function writePlan(run: OfflineRun, outDir: string, extra: Record<string, string> = {}, rendered: ProviderRendered = NOTHING_RENDERED): string {
    const dir = path.join(outDir, run.stack);
    fs.mkdirSync(outDir, { recursive: true });
    const staging = fs.mkdtempSync(path.join(outDir, `.${run.stack}.new-`));
    try {
        fs.writeFileSync(path.join(staging, "resources.json"), JSON.stringify(resourceRows(run), null, 2) + "\n");
        fs.writeFileSync(path.join(staging, "manifests.yaml"), manifestsYaml(run, rendered));
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

/** The stack file's cluster.kubernetesVersion (the program has validated it by now). */
export function stackKubernetesVersion(file: StackFile): string | undefined {
    const text = file.config[`${PROJECT}:cluster`];
    try {
        const v = (JSON.parse(text ?? "{}") as { kubernetesVersion?: unknown }).kubernetesVersion;
        return typeof v === "string" ? v : undefined;
    } catch {
        return undefined;
    }
}

/**
 * The rendered objects the review diff compares: the chart's, and the CRDs', only when both sides
 * show them (one chart given renders one version: a ref pinning another shows none, and its
 * objects would read as all added or all removed); otherwise a note says they are not compared.
 */
export function comparedRendered(head: ProviderRendered, base: ProviderRendered, baseExisted: boolean): { head: PlanRow[]; base: PlanRow[]; notes: string[] } {
    if (!baseExisted) {
        return { head: renderedRows(head), base: [], notes: [] };
    }
    const shown = (r: ProviderRendered) => ({
        charts: r.charts.length > 0 && r.charts.every((c) => "objects" in c.render),
        crds: r.crds.length > 0 && r.crds.every((c) => "objects" in c.read),
    });
    const h = shown(head);
    const b = shown(base);
    const pick = (r: ProviderRendered, charts: boolean, crds: boolean): ProviderRendered => ({ charts: charts ? r.charts : [], crds: crds ? r.crds : [] });
    const why = (r: ProviderRendered, kind: "charts" | "crds") =>
        (kind === "charts"
            ? r.charts.map((c) => ("notShown" in c.render ? c.render.notShown : ""))
            : r.crds.map((c) => ("notShown" in c.read ? c.read.notShown : ""))
        )
            .filter(Boolean)
            .join("; ");
    const reasons = (kind: "charts" | "crds") =>
        [why(head, kind) && `here, ${why(head, kind)}`, why(base, kind) && `at the ref, ${why(base, kind)}`].filter(Boolean).join("; ") || "one side has none";
    const notes: string[] = [];
    if (!(h.charts && b.charts)) {
        notes.push(`The chart's objects are not compared: ${reasons("charts")}.`);
    }
    if (!(h.crds && b.crds)) {
        notes.push(`The CRDs are not compared: ${reasons("crds")}.`);
    }
    return {
        head: renderedRows(pick(head, h.charts && b.charts, h.crds && b.crds)),
        base: renderedRows(pick(base, h.charts && b.charts, h.crds && b.crds)),
        notes,
    };
}

const USAGE =
    "usage: npm run plan -- --stack <name> [--out <dir>] [--config-dir <dir>] [--chart <path>] [--kube-version <vX.Y.Z>] [--crds <dir>|remote] [--against <git ref>] [--stats <file>]";
const HELP = `${USAGE}

Plans a stack offline (no cluster, no credentials) and writes <out>/<stack>/resources.json,
manifests.yaml and patches.yaml, all or none; a failed plan removes the stack's previous plan.

  --stack <name>       the stack file Pulumi.<name>.yaml (required)
  --out <dir>          where the plan goes (default: plan/ in the project)
  --config-dir <dir>   where the stack files are (default: the project)
  --chart <path>       the pinned chart's folder or .tgz (default: ARGO_ROLLOUTS_CHART): its objects,
                       rendered by helm (HELM, or helm on the PATH) with the stack's values, go into
                       manifests.yaml; without it they are not shown
  --kube-version <v>   the Kubernetes version the chart renders for (default: the stack's
                       cluster.kubernetesVersion); without one the chart's objects are not shown
  --crds <dir>|remote  the CRDs up applies, from a folder holding the same files or from their URLs
                       (default: ARGO_ROLLOUTS_CRDS); without it they are not shown
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
    chart?: string;
    kubeVersion?: string;
    crds?: string;
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
    const extra: Pick<PlanArgs, "chart" | "kubeVersion" | "crds"> = {};
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
        } else if (args[i] === "--chart") {
            extra.chart = value(i++);
        } else if (args[i] === "--kube-version") {
            extra.kubeVersion = value(i++);
        } else if (args[i] === "--crds") {
            extra.crds = value(i++);
        } else {
            throw new PlanUsageError(`unknown argument ${args[i]}; ${USAGE}`);
        }
    }
    if (!stack) {
        throw new PlanUsageError(USAGE);
    }
    if (extra.kubeVersion !== undefined && !KUBERNETES_VERSION.test(extra.kubeVersion)) {
        throw new PlanUsageError(`--kube-version ${JSON.stringify(extra.kubeVersion)}: must be a Kubernetes version such as v1.33 or v1.33.4`);
    }
    return { stack, out, configDir, ...(stats ? { stats } : {}), ...(against ? { against } : {}), ...extra };
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
    return {
        planMs: Number(process.hrtime.bigint() - start) / 1e6,
        cpuMs: (cpu.user + cpu.system) / 1000,
        peakRssMiB: process.resourceUsage().maxRSS / 1024,
        resources,
    };
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
    let file: StackFile;
    try {
        file = readStackFile(args.stack, args.configDir);
        run = await planStack(file, args.configDir);
    } catch (e) {
        // No plan of a stack that cannot be planned: the previous one would pass for current.
        removePlan(args.stack, args.out);
        throw e;
    }
    const violations = await checkPlan(run);
    const objects = manifestResources(run);
    const invalid = objects.map((r) => validateObject(r.inputs)).filter((res) => res.problems.length > 0);
    const renderOpts: RenderOptions = {
        chartPath: chartPathFrom(args.chart),
        kubeVersion: args.kubeVersion ?? stackKubernetesVersion(file),
        crds: crdSourceFrom(args.crds),
    };
    const rows = JSON.parse(JSON.stringify(resourceRows(run))) as PlanRow[];
    const rendered = await renderProviderObjects(rows, renderOpts);
    finished = true;
    const extra: Record<string, string> = {};
    let short: string | undefined;
    let diffError: Error | undefined;
    if (args.against) {
        try {
            const base = planAtRef({ repoRoot: REPO_ROOT, ref: args.against, stack: args.stack, configDir: args.configDir });
            const baseRendered = base.existed ? await renderProviderObjects(base.rows, renderOpts) : NOTHING_RENDERED;
            const compared = comparedRendered(rendered, baseRendered, base.existed);
            const diff = diffPlans([...base.rows, ...compared.base], [...rows, ...compared.head]);
            const opts = {
                stack: run.stack,
                against: args.against,
                commit: base.commit,
                fullAt: `diff.md beside the plan (plan/${run.stack}/diff.md; in a pull request, the plan-${run.stack} artifact)`,
            };
            const note =
                (base.existed ? "" : `\nThe stack file Pulumi.${run.stack}.yaml did not exist at \`${args.against}\`: every object is new.\n`) +
                compared.notes.map((n) => `\n${n}\n`).join("");
            extra["diff.md"] = renderFullDiff(diff, opts) + note;
            short = renderShortDiff(diff, opts) + note;
            extra["diff-summary.md"] = short;
        } catch (e) {
            diffError = e instanceof Error ? e : new Error(String(e));
        }
    }
    const dir = writePlan(run, args.out, extra, rendered);
    console.log(summary(run, rendered));
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
