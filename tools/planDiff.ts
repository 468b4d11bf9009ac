/** The review diff of two plans of one stack (`npm run plan -- --against <ref>`): per stage, each object added, removed or changed. */
import * as YAML from "yaml";
import { STAGES } from "../components/stage";
import { crossesHashBoundary } from "../components/rollouts/versions";
import type { ProjectStack } from "../components/config/load";
import { argoGroupsMissing } from "../components/config/project";

/** The fields of a resources.json row the diff reads (tools/plan.ts resourceRows). */
export interface PlanRow {
    urn: string;
    name: string;
    type: string;
    stage: string | null;
    read?: boolean;
    inputs: Record<string, unknown>;
    [option: string]: unknown;
}

/** What a review sees besides the inputs; not `dependsOn`: each resource waits for the earlier stages, so one object would change them all. */
export const DIFFED_OPTIONS = ["protect", "retainOnDelete", "deleteBeforeReplace", "import", "adopts", "provider", "transforms"] as const;

export interface FieldChange {
    /** `spec.rules[0].verbs`, `data["policy.csv"]`; an option as `(option) protect`. */
    path: string;
    change: "added" | "removed" | "changed";
    before?: unknown;
    after?: unknown;
}

export interface ObjectChange {
    action: "added" | "removed" | "changed";
    stage: string | null;
    urn: string;
    /** `ClusterRole argo-rollouts`, `HTTPRoute observability/mimir-spoke-prod-read`. */
    label: string;
    /** For a changed object: each field that differs. For an added one: its inputs; removed: none. */
    fields: FieldChange[];
    after?: Record<string, unknown>;
}

export type PlanDiff = { changes: ObjectChange[]; unchanged: number };

/** A Kubernetes object's `namespace/name`, or its name when it has no namespace. */
export function objectName(o: Record<string, unknown>): string {
    const meta = (o.metadata ?? {}) as { name?: unknown; namespace?: unknown };
    return `${typeof meta.namespace === "string" ? `${meta.namespace}/` : ""}${String(meta.name)}`;
}

/** What a review names an object by: its kind and namespace/name when it is a Kubernetes object. */
export function objectLabel(row: PlanRow): string {
    const inputs = row.inputs ?? {};
    if (row.type === HELM_CHART) {
        return `Chart ${String(inputs.chart)} ${inputs.version === undefined ? "" : `${String(inputs.version)} `}(release ${String(inputs.namespace)}/${String(inputs.name)})`;
    }
    const token = /^kubernetes:[^:]+:([A-Za-z0-9]+)$/.exec(row.type);
    if (token && typeof (inputs.metadata as { name?: unknown } | undefined)?.name === "string") {
        // The chart's and the CRDs' objects say so: the program does not declare them one by one.
        return `${token[1]} ${objectName(inputs)}${typeof row.renderedBy === "string" ? ` (${row.renderedBy})` : ""}`;
    }
    return `${token ? token[1] : row.type} ${row.name}`;
}

const HELM_CHART = "kubernetes:helm.sh/v4:Chart";
const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

const join = (path: string, key: string | number): string =>
    typeof key === "number" ? `${path}[${key}]` : IDENT.test(key) ? (path === "" ? key : `${path}.${key}`) : `${path}[${JSON.stringify(key)}]`;

const isScalar = (v: unknown) => v === null || typeof v !== "object";
const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The fields that differ; a list of scalars is one field, so an item inserted in the middle reads as one change. */
export function fieldChanges(before: unknown, after: unknown, path = ""): FieldChange[] {
    if (isPlainObject(before) && isPlainObject(after)) {
        const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
        return keys.flatMap((k) => {
            const p = join(path, k);
            if (!(k in after)) return [{ path: p, change: "removed" as const, before: before[k] }];
            if (!(k in before)) return [{ path: p, change: "added" as const, after: after[k] }];
            return fieldChanges(before[k], after[k], p);
        });
    }
    if (Array.isArray(before) && Array.isArray(after) && !(before.every(isScalar) && after.every(isScalar))) {
        const out: FieldChange[] = [];
        for (let i = 0; i < Math.max(before.length, after.length); i++) {
            const p = join(path, i);
            if (i >= after.length) out.push({ path: p, change: "removed", before: before[i] });
            else if (i >= before.length) out.push({ path: p, change: "added", after: after[i] });
            else out.push(...fieldChanges(before[i], after[i], p));
        }
        return out;
    }
    return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path, change: "changed", before, after }];
}

/** The diff of two plans of one stack: `base` (the ref reviewed against) to `head`. */
export function diffPlans(base: readonly PlanRow[], head: readonly PlanRow[]): PlanDiff {
    // Reads are objects the stack only checks: nothing is written to them (offline they are placeholders).
    const applied = (rows: readonly PlanRow[]) => new Map(rows.filter((r) => !r.read).map((r) => [r.urn, r]));
    const before = applied(base);
    const after = applied(head);
    const changes: ObjectChange[] = [];
    let unchanged = 0;
    for (const [urn, row] of after) {
        const old = before.get(urn);
        if (!old) {
            changes.push({ action: "added", stage: row.stage, urn, label: objectLabel(row), fields: [], after: row.inputs });
            continue;
        }
        const fields = [
            ...fieldChanges(old.inputs ?? {}, row.inputs ?? {}),
            ...DIFFED_OPTIONS.flatMap((o) => fieldChanges(old[o] ?? null, row[o] ?? null).map((f) => ({ ...f, path: `(option) ${o}${f.path}` }))),
        ];
        if (fields.length === 0) unchanged++;
        else changes.push({ action: "changed", stage: row.stage, urn, label: objectLabel(row), fields });
    }
    for (const [urn, row] of before) {
        if (!after.has(urn)) changes.push({ action: "removed", stage: row.stage, urn, label: objectLabel(row), fields: [] });
    }
    return { changes, unchanged };
}

/** What the stack hands out rather than applies (planFiles.ts productFiles) as rows: each stack output, each tenant component. */
export function productRows(files: Readonly<Record<string, string>>): PlanRow[] {
    const components: Record<string, Record<string, string>> = {};
    for (const [file, text] of Object.entries(files)) {
        const [, id, name] = /^delivery\/(?:([^/]+)\/)?(.+)$/.exec(file) ?? [];
        if (name) (components[id ?? name] ??= {})[name] = text;
    }
    const row = (type: string, name: string, inputs: Record<string, unknown>): PlanRow => ({ urn: `${type}::${name}`, name, type, stage: `${type}s`, inputs });
    const outputs = Object.entries(JSON.parse(files["outputs.json"] ?? "{}") as Record<string, unknown>);
    return [...outputs.map(([k, v]) => row("stack output", k, { [k]: v })), ...Object.entries(components).map(([id, f]) => row("tenant component", id, f))];
}

/** Whom a change of a product row reaches: a tenant component, the next rollout of every tenant that uses it. */
function affects(urn: string): string | undefined {
    const [type, name = ""] = urn.split("::");
    const [tier, cls, shape] = name.split("-");
    const tenants = tier === "prod" ? `every ${cls} prod tenant on ${shape}` : `every ${tier} tenant`;
    const component = name === "README.md" ? "tenant teams choosing a component" : `${tenants}: their next rollout`;
    const readers: Record<string, string> = {
        deliveryStrategies: "tenant tooling that reads it",
        spokeReadEndpoints: "every spoke's analysis, at its next up",
    };
    return type === "stack output" ? (readers[name] ?? "whatever reads the stack's outputs") : type === "tenant component" ? component : undefined;
}

/** The notice of a controller move across the pod-template-hash boundary (components/rollouts/versions.ts), or undefined. */
export function boundaryNotice(base: readonly PlanRow[], head: readonly PlanRow[]): string | undefined {
    const tag = (rows: readonly PlanRow[]) =>
        (rows.find((r) => r.type === HELM_CHART)?.inputs.values as { controller?: { image?: { tag?: unknown } } })?.controller?.image?.tag;
    const [from, to] = [tag(base), tag(head)];
    return typeof from === "string" && typeof to === "string" && crossesHashBoundary(from, to)
        ? `**The controller moves from Argo Rollouts ${from} to ${to}, across the pod-template-hash boundary**: every tenant Rollout counts as getting a new revision on the next \`pulumi up\` (its pods replaced; which ones really do cannot be told offline), and up refuses while one is in flight. Follow docs/operations/upgrade.md.`
        : undefined;
}

/** The notice of a spoke whose regulated groups the ArgoCD that syncs it (argocd.runsOn) did not list at the ref (project.ts argoGroupsMissing), or undefined. */
export function hubChangeNotice(stack: string, base: readonly ProjectStack[] = [], head: readonly ProjectStack[] = []): string | undefined {
    const own = head.find((s) => s.stack === stack);
    const hub = base.find((s) => own?.runsOn !== undefined && s.cluster === own.runsOn);
    const missing = own && hub ? argoGroupsMissing(own, hub).map((m) => `argocd.rbac.${m.key} ${m.groups.join(", ")}`) : [];
    return missing.length > 0
        ? `**This change needs a change of Pulumi.${hub!.stack}.yaml**: the ArgoCD of cluster ${hub!.cluster} syncs this cluster, and its RBAC did not list ${missing.join("; ")} before it. Apply that hub's change first (hubs deploy before spokes), or this cluster's approvers cannot approve through ArgoCD and its deployers are not denied the approval.`
        : undefined;
}

/** The words of a long one-line text that changed, as git's --word-diff writes them (`[-old-]{+new+}`), long unchanged runs cut to their ends. */
export function wordDiff(before: string, after: string, keep = 30): string {
    const [a, b] = [before, after].map((s) => s.split(/(\s+|[^\w\s])/).filter((t) => t !== ""));
    const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0)); // lcs[i][j]: the longest common subsequence of a[i..] and b[j..], its length
    for (let i = a.length - 1; i >= 0; i--)
        for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    const parts: { op: string; text: string }[] = [];
    const push = (op: string, text: string) => (parts.at(-1)?.op === op ? (parts.at(-1)!.text += text) : parts.push({ op, text }));
    for (let i = 0, j = 0; i < a.length || j < b.length;) {
        const same = i < a.length && j < b.length && a[i] === b[j];
        const [op, text] = same ? ["=", a[i++], j++] : i < a.length && (j === b.length || lcs[i + 1][j] >= lcs[i][j + 1]) ? ["-", a[i++]] : ["+", b[j++]];
        push(op as string, text as string);
    }
    const cut = (t: string, k: number) => (t.length <= 2 * keep ? t : `${k === 0 ? "" : t.slice(0, keep)}…${k === parts.length - 1 ? "" : t.slice(-keep)}`);
    return parts.map((p, k) => (p.op === "-" ? `[-${p.text}-]` : p.op === "+" ? `{+${p.text}+}` : cut(p.text, k))).join("");
}

/** The lines one text has that the other has not: removed (`-`) then added (`+`), as a policy's or a config's lines read. */
export function lineDiff(before: string, after: string): string[] {
    const [a, b] = [before.split("\n"), after.split("\n")];
    return [...a.filter((l) => !b.includes(l)).map((l) => `- ${l}`), ...b.filter((l) => !a.includes(l)).map((l) => `+ ${l}`)];
}

const SYMBOL = { added: "+", removed: "-", changed: "~" } as const;
const stageOrder = (stage: string | null): number => (stage === null ? -1 : (STAGES as readonly string[]).indexOf(stage));

export function diffCounts(diff: PlanDiff): string {
    const n = (a: ObjectChange["action"]) => diff.changes.filter((c) => c.action === a).length;
    return `${n("added")} added, ${n("removed")} removed, ${n("changed")} changed, ${diff.unchanged} unchanged`;
}

function byStage(diff: PlanDiff): [string, ObjectChange[]][] {
    const stages = [...new Set(diff.changes.map((c) => c.stage))].sort((x, y) => stageOrder(x) - stageOrder(y));
    return stages.map((s) => [s ?? "(stack)", diff.changes.filter((c) => c.stage === s)]);
}

/** A changed text: of several lines (a policy, a config file), the lines it lost and gained; one long line (a PromQL query), its word diff. */
function textDiff(f: FieldChange): { lines?: string[]; words?: string } {
    const [a, b] = [f.before, f.after];
    if (f.change !== "changed" || typeof a !== "string" || typeof b !== "string") return {};
    if (a.includes("\n") || b.includes("\n")) return { lines: lineDiff(a, b) };
    return Math.max(a.length, b.length) > 80 ? { words: wordDiff(a, b).replace(/`/g, "'") } : {};
}

const title = (c: ObjectChange) => `${SYMBOL[c.action]} ${c.action} \`${c.label}\`${affects(c.urn) ? ` (${affects(c.urn)})` : ""}`;

function fieldLines(f: FieldChange): string[] {
    const { lines, words } = textDiff(f);
    if (lines) return [`  - \`${f.path}\` changed:`, "", "    ```diff", ...lines.map((l) => `    ${l}`), "    ```", ""];
    const inline = (v: unknown) => JSON.stringify(v) ?? "undefined";
    const text = {
        added: `added ${inline(f.after)}`,
        removed: `removed (was ${inline(f.before)})`,
        changed: words ? `changed: \`${words}\`` : `${inline(f.before)} → ${inline(f.after)}`,
    }[f.change];
    return [`  - \`${f.path}\` ${text}`];
}

export interface RenderOptions {
    stack: string;
    /** The ref the head is compared with, as given (`main`, `origin/main`). */
    against: string;
    commit?: string;
    /** Where the complete diff is, for the short one to point to. */
    fullAt?: string;
    notices?: string[]; // what a reviewer must read before the objects (boundaryNotice)
}

function heading(diff: PlanDiff, o: RenderOptions): string[] {
    const ref = o.commit ? `\`${o.against}\` (${o.commit.slice(0, 12)})` : `\`${o.against}\``;
    return [
        `### Offline plan of stack \`${o.stack}\` against ${ref}`,
        "",
        diffCounts(diff) + (diff.changes.length === 0 ? ": the change declares nothing new on this cluster." : "."),
        ...(o.notices ?? []).flatMap((n) => ["", n]),
    ];
}

/** The complete diff: every object, every field with its old and new value, added objects whole. */
export function renderFullDiff(diff: PlanDiff, o: RenderOptions): string {
    const yaml = (v: unknown) => YAML.stringify(v, { lineWidth: 0 }).trimEnd().replace(/^/gm, "  ").split("\n");
    const lines = byStage(diff).flatMap(([stage, changes]) => [
        "",
        `#### ${stage}`,
        "",
        ...changes.flatMap((c) => [
            `- ${title(c)}`,
            ...(c.action === "added" && c.after ? ["", "  ```yaml", ...yaml(c.after), "  ```", ""] : []),
            ...c.fields.flatMap(fieldLines),
        ]),
    ]);
    return [...heading(diff, o), ...lines].join("\n").replace(/\n{3,}/g, "\n\n") + "\n";
}

/** What the short diff says beside a path: added or removed, or the lines a text lost and gained. */
function fieldNote(f: FieldChange): string {
    const { lines, words } = textDiff(f);
    const count = (sign: string) => lines?.filter((l) => l.startsWith(sign)).length;
    return f.change !== "changed" ? ` (${f.change})` : lines ? ` (${count("-")} lines removed, ${count("+")} added)` : words ? `: \`${words}\`` : "";
}

/** How many objects, and field paths per object, are listed before the rest are counted. */
export type ShortLimits = { objects: number; fields: number };

/** GitHub refuses a comment over 65536 characters; the short diff stays far below. */
export const SHORT_LIMITS: ShortLimits = { objects: 60, fields: 8 };

/** The short diff for a pull-request comment: each object with its changed paths, cut at `limits` with a count of the rest. */
export function renderShortDiff(diff: PlanDiff, o: RenderOptions, limits: ShortLimits = SHORT_LIMITS): string {
    const ordered = byStage(diff).flatMap(([, changes]) => changes);
    const listed = new Set(ordered.slice(0, limits.objects));
    const line = (c: ObjectChange) => {
        const paths = c.fields.slice(0, limits.fields).map((f) => `\`${f.path}\`${fieldNote(f)}`);
        const more = c.fields.length > limits.fields ? ` and ${c.fields.length - limits.fields} more` : "";
        return `- ${title(c)}${paths.length > 0 ? `: ${paths.join(", ")}${more}` : ""}`;
    };
    const shown = byStage(diff).flatMap(([stage, changes]) => {
        const here = changes.filter((c) => listed.has(c));
        return here.length > 0 ? ["", `**${stage}**`, "", ...here.map(line)] : [];
    });
    const left = diff.changes.length - listed.size;
    const cut = left > 0 || diff.changes.some((c) => c.fields.length > limits.fields) ? ", and what is not listed here," : "";
    return (
        [
            ...heading(diff, o),
            ...shown,
            ...(left > 0 ? ["", `… and ${left} more object${left === 1 ? "" : "s"} not listed here.`] : []),
            ...(diff.changes.length > 0 ? ["", `Every field with its old and new value${cut}: ${o.fullAt ?? "diff.md beside the plan"}.`] : []),
        ].join("\n") + "\n"
    );
}
