/**
 * Label selectors as the API server evaluates them: the program's own `selects`
 * (components/policy/selectors.ts), plus what a PodDisruptionBudget's selector means when absent.
 */
import type { LabelSelector } from "../../components/policy/config";
import { selects } from "../../components/policy/selectors";

export type { LabelSelector };

/**
 * Whether a policy/v1 PodDisruptionBudget's selector selects pods with `labels`. In policy/v1 an
 * empty selector (`{}`) selects every pod of the namespace and a missing one selects none
 * (Kubernetes api policy/v1 PodDisruptionBudgetSpec.selector).
 */
export function pdbSelects(selector: LabelSelector | undefined | null, labels: Record<string, string>): boolean {
    if (selector === undefined || selector === null) {
        return false;
    }
    return selects(selector, labels);
}

export { selects };
