import * as YAML from "yaml";

/** What a `yaml` parse error's code means: the library's own text quotes the document (secrets included) and gives advice. */
export function yamlProblem(code: string): string {
    return code.toLowerCase().replace(/_/g, " ");
}

/** A `yaml` parse error as where and what, never the library's text. */
export function yamlErrorText(e: unknown): string {
    const at = e instanceof YAML.YAMLError ? e.linePos?.[0] : undefined;
    return e instanceof YAML.YAMLError ? `${at ? `line ${at.line}, column ${at.col}: ` : ""}${yamlProblem(e.code)}` : "it does not parse";
}
