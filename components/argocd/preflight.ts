import { readSection, type Fields } from "../config/declare";
import { ConfigReader, Plain, isPlainObject } from "../config/reader";
import {
    BUILTIN_KINDS,
    FROZEN_ROLLOUT,
    GroupKind,
    IgnoreRule,
    RuleScope,
    SERVICE,
    canaryRuleReasons,
    expandAllKinds,
    kindLabel,
    rolloutArrayPathReasons,
} from "./ignoreRules";
import { globMatch } from "./keptObjects";
import { TENANT_SYNC_OPTIONS, conflictingSyncOptions } from "./syncOptions";
import { APP_RULE_FIELDS, ARGOCD_FIELDS, ArgoCdConfig, ArgoRbacConfig, RegulatedGroups, SYSTEM_RULE_FIELDS } from "./config/section";
import type { ArgoObjectOwner } from "./ownership";

/** ignoreDifferences rules, each read with its declared fields; a rule names at least one path, and no group with kind "*". */
function ruleList(r: ConfigReader, key: string, value: unknown, fields: Fields): IgnoreRule[] {
    if (!Array.isArray(value)) {
        if (value !== undefined && value !== null) {
            r.problem(key, value, "must be a list of ignoreDifferences rules ({group, kind, jsonPointers, jqPathExpressions, managedFieldsManagers})");
        }
        return [];
    }
    return value.flatMap((item, i) => {
        const rule = readSection(r, `${key}[${i}]`, fields, item) as (IgnoreRule & { raw: Plain }) | undefined;
        if (rule?.kind === "*" && rule.group !== "") {
            r.problem(`${key}[${i}].group`, rule.group, 'must be unset with kind "*" (a rule for every kind has no group)');
        }
        if (rule && !["jsonPointers", "jqPathExpressions", "managedFieldsManagers"].some((k) => rule.raw[k] !== undefined && rule.raw[k] !== null)) {
            r.problem(`${key}[${i}]`, item, "must set at least one of jsonPointers, jqPathExpressions, managedFieldsManagers");
        }
        return rule?.kind ? [{ ...rule }] : [];
    });
}

/** The {group, kind} entries read with a kind. */
const kinds = (list: { group: string; kind?: string }[]): GroupKind[] => list.flatMap((gk) => (gk.kind ? [{ group: gk.group, kind: gk.kind }] : []));

/**
 * `clusterName`: this stack's `cluster.name`, where ArgoCD runs unless `argocd.runsOn` says
 * otherwise. `regulated`: the stack's `policy.regulated`, when set.
 */
export function readArgoCd(r: ConfigReader, value: unknown, clusterName: string | undefined, regulated?: RegulatedGroups): ArgoCdConfig | undefined {
    const { enabled, ...rest } = isPlainObject(value) ? value : { enabled: undefined };
    if (enabled !== undefined) {
        r.problem(
            "argocd.enabled",
            enabled,
            "is replaced by argocd.runsOn: this cluster's name (cluster.name) when its own ArgoCD syncs its Applications, or the name of the cluster whose ArgoCD does",
        );
    }
    const a = readSection(r, "argocd", ARGOCD_FIELDS, isPlainObject(value) ? rest : value);
    if (!a) return undefined;
    const runsOn = a.runsOn ?? clusterName ?? "";
    const local = clusterName === undefined || runsOn === clusterName;
    const raw = a.raw;
    /** Settings that only apply when the stack patches the object (owner: addon). */
    const ownedOnly = (key: string, owner: ArgoObjectOwner, entry: unknown, keys: readonly string[]) => {
        for (const k of keys.filter((k) => owner === "external" && isPlainObject(entry) && entry[k] !== undefined)) {
            r.problem(
                `${key}.${k}`,
                (entry as Plain)[k],
                `only applies with ${key}.owner: addon; another owner keeps this object (owner: external, the default), so the stack reads and checks it and declares nothing on it`,
            );
        }
    };
    const projects = a.projects.map(({ name, value: p }) => {
        ownedOnly(`argocd.projects.${name}`, p.owner, (raw.projects as Plain)[name], ["namespaceResources"]);
        return { name, owner: p.owner, namespaceResources: kinds(p.namespaceResources) };
    });
    const applicationSets = a.applicationSets.map(({ name, value: s }) => {
        const key = `argocd.applicationSets.${name}`;
        const entry = (raw.applicationSets as Plain)[name];
        ownedOnly(key, s.owner, entry, ["syncOptions", "ignoreDifferences"]);
        const ignoreDifferences = ruleList(r, `${key}.ignoreDifferences`, isPlainObject(entry) ? entry.ignoreDifferences : undefined, APP_RULE_FIELDS);
        return { name, owner: s.owner, syncOptions: s.syncOptions, ignoreDifferences };
    });
    // ADR-056 D2 and the as-built corrections hold only for the objects named here: where ArgoCD runs
    // the platform names them (or says {} on purpose).
    for (const key of ["projects", "applicationSets"] as const) {
        if (local && (raw[key] === undefined || raw[key] === null)) {
            r.problem(
                `argocd.${key}`,
                undefined,
                `is required where ArgoCD runs (argocd.runsOn is this cluster, ${runsOn || "cluster.name"}): ${key === "projects" ? "the tenant AppProjects, whose whitelist must admit the Rollout kinds (ADR-056 D2)" : "the tenant ApplicationSets, whose Applications must respect the canary's ignore rules (ADR-056 as-built)"}, by name with owner external or addon; {} if there are none`,
            );
        }
    }
    const rb = a.rbac;
    const { approverRole, ...lists } = rb;
    const rbRaw = isPlainObject(raw.rbac) ? raw.rbac : {};
    // Defaults from other sections: the projects named above, the regulated groups (one identity provider).
    const orDefault = (k: string, set: readonly string[], fallback: readonly string[]) => [...(rbRaw[k] === undefined || rbRaw[k] === null ? fallback : set)];
    const projectNames = projects.map((p) => p.name);
    const cfg: ArgoCdConfig = {
        runsOn,
        local,
        namespace: a.namespace,
        projects,
        applicationSets,
        ignoreDifferences: ruleList(r, "argocd.ignoreDifferences", raw.ignoreDifferences, SYSTEM_RULE_FIELDS),
        allKinds: raw.allKinds === undefined ? BUILTIN_KINDS.map((gk) => ({ ...gk })) : kinds(a.allKinds),
        rbac: {
            ...(approverRole ? { approverRole } : {}),
            ...lists,
            projects: orDefault("projects", rb.projects, projectNames),
            approverGroups: orDefault("approverGroups", rb.approverGroups, regulated?.approverGroups ?? []),
            deployerGroups: orDefault("deployerGroups", rb.deployerGroups, regulated?.deployerGroups ?? []),
        },
    };
    preflightArgoCd(r, cfg, raw, regulated);
    return cfg;
}

/**
 * The argocd section's reader (config/section.ts declares it) and its traps (ADR-056 D2, D3 and the as-built corrections), checked on the reader
 * that read it, so every problem of the stack file is reported together. `raw`: the section as
 * given; `regulated`: the stack's policy.regulated, when set.
 */
export function preflightArgoCd(r: ConfigReader, cfg: ArgoCdConfig, raw: Plain, regulated?: RegulatedGroups): void {
    if (!cfg.local) {
        // Another cluster's ArgoCD reaches this one with its cluster Secret's credentials, for the
        // sync and the API server alike (argo-cd v3.5.1 controller/sync.go and
        // server/application/application.go `getApplicationClusterConfig` both use the destination
        // cluster's `RESTConfig()`): no identity of its API server differs from its sync's.
        if ((regulated?.actionServiceAccounts.length ?? 0) > 0) {
            r.problem(
                "policy.regulated.actionServiceAccounts",
                regulated!.actionServiceAccounts.map((a) => `${a.namespace}/${a.name}`),
                `must be empty where another cluster's ArgoCD syncs this one (argocd.runsOn is ${cfg.runsOn}): its API server's resource patches, deletes and Rollout actions arrive with the same cluster Secret identity as its syncs, so the guard cannot tell them apart; name that identity in policy.regulated.gitopsServiceAccounts, gitopsUsers or gitopsGroups, and keep deployers from update/*, delete/* and the approval actions through ArgoCD's RBAC on cluster ${cfg.runsOn}`,
            );
        }
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
        if (!project.namespaceResources.some((gk) => globMatch(gk.group, SERVICE.group) && globMatch(gk.kind, SERVICE.kind))) {
            r.problem(
                `argocd.projects.${project.name}.namespaceResources`,
                project.namespaceResources.map(kindLabel),
                'must list every namespaced kind the project\'s Applications sync, at least {group: "", kind: Service} for the stable and canary Services (ADR-056 D4): the program owns the whole whitelist and adds only the Rollout kinds',
            );
        }
    }
    const approver = cfg.rbac.approverRole;
    if (approver !== undefined && cfg.rbac.deployerRoles.includes(approver)) {
        r.problem("argocd.rbac.deployerRoles", cfg.rbac.deployerRoles, `must not include the approver role ${approver}: ${NOT_APPROVER}`);
    }
    if (approver !== undefined && cfg.rbac.projects.length === 0) {
        r.problem(
            "argocd.rbac.projects",
            [],
            "must name at least one AppProject with argocd.rbac.approverRole (or set argocd.projects): grants are scoped per project, never to every project",
        );
    }
    preflightRegulatedRbac(r, cfg.rbac, regulated);
}

const NOT_APPROVER = "the deployer is never the approver (ADR-056 D3, ADR-049)";

/**
 * Regulated prod through ArgoCD (ADR-056 D3): ArgoCD changes, replaces and deletes Rollouts as its
 * own identities for any user its RBAC lets through, so the ArgoCD that syncs regulated namespaces
 * must be told who approves and who only deploys.
 */
function preflightRegulatedRbac(r: ConfigReader, rbac: ArgoRbacConfig, groups: RegulatedGroups | undefined): void {
    const why =
        "ArgoCD runs the Rollout actions, resource patches and deletes, and Replace syncs as its own identities for any user its RBAC lets through, so in regulated prod its RBAC is part of the approval gate (ADR-056 D3)";
    if (groups && rbac.regulatedProjects.length === 0) {
        r.problem(
            "argocd.rbac.regulatedProjects",
            undefined,
            `is required with policy.regulated where ArgoCD runs: the AppProjects whose Applications sync the regulated namespaces. ${why}`,
        );
    }
    if (rbac.regulatedProjects.length === 0) return;
    if (rbac.approverRole === undefined) {
        r.problem(
            "argocd.rbac.approverRole",
            undefined,
            `is required with argocd.rbac.regulatedProjects: the ArgoCD role that alone runs the approval actions. ${why}`,
        );
    }
    if (rbac.deployerRoles.length === 0) {
        r.problem(
            "argocd.rbac.deployerRoles",
            [],
            `must name at least one role with argocd.rbac.regulatedProjects: the ArgoCD roles of the deployers, denied the approval actions and create, update, delete, sync and override of Applications (create, update, delete of ApplicationSets) there. ${why}`,
        );
    }
    // With policy.regulated its own approverGroups are required: reported there, once.
    if (rbac.approverGroups.length === 0 && !groups) {
        r.problem(
            "argocd.rbac.approverGroups",
            [],
            "must name at least one SSO group with argocd.rbac.regulatedProjects (default: policy.regulated.approverGroups): verify asks ArgoCD's enforcer whether they can approve",
        );
    }
    for (const p of rbac.regulatedProjects.filter((p) => !rbac.projects.includes(p))) {
        r.problem(
            "argocd.rbac.regulatedProjects",
            p,
            `must be one of argocd.rbac.projects (${rbac.projects.join(", ") || "none"}): the approval actions are reserved to the approver there too`,
        );
    }
    // Across the two sections too: ArgoCD allows a request when any one of a user's groups allows it
    // (server/rbacpolicy/rbacpolicy.go `EnforceClaims`), so a group in both approves its own release.
    const overlaps: [string, string[], string][] = [
        ["argocd.rbac.deployerGroups", rbac.approverGroups.filter((g) => rbac.deployerGroups.includes(g)), "must not include an approver group"],
        [
            "argocd.rbac.approverGroups",
            rbac.approverGroups.filter((g) => groups?.deployerGroups.includes(g) && !rbac.deployerGroups.includes(g)),
            "must not be a deployer group of policy.regulated.deployerGroups",
        ],
        [
            "argocd.rbac.deployerGroups",
            rbac.deployerGroups.filter((g) => groups?.approverGroups.includes(g) && !rbac.approverGroups.includes(g)),
            "must not be an approver group of policy.regulated.approverGroups",
        ],
    ];
    for (const [key, found, what] of overlaps) {
        found.forEach((g) => r.problem(key, g, `${what}: ${NOT_APPROVER}`));
    }
}

/**
 * The stack's own rules: none may reach a Rollout with an array path or undo the narrow canary
 * rules. (The plugin's label-conditional rule, #208, cannot be written in the path subset the
 * section accepts: its condition needs the whole object, `.`, piped into `select`.)
 */
function checkRules(r: ConfigReader, key: string, rules: readonly IgnoreRule[], allKinds: readonly GroupKind[], scope: RuleScope): void {
    rules.forEach((rule, i) => {
        const expanded = expandAllKinds([rule], allKinds);
        const arrays = expanded.flatMap(rolloutArrayPathReasons);
        if (arrays.length > 0) {
            const via = rule.kind === "*" ? " (a rule for every kind reaches it because argocd.allKinds lists argoproj.io/Rollout)" : "";
            r.problem(
                `${key}[${i}]`,
                rule,
                `must not reach argoproj.io/Rollout with an array path${via}: ${arrays.join("; ")}; ${FROZEN_ROLLOUT}. Only scalar paths such as /spec/replicas are safe on a Rollout`,
            );
        }
        const narrow = [...new Set(expanded.flatMap((x) => canaryRuleReasons(x, scope)))];
        if (narrow.length > 0) {
            r.problem(
                `${key}[${i}]`,
                rule,
                `must not undo the narrow canary rules: ${narrow.join("; ")} (ADR-056 as-built #871; argo-cd controller/sync.go normalizeTargetResources)`,
            );
        }
    });
}
