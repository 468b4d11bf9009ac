/**
 * The configuration reference (docs/configuration.md) and the stack file's JSON Schema, rendered
 * from the declarations: `npm run docs` writes what these return, and a test fails when the files differ.
 */
import { Field, Fields } from "../../components/config/declare";
import { PROJECT } from "../../components/config/reader";
import { stackFileSchema } from "./schema";
import { EXAMPLE_SHA256 } from "../../components/config/examples";
import { REQUIRED_KEYS, STACK_FIELDS, parseAddonConfig } from "../../stacks/config";

/** One row of a section's table. */
export interface ReferenceRow {
    key: string;
    type: string;
    default: string;
    allowed: string;
    meaning: string;
}

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

/** The type of a field as the reference shows it. */
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

/** What is allowed, as the reference shows it. */
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

/**
 * The example stack file the reference shows (a hub on EKS): every key a stack must set, each value
 * only the platform knows an example (components/config/examples.ts); `test/configReference` parses
 * it with the program's reader.
 */
export const EXAMPLE_STACK_FILE = `# yaml-language-server: $schema=./schema/stack.schema.json
config:
  aws:region: eu-west-1
  ${PROJECT}:cluster:
    name: hub
    role: hub
    mimirTenant: hub
    eksClusterName: example-platform-hub
  ${PROJECT}:gateway:
    name: internal
    namespace: gateway-system
    listener: https
  ${PROJECT}:imageRegistry: registry.example.com/mirror
  ${PROJECT}:plugin:
    # the sha256 of gatewayapi-plugin-linux-amd64 v0.15.0 as the mirror serves it
    sha256: ${EXAMPLE_SHA256}
  ${PROJECT}:spokes:
    - name: preprod
      tenant: preprod
      hostname: mimir-preprod.hub.example.com
      query: true
  ${PROJECT}:policy:
    tenantNamespaceSelector:
      matchExpressions:
        - key: platform.example/tier
          operator: In
          values: [dev, test, preprod, prod]
    prodNamespaceLabels:
      platform.example/tier: prod
  ${PROJECT}:argocd:
    projects:
      example-tenants: { owner: external }
    applicationSets:
      example-tenant-apps: { owner: external }
`;

/** A stack file with three mistakes, as the validation paragraph shows them. */
export const BAD_EXAMPLE = {
    stack: "hub",
    raw: {
        cluster: { name: "hub", role: "primary", mimirTenant: "hub", kubeconfigContext: "hub" },
        gateway: { name: "internal", namespace: "gateway-system", listener: "https" },
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

/** docs/configuration.md. */
export function renderReference(): string {
    const out: string[] = [
        "# Configuration reference",
        "",
        "<!-- Generated by `npm run docs` from the configuration declarations; do not edit. -->",
        "",
        `Every key lives in the \`${PROJECT}:\` namespace of \`Pulumi.<stack>.yaml\`. Each is declared once, in the`,
        "config of the stage folder that owns its section; this page, the stack file's JSON Schema",
        "(`schema/stack.schema.json`) and the program's reader all follow from that declaration.",
        "",
        "## Validation",
        "",
        "The configuration is validated once, before any resource is declared: a bad value stops the",
        "program with every problem at once, each naming the stack, the key, the value given and what is",
        "allowed. An unknown key (at any level) is a typo: the message names the nearest real key and never",
        "shows the value, so a mistyped secret is not printed. A key in a namespace that is neither",
        `\`${PROJECT}:\` nor Pulumi's or a provider's (\`pulumi:\`, \`aws:\`, \`kubernetes:\`) is refused the same way.`,
        "For example:",
        "",
        "```",
        exampleError(),
        "```",
        "",
        "Values the engines would refuse later are refused when read, with the reason: a Mimir tenant `.`",
        "or `..` (grafana/dskit `tenant/tenant.go`), a hostname label over 63 characters, a spoke's",
        "`mimir.readEndpoint` without Mimir's `/prometheus` prefix (every gate would 404), a CIDR octet over",
        "255 or a `/0` in `network.hubReadCidrs`, a duration longer than Go's `time.ParseDuration` reads",
        "(Argo Rollouts parses every template duration with it), `controller.namespace` or",
        "`smokeTest.namespace` set to one of Kubernetes' own namespaces, a smoke namespace equal to the",
        "controller's, a Pod Security label in `controller.namespaceLabels`, a `controller.appVersion` other",
        "than the pinned chart's, an `errorBudget.query` Prometheus' grammar cannot parse once its args are",
        "resolved, a spoke named like the hub, a spoke's `mimir.hubStack` naming its own",
        "stack, and an `argocd.runsOn` that no stack file of the project names as its `cluster.name`",
        "(a typo there would turn every ArgoCD check of the stack off). The rules between keys",
        "(a rate window of at least four scrapes, a PDB budget below the replicas, and the others) are",
        "listed with each key below.",
        "",
        "## Editor validation",
        "",
        "Put this first line in a stack file and any editor with the YAML language server checks keys,",
        "types, patterns and ranges as you type:",
        "",
        "```yaml",
        "# yaml-language-server: $schema=./schema/stack.schema.json",
        "```",
        "",
        "The schema checks each key on its own; the rules between keys are the program's, which runs on",
        "every `pulumi preview` and `npm run plan`. Scalars at the top level (`imageRegistry`) are text; a",
        "number nested in a section may also be written as a quoted string, which the program accepts and",
        "the schema does not.",
        "",
        "## Example",
        "",
        "A hub on EKS with one spoke: every key a stack must set, every other at its default. The values with the word `example` and the example checksum stand for your platform's own: `npm run plan` and `pulumi preview` warn about each, `pulumi up` refuses them ([Replace the example values](operations/deploy.md#replace-the-example-values)).",
        "",
        "```yaml",
        EXAMPLE_STACK_FILE.trimEnd(),
        "```",
        "",
    ];
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

/** schema/stack.schema.json. */
export function renderSchema(): string {
    return `${JSON.stringify(stackFileSchema(STACK_FIELDS, REQUIRED_KEYS), null, 2)}\n`;
}

/** The generated files, by path from the repository root. */
export function generatedFiles(): Record<string, string> {
    return { "docs/configuration.md": renderReference(), "schema/stack.schema.json": renderSchema() };
}
