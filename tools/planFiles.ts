/** What the offline plan writes for a stack (resources.json, manifests.yaml, patches.yaml) and the summary it prints. */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { STAGES } from "../components/stage";
import { OfflineRun, PlannedResource, kubernetesGvk } from "./offline";
import { HELM_CHART } from "./chartRender";
import { CONFIG_GROUP } from "./crdSources";
import { NOTHING_RENDERED, ProviderRendered } from "./planRendered";
import { objectName } from "./planDiff";
import { ROLLOUTS_CRDS } from "../components/argoRollouts";
import { removeWritten, stackFlag } from "./cli";
import { stackStrategies } from "../components/delivery/config";
import { renderComponents } from "../components/delivery/kustomize";
import type { AddonConfig } from "../stacks/config";

/** Kubernetes types that are not whole objects: patches, and components rendered by the provider. */
const NOT_MANIFESTS = /(Patch$)|(^kubernetes:helm\.sh\/)|(^kubernetes:yaml\/)|(^kubernetes:kustomize\/)/;

/** Whether a provider creates with server-side apply over existing objects (`upsertExistingObjects`). */
function upserts(provider: PlannedResource | undefined): boolean {
    return provider?.inputs.upsertExistingObjects === "true" || provider?.inputs.upsertExistingObjects === true;
}

/** What a resource takes over if it exists: whatever a provider with `upsertExistingObjects` applies (a CRD group its CRDs, a chart its objects). */
export function adoptedBy(r: PlannedResource, byUrn: Map<string, PlannedResource>): string[] | undefined {
    const providerUrn = r.provider ?? r.providers.kubernetes ?? null;
    if (r.read || !providerUrn || !upserts(byUrn.get(providerUrn))) return undefined;
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
    if (!r.custom || !gvk || NOT_MANIFESTS.test(r.type)) return undefined;
    const meta = (r.inputs.metadata ?? {}) as { name?: string; namespace?: string };
    return [`${gvk.kind} ${meta.namespace ? `${meta.namespace}/` : ""}${meta.name ?? r.name}`];
}

export function adoptions(run: OfflineRun): { resource: PlannedResource; objects: string[] }[] {
    const byUrn = new Map(run.resources.map((r) => [r.urn, r]));
    return run.resources.flatMap((r) => {
        const objects = adoptedBy(r, byUrn);
        return objects ? [{ resource: r, objects }] : [];
    });
}

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

/** Whole Kubernetes objects the stack declares (not reads, patches or charts), or with `patches` its patches, dependencies first. */
export function manifestResources(run: OfflineRun, patches = false): PlannedResource[] {
    const objects = run.resources.filter(
        (r) => r.custom && !r.read && kubernetesGvk(r.type) && (patches ? /Patch$/.test(r.type) : !NOT_MANIFESTS.test(r.type)),
    );
    return topologicalOrder(objects, run.resources);
}

/** Orders `subset` so each resource comes after everything it (transitively) depends on. */
function topologicalOrder(subset: PlannedResource[], all: PlannedResource[]): PlannedResource[] {
    const byUrn = new Map(all.map((r) => [r.urn, r]));
    const wanted = new Set(subset.map((r) => r.urn));
    const done = new Set<string>();
    const out: PlannedResource[] = [];
    const visit = (urn: string, path: Set<string>) => {
        if (done.has(urn) || path.has(urn)) return;
        path.add(urn);
        for (const dep of byUrn.get(urn)?.dependsOn ?? []) {
            visit(dep, path);
        }
        path.delete(urn);
        done.add(urn);
        if (wanted.has(urn)) out.push(byUrn.get(urn)!);
    };
    for (const r of subset) {
        visit(r.urn, new Set());
    }
    return out;
}

function document(object: Record<string, unknown>, comment: string): string {
    const { apiVersion, kind, ...rest } = object;
    const doc = new YAML.Document({ apiVersion, kind, ...rest });
    doc.commentBefore = comment;
    return doc.toString({ lineWidth: 0 });
}

/** manifests.yaml: every whole object `up` applies, each under a comment naming its owner; the first comment says what is not shown. */
export function manifestsYaml(run: OfflineRun, rendered: ProviderRendered = NOTHING_RENDERED): string {
    const stage = (row: { stage: string | null }) => `stage ${row.stage ?? "none"}`;
    const named = (o: Record<string, unknown>) => `${String(o.kind)} ${objectName(o)}`;
    const crds = rendered.crds.flatMap((c) =>
        "objects" in c.read
            ? c.read.objects.map((o) => document(o.object, ` CRDs: ${named(o.object)}, of ConfigGroup ${c.row.name} (${stage(c.row)}), from ${o.source}`))
            : [],
    );
    const program = manifestResources(run).map((r) =>
        document(r.inputs, ` program: ${kubernetesGvk(r.type)!.kind} ${objectName(r.inputs)}, resource ${r.name} (${stage(r)})`),
    );
    const charts = rendered.charts.flatMap((c) => {
        if (!("objects" in c.render)) return [];
        const owner = `chart ${c.render.chart.name} ${c.render.chart.version} release ${String(c.row.inputs.namespace)}/${String(c.row.inputs.name)} (resource ${c.row.name}, ${stage(c.row)})`;
        return c.render.objects.map((o) => document(o.object, ` chart: ${named(o.object)}, ${owner}${o.source ? `, ${o.source}` : ""}`));
    });
    const has = (type: string) => run.resources.some((r) => r.type === type);
    const header = [
        ` stack ${run.stack}: what up applies as whole objects: the CRDs, the program's own objects, the chart's`,
        ...rendered.crds.flatMap((c) => ("notShown" in c.read ? [` CRDs of ${c.row.name}: not shown; ${c.read.notShown}`] : [])),
        ...rendered.charts.flatMap((c) => ("notShown" in c.render ? [` chart objects of ${c.row.name}: not shown; ${c.render.notShown}`] : [])),
        ...(rendered.charts.length === 0 && has(HELM_CHART)
            ? [" chart objects: not shown; plan with --chart <path> (or ARGO_ROLLOUTS_CHART) to show them"]
            : []),
        ...(rendered.crds.length === 0 && has(CONFIG_GROUP) ? [" CRDs: not shown; plan with --crds <dir>|remote (or ARGO_ROLLOUTS_CRDS) to show them"] : []),
    ];
    return header.map((l) => `#${l}\n`).join("") + [...crds, ...program, ...charts].join("---\n");
}

/** patches.yaml: the fields each patch writes, the only ones server-side apply sets; the object's other fields stay its owner's. */
export function patchesYaml(run: OfflineRun): string {
    const patches = manifestResources(run, true);
    if (patches.length === 0) return `# stack ${run.stack}: no patches; this stack writes no field of an object another owner keeps.\n`;
    const comment = (r: PlannedResource) =>
        ` ${kubernetesGvk(r.type)!.kind} of ${String(r.inputs.kind)} ${objectName(r.inputs)} (stage ${r.stage ?? "none"}, resource ${r.name}): server-side apply of these fields only`;
    return patches
        .map((r) => {
            const { apiVersion, kind, metadata, ...rest } = r.inputs;
            return document({ apiVersion, kind, metadata, ...rest }, comment(r));
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
    const adopted = adoptions(run).flatMap((a) => a.objects);
    // stacks/preflight.ts: the offline plan has no cluster to read.
    lines.push(
        ...(adopted.length === 0
            ? [
                  "  adopting: nothing (cluster.adoptExisting is false: a create of an existing object fails)",
                  "  existing objects: not checked here; pulumi preview and up read every object above against the cluster first and refuse another tool's (needs a cluster)",
              ]
            : [
                  `  adopting: ${adopted.length} objects, each taken over if it exists (cluster.adoptExisting: the provider's upsertExistingObjects, and pulumi.com/patchForce on each whole object; the provider's enablePatchForce stays false):`,
                  ...adopted.map((o) => `    ${o}`),
              ]),
    );
    // The mock runtime never sees a chart's or a CRD group's children: the provider renders them at deploy time.
    const preview = "pulumi preview lists them (needs a cluster)";
    for (const chart of run.resources.filter((r) => r.type === HELM_CHART)) {
        const render = rendered.charts.find((c) => c.row.urn === chart.urn)?.render;
        const release = `${String(chart.inputs.namespace)}/${String(chart.inputs.name)}`;
        lines.push(
            render && "objects" in render
                ? `  chart objects: ${render.objects.length} in manifests.yaml, chart ${render.chart.name} ${render.chart.version} rendered by helm for release ${release} with the values in resources.json (${chart.name}), as the provider renders it`
                : `  chart objects: not shown; ${render?.notShown ?? "plan with --chart <path> (or ARGO_ROLLOUTS_CHART) and a Kubernetes version to show them"}; ${preview}`,
        );
    }
    for (const group of run.resources.filter((r) => r.type === CONFIG_GROUP)) {
        const files = Array.isArray(group.inputs.files) ? group.inputs.files.length : 0;
        const read = rendered.crds.find((c) => c.row.urn === group.urn)?.read;
        const why = read && "notShown" in read ? read.notShown : "plan with --crds <dir>|remote (or ARGO_ROLLOUTS_CRDS) to show them";
        lines.push(
            read && "objects" in read
                ? `  CRD objects: ${read.objects.length} in manifests.yaml, from the ${files} file(s) of ${group.name}`
                : `  CRD objects: not shown; the provider reads the ${files} file(s) of ${group.name} (resources.json) at deploy time: ${why}; ${preview}`,
        );
    }
    lines.push(
        "  controller release: not checked here; pulumi preview and up read the running controller first (a stack file naming no release keeps the line the cluster runs; a move across the pod-template-hash boundary needs controller.acknowledgeNewRevisions) (needs a cluster)",
    );
    return lines.join("\n");
}

/** What the stack hands out rather than applies: its outputs (outputs.json) and the tenant components `npm run delivery` writes (delivery/). */
export function productFiles(run: OfflineRun, config: AddonConfig): Record<string, string> {
    const components = Object.entries(renderComponents(run.stack, stackStrategies(config)));
    return { "outputs.json": JSON.stringify(run.outputs, null, 2) + "\n", ...Object.fromEntries(components.map(([f, text]) => [`delivery/${f}`, text])) };
}

/** Writes the plan's files under `<outDir>/<stack>/`, all or none: a new folder swapped in by renames, never a mix of two plans. */
export function writePlan(run: OfflineRun, outDir: string, extra: Record<string, string> = {}, rendered: ProviderRendered = NOTHING_RENDERED): string {
    const dir = path.join(outDir, stackFlag(run.stack));
    const others = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => !PLAN_FILES.includes(f)) : [];
    if (others.length > 0) throw new Error(`stack "${run.stack}": ${dir} holds ${others.join(", ")}, which no plan writes: give another --out`);
    fs.mkdirSync(outDir, { recursive: true });
    const staging = fs.mkdtempSync(path.join(outDir, `.${run.stack}.new-`));
    try {
        fs.writeFileSync(path.join(staging, "resources.json"), JSON.stringify(resourceRows(run), null, 2) + "\n");
        fs.writeFileSync(path.join(staging, "manifests.yaml"), manifestsYaml(run, rendered));
        fs.writeFileSync(path.join(staging, "patches.yaml"), patchesYaml(run));
        for (const [name, text] of Object.entries(extra)) {
            fs.mkdirSync(path.dirname(path.join(staging, name)), { recursive: true });
            fs.writeFileSync(path.join(staging, name), text);
        }
        const previous = fs.existsSync(dir) ? `${staging}.old` : undefined;
        if (previous) fs.renameSync(dir, previous);
        fs.renameSync(staging, dir);
        if (previous) fs.rmSync(previous, { recursive: true, force: true });
    } catch (e) {
        fs.rmSync(staging, { recursive: true, force: true });
        throw e;
    }
    return dir;
}

/** Every file a plan writes into `<out>/<stack>/`. */
const PLAN_FILES = ["resources.json", "manifests.yaml", "patches.yaml", "outputs.json", "delivery", "diff.md", "diff-summary.md"];

/** Removes the plan of a stack, so a failed plan never leaves the previous one looking current: its files only, never another folder. */
export function removePlan(stack: string, outDir: string): void {
    const dir = path.join(outDir, stackFlag(stack));
    fs.rmSync(path.join(dir, "delivery"), { recursive: true, force: true });
    removeWritten(dir, (f) => PLAN_FILES.includes(path.basename(f)));
}
