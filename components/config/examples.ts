/**
 * Example values, one mechanism for every key. The shipped stack files and the docs stand in for
 * what only the platform knows with values that are recognisably examples: a host or label prefix
 * under the reserved `example` domains (RFC 2606, RFC 6761 6.5) or `example` as a word of its own
 * (`example-tenants`, `platform.example/tier`), and the checksum and digest of no file or image.
 * A preview and the offline plan warn of each, `pulumi up` refuses them; a real value never needs the word.
 */
import { RunError } from "@pulumi/pulumi/errors";
import { NOT_SHOWN, Plain, isPlainObject, show } from "./reader";

/** The checksum the docs and the shipped stack files carry: shaped like a sha256, the checksum of no file. */
export const EXAMPLE_SHA256 = "0123456789abcdef".repeat(4);
/** The plugin image digest the shipped stack files carry: shaped like a digest, the digest of no image. */
export const EXAMPLE_DIGEST = `sha256:${EXAMPLE_SHA256}`;

/**
 * `example` as a word of its own (not part of a longer word such as `counterexample`), or a host under
 * `.invalid` (RFC 2606 2, RFC 6761 6.4: a name sure never to resolve; the offline plan's placeholder endpoints).
 */
const EXAMPLE_WORD = /(^|[^A-Za-z0-9])example([^A-Za-z0-9]|$)|\.invalid(?![A-Za-z0-9.-])/i;

/** Whether a value (or a map's key: a label key, an AppProject's name) is an example, or holds one (an image pinned by the example digest). */
export function isExampleValue(text: string): boolean {
    return text.includes(EXAMPLE_SHA256) || EXAMPLE_WORD.test(text);
}

/** A key of the stack file that holds an example, and the example it holds. */
export interface ExampleValue {
    /** The dotted key, without the project namespace: `policy.prodNamespaceLabels`, `spokes[0].hostname`. */
    key: string;
    /** The example itself: the value, or the map key (a label key, a name) that is one. */
    example: string;
}

/** Every key of a stack's raw configuration that still holds an example, once, in the stack file's order; under a secret key the example is not shown. */
export function exampleValues(raw: Plain, secretKeys: readonly string[] = []): ExampleValue[] {
    const found = new Map<string, string>();
    const walk = (value: unknown, key: string, secret: boolean): void => {
        const note = (text: string) => isExampleValue(text) && !found.has(key) && found.set(key, secret ? NOT_SHOWN : text);
        if (typeof value === "string") note(value);
        if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${key}[${i}]`, secret));
        // A map's own keys are values too: label keys, AppProject and ApplicationSet names.
        for (const [k, v] of isPlainObject(value) ? Object.entries(value) : []) {
            note(k);
            walk(v, `${key}.${k}`, secret);
        }
    };
    Object.entries(raw).forEach(([key, value]) => walk(value, key, secretKeys.includes(key)));
    return [...found].map(([key, example]) => ({ key, example }));
}

/** The example as a message shows it: under a secret key, not at all. */
const shown = (e: ExampleValue) => (e.example === NOT_SHOWN ? NOT_SHOWN : show(e.example));

/** Where a platform reads what each example stands for and how to replace it. */
const EXAMPLES_DOC = "docs/operations/deploy.md#replace-the-example-values";

/** Why `pulumi up` (or another command: `refuses`) refuses this stack: every key that still holds an example. */
export function exampleRefusal(stack: string, namespace: string, examples: readonly ExampleValue[], refuses = "pulumi up refuses to apply"): string {
    const lines = examples.map((e) => `  - ${namespace}:${e.key} = ${shown(e)}`);
    const which = examples.length === 1 ? "a key holds an example value" : `${examples.length} keys hold example values`;
    return `stack "${stack}": ${refuses} while ${which}; set the platform's own values (${EXAMPLES_DOC}):\n${lines.join("\n")}`;
}

/**
 * Stops a real run while any key holds an example, before any resource is declared (a RunError, so
 * the CLI prints the message alone); a preview and the offline plan warn once per key instead, so
 * the shipped stack files can be reviewed as they are.
 */
export function refuseExampleValues(
    stack: string,
    namespace: string,
    examples: readonly ExampleValue[],
    dryRun: boolean,
    warn: (message: string) => void,
): void {
    if (examples.length > 0 && !dryRun) throw new RunError(exampleRefusal(stack, namespace, examples));
    for (const e of dryRun ? examples : []) {
        warn(
            `stack "${stack}": ${namespace}:${e.key} holds the example value ${shown(e)}: set your platform's own; pulumi up refuses example values (${EXAMPLES_DOC})`,
        );
    }
}
