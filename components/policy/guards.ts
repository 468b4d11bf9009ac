import type { PolicyConfig } from "./config";
import { GATEWAY_API_PLUGIN } from "../rollouts/plugin";
import { MESSAGES, POLICY_NAMES, clusterDeny, validating } from "./builders";
import type { ClusterPolicy, ValidatingPolicy } from "./shapes";
import { ROLLOUT } from "./workloads";

/**
 * The Rollout-only guards (ADR-056 D4, D8): no ADR-085 policy knows them, so they are declared in
 * both `policy.availabilityPolicies` modes.
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

export function guardCelPolicies(cfg: PolicyConfig): ValidatingPolicy[] {
    return [
        validating(cfg, POLICY_NAMES.routeNamespace, [ROLLOUT], {
            variables: [{ name: "gatewayApi", expression: GATEWAY_API_CONFIG }],
            expression: '!("namespace" in variables.gatewayApi) || variables.gatewayApi["namespace"] == "" || variables.gatewayApi["namespace"] == object.metadata.namespace',
            message: MESSAGES.routeNamespace,
        }),
        validating(cfg, POLICY_NAMES.maxSurge, [ROLLOUT], {
            expression: `!(has(object.spec.strategy) && has(object.spec.strategy.canary) && has(object.spec.strategy.canary.maxSurge)) || !string(object.spec.strategy.canary.maxSurge).matches(${JSON.stringify(ZERO_SURGE)})`,
            message: MESSAGES.maxSurge,
        }),
    ];
}

export function guardClusterPolicies(cfg: PolicyConfig): ClusterPolicy[] {
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
    ];
}
