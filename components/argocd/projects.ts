import type { ArgoProjectConfig } from "./config/section";
import type { GroupKind } from "./ignoreRules";
import { sameKind } from "./ignoreRules";
import { TAKE_OVER_LISTS } from "./ownership";

/**
 * The kinds a tenant project must permit for Rollouts (ADR-056 D2): ArgoCD refuses to sync a kind
 * its AppProject does not permit (argo-cd controller/sync.go, `IsGroupKindNamePermitted`). Pod,
 * ReplicaSet and Experiment are not here: the controller creates them and ArgoCD never syncs them;
 * a whitelist that lacks them only hides them in the resource tree (controller/appcontroller.go `getResourceTree`).
 */
export const ROLLOUT_PROJECT_KINDS: readonly Readonly<GroupKind>[] = ["Rollout", "AnalysisTemplate", "AnalysisRun"].map((kind) => ({
    group: "argoproj.io",
    kind,
}));

/** The whole whitelist: the project's own kinds from config, then the Rollout kinds it lacks. */
export function projectWhitelist(configured: readonly GroupKind[]): GroupKind[] {
    const out = configured.map((gk) => ({ group: gk.group, kind: gk.kind }));
    return [...out, ...ROLLOUT_PROJECT_KINDS.filter((gk) => !out.some((have) => sameKind(have, gk))).map((gk) => ({ ...gk }))];
}

/**
 * A Patch of an existing AppProject the stack owns (`owner: addon`). `namespaceResourceWhitelist`
 * is an atomic list of a CRD, so it cannot be merged with entries another manager set: the
 * program owns it whole, from config. A project another owner keeps is read and checked instead
 * (verify.ts).
 */
export function appProjectPatch(project: Readonly<ArgoProjectConfig>, namespace: string) {
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "AppProject" as const,
        metadata: { name: project.name, namespace, annotations: { ...TAKE_OVER_LISTS } },
        spec: { namespaceResourceWhitelist: projectWhitelist(project.namespaceResources) },
    };
}
