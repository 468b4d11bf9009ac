/**
 * The vocabulary every stack-file key is declared in, once: its type rule, its default, a one-line
 * doc and whether it is secret. From a section's declaration follow its typed values (`Values`),
 * its defaults (`defaultsOf`), the keys it accepts, the generic reader below, the JSON Schema of the
 * stack file (schema.ts) and the configuration reference (tools/docs.ts). The rules between fields
 * stay a function beside each declaration, run on the same reader, so every problem of a stack file
 * is reported together and the messages are the reader's own.
 *
 * A small vocabulary of our own rather than a schema library: the values arrive through the Pulumi
 * CLI (scalars as strings, `"3"` as well as `3`), the messages must name the stack, the key, the
 * value and what is allowed (and never a secret), and a field may be required only when another is
 * set; each is a line here, and the JSON Schema it exports is a function of the same declaration.
 */
import { ConfigReader, Plain, StringRule, isPlainObject } from "./reader";

/** A JSON Schema fragment (draft 2020-12), as schema.ts emits it. */
export type JsonSchema = Record<string, unknown>;

/** What every declared field carries. */
interface FieldBase {
    /** One line on what the key means, for the configuration reference. */
    doc: string;
    /** The default as the reference shows it, where it is not a literal (e.g. "this stack's cluster.name"). */
    defaultDoc?: string;
    /**
     * The field applies only once the fields read before it say so (`plugin.sha256` with
     * `delivery: download`); otherwise it is not read, and the section's function reports it as
     * misplaced.
     */
    when?: (section: Plain) => boolean;
    /** The section's function reads it (its rule depends on more than the fields before it); declared here for keys, schema and reference. */
    readBySection?: boolean;
    /** The value must be a Pulumi secret (`pulumi config set --secret`): never shown, read by its section's function. */
    secret?: boolean;
    /** Must be set (a value only the platform knows has no default), always or once earlier fields say so. */
    required?: Required;
}

/** Whether a field is required: always, or once the fields read before it say so. */
export type Required = boolean | ((section: Plain) => boolean);

export interface StringField extends FieldBase {
    kind: "string";
    rule: StringRule;
    /** The rule's description once the fields before it are read (a checksum names its asset). */
    describeWith?: (section: Plain) => string;
    /** A YAML number is read as its text (a token such as `trigger: 2`). */
    number?: boolean;
    default?: string;
}
export interface IntegerField extends FieldBase {
    kind: "integer";
    min: number;
    max: number;
    default?: number;
}
export interface NumberField extends FieldBase {
    kind: "number";
    min: number;
    max: number;
    default?: number;
}
export interface BooleanField extends FieldBase {
    kind: "boolean";
    default?: boolean;
}
export interface StringsField extends FieldBase {
    kind: "strings";
    rule: StringRule;
    default?: readonly string[];
    size?: { min: number; max: number };
}
export interface LabelsField extends FieldBase {
    kind: "labels";
    default?: Readonly<Record<string, string>>;
}
/** A nested object of declared fields, read with its defaults when it is not set. */
export interface SectionField extends FieldBase {
    kind: "section";
    fields: Fields;
}
/** A list of objects of declared fields. */
export interface ListField extends FieldBase {
    kind: "list";
    items: Fields;
    /** What the list must be, for the message when it is not a list. */
    describe: string;
    maxItems?: number;
}
/** A map of object names to objects of declared fields. */
export interface MapField extends FieldBase {
    kind: "map";
    keyRule: StringRule;
    values: Fields;
}
/**
 * A field whose value has a shape of its own (a label selector, an ignoreDifferences rule list):
 * declared here for the keys, the schema and the reference, read by the section's function.
 */
export interface CustomField extends FieldBase {
    kind: "custom";
    /** The type as the reference shows it. */
    type: string;
    schema: JsonSchema;
    default?: unknown;
}

export type Field = StringField | IntegerField | NumberField | BooleanField | StringsField | LabelsField | SectionField | ListField | MapField | CustomField;
export type Fields = Readonly<Record<string, Field>>;

// ---- typed declarations ------------------------------------------------------------------------

/** The value type a declaration reads to, carried by the builders below. */
declare const VALUE: unique symbol;
export interface Typed<T, Present extends boolean> {
    readonly [VALUE]?: { value: T; present: Present };
}
type HasDefault<O> = O extends { when: unknown } | { readBySection: true } ? false : O extends { default: unknown } ? true : false;

/** The values a declaration reads to: a field with a default is always present, any other may be absent. */
export type Values<S extends Fields> = {
    [K in keyof S]: S[K] extends Typed<infer T, infer P> ? (P extends true ? T : T | undefined) : unknown;
};

type Opts<F extends Field> = Omit<F, "kind">;

/** Builders: each returns the declaration, typed with what it reads to. */
export const field = {
    string<const O extends Opts<StringField>>(o: O): StringField & Typed<string, HasDefault<O>> {
        return { kind: "string", ...o };
    },
    /** A string out of a fixed set; its type is the union of the set. */
    oneOf<const V extends string, const O extends Omit<Opts<StringField>, "rule" | "default"> & { default?: NoInfer<V>; describe?: string }>(
        values: readonly V[],
        o: O,
    ): StringField & Typed<V, HasDefault<O>> {
        const { describe, ...rest } = o;
        return { kind: "string", rule: { oneOf: values, describe: describe ?? values.join(", ") }, ...rest };
    },
    integer<const O extends Opts<IntegerField>>(o: O): IntegerField & Typed<number, HasDefault<O>> {
        return { kind: "integer", ...o };
    },
    number<const O extends Opts<NumberField>>(o: O): NumberField & Typed<number, HasDefault<O>> {
        return { kind: "number", ...o };
    },
    /** A boolean; false when neither set nor defaulted. */
    boolean<const O extends Opts<BooleanField>>(o: O): BooleanField & Typed<boolean, true> {
        return { kind: "boolean", ...o };
    },
    /** A list of strings; read to an empty list when neither set nor defaulted. */
    strings<const O extends Opts<StringsField>>(o: O): StringsField & Typed<string[], true> {
        return { kind: "strings", ...o };
    },
    /** A map of label keys to values; read to an empty map when neither set nor defaulted. */
    labels<const O extends Opts<LabelsField>>(o: O): LabelsField & Typed<Record<string, string>, true> {
        return { kind: "labels", ...o };
    },
    section<const S extends Fields>(o: Opts<SectionField> & { fields: S }): SectionField & { fields: S } & Typed<Values<S>, true> {
        return { kind: "section", ...o };
    },
    list<const S extends Fields>(o: Omit<Opts<ListField>, "readBySection"> & { items: S }): ListField & { items: S } & Typed<Values<S>[], true> {
        return { kind: "list", ...o };
    },
    map<const S extends Fields>(
        o: Omit<Opts<MapField>, "readBySection"> & { values: S },
    ): MapField & { values: S } & Typed<{ name: string; value: Values<S> }[], true> {
        return { kind: "map", ...o };
    },
    /** A list whose items are declared here and read by the section's function. */
    listReadBySection<const S extends Fields>(o: Omit<Opts<ListField>, "readBySection"> & { items: S }): ListField & { items: S } & Typed<unknown, false> {
        return { kind: "list", ...o, readBySection: true };
    },
    /** A map whose values are declared here and read by the section's function. */
    mapReadBySection<const S extends Fields>(o: Omit<Opts<MapField>, "readBySection"> & { values: S }): MapField & { values: S } & Typed<unknown, false> {
        return { kind: "map", ...o, readBySection: true };
    },
    /** Declared for keys, schema and reference; its section's function reads it (to `T`). */
    custom<T>(o: Opts<CustomField>): CustomField & Typed<T, false> {
        return { kind: "custom", ...o };
    },
};

/** The defaults of a section's fields, as one object (the `*_DEFAULTS` each section exports). */
export function defaultsOf<T = Plain>(fields: Fields): T {
    const out: Plain = {};
    for (const [k, f] of Object.entries(fields)) {
        if (f.kind === "section") {
            const nested = defaultsOf<Plain>(f.fields);
            if (Object.keys(nested).length > 0) {
                out[k] = nested;
            }
        } else if ("default" in f && f.default !== undefined) {
            out[k] = f.default;
        }
    }
    return out as T;
}

// ---- the generic reader ------------------------------------------------------------------------

/**
 * Reads a section of declared fields: unknown keys are reported (with the nearest real one), every
 * field is read with its rule in declaration order (so `required` may depend on a field before it),
 * and a field not set takes its default. Custom fields are left for the section's function, which
 * gets the section's raw object back as `raw`. Returns undefined when the value is not an object.
 */
export function readSection<S extends Fields>(r: ConfigReader, key: string, fields: S, value: unknown): (Values<S> & { readonly raw: Plain }) | undefined {
    const o = r.object(key, value, Object.keys(fields));
    if (!o) {
        return undefined;
    }
    const out: Plain = {};
    for (const [k, f] of Object.entries(fields)) {
        if (f.kind !== "string" && requiredIn(f, out) && (o[k] === undefined || o[k] === null)) {
            r.problem(`${key}.${k}`, undefined, `is required: ${f.doc}`);
            continue;
        }
        const v = readField(r, `${key}.${k}`, f, o[k], out);
        if (v !== undefined) {
            out[k] = v;
        }
    }
    Object.defineProperty(out, "raw", { value: o, enumerable: false });
    return out as Values<S> & { readonly raw: Plain };
}

/** Reads one declared field's value (`given`, as the stack file has it); `section`: the fields read before it. */
export function readField(r: ConfigReader, key: string, f: Field, given: unknown, section: Plain = {}): unknown {
    if (f.readBySection || (f.when !== undefined && !f.when(section))) {
        return undefined;
    }
    switch (f.kind) {
        case "string": {
            const required = requiredIn(f, section);
            const rule = f.describeWith ? { ...f.rule, describe: f.describeWith(section) } : f.rule;
            const text = typeof given === "number" && f.number ? String(given) : given;
            if (required) {
                return r.requiredString(key, text, rule);
            }
            return f.default === undefined ? r.string(key, text, rule) : r.string(key, text, rule, f.default);
        }
        case "integer":
        case "number": {
            if ((given === undefined || given === null) && f.default === undefined) {
                return undefined;
            }
            const n = f.kind === "integer" ? r.integer(key, given, f.min, f.max, f.default ?? NaN) : r.number(key, given, f.min, f.max, f.default ?? NaN);
            return Number.isNaN(n) ? undefined : n;
        }
        case "boolean":
            return r.boolean(key, given, f.default ?? false);
        case "strings":
            return r.strings(key, given, f.rule, f.default ?? [], f.size);
        case "labels":
            return given === undefined || given === null ? { ...(f.default ?? {}) } : r.labels(key, given);
        case "section":
            return readSection(r, key, f.fields, given) ?? {};
        case "list": {
            if (given === undefined || given === null) {
                return [];
            }
            if (!Array.isArray(given) || (f.maxItems !== undefined && given.length > f.maxItems)) {
                r.problem(key, given, `must be ${f.describe}`);
                return [];
            }
            return given.map((item, i) => readSection(r, `${key}[${i}]`, f.items, item)).filter((v) => v !== undefined);
        }
        case "map": {
            if (given === undefined || given === null) {
                return [];
            }
            if (!isPlainObject(given)) {
                r.problem(key, given, "must be a map of object names to settings");
                return [];
            }
            const out: { name: string; value: unknown }[] = [];
            for (const [name, entry] of Object.entries(given)) {
                const entryKey = `${key}.${name}`;
                const bad =
                    (f.keyRule.pattern !== undefined && !f.keyRule.pattern.test(name)) ||
                    (f.keyRule.maxLength !== undefined && name.length > f.keyRule.maxLength);
                if (bad) {
                    r.problem(entryKey, name, `must be ${f.keyRule.describe}`);
                    continue;
                }
                const value = readSection(r, entryKey, f.values, entry ?? {});
                if (value) {
                    out.push({ name, value });
                }
            }
            return out;
        }
        case "custom":
            return undefined;
    }
}

/** Whether `f` must be set, given the fields read before it (a missing one is reported by readSection). */
export function requiredIn(f: Field, section: Plain): boolean {
    return typeof f.required === "function" ? f.required(section) : f.required === true;
}

/** Whether a declared section has a field, for reading code that must name only declared keys. */
export function declares(fields: Fields, key: string): boolean {
    return Object.prototype.hasOwnProperty.call(fields, key);
}
