import { ConfigReader, DNS_LABEL, Plain, StringRule, isPlainObject } from "../config/reader";
import { BUILTIN_KINDS, GroupKind, IgnoreRule } from "./ignoreRules";
import { ARGO_OBJECT_OWNERS, ArgoObjectOwner } from "./ownership";
import { APPROVER_ROLLOUT_ACTIONS, ARGOCD_ROLLOUT_ACTIONS, ROLLOUT_ACTIONS_SINCE_3_1 } from "./rbac";
import { preflightArgoCd } from "./preflight";


/**
 * The argocd-apps stage's configuration section, `argocd` (ADR-056 D2, D3 and the as-built
 * corrections): its types, its defaults and its reader. After the section is read, the preflight
 * (preflight.ts) checks it against the ADR's traps on the same reader, so every problem of the
 * stack file is reported together.
 */

/** A tenant AppProject: patched (`addon`) or read and checked (`external`), see ownership.ts. */
export interface ArgoProjectConfig {
    name: string;
    owner: ArgoObjectOwner;
    /** `addon` only: every other namespaced kind the project's Applications sync; the Rollout kinds are added. */
    namespaceResources: GroupKind[];
}

/** A tenant ApplicationSet: patched (`addon`) or read and checked (`external`), see ownership.ts. */
export interface TenantApplicationSetConfig {
    name: string;
    owner: ArgoObjectOwner;
    /** `addon` only: further sync options kept beside the program's own. */
    syncOptions: string[];
    /** `addon` only: further Application-level ignore rules kept beside the program's own. */
    ignoreDifferences: IgnoreRule[];
}

export interface ArgoRbacConfig {
    /** The ArgoCD role allowed to promote or abort a Rollout; unset writes no policy. */
    approverRole?: string;
    /** Roles explicitly denied those actions (deny wins in ArgoCD's RBAC). */
    deployerRoles: string[];
    /** Projects the grants are scoped to (`<project>/*`). */
    projects: string[];
    /** ArgoCD's built-in Rollout actions reserved to the approver. */
    actions: string[];
    /**
     * Projects whose Applications sync regulated namespaces (ADR-056 D3): there the deployer roles
     * are also denied every ArgoCD path that changes, replaces or deletes a Rollout as ArgoCD's own
     * identity (`regulatedDeployerDenials`).
     */
    regulatedProjects: string[];
    /** SSO groups verify asks ArgoCD's enforcer about: they must be able to run the approval actions. */
    approverGroups: string[];
    /** SSO groups verify asks ArgoCD's enforcer about: they must be refused every regulated path. */
    deployerGroups: string[];
}

/** The argocd-apps stage's settings. */
export interface ArgoCdConfig {
    /**
     * The cluster whose ArgoCD syncs this cluster's tenant Applications: this one (each cluster runs
     * its own), or another (a hub's ArgoCD syncing its spokes). Only where ArgoCD runs does a stack
     * touch ArgoCD's objects; the stack of that cluster lists them for every cluster it syncs.
     */
    runsOn: string;
    /** `runsOn` is this stack's cluster. */
    local: boolean;
    namespace: string;
    projects: ArgoProjectConfig[];
    applicationSets: TenantApplicationSetConfig[];
    /** System-level rules written to argocd-cm. */
    ignoreDifferences: IgnoreRule[];
    /** The kinds a rule for all kinds is written for. */
    allKinds: GroupKind[];
    rbac: ArgoRbacConfig;
}

/** Every default of the section, in one place; the README's config reference follows it. */
export const ARGOCD_DEFAULTS = {
    // runsOn: this stack's cluster (cluster.name).
    namespace: "argocd",
    owner: "external" as ArgoObjectOwner,
    allKinds: BUILTIN_KINDS,
    rbac: { actions: APPROVER_ROLLOUT_ACTIONS },
} as const;

const ARGOCD_KEYS = ["runsOn", "namespace", "projects", "applicationSets", "ignoreDifferences", "allKinds", "rbac"];
const PROJECT_KEYS = ["owner", "namespaceResources"];
const APPSET_KEYS = ["owner", "syncOptions", "ignoreDifferences"];
const RBAC_KEYS = ["approverRole", "deployerRoles", "projects", "actions", "regulatedProjects", "approverGroups", "deployerGroups"];
const SYSTEM_RULE_KEYS = ["group", "kind", "jsonPointers", "jqPathExpressions", "managedFieldsManagers"];
const APP_RULE_KEYS = [...SYSTEM_RULE_KEYS, "name", "namespace"];

/** A Kubernetes object name (DNS subdomain), as AppProjects and ApplicationSets are named. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const API_GROUP = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;
/**
 * An ArgoCD RBAC subject: a role or an SSO group. ArgoCD reads each policy line with Go's
 * encoding/csv (argo-cd util/rbac/rbac.go `loadPolicyLine`: `csv.NewReader`, no LazyQuotes), so a
 * comma or blank would split the line and a bare `"` fails it ("bare \" in non-quoted field"),
 * which fails loading the whole policy; `#` starts a comment.
 */
const RBAC_SUBJECT = /^[^\s,#"]+$/;
const SYNC_OPTION = /^[A-Za-z]+=[^\s,]+$/;
/** Only ArgoCD's own Rollout actions: a name it does not know would make a policy line that does nothing. */
const ACTION: StringRule = {
    pattern: new RegExp(`^(${ARGOCD_ROLLOUT_ACTIONS.join("|")})$`),
    describe: `one of ArgoCD's Rollout actions ${ARGOCD_ROLLOUT_ACTIONS.join(", ")} (argo-cd resource_customizations/argoproj.io/Rollout/actions; ${ROLLOUT_ACTIONS_SINCE_3_1.join(" and ")} since ArgoCD 3.1; there is no "promote")`,
};

/** What the stack's `policy.regulated` says about the groups, for the ArgoCD RBAC it needs. */
export interface RegulatedGroups {
    approverGroups: readonly string[];
    deployerGroups: readonly string[];
}

/**
 * `clusterName`: this stack's `cluster.name`, where ArgoCD runs unless `argocd.runsOn` says
 * otherwise. `regulated`: the stack's `policy.regulated`, when set.
 */
export function readArgoCd(r: ConfigReader, value: unknown, clusterName: string | undefined, regulated?: RegulatedGroups): ArgoCdConfig | undefined {
    const d = ARGOCD_DEFAULTS;
    const { enabled, ...rest } = isPlainObject(value) ? value : { enabled: undefined };
    if (enabled !== undefined) {
        r.problem("argocd.enabled", enabled, "is replaced by argocd.runsOn: this cluster's name (cluster.name) when its own ArgoCD syncs its Applications, or the name of the cluster whose ArgoCD does");
    }
    const a = r.object("argocd", isPlainObject(value) ? rest : value, ARGOCD_KEYS);
    if (!a) {
        return undefined;
    }
    const runsOn = r.string("argocd.runsOn", a.runsOn, { pattern: DNS_LABEL, describe: "a cluster name (the cluster.name of the stack whose cluster runs that ArgoCD)", maxLength: 63 }, clusterName ?? "");
    const owner = (key: string, entry: Plain, ownedOnly: readonly string[]): ArgoObjectOwner => {
        const o = r.string(`${key}.owner`, entry.owner, { oneOf: ARGO_OBJECT_OWNERS, describe: "" }, d.owner) as ArgoObjectOwner;
        if (o === "external") {
            for (const k of ownedOnly.filter((k) => entry[k] !== undefined)) {
                r.problem(
                    `${key}.${k}`,
                    entry[k],
                    `only applies with ${key}.owner: addon; another owner keeps this object (owner: external, the default), so the stack reads and checks it and declares nothing on it`,
                );
            }
        }
        return o;
    };
    const projects = namedMap(r, "argocd.projects", a.projects, PROJECT_KEYS, (key, entry, name) => ({
        name,
        owner: owner(key, entry, ["namespaceResources"]),
        namespaceResources: groupKindList(r, `${key}.namespaceResources`, entry.namespaceResources, true) ?? [],
    }));
    const applicationSets = namedMap(r, "argocd.applicationSets", a.applicationSets, APPSET_KEYS, (key, entry, name) => ({
        name,
        owner: owner(key, entry, ["syncOptions", "ignoreDifferences"]),
        syncOptions: r.strings(`${key}.syncOptions`, entry.syncOptions, { pattern: SYNC_OPTION, describe: "an ArgoCD sync option such as CreateNamespace=true" }, [], { min: 0, max: 20 }),
        ignoreDifferences: ruleList(r, `${key}.ignoreDifferences`, entry.ignoreDifferences, APP_RULE_KEYS),
    }));
    const rb = r.object("argocd.rbac", a.rbac, RBAC_KEYS) ?? {};
    const subject = { pattern: RBAC_SUBJECT, describe: "an ArgoCD role or SSO group such as role:approver (no spaces, commas, quotes or #)" };
    const group = { pattern: RBAC_SUBJECT, describe: "an SSO group as ArgoCD sees it in the token's groups claim (no spaces, commas, quotes or #)" };
    const approverRole = r.string("argocd.rbac.approverRole", rb.approverRole, subject);
    const cfg: ArgoCdConfig = {
        runsOn,
        // Without a valid cluster name the stack fails on that; do not add noise about ArgoCD.
        local: clusterName === undefined || runsOn === clusterName,
        namespace: r.string("argocd.namespace", a.namespace, { pattern: DNS_LABEL, describe: "a namespace name (DNS label)", maxLength: 63 }, d.namespace),
        projects,
        applicationSets,
        ignoreDifferences: ruleList(r, "argocd.ignoreDifferences", a.ignoreDifferences, SYSTEM_RULE_KEYS),
        allKinds: a.allKinds === undefined ? d.allKinds.map((gk) => ({ ...gk })) : (groupKindList(r, "argocd.allKinds", a.allKinds, false) ?? []),
        rbac: {
            ...(approverRole ? { approverRole } : {}),
            deployerRoles: r.strings("argocd.rbac.deployerRoles", rb.deployerRoles, subject, [], { min: 0, max: 20 }),
            projects: r.strings("argocd.rbac.projects", rb.projects, { pattern: DNS_SUBDOMAIN, describe: "an AppProject name" }, projects.map((p) => p.name), { min: 0, max: 50 }),
            actions: r.strings("argocd.rbac.actions", rb.actions, ACTION, d.rbac.actions, { min: 1, max: ARGOCD_ROLLOUT_ACTIONS.length }),
            regulatedProjects: r.strings("argocd.rbac.regulatedProjects", rb.regulatedProjects, { pattern: DNS_SUBDOMAIN, describe: "an AppProject name" }, [], { min: 0, max: 50 }),
            // ArgoCD's SSO groups are usually the cluster's groups (one identity provider).
            approverGroups: r.strings("argocd.rbac.approverGroups", rb.approverGroups, group, [...(regulated?.approverGroups ?? [])], { min: 0, max: 20 }),
            deployerGroups: r.strings("argocd.rbac.deployerGroups", rb.deployerGroups, group, [...(regulated?.deployerGroups ?? [])], { min: 0, max: 20 }),
        },
    };
    preflightArgoCd(r, cfg, a, regulated !== undefined);
    return cfg;
}

/** A map of object names to objects, read into a list in the stack file's order. */
function namedMap<T>(r: ConfigReader, key: string, value: unknown, keys: readonly string[], read: (key: string, entry: Plain, name: string) => T): T[] {
    if (value === undefined || value === null) {
        return [];
    }
    if (!isPlainObject(value)) {
        r.problem(key, value, "must be a map of object names to settings");
        return [];
    }
    const out: T[] = [];
    for (const [name, entry] of Object.entries(value)) {
        const entryKey = `${key}.${name}`;
        if (!DNS_SUBDOMAIN.test(name) || name.length > 253) {
            r.problem(entryKey, name, "must be a Kubernetes object name (lowercase letters, digits, '-', '.')");
            continue;
        }
        const obj = r.object(entryKey, entry ?? {}, keys);
        if (obj) {
            out.push(read(entryKey, obj, name));
        }
    }
    return out;
}

/** A list of `{group, kind}`; `*` globs are allowed where ArgoCD allows them (whitelists). */
function groupKindList(r: ConfigReader, key: string, value: unknown, globs: boolean): GroupKind[] | undefined {
    if (value === undefined || value === null) {
        return undefined;
    }
    if (!Array.isArray(value)) {
        r.problem(key, value, "must be a list of {group, kind} (group \"\" for the core group)");
        return undefined;
    }
    const out: GroupKind[] = [];
    value.forEach((v, i) => {
        const k = `${key}[${i}]`;
        const o = r.object(k, v, ["group", "kind"]);
        if (!o) {
            return;
        }
        const group = o.group ?? "";
        const okGroup = typeof group === "string" && (API_GROUP.test(group) || (globs && group === "*"));
        const okKind = typeof o.kind === "string" && (KIND.test(o.kind) || (globs && o.kind === "*"));
        if (!okGroup) {
            r.problem(`${k}.group`, o.group, `must be an API group such as apps, or "" for the core group${globs ? ', or "*"' : ""}`);
        }
        if (!okKind) {
            r.problem(`${k}.kind`, o.kind, `must be a Kind such as Deployment${globs ? ', or "*"' : ""}`);
        }
        if (okGroup && okKind && !out.some((gk) => gk.group === group && gk.kind === o.kind)) {
            out.push({ group: group as string, kind: o.kind as string });
        }
    });
    return out;
}

function ruleList(r: ConfigReader, key: string, value: unknown, keys: readonly string[]): IgnoreRule[] {
    if (value === undefined || value === null) {
        return [];
    }
    if (!Array.isArray(value)) {
        r.problem(key, value, "must be a list of ignoreDifferences rules ({group, kind, jsonPointers, jqPathExpressions, managedFieldsManagers})");
        return [];
    }
    const out: IgnoreRule[] = [];
    value.forEach((v, i) => {
        const rule = readRule(r, `${key}[${i}]`, v, keys);
        if (rule) {
            out.push(rule);
        }
    });
    return out;
}

function readRule(r: ConfigReader, key: string, value: unknown, keys: readonly string[]): IgnoreRule | undefined {
    const o = r.object(key, value, keys);
    if (!o) {
        return undefined;
    }
    const kind = r.requiredString(`${key}.kind`, o.kind, { pattern: /^(\*|[A-Z][A-Za-z0-9]*)$/, describe: 'a Kind such as Deployment, or "*" for every kind' });
    const group = r.string(`${key}.group`, o.group, { pattern: API_GROUP, describe: 'an API group such as apps ("" or unset for the core group)' }, "");
    if (kind === "*" && group !== "") {
        r.problem(`${key}.group`, o.group, 'must be unset with kind "*" (a rule for every kind has no group)');
    }
    const list = (field: string, rule: StringRule) => r.strings(`${key}.${field}`, o[field], rule, [], { min: 0, max: 50 });
    const jsonPointers = list("jsonPointers", { pattern: /^\/\S*$/, describe: "a JSON pointer such as /spec/replicas" });
    const jqPathExpressions = list("jqPathExpressions", { pattern: /^\S.*$/, describe: "a jq path expression such as .spec.replicas" });
    const managedFieldsManagers = list("managedFieldsManagers", { pattern: /^\S+$/, describe: "a field manager name" });
    if (jsonPointers.length + jqPathExpressions.length + managedFieldsManagers.length === 0) {
        r.problem(key, value, "must set at least one of jsonPointers, jqPathExpressions, managedFieldsManagers");
    }
    const name = r.string(`${key}.name`, o.name, { pattern: DNS_SUBDOMAIN, describe: "an object name" });
    const namespace = r.string(`${key}.namespace`, o.namespace, { pattern: DNS_LABEL, describe: "a namespace name" });
    if (!kind) {
        return undefined;
    }
    return { group, kind, ...(name ? { name } : {}), ...(namespace ? { namespace } : {}), jsonPointers, jqPathExpressions, managedFieldsManagers };
}
