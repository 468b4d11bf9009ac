/** The stack file's JSON Schema from the declarations, for editors; the rules between fields stay the program's (it never refuses less). */
import { Field, Fields, JsonSchema } from "../../components/config/declare";
import { KNOWN_NAMESPACES, PROJECT } from "../../components/config/reader";

export function fieldSchema(f: Field): JsonSchema {
    const base: JsonSchema = { description: f.doc, ...("default" in f && f.default !== undefined ? { default: f.default } : {}) };
    switch (f.kind) {
        case "string":
        case "strings": {
            const { oneOf, pattern, maxLength } = f.rule;
            const number = f.kind === "string" && f.number;
            const s = {
                type: number ? ["string", "integer"] : "string",
                ...(oneOf ? { enum: [...oneOf] } : pattern && !number ? { pattern: pattern.source } : {}),
                ...(maxLength !== undefined && !number ? { maxLength } : {}),
            };
            return f.kind === "string"
                ? { ...base, ...s }
                : { ...base, type: "array", items: s, ...(f.size ? { minItems: f.size.min, maxItems: f.size.max } : {}) };
        }
        case "integer":
        case "number":
            return { ...base, type: f.kind, minimum: f.min, maximum: f.max };
        case "boolean":
            return { ...base, type: "boolean" };
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
            return { description: f.doc, ...f.schema, ...(f.default !== undefined ? { default: f.default } : {}) };
    }
}

/** An object of declared fields: no other key, and the fields that are always required. */
export function objectSchema(fields: Fields): JsonSchema {
    const required = Object.keys(fields).filter((k) => fields[k].required === true);
    const properties = Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, fieldSchema(f)]));
    return { type: "object", additionalProperties: false, properties, ...(required.length > 0 ? { required } : {}) };
}

/** A whole stack file: `config:` takes the declared keys and any key of Pulumi's and the providers' namespaces, nothing else. */
export function stackFileSchema(fields: Fields, required: readonly string[]): JsonSchema {
    return {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        $id: `https://github.com/platform/${PROJECT}/schema/stack.schema.json`,
        title: `Pulumi.<stack>.yaml of ${PROJECT}`,
        description: `A stack file of ${PROJECT}. Generated from the configuration declarations by \`npm run docs\`; docs/configuration.md is the reference.`,
        type: "object",
        properties: {
            config: {
                type: "object",
                properties: Object.fromEntries(Object.entries(fields).map(([k, f]) => [`${PROJECT}:${k}`, fieldSchema(f)])),
                patternProperties: { [`^(${KNOWN_NAMESPACES.join("|")}):`]: {} },
                additionalProperties: false,
                required: required.map((k) => `${PROJECT}:${k}`),
            },
            // The rest of a stack file (pulumi/pulumi sdk/go/common/workspace/project.go at sdk/v3.248.0, ProjectStack).
            secretsprovider: { type: "string" },
            encryptedkey: { type: "string" },
            encryptionsalt: { type: "string" },
            environment: {},
        },
        required: ["config"],
    };
}
