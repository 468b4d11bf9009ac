/**
 * Objects a policy writes (a PodDisruptionBudget, topology spread constraints), described once and
 * rendered for both Kyverno APIs: as a CEL literal for policies.kyverno.io/v1 and as data with
 * `{{ request.object... }}` variables for kyverno.io/v1. One description, so both engines produce
 * the same object for the same workload.
 */

/** A value taken from the admitted workload: the field at `path`, with an optional text suffix. */
export interface ObjectRef {
    readonly $object: string;
    readonly suffix?: string;
}

export type Template = string | number | boolean | ObjectRef | readonly Template[] | { readonly [key: string]: Template };

/** Plain JSON as Kyverno's `kyverno.io/v1` rules carry it. */
export type KyvernoValue = string | number | boolean | null | KyvernoValue[] | { [key: string]: KyvernoValue };

export const ref = (path: string, suffix?: string): ObjectRef => (suffix === undefined ? { $object: path } : { $object: path, suffix });

export function isRef(t: Template): t is ObjectRef {
    return typeof t === "object" && t !== null && !Array.isArray(t) && typeof (t as ObjectRef).$object === "string";
}

const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

function checkPath(path: string): string {
    if (!FIELD_PATH.test(path)) throw new Error(`not a field path: ${path}`);
    return path;
}

/**
 * A CEL expression building the value. Map values are wrapped in `dyn()`: a CEL map literal must
 * otherwise have values of one type (the pattern Kyverno's own generating-policy tests use).
 */
export function toCel(t: Template): string {
    if (isRef(t)) {
        const base = `object.${checkPath(t.$object)}`;
        return t.suffix === undefined ? base : `${base} + ${JSON.stringify(t.suffix)}`;
    }
    if (typeof t === "number" && !Number.isInteger(t)) throw new Error(`only integers are rendered: ${t}`);
    if (typeof t !== "object") return typeof t === "string" ? JSON.stringify(t) : String(t);
    return Array.isArray(t)
        ? `[${(t as readonly Template[]).map(toCel).join(", ")}]`
        : `{${Object.entries(t as { readonly [key: string]: Template })
              .map(([k, v]) => `${JSON.stringify(k)}: dyn(${toCel(v)})`)
              .join(", ")}}`;
}

/** The Kyverno variable for a field of the admitted object. */
export const kyvernoVar = (path: string): string => `{{ request.object.${checkPath(path)} }}`;

/**
 * Data for a `kyverno.io/v1` rule. A string that is exactly one variable is replaced by the value
 * it names, objects included (Kyverno variable substitution), so a selector is copied whole.
 */
export function toKyverno(t: Template): KyvernoValue {
    if (isRef(t)) return `${kyvernoVar(t.$object)}${t.suffix ?? ""}`;
    if (typeof t === "string" || typeof t === "number" || typeof t === "boolean") return t;
    if (Array.isArray(t)) return (t as readonly Template[]).map(toKyverno);
    return Object.fromEntries(Object.entries(t as { readonly [key: string]: Template }).map(([k, v]) => [k, toKyverno(v)]));
}
