/**
 * What the policies reach: their namespace selectors match namespaces, and Kyverno's own
 * `resourceFilters` hide nothing the approval guards must see (ADR-056 D3); ClusterPolicy kind
 * selectors and filters read as Kyverno reads them.
 */
import type { PolicyConfig } from "../../../components/policy/config";
import { namespaceSelector } from "../../../components/policy/builders";
import type { KubeObject } from "../cluster";
import { KYVERNO_CONFIGMAP } from "../access";
import { regulatedNamespaces } from "./rbac";
import { VerifyContext, field, ref } from "../context";
import { CheckResult, Finding, DOCS, outcome, skipped } from "../report";
import { LabelSelector, selects } from "../selectors";

/**
 * Whether a ClusterPolicy kind selector selects argoproj.io/v1alpha1 Rollout itself (no
 * subresource). Kyverno reads `Kind`, `version/Kind`, `group/version/Kind`, each with an optional
 * `/subresource` or `.subresource`, and `*` for any part (kyverno v1.19.0
 * pkg/utils/kube/kind.go `ParseKindSelector`).
 */
export function kindSelectsRollout(selector: string): boolean {
    const [group, ver, kind, sub] = parseKindSelector(selector);
    const is = (pattern: string, value: string) => pattern === "*" || pattern === value;
    return kind !== "" && is(group, "argoproj.io") && is(ver, "v1alpha1") && is(kind, "Rollout") && sub === "";
}

/** kyverno/kyverno pkg/utils/kube/kind.go `ParseKindSelector`: [group, version, kind, subresource], all "" when unreadable. */
export function parseKindSelector(selector: string): [string, string, string, string] {
    const parts = selector.split("/");
    const last = parts.pop() ?? "";
    parts.push(...last.split("."));
    const version = /^(v\d((alpha|beta)\d)?|\*)$/;
    if (parts.length === 1) {
        return ["*", "*", parts[0], ""];
    }
    if (parts.length === 2) {
        if (parts[0] === "*" && parts[1] === "*") {
            return ["*", "*", "*", "*"];
        }
        if (parts[0] === "*" && parts[1].toLowerCase() === parts[1]) {
            return ["*", "*", parts[0], parts[1]];
        }
        return version.test(parts[0]) ? ["*", parts[0], parts[1], ""] : ["*", "*", parts[0], parts[1]];
    }
    if (parts.length === 3) {
        return version.test(parts[0]) ? ["*", parts[0], parts[1], parts[2]] : [parts[0], parts[1], parts[2], ""];
    }
    return parts.length === 4 ? [parts[0], parts[1], parts[2], parts[3]] : ["", "", "", ""];
}

/**
 * Kyverno's wildcard match (kyverno/kyverno ext/wildcard, IGLOU-EU/go-wildcard v1.0.3 `Match`):
 * `*` any run, `?` exactly one character, "" only "".
 */
export function kyvernoWildcard(pattern: string, name: string): boolean {
    const re = pattern
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\?/g, ".");
    return new RegExp(`^${re}$`, "su").test(name);
}

/** One entry of Kyverno's `resourceFilters`: `[kind,namespace,name]`. */
export interface KyvernoResourceFilter {
    text: string;
    group: string;
    version: string;
    kind: string;
    subresource: string;
    namespace: string;
    name: string;
}

/**
 * Kyverno's `resourceFilters` (kyverno/kyverno v1.17.2 pkg/config/types.go `parseKinds`,
 * `newFilter`): each `[...]` is split at commas into kind, namespace and name (missing parts "").
 */
export function parseResourceFilters(text: string): KyvernoResourceFilter[] {
    return [...text.matchAll(/\[([^[\]]*)\]/g)].map((m) => {
        const [kind = "", namespace = "", name = ""] = m[1].split(",");
        const [group, version, k, subresource] = kind === "" ? ["", "", "", ""] : parseKindSelector(kind);
        return { text: m[0], group, version, kind: k, subresource, namespace, name };
    });
}

/**
 * The filter that keeps Kyverno from a request for `gvk` (and its subresource) in `namespace`,
 * whatever the object's name (pkg/config/config.go `ToFilter`): Kyverno admits a filtered request
 * without evaluating any policy (pkg/webhooks/handlers/filter.go).
 */
export function resourceFilterFor(
    filters: readonly KyvernoResourceFilter[],
    gvk: { group: string; version: string; kind: string },
    subresource: string,
    namespace: string,
): KyvernoResourceFilter | undefined {
    return filters.find(
        (f) =>
            kyvernoWildcard(f.group, gvk.group) &&
            kyvernoWildcard(f.version, gvk.version) &&
            kyvernoWildcard(f.kind, gvk.kind) &&
            kyvernoWildcard(f.subresource, subresource) &&
            kyvernoWildcard(f.namespace, namespace),
    );
}

/**
 * What the approval guards must see in a regulated namespace (ADR-056 D3): the Rollout and its
 * status, its ReplicaSets and their scale, its Pods and their ephemeral containers. Kyverno's chart
 * filters ReplicaSets out by default (charts/kyverno values.yaml `config.resourceFilters`:
 * `[ReplicaSet,*,*]`, `[ReplicaSet/?*,*,*]`).
 */
const GUARDED_REQUESTS: readonly { group: string; version: string; kind: string; subresource: string }[] = [
    { group: "argoproj.io", version: "v1alpha1", kind: "Rollout", subresource: "" },
    { group: "argoproj.io", version: "v1alpha1", kind: "Rollout", subresource: "status" },
    { group: "apps", version: "v1", kind: "ReplicaSet", subresource: "" },
    { group: "apps", version: "v1", kind: "ReplicaSet", subresource: "scale" },
    { group: "", version: "v1", kind: "Pod", subresource: "" },
    { group: "", version: "v1", kind: "Pod", subresource: "ephemeralcontainers" },
];

/** Each filter of Kyverno's configuration that hides a guarded request in a regulated namespace. */
export function filteredGuardRequests(resourceFilters: string, namespaces: readonly string[]): Finding[] {
    const filters = parseResourceFilters(resourceFilters);
    const out = new Map<string, string[]>();
    for (const ns of namespaces) {
        for (const r of GUARDED_REQUESTS) {
            const f = resourceFilterFor(filters, r, r.subresource, ns);
            if (f) {
                out.set(f.text, [...(out.get(f.text) ?? []), `${r.kind}${r.subresource ? `/${r.subresource}` : ""} in ${ns}`]);
            }
        }
    }
    return [...out].map(([text, hidden]) => ({
        object: `resourceFilters ${text}`,
        found: `Kyverno admits ${[...new Set(hidden)].join(", ")} without asking a policy, so the approval guards never see them; remove it (Kyverno chart: config.resourceFiltersExclude: ["${text.replace(/"/g, '\\"')}"])`,
    }));
}

/**
 * The namespace selectors the policies are written with, each as the policies apply it (narrowed to
 * the tenant namespaces and minus the excluded ones: components/policy/builders.ts `namespaceSelector`):
 * the tenant namespaces, prod, and regulated where the stack has it.
 */
export function configuredSelectors(cfg: PolicyConfig): { key: string; given: unknown; selector: LabelSelector }[] {
    return [
        { key: "policy.tenantNamespaceSelector", given: cfg.tenantNamespaceSelector, selector: namespaceSelector(cfg, "tenant") },
        { key: "policy.prodNamespaceLabels", given: cfg.prodNamespaceLabels, selector: namespaceSelector(cfg, "prod") },
        ...(cfg.regulated
            ? [{ key: "policy.regulated.namespaceLabels", given: cfg.regulated.namespaceLabels, selector: namespaceSelector(cfg, "regulated") }]
            : []),
    ];
}

/** The labels the cluster's namespaces carry, most common first, at most `limit` of them. */
export function namespaceLabelsSeen(namespaces: readonly KubeObject[], limit = 12): string {
    const counts = new Map<string, number>();
    for (const n of namespaces) {
        for (const [k, v] of Object.entries(n.metadata?.labels ?? {})) {
            // Every namespace carries its own name: saying so names no label the platform chose.
            if (k !== "kubernetes.io/metadata.name") {
                counts.set(`${k}=${v}`, (counts.get(`${k}=${v}`) ?? 0) + 1);
            }
        }
    }
    const seen = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    if (seen.length === 0) {
        return "no namespace carries a label but its name";
    }
    const shown = seen
        .slice(0, limit)
        .map(([l, n]) => `${l} (${n})`)
        .join(", ");
    return `the namespaces carry ${shown}${seen.length > limit ? `, and ${seen.length - limit} more` : ""}`;
}

/**
 * A selector that matches no namespace switches every guard it scopes off without a word (a
 * typo'd label key, or someone else's labels): the policies admit everything there is.
 */
export function unmatchedSelectors(cfg: PolicyConfig, namespaces: readonly KubeObject[]): Finding[] {
    const labels = namespaceLabelsSeen(namespaces);
    return configuredSelectors(cfg)
        .filter((s) => !namespaces.some((n) => selects(s.selector, n.metadata?.labels ?? {})))
        .map((s) => ({
            object: s.key,
            found: `${JSON.stringify(s.given)} matches none of the cluster's ${namespaces.length} namespaces (among the tenant namespaces, minus policy.excludeNamespaces); ${labels}`,
        }));
}

/** `kyverno.resource-filters`: the approval guards see only what Kyverno's configuration lets it see. */
export async function resourceFiltersCheck({ config, cluster, options }: VerifyContext, namespaces: readonly KubeObject[]): Promise<CheckResult> {
    const what = "Kyverno's resourceFilters let the approval guards see a regulated namespace's Rollouts, ReplicaSets and Pods";
    const regulated = regulatedNamespaces(config, namespaces);
    if (!config.policy.regulated) {
        return skipped("kyverno.resource-filters", what, DOCS.kyverno, "no policy.regulated in the stack");
    }
    if (regulated.length === 0) {
        return skipped("kyverno.resource-filters", what, DOCS.kyverno, "no namespace of this cluster matches policy.regulated.namespaceLabels");
    }
    const configMap = ref("ConfigMap", options.kyvernoNamespace, KYVERNO_CONFIGMAP);
    const cm = await cluster.get(`/api/v1/namespaces/${options.kyvernoNamespace}/configmaps/${KYVERNO_CONFIGMAP}`);
    const findings: Finding[] = cm
        ? filteredGuardRequests(String(field(cm, "data", "resourceFilters") ?? ""), regulated).map((f) => ({ ...f, object: `${configMap} ${f.object}` }))
        : [
              {
                  object: configMap,
                  found: `not found: Kyverno's configuration (its controllers' INIT_CONFIG) is read here; another namespace? pass --kyverno-namespace`,
              },
          ];
    return outcome("kyverno.resource-filters", what, DOCS.kyverno, findings, `regulated namespaces: ${regulated.join(", ")}`);
}
