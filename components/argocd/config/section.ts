import { field, readField, readSection, type Fields } from "../../config/declare";
import { ConfigReader, DNS_LABEL, Plain, StringRule, isPlainObject, IDENTITY_TEXT, WILDCARD, NAMESPACE_RULE } from "../../config/reader";
import { API_GROUP, DNS_SUBDOMAIN, groupKindList, namedMap, ruleList } from "./lists";
import { BUILTIN_KINDS } from "../ignoreRules";
import { ARGO_OBJECT_OWNERS, ArgoObjectOwner } from "../ownership";
import { APPROVER_ROLLOUT_ACTIONS, ARGOCD_ROLLOUT_ACTIONS, ROLLOUT_ACTIONS_SINCE_3_1 } from "../rbac";
import { preflightArgoCd } from "../preflight";
import type { ArgoCdConfig, RegulatedGroups } from "./types";

/**
 * The argocd-apps stage's configuration section, `argocd` (ADR-056 D2, D3 and the as-built
 * corrections): its types, its defaults and its reader. After the section is read, the preflight
 * (preflight.ts) checks it against the ADR's traps on the same reader, so every problem of the
 * stack file is reported together.
 */

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
    group: field.string({
        rule: { pattern: API_GROUP, describe: 'an API group such as apps, or "" for the core group' },
        doc: 'API group ("" for the core group)',
    }),
    kind: field.string({ rule: { pattern: /^[A-Z][A-Za-z0-9]*$/, describe: "a Kind such as Deployment" }, required: true, doc: "the Kind" }),
} as const;
const RULE_LIST = (doc: string, items: Fields) => field.listReadBySection({ describe: "a list of ignoreDifferences rules", doc, items });
const paths = (describe: string, pattern: RegExp, doc: string) => field.strings({ rule: { pattern, describe }, size: { min: 0, max: 50 }, doc });

/** The fields of an argocd-cm ignoreDifferences rule (every Application). */
export const SYSTEM_RULE_FIELDS = {
    group: field.string({
        rule: { pattern: API_GROUP, describe: 'an API group such as apps ("" or unset for the core group)' },
        default: "",
        doc: 'API group; unset with kind "*"',
    }),
    kind: field.string({
        rule: { pattern: /^(\*|[A-Z][A-Za-z0-9]*)$/, describe: 'a Kind such as Deployment, or "*" for every kind' },
        required: true,
        doc: 'Kind, or "*" for every kind of argocd.allKinds',
    }),
    jsonPointers: paths(
        "a JSON pointer such as /spec/replicas (~ escaped as ~0, / as ~1; not ending in /-)",
        /^\/\S*$/,
        "JSON pointers to ignore; each one ArgoCD's normalizer can follow (argo-cd v3.5.1 util/argo/normalizers/diff_normalizer.go, evanphx/json-patch v5.9.11: RFC 6901 escapes ~0 and ~1 only, no /- at the end), else the rule ignores nothing",
    ),
    jqPathExpressions: paths(
        "a jq path expression such as .spec.replicas, which gojq compiles inside del() as ArgoCD does",
        /^\S.*$/,
        "jq path expressions to ignore; each one gojq v0.12.19 parses and compiles as del(<expression>) (argo-cd v3.5.1 diff_normalizer.go NewIgnoreNormalizer), else every Application's diff fails",
    ),
    managedFieldsManagers: paths("a field manager name", /^\S+$/, "field managers whose fields are ignored"),
} as const;

/** The fields of an Application-level ignoreDifferences rule: the system rule's, and which object. */
export const APP_RULE_FIELDS = {
    ...SYSTEM_RULE_FIELDS,
    name: field.string({ rule: { pattern: DNS_SUBDOMAIN, describe: "an object name" }, doc: "only the object of this name" }),
    namespace: field.string({ rule: NAMESPACE_RULE, doc: "only objects in this namespace" }),
} as const;

const RBAC_SUBJECT_RULE = { pattern: RBAC_SUBJECT, describe: "an ArgoCD role or SSO group such as role:approver (no spaces, commas, quotes or #)" };
/**
 * An SSO group in a `g` line: written through csvField (../rbac.ts), quoted when it holds a blank,
 * comma, quote or `#`, which Go's encoding/csv reads back whole (TrimLeadingSpace only trims before
 * the opening quote), so `Release Approvers` is a group as the IdP names it. No leading or trailing
 * blank (a token's claim has none), no `*` or `?`: the same names reach Kyverno (../../config/identity.ts).
 */
const SSO_GROUP_RULE = {
    pattern: IDENTITY_TEXT,
    valid: (g: string) => !WILDCARD.test(g),
    describe: "an SSO group as ArgoCD sees it in the token's groups claim (blanks inside allowed; no * or ?)",
};
const PROJECT_NAME_RULE = { pattern: DNS_SUBDOMAIN, describe: "an AppProject name" };

/** Where the AppProjects and ApplicationSets must be named: only the platform knows their names. */
const WHERE_ARGOCD_RUNS = "required where ArgoCD runs (argocd.runsOn is this cluster)";

/** The `argocd` section: every key, once. */
export const ARGOCD_FIELDS = {
    runsOn: field.string({
        rule: { pattern: DNS_LABEL, describe: "a cluster name (the cluster.name of the stack whose cluster runs that ArgoCD)", maxLength: 63 },
        defaultDoc: "this stack's cluster.name",
        doc: "the cluster whose ArgoCD syncs this cluster's tenant Applications; only there does a stack touch ArgoCD's objects",
    }),
    namespace: field.string({
        rule: { pattern: DNS_LABEL, describe: "a namespace name (DNS label)", maxLength: 63 },
        default: "argocd",
        doc: "namespace of argocd-cm, argocd-rbac-cm, the AppProjects and ApplicationSets",
    }),
    projects: field.mapReadBySection({
        keyRule: { pattern: DNS_SUBDOMAIN, describe: "a Kubernetes object name (lowercase letters, digits, '-', '.')", maxLength: 253 },
        defaultDoc: WHERE_ARGOCD_RUNS,
        doc: "the tenant AppProjects, by name; {} only where no tenant Application syncs through this ArgoCD",
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
        defaultDoc: WHERE_ARGOCD_RUNS,
        doc: "the tenant ApplicationSets (the Applications that run canaries), by name; {} where tenant Applications are not generated by an ApplicationSet",
        values: {
            owner: OWNER,
            syncOptions: field.strings({
                rule: { pattern: SYNC_OPTION, describe: "an ArgoCD sync option such as CreateNamespace=true" },
                size: { min: 0, max: 20 },
                doc: "addon only: further options kept after RespectIgnoreDifferences=true",
            }),
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
            approverRole: field.string({
                rule: RBAC_SUBJECT_RULE,
                defaultDoc: "unset: no RBAC written",
                doc: "ArgoCD role or SSO group allowed the Rollout approval actions (ArgoCD reads each policy line with Go's CSV reader)",
            }),
            deployerRoles: field.strings({
                rule: RBAC_SUBJECT_RULE,
                size: { min: 0, max: 20 },
                doc: "roles explicitly denied those actions; never the approver",
            }),
            projects: field.strings({
                rule: PROJECT_NAME_RULE,
                size: { min: 0, max: 50 },
                defaultDoc: "the names in argocd.projects",
                doc: "projects the grants are scoped to; required with an approver",
            }),
            actions: field.strings({
                rule: ACTION,
                default: APPROVER_ROLLOUT_ACTIONS,
                size: { min: 1, max: ARGOCD_ROLLOUT_ACTIONS.length },
                doc: "ArgoCD's Rollout actions reserved to the approver",
            }),
            regulatedProjects: field.strings({
                rule: PROJECT_NAME_RULE,
                size: { min: 0, max: 50 },
                doc: "AppProjects (among rbac.projects) whose Applications sync regulated namespaces; required with policy.regulated where ArgoCD runs",
            }),
            approverGroups: field.strings({
                rule: SSO_GROUP_RULE,
                size: { min: 0, max: 20 },
                defaultDoc: "policy.regulated.approverGroups",
                doc: "SSO groups bound to approverRole; verify asks ArgoCD's enforcer that they can approve",
            }),
            deployerGroups: field.strings({
                rule: SSO_GROUP_RULE,
                size: { min: 0, max: 20 },
                defaultDoc: "policy.regulated.deployerGroups",
                doc: "SSO groups bound to the deny-only deployer role; never an approver group",
            }),
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

/**
 * `clusterName`: this stack's `cluster.name`, where ArgoCD runs unless `argocd.runsOn` says
 * otherwise. `regulated`: the stack's `policy.regulated`, when set.
 */
export function readArgoCd(r: ConfigReader, value: unknown, clusterName: string | undefined, regulated?: RegulatedGroups): ArgoCdConfig | undefined {
    const d = ARGOCD_DEFAULTS;
    const { enabled, ...rest } = isPlainObject(value) ? value : { enabled: undefined };
    if (enabled !== undefined) {
        r.problem(
            "argocd.enabled",
            enabled,
            "is replaced by argocd.runsOn: this cluster's name (cluster.name) when its own ArgoCD syncs its Applications, or the name of the cluster whose ArgoCD does",
        );
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
    const local = clusterName === undefined || runsOn === clusterName;
    // ADR-056 D2 and the as-built corrections hold only for the objects named here: an AppProject or
    // ApplicationSet left out is one nothing checks, so where ArgoCD runs the platform names them (or
    // says {} on purpose).
    for (const key of ["projects", "applicationSets"] as const) {
        if (local && (a[key] === undefined || a[key] === null)) {
            r.problem(
                `argocd.${key}`,
                undefined,
                `is required where ArgoCD runs (argocd.runsOn is this cluster, ${runsOn || "cluster.name"}): ${key === "projects" ? "the tenant AppProjects, whose whitelist must admit the Rollout kinds (ADR-056 D2)" : "the tenant ApplicationSets, whose Applications must respect the canary's ignore rules (ADR-056 as-built)"}, by name with owner external or addon; {} if there are none`,
            );
        }
    }
    const rbf = f.rbac.fields;
    const rbs = readSection(r, "argocd.rbac", rbf, a.rbac);
    const rb = rbs?.raw ?? {};
    const approverRole = rbs?.approverRole;
    const cfg: ArgoCdConfig = {
        runsOn,
        // Without a valid cluster name the stack fails on that; do not add noise about ArgoCD.
        local,
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
            projects: rb.projects === undefined || rb.projects === null ? projects.map((p) => p.name) : (rbs?.projects ?? []),
            actions: rbs?.actions ?? [...d.rbac.actions],
            regulatedProjects: rbs?.regulatedProjects ?? [],
            approverGroups:
                rb.approverGroups === undefined || rb.approverGroups === null ? [...(regulated?.approverGroups ?? [])] : (rbs?.approverGroups ?? []),
            deployerGroups:
                rb.deployerGroups === undefined || rb.deployerGroups === null ? [...(regulated?.deployerGroups ?? [])] : (rbs?.deployerGroups ?? []),
        },
    };
    preflightArgoCd(r, cfg, a, regulated);
    return cfg;
}
