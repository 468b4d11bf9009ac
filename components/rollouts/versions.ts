/**
 * The Argo Rollouts releases the program installs, one per chart version (ADR-056 D7: the controller
 * and its CRDs are one pinned release), and the decision a move between them needs. Adding a release
 * is one entry here plus its checks in test/versions.test.ts; docs/operations/upgrade.md is the runbook.
 */
export interface ControllerRelease {
    /** The argo-rollouts chart version (argoproj/argo-helm charts/argo-rollouts). */
    chartVersion: string;
    /** The chart's appVersion: the controller image tag and the tag the CRDs are read at. */
    appVersion: string;
    /** The controller's minor line, as `controller.acknowledgeNewRevisions` names it. */
    line: string;
    /**
     * How the controller hashes a pod template: FNV-32a of its JSON (utils/hash/hash.go), which
     * follows the k8s.io/apimachinery the release builds with (v0.34 omits `creationTimestamp`), so
     * after a move between schemes a Rollout whose ReplicaSet template an admission webhook mutated
     * gets a new revision (argoproj/argo-rollouts #4696).
     */
    hashScheme: string;
}

/** Read at each tag: argo-helm Chart.yaml's appVersion, argo-rollouts go.mod's apimachinery. */
export const CONTROLLER_RELEASES: readonly ControllerRelease[] = [
    { chartVersion: "2.40.7", appVersion: "v1.8.4", line: "1.8", hashScheme: "fnv32a of the template's JSON, apimachinery v0.29 (creationTimestamp: null)" },
    { chartVersion: "2.41.0", appVersion: "v1.9.0", line: "1.9", hashScheme: "fnv32a of the template's JSON, apimachinery v0.34 (creationTimestamp omitted)" },
];

/** The table's newest release of the line a running controller's tag belongs to. */
export function releaseOfLine(tag: string): ControllerRelease | undefined {
    const m = /^v?(\d+)\.(\d+)\.\d+/.exec(tag);
    return m ? [...CONTROLLER_RELEASES].reverse().find((r) => r.line === `${m[1]}.${m[2]}`) : undefined;
}

/** Whether a move between two tags changes the hash; undefined when the table knows either line not. */
export function crossesHashBoundary(running: string, configured: string): boolean | undefined {
    const [from, to] = [releaseOfLine(running), releaseOfLine(configured)];
    return from && to ? from.hashScheme !== to.hashScheme : undefined;
}

/** The fields of a live Rollout the decision reads (argo-rollouts v1.9.0 pkg/apis/rollouts/v1alpha1/types.go). */
export interface RolloutState {
    metadata?: { name?: string; namespace?: string };
    spec?: { paused?: boolean };
    status?: { phase?: string; abort?: boolean; pauseConditions?: unknown[]; controllerPause?: boolean; message?: string };
}

/** Why a Rollout is not settled, or undefined when it is Healthy and nothing holds it. */
export function unsettled(r: RolloutState): string | undefined {
    const s = r.status;
    if (!s?.phase) return "no status: no controller has reconciled it yet";
    if (r.spec?.paused) return "paused (spec.paused)";
    if ((s.pauseConditions ?? []).length > 0 || s.controllerPause) return "paused mid-rollout (a pause step or an inconclusive analysis waits for a promote)";
    if (s.abort) return "aborted (its new version was rolled back; a new revision would start over)";
    return s.phase === "Healthy" ? undefined : `${s.phase}${s.message ? ` (${s.message})` : ""}`;
}

/**
 * A controller move across the hash boundary: refused while any Rollout is paused or progressing (a
 * new revision would start over a rollout in flight), otherwise only with the new line acknowledged,
 * and the preview says how many Rollouts, where, may get a new revision. Which ones cannot be told
 * from here, so every Rollout counts.
 */
export function hashBoundaryDecision(args: {
    stack: string;
    running: string | undefined;
    configured: string;
    acknowledged: string | undefined;
    inFlight?: readonly string[];
    rollouts: readonly RolloutState[];
}): { refusal?: string; notice?: string } {
    const { stack, running, configured, acknowledged, rollouts } = args;
    const line = releaseOfLine(configured)?.line ?? configured;
    if (!running) return {};
    const crosses = crossesHashBoundary(running, configured);
    if (crosses === undefined && releaseOfLine(running) === undefined) {
        // A digest without a tag, `latest` or a line the table lacks: whether the move re-revisions cannot be told.
        const why = `the controller runs ${running}, whose hash scheme the program cannot tell (a line outside ${CONTROLLER_RELEASES.map((r) => r.line).join(", ")}, latest, or an image without a tag), so Argo Rollouts ${configured} may give every Rollout a new revision (argoproj/argo-rollouts #4696)`;
        if (acknowledged !== line) {
            return {
                refusal: `stack "${stack}": ${why}. Set argo-rollouts-addon:controller.acknowledgeNewRevisions to "${line}" after following docs/operations/upgrade.md, or run a controller of a known line first`,
            };
        }
        return { notice: `stack "${stack}": ${why} (acknowledged by controller.acknowledgeNewRevisions = "${line}")` };
    }
    if (!crosses) return {};
    const counts = new Map<string, number>();
    for (const r of rollouts) {
        counts.set(r.metadata?.namespace ?? "", (counts.get(r.metadata?.namespace ?? "") ?? 0) + 1);
    }
    const perNamespace = [...counts.entries()].sort(([a], [b]) => a.localeCompare(b));
    const where = perNamespace.map(([ns, n]) => `${ns} (${n})`).join(", ") || "none";
    const what = `Argo Rollouts ${running} -> ${configured} changes how pod-template hashes are computed (argoproj/argo-rollouts #4696): a Rollout whose ReplicaSet template differs from its own (admission mutations) gets a new revision and its pods are replaced: up to ${rollouts.length} Rollout(s) in ${perNamespace.length} namespace(s): ${where}`;
    const named = (r: RolloutState) => `${r.metadata?.namespace}/${r.metadata?.name}`;
    const inFlight = rollouts.filter((r) => unsettled(r) !== undefined);
    const held = inFlight.filter((r) => !(args.inFlight ?? []).includes(named(r))).map((r) => `  Rollout ${named(r)}: ${unsettled(r)}`);
    if (held.length > 0) {
        return {
            refusal: `stack "${stack}": ${what}. Refused while a Rollout is paused or progressing: a new revision would start over the rollout in flight:\n${held.join("\n")}\nPromote or abort each of them first, or name it in controller.acknowledgeInFlight, then run again (docs/operations/upgrade.md).`,
        };
    }
    const restarted = inFlight.length > 0 ? `; in flight, starting over: ${inFlight.map(named).join(", ")} (controller.acknowledgeInFlight)` : "";
    if (acknowledged !== line) {
        return {
            refusal:
                `stack "${stack}": ${what}. argo-rollouts-addon:controller.acknowledgeNewRevisions = ${acknowledged === undefined ? "(unset)" : `"${acknowledged}"`}: ` +
                `set it to "${line}" for this upgrade, after following docs/operations/upgrade.md, or keep controller.chartVersion at a chart of the ${releaseOfLine(running)?.line ?? running} line`,
        };
    }
    return { notice: `stack "${stack}": ${what} (acknowledged by controller.acknowledgeNewRevisions = "${line}")${restarted}` };
}

/**
 * The release a run would keep instead of the configured one: the table's release of the line the
 * cluster runs, where the stack file names none (stacks/preflight.ts stops the run: its digest is another image).
 */
export function adoptedRelease(args: { releaseFromStackFile: boolean; configuredChart: string; running: string | undefined }): ControllerRelease | undefined {
    const kept = args.releaseFromStackFile || !args.running ? undefined : releaseOfLine(args.running);
    return kept && kept.chartVersion !== args.configuredChart ? kept : undefined;
}

/**
 * Why a run that finds no controller must stop: ReplicaSets labelled `rollouts-pod-template-hash` say Rollouts ran here
 * (an old install's controller deleted by the adoption runbook, docs/operations/adopt.md step 5), and with no release
 * named the stack's newest one would move them across whatever line they ran on, unseen.
 */
export function noControllerRefusal(stack: string, configured: string): string {
    return (
        `stack "${stack}": no Argo Rollouts controller runs, yet ReplicaSets labelled rollouts-pod-template-hash show Rollouts that one ran, and the stack file names no release: ` +
        `installing Argo Rollouts ${configured} may give each a new revision (argoproj/argo-rollouts #4696). Name the chart of the line the cluster ran ` +
        `(${CONTROLLER_RELEASES.map((r) => `${r.chartVersion} for ${r.line}`).join(", ")}) in argo-rollouts-addon:controller.chartVersion, as docs/operations/adopt.md step 5 writes it before the old controller goes`
    );
}
