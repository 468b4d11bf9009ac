import { defaultsOf, field, readField, readSection } from "../../config/declare";
import { ConfigReader, NAMESPACE_RULE } from "../../config/reader";
import { preflightPolicy } from "../preflight";
import { REGULATED_FIELD, readRegulated } from "./regulated";
import { LABEL_KEY, LabelSelector, SELECTOR_SCHEMA, nonEmptyLabels, readSelector } from "./selector";
import type { AvailabilityPolicies, FailurePolicy, KyvernoApi, PolicyConfig, ValidationAction } from "./types";

/**
 * The policy stage's configuration section, `policy` (ADR-056 D2, D3, D8): its types, its
 * defaults, its reader and its preflight. After the section is read, the preflight checks it
 * against the ADR's traps on the same reader, so every problem of the stack file is reported
 * together.
 */

export const KYVERNO_APIS: readonly KyvernoApi[] = ["policies.kyverno.io/v1", "kyverno.io/v1"];

export const FAILURE_POLICIES: readonly FailurePolicy[] = ["Ignore", "Fail"];

export const AVAILABILITY_POLICIES: readonly AvailabilityPolicies[] = ["own", "complement"];

/** The `policy` section: every key, once. */
export const POLICY_FIELDS = {
    kyvernoApi: field.oneOf(KYVERNO_APIS, {
        default: "policies.kyverno.io/v1",
        describe: "",
        doc: "the Kyverno API the policies are written in: kyverno.io/v1 (ClusterPolicy) for a Kyverno before 1.17, which does not serve policies.kyverno.io/v1; where the two differ, and switching a live cluster: docs/stages/policy.md",
    }),
    availabilityPolicies: field.oneOf(AVAILABILITY_POLICIES, {
        default: "own",
        describe: "",
        doc: "own: this program declares ADR-085's availability policies under their names; complement: the platform keeps its own (already Rollout-aware) and this program adds only what they lack",
    }),
    validationAction: field.oneOf(["Enforce", "Audit"], { default: "Enforce", describe: "", doc: "Enforce (refuse) or Audit (report and warn)" }),
    // A mutation Kyverno cannot answer must not stop every workload in the cluster.
    mutationFailurePolicy: field.oneOf(FAILURE_POLICIES, {
        default: "Ignore",
        describe: "",
        doc: "Ignore (a mutation Kyverno cannot answer lets the request through) or Fail; validations always fail closed",
    }),
    // Environment namespaces carry their tier (ADR-056 D3) in labels only the platform knows: no
    // default, or the guards would select someone else's namespaces, or none.
    tenantNamespaceSelector: field.custom<LabelSelector>({
        type: "label selector",
        schema: SELECTOR_SCHEMA,
        required: true,
        doc: "label selector (matchLabels, matchExpressions) of the tenant namespaces every policy applies to, by the labels the platform's namespaces carry (their tier, ADR-056 D3); never empty",
    }),
    // A percentage is reported by the preflight with its reason (ADR-056 D8), not as a type error.
    pdbMaxUnavailable: field.integer({
        min: 1,
        max: 100,
        default: 1,
        readBySection: true,
        doc: "maxUnavailable of every generated PodDisruptionBudget: a number of pods below prodMinReplicas; a percentage is refused (D8)",
    }),
    prodNamespaceLabels: field.labels({
        required: true,
        readBySection: true,
        doc: "at least one label marking prod namespaces (among the tenant namespaces); the replica floor applies there",
    }),
    prodMinReplicas: field.integer({ min: 2, max: 100, default: 2, doc: "the least spec.replicas, or HPA minReplicas, of a prod workload" }),
    topologyKeys: field.strings({
        rule: { pattern: LABEL_KEY, describe: "a node label key such as topology.kubernetes.io/zone" },
        default: ["topology.kubernetes.io/zone", "kubernetes.io/hostname"],
        size: { min: 1, max: 3 },
        doc: "node label keys pods are spread over, in order, one spread constraint each",
    }),
    // Kyverno's own namespace and the control plane's: a policy there can lock the cluster out.
    excludeNamespaces: field.strings({
        rule: NAMESPACE_RULE,
        default: ["kube-system", "kube-public", "kube-node-lease", "kyverno"],
        size: { min: 0, max: 50 },
        doc: "namespaces no policy applies to whatever their labels; never default",
    }),
    regulated: REGULATED_FIELD,
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
    const prodNamespaceLabels =
        p.prodNamespaceLabels === undefined || p.prodNamespaceLabels === null
            ? {}
            : nonEmptyLabels(r, "policy.prodNamespaceLabels", p.prodNamespaceLabels, "marks a prod namespace");
    const regulated = p.regulated === undefined || p.regulated === null ? undefined : readRegulated(r, p.regulated);
    const cfg: PolicyConfig = {
        kyvernoApi: section.kyvernoApi,
        availabilityPolicies: section.availabilityPolicies,
        validationAction: section.validationAction,
        mutationFailurePolicy: section.mutationFailurePolicy,
        tenantNamespaceSelector:
            p.tenantNamespaceSelector === undefined || p.tenantNamespaceSelector === null
                ? {}
                : readSelector(r, "policy.tenantNamespaceSelector", p.tenantNamespaceSelector),
        // A percentage is reported by the preflight with its reason (ADR-056 D8), not as a type error.
        pdbMaxUnavailable: percent(p.pdbMaxUnavailable)
            ? d.pdbMaxUnavailable
            : (readField(r, "policy.pdbMaxUnavailable", { ...POLICY_FIELDS.pdbMaxUnavailable, readBySection: false }, p.pdbMaxUnavailable) as number),
        prodNamespaceLabels,
        prodMinReplicas: section.prodMinReplicas,
        topologyKeys: section.topologyKeys,
        excludeNamespaces: section.excludeNamespaces,
        ...(regulated ? { regulated } : {}),
    };
    preflightPolicy(r, cfg, p);
    return cfg;
}
