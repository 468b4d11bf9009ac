/**
 * What a refreshed preview says drifted: each object the next `up` would change, its fields, their
 * live and declared values, and the field managers that wrote them.
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
 */

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
