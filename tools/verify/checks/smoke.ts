/**
 * The smoke canary (opt-in): the smoke Rollout, delivered with `smokeTest.strategy`, reached the
 * outcome its configuration asks for: promoted when healthy, aborted by the failed gate with
 * `smokeTest.failGate`, with traffic where that outcome puts it.
 */
import { ROLLOUTS_POD_TEMPLATE_HASH } from "../../../components/argocd/ignoreRules";
import { DeliveryPlan, deliveryPlan } from "../../../components/delivery";
import { SMOKE_APP, SMOKE_REVISION_ANNOTATION, smokeApp, smokePodTemplate, smokeStrategyOptions } from "../../../components/smoke";
import type { AddonConfig } from "../../../stacks/config";
import type { KubeObject, ReadOnlyCluster } from "../cluster";
import { CheckGroup, asArray, canonical, drift, field, ref } from "../context";
import { Finding, DOCS, outcome, skipped } from "../report";

/** Label on a Rollout's ReplicaSets, pods, Services' selectors and AnalysisRuns (argo-rollouts v1alpha1 DefaultRolloutUniqueLabelKey). */
export const POD_HASH_LABEL = ROLLOUTS_POD_TEMPLATE_HASH;

/**
 * How the controller labels an AnalysisRun it creates (argo-rollouts v1.9.0 utils/analysis/factory.go
 * `BackgroundLabels`, `PrePromotionLabels`, `PostPromotionLabels`; pkg/apis/rollouts/v1alpha1/types.go
 * `RolloutTypeLabel`), with the pod hash of the version it measures.
 */
export const ROLLOUT_TYPE_LABEL = "rollout-type";

/**
 * The runs that gate the smoke version, by the plan: the canary's background gate; blue/green's
 * pre-promotion gate (with the preview gate the smoke app uses, on the load generator's header
 * traffic, before the switch) and its post-promotion gate.
 */
export function gateRunTypes(plan: DeliveryPlan): string[] {
    if ("blueGreen" in plan.strategy) {
        return [...(plan.strategy.blueGreen.prePromotionAnalysis ? ["PrePromotion"] : []), "PostPromotion"];
    }
    return ["Background"];
}

/** The smoke app's plan, as the smoke stage builds it: prod / standard, this cluster's gate timing, the preview gate for blue/green. */
export const smokePlan = (config: AddonConfig): DeliveryPlan =>
    deliveryPlan(smokeApp(config.smokeTest, config.gateway), smokeStrategyOptions(config.smokeTest, config.analysis, config.delivery.prod.standard));

export type SmokeState =
    | { kind: "promoted" }
    | { kind: "aborted"; message: string }
    | { kind: "progressing"; message: string }
    | { kind: "paused"; message: string }
    | { kind: "degraded"; message: string }
    | { kind: "stale"; message: string };

/**
 * Where a Rollout stands, from the status the controller writes (argo-rollouts v1.9.0
 * pkg/apis/rollouts/v1alpha1/types.go RolloutStatus; utils/rollout/rolloututil.go
 * CalculateRolloutPhase): promoted is phase Healthy with the stable ReplicaSet being the current
 * pod hash (IsFullyPromoted; for blue/green Healthy also needs `status.blueGreen.activeSelector`
 * on the current hash); an abort sets `status.abort` and phase Degraded with reason
 * RolloutAborted. `observedGeneration` (a string) tells whether the status describes the current spec.
 */
export function smokeState(rollout: KubeObject): SmokeState {
    const status = (rollout.status ?? {}) as Record<string, unknown>;
    const phase = String(status.phase ?? "");
    const message = String(status.message ?? "");
    const generation = rollout.metadata?.generation;
    if (generation !== undefined && String(status.observedGeneration ?? "") !== String(generation)) {
        return {
            kind: "stale",
            message: `the controller has not processed generation ${generation} yet (observed ${String(status.observedGeneration ?? "none")})`,
        };
    }
    if (status.abort === true) {
        return phase === "Degraded" ? { kind: "aborted", message } : { kind: "progressing", message: `aborting (phase ${phase})` };
    }
    if (phase === "Healthy" && status.stableRS !== undefined && status.stableRS === status.currentPodHash) {
        return { kind: "promoted" };
    }
    const where = `phase ${phase || "unknown"}${message ? ` (${message})` : ""}, step ${String(status.currentStepIndex ?? "?")}, stableRS ${String(status.stableRS ?? "-")}, currentPodHash ${String(status.currentPodHash ?? "-")}`;
    if (phase === "Paused") {
        return { kind: "paused", message: where };
    }
    if (phase === "Degraded") {
        return { kind: "degraded", message: where };
    }
    return { kind: "progressing", message: where };
}

const settled = (s: SmokeState): boolean => s.kind === "promoted" || s.kind === "aborted" || s.kind === "degraded";

/** What differs between the live Rollout and the one the stack declares for its revision: pod template and strategy. */
export function rolloutDrift(rollout: KubeObject, config: AddonConfig, plan: DeliveryPlan): string[] {
    const out: string[] = [];
    const smoke = config.smokeTest;
    const template = field(rollout, "spec", "template");
    const revision = String(field(template, "metadata", "annotations", SMOKE_REVISION_ANNOTATION) ?? "");
    const want = smokePodTemplate(smoke, revision);
    const pick = (t: unknown) => asArray(field(t, "spec", "containers")).map((c) => ({ image: field(c, "image"), env: field(c, "env") ?? [] }));
    if (canonical(pick(template)) !== canonical(pick(want))) {
        out.push(`its pod template is not the stack's (image or ERROR_RATE differ; smokeTest.failGate is ${smoke.failGate}): run pulumi up`);
    }
    const strategy = drift(plan.strategy, field(rollout, "spec", "strategy"), "spec.strategy");
    if (strategy.length > 0) {
        out.push(`its strategy is not the stack's ${smoke.strategy} (${strategy.slice(0, 3).join("; ")}): run pulumi up`);
    }
    return out;
}

/** The pod hash a Service's selector pins (the controller writes it), or undefined. */
export const selectedHash = (service: KubeObject | undefined): string | undefined => field(service, "spec", "selector", POD_HASH_LABEL) as string | undefined;

/**
 * Where the traffic is after the outcome, read from the objects the controller writes
 * (argo-rollouts v1.9.0):
 * - canary: the stable Service selects `status.stableRS` (rollout/service.go
 *   `reconcileStableAndCanaryService`); after an abort the plugin's weight for the canary Service
 *   is 0 (rollout/trafficrouting.go, `calculateDesiredWeightOnAbortOrStableRollback`).
 * - blue/green: promoted, the active Service selects the new hash; aborted, it selects
 *   `status.stableRS` (rollout/service.go `reconcileActiveService`: on `status.abort` the selector
 *   is the stable ReplicaSet's, whether the switch had happened, a post-promotion abort, or not, a
 *   pre-promotion abort), and `status.blueGreen.activeSelector` follows the Service
 *   (rollout/bluegreen.go `syncRolloutStatusBlueGreen`).
 */
export async function trafficProblems(
    cluster: ReadOnlyCluster,
    config: AddonConfig,
    plan: DeliveryPlan,
    rollout: KubeObject,
    aborted: boolean,
): Promise<Finding[]> {
    const ns = config.smokeTest.namespace;
    const hash = String(field(rollout, "status", "currentPodHash") ?? "");
    const stable = String(field(rollout, "status", "stableRS") ?? "");
    const service = async (name: string) => ({ name, live: await cluster.get(`/api/v1/namespaces/${ns}/services/${name}`) });
    const out: Finding[] = [];
    const expectSelector = async (name: string, want: string, why: string) => {
        const s = await service(name);
        const have = selectedHash(s.live);
        if (!s.live) {
            out.push({ object: ref("Service", ns, name), found: "not found: the smoke canary declares it; run pulumi up" });
        } else if (have !== want) {
            out.push({ object: ref("Service", ns, name), found: `selects ${POD_HASH_LABEL}=${have ?? "nothing"}, ${why} ${want}` });
        }
    };
    if ("blueGreen" in plan.strategy) {
        const active = plan.strategy.blueGreen.activeService;
        if (aborted) {
            await expectSelector(active, stable, "after the abort it must be back on the stable ReplicaSet");
            if (hash === stable) {
                out.push({ object: ref("Rollout", ns, SMOKE_APP), found: `aborted, but stableRS is the aborted version ${hash}` });
            }
        } else {
            await expectSelector(active, hash, "the promoted version is");
        }
        const activeSelector = field(rollout, "status", "blueGreen", "activeSelector");
        const want = aborted ? stable : hash;
        if (activeSelector !== want) {
            out.push({
                object: ref("Rollout", ns, SMOKE_APP),
                found: `status.blueGreen.activeSelector is ${String(activeSelector ?? "unset")}, expected ${want}`,
            });
        }
        return out;
    }
    const canary = plan.strategy.canary;
    if (canary.stableService) {
        await expectSelector(canary.stableService, stable, "the stable ReplicaSet is");
    }
    if (aborted) {
        const route = await cluster.get(`/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/httproutes/${SMOKE_APP}`);
        const weights = asArray(field(route, "spec", "rules"))
            .flatMap((r) => asArray(field(r, "backendRefs")))
            .filter((b) => field(b, "name") === canary.canaryService);
        if (!route) {
            out.push({ object: ref("HTTPRoute", ns, SMOKE_APP), found: "not found" });
        } else if (weights.some((b) => Number(field(b, "weight") ?? 1) !== 0)) {
            out.push({
                object: ref("HTTPRoute", ns, SMOKE_APP),
                found: `${canary.canaryService} still has weight ${weights.map((b) => String(field(b, "weight"))).join(", ")} after the abort: traffic did not snap back to stable`,
            });
        }
    }
    return out;
}

export const smokeChecks: CheckGroup = async ({ config, cluster, options }) => {
    const smoke = config.smokeTest;
    const expect = smoke.failGate ? "aborted" : "promoted";
    if (!smoke.enabled) {
        return [skipped("smoke.outcome", "the smoke Rollout reached the outcome its trigger asks for", DOCS.smoke, "smokeTest.enabled is false")];
    }
    const what = `the smoke Rollout (${smoke.strategy}) is ${expect}${smoke.failGate ? " by its failed gate (smokeTest.failGate)" : ""}`;
    const plan = smokePlan(config);
    const gates = gateRunTypes(plan);
    const ns = smoke.namespace;
    const object = ref("Rollout", ns, SMOKE_APP);
    const path = `/apis/argoproj.io/v1alpha1/namespaces/${ns}/rollouts/${SMOKE_APP}`;
    let rollout = await cluster.get(path);
    if (!rollout) {
        return [
            outcome("smoke.outcome", what, DOCS.smoke, [
                { object, found: "not found: the smoke canary is declared when smokeTest.enabled is true; run pulumi up" },
            ]),
        ];
    }
    const deadline = options.now().getTime() + options.smokeTimeoutSeconds * 1000;
    let state = smokeState(rollout);
    while (!settled(state) && state.kind !== "paused" && options.now().getTime() < deadline) {
        await options.sleep(options.smokePollSeconds * 1000);
        rollout = (await cluster.get(path)) ?? rollout;
        state = smokeState(rollout);
    }
    const findings: Finding[] = rolloutDrift(rollout, config, plan).map((found) => ({ object, found }));
    const revision = String(field(rollout, "spec", "template", "metadata", "annotations", SMOKE_REVISION_ANNOTATION) ?? "?");
    const hash = String(field(rollout, "status", "currentPodHash") ?? "");
    const runs = hash ? ((await cluster.list(`/apis/argoproj.io/v1alpha1/namespaces/${ns}/analysisruns`, `${POD_HASH_LABEL}=${hash}`)) ?? []) : [];
    const gateRuns = runs
        .map((r) => ({ type: r.metadata?.labels?.[ROLLOUT_TYPE_LABEL] ?? "", phase: String(field(r, "status", "phase") ?? "Pending") }))
        .filter((r) => gates.includes(r.type));
    const phases = gateRuns.map((r) => `${r.type} ${r.phase}`);
    let gate = phases.length > 0 ? `gate runs: ${phases.join(", ")}` : "no gate run for this version (Argo Rollouts does not analyse a first deploy)";
    if (state.kind !== expect) {
        const waiting =
            state.kind === "progressing" || state.kind === "stale"
                ? ` after ${options.smokeTimeoutSeconds} s (wait with --smoke-timeout, or watch: kubectl argo rollouts get rollout ${SMOKE_APP} -n ${ns} --watch)`
                : "";
        findings.push({ object, found: `is ${state.kind}, expected ${expect}${"message" in state && state.message ? `: ${state.message}` : ""}${waiting}` });
    } else {
        if (state.kind === "aborted" && !gateRuns.some((r) => r.phase === "Failed")) {
            // The gate, not something else, must have aborted it; an Error means Mimir could not be queried.
            findings.push({
                object,
                found: `aborted, but no ${gates.join(" or ")} AnalysisRun of pod hash ${hash} Failed (${phases.join(", ") || "no gate runs"}): the gate did not catch the failing version`,
            });
            gate = "";
        }
        findings.push(...(await trafficProblems(cluster, config, plan, rollout, state.kind === "aborted")));
        // A promotion no gate judged proves nothing about the gates: Argo Rollouts does not analyse
        // a first deploy, and a rollback to a known ReplicaSet skips the steps (argo-rollouts v1.9.0
        // rollout/canary.go, a fast-tracked rollback). Say so rather than pass.
        if (state.kind === "promoted" && findings.length === 0 && !gateRuns.some((r) => r.phase === "Successful")) {
            return [
                skipped(
                    "smoke.outcome",
                    what,
                    DOCS.smoke,
                    `promoted, but no gate ran for revision ${revision} (pod hash ${hash || "-"}): nothing proven (a first deploy or a fast-tracked rollback is not analysed); change smokeTest.trigger and run pulumi up to send a version through the gates`,
                ),
            ];
        }
    }
    return [outcome("smoke.outcome", what, DOCS.smoke, findings, `revision ${revision}, pod hash ${hash || "-"}${gate ? `, ${gate}` : ""}`)];
};
