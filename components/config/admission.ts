import { BUILTIN_KINDS } from "../argocd/ignoreRules";
import { ARGO_OBJECT_OWNERS, ArgoObjectOwner } from "../argocd/ownership";
import { APPROVER_ROLLOUT_ACTIONS, ARGOCD_ROLLOUT_ACTIONS, ROLLOUT_ACTIONS_SINCE_3_1 } from "../argocd/rbac";
import { TIERS } from "../delivery/strategy";
import { preflightArgoCd, preflightPolicy } from "./preflight";
import { ConfigReader, DNS_LABEL, Plain, StringRule, isPlainObject } from "./reader";

/**
 * The policy and argocd-apps stages' configuration (ADR-056 D2, D8 and the as-built
 * corrections). Each section is read by its own function; `parseAddonConfig` composes them.
 * After a section is read, the preflight checks it against the ADR's traps on the same reader,
 * so every problem of the stack file is reported together.
 */

/** The label the platform's example namespaces carry their tier in (ADR-056 D3). */
export const TIER_LABEL = "platform.example/tier";

/**
 * The Kyverno API the policies are written in. `policies.kyverno.io/v1` is served from Kyverno 1.17
 * (kyverno/kyverno v1.17.0 `config/crds/policies.kyverno.io/*.yaml`: version `v1`, `served: true`).
 */
export type KyvernoApi = "policies.kyverno.io/v1" | "kyverno.io/v1";
export const KYVERNO_APIS: readonly KyvernoApi[] = ["policies.kyverno.io/v1", "kyverno.io/v1"];

/** What a failed validation does: refuse the request, or only report it. */
export type ValidationAction = "Enforce" | "Audit";

/** What the API server does with a request when Kyverno cannot answer a mutation. */
export type FailurePolicy = "Ignore" | "Fail";
export const FAILURE_POLICIES: readonly FailurePolicy[] = ["Ignore", "Fail"];

/**
 * Who owns ADR-085's availability policies (PDB generation, topology spread, prod replica floor,
 * default namespace) on this cluster. `own`: this program declares them under ADR-085's names.
 * `complement`: the platform keeps its own, already Rollout-aware (ADR-056 as-built,
 * enable_rollout_kind), and this program adds only the Rollout-only guards, never a second PDB
 * generator (two budgets over the same pods make every eviction fail, the deadlock D8 prevents).
 */
export type AvailabilityPolicies = "own" | "complement";
export const AVAILABILITY_POLICIES: readonly AvailabilityPolicies[] = ["own", "complement"];

export type SelectorOperator = "In" | "NotIn" | "Exists" | "DoesNotExist";
export const SELECTOR_OPERATORS: readonly SelectorOperator[] = ["In", "NotIn", "Exists", "DoesNotExist"];

/** A Kubernetes label selector (`metav1.LabelSelector`). */
export interface LabelSelector {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: SelectorOperator; values?: string[] }[];
}

/** A ServiceAccount, as `request.userInfo.username` names it: `system:serviceaccount:<namespace>:<name>`. */
export interface ServiceAccountRef {
    namespace: string;
    name: string;
}

/**
 * Regulated prod (ADR-056 D3, ADR-049 separation of duties): in namespaces with these labels only
 * the GitOps controller changes a Rollout, and only approvers approve (promote, resume, skip,
 * abort, retry).
 */
export interface RegulatedConfig {
    namespaceLabels: Record<string, string>;
    /** Groups whose members may approve; a member of a deployer group never may. */
    approverGroups: string[];
    /** Groups whose members ship versions; the approval Roles bind the deployer Role to them. */
    deployerGroups: string[];
    /** The GitOps controller's identities: the sync (spec) and ArgoCD's Rollout actions (status). */
    gitopsServiceAccounts: ServiceAccountRef[];
}

/** The policy stage's settings. */
export interface PolicyConfig {
    /**
     * `policies.kyverno.io/v1` (ValidatingPolicy, MutatingPolicy, GeneratingPolicy; Kyverno >= 1.17)
     * or `kyverno.io/v1` ClusterPolicy for clusters on an older Kyverno. Same behaviour.
     */
    kyvernoApi: KyvernoApi;
    availabilityPolicies: AvailabilityPolicies;
    validationAction: ValidationAction;
    /** Mutations only; validations always fail closed. */
    mutationFailurePolicy: FailurePolicy;
    /** The tenant namespaces every policy applies to (ANDed with the narrower selectors below). */
    tenantNamespaceSelector: LabelSelector;
    /** `maxUnavailable` of every generated PodDisruptionBudget: a number of pods (ADR-056 D8). */
    pdbMaxUnavailable: number;
    /** Labels that mark a namespace as prod; the replica floor applies there. */
    prodNamespaceLabels: Record<string, string>;
    /** The least `spec.replicas` (or HPA `minReplicas`) a workload in a prod namespace may have. */
    prodMinReplicas: number;
    /** Node label keys pods are spread over, in order. */
    topologyKeys: string[];
    /** Namespaces no policy of the addon applies to, whatever their labels. */
    excludeNamespaces: string[];
    /** Unset: no regulated namespaces on this cluster. */
    regulated?: RegulatedConfig;
}

/** An ArgoCD group/kind pair; `group` is `""` for the core group. */
export interface GroupKind {
    group: string;
    kind: string;
}

/**
 * An ArgoCD ignoreDifferences rule. `kind: "*"` means every kind (ArgoCD's `.all`); the program
 * writes such a rule once per built-in kind instead (ADR-056 as-built 2026-07-14).
 */
export interface IgnoreRule {
    group: string;
    kind: string;
    /** Application-level rules only. */
    name?: string;
    namespace?: string;
    jsonPointers: string[];
    jqPathExpressions: string[];
    managedFieldsManagers: string[];
}

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

/** Every default of the two sections, in one place; the README's config reference follows it. */
export const ADMISSION_DEFAULTS = {
    policy: {
        kyvernoApi: "policies.kyverno.io/v1" as KyvernoApi,
        availabilityPolicies: "own" as AvailabilityPolicies,
        validationAction: "Enforce" as ValidationAction,
        // A mutation Kyverno cannot answer must not stop every workload in the cluster.
        mutationFailurePolicy: "Ignore" as FailurePolicy,
        // Environment namespaces carry their tier (ADR-056 D3); platform namespaces do not match.
        tenantNamespaceSelector: {
            matchExpressions: [{ key: TIER_LABEL, operator: "In" as SelectorOperator, values: [...TIERS] }],
        } as Readonly<LabelSelector>,
        pdbMaxUnavailable: 1,
        prodNamespaceLabels: { [TIER_LABEL]: "prod" } as Readonly<Record<string, string>>,
        prodMinReplicas: 2,
        topologyKeys: ["topology.kubernetes.io/zone", "kubernetes.io/hostname"] as readonly string[],
        // Kyverno's own namespace and the control plane's: a policy there can lock the cluster out.
        excludeNamespaces: ["kube-system", "kube-public", "kube-node-lease", "kyverno"] as readonly string[],
    },
    argocd: {
        // runsOn: this stack's cluster (cluster.name).
        namespace: "argocd",
        owner: "external" as ArgoObjectOwner,
        allKinds: BUILTIN_KINDS,
        rbac: { actions: APPROVER_ROLLOUT_ACTIONS },
    },
} as const;

const POLICY_KEYS = [
    "kyvernoApi",
    "availabilityPolicies",
    "validationAction",
    "mutationFailurePolicy",
    "tenantNamespaceSelector",
    "pdbMaxUnavailable",
    "prodNamespaceLabels",
    "prodMinReplicas",
    "topologyKeys",
    "excludeNamespaces",
    "regulated",
];
const SELECTOR_KEYS = ["matchLabels", "matchExpressions"];
const REGULATED_KEYS = ["namespaceLabels", "approverGroups", "deployerGroups", "gitopsServiceAccounts"];
const ARGOCD_KEYS = ["runsOn", "namespace", "projects", "applicationSets", "ignoreDifferences", "allKinds", "rbac"];
const PROJECT_KEYS = ["owner", "namespaceResources"];
const APPSET_KEYS = ["owner", "syncOptions", "ignoreDifferences"];
const RBAC_KEYS = ["approverRole", "deployerRoles", "projects", "actions"];
const SYSTEM_RULE_KEYS = ["group", "kind", "jsonPointers", "jqPathExpressions", "managedFieldsManagers"];
const APP_RULE_KEYS = [...SYSTEM_RULE_KEYS, "name", "namespace"];

/** A Kubernetes object name (DNS subdomain), as AppProjects and ApplicationSets are named. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const API_GROUP = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;
const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
/** A group as authenticators report it: no leading or trailing blanks. */
const GROUP = /^\S(.{0,252}\S)?$/;
/** `<namespace>/<name>` of a ServiceAccount. */
const SERVICE_ACCOUNT = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
/** An ArgoCD RBAC subject: a role or an SSO group; commas and spaces would split the CSV line. */
const RBAC_SUBJECT = /^[^\s,#]+$/;
const SYNC_OPTION = /^[A-Za-z]+=[^\s,]+$/;
/** Only ArgoCD's own Rollout actions: a name it does not know would make a policy line that does nothing. */
const ACTION: StringRule = {
    pattern: new RegExp(`^(${ARGOCD_ROLLOUT_ACTIONS.join("|")})$`),
    describe: `one of ArgoCD's Rollout actions ${ARGOCD_ROLLOUT_ACTIONS.join(", ")} (argo-cd resource_customizations/argoproj.io/Rollout/actions; ${ROLLOUT_ACTIONS_SINCE_3_1.join(" and ")} since ArgoCD 3.1; there is no "promote")`,
};

const percent = (v: unknown): boolean => typeof v === "string" && /%\s*$/.test(v);

export function readPolicy(r: ConfigReader, value: unknown): PolicyConfig | undefined {
    const d = ADMISSION_DEFAULTS.policy;
    const p = r.object("policy", value, POLICY_KEYS);
    if (!p) {
        return undefined;
    }
    const prodNamespaceLabels = p.prodNamespaceLabels === undefined ? { ...d.prodNamespaceLabels } : nonEmptyLabels(r, "policy.prodNamespaceLabels", p.prodNamespaceLabels, "marks a prod namespace");
    const regulated = p.regulated === undefined || p.regulated === null ? undefined : readRegulated(r, p.regulated);
    const cfg: PolicyConfig = {
        kyvernoApi: r.string("policy.kyvernoApi", p.kyvernoApi, { oneOf: KYVERNO_APIS, describe: "" }, d.kyvernoApi) as KyvernoApi,
        availabilityPolicies: r.string("policy.availabilityPolicies", p.availabilityPolicies, { oneOf: AVAILABILITY_POLICIES, describe: "" }, d.availabilityPolicies) as AvailabilityPolicies,
        validationAction: r.string("policy.validationAction", p.validationAction, { oneOf: ["Enforce", "Audit"], describe: "" }, d.validationAction) as ValidationAction,
        mutationFailurePolicy: r.string("policy.mutationFailurePolicy", p.mutationFailurePolicy, { oneOf: FAILURE_POLICIES, describe: "" }, d.mutationFailurePolicy) as FailurePolicy,
        tenantNamespaceSelector: p.tenantNamespaceSelector === undefined ? copySelector(d.tenantNamespaceSelector) : readSelector(r, "policy.tenantNamespaceSelector", p.tenantNamespaceSelector),
        // A percentage is reported by the preflight with its reason (ADR-056 D8), not as a type error.
        pdbMaxUnavailable: percent(p.pdbMaxUnavailable) ? d.pdbMaxUnavailable : r.integer("policy.pdbMaxUnavailable", p.pdbMaxUnavailable, 1, 100, d.pdbMaxUnavailable),
        prodNamespaceLabels,
        prodMinReplicas: r.integer("policy.prodMinReplicas", p.prodMinReplicas, 2, 100, d.prodMinReplicas),
        topologyKeys: r.strings("policy.topologyKeys", p.topologyKeys, { pattern: LABEL_KEY, describe: "a node label key such as topology.kubernetes.io/zone" }, d.topologyKeys, { min: 1, max: 3 }),
        excludeNamespaces: r.strings("policy.excludeNamespaces", p.excludeNamespaces, { pattern: DNS_LABEL, describe: "a namespace name" }, d.excludeNamespaces, { min: 0, max: 50 }),
        ...(regulated ? { regulated } : {}),
    };
    preflightPolicy(r, cfg, p);
    return cfg;
}

/** Labels that must select something narrower than every namespace. */
function nonEmptyLabels(r: ConfigReader, key: string, value: unknown, what: string): Record<string, string> {
    const labels = r.labels(key, value);
    if (isPlainObject(value) && Object.keys(value).length === 0) {
        // An empty selector matches every namespace.
        r.problem(key, value, `must name at least one label that ${what} (an empty selector matches every namespace)`);
    }
    return labels;
}

function copySelector(s: Readonly<LabelSelector>): LabelSelector {
    return {
        ...(s.matchLabels ? { matchLabels: { ...s.matchLabels } } : {}),
        ...(s.matchExpressions ? { matchExpressions: s.matchExpressions.map((e) => ({ ...e, ...(e.values ? { values: [...e.values] } : {}) })) } : {}),
    };
}

/** A namespace label selector, checked as the API server checks one (`metav1.LabelSelector`). */
function readSelector(r: ConfigReader, key: string, value: unknown): LabelSelector {
    const o = r.object(key, value, SELECTOR_KEYS);
    if (!o) {
        return {};
    }
    const out: LabelSelector = {};
    if (o.matchLabels !== undefined) {
        out.matchLabels = r.labels(`${key}.matchLabels`, o.matchLabels);
    }
    if (o.matchExpressions !== undefined) {
        if (!Array.isArray(o.matchExpressions)) {
            r.problem(`${key}.matchExpressions`, o.matchExpressions, "must be a list of {key, operator, values}");
        } else {
            out.matchExpressions = [];
            o.matchExpressions.forEach((e, i) => {
                const k = `${key}.matchExpressions[${i}]`;
                const x = r.object(k, e, ["key", "operator", "values"]);
                if (!x) {
                    return;
                }
                const labelKey = r.requiredString(`${k}.key`, x.key, { pattern: LABEL_KEY, describe: "a label key such as platform.example/tier" });
                const operator = r.requiredString(`${k}.operator`, x.operator, { oneOf: SELECTOR_OPERATORS, describe: "" }) as SelectorOperator | undefined;
                const values = r.strings(`${k}.values`, x.values, { pattern: LABEL_VALUE, describe: "a label value" }, [], { min: 0, max: 50 });
                const needsValues = operator === "In" || operator === "NotIn";
                if (operator && needsValues !== values.length > 0) {
                    // The API server's rule for selector requirements.
                    r.problem(`${k}.values`, x.values, needsValues ? `must list at least one value with ${operator}` : `must be empty with ${operator}`);
                }
                if (labelKey && operator) {
                    out.matchExpressions!.push({ key: labelKey, operator, ...(needsValues ? { values } : {}) });
                }
            });
        }
    }
    if (Object.keys(out.matchLabels ?? {}).length === 0 && (out.matchExpressions ?? []).length === 0) {
        r.problem(key, value, "must select tenant namespaces by at least one label (an empty selector matches every namespace)");
    }
    return out;
}

function readRegulated(r: ConfigReader, value: unknown): RegulatedConfig | undefined {
    const g = r.object("policy.regulated", value, REGULATED_KEYS);
    if (!g) {
        return undefined;
    }
    const group = { pattern: GROUP, describe: "a group name as the API server sees it (request.userInfo.groups)" };
    const accounts = r.strings(
        "policy.regulated.gitopsServiceAccounts",
        g.gitopsServiceAccounts,
        { pattern: SERVICE_ACCOUNT, describe: "<namespace>/<name> of a ServiceAccount, such as argocd/argocd-application-controller" },
        [],
        { min: 1, max: 20 },
    );
    return {
        namespaceLabels: g.namespaceLabels === undefined ? missing(r, "policy.regulated.namespaceLabels", "labels that mark a regulated namespace") : nonEmptyLabels(r, "policy.regulated.namespaceLabels", g.namespaceLabels, "marks a regulated namespace"),
        approverGroups: r.strings("policy.regulated.approverGroups", g.approverGroups, group, [], { min: 1, max: 20 }),
        deployerGroups: r.strings("policy.regulated.deployerGroups", g.deployerGroups, group, [], { min: 0, max: 20 }),
        gitopsServiceAccounts: accounts.map((a) => {
            const [namespace, name] = a.split("/");
            return { namespace, name };
        }),
    };
}

function missing(r: ConfigReader, key: string, what: string): Record<string, string> {
    r.problem(key, undefined, `is required: ${what}`);
    return {};
}

/** `clusterName`: this stack's `cluster.name`, where ArgoCD runs unless `argocd.runsOn` says otherwise. */
export function readArgoCd(r: ConfigReader, value: unknown, clusterName: string | undefined): ArgoCdConfig | undefined {
    const d = ADMISSION_DEFAULTS.argocd;
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
    const subject = { pattern: RBAC_SUBJECT, describe: "an ArgoCD role or SSO group such as role:approver (no spaces, commas or #)" };
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
        },
    };
    preflightArgoCd(r, cfg, a);
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
