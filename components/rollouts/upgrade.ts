import { ControllerRelease, crossesHashBoundary, releaseOfLine } from "./versions";

/**
 * A controller change across the pod-template-hash boundary (versions.ts: 1.8.x -> 1.9.x,
 * argoproj/argo-rollouts #4696) gives every Rollout of the cluster a new revision: its pods are
 * replaced, and a canary with an indefinite pause stops there waiting for a promote. Never
 * restart a tenant unasked: the change is refused while any Rollout is paused or progressing (a
 * new revision would start over a rollout someone is in the middle of), and otherwise needs
 * `controller.acknowledgeNewRevisions` naming the new line; the preview says how many Rollouts,
 * in which namespaces, get a new revision. docs/operations/upgrade.md is the runbook.
 */

/** The fields of a live Rollout the decision reads (argo-rollouts v1.9.0 pkg/apis/rollouts/v1alpha1/types.go). */
export interface RolloutState {
    metadata?: { name?: string; namespace?: string };
    spec?: { paused?: boolean };
    status?: { phase?: string; abort?: boolean; pauseConditions?: unknown[]; controllerPause?: boolean; message?: string };
}

/** Why a Rollout is not settled, or undefined when it is Healthy and nothing holds it. */
export function unsettled(r: RolloutState): string | undefined {
    const s = r.status;
    if (!s?.phase) {
        return "no status: no controller has reconciled it yet";
    }
    if (r.spec?.paused) {
        return "paused (spec.paused)";
    }
    if ((s.pauseConditions ?? []).length > 0 || s.controllerPause) {
        return "paused mid-rollout (a pause step or an inconclusive analysis waits for a promote)";
    }
    if (s.abort) {
        return "aborted (its new version was rolled back; a new revision would start over)";
    }
    if (s.phase !== "Healthy") {
        return `${s.phase}${s.message ? ` (${s.message})` : ""}`;
    }
    return undefined;
}

/** The Rollouts that get a new revision, counted per namespace, in namespace order. */
export function rolloutsPerNamespace(rollouts: readonly RolloutState[]): [string, number][] {
    const counts = new Map<string, number>();
    for (const r of rollouts) {
        const ns = r.metadata?.namespace ?? "";
        counts.set(ns, (counts.get(ns) ?? 0) + 1);
    }
    return [...counts.entries()].sort(([a], [b]) => a.localeCompare(b));
}

export interface HashBoundaryDecision {
    /** Why the run must stop, or undefined. */
    refusal?: string;
    /** What the preview says, when the run goes on across the boundary. */
    notice?: string;
}

/**
 * The decision for one run: the controller running now (its image tag), the stack's release, the
 * cluster's Rollouts and the stack's acknowledgement. Nothing to decide without a running
 * controller, or when both releases hash alike.
 */
export function hashBoundaryDecision(args: {
    stack: string;
    running: string | undefined;
    configured: string;
    acknowledged: string | undefined;
    rollouts: readonly RolloutState[];
}): HashBoundaryDecision {
    const { stack, running, configured } = args;
    if (!running || !crossesHashBoundary(running, configured)) {
        return {};
    }
    const to = releaseOfLine(configured) as ControllerRelease;
    const perNamespace = rolloutsPerNamespace(args.rollouts);
    const where = perNamespace.map(([ns, n]) => `${ns} (${n})`).join(", ") || "none";
    const what = `Argo Rollouts ${running} -> ${configured} changes how pod-template hashes are computed (argoproj/argo-rollouts #4696): every Rollout gets a new revision and its pods are replaced: ${args.rollouts.length} Rollout(s) in ${perNamespace.length} namespace(s): ${where}`;
    const held = args.rollouts.map((r) => [r, unsettled(r)] as const).filter(([, why]) => why !== undefined);
    if (held.length > 0) {
        return {
            refusal:
                `stack "${stack}": ${what}. Refused while a Rollout is paused or progressing: a new revision would start over the rollout in flight:\n` +
                held.map(([r, why]) => `  Rollout ${r.metadata?.namespace}/${r.metadata?.name}: ${why}`).join("\n") +
                `\nPromote or abort each of them first, then run again (docs/operations/upgrade.md).`,
        };
    }
    if (args.acknowledged !== to.line) {
        return {
            refusal:
                `stack "${stack}": ${what}. argo-rollouts-addon:controller.acknowledgeNewRevisions = ${args.acknowledged === undefined ? "(unset)" : `"${args.acknowledged}"`}: ` +
                `set it to "${to.line}" for this upgrade, after following docs/operations/upgrade.md, or keep controller.chartVersion at a chart of the ${releaseOfLine(running)?.line ?? running} line`,
        };
    }
    return { notice: `stack "${stack}": ${what} (acknowledged by controller.acknowledgeNewRevisions = "${to.line}")` };
}

/**
 * The release an adopting run installs: the one the stack file names, else the table's release of
 * the line the cluster runs, so adopting never moves the controller by itself (and never across
 * the hash boundary). Undefined: keep the stack's (no controller runs, or its line is unknown).
 */
export function adoptedRelease(args: { releaseFromStackFile: boolean; configuredChart: string; running: string | undefined }): ControllerRelease | undefined {
    if (args.releaseFromStackFile || !args.running) {
        return undefined;
    }
    const kept = releaseOfLine(args.running);
    return kept && kept.chartVersion !== args.configuredChart ? kept : undefined;
}
