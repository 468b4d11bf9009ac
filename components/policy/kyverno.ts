import { absent } from "../config/reader";
import type { PolicyConfig } from "./config";
import { approvalPodsRule, approvalRule } from "./approval";
import { approvalBindingCelPolicy, approvalBindingClusterPolicy } from "./approvalBindings";
import { availabilityCelPolicies, availabilityClusterPolicies, availabilityRules } from "./availability";
import { PolicyContext, ownsAvailability } from "./builders";
import { celPolicy } from "./cel";
import { clusterPolicy } from "./jmes";
import type { Rule } from "./rule";
import { rolloutOnlyRules } from "./rolloutOnly";
import { tierRules } from "./tierAdmission";
import type { CelPolicy, ClusterPolicy, KyvernoPolicy } from "./shapes";

export type { KyvernoPolicy } from "./shapes";

/**
 * The admission layer made Rollout-aware (ADR-056 D2, D8): ADR-085's availability policies with
 * Rollout matched explicitly, the Rollout-only guards, and regulated prod's approval guard
 * (D3). Every validation rule is one declaration (rule.ts) rendered to each Kyverno API, and the
 * generated objects one template (template.ts), so the engine is a per-stack switch: `policies.kyverno.io/v1` (served from Kyverno
 * 1.17) by default, and `kyverno.io/v1` ClusterPolicy (deprecated since 1.18, removal planned for
 * 1.20) for older clusters. Where the two still differ is in docs/stages/policy.md.
 */

/**
 * Kyverno's default webhook timeout (kyverno api/kyverno/v1 common_types.go WebhookConfiguration,
 * "The default timeout is 10s"), written out on every CEL policy for what it does to the webhook
 * configuration, not for its value. Kyverno 1.17 and 1.18 serve every CEL policy without match
 * conditions, an Exact match policy or a timeout from one shared webhook, and give that webhook the
 * namespace selector of whichever of them it reads last (kyverno/kyverno
 * pkg/controllers/webhook/validating.go buildWebhookRules at v1.17.2 and v1.18.2; fixed in v1.19.0
 * by #16615): `disallow-default-namespace` (the default namespace) and the prod replica floor
 * (prod namespaces) cannot both be called then. A policy with a timeout is "fine-grained": it gets
 * a webhook of its own with its own selector. The e2e scenario kyverno-webhook-selectors showed the
 * shared webhook on Kyverno 1.17.2 and holds each policy to exactly its namespaces.
 */
export const KYVERNO_WEBHOOK_TIMEOUT_SECONDS = 10;

function ownWebhook<P extends CelPolicy>(policy: P): P {
    const spec = policy.spec as P["spec"] & { webhookConfiguration?: { timeoutSeconds?: number } };
    return { ...policy, spec: { ...spec, webhookConfiguration: { ...spec.webhookConfiguration, timeoutSeconds: KYVERNO_WEBHOOK_TIMEOUT_SECONDS } } };
}

/** The stack's validation rules, in the order the policies are declared. */
function rules(cfg: PolicyConfig, ctx: PolicyContext): Rule[] {
    return [
        ...(ownsAvailability(cfg) ? availabilityRules(cfg) : []),
        ...rolloutOnlyRules(ctx),
        ...(cfg.regulated ? [approvalRule(cfg.regulated, ctx), approvalPodsRule(ctx)] : []),
        ...tierRules(cfg, ctx),
    ].filter((r) => !absent(cfg, r.scope));
}

export function celPolicies(cfg: PolicyConfig, ctx: PolicyContext): CelPolicy[] {
    const generated = [...(ownsAvailability(cfg) && !absent(cfg, "tenant") ? availabilityCelPolicies(cfg) : []), ...approvalBindingCelPolicy(cfg)];
    return [...generated, ...rules(cfg, ctx).map((r) => celPolicy(cfg, r))].map(ownWebhook);
}

export function clusterPolicies(cfg: PolicyConfig, ctx: PolicyContext): ClusterPolicy[] {
    const generated = [...(ownsAvailability(cfg) && !absent(cfg, "tenant") ? availabilityClusterPolicies(cfg) : []), ...approvalBindingClusterPolicy(cfg)];
    return [...generated, ...rules(cfg, ctx).map((r) => clusterPolicy(cfg, r))];
}

/** The stack's policies in the configured API. */
export function kyvernoPolicies(cfg: PolicyConfig, ctx: PolicyContext): KyvernoPolicy[] {
    return cfg.kyvernoApi === "kyverno.io/v1" ? clusterPolicies(cfg, ctx) : celPolicies(cfg, ctx);
}
