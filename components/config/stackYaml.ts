/**
 * Stack files read narrowly. The Pulumi CLI reads them with gopkg.in/yaml.v3 (pulumi/pulumi
 * sdk/go/common/workspace/loaders.go), which mixes YAML 1.1 into its plain scalars (resolve.go at
 * v3.0.1: `017` is octal, `1_000` and `0b1` are numbers, a date is a time); the plan reads them as
 * YAML 1.2 with the `yaml` package. Rather than restate yaml.v3, every plain scalar the two could
 * read differently is refused with the plain form to write, so what is accepted reads the same.
 */
import { isUtf8 } from "buffer";
import { RunError } from "@pulumi/pulumi/errors";
import * as YAML from "yaml";
import { INVISIBLE, PROJECT, printable } from "./reader";
import { yamlProblem } from "./yamlErrors";

/** A value of a stack file as read here (and, for what is accepted, as yaml.v3 reads it). */
export type StackValue = null | boolean | number | string | StackValue[] | { [key: string]: StackValue };

/** A stack file refused, with its line: a RunError, so the Pulumi CLI prints the message alone. */
export class StackYamlError extends RunError {}

/** More aliases than a hand-written stack file needs: an alias bomb is refused before it expands. */
const MAX_ALIASES = 10;

/** Why a character a stack file holds, or writes as an escape, is refused. */
const UNSEEN = "a character a terminal does not show (a control character, a zero-width space or mark): remove it";

/** A plain number both read alike: decimal, no sign but `-`, no leading zero, at most 15 digits before the point (exact in a double), a 2-digit exponent. */
const DECIMAL = /^-?(0|[1-9][0-9]{0,14})(\.[0-9]+)?([eE][-+]?[0-9]{1,2})?$/;

/** Plain scalars YAML 1.2 and yaml.v3 (or YAML 1.1 readers) read differently, and the plain form to write instead. */
const AMBIGUOUS: [RegExp, string][] = [
    [/^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/, "is a boolean to YAML 1.1 and text to YAML 1.2: write true or false, or quote it"],
    [/^<<$/, "is a merge key to yaml.v3 and a plain key to YAML 1.2: write the merged keys out"],
    [/^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ]|$)/, "is a timestamp to yaml.v3 and text to YAML 1.2: quote it"],
    [/^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$/, "is a base-60 number to YAML 1.1 and text to YAML 1.2: quote it"],
];

/** What yaml.v3 may read as a number (resolve.go: `_` dropped, then Go's strconv with base prefixes, or a float) or YAML 1.2 as one. */
const NUMBER = /^[-+]?(0[bBoOxX]|\.(inf|Inf|INF|nan|NaN|NAN)$|(\.[0-9]|[0-9])[0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9_]+)?$)/;

/** Why a plain scalar is refused, if it is. */
export function plainScalarProblem(text: string): string | undefined {
    if (NUMBER.test(text)) {
        return DECIMAL.test(text) && !Object.is(Number(text), -0)
            ? undefined
            : "is a number YAML 1.2 and yaml.v3 may read differently (a leading zero or +, 0b, 0o or 0x, _, .inf, .nan, -0, over 15 digits): write it in plain decimal (1000, 0.5, -2), or quote it for text";
    }
    return AMBIGUOUS.find(([pattern]) => pattern.test(text))?.[1];
}

/**
 * Parses a stack file's bytes (or text): refuses, with the line, what YAML readers could read
 * differently (not UTF-8, control and invisible characters, CR-only line ends, tags, many aliases, a
 * key written twice, the plain scalars above); then reads it as YAML 1.2.
 */
export function parseStackYaml(source: string | Buffer): StackValue {
    const fail = (line: number, what: string): never => {
        throw new StackYamlError(`line ${line}: ${printable(what)}`);
    };
    // yaml.v3 reads UTF-16 by its byte order mark (yaml_parser_determine_encoding, readerc.go at v3.0.1); a stack file here is UTF-8.
    const bytes = typeof source === "string" ? "" : source.toString("latin1");
    if (/^(\xff\xfe|\xfe\xff|[^\0]?\0)/.test(bytes)) fail(1, "is UTF-16 or UTF-32 (a byte order mark, or NUL bytes): save the file as UTF-8");
    const bad = bytes.split("\n").findIndex((l) => !isUtf8(Buffer.from(l, "latin1")));
    if (bad >= 0) fail(bad + 1, "holds bytes that are not UTF-8 (Latin-1 text, say): save the file as UTF-8");
    // A UTF-8 byte order mark and CRLF line ends read as they are: dropped, the lines count the same.
    const text = String(source).replace(/^\ufeff|\r(?=\n)/g, "");
    const lineOf = (offset = 0) => text.slice(0, offset).split("\n").length;
    // Control characters (yaml.v3 refuses them, readerc.go), line breaks only YAML 1.1 has, and what a terminal does not show: a group name holding U+200B is one no token carries.
    const odd = INVISIBLE.exec(text);
    if (odd) fail(lineOf(odd.index), odd[0] === "\r" ? "ends a line with CR alone: use LF (or CRLF) line ends" : `holds ${odd[0]}, ${UNSEEN}`);
    const doc = YAML.parseDocument(text, { uniqueKeys: false, prettyErrors: false });
    if (doc.errors.length > 0) fail(lineOf(doc.errors[0].pos[0]), `is not valid YAML (${yamlProblem(doc.errors[0].code)})`);
    let aliases = 0;
    const check = (n: YAML.Node | null, at: string): void => {
        const why =
            YAML.isAlias(n) && ++aliases > MAX_ALIASES
                ? `${at}: more than ${MAX_ALIASES} aliases (*name): write the values out`
                : n?.tag
                  ? `${at || "the file"} has the tag ${n.tag.replace("tag:yaml.org,2002:", "!!")}, which YAML readers resolve differently (!!binary is bytes to one, text to another): write the value as a plain string, without the tag`
                  : YAML.isScalar(n) && INVISIBLE.test(String(n.source))
                    ? `holds ${INVISIBLE.exec(String(n.source))?.[0]} (an escape), ${UNSEEN}`
                    : YAML.isScalar(n) && n.type === "PLAIN" && plainScalarProblem(String(n.source));
        if (why) fail(lineOf(n?.range?.[0]), YAML.isScalar(n) && !n.tag ? `${at || "the file"} = ${String(n.source)} ${why}` : why);
        if (YAML.isSeq(n)) n.items.forEach((item, i) => check(item as YAML.Node, `${at}[${i}]`));
        const seen = new Map<string, string>();
        for (const { key, value } of YAML.isMap(n) ? n.items : []) {
            const name = YAML.isScalar(key) ? String(key.source) : "?";
            const path = at === "config" || !at ? name : `${at}.${name}`;
            const line = lineOf((YAML.isNode(key) ? key : n)?.range?.[0]);
            check(key as YAML.Node, path);
            if (!YAML.isScalar(key) || typeof key.value !== "string") fail(line, `${at || "the file"} has the key ${name}, which is not text: quote it`);
            // Pulumi reads a config key without a namespace as the project's (resource/config/key.go ParseKey).
            const same = at === "config" && !name.includes(":") ? `${PROJECT}:${name}` : name;
            const first = seen.get(same);
            if (first !== undefined) {
                fail(
                    line,
                    first === name
                        ? `the key ${name} is written twice: write it once`
                        : `${first} and ${name} are one key to the Pulumi CLI: write it once, as ${same}`,
                );
            }
            seen.set(same, name);
            check(value as YAML.Node, path);
        }
    };
    check(doc.contents, "");
    return doc.toJS() as StackValue;
}
