import { defaultsOf, field, readField, readSection, type Values } from "../../config/declare";
import { ConfigReader, NAMESPACE_RULE, Plain, absent, isPlainObject } from "../../config/reader";
import { allOf, contradiction } from "../selectors";
import { REGULATED_FIELD, RegulatedConfig, readRegulated } from "./regulated";
import { LABEL_KEY, LabelSelector, SELECTOR_SCHEMA, emptyLabels, readSelector } from "./selector";

/**
 * The policy stage's configuration section, `policy` (ADR-056 D2, D3, D8): its types, its
 * defaults, its reader and its preflight, which checks the values read against the traps the
 * admission engines have on the same reader, so every problem of the stack file is reported together.
 */

/** The `policy` section: every key, once. */
export const POLICY_FIELDS = {
    // policies.kyverno.io/v1 is served from Kyverno 1.17 (kyverno/kyverno v1.17.0 config/crds/policies.kyverno.io/*.yaml).
    kyvernoApi: field.oneOf(["policies.kyverno.io/v1", "kyverno.io/v1"], {
        default: "policies.kyverno.io/v1",
        describe: "",
        doc: "the Kyverno API the policies are written in: kyverno.io/v1 (ClusterPolicy) for a Kyverno before 1.17, which does not serve policies.kyverno.io/v1; where the two differ, and switching a live cluster: docs/stages/policy.md",
    }),
    // complement: the platform's own are already Rollout-aware (ADR-056 as-built, enable_rollout_kind); never a
    // second PDB generator (two budgets over the same pods make every eviction fail, the deadlock D8 prevents).
    availabilityPolicies: field.oneOf(["own", "complement"], {
        default: "own",
        describe: "",
        doc: "own: this program declares ADR-085's availability policies under their names; complement: the platform keeps its own (already Rollout-aware) and this program adds only what they lack",
    }),
    validationAction: field.oneOf(["Enforce", "Audit"], { default: "Enforce", describe: "", doc: "Enforce (refuse) or Audit (report and warn)" }),
    // A mutation Kyverno cannot answer must not stop every workload in the cluster.
    mutationFailurePolicy: field.oneOf(["Ignore", "Fail"], {
        default: "Ignore",
        describe: "",
        doc: "Ignore (a mutation Kyverno cannot answer lets the request through) or Fail; validations always fail closed",
    }),
    absentClasses: field.strings({
        rule: { oneOf: ["prod", "tenants"], describe: "prod or tenants" },
        default: [],
        size: { min: 0, max: 2 },
        doc: "classes of namespaces this cluster has none of (a staging spoke: [prod]; a hub: [tenants], which has no prod either): their keys are refused and their policies, checks and delivery strategies left out",
    }),
    // Environment namespaces carry their tier (ADR-056 D3) in labels only the platform knows: no
    // default, or the guards would select someone else's namespaces, or none.
    tenantNamespaceSelector: field.custom<LabelSelector>({
        type: "label selector",
        schema: SELECTOR_SCHEMA,
        required: (s) => !absent(s, "tenant"),
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
        required: (s) => !absent(s, "prod"),
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
export const POLICY_DEFAULTS = defaultsOf(POLICY_FIELDS);

/** The policy stage's settings, as the section reads them. */
export type PolicyConfig = Omit<Values<typeof POLICY_FIELDS>, "tenantNamespaceSelector" | "pdbMaxUnavailable" | "regulated"> & {
    tenantNamespaceSelector: LabelSelector;
    pdbMaxUnavailable: number;
    /** Unset: no regulated namespaces on this cluster. */
    regulated?: RegulatedConfig;
};
export type KyvernoApi = PolicyConfig["kyvernoApi"];
export type AvailabilityPolicies = PolicyConfig["availabilityPolicies"];
export type ValidationAction = PolicyConfig["validationAction"];
export type FailurePolicy = PolicyConfig["mutationFailurePolicy"];

const percent = (v: unknown): v is string => typeof v === "string" && /%\s*$/.test(v);

/** `delivery`: the stack's delivery section as given, whose tiers a class declared absent leaves without a strategy. */
export function readPolicy(r: ConfigReader, value: unknown, delivery?: unknown): PolicyConfig | undefined {
    const section = readSection(r, "policy", POLICY_FIELDS, value);
    if (!section) return undefined;
    const { raw: p, regulated: _given, ...read } = section;
    emptyLabels(r, "policy.prodNamespaceLabels", p.prodNamespaceLabels, "marks a prod namespace");
    const regulated = p.regulated === undefined || p.regulated === null ? undefined : readRegulated(r, p.regulated);
    const cfg: PolicyConfig = {
        ...read,
        tenantNamespaceSelector:
            p.tenantNamespaceSelector === undefined || p.tenantNamespaceSelector === null
                ? {}
                : readSelector(r, "policy.tenantNamespaceSelector", p.tenantNamespaceSelector),
        // A percentage is reported by the preflight with its reason (ADR-056 D8), not as a type error.
        pdbMaxUnavailable: percent(p.pdbMaxUnavailable)
            ? POLICY_DEFAULTS.pdbMaxUnavailable
            : (readField(r, "policy.pdbMaxUnavailable", { ...POLICY_FIELDS.pdbMaxUnavailable, readBySection: false }, p.pdbMaxUnavailable) as number),
        ...(regulated ? { regulated } : {}),
    };
    preflightPolicy(r, cfg, p, delivery);
    return cfg;
}

/** The policy section's traps (ADR-056 D3, D8). `raw` is the section as given, for values the reader set aside. */
function preflightPolicy(r: ConfigReader, cfg: PolicyConfig, raw: Plain, delivery: unknown): void {
    if (percent(raw.pdbMaxUnavailable)) {
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
        r.problem(
            "policy.excludeNamespaces",
            raw.excludeNamespaces,
            "must not list default: workloads are refused there, and excluding it turns that policy off (ADR-056 D2)",
        );
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
    const given: [string, unknown, string][] = [
        ["policy.tenantNamespaceSelector", raw.tenantNamespaceSelector, "tenant"],
        ["policy.prodNamespaceLabels", raw.prodNamespaceLabels, "prod"],
        ["policy.regulated", raw.regulated, "prod"],
        ...Object.entries(isPlainObject(delivery) ? delivery : {}).map(([tier, v]): [string, unknown, string] => [`delivery.${tier}`, v, tier]),
    ];
    for (const [key, v, c] of given.filter(([, v, c]) => v !== undefined && v !== null && absent(cfg, c))) {
        r.problem(key, v, `must not be set with policy.absentClasses [${cfg.absentClasses.join(", ")}]: this cluster has no ${c} namespaces`);
    }
    // Without the approver and deployer groups there is no regulated strategy (tierStrategies): its settings would do nothing.
    const regulatedTier = isPlainObject(delivery) && isPlainObject(delivery.prod) ? delivery.prod.regulated : undefined;
    if (!cfg.regulated && !absent(cfg, "prod") && regulatedTier !== undefined && regulatedTier !== null) {
        r.problem("delivery.prod.regulated", regulatedTier, "must not be set without policy.regulated: a regulated tier needs its approver groups");
    }
    for (const [key, text] of kyvernoVariables(cfg)) {
        r.problem(
            key,
            text,
            "must not contain {{: every configured string that reaches a policy body is copied into it, and in a kyverno.io/v1 ClusterPolicy Kyverno substitutes {{ ... }} as a variable (a group name {{ request.userInfo.groups[0] }} would make every user with a group an approver)",
        );
    }
    const both = cfg.regulated?.approverGroups.filter((g) => cfg.regulated!.deployerGroups.includes(g)) ?? [];
    if (both.length > 0) {
        r.problem(
            "policy.regulated.deployerGroups",
            cfg.regulated!.deployerGroups,
            `must not include an approver group (${both.join(", ")}): the deployer is never the approver (ADR-056 D3, ADR-049)`,
        );
    }
}

/**
 * Every configured string of the section that holds Kyverno's variable marker `{{`, by its key.
 * The policy bodies copy these strings (group names, label keys and values, namespaces, topology
 * keys), and a ClusterPolicy substitutes `{{ ... }}` anywhere in its rules (kyverno/kyverno
 * `pkg/engine/variables/vars.go` at v1.17.2, `SubstituteAll`). Refused whatever the API, so a later
 * switch of `policy.kyvernoApi` cannot turn a name into a variable. The keys follow the stack file
 * (ServiceAccounts as <namespace>/<name>).
 */
export function kyvernoVariables(cfg: PolicyConfig): [key: string, value: string][] {
    const found: [string, string][] = [];
    const walk = (key: string, v: unknown): void => {
        if (typeof v === "string" && v.includes("{{")) {
            found.push([key, v]);
        } else if (Array.isArray(v)) {
            v.forEach((x, i) => walk(`${key}[${i}]`, x));
        } else if (isPlainObject(v)) {
            for (const [k, x] of Object.entries(v)) {
                if (k.includes("{{")) found.push([`${key}.${k}`, k]);
                walk(`${key}.${k}`, x);
            }
        }
    };
    const { regulated, ...rest } = cfg;
    walk("policy", rest);
    if (regulated) {
        const ref = (a: { namespace: string; name: string }) => `${a.namespace}/${a.name}`;
        walk("policy.regulated", {
            ...regulated,
            gitopsServiceAccounts: regulated.gitopsServiceAccounts.map(ref),
            actionServiceAccounts: regulated.actionServiceAccounts.map(ref),
        });
    }
    return found;
}
