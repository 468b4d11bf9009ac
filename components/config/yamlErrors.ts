import * as YAML from "yaml";

/** What a `yaml` library error code means, in the product's words (no library advice). */
export function yamlProblem(code: string): string {
    const words: Record<string, string> = {
        DUPLICATE_KEY: "a key is set twice in one map",
        BAD_INDENT: "the indentation does not match the lines around it",
        MISSING_CHAR: "a closing quote or bracket is missing",
        MULTILINE_IMPLICIT_KEY: "a key spans more than one line",
        BLOCK_AS_IMPLICIT_KEY: "a key is a nested block",
        TAB_AS_INDENT: "a tab is used for indentation",
        UNEXPECTED_TOKEN: "a character is out of place",
        BAD_ALIAS: "an alias names no anchor",
        ALIAS_PROPS: "an alias carries an anchor or tag",
        BAD_DIRECTIVE: "a directive is malformed",
        BAD_DQ_ESCAPE: "a double-quoted string has an invalid escape",
        BAD_SCALAR_START: "a plain value starts with a reserved character",
        MISSING_ANCHOR: "an alias names no anchor",
        KEY_OVER_1024_CHARS: "a key is longer than 1024 characters",
        BAD_PROP_ORDER: "an anchor or tag is out of place",
        BAD_COLLECTION_TYPE: "a map and a list are mixed",
        IMPOSSIBLE: "the structure cannot be read",
        MULTIPLE_DOCS: "the file holds more than one document",
        MULTIPLE_ANCHORS: "a value has two anchors",
        MULTIPLE_TAGS: "a value has two tags",
        TAG_RESOLVE_FAILED: "a tag cannot be resolved",
    };
    return words[code] ?? "the syntax is broken";
}

/**
 * A parse error of the `yaml` library in the product's words: where it is and what is wrong, never
 * the library's own text (which quotes the document, secrets included, and gives advice).
 */
export function yamlErrorText(e: unknown): string {
    if (e instanceof YAML.YAMLError) {
        const at = e.linePos?.[0];
        return `${at ? `line ${at.line}, column ${at.col}: ` : ""}${yamlProblem(e.code)}`;
    }
    return "it does not parse";
}
