/**
 * The smoke canary (opt-in): the smoke Rollout reached the outcome its configuration asks for,
 * promoted when healthy, aborted by the failed gate with `smokeTest.failGate`.
 */
import { deliveryPlan } from "../../../components/delivery/strategy";
import { SMOKE_APP, SMOKE_REVISION_ANNOTATION, smokeApp, smokePodTemplate } from "../../../components/smoke";
import type { AddonConfig } from "../../../components/config/types";
import type { KubeObject } from "../cluster";
import { CheckGroup, asArray, field } from "../context";
import { canonical } from "./argocd";
import { Finding, README, outcome, skipped } from "../report";

/** Label on a Rollout's ReplicaSets, pods and AnalysisRuns (argo-rollouts v1alpha1 DefaultRolloutUniqueLabelKey). */
export const POD_HASH_LABEL = "rollouts-pod-template-hash";

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
 * pod hash (IsFullyPromoted); an abort sets `status.abort` and phase Degraded with reason
 * RolloutAborted. `observedGeneration` (a string) tells whether the status describes the current spec.
 */
export function smokeState(rollout: KubeObject): SmokeState {
    const status = (rollout.status ?? {}) as Record<string, unknown>;
    const phase = String(status.phase ?? "");
    const message = String(status.message ?? "");
    const generation = rollout.metadata?.generation;
    if (generation !== undefined && String(status.observedGeneration ?? "") !== String(generation)) {
        return { kind: "stale", message: `the controller has not processed generation ${generation} yet (observed ${String(status.observedGeneration ?? "none")})` };
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

/** What differs between the live pod template and the one the stack declares for its revision. */
export function templateDrift(rollout: KubeObject, config: AddonConfig): string | undefined {
    const template = field(rollout, "spec", "template");
    const revision = String(field(template, "metadata", "annotations", SMOKE_REVISION_ANNOTATION) ?? "");
    const want = smokePodTemplate(config.delivery.smokeTest, revision);
    const pick = (t: unknown) => asArray(field(t, "spec", "containers")).map((c) => ({ image: field(c, "image"), env: field(c, "env") ?? [] }));
    return canonical(pick(template)) === canonical(pick(want))
        ? undefined
        : `its pod template is not the stack's (image or ERROR_RATE differ; smokeTest.failGate is ${config.delivery.smokeTest.failGate}): run pulumi up`;
}

export const smokeChecks: CheckGroup = async ({ config, cluster, options }) => {
    const smoke = config.delivery.smokeTest;
    const expect = smoke.failGate ? "aborted" : "promoted";
    const what = `the smoke Rollout is ${expect}${smoke.failGate ? " by its failed gate (smokeTest.failGate)" : ""}`;
    if (!smoke.enabled) {
        return [skipped("smoke.outcome", "the smoke Rollout reached the outcome its trigger asks for", README.smoke, "smokeTest.enabled is false")];
    }
    const ns = smoke.namespace;
    const object = `Rollout ${ns}/${SMOKE_APP}`;
    const path = `/apis/argoproj.io/v1alpha1/namespaces/${ns}/rollouts/${SMOKE_APP}`;
    let rollout = await cluster.get(path);
    if (!rollout) {
        return [outcome("smoke.outcome", what, README.smoke, [{ object, found: "not found: the smoke canary is declared when smokeTest.enabled is true; run pulumi up" }])];
    }
    const deadline = options.now().getTime() + options.smokeTimeoutSeconds * 1000;
    let state = smokeState(rollout);
    while (!settled(state) && state.kind !== "paused" && options.now().getTime() < deadline) {
        await options.sleep(options.smokePollSeconds * 1000);
        rollout = (await cluster.get(path)) ?? rollout;
        state = smokeState(rollout);
    }
    const findings: Finding[] = [];
    const drift = templateDrift(rollout, config);
    if (drift) {
        findings.push({ object, found: drift });
    }
    const revision = String(field(rollout, "spec", "template", "metadata", "annotations", SMOKE_REVISION_ANNOTATION) ?? "?");
    if (state.kind !== expect) {
        const waiting = state.kind === "progressing" || state.kind === "stale" ? ` after ${options.smokeTimeoutSeconds} s (wait with --smoke-timeout, or watch: kubectl argo rollouts get rollout ${SMOKE_APP} -n ${ns} --watch)` : "";
        findings.push({ object, found: `is ${state.kind}, expected ${expect}${"message" in state && state.message ? `: ${state.message}` : ""}${waiting}` });
    } else if (state.kind === "aborted") {
        // The gate, not something else, must have aborted it: the AnalysisRun of the current pod
        // hash Failed (an Error means Mimir could not be queried), and traffic is back on stable.
        const hash = String(field(rollout, "status", "currentPodHash") ?? "");
        const runs = (await cluster.list(`/apis/argoproj.io/v1alpha1/namespaces/${ns}/analysisruns`, `${POD_HASH_LABEL}=${hash}`)) ?? [];
        const phases = runs.map((r) => String(field(r, "status", "phase") ?? "Pending"));
        if (!phases.includes("Failed")) {
            findings.push({ object, found: `aborted, but no AnalysisRun of pod hash ${hash} Failed (phases: ${phases.join(", ") || "no runs"}): the gate did not catch the failing version` });
        }
        const plan = deliveryPlan(smokeApp(smoke, config.gateway), { tier: "prod", prodClass: "standard", shape: "canary" });
        const canaryService = "canary" in plan.strategy ? plan.strategy.canary.canaryService : undefined;
        const route = await cluster.get(`/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/httproutes/${SMOKE_APP}`);
        const weights = asArray(field(route, "spec", "rules")).flatMap((r) => asArray(field(r, "backendRefs"))).filter((b) => field(b, "name") === canaryService);
        if (weights.some((b) => Number(field(b, "weight") ?? 1) !== 0)) {
            findings.push({ object: `HTTPRoute ${ns}/${SMOKE_APP}`, found: `${canaryService} still has weight ${weights.map((b) => String(field(b, "weight"))).join(", ")} after the abort: traffic did not snap back to stable` });
        }
    }
    return [outcome("smoke.outcome", what, README.smoke, findings, `revision ${revision}, pod hash ${String(field(rollout, "status", "currentPodHash") ?? "-")}`)];
};
