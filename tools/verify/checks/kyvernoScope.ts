/** What the policies reach: namespace selectors that match, and `resourceFilters` that hide nothing from the guards (ADR-056 D3). */
import { type PolicyConfig } from "../../../components/policy/config";
import { absent } from "../../../components/config/reader";
import { namespaceSelector } from "../../../components/policy/builders";
import type { KubeObject } from "../cluster";
import { KYVERNO_CONFIGMAP } from "../access";
import { field, ref } from "../context";
import type { Finding } from "../report";
import { LabelSelector, selects } from "../selectors";

/** Whether a ClusterPolicy kind selector selects argoproj.io/v1alpha1 Rollout itself (no subresource). */
export function kindSelectsRollout(selector: string): boolean {
    const [group, ver, kind, sub] = parseKindSelector(selector);
    const is = (pattern: string, value: string) => pattern === "*" || pattern === value;
    return kind !== "" && is(group, "argoproj.io") && is(ver, "v1alpha1") && is(kind, "Rollout") && sub === "";
}

/** Kyverno's kind selector as [group, version, kind, subresource], "" when unreadable (kyverno v1.19.0 pkg/utils/kube/kind.go). */
export function parseKindSelector(selector: string): [string, string, string, string] {
    const parts = selector.split("/");
    parts.push(...(parts.pop() ?? "").split("."));
    const version = /^(v\d((alpha|beta)\d)?|\*)$/;
    const [a, b, c, d] = parts;
    switch (parts.length) {
        case 1:
            return ["*", "*", a, ""];
        case 2:
            if (a === "*" && b === "*") return ["*", "*", "*", "*"];
            return version.test(a) && !(a === "*" && b.toLowerCase() === b) ? ["*", a, b, ""] : ["*", "*", a, b];
        case 3:
            return version.test(a) ? ["*", a, b, c] : [a, b, c, ""];
        case 4:
            return [a, b, c, d];
        default:
            return ["", "", "", ""];
    }
}

/** Kyverno's wildcard (ext/wildcard): `*` any run, `?` exactly one character. */
export const kyvernoWildcard = (pattern: string, name: string): boolean =>
    new RegExp(
        `^${pattern
            .replace(/[.+^${}()|[\]\\]/g, "\\$&")
            .replace(/\*/g, ".*")
            .replace(/\?/g, ".")}$`,
        "su",
    ).test(name);

/** What the approval guards must see in a regulated namespace: a Rollout, a ReplicaSet, a Pod and the subresources they match. */
const GUARDED = [
    ["argoproj.io", "v1alpha1", "Rollout", ""],
    ["argoproj.io", "v1alpha1", "Rollout", "status"],
    ["apps", "v1", "ReplicaSet", ""],
    ["apps", "v1", "ReplicaSet", "scale"],
    ["", "v1", "Pod", ""],
    ["", "v1", "Pod", "ephemeralcontainers"],
] as const;

/** Each `resourceFilters` entry hiding a guarded request in a regulated namespace from every policy (kyverno v1.17.2 pkg/config `ToFilter`). */
export function filteredGuardRequests(resourceFilters: string, namespaces: readonly string[]): Finding[] {
    return [...resourceFilters.matchAll(/\[([^[\]]*)\]/g)].flatMap(([text, body]) => {
        const [kind = "", namespace = ""] = body.split(",");
        const parsed = kind === "" ? ["", "", "", ""] : parseKindSelector(kind);
        const hidden = namespaces.flatMap((ns) =>
            GUARDED.filter((r) => kyvernoWildcard(namespace, ns) && parsed.every((p, i) => kyvernoWildcard(p, r[i]))).map(
                ([, , k, sub]) => `${k}${sub ? `/${sub}` : ""} in ${ns}`,
            ),
        );
        return hidden.length === 0
            ? []
            : [
                  {
                      object: `resourceFilters ${text}`,
                      found: `Kyverno admits ${hidden.join(", ")} without asking a policy, so the approval guards never see them; remove it (Kyverno chart: config.resourceFiltersExclude: ["${text.replace(/"/g, '\\"')}"])`,
                  },
              ];
    });
}

/** The namespace selectors the policies are written with, each as the policies apply it (components/policy/builders.ts). */
export function configuredSelectors(cfg: PolicyConfig): { key: string; given: unknown; selector: LabelSelector }[] {
    return [
        { key: "policy.tenantNamespaceSelector", given: cfg.tenantNamespaceSelector, selector: namespaceSelector(cfg, "tenant") },
        ...(absent(cfg, "prod") ? [] : [{ key: "policy.prodNamespaceLabels", given: cfg.prodNamespaceLabels, selector: namespaceSelector(cfg, "prod") }]),
        ...(cfg.regulated
            ? [{ key: "policy.regulated.namespaceLabels", given: cfg.regulated.namespaceLabels, selector: namespaceSelector(cfg, "regulated") }]
            : []),
    ];
}

/** The labels the cluster's namespaces carry, most common first, at most `limit` of them. */
export function namespaceLabelsSeen(namespaces: readonly KubeObject[], limit = 12): string {
    const counts = new Map<string, number>();
    // Every namespace carries its own name: that names no label the platform chose.
    for (const [k, v] of namespaces.flatMap((n) => Object.entries(n.metadata?.labels ?? {})).filter(([k]) => k !== "kubernetes.io/metadata.name")) {
        counts.set(`${k}=${v}`, (counts.get(`${k}=${v}`) ?? 0) + 1);
    }
    const seen = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    if (seen.length === 0) return "no namespace carries a label but its name";
    const more = seen.length > limit ? `, and ${seen.length - limit} more` : "";
    return `the namespaces carry ${seen
        .slice(0, limit)
        .map(([l, n]) => `${l} (${n})`)
        .join(", ")}${more}`;
}

/** A selector that matches no namespace switches every guard it scopes off without a word. */
export function unmatchedSelectors(cfg: PolicyConfig, namespaces: readonly KubeObject[]): Finding[] {
    return configuredSelectors(cfg)
        .filter((s) => !namespaces.some((n) => selects(s.selector, n.metadata?.labels ?? {})))
        .map((s) => ({
            object: s.key,
            found: `${JSON.stringify(s.given)} matches none of the cluster's ${namespaces.length} namespaces (among the tenant namespaces, minus policy.excludeNamespaces); ${namespaceLabelsSeen(namespaces)}`,
        }));
}

/** `kyverno.resource-filters`' findings, from Kyverno's ConfigMap (its controllers' INIT_CONFIG). */
export function resourceFilterFindings(cm: KubeObject | undefined, kyvernoNamespace: string, regulated: readonly string[]): Finding[] {
    const configMap = ref("ConfigMap", kyvernoNamespace, KYVERNO_CONFIGMAP);
    if (!cm) {
        return [
            {
                object: configMap,
                found: "not found: Kyverno's configuration (its controllers' INIT_CONFIG) is read here; another namespace? pass --kyverno-namespace",
            },
        ];
    }
    return filteredGuardRequests(String(field(cm, "data", "resourceFilters") ?? ""), regulated).map((f) => ({ ...f, object: `${configMap} ${f.object}` }));
}
