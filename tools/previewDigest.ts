/**
 * What a refreshed preview says drifted, with the field managers that wrote each field: the CLI's preview digest (pulumi/pulumi
 * pkg/display/json.go v3.248.0), whose `oldState.outputs` is the refreshed live object and whose program's own manager is its
 * `__fieldManager` (pulumi-kubernetes provider/pkg/provider/provider.go v4.32.0).
 */

import { asArray, field } from "./verify/context";
import { lineDiff } from "./planDiff";

export type ResourceState = { inputs?: Record<string, unknown>; outputs?: Record<string, unknown> };

export interface PreviewStep {
    op: string;
    urn: string;
    oldState?: ResourceState;
    newState?: ResourceState;
    diffReasons?: string[];
    detailedDiff?: Record<string, { kind: string }> | null;
}

export interface PreviewDigest {
    steps?: PreviewStep[];
    diagnostics?: { urn?: string; message?: string; severity?: string }[];
    changeSummary?: Record<string, number>;
}

export type ManagedFieldsEntry = { manager?: string; operation?: string; time?: string; subresource?: string; fieldsV1?: Record<string, unknown> };

export interface FieldDrift {
    /** The provider's property path (`data["policy.csv"]`). */
    path: string;
    /** What the next `up` would do to the field: add, update, delete (and their -replace forms). */
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
    return [...path.matchAll(/\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]|\.?([^.[\]]+)/g)].map((m) =>
        m[1] !== undefined ? m[1].replace(/\\"/g, '"') : m[2] !== undefined ? Number(m[2]) : m[3],
    );
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
 * Whether a managedFields entry's `fieldsV1` owns the field at `path`: the fieldset reaches it, or a
 * leaf on the way (an atomic list). Keys (structured-merge-diff fieldpath/serialize-pe.go v4): `f:`
 * a field, `k:` a list element by its keys, `v:` a set element by value, `i:` by index.
 */
export function ownsPath(fields: Record<string, unknown> | undefined, live: unknown, path: readonly (string | number)[]): boolean {
    let node: unknown = fields;
    for (let i = 0; i < path.length; i++) {
        if (node === null || typeof node !== "object") return false;
        const set = node as Record<string, unknown>;
        if (Object.keys(set).length === 0 && i > 0) return true;
        const p = path[i];
        let next: unknown;
        if (typeof p === "string") {
            next = set[`f:${p}`];
        } else {
            const element = field(live, ...path.slice(0, i), p);
            const key = Object.keys(set).find((k) => (k.startsWith("k:") && keyMatches(k, element)) || k === `v:${JSON.stringify(element)}` || k === `i:${p}`);
            next = key === undefined ? undefined : set[key];
        }
        if (next === undefined) return false;
        node = next;
    }
    return true;
}

/** The managers other than the program's own that own the field (the live object's managedFields). */
export function managersOf(live: Record<string, unknown> | undefined, path: readonly (string | number)[]): ManagedFieldsEntry[] {
    const own = typeof live?.__fieldManager === "string" ? live.__fieldManager : undefined;
    return asArray<ManagedFieldsEntry>(field(live, "metadata", "managedFields")).filter((e) => e.manager !== own && ownsPath(e.fieldsV1, live, path));
}

function show(v: unknown): string | undefined {
    if (v === undefined) return undefined;
    const s = typeof v === "string" ? v : JSON.stringify(v);
    const line = s.replace(/\s*\n\s*/g, " ⏎ ");
    return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}

/** Two texts of several lines (a ConfigMap's policy, a config file): only the lines each has that the other has not. */
export function changedLines(live: unknown, declared: unknown): [unknown, unknown] {
    if (typeof live !== "string" || typeof declared !== "string" || !(live.includes("\n") || declared.includes("\n"))) return [live, declared];
    const side = (sign: string) => lineDiff(live, declared).flatMap((l) => (l.startsWith(sign) && l.trim().length > 1 ? [l.slice(2)] : []));
    return [side("- ").join("\n"), side("+ ").join("\n")];
}

function objectName(step: PreviewStep): string {
    const live = step.oldState?.outputs ?? step.newState?.outputs ?? step.newState?.inputs;
    const [kind, name, ns] = [field(live, "kind"), field(live, "metadata", "name"), field(live, "metadata", "namespace")];
    if (typeof kind === "string" && typeof name === "string") return `${kind} ${typeof ns === "string" && ns !== "" ? `${ns}/` : ""}${name}`;
    const parts = step.urn.split("::");
    const type = (parts[2] ?? "").split("$").pop();
    return `${type} ${parts[3] ?? step.urn}`;
}

export function driftedObjects(digest: PreviewDigest): DriftedObject[] {
    const out: DriftedObject[] = [];
    for (const step of digest.steps ?? []) {
        if (QUIET_OPS.has(step.op) || step.urn.includes("::pulumi:pulumi:Stack::")) continue;
        const live = step.oldState?.outputs;
        const declared = step.newState?.inputs;
        // A Secret's values never reach the issue, whether or not the state marks them secret.
        const secret = field(live ?? declared, "kind") === "Secret";
        const paths = step.detailedDiff ? Object.keys(step.detailedDiff) : [...(step.diffReasons ?? [])];
        const fields = paths.sort().map((p): FieldDrift => {
            const path = parsePropertyPath(p);
            const [was, want] = changedLines(field(live, ...path), field(declared, ...path));
            const hide = (v: unknown) => (secret && v !== undefined ? "[secret]" : show(v));
            return { path: p, kind: step.detailedDiff?.[p]?.kind ?? "update", live: hide(was), declared: hide(want), managers: managersOf(live, path) };
        });
        out.push({ op: step.op, urn: step.urn, object: objectName(step), fields });
    }
    return out;
}
