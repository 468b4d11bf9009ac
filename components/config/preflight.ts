import {
    HTTPROUTE_WEIGHTS_RULE,
    RuleScope,
    SERVICE,
    canaryRuleReasons,
    expandAllKinds,
    kindLabel,
    labelConditionalRouteRule,
    rolloutArrayPathReasons,
} from "../argocd/ignoreRules";
import { TENANT_SYNC_OPTIONS, conflictingSyncOptions } from "../argocd/syncOptions";
import { allOf, contradiction } from "../policy/selectors";
import type { ArgoCdConfig, GroupKind, IgnoreRule, PolicyConfig } from "./admission";
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

/** The argocd section's traps. `raw` is the section as given. */
export function preflightArgoCd(r: ConfigReader, cfg: ArgoCdConfig, raw: Plain): void {
    if (!cfg.local) {
        // The objects live in the namespace of the ArgoCD that syncs this cluster, on its cluster.
        for (const key of ["projects", "applicationSets", "ignoreDifferences", "rbac"].filter((k) => raw[k] !== undefined)) {
            r.problem(
                `argocd.${key}`,
                raw[key],
                `only applies where ArgoCD runs: argocd.runsOn is ${cfg.runsOn}, so list this cluster's ArgoCD objects in the stack of cluster ${cfg.runsOn}, whose ArgoCD syncs its Applications`,
            );
        }
        return;
    }
    checkRules(r, "argocd.ignoreDifferences", cfg.ignoreDifferences, cfg.allKinds, "system");
    for (const appSet of cfg.applicationSets) {
        const key = `argocd.applicationSets.${appSet.name}`;
        checkRules(r, `${key}.ignoreDifferences`, appSet.ignoreDifferences, cfg.allKinds, "application");
        for (const option of conflictingSyncOptions(appSet.syncOptions)) {
            r.problem(
                `${key}.syncOptions`,
                option,
                `must not override ${TENANT_SYNC_OPTIONS.join(" or ")}: ignoreDifferences alone only hides drift, and a sync triggered by any other change overwrites the plugin's weights and the controller's selector key unless RespectIgnoreDifferences=true (ADR-056 as-built 2026-06-27, correction to prerequisite #3)`,
            );
        }
    }
    for (const project of cfg.projects.filter((p) => p.owner === "addon")) {
        if (!project.namespaceResources.some((gk) => covers(gk, SERVICE))) {
            r.problem(
                `argocd.projects.${project.name}.namespaceResources`,
                project.namespaceResources.map(kindLabel),
                'must list every namespaced kind the project\'s Applications sync, at least {group: "", kind: Service} for the stable and canary Services (ADR-056 D4): the program owns the whole whitelist and adds only the Rollout kinds',
            );
        }
    }
    const approver = cfg.rbac.approverRole;
    if (approver !== undefined && cfg.rbac.deployerRoles.includes(approver)) {
        r.problem("argocd.rbac.deployerRoles", cfg.rbac.deployerRoles, `must not include the approver role ${approver}: the deployer is never the approver (ADR-056 D3, ADR-049)`);
    }
    if (approver !== undefined && cfg.rbac.projects.length === 0) {
        r.problem("argocd.rbac.projects", [], "must name at least one AppProject with argocd.rbac.approverRole (or set argocd.projects): grants are scoped per project, never to every project");
    }
}

/** ArgoCD whitelists match `*` as a glob. */
function covers(entry: GroupKind, wanted: Readonly<GroupKind>): boolean {
    return (entry.group === "*" || entry.group === wanted.group) && (entry.kind === "*" || entry.kind === wanted.kind);
}

function checkRules(r: ConfigReader, key: string, rules: readonly IgnoreRule[], allKinds: readonly GroupKind[], scope: RuleScope): void {
    rules.forEach((rule, i) => {
        for (const expanded of expandAllKinds([rule], allKinds)) {
            const reasons = rolloutArrayPathReasons(expanded);
            if (reasons.length > 0) {
                const via = rule.kind === "*" ? " (a rule for every kind reaches it because argocd.allKinds lists argoproj.io/Rollout)" : "";
                r.problem(
                    `${key}[${i}]`,
                    rule,
                    `must not reach argoproj.io/Rollout with an array path${via}: ${reasons.join("; ")}. With RespectIgnoreDifferences ArgoCD syncs a CRD with a JSON merge patch that replaces whole arrays, silently keeping the live containers[].image while reporting "synced" (ADR-056 as-built 2026-07-14; argo-cd #23283). Only scalar paths such as /spec/replicas are safe on a Rollout`,
                );
            }
        }
        const conditional = labelConditionalRouteRule(rule);
        if (conditional !== undefined) {
            r.problem(
                `${key}[${i}]`,
                conditional,
                `must not make the HTTPRoute weight rule conditional on a label: the plugin's in-progress-label rule keeps apps OutOfSync forever on ArgoCD 3.x (rollouts-plugin-trafficrouter-gatewayapi #208); the tenant ApplicationSets already ignore ${HTTPROUTE_WEIGHTS_RULE.jqPathExpressions.join(", ")}, whose condition git and live share (ADR-056 as-built 2026-06-26)`,
            );
        }
        const narrow = [...new Set(expandAllKinds([rule], allKinds).flatMap((expanded) => canaryRuleReasons(expanded, scope)))];
        if (narrow.length > 0) {
            r.problem(`${key}[${i}]`, rule, `must not undo the narrow canary rules: ${narrow.join("; ")} (ADR-056 as-built #871; argo-cd controller/sync.go normalizeTargetResources)`);
        }
    });
}
