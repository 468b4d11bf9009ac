import { ConfigReader, Plain, isPlainObject } from "../config/reader";
import { allOf, contradiction } from "./selectors";
import type { PolicyConfig, ServiceAccountRef } from "./config/types";

/**
 * The policy section's preflight (ADR-056 D3, D8): after the section is read, its values are
 * checked against the traps the admission engines have, on the same reader, so every problem
 * of the stack file is reported together.
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
        r.problem(
            "policy.excludeNamespaces",
            raw.excludeNamespaces,
            "must not list default: workloads are refused there, and excluding it turns that policy off (ADR-056 D2)",
        );
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
    for (const [key, text] of kyvernoVariables(cfg)) {
        r.problem(
            key,
            text,
            "must not contain {{: every configured string that reaches a policy body is copied into it, and in a kyverno.io/v1 ClusterPolicy Kyverno substitutes {{ ... }} as a variable (a group name {{ request.userInfo.groups[0] }} would make every user with a group an approver)",
        );
    }
    const regulated = cfg.regulated;
    if (regulated) {
        const both = regulated.approverGroups.filter((g) => regulated.deployerGroups.includes(g));
        if (both.length > 0) {
            r.problem(
                "policy.regulated.deployerGroups",
                regulated.deployerGroups,
                `must not include an approver group (${both.join(", ")}): the deployer is never the approver (ADR-056 D3, ADR-049)`,
            );
        }
    }
}

/**
 * Every configured string of the section that holds Kyverno's variable marker `{{`, by its key.
 * The policy bodies copy these strings (group names, label keys and values, namespaces, topology
 * keys), and a ClusterPolicy substitutes `{{ ... }}` anywhere in its rules (kyverno/kyverno
 * `pkg/engine/variables/vars.go` at v1.17.2, `SubstituteAll`). Refused whatever the API, so a later
 * switch of `policy.kyvernoApi` cannot turn a name into a variable. The keys follow the stack file.
 */
export function kyvernoVariables(cfg: PolicyConfig): [key: string, value: string][] {
    const found: [string, string][] = [];
    const walk = (key: string, v: unknown): void => {
        if (typeof v === "string") {
            if (v.includes("{{")) {
                found.push([key, v]);
            }
        } else if (Array.isArray(v)) {
            v.forEach((x, i) => walk(`${key}[${i}]`, x));
        } else if (isPlainObject(v)) {
            for (const [k, x] of Object.entries(v)) {
                if (k.includes("{{")) {
                    found.push([`${key}.${k}`, k]);
                }
                walk(`${key}.${k}`, x);
            }
        }
    };
    const { regulated, ...rest } = cfg;
    walk("policy", rest);
    if (regulated) {
        // Stack-file shape: ServiceAccounts as <namespace>/<name>.
        const ref = (a: ServiceAccountRef) => `${a.namespace}/${a.name}`;
        walk("policy.regulated", {
            ...regulated,
            gitopsServiceAccounts: regulated.gitopsServiceAccounts.map(ref),
            actionServiceAccounts: regulated.actionServiceAccounts.map(ref),
        });
    }
    return found;
}
