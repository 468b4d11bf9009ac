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
        if (!out.some((o) => JSON.stringify(o) === JSON.stringify(r))) {
            out.push(r);
        }
    }
    return out.length > 0 ? { matchExpressions: out } : {};
}

/** Whether `selector` matches a set of labels (the API server's semantics). */
export function selects(selector: Readonly<LabelSelector>, labels: Readonly<Record<string, string>>): boolean {
    return requirements(selector).every((r) => {
        const has = Object.prototype.hasOwnProperty.call(labels, r.key);
        switch (r.operator) {
            case "In":
                return has && (r.values ?? []).includes(labels[r.key]);
            case "NotIn":
                return !has || !(r.values ?? []).includes(labels[r.key]);
            case "Exists":
                return has;
            case "DoesNotExist":
                return !has;
        }
    });
}

/** The label key no set of labels can satisfy in `selector`, if any. */
export function contradiction(selector: Readonly<LabelSelector>): string | undefined {
    const byKey = new Map<string, Requirement[]>();
    for (const r of requirements(selector)) {
        byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
    }
    for (const [key, reqs] of byKey) {
        const absent = reqs.some((r) => r.operator === "DoesNotExist");
        const present = reqs.some((r) => r.operator === "In" || r.operator === "Exists");
        if (absent && present) {
            return key;
        }
        const allowed = reqs.filter((r) => r.operator === "In").map((r) => new Set(r.values));
        if (allowed.length > 0) {
            const denied = new Set(reqs.filter((r) => r.operator === "NotIn").flatMap((r) => r.values ?? []));
            const candidates = [...allowed[0]].filter((v) => allowed.every((s) => s.has(v)) && !denied.has(v));
            if (candidates.length === 0) {
                return key;
            }
        }
    }
    return undefined;
}
