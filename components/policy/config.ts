import { ConfigReader, DNS_LABEL, isPlainObject } from "../config/reader";
import { TIERS } from "../delivery/strategy";
import { preflightPolicy } from "./preflight";


/**
 * The policy stage's configuration section, `policy` (ADR-056 D2, D3, D8): its types, its
 * defaults, its reader and its preflight. After the section is read, the preflight checks it
 * against the ADR's traps on the same reader, so every problem of the stack file is reported
 * together.
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
    /** The GitOps controller's sync identities (ArgoCD's application controller): they create, change and prune Rollouts. */
    gitopsServiceAccounts: ServiceAccountRef[];
    /**
     * The identities ArgoCD's API server runs Rollout actions as (`argocd-server`). It acts for any
     * user ArgoCD's RBAC lets through, so the guard lets it write only what the actions write.
     */
    actionServiceAccounts: ServiceAccountRef[];
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

/** Every default of the section, in one place; the README's config reference follows it. */
export const POLICY_DEFAULTS = {
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
const REGULATED_KEYS = ["namespaceLabels", "approverGroups", "deployerGroups", "gitopsServiceAccounts", "actionServiceAccounts"];

const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
/** A group as authenticators report it: no leading or trailing blanks. */
const GROUP = /^\S(.{0,252}\S)?$/;
/** `<namespace>/<name>` of a ServiceAccount. */
const SERVICE_ACCOUNT = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

const percent = (v: unknown): boolean => typeof v === "string" && /%\s*$/.test(v);

export function readPolicy(r: ConfigReader, value: unknown): PolicyConfig | undefined {
    const d = POLICY_DEFAULTS;
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
    const actionAccounts = r.strings(
        "policy.regulated.actionServiceAccounts",
        g.actionServiceAccounts,
        { pattern: SERVICE_ACCOUNT, describe: "<namespace>/<name> of a ServiceAccount, such as argocd/argocd-server" },
        [],
        { min: 0, max: 20 },
    );
    // ArgoCD's API server patches and deletes resources, and runs the Rollout actions, as its own
    // identity for any user ArgoCD's RBAC lets through (argo-cd v3.5.1 server/application/application.go
    // `PatchResource`, `DeleteResource`, `RunResourceActionV2`): exempting it like the sync identity
    // would let an ArgoCD `update` or `delete` change or recreate a regulated Rollout.
    for (const a of accounts.filter((a) => a.split("/")[1] === "argocd-server")) {
        r.problem(
            "policy.regulated.gitopsServiceAccounts",
            a,
            "must not name ArgoCD's API server: it acts for any user ArgoCD's RBAC lets through (resource patch, delete, Rollout actions). List it in policy.regulated.actionServiceAccounts, where the guard lets it write only what ArgoCD's Rollout actions write (status, spec.paused, spec.restartAt)",
        );
    }
    for (const a of actionAccounts.filter((a) => accounts.includes(a))) {
        r.problem("policy.regulated.actionServiceAccounts", a, "must not repeat a policy.regulated.gitopsServiceAccounts identity: an action identity is exempted for the actions' writes only");
    }
    // Both are required: without approvers the guard lets nobody approve, and without the GitOps
    // identities nobody may create or change a regulated Rollout, ArgoCD's sync included.
    if (g.approverGroups === undefined || g.approverGroups === null) {
        r.problem("policy.regulated.approverGroups", g.approverGroups, "is required: the groups whose members approve a regulated rollout (without them nobody can pass the approval pause)");
    }
    if (g.gitopsServiceAccounts === undefined || g.gitopsServiceAccounts === null) {
        r.problem("policy.regulated.gitopsServiceAccounts", g.gitopsServiceAccounts, "is required: <namespace>/<name> of the GitOps controller's ServiceAccounts, such as argocd/argocd-application-controller (without them ArgoCD cannot sync a regulated Rollout)");
    }
    return {
        namespaceLabels: g.namespaceLabels === undefined ? missing(r, "policy.regulated.namespaceLabels", "labels that mark a regulated namespace") : nonEmptyLabels(r, "policy.regulated.namespaceLabels", g.namespaceLabels, "marks a regulated namespace"),
        approverGroups: r.strings("policy.regulated.approverGroups", g.approverGroups, group, [], { min: 1, max: 20 }),
        deployerGroups: r.strings("policy.regulated.deployerGroups", g.deployerGroups, group, [], { min: 0, max: 20 }),
        gitopsServiceAccounts: accounts.map(serviceAccountRef),
        actionServiceAccounts: actionAccounts.map(serviceAccountRef),
    };
}

function serviceAccountRef(a: string): ServiceAccountRef {
    const [namespace, name] = a.split("/");
    return { namespace, name };
}

function missing(r: ConfigReader, key: string, what: string): Record<string, string> {
    r.problem(key, undefined, `is required: ${what}`);
    return {};
}
