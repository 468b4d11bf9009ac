import type { ArgoProjectConfig } from "./config/types";
import type { GroupKind } from "./ignoreRules";
import { sameKind } from "./ignoreRules";
import { TAKE_OVER_LISTS } from "./ownership";

/**
 * The kinds a tenant project must permit for Rollouts, as ADR-056 D2 names them: ArgoCD refuses to
 * sync a kind its AppProject does not permit (argo-cd controller/sync.go checks
 * `IsGroupKindNamePermitted` for every resource it syncs). Pod, ReplicaSet and Experiment are not
 * here: the controller creates them and ArgoCD never syncs them. The only thing a whitelist does
 * for them is show them in the resource tree, which skips a child the project does not permit and
 * everything under it (argo-cd controller/appcontroller.go `getResourceTree`): with an explicit
 * whitelist that lacks them, a Rollout's ReplicaSets and Pods are not shown, and that is all.
 */
export const ROLLOUT_PROJECT_KINDS: readonly Readonly<GroupKind>[] = [
    { group: "argoproj.io", kind: "Rollout" },
    { group: "argoproj.io", kind: "AnalysisTemplate" },
    { group: "argoproj.io", kind: "AnalysisRun" },
];

/** The whole whitelist: the project's own kinds from config, then the Rollout kinds it lacks. */
export function projectWhitelist(configured: readonly GroupKind[]): GroupKind[] {
    const out = configured.map((gk) => ({ group: gk.group, kind: gk.kind }));
    for (const gk of ROLLOUT_PROJECT_KINDS) {
        if (!out.some((have) => sameKind(have, gk))) {
            out.push({ ...gk });
        }
    }
    return out;
}

export interface AppProjectPatchBody {
    apiVersion: "argoproj.io/v1alpha1";
    kind: "AppProject";
    metadata: { name: string; namespace: string; annotations: Record<string, string> };
    spec: { namespaceResourceWhitelist: GroupKind[] };
}

/**
 * A Patch of an existing AppProject the stack owns (`owner: addon`). `namespaceResourceWhitelist`
 * is an atomic list of a CRD, so it cannot be merged with entries another manager set: the
 * program owns it whole, from config. A project another owner keeps is read and checked instead
 * (verify.ts).
 */
export function appProjectPatch(project: Readonly<ArgoProjectConfig>, namespace: string): AppProjectPatchBody {
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "AppProject",
        metadata: { name: project.name, namespace, annotations: { ...TAKE_OVER_LISTS } },
        spec: { namespaceResourceWhitelist: projectWhitelist(project.namespaceResources) },
    };
}
