/** Label selectors as the API server evaluates them: the program's own `selects` (components/policy/selectors.ts). */
import type { LabelSelector } from "../../components/policy/config";
import { selects } from "../../components/policy/selectors";

export { type LabelSelector, selects };

/** A policy/v1 PodDisruptionBudget's selector: an empty one selects every pod of the namespace, a missing one none (PodDisruptionBudgetSpec.selector). */
export const pdbSelects = (selector: LabelSelector | undefined | null, labels: Record<string, string>): boolean =>
    Boolean(selector) && selects(selector!, labels);
