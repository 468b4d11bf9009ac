import { defaultsOf, field, readField, readSection } from "../../config/declare";
import { ConfigReader, DNS_LABEL } from "../../config/reader";
import { TIERS } from "../../delivery/strategy";
import { preflightPolicy } from "../preflight";
import { LABEL_KEY, LabelSelector, SELECTOR_SCHEMA, copySelector, nonEmptyLabels, readSelector } from "./selector";
import { REGULATED_FIELD, RegulatedConfig, readRegulated } from "./regulated";


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

/** The `policy` section: every key, once. */
export const POLICY_FIELDS = {
    kyvernoApi: field.oneOf(KYVERNO_APIS, { default: "policies.kyverno.io/v1", describe: "", doc: "the Kyverno API the policies are written in: kyverno.io/v1 (ClusterPolicy) for a Kyverno before 1.17, which does not serve policies.kyverno.io/v1; same behaviour" }),
    availabilityPolicies: field.oneOf(AVAILABILITY_POLICIES, {
        default: "own",
        describe: "",
        doc: "own: this program declares ADR-085's availability policies under their names; complement: the platform keeps its own (already Rollout-aware) and this program adds only what they lack",
    }),
    validationAction: field.oneOf(["Enforce", "Audit"], { default: "Enforce", describe: "", doc: "Enforce (refuse) or Audit (report and warn)" }),
    // A mutation Kyverno cannot answer must not stop every workload in the cluster.
    mutationFailurePolicy: field.oneOf(FAILURE_POLICIES, { default: "Ignore", describe: "", doc: "Ignore (a mutation Kyverno cannot answer lets the request through) or Fail; validations always fail closed" }),
    // Environment namespaces carry their tier (ADR-056 D3); platform namespaces do not match.
    tenantNamespaceSelector: field.custom<LabelSelector>({
        type: "label selector",
        schema: SELECTOR_SCHEMA,
        default: { matchExpressions: [{ key: TIER_LABEL, operator: "In", values: [...TIERS] }] },
        doc: "label selector (matchLabels, matchExpressions) of the tenant namespaces every policy applies to; never empty",
    }),
    // A percentage is reported by the preflight with its reason (ADR-056 D8), not as a type error.
    pdbMaxUnavailable: field.integer({ min: 1, max: 100, default: 1, readBySection: true, doc: "maxUnavailable of every generated PodDisruptionBudget: a number of pods below prodMinReplicas; a percentage is refused (D8)" }),
    prodNamespaceLabels: field.labels({ default: { [TIER_LABEL]: "prod" }, readBySection: true, doc: "at least one label marking prod namespaces (among the tenant namespaces); the replica floor applies there" }),
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
    regulated: REGULATED_FIELD,
} as const;

/** Every default of the section, in one object. */
export const POLICY_DEFAULTS = defaultsOf<{
    kyvernoApi: KyvernoApi;
    availabilityPolicies: AvailabilityPolicies;
    validationAction: ValidationAction;
    mutationFailurePolicy: FailurePolicy;
    tenantNamespaceSelector: Readonly<LabelSelector>;
    pdbMaxUnavailable: number;
    prodNamespaceLabels: Readonly<Record<string, string>>;
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
    const prodNamespaceLabels = p.prodNamespaceLabels === undefined ? { ...d.prodNamespaceLabels } : nonEmptyLabels(r, "policy.prodNamespaceLabels", p.prodNamespaceLabels, "marks a prod namespace");
    const regulated = p.regulated === undefined || p.regulated === null ? undefined : readRegulated(r, p.regulated);
    const cfg: PolicyConfig = {
        kyvernoApi: section.kyvernoApi,
        availabilityPolicies: section.availabilityPolicies,
        validationAction: section.validationAction,
        mutationFailurePolicy: section.mutationFailurePolicy,
        tenantNamespaceSelector: p.tenantNamespaceSelector === undefined ? copySelector(d.tenantNamespaceSelector) : readSelector(r, "policy.tenantNamespaceSelector", p.tenantNamespaceSelector),
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
