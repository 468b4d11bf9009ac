import { field, readField, readSection, type Fields } from "../../config/declare";
import { ConfigReader, DNS_LABEL, Plain, StringRule, isPlainObject } from "../../config/reader";
import { API_GROUP, DNS_SUBDOMAIN, groupKindList, namedMap, ruleList } from "./lists";
import { BUILTIN_KINDS, GroupKind, IgnoreRule } from "../ignoreRules";
import { ARGO_OBJECT_OWNERS, ArgoObjectOwner } from "../ownership";
import { APPROVER_ROLLOUT_ACTIONS, ARGOCD_ROLLOUT_ACTIONS, ROLLOUT_ACTIONS_SINCE_3_1 } from "../rbac";
import { preflightArgoCd } from "../preflight";


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


const OWNER = field.oneOf(ARGO_OBJECT_OWNERS, {
    default: "external",
    describe: "",
    doc: "external (another owner keeps it: read and checked, nothing declared on it) or addon (this stack patches it)",
});
const GROUP_KIND_ITEMS = {
    group: field.string({ rule: { pattern: API_GROUP, describe: 'an API group such as apps, or "" for the core group' }, doc: 'API group ("" for the core group)' }),
    kind: field.string({ rule: { pattern: /^[A-Z][A-Za-z0-9]*$/, describe: "a Kind such as Deployment" }, required: true, doc: "the Kind" }),
} as const;
const RULE_LIST = (doc: string, items: Fields) => field.listReadBySection({ describe: "a list of ignoreDifferences rules", doc, items });
const paths = (describe: string, pattern: RegExp, doc: string) => field.strings({ rule: { pattern, describe }, size: { min: 0, max: 50 }, doc });

/** The fields of an argocd-cm ignoreDifferences rule (every Application). */
export const SYSTEM_RULE_FIELDS = {
    group: field.string({ rule: { pattern: API_GROUP, describe: 'an API group such as apps ("" or unset for the core group)' }, default: "", doc: "API group; unset with kind \"*\"" }),
    kind: field.string({ rule: { pattern: /^(\*|[A-Z][A-Za-z0-9]*)$/, describe: 'a Kind such as Deployment, or "*" for every kind' }, required: true, doc: 'Kind, or "*" for every kind of argocd.allKinds' }),
    jsonPointers: paths("a JSON pointer such as /spec/replicas", /^\/\S*$/, "JSON pointers to ignore"),
    jqPathExpressions: paths("a jq path expression such as .spec.replicas", /^\S.*$/, "jq path expressions to ignore"),
    managedFieldsManagers: paths("a field manager name", /^\S+$/, "field managers whose fields are ignored"),
} as const;

/** The fields of an Application-level ignoreDifferences rule: the system rule's, and which object. */
export const APP_RULE_FIELDS = {
    ...SYSTEM_RULE_FIELDS,
    name: field.string({ rule: { pattern: DNS_SUBDOMAIN, describe: "an object name" }, doc: "only the object of this name" }),
    namespace: field.string({ rule: { pattern: DNS_LABEL, describe: "a namespace name" }, doc: "only objects in this namespace" }),
} as const;

const RBAC_SUBJECT_RULE = { pattern: RBAC_SUBJECT, describe: "an ArgoCD role or SSO group such as role:approver (no spaces, commas, quotes or #)" };
const SSO_GROUP_RULE = { pattern: RBAC_SUBJECT, describe: "an SSO group as ArgoCD sees it in the token's groups claim (no spaces, commas, quotes or #)" };
const PROJECT_NAME_RULE = { pattern: DNS_SUBDOMAIN, describe: "an AppProject name" };

/** The `argocd` section: every key, once. */
export const ARGOCD_FIELDS = {
    runsOn: field.string({
        rule: { pattern: DNS_LABEL, describe: "a cluster name (the cluster.name of the stack whose cluster runs that ArgoCD)", maxLength: 63 },
        defaultDoc: "this stack's cluster.name",
        doc: "the cluster whose ArgoCD syncs this cluster's tenant Applications; only there does a stack touch ArgoCD's objects",
    }),
    namespace: field.string({ rule: { pattern: DNS_LABEL, describe: "a namespace name (DNS label)", maxLength: 63 }, default: "argocd", doc: "namespace of argocd-cm, argocd-rbac-cm, the AppProjects and ApplicationSets" }),
    projects: field.mapReadBySection({
        keyRule: { pattern: DNS_SUBDOMAIN, describe: "a Kubernetes object name (lowercase letters, digits, '-', '.')", maxLength: 253 },
        doc: "the tenant AppProjects, by name",
        values: {
            owner: OWNER,
            namespaceResources: field.listReadBySection({
                describe: 'a list of {group, kind} (group "" for the core group)',
                doc: 'addon only: the whole namespaceResourceWhitelist, every namespaced kind the project syncs ({group, kind}, "*" allowed; must cover core Service); the Rollout kinds are added',
                items: GROUP_KIND_ITEMS,
            }),
        },
    }),
    applicationSets: field.mapReadBySection({
        keyRule: { pattern: DNS_SUBDOMAIN, describe: "a Kubernetes object name (lowercase letters, digits, '-', '.')", maxLength: 253 },
        doc: "the tenant ApplicationSets (the Applications that run canaries), by name",
        values: {
            owner: OWNER,
            syncOptions: field.strings({ rule: { pattern: SYNC_OPTION, describe: "an ArgoCD sync option such as CreateNamespace=true" }, size: { min: 0, max: 20 }, doc: "addon only: further options kept after RespectIgnoreDifferences=true" }),
            ignoreDifferences: RULE_LIST("addon only: further Application-level rules", APP_RULE_FIELDS),
        },
    }),
    ignoreDifferences: RULE_LIST('argocd-cm rules (every Application); kind "*" is written once per kind of argocd.allKinds', SYSTEM_RULE_FIELDS),
    allKinds: field.listReadBySection({
        describe: 'a list of {group, kind} (group "" for the core group)',
        defaultDoc: `the ${BUILTIN_KINDS.length} built-in kinds (BUILTIN_KINDS)`,
        doc: "the {group, kind} list a rule for every kind is written for",
        items: GROUP_KIND_ITEMS,
    }),
    rbac: field.section({
        doc: "ArgoCD RBAC for the Rollout actions (ADR-056 D3)",
        fields: {
            approverRole: field.string({ rule: RBAC_SUBJECT_RULE, defaultDoc: "unset: no RBAC written", doc: "ArgoCD role or SSO group allowed the Rollout approval actions (ArgoCD reads each policy line with Go's CSV reader)" }),
            deployerRoles: field.strings({ rule: RBAC_SUBJECT_RULE, size: { min: 0, max: 20 }, doc: "roles explicitly denied those actions; never the approver" }),
            projects: field.strings({ rule: PROJECT_NAME_RULE, size: { min: 0, max: 50 }, defaultDoc: "the names in argocd.projects", doc: "projects the grants are scoped to; required with an approver" }),
            actions: field.strings({ rule: ACTION, default: APPROVER_ROLLOUT_ACTIONS, size: { min: 1, max: ARGOCD_ROLLOUT_ACTIONS.length }, doc: "ArgoCD's Rollout actions reserved to the approver" }),
            regulatedProjects: field.strings({ rule: PROJECT_NAME_RULE, size: { min: 0, max: 50 }, doc: "AppProjects (among rbac.projects) whose Applications sync regulated namespaces; required with policy.regulated where ArgoCD runs" }),
            approverGroups: field.strings({ rule: SSO_GROUP_RULE, size: { min: 0, max: 20 }, defaultDoc: "policy.regulated.approverGroups", doc: "SSO groups bound to approverRole; verify asks ArgoCD's enforcer that they can approve" }),
            deployerGroups: field.strings({ rule: SSO_GROUP_RULE, size: { min: 0, max: 20 }, defaultDoc: "policy.regulated.deployerGroups", doc: "SSO groups bound to the deny-only deployer role; never an approver group" }),
        },
    }),
} as const;

/** Every default of the section, in one object. */
export const ARGOCD_DEFAULTS = {
    namespace: ARGOCD_FIELDS.namespace.default,
    owner: "external" as ArgoObjectOwner,
    allKinds: BUILTIN_KINDS,
    rbac: { actions: APPROVER_ROLLOUT_ACTIONS },
} as const;

/** What the stack's `policy.regulated` says about the groups and ArgoCD's identities, for the ArgoCD RBAC it needs. */
export interface RegulatedGroups {
    approverGroups: readonly string[];
    deployerGroups: readonly string[];
    /** ArgoCD's API server as the approval guard names it (policy.regulated.actionServiceAccounts). */
    actionServiceAccounts: readonly { namespace: string; name: string }[];
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
    const a = r.object("argocd", isPlainObject(value) ? rest : value, Object.keys(ARGOCD_FIELDS));
    if (!a) {
        return undefined;
    }
    const f = ARGOCD_FIELDS;
    const runsOn = r.string("argocd.runsOn", a.runsOn, f.runsOn.rule, clusterName ?? "");
    const owner = (key: string, entry: Plain, ownedOnly: readonly string[]): ArgoObjectOwner => {
        const o = readField(r, `${key}.owner`, OWNER, entry.owner) as ArgoObjectOwner;
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
    const projects = namedMap(r, "argocd.projects", a.projects, Object.keys(f.projects.values), (key, entry, name) => ({
        name,
        owner: owner(key, entry, ["namespaceResources"]),
        namespaceResources: groupKindList(r, `${key}.namespaceResources`, entry.namespaceResources, true) ?? [],
    }));
    const applicationSets = namedMap(r, "argocd.applicationSets", a.applicationSets, Object.keys(f.applicationSets.values), (key, entry, name) => ({
        name,
        owner: owner(key, entry, ["syncOptions", "ignoreDifferences"]),
        syncOptions: readField(r, `${key}.syncOptions`, f.applicationSets.values.syncOptions, entry.syncOptions) as string[],
        ignoreDifferences: ruleList(r, `${key}.ignoreDifferences`, entry.ignoreDifferences, Object.keys(APP_RULE_FIELDS)),
    }));
    const rbf = f.rbac.fields;
    const rbs = readSection(r, "argocd.rbac", rbf, a.rbac);
    const rb = rbs?.raw ?? {};
    const approverRole = rbs?.approverRole;
    const cfg: ArgoCdConfig = {
        runsOn,
        // Without a valid cluster name the stack fails on that; do not add noise about ArgoCD.
        local: clusterName === undefined || runsOn === clusterName,
        namespace: readField(r, "argocd.namespace", f.namespace, a.namespace) as string,
        projects,
        applicationSets,
        ignoreDifferences: ruleList(r, "argocd.ignoreDifferences", a.ignoreDifferences, Object.keys(SYSTEM_RULE_FIELDS)),
        allKinds: a.allKinds === undefined ? d.allKinds.map((gk) => ({ ...gk })) : (groupKindList(r, "argocd.allKinds", a.allKinds, false) ?? []),
        rbac: {
            ...(approverRole ? { approverRole } : {}),
            deployerRoles: rbs?.deployerRoles ?? [],
            // Defaults that depend on other sections: the projects named above, the regulated groups
            // (ArgoCD's SSO groups are usually the cluster's groups: one identity provider).
            projects: (rb.projects === undefined || rb.projects === null) ? projects.map((p) => p.name) : (rbs?.projects ?? []),
            actions: rbs?.actions ?? [...d.rbac.actions],
            regulatedProjects: rbs?.regulatedProjects ?? [],
            approverGroups: (rb.approverGroups === undefined || rb.approverGroups === null) ? [...(regulated?.approverGroups ?? [])] : (rbs?.approverGroups ?? []),
            deployerGroups: (rb.deployerGroups === undefined || rb.deployerGroups === null) ? [...(regulated?.deployerGroups ?? [])] : (rbs?.deployerGroups ?? []),
        },
    };
    preflightArgoCd(r, cfg, a, regulated);
    return cfg;
}
