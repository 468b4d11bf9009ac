import { ConfigReader, DNS_SUBDOMAIN, Plain, StringRule, isPlainObject, NAMESPACE_RULE } from "../../config/reader";
import type { GroupKind, IgnoreRule } from "../ignoreRules";
import { jqPathProblem, jsonPointerProblem } from "../jq";

/**
 * The `argocd` section's list shapes: maps of named objects, `{group, kind}` lists and
 * ignoreDifferences rules, checked as ArgoCD reads them. Their keys are declared in section.ts.
 */

/** A Kubernetes object name (DNS subdomain), as AppProjects and ApplicationSets are named. */
export { DNS_SUBDOMAIN };
export const API_GROUP = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;

/** A map of object names to objects, read into a list in the stack file's order. */
export function namedMap<T>(r: ConfigReader, key: string, value: unknown, keys: readonly string[], read: (key: string, entry: Plain, name: string) => T): T[] {
    if (value === undefined || value === null) {
        return [];
    }
    if (!isPlainObject(value)) {
        r.problem(key, value, "must be a map of object names to settings");
        return [];
    }
    const out: T[] = [];
    for (const [name, entry] of Object.entries(value)) {
        const entryKey = `${key}.${name}`;
        if (!DNS_SUBDOMAIN.test(name) || name.length > 253) {
            r.problem(entryKey, name, "must be a Kubernetes object name (lowercase letters, digits, '-', '.')");
            continue;
        }
        const obj = r.object(entryKey, entry ?? {}, keys);
        if (obj) {
            out.push(read(entryKey, obj, name));
        }
    }
    return out;
}

/** A list of `{group, kind}`; `*` globs are allowed where ArgoCD allows them (whitelists). */
export function groupKindList(r: ConfigReader, key: string, value: unknown, globs: boolean): GroupKind[] | undefined {
    if (value === undefined || value === null) {
        return undefined;
    }
    if (!Array.isArray(value)) {
        r.problem(key, value, 'must be a list of {group, kind} (group "" for the core group)');
        return undefined;
    }
    const out: GroupKind[] = [];
    value.forEach((v, i) => {
        const k = `${key}[${i}]`;
        const o = r.object(k, v, ["group", "kind"]);
        if (!o) {
            return;
        }
        const group = o.group ?? "";
        const okGroup = typeof group === "string" && (API_GROUP.test(group) || (globs && group === "*"));
        const okKind = typeof o.kind === "string" && (KIND.test(o.kind) || (globs && o.kind === "*"));
        if (!okGroup) {
            r.problem(`${k}.group`, o.group, `must be an API group such as apps, or "" for the core group${globs ? ', or "*"' : ""}`);
        }
        if (!okKind) {
            r.problem(`${k}.kind`, o.kind, `must be a Kind such as Deployment${globs ? ', or "*"' : ""}`);
        }
        if (okGroup && okKind && !out.some((gk) => gk.group === group && gk.kind === o.kind)) {
            out.push({ group: group as string, kind: o.kind as string });
        }
    });
    return out;
}

export function ruleList(r: ConfigReader, key: string, value: unknown, keys: readonly string[]): IgnoreRule[] {
    if (value === undefined || value === null) {
        return [];
    }
    if (!Array.isArray(value)) {
        r.problem(key, value, "must be a list of ignoreDifferences rules ({group, kind, jsonPointers, jqPathExpressions, managedFieldsManagers})");
        return [];
    }
    const out: IgnoreRule[] = [];
    value.forEach((v, i) => {
        const rule = readRule(r, `${key}[${i}]`, v, keys);
        if (rule) {
            out.push(rule);
        }
    });
    return out;
}

function readRule(r: ConfigReader, key: string, value: unknown, keys: readonly string[]): IgnoreRule | undefined {
    const o = r.object(key, value, keys);
    if (!o) {
        return undefined;
    }
    const kind = r.requiredString(`${key}.kind`, o.kind, { pattern: /^(\*|[A-Z][A-Za-z0-9]*)$/, describe: 'a Kind such as Deployment, or "*" for every kind' });
    const group = r.string(`${key}.group`, o.group, { pattern: API_GROUP, describe: 'an API group such as apps ("" or unset for the core group)' }, "");
    if (kind === "*" && group !== "") {
        r.problem(`${key}.group`, o.group, 'must be unset with kind "*" (a rule for every kind has no group)');
    }
    const list = (field: string, rule: StringRule) => r.strings(`${key}.${field}`, o[field], rule, [], { min: 0, max: 50 });
    const jsonPointers = list("jsonPointers", {
        pattern: /^\/\S*$/,
        describe: "a JSON pointer such as /spec/replicas (~ escaped as ~0, / as ~1; not ending in /-)",
    });
    const jqPathExpressions = list("jqPathExpressions", {
        pattern: /^\S.*$/,
        describe: "a jq path expression such as .spec.replicas, which gojq compiles inside del() as ArgoCD does",
    });
    const managedFieldsManagers = list("managedFieldsManagers", { pattern: /^\S+$/, describe: "a field manager name" });
    // What ArgoCD's normalizer does with each (argocd/jq.ts): a jq path gojq cannot compile fails
    // every diff the rule applies to; a pointer json-patch cannot follow ignores nothing.
    jqPathExpressions.forEach((q, i) => {
        const why = jqPathProblem(q);
        if (why) {
            r.problem(
                `${key}.jqPathExpressions[${i}]`,
                q,
                `must be a jq path expression ArgoCD can compile (gojq v0.12.19, as del(${q})): ${why}; a broken rule fails the diff of every Application it applies to`,
            );
        }
    });
    jsonPointers.forEach((p, i) => {
        const why = jsonPointerProblem(p);
        if (why) {
            r.problem(`${key}.jsonPointers[${i}]`, p, why);
        }
    });
    if (jsonPointers.length + jqPathExpressions.length + managedFieldsManagers.length === 0) {
        r.problem(key, value, "must set at least one of jsonPointers, jqPathExpressions, managedFieldsManagers");
    }
    const name = r.string(`${key}.name`, o.name, { pattern: DNS_SUBDOMAIN, describe: "an object name" });
    const namespace = r.string(`${key}.namespace`, o.namespace, NAMESPACE_RULE);
    if (!kind) {
        return undefined;
    }
    return { group, kind, ...(name ? { name } : {}), ...(namespace ? { namespace } : {}), jsonPointers, jqPathExpressions, managedFieldsManagers };
}
