import { allOf, contradiction } from "../policy/selectors";
import type { PolicyConfig } from "./admission";
import { ConfigReader, Plain } from "./reader";

/**
 * The preflight: the stack's own inputs checked against the traps ADR-056 records, before any
 * resource is declared. Each problem goes to the same reader as the type checks, so a stack file
 * is fixed in one pass, and each message names the ADR section (or upstream issue) it comes from.
 */

/** The policy section's traps. `raw` is the section as given, for values the reader set aside. */
export function preflightPolicy(r: ConfigReader, cfg: PolicyConfig, raw: Plain): void {
    if (typeof raw.pdbMaxUnavailable === "string" && /%\s*$/.test(raw.pdbMaxUnavailable)) {
        r.problem(
            "policy.pdbMaxUnavailable",
            raw.pdbMaxUnavailable,
            "must be a whole number of pods, not a percentage: a percentage budget is unreliable for Rollout-owned pools, whose stable and canary pods share one budget (ADR-056 D8)",
        );
    } else if (cfg.pdbMaxUnavailable >= cfg.prodMinReplicas) {
        r.problem(
            "policy.pdbMaxUnavailable",
            raw.pdbMaxUnavailable ?? cfg.pdbMaxUnavailable,
            `must be less than policy.prodMinReplicas (${cfg.prodMinReplicas}): a budget as large as the prod floor lets one drain evict every pod of a prod workload (ADR-056 D8)`,
        );
    }
    if (cfg.excludeNamespaces.includes("default")) {
        r.problem("policy.excludeNamespaces", raw.excludeNamespaces, "must not list default: workloads are refused there, and excluding it turns that policy off (ADR-056 D2)");
    }
    // Each narrower selector is ANDed with the tenant selector: a contradiction silently turns a policy off.
    const narrower: [string, Record<string, string> | undefined, string][] = [
        ["policy.prodNamespaceLabels", cfg.prodNamespaceLabels, "the prod replica floor would apply nowhere"],
        ["policy.regulated.namespaceLabels", cfg.regulated?.namespaceLabels, "the regulated approval guard would apply nowhere"],
    ];
    for (const [key, labels, consequence] of narrower) {
        const key2 = labels ? contradiction(allOf(cfg.tenantNamespaceSelector, { matchLabels: labels })) : undefined;
        if (key2 !== undefined) {
            r.problem(key, labels, `must be satisfiable together with policy.tenantNamespaceSelector (label ${key2} cannot meet both): ${consequence}`);
        }
    }
    const regulated = cfg.regulated;
    if (regulated) {
        const both = regulated.approverGroups.filter((g) => regulated.deployerGroups.includes(g));
        if (both.length > 0) {
            r.problem("policy.regulated.deployerGroups", regulated.deployerGroups, `must not include an approver group (${both.join(", ")}): the deployer is never the approver (ADR-056 D3, ADR-049)`);
        }
    }
}
