import { ControllerRelease, crossesHashBoundary, releaseOfLine } from "./versions";

/**
 * A controller change across the pod-template-hash boundary (versions.ts: 1.8.x -> 1.9.x,
 * argoproj/argo-rollouts #4696) gives a Rollout a new revision whenever its ReplicaSet's template
 * is not its own after the controller's defaulting (admission mutations of ReplicaSets, as on
 * ADR-056's clusters with Kyverno's pod policies): its pods are replaced, and a canary with an
 * indefinite pause stops there waiting for a promote. Never
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
    // Which ones cannot be told from here (versions.ts hashScheme): each Rollout whose ReplicaSet an
    // admission webhook mutated, so on a cluster with Kyverno's pod policies nearly every one.
    const what = `Argo Rollouts ${running} -> ${configured} changes how pod-template hashes are computed (argoproj/argo-rollouts #4696): a Rollout whose ReplicaSet template differs from its own (admission mutations) gets a new revision and its pods are replaced: up to ${args.rollouts.length} Rollout(s) in ${perNamespace.length} namespace(s): ${where}`;
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
 * The release a run installs when it is not the stack's configured one: a stack file that names no
 * release keeps the table's release of the line the cluster runs, so neither the adopting run nor
 * any run after it moves the controller by itself (never across the hash boundary). Undefined:
 * the stack's (the file names a release, no controller runs, or its line is unknown).
 */
export function adoptedRelease(args: { releaseFromStackFile: boolean; configuredChart: string; running: string | undefined }): ControllerRelease | undefined {
    if (args.releaseFromStackFile || !args.running) {
        return undefined;
    }
    const kept = releaseOfLine(args.running);
    return kept && kept.chartVersion !== args.configuredChart ? kept : undefined;
}

/** One step of the upgrade runbook: shell commands in order; `#` lines say what a human does. */
export interface UpgradeStep {
    title: string;
    commands: string[];
}

/**
 * The runbook for moving a stack's controller from one release of the table to another
 * (docs/operations/upgrade.md, checked against this by test/versions.test.ts). The program applies
 * the CRDs of the new tag before the chart (rollouts stage: CRDs first, ADR-056 D7) and the
 * controller's RBAC does not change between the releases (versions.ts `calls`), so the operator's
 * part is: settle the Rollouts, move the release, acknowledge the new revisions when the move
 * crosses the hash boundary, watch, and stop acknowledging.
 */
export function upgradeRunbook(args: { stack: string; namespace: string; from: ControllerRelease; to: ControllerRelease }): UpgradeStep[] {
    const s = `-s ${args.stack}`;
    const crossing = args.from.hashScheme !== args.to.hashScheme;
    const phases = `kubectl get rollouts.argoproj.io -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name} {.status.phase}{"\\n"}{end}'`;
    const steps: UpgradeStep[] = [
        {
            title: "Record what runs now",
            commands: [
                `kubectl get deployment argo-rollouts -n ${args.namespace} -o jsonpath='{.spec.template.spec.containers[0].image}{"\\n"}'`,
                "kubectl get rollouts.argoproj.io -A --no-headers | wc -l",
                `kubectl get replicasets -A -l rollouts-pod-template-hash --no-headers | wc -l`,
            ],
        },
    ];
    if (crossing) {
        steps.push({
            title: "Settle every Rollout: none paused, progressing or aborted",
            commands: [
                `# Every line this prints is a Rollout in flight: promote it (kubectl argo rollouts promote) or abort it, and run it again until it prints nothing; the preview refuses while one is left`,
                `${phases} | awk '$2 != "Healthy"'`,
            ],
        });
    }
    steps.push({
        title: `Move the release to chart ${args.to.chartVersion} (Argo Rollouts ${args.to.appVersion}), through the deploy pipeline`,
        commands: [
            `pulumi config set --path controller.chartVersion ${args.to.chartVersion} ${s}`,
            ...(crossing ? [`pulumi config set --path controller.acknowledgeNewRevisions ${args.to.line} ${s}`] : []),
            crossing
                ? `# Merge Pulumi.${args.stack}.yaml through a pull request: its preview says how many Rollouts, in which namespaces, may get a new revision; the deploy pipeline then runs`
                : `# Merge Pulumi.${args.stack}.yaml through a pull request; the deploy pipeline then runs`,
            `pulumi up --policy-pack policy-pack ${s}`,
        ],
    });
    steps.push({
        title: crossing ? "Watch every Rollout take its new revision" : "Watch the controller",
        commands: [
            `kubectl rollout status deployment/argo-rollouts -n ${args.namespace} --timeout=5m`,
            ...(crossing
                ? [
                      `# A Rollout whose ReplicaSet template an admission webhook changed gets exactly one new ReplicaSet and its pods are replaced once, canary steps included (a step with an indefinite pause waits for a promote); any other keeps its ReplicaSet`,
                      `${phases}`,
                  ]
                : []),
            `kubectl get replicasets -A -l rollouts-pod-template-hash --no-headers | wc -l`,
        ],
    });
    if (crossing) {
        steps.push({
            title: "Stop acknowledging, through the deploy pipeline",
            commands: [
                `pulumi config rm --path controller.acknowledgeNewRevisions ${s}`,
                `# Merge Pulumi.${args.stack}.yaml through a pull request; the deploy pipeline then runs`,
                `pulumi up --policy-pack policy-pack ${s}`,
            ],
        });
    }
    return steps;
}
