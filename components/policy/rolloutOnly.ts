import type { PolicyConfig } from "./config";
import { MESSAGES, POLICY_NAMES, PolicyContext, clusterDeny, notTheController, validating } from "./builders";
import type { ClusterPolicy, ValidatingPolicy } from "./shapes";
import { ROLLOUT } from "./workloads";
import { GATEWAY_API_PLUGIN } from "../argoRollouts";

/**
 * The Rollout-only guards (ADR-056 D4, D8): no ADR-085 policy knows them, so they are declared in
 * both `policy.availabilityPolicies` modes. They fail closed, and they match every UPDATE of a
 * Rollout, which includes the controller's own writes of the revision annotation (argo-rollouts
 * v1.9.0 `rollout/sync.go` `setRolloutRevision`, an Update of the Rollout, not of its status): so
 * the controller is exempt by a match condition, as in the approval guard, and a Kyverno outage
 * or a Rollout admitted before the guard existed cannot stop a rollout in progress. What the
 * controller writes is never the tenant's spec, so the exemption opens no path around a guard.
 */

/** The maxSurge a canary gets when it sets none (Argo Rollouts' default). */
export const DEFAULT_CANARY_MAX_SURGE = "25%";

/** maxSurge values that give a canary no headroom: 0, "0", "0%", "00%". */
export const ZERO_SURGE = "^0+%?$";

/** The gatewayAPI plugin's config in a canary Rollout, or an empty map. Indexed, because `namespace` is a CEL reserved word. */
const GATEWAY_API_CONFIG =
    "has(object.spec.strategy) && has(object.spec.strategy.canary) && has(object.spec.strategy.canary.trafficRouting) && " +
    `has(object.spec.strategy.canary.trafficRouting.plugins) && ${JSON.stringify(GATEWAY_API_PLUGIN)} in object.spec.strategy.canary.trafficRouting.plugins ` +
    `? object.spec.strategy.canary.trafficRouting.plugins[${JSON.stringify(GATEWAY_API_PLUGIN)}] : dyn({})`;

export function rolloutOnlyCelPolicies(cfg: PolicyConfig, ctx: PolicyContext): ValidatingPolicy[] {
    const matchConditions = [notTheController(ctx)];
    return [
        validating(cfg, POLICY_NAMES.routeNamespace, [ROLLOUT], {
            matchConditions,
            variables: [{ name: "gatewayApi", expression: GATEWAY_API_CONFIG }],
            expression:
                '!("namespace" in variables.gatewayApi) || variables.gatewayApi["namespace"] == "" || variables.gatewayApi["namespace"] == object.metadata.namespace',
            message: MESSAGES.routeNamespace,
        }),
        validating(cfg, POLICY_NAMES.maxSurge, [ROLLOUT], {
            matchConditions,
            expression: `!(has(object.spec.strategy) && has(object.spec.strategy.canary) && has(object.spec.strategy.canary.maxSurge)) || !string(object.spec.strategy.canary.maxSurge).matches(${JSON.stringify(ZERO_SURGE)})`,
            message: MESSAGES.maxSurge,
        }),
    ];
}

export function rolloutOnlyClusterPolicies(cfg: PolicyConfig, ctx: PolicyContext): ClusterPolicy[] {
    // Kyverno 1.12+ passes the match condition to the webhook; the rules cannot name the user
    // themselves, because these policies also run in the background, where Kyverno refuses
    // request.userInfo (kyverno/kyverno pkg/validation/policy/background.go).
    const exempt = (p: ClusterPolicy): ClusterPolicy => ({
        ...p,
        spec: { ...p.spec, webhookConfiguration: { ...p.spec.webhookConfiguration, matchConditions: [notTheController(ctx)] } },
    });
    return [
        clusterDeny(cfg, POLICY_NAMES.routeNamespace, [ROLLOUT], {
            deny: {
                key: `{{ request.object.spec.strategy.canary.trafficRouting.plugins.${JSON.stringify(GATEWAY_API_PLUGIN)}.namespace || request.object.metadata.namespace }}`,
                operator: "NotEquals",
                value: "{{ request.object.metadata.namespace }}",
            },
            message: MESSAGES.routeNamespace,
        }),
        clusterDeny(cfg, POLICY_NAMES.maxSurge, [ROLLOUT], {
            deny: {
                key: `{{ regex_match('${ZERO_SURGE}', to_string(request.object.spec.strategy.canary.maxSurge || '${DEFAULT_CANARY_MAX_SURGE}')) }}`,
                operator: "Equals",
                value: true,
            },
            message: MESSAGES.maxSurge,
        }),
    ].map(exempt);
}
