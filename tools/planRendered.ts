/**
 * What the provider renders of the stack's components, which the mock runtime never sees: each
 * Chart row's objects (tools/chartRender.ts) and each ConfigGroup row's CRDs (tools/crdSources.ts),
 * as rows the review diff compares like the program's own.
 */
import { PlanRow } from "./planDiff";
import { ChartRender, HELM_CHART, chartRelease, renderChart } from "./chartRender";
import { CONFIG_GROUP, CrdRead, CrdSourceSpec, readCrdFiles } from "./crdSources";

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

export function objectName(o: Record<string, unknown>): string {
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
