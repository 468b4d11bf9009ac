import { ConfigReader, LABEL_KEY, LABEL_VALUE, isPlainObject } from "../../config/reader";

/** Label selectors in the `policy` section: their type, schema and reader, checked as the API server checks one. */

export { LABEL_KEY } from "../../config/reader";
const SELECTOR_KEYS = ["matchLabels", "matchExpressions"];

export type SelectorOperator = "In" | "NotIn" | "Exists" | "DoesNotExist";
export const SELECTOR_OPERATORS: readonly SelectorOperator[] = ["In", "NotIn", "Exists", "DoesNotExist"];

/** A Kubernetes label selector (`metav1.LabelSelector`). */
export interface LabelSelector {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: SelectorOperator; values?: string[] }[];
}

/** A label selector's schema (`metav1.LabelSelector`), for the stack file's schema. */
export const SELECTOR_SCHEMA = {
    type: "object",
    additionalProperties: false,
    properties: {
        matchLabels: { type: "object", additionalProperties: { type: "string" } },
        matchExpressions: {
            type: "array",
            items: {
                type: "object",
                additionalProperties: false,
                required: ["key", "operator"],
                properties: { key: { type: "string" }, operator: { enum: [...SELECTOR_OPERATORS] }, values: { type: "array", items: { type: "string" } } },
            },
        },
    },
};

/** A namespace label selector, checked as the API server checks one (`metav1.LabelSelector`). */
export function readSelector(r: ConfigReader, key: string, value: unknown): LabelSelector {
    const o = r.object(key, value, SELECTOR_KEYS);
    if (!o) return {};
    const out: LabelSelector = {};
    if (o.matchLabels !== undefined) out.matchLabels = r.labels(`${key}.matchLabels`, o.matchLabels);
    if (o.matchExpressions !== undefined) {
        if (!Array.isArray(o.matchExpressions)) {
            r.problem(`${key}.matchExpressions`, o.matchExpressions, "must be a list of {key, operator, values}");
        } else {
            out.matchExpressions = [];
            o.matchExpressions.forEach((e, i) => {
                const k = `${key}.matchExpressions[${i}]`;
                const x = r.object(k, e, ["key", "operator", "values"]);
                if (!x) return;
                const labelKey = r.requiredString(`${k}.key`, x.key, { pattern: LABEL_KEY, describe: "a label key such as platform.example/tier" });
                const operator = r.requiredString(`${k}.operator`, x.operator, { oneOf: SELECTOR_OPERATORS, describe: "" }) as SelectorOperator | undefined;
                const values = r.strings(`${k}.values`, x.values, { pattern: LABEL_VALUE, describe: "a label value" }, [], { min: 0, max: 50 });
                const needsValues = operator === "In" || operator === "NotIn";
                if (operator && needsValues !== values.length > 0) {
                    // The API server's rule for selector requirements.
                    r.problem(`${k}.values`, x.values, needsValues ? `must list at least one value with ${operator}` : `must be empty with ${operator}`);
                }
                if (labelKey && operator) out.matchExpressions!.push({ key: labelKey, operator, ...(needsValues ? { values } : {}) });
            });
        }
    }
    if (Object.keys(out.matchLabels ?? {}).length === 0 && (out.matchExpressions ?? []).length === 0) {
        r.problem(key, value, "must select tenant namespaces by at least one label (an empty selector matches every namespace)");
    }
    return out;
}

/** Labels that must select something narrower than every namespace: an empty selector matches every namespace. */
export function emptyLabels(r: ConfigReader, key: string, value: unknown, what: string): void {
    if (isPlainObject(value) && Object.keys(value).length === 0) {
        r.problem(key, value, `must name at least one label that ${what} (an empty selector matches every namespace)`);
    }
}
