/** What the provider renders and the mocks never see: each Chart's objects and each ConfigGroup's CRDs, as rows the review diff compares. */
import { PlanRow, objectName } from "./planDiff";
import { ChartOptions, ChartRender, HELM_CHART, chartRelease, renderChart } from "./chartRender";
import { CONFIG_GROUP, CrdRead, CrdSourceSpec, readCrdFiles } from "./crdSources";

export type ProviderRendered = { charts: { row: PlanRow; render: ChartRender }[]; crds: { row: PlanRow; read: CrdRead }[] };

export type RenderOptions = ChartOptions & { crds?: CrdSourceSpec };

export const NOTHING_RENDERED: ProviderRendered = { charts: [], crds: [] };

export async function renderProviderObjects(rows: readonly PlanRow[], opts: RenderOptions): Promise<ProviderRendered> {
    const charts = rows.filter((r) => r.type === HELM_CHART).map((row) => ({ row, render: renderChart(chartRelease(row.inputs), opts) }));
    const groups = rows.filter((r) => r.type === CONFIG_GROUP);
    const reads = await Promise.all(groups.map((row) => readCrdFiles(Array.isArray(row.inputs.files) ? (row.inputs.files as string[]) : [], opts.crds)));
    return { charts, crds: groups.map((row, i) => ({ row, read: reads[i] })) };
}

/** Why a chart or the CRDs asked for (a chart flag, a CRD source) cannot be shown: what a user asks for is shown or refused. */
export function unhonoured(r: ProviderRendered, opts: RenderOptions): string[] {
    const charts = opts.chartPath || opts.charts ? r.charts.map((c) => c.render) : [];
    return [...charts, ...(opts.crds ? r.crds.map((c) => c.read) : [])].flatMap((x) => ("notShown" in x ? [x.notShown] : []));
}

/** The rendered objects as resources.json-like rows under the component that renders them, marked as the chart's or the CRDs'. */
export function renderedRows(r: ProviderRendered): PlanRow[] {
    const row = (parent: PlanRow, object: Record<string, unknown>, renderedBy: string, source: string | undefined): PlanRow => {
        const apiVersion = String(object.apiVersion);
        const type = `kubernetes:${apiVersion.includes("/") ? apiVersion : `core/${apiVersion}`}:${String(object.kind)}`;
        const name = objectName(object);
        return {
            urn: `${parent.urn}$${type}::${name}`,
            name,
            type,
            stage: parent.stage,
            parent: parent.urn,
            renderedBy,
            source: source ?? null,
            inputs: object,
        };
    };
    return [
        ...r.crds.flatMap((c) => ("objects" in c.read ? c.read.objects.map((o) => row(c.row, o.object, "CRDs", o.source)) : [])),
        ...r.charts.flatMap((c) => ("objects" in c.render ? c.render.objects.map((o) => row(c.row, o.object, "chart", o.source)) : [])),
    ];
}

/** The rendered objects the diff compares: each kind only when both sides show it (a chart given renders one version); else a note. */
export function comparedRendered(head: ProviderRendered, base: ProviderRendered, baseExisted: boolean): { head: PlanRow[]; base: PlanRow[]; notes: string[] } {
    if (!baseExisted) return { head: renderedRows(head), base: [], notes: [] };
    const notShown = (r: ProviderRendered, kind: "charts" | "crds") =>
        (kind === "charts" ? r.charts.map((c) => c.render) : r.crds.map((c) => c.read)).flatMap((x) => ("notShown" in x ? [x.notShown] : [])).join("; ");
    const compared = (kind: "charts" | "crds") => [head, base].every((r) => r[kind].length > 0 && !notShown(r, kind));
    const notes = (["charts", "crds"] as const)
        .filter((kind) => !compared(kind))
        .map((kind) => {
            const why = [notShown(head, kind) && `here, ${notShown(head, kind)}`, notShown(base, kind) && `at the ref, ${notShown(base, kind)}`]
                .filter(Boolean)
                .join("; ");
            return `${kind === "charts" ? "The chart's objects are" : "The CRDs are"} not compared: ${why || "one side has none"}.`;
        });
    const pick = (r: ProviderRendered): ProviderRendered => ({ charts: compared("charts") ? r.charts : [], crds: compared("crds") ? r.crds : [] });
    return { head: renderedRows(pick(head)), base: renderedRows(pick(base)), notes };
}
