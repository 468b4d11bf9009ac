import * as YAML from "yaml";
import { goTimestamp, parseFloat64, parseInt64, parseUint } from "./goScalars";
import { yamlProblem } from "./yamlErrors";

/**
 * A stack file read as the Pulumi CLI reads it, so the offline plan and `pulumi up` see the same
 * values. pulumi/pulumi sdk/v3.248.0: `sdk/go/common/workspace/loaders.go` LoadProjectStackBytes
 * decodes the file with gopkg.in/yaml.v3 v3.0.1 (`sdk/go/common/encoding/marshal.go`) into `any`,
 * and each config value becomes the text the program gets (`sdk/go/common/resource/config`
 * object.go, unmarshalObject and MarshalString): a string as it is, a bool, integer or float as
 * its JSON text, a structure as JSON, a top-level null as "" (checkForEmptyConfig warns of it),
 * a NaN or an infinity not at all (encoding/json refuses them, and the stack does not load).
 *
 * yaml.v3 is not YAML 1.2's core schema: a plain scalar is resolved by its resolve.go (v3.0.1),
 * restated in `resolvePlain` below: `1_000` is 1000 (underscores dropped), `017` is octal 15 and
 * `0b101` is 5 (Go's strconv.ParseInt with base 0), `yes`/`on` stay strings, a timestamp becomes
 * Go's text of the time (`2001-12-14 00:00:00 +0000 UTC`). The YAML syntax itself is read by the
 * `yaml` library; only the resolution of untagged plain scalars is yaml.v3's. Compared with yaml.v3
 * v3.0.1 itself (a Go program decoding `v: <scalar>` into `any`, built outside the repository) over
 * 101 plain scalars (numbers in every base and with underscores, bounds of int64 and uint64,
 * floats, booleans, nulls, timestamps, text that looks like them): the same value for 100; the one
 * difference is syntax, not resolution: a value of a lone `-` is an error to yaml.v3 and the text
 * "-" here. Not compared: the `yaml` library's syntax against yaml.v3's beyond that.
 */

/** A value as yaml.v3 decodes it into `any`: integers beyond 2^53 stay exact as bigint. */
export type StackValue = null | boolean | number | bigint | string | StackValue[] | { [key: string]: StackValue };

/** A stack file that yaml.v3 (or the Pulumi CLI after it) would refuse, with where. */
export class StackYamlError extends Error {}

/** yaml.v3 resolve.go yamlStyleFloat. */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

const int = (n: bigint): number | bigint => (n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n);

const SPECIAL: Record<string, StackValue> = {
    true: true,
    True: true,
    TRUE: true,
    false: false,
    False: false,
    FALSE: false,
    "": null,
    "~": null,
    null: null,
    Null: null,
    NULL: null,
    ".nan": NaN,
    ".NaN": NaN,
    ".NAN": NaN,
    ".inf": Infinity,
    ".Inf": Infinity,
    ".INF": Infinity,
    "+.inf": Infinity,
    "+.Inf": Infinity,
    "+.INF": Infinity,
    "-.inf": -Infinity,
    "-.Inf": -Infinity,
    "-.INF": -Infinity,
};

/** yaml.v3 v3.0.1 resolve.go `resolve("", in)` for an untagged plain scalar, as decoded into `any`. */
export function resolvePlain(text: string): StackValue {
    const hint =
        text === "" ? "N" : /[+-]/.test(text[0]) ? "S" : /[0-9]/.test(text[0]) ? "D" : /[yYnNtTfFoO~]/.test(text[0]) ? "M" : text[0] === "." ? "." : "";
    if (hint === "") {
        return text;
    }
    if (Object.prototype.hasOwnProperty.call(SPECIAL, text)) {
        return SPECIAL[text];
    }
    if (hint === ".") {
        // strconv.ParseFloat(in): no underscores here.
        return parseFloat64(text) ?? text;
    }
    if (hint === "D" || hint === "S") {
        const time = goTimestamp(text);
        if (time !== undefined) {
            return time;
        }
        const plain = text.replace(/_/g, "");
        const i = parseInt64(plain, 0);
        if (i !== undefined) {
            return int(i);
        }
        const u = parseUint(plain, 0);
        if (u !== undefined) {
            return int(u);
        }
        if (YAML_STYLE_FLOAT.test(plain)) {
            const f = parseFloat64(plain);
            if (f !== undefined) {
                return f;
            }
        }
        for (const [prefix, base] of [
            ["0b", 2],
            ["-0b", 2],
            ["0o", 8],
            ["-0o", 8],
        ] as const) {
            if (plain.startsWith(prefix)) {
                const n =
                    parseInt64((prefix.startsWith("-") ? "-" : "") + plain.slice(prefix.length), base) ??
                    (prefix.startsWith("-") ? undefined : parseUint(plain.slice(prefix.length), base));
                if (n !== undefined) {
                    return int(n);
                }
            }
        }
    }
    return text;
}

/** Go's fmt `%v` of a decoded map key, as Pulumi names a non-string key (object.go, `map[any]any`). */
function keyText(k: StackValue): string {
    return k === null ? "<nil>" : typeof k === "object" ? JSON.stringify(k) : String(k);
}

function where(doc: YAML.Document.Parsed, node: YAML.Node | null | undefined, lines: YAML.LineCounter): string {
    const at = node?.range ? lines.linePos(node.range[0]) : undefined;
    return at ? `line ${at.line}, column ${at.col}` : "";
}

/**
 * Parses a stack file's text into what yaml.v3 decodes. Throws StackYamlError (never the `yaml`
 * library's own wording or advice) for a file that does not parse.
 */
export function parseStackYaml(text: string): StackValue {
    const lines = new YAML.LineCounter();
    // failsafe: every scalar stays its text, and resolvePlain decides as yaml.v3 does.
    const doc = YAML.parseDocument(text, { schema: "failsafe", lineCounter: lines, uniqueKeys: false, prettyErrors: false });
    const err = doc.errors[0];
    if (err) {
        const at = lines.linePos(err.pos[0]);
        throw new StackYamlError(`is not valid YAML at line ${at.line}, column ${at.col} (${yamlProblem(err.code)})`);
    }
    const seen = new Set<YAML.Node>();
    const value = (node: unknown): StackValue => {
        if (node === null || node === undefined) {
            return null;
        }
        if (YAML.isAlias(node)) {
            const target = node.resolve(doc);
            if (!target || seen.has(target)) {
                throw new StackYamlError(`is not valid YAML at ${where(doc, node, lines)} (an alias to an unknown or enclosing anchor)`);
            }
            seen.add(target);
            try {
                return value(target);
            } finally {
                seen.delete(target);
            }
        }
        if (YAML.isScalar(node)) {
            const source = String(node.value ?? "");
            const tag = node.tag;
            if (tag === undefined) {
                return node.type === "PLAIN" ? resolvePlain(source) : source;
            }
            const short = tag.replace(/^tag:yaml\.org,2002:/, "!!");
            if (short === "!!str" || short === "!") {
                return source;
            }
            const resolved = resolvePlain(source);
            const kind =
                resolved === null
                    ? "!!null"
                    : typeof resolved === "boolean"
                      ? "!!bool"
                      : typeof resolved === "string"
                        ? "!!str"
                        : Number.isInteger(resolved) || typeof resolved === "bigint"
                          ? "!!int"
                          : "!!float";
            if (short === kind || (short === "!!float" && kind === "!!int")) {
                return short === "!!float" && typeof resolved === "bigint" ? Number(resolved) : resolved;
            }
            if (!short.startsWith("!!")) {
                // A local tag (`!foo`): yaml.v3 leaves the text as it is.
                return source;
            }
            throw new StackYamlError(`is not valid YAML at ${where(doc, node, lines)} (${source} cannot be read as ${short})`);
        }
        if (YAML.isSeq(node)) {
            return node.items.map((i) => value(i));
        }
        if (YAML.isMap(node)) {
            const out: { [key: string]: StackValue } = {};
            const merges: unknown[] = [];
            for (const pair of node.items) {
                const k = pair.key;
                if (YAML.isScalar(k) && k.type === "PLAIN" && k.tag === undefined && String(k.source) === "<<") {
                    merges.push(pair.value);
                    continue;
                }
                const key = keyText(value(k));
                if (Object.prototype.hasOwnProperty.call(out, key)) {
                    throw new StackYamlError(
                        `is not valid YAML at ${where(doc, k as YAML.Node, lines)} (the key ${JSON.stringify(key)} is set twice in one map)`,
                    );
                }
                out[key] = value(pair.value);
            }
            // yaml.v3 decode.go merge: the map's own keys win, then each merged map in order.
            for (const m of merges) {
                const target = YAML.isAlias(m) ? m.resolve(doc) : m;
                const sources = YAML.isSeq(target) ? target.items : [m];
                for (const src of sources) {
                    const merged = value(src);
                    if (merged === null || typeof merged !== "object" || Array.isArray(merged)) {
                        throw new StackYamlError(`is not valid YAML at ${where(doc, src as YAML.Node, lines)} (a << merge takes a map or a list of maps)`);
                    }
                    for (const [k, v] of Object.entries(merged)) {
                        if (!Object.prototype.hasOwnProperty.call(out, k)) {
                            out[k] = v;
                        }
                    }
                }
            }
            return out;
        }
        return null;
    };
    return value(doc.contents);
}

/**
 * The text the Pulumi CLI hands the program for a top-level config value that is not `secure:`
 * (object.go MarshalString): a string as is, null as "", a number or bool as its JSON, a structure
 * as JSON. Throws for a NaN or an infinity anywhere, which the CLI cannot store.
 */
export function configText(v: StackValue): string {
    if (v === null) {
        return "";
    }
    if (typeof v === "string") {
        return v;
    }
    return goJson(v);
}

/** Go's encoding/json of a decoded value (floats: shortest, exponent below 1e-6 and from 1e21, as JavaScript's). */
export function goJson(v: StackValue): string {
    if (v === null) {
        return "null";
    }
    if (typeof v === "bigint") {
        return v.toString();
    }
    if (typeof v === "number") {
        if (!Number.isFinite(v)) {
            throw new StackYamlError(
                `holds ${Number.isNaN(v) ? ".nan" : v > 0 ? ".inf" : "-.inf"}, which the Pulumi CLI cannot store (encoding/json has no NaN or infinity): quote it to mean the text`,
            );
        }
        return JSON.stringify(v);
    }
    if (typeof v === "boolean" || typeof v === "string") {
        return JSON.stringify(v);
    }
    if (Array.isArray(v)) {
        return `[${v.map(goJson).join(",")}]`;
    }
    // Go's encoding/json writes a map's keys sorted.
    return `{${Object.keys(v)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${goJson(v[k])}`)
        .join(",")}}`;
}
