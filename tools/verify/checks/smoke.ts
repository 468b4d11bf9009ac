/** The smoke canary (opt-in): the outcome its configuration asks for (promoted, or aborted with `smokeTest.failGate`) and the traffic there. */
import { ROLLOUTS_POD_TEMPLATE_HASH as POD_HASH_LABEL } from "../../../components/argocd/ignoreRules";
import { DeliveryPlan, deliveryPlan } from "../../../components/delivery";
import { SMOKE_APP, SMOKE_REVISION_ANNOTATION, smokeApp, smokePodTemplate, smokeStrategyOptions } from "../../../components/smoke";
import type { AddonConfig } from "../../../stacks/config";
import type { KubeObject, ReadOnlyCluster } from "../cluster";
import { CheckGroup, asArray, canonical, drift, field, ref } from "../context";
import { DOCS, Finding, checks } from "../report";

export { POD_HASH_LABEL };

const C = checks(DOCS.smoke, {
    "smoke.outcome": "the smoke Rollout reached the outcome smokeTest asks for: promoted, or aborted by its failed gate with smokeTest.failGate",
});

/** How the controller labels the AnalysisRuns it creates (argo-rollouts v1.9.0 utils/analysis/factory.go). */
export const ROLLOUT_TYPE_LABEL = "rollout-type";

/** The runs that gate the smoke version: the canary's background gate; blue/green's pre-promotion (when set) and post-promotion gates. */
export function gateRunTypes(plan: DeliveryPlan): string[] {
    return "blueGreen" in plan.strategy ? [...(plan.strategy.blueGreen.prePromotionAnalysis ? ["PrePromotion"] : []), "PostPromotion"] : ["Background"];
}

export const smokePlan = (config: AddonConfig): DeliveryPlan =>
    deliveryPlan(smokeApp(config.smokeTest, config.gateway), smokeStrategyOptions(config.smokeTest, config.analysis, config.delivery.prod.standard));

export type SmokeState = { kind: "promoted" } | { kind: "aborted" | "progressing" | "paused" | "degraded" | "stale"; message: string };

/** Where a Rollout stands, from its status (argo-rollouts v1.9.0 utils/rollout/rolloututil.go `CalculateRolloutPhase`). */
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
    if (phase === "Healthy" && status.stableRS !== undefined && status.stableRS === status.currentPodHash) return { kind: "promoted" };
    const where = `phase ${phase || "unknown"}${message ? ` (${message})` : ""}, step ${String(status.currentStepIndex ?? "?")}, stableRS ${String(status.stableRS ?? "-")}, currentPodHash ${String(status.currentPodHash ?? "-")}`;
    return { kind: phase === "Paused" ? "paused" : phase === "Degraded" ? "degraded" : "progressing", message: where };
}

/** What differs between the live Rollout and the one the stack declares for its revision: pod template and strategy. */
export function rolloutDrift(rollout: KubeObject, config: AddonConfig, plan: DeliveryPlan): string[] {
    const smoke = config.smokeTest;
    const template = field(rollout, "spec", "template");
    const want = smokePodTemplate(smoke, String(field(template, "metadata", "annotations", SMOKE_REVISION_ANNOTATION) ?? ""));
    const pick = (t: unknown) => asArray(field(t, "spec", "containers")).map((c) => ({ image: field(c, "image"), env: field(c, "env") ?? [] }));
    const strategy = drift(plan.strategy, field(rollout, "spec", "strategy"), "spec.strategy");
    return [
        ...(canonical(pick(template)) !== canonical(pick(want))
            ? [`its pod template is not the stack's (image or ERROR_RATE differ; smokeTest.failGate is ${smoke.failGate}): run pulumi up`]
            : []),
        ...(strategy.length > 0 ? [`its strategy is not the stack's ${smoke.strategy} (${strategy.slice(0, 3).join("; ")}): run pulumi up`] : []),
    ];
}

export const selectedHash = (service: KubeObject | undefined): string | undefined => field(service, "spec", "selector", POD_HASH_LABEL) as string | undefined;

/**
 * Where the traffic is after the outcome (argo-rollouts v1.9.0 rollout/service.go, trafficrouting.go): the stable or active Service
 * selects the promoted hash, or after an abort the stable one, and an aborted canary's route weight is 0.
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
    const out: Finding[] = [];
    const expectSelector = async (name: string, want: string, why: string) => {
        const live = await cluster.get(`/api/v1/namespaces/${ns}/services/${name}`);
        const found = !live
            ? "not found: the smoke canary declares it; run pulumi up"
            : selectedHash(live) !== want
              ? `selects ${POD_HASH_LABEL}=${selectedHash(live) ?? "nothing"}, ${why} ${want}`
              : "";
        out.push(...(found ? [{ object: ref("Service", ns, name), found }] : []));
    };
    const rolloutRef = ref("Rollout", ns, SMOKE_APP);
    if ("blueGreen" in plan.strategy) {
        const want = aborted ? stable : hash;
        await expectSelector(
            plan.strategy.blueGreen.activeService,
            want,
            aborted ? "after the abort it must be back on the stable ReplicaSet" : "the promoted version is",
        );
        if (aborted && hash === stable) out.push({ object: rolloutRef, found: `aborted, but stableRS is the aborted version ${hash}` });
        const activeSelector = field(rollout, "status", "blueGreen", "activeSelector");
        if (activeSelector !== want) {
            out.push({ object: rolloutRef, found: `status.blueGreen.activeSelector is ${String(activeSelector ?? "unset")}, expected ${want}` });
        }
        return out;
    }
    const canary = plan.strategy.canary;
    if (canary.stableService) await expectSelector(canary.stableService, stable, "the stable ReplicaSet is");
    if (aborted) {
        const route = await cluster.get(`/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/httproutes/${SMOKE_APP}`);
        const weights = asArray(field(route, "spec", "rules"))
            .flatMap((r) => asArray(field(r, "backendRefs")))
            .filter((b) => field(b, "name") === canary.canaryService);
        if (!route || weights.some((b) => Number(field(b, "weight") ?? 1) !== 0)) {
            const found = !route
                ? "not found"
                : `${canary.canaryService} still has weight ${weights.map((b) => String(field(b, "weight"))).join(", ")} after the abort: traffic did not snap back to stable`;
            out.push({ object: ref("HTTPRoute", ns, SMOKE_APP), found });
        }
    }
    return out;
}

export const smokeChecks: CheckGroup = {
    ...C,
    run: async ({ config, cluster, options }) => {
        const smoke = config.smokeTest;
        if (!smoke.enabled) return [C.skip("smoke.outcome", "smokeTest.enabled is false")];
        const expect = smoke.failGate ? "aborted" : "promoted";
        const plan = smokePlan(config);
        const gates = gateRunTypes(plan);
        const ns = smoke.namespace;
        const object = ref("Rollout", ns, SMOKE_APP);
        const path = `/apis/argoproj.io/v1alpha1/namespaces/${ns}/rollouts/${SMOKE_APP}`;
        let rollout = await cluster.get(path);
        if (!rollout) {
            return [C.done("smoke.outcome", [{ object, found: "not found: the smoke canary is declared when smokeTest.enabled is true; run pulumi up" }])];
        }
        const deadline = options.now().getTime() + options.smokeTimeoutSeconds * 1000;
        let state = smokeState(rollout);
        while (["progressing", "stale"].includes(state.kind) && options.now().getTime() < deadline) {
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
            findings.push({
                object,
                found: `is ${state.kind}, expected ${expect}${"message" in state && state.message ? `: ${state.message}` : ""}${waiting}`,
            });
        } else {
            // The gate, not something else, must have aborted it; an Error means Mimir could not be queried.
            if (state.kind === "aborted" && !gateRuns.some((r) => r.phase === "Failed")) {
                const found = `aborted, but no ${gates.join(" or ")} AnalysisRun of pod hash ${hash} Failed (${phases.join(", ") || "no gate runs"}): the gate did not catch the failing version`;
                findings.push({ object, found });
                gate = "";
            }
            findings.push(...(await trafficProblems(cluster, config, plan, rollout, state.kind === "aborted")));
            // A promotion no gate judged proves nothing: a first deploy or a fast-tracked rollback is not analysed (rollout/canary.go).
            if (state.kind === "promoted" && findings.length === 0 && !gateRuns.some((r) => r.phase === "Successful")) {
                const why = `promoted, but no gate ran for revision ${revision} (pod hash ${hash || "-"}): nothing proven (a first deploy or a fast-tracked rollback is not analysed); change smokeTest.trigger and run pulumi up to send a version through the gates`;
                return [C.skip("smoke.outcome", why)];
            }
        }
        return [C.done("smoke.outcome", findings, `revision ${revision}, pod hash ${hash || "-"}${gate ? `, ${gate}` : ""}`)];
    },
};
