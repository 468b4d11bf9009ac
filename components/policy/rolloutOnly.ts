import { COMPONENT_APP, type CanaryStrategy, deliveryPlan } from "../delivery";
import { MESSAGES, POLICY_NAMES, PolicyContext, notTheController } from "./builders";
import { Rule, and, eq, has, not, obj } from "./rule";
import { ROLLOUT } from "./workloads";
import { GATEWAY_API_PLUGIN } from "../argoRollouts";

/**
 * The Rollout-only guards (ADR-056 D4, D8): no ADR-085 policy knows them, so they are declared in
 * both `policy.availabilityPolicies` modes. They match every UPDATE of a Rollout, the controller's
 * own writes of its revision annotation included (argo-rollouts v1.9.0 `rollout/sync.go`
 * `setRolloutRevision`): the controller is exempt, so a Kyverno outage or a Rollout admitted before
 * a guard existed cannot stop a rollout in progress. What it writes is never the tenant's spec.
 */

const CANARY = ["spec", "strategy", "canary"];

/**
 * D8's headroom as the strategy library renders it (`deliveryPlan`, the numbers' one place): a
 * canary's `maxSurge` below it is refused. A percentage is rounded up to whole pods (argo-rollouts
 * v1.9.0 utils/replicaset/replicaset.go `resolveFenceposts`), so only 0% gives no pod at all; an
 * unset maxSurge is Argo Rollouts' default, a percentage.
 */
export function surgeBelowHeadroom(): string {
    const plan = deliveryPlan({ ...COMPONENT_APP, route: undefined }, { tier: "dev" });
    const headroom = (plan.strategy as CanaryStrategy).canary.maxSurge;
    if (!Number.isInteger(headroom) || headroom < 1) {
        throw new Error(`the strategy library renders a canary maxSurge of ${headroom}: D8 needs a whole number of at least 1`);
    }
    return `^(0*(${Array.from({ length: headroom }, (_x, i) => i).join("|")})|0+%)$`;
}

export function rolloutOnlyRules(ctx: PolicyContext): Rule[] {
    const when = [notTheController(ctx)];
    const route = obj([...CANARY, "trafficRouting", "plugins", GATEWAY_API_PLUGIN, "namespace"]);
    return [
        {
            name: POLICY_NAMES.routeNamespace,
            scope: "tenant",
            background: true,
            when,
            checks: [
                {
                    id: "check",
                    on: [{ kind: ROLLOUT }],
                    deny: and(has(route), not(eq(route, "")), not(eq(route, obj("metadata.namespace")))),
                    message: MESSAGES.routeNamespace,
                },
            ],
        },
        {
            name: POLICY_NAMES.maxSurge,
            scope: "tenant",
            background: true,
            when,
            checks: [
                { id: "check", on: [{ kind: ROLLOUT }], deny: { matches: obj([...CANARY, "maxSurge"]), re: surgeBelowHeadroom() }, message: MESSAGES.maxSurge },
            ],
        },
    ];
}
