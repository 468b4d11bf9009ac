/**
 * Label selectors as the API server evaluates them (apimachinery metav1.LabelSelector:
 * matchLabels and matchExpressions are ANDed; In, NotIn, Exists, DoesNotExist; NotIn and
 * DoesNotExist also match a pod without the key).
 */

export interface LabelSelector {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export function selectorMatches(selector: LabelSelector, labels: Record<string, string>): boolean {
    for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
        if (labels[k] !== v) {
            return false;
        }
    }
    for (const e of selector.matchExpressions ?? []) {
        const has = Object.prototype.hasOwnProperty.call(labels, e.key);
        const values = e.values ?? [];
        const ok =
            e.operator === "In" ? has && values.includes(labels[e.key])
            : e.operator === "NotIn" ? !has || !values.includes(labels[e.key])
            : e.operator === "Exists" ? has
            : e.operator === "DoesNotExist" ? !has
            : false;
        if (!ok) {
            return false;
        }
    }
    return true;
}

/**
 * Whether a policy/v1 PodDisruptionBudget's selector selects pods with `labels`. In policy/v1 an
 * empty selector (`{}`) selects every pod of the namespace and a missing one selects none
 * (Kubernetes api policy/v1 PodDisruptionBudgetSpec.selector).
 */
export function pdbSelects(selector: LabelSelector | undefined | null, labels: Record<string, string>): boolean {
    if (selector === undefined || selector === null) {
        return false;
    }
    return selectorMatches(selector, labels);
}
