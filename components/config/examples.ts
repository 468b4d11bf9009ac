/**
 * Example values: one mechanism for every key. The shipped stack files and the docs stand in for
 * what only the platform knows (namespace labels, groups, names of ArgoCD objects, the registry,
 * hostnames, digests) with values that are recognisably examples, and the program knows them: a
 * preview and the offline plan warn once per key that still holds one, and `pulumi up` refuses to
 * apply while any does. A value is an example when it
 *
 * - names a host or label prefix under the reserved top-level domain `example`, or under
 *   example.com, example.net or example.org (RFC 2606 sections 2 and 3, RFC 6761 section 6.5), or
 *   carries `example` as a word of its own (`example-tenants`, `role:example-approver`,
 *   `platform.example/tier`); or
 * - is the checksum or digest the shipped files and the docs carry in place of the plugin's (no
 *   file or image has it).
 *
 * A real value never needs the word: rename what carries it.
 */
import { RunError } from "@pulumi/pulumi/errors";
import { Plain, isPlainObject, show } from "./reader";

/** The checksum the docs and the shipped stack files carry: shaped like a sha256, the checksum of no file. */
export const EXAMPLE_SHA256 = "0123456789abcdef".repeat(4);
/** The plugin image digest the shipped stack files carry: shaped like a digest, the digest of no image. */
export const EXAMPLE_DIGEST = `sha256:${EXAMPLE_SHA256}`;

/** `example` as a word of its own: not part of a longer word such as `counterexample`. */
const EXAMPLE_WORD = /(^|[^A-Za-z0-9])example([^A-Za-z0-9]|$)/i;

/** Whether a value (or a map's key: a label key, an AppProject's name) is an example. */
export function isExampleValue(text: string): boolean {
    return text === EXAMPLE_DIGEST || text === EXAMPLE_SHA256 || EXAMPLE_WORD.test(text);
}

/** A key of the stack file that holds an example, and the example it holds. */
export interface ExampleValue {
    /** The dotted key, without the project namespace: `policy.prodNamespaceLabels`, `spokes[0].hostname`. */
    key: string;
    /** The example itself: the value, or the map key (a label key, a name) that is one. */
    example: string;
}

/**
 * Every key of a stack's raw configuration that still holds an example, once per key, in the
 * order of the stack file. Secret keys are never read: a secret is not an example and is never
 * shown.
 */
export function exampleValues(raw: Plain, secretKeys: readonly string[] = []): ExampleValue[] {
    const found = new Map<string, string>();
    const walk = (value: unknown, key: string): void => {
        if (typeof value === "string") {
            if (isExampleValue(value) && !found.has(key)) {
                found.set(key, value);
            }
        } else if (Array.isArray(value)) {
            value.forEach((item, i) => walk(item, `${key}[${i}]`));
        } else if (isPlainObject(value)) {
            for (const [k, v] of Object.entries(value)) {
                // A map's own keys are values too: label keys, AppProject and ApplicationSet names.
                if (isExampleValue(k) && !found.has(key)) {
                    found.set(key, k);
                }
                walk(v, `${key}.${k}`);
            }
        }
    };
    for (const [key, value] of Object.entries(raw)) {
        if (!secretKeys.includes(key)) {
            walk(value, key);
        }
    }
    return [...found].map(([key, example]) => ({ key, example }));
}

/** Where a platform reads what each example stands for and how to replace it. */
export const EXAMPLES_DOC = "docs/operations/deploy.md#replace-the-example-values";

/** The warning a preview gives for one key that still holds an example. */
export function exampleWarning(stack: string, namespace: string, e: ExampleValue): string {
    return `stack "${stack}": ${namespace}:${e.key} holds the example value ${show(e.example)}: set your platform's own; pulumi up refuses example values (${EXAMPLES_DOC})`;
}

/** Why `pulumi up` refuses this stack: every key that still holds an example. */
export function exampleRefusal(stack: string, namespace: string, examples: readonly ExampleValue[]): string {
    const lines = examples.map((e) => `  - ${namespace}:${e.key} = ${show(e.example)}`);
    return (
        `stack "${stack}": pulumi up refuses to apply while ${examples.length === 1 ? "a key holds an example value" : `${examples.length} keys hold example values`}; ` +
        `set the platform's own values (${EXAMPLES_DOC}):\n${lines.join("\n")}`
    );
}

/**
 * Stops a real run while any key holds an example, before any resource is declared; a preview
 * (and the offline plan) warns once per key instead, so the shipped stack files can be reviewed as
 * they are.
 */
export function refuseExampleValues(
    stack: string,
    namespace: string,
    examples: readonly ExampleValue[],
    dryRun: boolean,
    warn: (message: string) => void,
): void {
    if (examples.length === 0) {
        return;
    }
    if (!dryRun) {
        throw new ExampleValueError(exampleRefusal(stack, namespace, examples));
    }
    for (const e of examples) {
        warn(exampleWarning(stack, namespace, e));
    }
}

/** A RunError, so the Pulumi CLI prints the message alone (as ConfigError, reader.ts). */
export class ExampleValueError extends RunError {
    constructor(message: string) {
        super(message);
        this.name = "ExampleValueError";
    }
}
