/** docs/configuration.md and the stack file's JSON Schema, rendered from the declarations (`npm run docs`; a test fails when they differ). */
import * as fs from "fs";
import * as path from "path";
import { Field, Fields } from "../../components/config/declare";
import { EXAMPLE_DIGEST } from "../../components/config/examples";
import { stackFileSchema } from "./schema";
import { REQUIRED_KEYS, STACK_FIELDS, parseAddonConfig } from "../../stacks/config";

export type ReferenceRow = { key: string; type: string; default: string; allowed: string; meaning: string };

const TYPES: Record<Exclude<Field["kind"], "string" | "custom">, string> = {
    integer: "integer",
    number: "number",
    boolean: "boolean",
    strings: "list of strings",
    labels: "map of labels",
    section: "object",
    list: "list of objects",
    map: "map of name to object",
};

export function typeOf(f: Field): string {
    return f.kind === "string" ? (f.secret ? "secret string" : f.rule.oneOf ? "enum" : "string") : f.kind === "custom" ? f.type : TYPES[f.kind];
}

const code = (v: unknown): string => `\`${typeof v === "string" ? v : JSON.stringify(v)}\``;

/** The default as the reference shows it: the declared one, else what an absent key means. */
export function defaultOf(f: Field): string {
    const absent: Partial<Record<Field["kind"], unknown>> = { boolean: false, strings: [], list: [], map: [], labels: {} };
    return (
        f.defaultDoc ??
        (f.required === true ? "required" : "default" in f && f.default !== undefined ? code(f.default) : f.kind in absent ? code(absent[f.kind]) : "-")
    );
}

export function allowedOf(f: Field): string {
    switch (f.kind) {
        case "string":
            return f.rule.oneOf ? f.rule.oneOf.map(code).join(", ") : f.rule.describe;
        case "integer":
            return `whole number, ${f.min} to ${f.max}`;
        case "number":
            return `${f.min} to ${f.max}`;
        case "boolean":
            return "`true` or `false`";
        case "strings": {
            const size = f.size ? `${f.size.min}-${f.size.max} entries, each ` : "each ";
            return `${size}${f.rule.oneOf ? `one of ${f.rule.oneOf.join(", ")}` : f.rule.describe}`;
        }
        case "labels":
            return "label keys to label values";
        case "section":
            return `keys below`;
        case "list":
            return `${f.describe}${f.maxItems !== undefined ? ` (at most ${f.maxItems})` : ""}; keys below`;
        case "map":
            return `names: ${f.keyRule.describe}; keys below`;
        case "custom":
            return "see the meaning";
    }
}

/** Every row of a field and the fields below it, keyed as the stack file nests them. */
export function rowsOf(key: string, f: Field): ReferenceRow[] {
    const row: ReferenceRow = { key, type: typeOf(f), default: defaultOf(f), allowed: allowedOf(f), meaning: f.doc };
    const nested = (prefix: string, fields: Fields) => Object.entries(fields).flatMap(([k, sub]) => rowsOf(`${prefix}.${k}`, sub));
    switch (f.kind) {
        case "section":
            return [row, ...nested(key, f.fields)];
        case "list":
            return [row, ...nested(`${key}[]`, f.items)];
        case "map":
            return [row, ...nested(`${key}.<name>`, f.values)];
        default:
            return [row];
    }
}

/** Table cells: pipes escaped, one line each. */
const cell = (s: string): string => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The reference's example stack file (a hub on EKS, every required key); test/configReference parses it with the program's reader. */
export const EXAMPLE_STACK_FILE = fs.readFileSync(path.join(__dirname, "example-stack.yaml"), "utf8");

/** A stack file with three mistakes, as the validation paragraph shows them. */
export const BAD_EXAMPLE = {
    stack: "hub",
    raw: {
        cluster: { name: "hub", role: "primary", mimirTenant: "hub", kubeconfigContext: "hub" },
        gateway: { name: "internal", namespace: "gateway-system", listener: "https" },
        controller: { imageDigest: EXAMPLE_DIGEST },
        plugin: { sha256: "abc" },
        smokeTets: { enabled: true },
        policy: { tenantNamespaceSelector: { matchLabels: { "platform.example/tier": "prod" } }, prodNamespaceLabels: { "platform.example/tier": "prod" } },
        argocd: { projects: {}, applicationSets: {} },
    },
};

/** The error the program gives for BAD_EXAMPLE, as the Pulumi CLI prints it. */
export function exampleError(): string {
    try {
        parseAddonConfig(BAD_EXAMPLE.stack, BAD_EXAMPLE.raw);
    } catch (e) {
        return (e as Error).message;
    }
    throw new Error("the bad example stack file was accepted");
}

/** docs/configuration.md: the prose of reference.md, then a table per section. */
export function renderReference(): string {
    const fill: Record<string, string> = { exampleError: exampleError(), exampleStackFile: EXAMPLE_STACK_FILE.trimEnd() };
    const intro = fs
        .readFileSync(path.join(__dirname, "reference.md"), "utf8")
        .replace(/^<!-- template:.*-->\n/, "")
        .replace(/\{\{(\w+)\}\}/g, (_, k: string) => fill[k]);
    const out: string[] = [intro.trimEnd(), ""];
    for (const [key, f] of Object.entries(STACK_FIELDS) as [string, Field][]) {
        out.push(
            `## ${key}`,
            "",
            `${f.doc[0].toUpperCase()}${f.doc.slice(1)}.${REQUIRED_KEYS.includes(key as (typeof REQUIRED_KEYS)[number]) ? " Required." : ""}`,
            "",
        );
        out.push("| key | type | default | allowed | meaning |", "|---|---|---|---|---|");
        const rows = rowsOf(key, f);
        // A section's own row says only what the heading says; its keys follow.
        for (const r of f.kind === "section" ? rows.slice(1) : rows) {
            out.push(`| \`${cell(r.key)}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.allowed)} | ${cell(r.meaning)} |`);
        }
        out.push("");
    }
    return out.join("\n");
}

export function renderSchema(): string {
    return `${JSON.stringify(stackFileSchema(STACK_FIELDS, REQUIRED_KEYS), null, 2)}\n`;
}

/** The generated files, by path from the repository root. */
export function generatedFiles(): Record<string, string> {
    return { "docs/configuration.md": renderReference(), "schema/stack.schema.json": renderSchema() };
}
