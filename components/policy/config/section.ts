import { defaultsOf, field, readField, readSection } from "../../config/declare";
import { ConfigReader, DNS_LABEL, isPlainObject } from "../../config/reader";
import { preflightPolicy } from "../preflight";
import { LABEL_KEY, LabelSelector, SELECTOR_SCHEMA, readSelector } from "./selector";
import type { AvailabilityPolicies, FailurePolicy, KyvernoApi, PolicyConfig, RegulatedConfig, ServiceAccountRef, ValidationAction } from "./types";

/**
 * The policy stage's configuration section, `policy` (ADR-056 D2, D3, D8): its types, its
 * defaults, its reader and its preflight. After the section is read, the preflight checks it
 * against the ADR's traps on the same reader, so every problem of the stack file is reported
 * together.
 */

export const KYVERNO_APIS: readonly KyvernoApi[] = ["policies.kyverno.io/v1", "kyverno.io/v1"];

export const FAILURE_POLICIES: readonly FailurePolicy[] = ["Ignore", "Fail"];

export const AVAILABILITY_POLICIES: readonly AvailabilityPolicies[] = ["own", "complement"];

/** A group as authenticators report it: no leading or trailing blanks. */
const GROUP = /^\S(.{0,252}\S)?$/;
/** `<namespace>/<name>` of a ServiceAccount. */
const SERVICE_ACCOUNT = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const GROUP_RULE = { pattern: GROUP, describe: "a group name as the API server sees it (request.userInfo.groups)" };

/** The `policy` section: every key, once. */
export const POLICY_FIELDS = {
    kyvernoApi: field.oneOf(KYVERNO_APIS, { default: "policies.kyverno.io/v1", describe: "", doc: "the Kyverno API the policies are written in: kyverno.io/v1 (ClusterPolicy) for a Kyverno before 1.17, which does not serve policies.kyverno.io/v1; where the two differ, and switching a live cluster: docs/stages/policy.md" }),
    availabilityPolicies: field.oneOf(AVAILABILITY_POLICIES, {
        default: "own",
        describe: "",
        doc: "own: this program declares ADR-085's availability policies under their names; complement: the platform keeps its own (already Rollout-aware) and this program adds only what they lack",
    }),
    validationAction: field.oneOf(["Enforce", "Audit"], { default: "Enforce", describe: "", doc: "Enforce (refuse) or Audit (report and warn)" }),
    // A mutation Kyverno cannot answer must not stop every workload in the cluster.
    mutationFailurePolicy: field.oneOf(FAILURE_POLICIES, { default: "Ignore", describe: "", doc: "Ignore (a mutation Kyverno cannot answer lets the request through) or Fail; validations always fail closed" }),
    // Environment namespaces carry their tier (ADR-056 D3) in labels only the platform knows: no
    // default, or the guards would select someone else's namespaces, or none.
    tenantNamespaceSelector: field.custom<LabelSelector>({
        type: "label selector",
        schema: SELECTOR_SCHEMA,
        required: true,
        doc: "label selector (matchLabels, matchExpressions) of the tenant namespaces every policy applies to, by the labels the platform's namespaces carry (their tier, ADR-056 D3); never empty",
    }),
    // A percentage is reported by the preflight with its reason (ADR-056 D8), not as a type error.
    pdbMaxUnavailable: field.integer({ min: 1, max: 100, default: 1, readBySection: true, doc: "maxUnavailable of every generated PodDisruptionBudget: a number of pods below prodMinReplicas; a percentage is refused (D8)" }),
    prodNamespaceLabels: field.labels({ required: true, readBySection: true, doc: "at least one label marking prod namespaces (among the tenant namespaces); the replica floor applies there" }),
    prodMinReplicas: field.integer({ min: 2, max: 100, default: 2, doc: "the least spec.replicas, or HPA minReplicas, of a prod workload" }),
    topologyKeys: field.strings({
        rule: { pattern: LABEL_KEY, describe: "a node label key such as topology.kubernetes.io/zone" },
        default: ["topology.kubernetes.io/zone", "kubernetes.io/hostname"],
        size: { min: 1, max: 3 },
        doc: "node label keys pods are spread over, in order, one spread constraint each",
    }),
    // Kyverno's own namespace and the control plane's: a policy there can lock the cluster out.
    excludeNamespaces: field.strings({
        rule: { pattern: DNS_LABEL, describe: "a namespace name" },
        default: ["kube-system", "kube-public", "kube-node-lease", "kyverno"],
        size: { min: 0, max: 50 },
        doc: "namespaces no policy applies to whatever their labels; never default",
    }),
    regulated: field.section({
        readBySection: true,
        defaultDoc: "unset: no regulated namespaces, no approval guard",
        doc: "regulated prod (D3, ADR-049): only the GitOps identities change a Rollout, only approvers approve",
        fields: {
            namespaceLabels: field.labels({ required: true, doc: "at least one label marking regulated namespaces (among the tenant namespaces)" }),
            approverGroups: field.strings({ rule: GROUP_RULE, size: { min: 1, max: 20 }, required: true, doc: "1-20 groups (as request.userInfo.groups names them) whose members approve" }),
            deployerGroups: field.strings({ rule: GROUP_RULE, size: { min: 0, max: 20 }, required: true, doc: "groups whose members ship (the deployer Role is bound to them, ArgoCD denies them the approval); never an approver group; [] only where nobody ships by hand" }),
            gitopsServiceAccounts: field.strings({
                rule: { pattern: SERVICE_ACCOUNT, describe: "<namespace>/<name> of a ServiceAccount, such as argocd/argocd-application-controller" },
                size: { min: 1, max: 20 },
                required: true,
                doc: "1-20 <namespace>/<name>: the identities ArgoCD syncs as, which alone create, change and prune a regulated Rollout",
            }),
            actionServiceAccounts: field.strings({
                rule: { pattern: SERVICE_ACCOUNT, describe: "<namespace>/<name> of a ServiceAccount, such as argocd/argocd-server" },
                size: { min: 0, max: 20 },
                doc: "0-20 <namespace>/<name>: the identities ArgoCD's API server runs Rollout actions, resource patches and deletes as",
            }),
        },
    }),
} as const;

/** Every default of the section, in one object. */
export const POLICY_DEFAULTS = defaultsOf<{
    kyvernoApi: KyvernoApi;
    availabilityPolicies: AvailabilityPolicies;
    validationAction: ValidationAction;
    mutationFailurePolicy: FailurePolicy;
    pdbMaxUnavailable: number;
    prodMinReplicas: number;
    topologyKeys: readonly string[];
    excludeNamespaces: readonly string[];
}>(POLICY_FIELDS);

const percent = (v: unknown): boolean => typeof v === "string" && /%\s*$/.test(v);

export function readPolicy(r: ConfigReader, value: unknown): PolicyConfig | undefined {
    const d = POLICY_DEFAULTS;
    const section = readSection(r, "policy", POLICY_FIELDS, value);
    if (!section) {
        return undefined;
    }
    const p = section.raw;
    // Required: reported by readSection when missing.
    const prodNamespaceLabels = p.prodNamespaceLabels === undefined || p.prodNamespaceLabels === null ? {} : nonEmptyLabels(r, "policy.prodNamespaceLabels", p.prodNamespaceLabels, "marks a prod namespace");
    const regulated = p.regulated === undefined || p.regulated === null ? undefined : readRegulated(r, p.regulated);
    const cfg: PolicyConfig = {
        kyvernoApi: section.kyvernoApi,
        availabilityPolicies: section.availabilityPolicies,
        validationAction: section.validationAction,
        mutationFailurePolicy: section.mutationFailurePolicy,
        tenantNamespaceSelector: p.tenantNamespaceSelector === undefined || p.tenantNamespaceSelector === null ? {} : readSelector(r, "policy.tenantNamespaceSelector", p.tenantNamespaceSelector),
        // A percentage is reported by the preflight with its reason (ADR-056 D8), not as a type error.
        pdbMaxUnavailable: percent(p.pdbMaxUnavailable) ? d.pdbMaxUnavailable : (readField(r, "policy.pdbMaxUnavailable", { ...POLICY_FIELDS.pdbMaxUnavailable, readBySection: false }, p.pdbMaxUnavailable) as number),
        prodNamespaceLabels,
        prodMinReplicas: section.prodMinReplicas,
        topologyKeys: section.topologyKeys,
        excludeNamespaces: section.excludeNamespaces,
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

function readRegulated(r: ConfigReader, value: unknown): RegulatedConfig | undefined {
    const g = r.object("policy.regulated", value, Object.keys(POLICY_FIELDS.regulated.fields));
    if (!g) {
        return undefined;
    }
    const f = POLICY_FIELDS.regulated.fields;
    const accounts = readField(r, "policy.regulated.gitopsServiceAccounts", f.gitopsServiceAccounts, g.gitopsServiceAccounts) as string[];
    const actionAccounts = readField(r, "policy.regulated.actionServiceAccounts", f.actionServiceAccounts, g.actionServiceAccounts) as string[];
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
    // Only the platform knows who ships: leaving them out must not quietly bind the deployer Role
    // to nobody and deny nobody in ArgoCD; [] says so on purpose.
    if (g.deployerGroups === undefined || g.deployerGroups === null) {
        r.problem("policy.regulated.deployerGroups", g.deployerGroups, "is required: the groups whose members ship to regulated namespaces (bound to the deployer Role, denied the approval in ArgoCD); [] if nobody ships by hand");
    }
    if (g.gitopsServiceAccounts === undefined || g.gitopsServiceAccounts === null) {
        r.problem("policy.regulated.gitopsServiceAccounts", g.gitopsServiceAccounts, "is required: <namespace>/<name> of the GitOps controller's ServiceAccounts, such as argocd/argocd-application-controller (without them ArgoCD cannot sync a regulated Rollout)");
    }
    return {
        namespaceLabels: g.namespaceLabels === undefined ? missing(r, "policy.regulated.namespaceLabels", "labels that mark a regulated namespace") : nonEmptyLabels(r, "policy.regulated.namespaceLabels", g.namespaceLabels, "marks a regulated namespace"),
        approverGroups: readField(r, "policy.regulated.approverGroups", f.approverGroups, g.approverGroups) as string[],
        deployerGroups: readField(r, "policy.regulated.deployerGroups", f.deployerGroups, g.deployerGroups) as string[],
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
