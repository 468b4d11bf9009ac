/**
 * The JSON Schema of a stack file, derived from the declarations (declare.ts), so an editor checks
 * `Pulumi.<stack>.yaml` as it is typed (yaml-language-server's `# yaml-language-server: $schema=`
 * comment). It checks shapes, types, patterns, ranges and unknown keys; the rules between fields and
 * the checks a pattern cannot express (a namespace that is Kubernetes' own, a duration longer than
 * Go reads) are the reader's, which runs on every preview. So the schema never refuses what the
 * program accepts from the shapes it declares, and the program stays the authority.
 */

import { Field, Fields, JsonSchema } from "./declare";
import { PROJECT } from "./reader";

/** Namespaces other than the project's whose keys a stack file may carry: Pulumi's and the providers'. */
export const KNOWN_NAMESPACES: readonly string[] = ["pulumi", "aws", "kubernetes"];

/** The schema of one declared field. */
export function fieldSchema(f: Field): JsonSchema {
    const base: JsonSchema = { description: f.doc };
    if ("default" in f && f.default !== undefined && f.kind !== "custom") {
        base.default = f.default;
    }
    switch (f.kind) {
        case "string": {
            const s: JsonSchema = { ...base, type: f.number ? ["string", "integer"] : "string" };
            if (f.rule.oneOf) {
                s.enum = [...f.rule.oneOf];
            } else if (f.rule.pattern && !f.number) {
                s.pattern = f.rule.pattern.source;
            }
            if (f.rule.maxLength !== undefined && !f.number) {
                s.maxLength = f.rule.maxLength;
            }
            return s;
        }
        case "integer":
            return { ...base, type: "integer", minimum: f.min, maximum: f.max };
        case "number":
            return { ...base, type: "number", minimum: f.min, maximum: f.max };
        case "boolean":
            return { ...base, type: "boolean" };
        case "strings": {
            const item = fieldSchema({ kind: "string", rule: f.rule, doc: f.rule.describe });
            delete item.description;
            return { ...base, type: "array", items: item, ...(f.size ? { minItems: f.size.min, maxItems: f.size.max } : {}) };
        }
        case "labels":
            return { ...base, type: "object", additionalProperties: { type: "string" } };
        case "section":
            return { ...base, ...objectSchema(f.fields) };
        case "list":
            return { ...base, type: "array", items: objectSchema(f.items), ...(f.maxItems !== undefined ? { maxItems: f.maxItems } : {}) };
        case "map":
            return {
                ...base,
                type: "object",
                propertyNames: f.keyRule.pattern ? { pattern: f.keyRule.pattern.source } : {},
                additionalProperties: objectSchema(f.values),
            };
        case "custom":
            return { ...base, ...f.schema, ...(f.default !== undefined ? { default: f.default } : {}) };
    }
}

/** An object of declared fields: no other key, and the fields that are always required. */
export function objectSchema(fields: Fields): JsonSchema {
    const required = Object.entries(fields)
        .filter(([, f]) => f.required === true)
        .map(([k]) => k);
    return {
        type: "object",
        additionalProperties: false,
        properties: Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, fieldSchema(f)])),
        ...(required.length > 0 ? { required } : {}),
    };
}

/**
 * The schema of a whole stack file: its `config:` block takes the project's keys as declared
 * (`argo-rollouts-addon:<key>`), any key of Pulumi's and the providers' namespaces, and nothing
 * else. `required`: the top-level keys every stack must set.
 */
export function stackFileSchema(fields: Fields, required: readonly string[]): JsonSchema {
    const properties = Object.fromEntries(Object.entries(fields).map(([k, f]) => [`${PROJECT}:${k}`, fieldSchema(f)]));
    return {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        $id: `https://github.com/platform/${PROJECT}/schema/stack.schema.json`,
        title: `Pulumi.<stack>.yaml of ${PROJECT}`,
        description: `A stack file of ${PROJECT}. Generated from the configuration declarations by \`npm run docs\`; docs/configuration.md is the reference.`,
        type: "object",
        properties: {
            config: {
                type: "object",
                properties,
                patternProperties: { [`^(${KNOWN_NAMESPACES.join("|")}):`]: {} },
                additionalProperties: false,
                required: required.map((k) => `${PROJECT}:${k}`),
            },
            // The rest of a stack file (pulumi/pulumi sdk/go/common/workspace/project.go at
            // sdk/v3.248.0, ProjectStack), whose config keys are `<namespace>:<name>`
            // (sdk/go/common/resource/config/key.go, ParseKey).
            secretsprovider: { type: "string" },
            encryptedkey: { type: "string" },
            encryptionsalt: { type: "string" },
            environment: {},
        },
        required: ["config"],
    };
}
