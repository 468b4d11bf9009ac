import type { PolicyConfig } from "./config";
import { POLICY_NAMES, namespaceSelector } from "./builders";
import type { LabelSelector } from "./shapes";

/**
 * Who the regulated tier rule refuses once it enforces (ADR-056 D3; docs/tenants/admission.md#turning-enforce-on).
 * Kyverno decides, not this program: the rule runs in the background too, so Kyverno's reports name every
 * existing Rollout that fails it (kyverno/kyverno pkg/utils/report/results.go at v1.17.2: `policy` is the
 * policy's name, `result` is `fail`). A ValidatingPolicy judges every update as it is, with no allowance for a
 * Rollout that already failed (pkg/cel/policies/vpol at v1.17.2), so each such Rollout's next sync from git is
 * refused: the preview names them before the run that enforces. A ClusterPolicy lets an update of a Rollout
 * that already fails through (`allowExistingViolations`, api/kyverno/v1/common_types.go), so it refuses no
 * sync that passed before and has nothing to announce.
 */

export type RolloutRef = { namespace: string; name: string };

/** The live objects the announcement reads: the rule (undefined: not installed), the report results, the Rollouts of regulated prod. */
export type EnforcementLive = {
    ruleInstalled: boolean;
    failing: readonly (RolloutRef & { message: string })[];
    regulatedProd: readonly RolloutRef[];
};

/** Whether the stack's regulated tier rule refuses (Enforce) as a ValidatingPolicy: the only case with something to announce. */
export const regulatedEnforced = (policy: Pick<PolicyConfig, "regulated" | "validationAction" | "kyvernoApi">): boolean =>
    policy.regulated !== undefined && policy.validationAction !== "Audit" && policy.kyvernoApi !== "kyverno.io/v1";

/** `metav1.LabelSelector` as the API server's `labelSelector` query (k8s.io/apimachinery pkg/labels/selector.go grammar). */
export function selectorQuery(s: LabelSelector): string {
    return [
        ...Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
        ...(s.matchExpressions ?? []).map((e) =>
            e.operator === "Exists"
                ? e.key
                : e.operator === "DoesNotExist"
                  ? `!${e.key}`
                  : `${e.key} ${e.operator.toLowerCase()} (${(e.values ?? []).join(",")})`,
        ),
    ].join(",");
}

/** The namespaces the regulated tier rule applies to, as the API server's query (its selector, not a copy of its matching). */
export const regulatedProdQuery = (policy: PolicyConfig): string => selectorQuery(namespaceSelector(policy, "prod-regulated"));

/** The preview's notice, or undefined when the rule refuses nobody it has not refused before. */
export function enforcementNotice(stack: string, live: EnforcementLive): string | undefined {
    const rule = POLICY_NAMES.tierRegulated;
    const list = (rs: readonly RolloutRef[]) => rs.map((r) => `${r.namespace}/${r.name}`).join(", ");
    if (live.failing.length > 0) {
        return (
            `stack "${stack}": ${rule} enforces, and Kyverno's policy reports say ${live.failing.length} Rollout(s) fail it; the next sync of each from git is refused until its overlay takes its prod-regulated component:\n` +
            live.failing.map((r) => `  ${r.namespace}/${r.name}: ${r.message}`).join("\n")
        );
    }
    if (!live.ruleInstalled && live.regulatedProd.length > 0) {
        return `stack "${stack}": ${rule} is installed by this run and enforces at once, and Kyverno has judged none of the ${live.regulatedProd.length} Rollout(s) in regulated prod namespaces yet (${list(live.regulatedProd)}): each one's next sync from git is judged. To learn first who would be refused, run with policy.validationAction: Audit, read the policy reports, then remove the key (docs/tenants/admission.md#turning-enforce-on)`;
    }
    return undefined;
}
