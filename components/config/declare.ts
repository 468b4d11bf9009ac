/**
 * The vocabulary every stack-file key is declared in, once: rule, default, one-line doc, secrecy.
 * From it follow the typed values, defaults, keys, the reader below, the JSON Schema and the
 * reference (tools/docs/). Our own, not a schema library's: values arrive through the Pulumi CLI
 * (`"3"` as well as `3`), messages name stack, key, value and rule (never a secret), a field may be
 * required once another is set; the rules between fields are a function beside each declaration.
 */
import { ConfigReader, Plain, StringRule, isPlainObject } from "./reader";

/** A JSON Schema fragment (draft 2020-12): a custom field's schema. */
export type JsonSchema = Record<string, unknown>;

interface FieldBase {
    /** One line on what the key means, for the reference. */
    doc: string;
    /** The default as the reference shows it, where it is not a literal ("this stack's cluster.name"). */
    defaultDoc?: string;
    /** Read only once the fields before it say so (`plugin.sha256` with `delivery: download`); the section's function reports it as misplaced. */
    when?: (section: Plain) => boolean;
    /** Read by the section's function (its rule needs more than the fields before it); declared here for keys, schema and reference. */
    readBySection?: boolean;
    /** Must be a Pulumi secret (`pulumi config set --secret`): never shown, read by its section's function. */
    secret?: boolean;
    /** Must be set (a value only the platform knows has no default), always or once the fields before it say so. */
    required?: Required;
}

export type Required = boolean | ((section: Plain) => boolean);

/** A field of kind `K` with an optional default of type `D`, and fields of its own. */
type Of<K extends string, D, Own = object> = FieldBase & { kind: K; default?: D } & Own;
/** `describeWith`: the rule's description once the fields before it are read (a checksum names its asset); `number`: a YAML number is read as its text (`trigger: 2`). */
export type StringField = Of<"string", string, { rule: StringRule; describeWith?: (section: Plain) => string; number?: boolean }>;
export type NumberField = Of<"integer" | "number", number, { min: number; max: number }>;
export type BooleanField = Of<"boolean", boolean>;
export type StringsField = Of<"strings", readonly string[], { rule: StringRule; size?: { min: number; max: number } }>;
export type LabelsField = Of<"labels", Readonly<Record<string, string>>>;
/** A nested object of declared fields, read with its defaults when it is not set. */
export type SectionField = Of<"section", never, { fields: Fields }>;
/** A list (`describe`: what it must be, for the message) or a map of names to objects of declared fields, read by the section's function. */
export type ListField = Of<"list", never, { items: Fields; describe: string; maxItems?: number }>;
export type MapField = Of<"map", never, { keyRule: StringRule; values: Fields }>;
/** A value with a shape of its own (a label selector), read by the section's function; `type` as the reference shows it. */
export type CustomField = Of<"custom", unknown, { type: string; schema: JsonSchema }>;

export type Field = StringField | NumberField | BooleanField | StringsField | LabelsField | SectionField | ListField | MapField | CustomField;
export type Fields = Readonly<Record<string, Field>>;

/** The value type a declaration reads to, and whether it declares a default, carried by the builders below. */
declare const VALUE: unique symbol;
export interface Typed<T, Present extends boolean, Default extends boolean = false> {
    readonly [VALUE]?: { value: T; present: Present; default: Default };
}
type Given<O> = O extends { default: unknown } ? true : false;
type HasDefault<O> = O extends { when: unknown } | { readBySection: true } ? false : Given<O>;

/**
 * The values a declaration reads to: a field with a default is always present, any other may be
 * absent, but the required fields `R` once the section was read without a problem.
 */
export type Values<S extends Fields, R extends keyof S = never> = {
    [K in keyof S as Present<S[K], K, R> extends true ? K : never]: ValueOf<S[K]>;
} & { [K in keyof S as Present<S[K], K, R> extends true ? never : K]?: ValueOf<S[K]> };
type ValueOf<F> = F extends Typed<infer T, boolean, boolean> ? T : unknown;
type Present<F, K, R> = K extends R ? true : F extends Typed<unknown, infer P, boolean> ? P : false;

/** What `defaultsOf` returns: each declared default, and each section's that has one. */
export type Defaults<S extends Fields> = {
    [
        K in keyof S as S[K] extends { fields: infer F extends Fields }
            ? keyof Defaults<F> extends never
                ? never
                : K
            : S[K] extends Typed<unknown, boolean, true>
              ? K
              : never
    ]: S[K] extends {
        fields: infer F extends Fields;
    }
        ? Defaults<F>
        : S[K] extends Typed<infer T, boolean, true>
          ? T
          : never;
};

type Opts<F extends Field> = Omit<F, "kind">;

/** Builders: each returns the declaration, typed with what it reads to (booleans, lists and maps are always present). */
export const field = {
    string: <const O extends Opts<StringField>>(o: O): StringField & Typed<string, HasDefault<O>, Given<O>> => ({ kind: "string", ...o }),
    /** A string out of a fixed set; its type is the union of the set. */
    oneOf<const V extends string, const O extends Omit<Opts<StringField>, "rule" | "default"> & { default?: NoInfer<V>; describe?: string }>(
        values: readonly V[],
        { describe, ...o }: O,
    ): StringField & Typed<V, HasDefault<O>, Given<O>> {
        return { kind: "string", rule: { oneOf: values, describe: describe ?? values.join(", ") }, ...o };
    },
    integer: <const O extends Opts<NumberField>>(o: O): NumberField & Typed<number, HasDefault<O>, Given<O>> => ({ kind: "integer", ...o }),
    number: <const O extends Opts<NumberField>>(o: O): NumberField & Typed<number, HasDefault<O>, Given<O>> => ({ kind: "number", ...o }),
    boolean: <const O extends Opts<BooleanField>>(o: O): BooleanField & Typed<boolean, true, Given<O>> => ({ kind: "boolean", ...o }),
    strings: <const O extends Opts<StringsField>>(o: O): StringsField & Typed<string[], true, Given<O>> => ({ kind: "strings", ...o }),
    labels: <const O extends Opts<LabelsField>>(o: O): LabelsField & Typed<Record<string, string>, true, Given<O>> => ({ kind: "labels", ...o }),
    /** Read by its section's function (`readBySection`), it may be absent. */
    section: <const S extends Fields, const O extends Omit<Opts<SectionField>, "fields">>(
        o: O & { fields: S },
    ): Omit<SectionField, "fields"> & { fields: S } & Typed<Values<S>, O extends { readBySection: true } ? false : true> => ({ kind: "section", ...o }),
    list: <const S extends Fields>(
        o: Omit<Opts<ListField>, "readBySection"> & { items: S },
    ): Omit<ListField, "items"> & { items: S } & Typed<Values<S>[], true> => ({
        kind: "list",
        ...o,
    }),
    map: <const S extends Fields>(
        o: Omit<Opts<MapField>, "readBySection"> & { values: S },
    ): Omit<MapField, "values"> & { values: S } & Typed<{ name: string; value: Values<S> }[], true> => ({ kind: "map", ...o }),
    listReadBySection: <const S extends Fields>(
        o: Omit<Opts<ListField>, "readBySection"> & { items: S },
    ): Omit<ListField, "items"> & { items: S } & Typed<unknown, false> => ({
        kind: "list",
        ...o,
        readBySection: true,
    }),
    /** `D`: whether it declares a default (steps' weights). */
    custom: <T, D extends boolean = false>(o: Opts<CustomField>): CustomField & Typed<T, false, D> => ({ kind: "custom", ...o }),
};

/** The defaults of a section's fields, as one object (the `*_DEFAULTS` each section exports). */
export function defaultsOf<S extends Fields>(fields: S): Defaults<S> {
    const out: Plain = {};
    for (const [k, f] of Object.entries(fields)) {
        const d = f.kind === "section" ? defaultsOf(f.fields) : "default" in f ? f.default : undefined;
        if (d !== undefined && !(f.kind === "section" && Object.keys(d as Plain).length === 0)) out[k] = d;
    }
    return out as Defaults<S>;
}

/**
 * Reads a section of declared fields: unknown keys are reported (with the nearest real one), each
 * field is read in declaration order (so `required` may depend on a field before it) and takes its
 * default when not set; `raw` is the section's object, for its function. Undefined when not an object.
 */
export function readSection<S extends Fields>(r: ConfigReader, key: string, fields: S, value: unknown): (Values<S> & { readonly raw: Plain }) | undefined {
    const o = r.object(key, value, Object.keys(fields));
    if (!o) return undefined;
    const out: Plain = {};
    for (const [k, f] of Object.entries(fields)) {
        if (f.kind !== "string" && requiredIn(f, out) && (o[k] === undefined || o[k] === null)) {
            r.problem(`${key}.${k}`, undefined, `is required: ${f.doc}`);
            continue;
        }
        const v = readField(r, `${key}.${k}`, f, o[k], out);
        if (v !== undefined) out[k] = v;
    }
    Object.defineProperty(out, "raw", { value: o, enumerable: false });
    return out as Values<S> & { readonly raw: Plain };
}

/** Reads one declared field's value (`given`, as the stack file has it); `section`: the fields read before it. */
export function readField(r: ConfigReader, key: string, f: Field, given: unknown, section: Plain = {}): unknown {
    const unset = given === undefined || given === null;
    if (f.readBySection || (f.when !== undefined && !f.when(section))) return undefined;
    switch (f.kind) {
        case "string": {
            const rule = f.describeWith ? { ...f.rule, describe: f.describeWith(section) } : f.rule;
            const text = typeof given === "number" && f.number ? String(given) : given;
            return requiredIn(f, section) ? r.requiredString(key, text, rule) : r.string(key, text, rule, f.default as string);
        }
        case "integer":
        case "number": {
            // Pulumi stores a top-level scalar as text: "3" is 3.
            const n = typeof given === "string" && /^-?[0-9]+(\.[0-9]+)?$/.test(given) ? Number(given) : given;
            if (unset || (typeof n === "number" && n >= f.min && n <= f.max && (f.kind === "number" ? Number.isFinite(n) : Number.isInteger(n)))) {
                return unset ? f.default : n;
            }
            r.problem(key, given, `must be ${f.kind === "integer" ? "a whole number" : "a number"} from ${f.min} to ${f.max}`);
            return f.default;
        }
        case "boolean":
            return r.boolean(key, given, f.default ?? false);
        case "strings":
            return r.strings(key, given, f.rule, f.default ?? [], f.size);
        case "labels":
            return unset ? { ...f.default } : r.labels(key, given);
        case "section":
            // Not an object: reported, then read as an empty one (on a reader of its own) so the readers after it still run to the report.
            return readSection(r, key, f.fields, given) ?? readSection(new ConfigReader(), key, f.fields, {});
        case "list":
            if (unset || !Array.isArray(given) || (f.maxItems !== undefined && given.length > f.maxItems)) {
                if (!unset) r.problem(key, given, `must be ${f.describe}`);
                return [];
            }
            return given.map((item, i) => readSection(r, `${key}[${i}]`, f.items, item)).filter((v) => v !== undefined);
        case "map":
            return unset ? [] : readMap(r, key, f, given);
        default:
            return undefined;
    }
}

/** A map of object names to objects, in the stack file's order; a bad name is named and skipped. */
function readMap(r: ConfigReader, key: string, f: MapField, given: unknown): { name: string; value: unknown }[] {
    if (!isPlainObject(given)) {
        r.problem(key, given, "must be a map of object names to settings");
        return [];
    }
    const out: { name: string; value: unknown }[] = [];
    for (const [name, entry] of Object.entries(given)) {
        if ((f.keyRule.pattern && !f.keyRule.pattern.test(name)) || (f.keyRule.maxLength !== undefined && name.length > f.keyRule.maxLength)) {
            r.problem(`${key}.${name}`, name, `must be ${f.keyRule.describe}`);
            continue;
        }
        const value = readSection(r, `${key}.${name}`, f.values, entry ?? {});
        if (value) out.push({ name, value });
    }
    return out;
}

/** Whether `f` must be set, given the fields read before it (a missing one is reported by readSection). */
export function requiredIn(f: Field, section: Plain): boolean {
    return typeof f.required === "function" ? f.required(section) : f.required === true;
}
