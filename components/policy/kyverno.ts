import type { PolicyConfig } from "./config";
import { approvalCelPolicy, approvalClusterPolicy } from "./approval";
import { availabilityCelPolicies, availabilityClusterPolicies } from "./availability";
import { PolicyContext, ownsAvailability } from "./builders";
import { guardCelPolicies, guardClusterPolicies } from "./guards";
import type { CelPolicy, ClusterPolicy, KyvernoPolicy } from "./shapes";

export * from "./shapes";

/**
 * The admission layer made Rollout-aware (ADR-056 D2, D8): ADR-085's availability policies with
 * Rollout matched explicitly, the Rollout-only guards, and regulated prod's approval guard
 * (D3). Every policy is built for both Kyverno APIs from the same names, messages and object
 * templates, so the engine is a per-stack switch with the same behaviour: `policies.kyverno.io/v1`
 * (served from Kyverno 1.17) by default, and `kyverno.io/v1` ClusterPolicy (deprecated since
 * 1.18, removal planned for 1.20) for older clusters.
 */

export function celPolicies(cfg: PolicyConfig, ctx: PolicyContext): CelPolicy[] {
    return [
        ...(ownsAvailability(cfg) ? availabilityCelPolicies(cfg) : []),
        ...guardCelPolicies(cfg),
        ...(cfg.regulated ? [approvalCelPolicy(cfg, cfg.regulated, ctx)] : []),
    ];
}

export function clusterPolicies(cfg: PolicyConfig, ctx: PolicyContext): ClusterPolicy[] {
    return [
        ...(ownsAvailability(cfg) ? availabilityClusterPolicies(cfg) : []),
        ...guardClusterPolicies(cfg),
        ...(cfg.regulated ? [approvalClusterPolicy(cfg, cfg.regulated, ctx)] : []),
    ];
}

/** The stack's policies in the configured API. */
export function kyvernoPolicies(cfg: PolicyConfig, ctx: PolicyContext): KyvernoPolicy[] {
    return cfg.kyvernoApi === "kyverno.io/v1" ? clusterPolicies(cfg, ctx) : celPolicies(cfg, ctx);
}
