/**
 * Turns a stack's drift check into the text of its drift issue (.github/workflows/drift.yml):
 * `pulumi preview --refresh --expect-no-changes --json` and `npm run verify -- --json`.
 *
 *   npm run --silent drift-report -- --stack hub --preview preview-hub.json --verify verify-hub.json
 *                                    [--preview-exit <code>] [--run-url <url>] [--out drift-hub.md]
 *
 * The preview's JSON is the CLI's preview digest (pulumi/pulumi pkg/display/json.go v3.248.0,
 * `PreviewDigest`, `PreviewStep`, `PropertyDiff`; written by ShowPreviewDigest in
 * pkg/backend/display/json.go v3.248.0). With `--refresh` the engine first refreshes every
 * resource of the state (op `refresh`) and rebuilds the base state from what it read
 * (pkg/resource/deploy/deployment_executor.go v3.248.0, `refresh`, `rebuildBaseState`), then
 * diffs the refreshed state against the program: a step other than `same` is what the next `up`
 * would change back. Its `oldState.outputs` is the refreshed live object, `metadata.managedFields`
 * included, with the program's own manager as `__fieldManager` (pulumi/pulumi-kubernetes
 * provider/pkg/provider/provider.go v4.32.0, `checkpointObject`); its `detailedDiff` keys are the
 * provider's property paths (`spec.template.spec.containers[0].args[2]`, `data["policy.csv"]`,
 * same file, `addPatchValueToDiff`).
 *
 * Exit status: 0 no drift and verify passed, 1 drift, a failed check or a preview that did not
 * finish (the report is written all the same), 2 usage.
 */
import * as fs from "fs";
import { UsageError, argsOrExit, readFlags } from "./cli";

/** `PropertyDiff` of the preview digest. */
export interface PropertyDiff {
    kind: string;
    inputDiff?: boolean;
}

/** `apitype.ResourceV3` as the digest serializes it: only what the report reads. */
export interface ResourceState {
    urn?: string;
    type?: string;
    inputs?: Record<string, unknown>;
    outputs?: Record<string, unknown>;
}

/** `PreviewStep` of the preview digest. */
export interface PreviewStep {
    op: string;
    urn: string;
    provider?: string;
    oldState?: ResourceState;
    newState?: ResourceState;
    diffReasons?: string[];
    replaceReasons?: string[];
    detailedDiff?: Record<string, PropertyDiff> | null;
}

/** `PreviewDigest`: the document `pulumi preview --json` prints. */
export interface PreviewDigest {
    steps?: PreviewStep[];
    diagnostics?: { urn?: string; message?: string; severity?: string }[];
    changeSummary?: Record<string, number>;
}

/** One entry of a live object's `metadata.managedFields`. */
export interface ManagedFieldsEntry {
    manager?: string;
    operation?: string;
    time?: string;
    subresource?: string;
    fieldsV1?: Record<string, unknown>;
}

/** verify's `--json` document (tools/verify/report.ts), or its error form. */
export interface VerifyJson {
    stack?: string;
    error?: string;
    results?: { id: string; status: string; what: string; findings?: { object: string; found: string }[]; note?: string; readme?: string }[];
}

export interface FieldDrift {
    /** The provider's property path. */
    path: string;
    /** add, update, delete (and their -replace forms): what the next `up` would do to the field. */
    kind: string;
    live?: string;
    declared?: string;
    /** Managers other than the program that own the field on the live object. */
    managers: ManagedFieldsEntry[];
}

export interface DriftedObject {
    op: string;
    urn: string;
    /** `Kind namespace/name` of the live object, or the URN's type and name. */
    object: string;
    fields: FieldDrift[];
}

/** Steps that change nothing on the cluster: the refresh itself, reads, and steps with no change. */
const QUIET_OPS = new Set(["same", "refresh", "read", "read-discard", "discard-replaced"]);

/** Splits `a.b[0]["x.y"]` into `["a", "b", 0, "x.y"]` (the provider's path syntax). */
export function parsePropertyPath(path: string): (string | number)[] {
    const out: (string | number)[] = [];
    const re = /\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]|\.?([^.[\]]+)/g;
    let m: RegExpExecArray | null;
    while ((m = re.exec(path)) !== null) {
        if (m[1] !== undefined) {
            out.push(m[1].replace(/\\"/g, '"'));
        } else if (m[2] !== undefined) {
            out.push(Number(m[2]));
        } else {
            out.push(m[3]);
        }
    }
    return out;
}

function at(value: unknown, path: readonly (string | number)[]): unknown {
    let v = value;
    for (const p of path) {
        if (v === null || typeof v !== "object") {
            return undefined;
        }
        v = (v as Record<string | number, unknown>)[p];
    }
    return v;
}

/** Whether a `k:{...}` key of fieldsV1 names this list element (every key field equal). */
function keyMatches(key: string, element: unknown): boolean {
    try {
        const fields = JSON.parse(key.slice(2)) as Record<string, unknown>;
        return (
            element !== null &&
            typeof element === "object" &&
            Object.entries(fields).every(([k, v]) => JSON.stringify((element as Record<string, unknown>)[k]) === JSON.stringify(v))
        );
    } catch {
        return false;
    }
}

/**
 * Whether a managedFields entry's `fieldsV1` owns the field at `path` of the live object: the
 * fieldset reaches the path, or a leaf on the way (an atomic value, such as a list of args).
 * Fieldset keys (kubernetes-sigs/structured-merge-diff fieldpath/serialize-pe.go v4): `f:<name>`
 * a field, `k:<json>` a list element by its keys, `v:<json>` a set element by value, `i:<n>` by index.
 */
export function ownsPath(fields: Record<string, unknown> | undefined, live: unknown, path: readonly (string | number)[]): boolean {
    let node: unknown = fields;
    for (let i = 0; i < path.length; i++) {
        if (node === null || typeof node !== "object") {
            return false;
        }
        const set = node as Record<string, unknown>;
        if (Object.keys(set).length === 0 && i > 0) {
            return true;
        }
        const p = path[i];
        let next: unknown;
        if (typeof p === "string") {
            next = set[`f:${p}`];
        } else {
            const element = at(live, [...path.slice(0, i), p]);
            const key = Object.keys(set).find((k) => (k.startsWith("k:") && keyMatches(k, element)) || k === `v:${JSON.stringify(element)}` || k === `i:${p}`);
            next = key === undefined ? undefined : set[key];
        }
        if (next === undefined) {
            return false;
        }
        node = next;
    }
    return true;
}

/** The managers other than the program's own that own the field (the live object's managedFields). */
export function managersOf(live: Record<string, unknown> | undefined, path: readonly (string | number)[]): ManagedFieldsEntry[] {
    const own = typeof live?.__fieldManager === "string" ? live.__fieldManager : undefined;
    const entries = at(live, ["metadata", "managedFields"]);
    if (!Array.isArray(entries)) {
        return [];
    }
    return (entries as ManagedFieldsEntry[]).filter((e) => e.manager !== own && ownsPath(e.fieldsV1, live, path));
}

function show(v: unknown): string | undefined {
    if (v === undefined) {
        return undefined;
    }
    const s = typeof v === "string" ? v : JSON.stringify(v);
    const line = s.replace(/\s*\n\s*/g, " ⏎ ");
    return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}

/** Two texts of several lines (a ConfigMap's policy, a config file): only the lines each has that the other has not. */
export function changedLines(live: unknown, declared: unknown): [unknown, unknown] {
    if (typeof live !== "string" || typeof declared !== "string" || !(live.includes("\n") || declared.includes("\n"))) {
        return [live, declared];
    }
    const a = live.split("\n").filter((l) => l.trim() !== "");
    const b = declared.split("\n").filter((l) => l.trim() !== "");
    return [a.filter((l) => !b.includes(l)).join("\n"), b.filter((l) => !a.includes(l)).join("\n")];
}

function objectName(step: PreviewStep): string {
    const live = step.oldState?.outputs ?? step.newState?.outputs ?? step.newState?.inputs;
    const kind = at(live, ["kind"]);
    const name = at(live, ["metadata", "name"]);
    const ns = at(live, ["metadata", "namespace"]);
    if (typeof kind === "string" && typeof name === "string") {
        return `${kind} ${typeof ns === "string" && ns !== "" ? `${ns}/` : ""}${name}`;
    }
    const parts = step.urn.split("::");
    const type = (parts[2] ?? "").split("$").pop();
    return `${type} ${parts[3] ?? step.urn}`;
}

/** Every object the next `up` would change, with its fields, values and other managers. */
export function driftedObjects(digest: PreviewDigest): DriftedObject[] {
    const out: DriftedObject[] = [];
    for (const step of digest.steps ?? []) {
        if (QUIET_OPS.has(step.op) || step.urn.includes("::pulumi:pulumi:Stack::")) {
            continue;
        }
        const live = step.oldState?.outputs;
        const declared = step.newState?.inputs;
        // A Secret's values never reach the issue, whether or not the state marks them secret
        // (the digest already prints marked ones as "[secret]", pkg/backend/display/json.go v3.248.0).
        const secret = at(live ?? declared, ["kind"]) === "Secret";
        const paths = step.detailedDiff ? Object.keys(step.detailedDiff) : [...(step.diffReasons ?? [])];
        const fields = paths.sort().map((p): FieldDrift => {
            const path = parsePropertyPath(p);
            const [was, want] = changedLines(at(live, path), at(declared, path));
            const hide = (v: unknown) => (secret && v !== undefined ? "[secret]" : show(v));
            return { path: p, kind: step.detailedDiff?.[p]?.kind ?? "update", live: hide(was), declared: hide(want), managers: managersOf(live, path) };
        });
        out.push({ op: step.op, urn: step.urn, object: objectName(step), fields });
    }
    return out;
}

/** Who a field manager is, and what to do about it: the platform's known writers by their manager names. */
export function managerAdvice(manager: string): string {
    if (manager === "helm" || manager.startsWith("helm-")) {
        return "an old Helm release of the chart is still upgraded (a person, a CI job or an operator running `helm upgrade`): stop it; the program owns the release's objects (docs/operations/adopt.md)";
    }
    if (manager === "argocd-server") {
        return "a person changed it through the ArgoCD UI or CLI: make the change in the stack file instead, or it is reverted at the next `up`";
    }
    if (manager.startsWith("argocd")) {
        return "ArgoCD syncs an Application that also holds this object: take the object out of that Application, or add the field to its ignoreDifferences";
    }
    if (manager === "kyverno" || manager.startsWith("kyverno-")) {
        return "a Kyverno mutate policy rewrites it: exclude the object from that policy, or declare the mutated value in the stack file";
    }
    if (manager.startsWith("kubectl")) {
        return "a person with kubectl: make the change in the stack file instead, or it is reverted at the next `up`";
    }
    if (manager.startsWith("pulumi-kubernetes")) {
        return "another Pulumi program or stack applies the same object: one of them must give it up";
    }
    return "another writer: find it by this name and make one owner of the field";
}

function managerCell(managers: readonly ManagedFieldsEntry[]): string {
    if (managers.length === 0) {
        return "none recorded";
    }
    return managers.map((m) => `\`${m.manager ?? "?"}\` (${[m.operation, m.subresource, m.time].filter(Boolean).join(", ")})`).join(", ");
}

const cell = (s: string | undefined) => (s === undefined ? "absent" : `\`${s.replace(/\|/g, "\\|").replace(/`/g, "'")}\``);

/** The hidden first line that marks a stack's drift issue, so the next run finds and edits it. */
export function issueMarker(stack: string): string {
    return `<!-- argo-rollouts-addon drift: stack ${stack} -->`;
}

/** The hidden line saying whether the report is clean, read by the issue step. */
export const CLEAN_MARK = "<!-- drift: clean -->";

export interface DriftInput {
    stack: string;
    /** The digest, or why there is none (the preview did not run or printed no JSON). */
    preview: PreviewDigest | { error: string };
    /** The preview's exit status, when known: with --expect-no-changes, non-zero on any change or error. */
    previewExit?: number;
    verify: VerifyJson;
    runUrl?: string;
}

export interface DriftReport {
    clean: boolean;
    objects: DriftedObject[];
    markdown: string;
}

/** The issue's text for one stack's drift check: drifted objects, their fields and writers, verify's failures. */
export function driftReport(input: DriftInput): DriftReport {
    const lines: string[] = [issueMarker(input.stack)];
    const previewError = "error" in input.preview && typeof input.preview.error === "string" ? input.preview.error : undefined;
    const digest = previewError === undefined ? (input.preview as PreviewDigest) : {};
    const objects = driftedObjects(digest);
    const errors = (digest.diagnostics ?? []).filter((d) => d.severity === "error");
    const verify = input.verify;
    const fails = (verify.results ?? []).filter((r) => r.status === "FAIL");
    const previewFailed =
        previewError !== undefined || errors.length > 0 || (objects.length === 0 && input.previewExit !== undefined && input.previewExit !== 0);
    const clean = objects.length === 0 && !previewFailed && fails.length === 0 && verify.error === undefined;
    if (clean) {
        lines.push(CLEAN_MARK);
    }
    lines.push(`## Drift on stack \`${input.stack}\``, "");
    if (clean) {
        lines.push("No drift: the refreshed preview proposes no change and every verify check passed or was skipped.", "");
    } else {
        const counts = [`${objects.length} drifted object${objects.length === 1 ? "" : "s"}`, `${fails.length} verify FAIL`];
        if (previewFailed) {
            counts.push("the preview did not finish");
        }
        lines.push(`${counts.join(", ")}. The next \`pulumi up\` reverts every field below to what the stack declares.`, "");
    }

    lines.push("### Drifted objects", "");
    if (previewError !== undefined) {
        lines.push(`The preview printed no report: ${previewError}`, "");
    } else if (objects.length === 0) {
        lines.push("None.", "");
    } else {
        for (const o of objects) {
            lines.push(`#### ${o.object} (${o.op})`, "", `\`${o.urn}\``, "");
            if (o.op === "create") {
                lines.push("Missing on the cluster: deleted outside the program; the next `up` creates it again.", "");
            } else if (o.op === "delete") {
                lines.push("No longer declared by the stack at `main`: the next `up` deletes it.", "");
            }
            if (o.fields.length > 0) {
                lines.push("| field | change | live | declared | written by |", "|---|---|---|---|---|");
                for (const f of o.fields) {
                    lines.push(`| \`${f.path}\` | ${f.kind} | ${cell(f.live)} | ${cell(f.declared)} | ${managerCell(f.managers)} |`);
                }
                lines.push("");
            }
        }
    }
    if (errors.length > 0) {
        lines.push("### Preview errors", "");
        for (const e of errors) {
            lines.push(`- ${(e.message ?? "").trim().replace(/\s*\n\s*/g, " ")}`);
        }
        lines.push("");
    } else if (previewFailed && previewError === undefined && objects.length === 0) {
        lines.push(
            "### Preview errors",
            "",
            `The preview exited ${input.previewExit} without naming a change: a policy violation or an error (the run's log has it).`,
            "",
        );
    }

    const managers = [...new Set(objects.flatMap((o) => o.fields.flatMap((f) => f.managers.map((m) => m.manager ?? "?"))))].sort();
    if (managers.length > 0) {
        lines.push("### Who writes these fields", "");
        for (const m of managers) {
            lines.push(`- \`${m}\`: ${managerAdvice(m)}.`);
        }
        lines.push("");
    }

    lines.push("### verify", "");
    if (verify.error !== undefined) {
        lines.push(`verify did not run its checks: ${verify.error}`, "");
    } else if (fails.length === 0) {
        lines.push(`Every check passed or was skipped (${(verify.results ?? []).length} checks).`, "");
    } else {
        lines.push("| check | requirement | found | read |", "|---|---|---|---|");
        for (const r of fails) {
            const found = (r.findings ?? []).map((f) => `${f.object}: ${f.found}`).join("; ") || (r.note ?? "");
            lines.push(`| FAIL \`${r.id}\` | ${r.what} | ${found.replace(/\|/g, "\\|")} | docs/operations/verify.md${r.readme ?? ""} |`);
        }
        lines.push("");
    }
    if (input.runUrl) {
        lines.push("---", `The preview's JSON and verify's report: the \`drift-${input.stack}\` artifact of [this run](${input.runUrl}).`, "");
    }
    return { clean, objects, markdown: lines.join("\n") };
}

const USAGE =
    "usage: npm run --silent drift-report -- --stack <name> --preview <preview.json> --verify <verify.json> [--preview-exit <code>] [--run-url <url>] [--out <file>]";
const HELP = `${USAGE}

Writes the drift issue's text for a stack from \`pulumi preview --refresh --expect-no-changes --json\`
and \`npm run verify -- --json\`: each drifted object, the fields that differ, and the field managers
that wrote them (from the refreshed live object's metadata.managedFields).

  --stack <name>          the stack
  --preview <file>        the preview's JSON (a missing or empty file: the preview did not finish)
  --verify <file>         verify's JSON report
  --preview-exit <code>   the preview's exit status (non-zero without a change: it failed)
  --run-url <url>         the workflow run, linked from the issue
  --out <file>            write the text there (default: standard output)

Exit status: 0 no drift, 1 drift, a verify FAIL or a preview that did not finish, 2 usage.`;

export interface DriftArgs {
    stack: string;
    preview: string;
    verify: string;
    previewExit?: number;
    runUrl?: string;
    out?: string;
}

export function parseDriftArgs(argv: readonly string[]): DriftArgs | "help" {
    const text = { type: "string" } as const;
    const flags = readFlags(argv, { stack: text, preview: text, verify: text, "preview-exit": text, "run-url": text, out: text }, USAGE);
    if (flags === "help") {
        return flags;
    }
    const { stack, preview, verify, out } = flags;
    if (!stack || !preview || !verify) {
        const missing = Object.entries({ stack, preview, verify }).filter(([, v]) => v === undefined);
        throw new UsageError(`${missing.map(([k]) => `--${k}`).join(", ")} missing; ${USAGE}`);
    }
    const exit = flags["preview-exit"];
    if (exit !== undefined && !/^\d+$/.test(exit)) {
        throw new UsageError(`--preview-exit "${exit}": must be a whole number (the preview's exit status)`);
    }
    const runUrl = flags["run-url"];
    return { stack, preview, verify, ...(exit ? { previewExit: Number(exit) } : {}), ...(runUrl ? { runUrl } : {}), ...(out ? { out } : {}) };
}

/** A JSON file, or why it cannot be read (a preview that failed before printing leaves it empty). */
export function readJson(file: string): Record<string, unknown> | { error: string } {
    let text: string;
    try {
        text = fs.readFileSync(file, "utf8");
    } catch {
        return { error: `${file} does not exist` };
    }
    if (text.trim() === "") {
        return { error: `${file} is empty` };
    }
    try {
        const v = JSON.parse(text) as unknown;
        return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : { error: `${file} is not a JSON object` };
    } catch (e) {
        // Node's message quotes the text it read; say only that it is not JSON.
        void e;
        return { error: `${file} is not JSON` };
    }
}

if (require.main === module) {
    const args = argsOrExit(() => parseDriftArgs(process.argv.slice(2)), HELP);
    const report = driftReport({
        stack: args.stack,
        preview: readJson(args.preview) as PreviewDigest,
        previewExit: args.previewExit,
        verify: readJson(args.verify) as VerifyJson,
        runUrl: args.runUrl,
    });
    if (args.out) {
        fs.writeFileSync(args.out, report.markdown);
    } else {
        process.stdout.write(report.markdown);
    }
    process.exitCode = report.clean ? 0 : 1;
}
