import type { LabelSelector, SelectorOperator } from "./config/selector";

/** A label selector requirement (`metav1.LabelSelectorRequirement`). */
export type Requirement = { key: string; operator: SelectorOperator; values?: string[] };

/** A selector's matchLabels as the equivalent `In` requirements (`metav1.LabelSelectorAsSelector`). */
export function requirements(s: Readonly<LabelSelector>): Requirement[] {
    return [
        ...Object.entries(s.matchLabels ?? {}).map(([key, value]): Requirement => ({ key, operator: "In", values: [value] })),
        ...(s.matchExpressions ?? []).map((e): Requirement => ({ key: e.key, operator: e.operator, ...(e.values ? { values: [...e.values] } : {}) })),
    ];
}

/**
 * The selector that matches what every one of `selectors` matches. Written as requirements only:
 * merging matchLabels would let one selector's value for a key overwrite another's, where the
 * conjunction of requirements keeps both (and then matches nothing, which `contradiction` reports).
 */
export function allOf(...selectors: (Readonly<LabelSelector> | undefined)[]): LabelSelector {
    const out: Requirement[] = [];
    for (const r of selectors.flatMap((s) => (s ? requirements(s) : []))) {
        if (!out.some((o) => JSON.stringify(o) === JSON.stringify(r))) out.push(r);
    }
    return out.length > 0 ? { matchExpressions: out } : {};
}

/** Whether `selector` matches a set of labels (the API server's semantics). */
export function selects(selector: Readonly<LabelSelector>, labels: Readonly<Record<string, string>>): boolean {
    return requirements(selector).every((r) => {
        const has = Object.prototype.hasOwnProperty.call(labels, r.key);
        const among = has && (r.values ?? []).includes(labels[r.key]);
        return r.operator === "In" ? among : r.operator === "NotIn" ? !among : r.operator === "Exists" ? has : !has;
    });
}

/**
 * The label key no set of labels can satisfy in `selector`, if any. Keys are independent, and a
 * value no requirement names behaves as any other such value, so trying the key absent, each value
 * named and one value unnamed decides it.
 */
export function contradiction(selector: Readonly<LabelSelector>): string | undefined {
    const all = requirements(selector);
    return all
        .map((r) => r.key)
        .find((key) => {
            const mine = all.filter((r) => r.key === key);
            const tries = [undefined, "\u0000", ...mine.flatMap((r) => r.values ?? [])];
            return !tries.some((v) => selects({ matchExpressions: mine }, v === undefined ? {} : { [key]: v }));
        });
}
