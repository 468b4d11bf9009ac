import type { ArgoProjectConfig, GroupKind } from "../config/admission";
import { sameKind } from "./ignoreRules";
import { TAKE_OVER_LISTS } from "./ownership";

/**
 * The kinds a tenant project must permit for Rollouts (ADR-056 D2): ArgoCD refuses to sync a kind
 * its AppProject does not whitelist, and hides unlisted kinds from the resource tree, so a
 * Rollout's ReplicaSets, Pods, AnalysisRuns and Experiments need to be listed to be seen.
 */
export const ROLLOUT_PROJECT_KINDS: readonly Readonly<GroupKind>[] = [
    { group: "argoproj.io", kind: "Rollout" },
    { group: "argoproj.io", kind: "AnalysisTemplate" },
    { group: "argoproj.io", kind: "AnalysisRun" },
    { group: "argoproj.io", kind: "Experiment" },
    { group: "apps", kind: "ReplicaSet" },
    { group: "", kind: "Pod" },
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
 * A Patch of an existing AppProject. `namespaceResourceWhitelist` is an atomic list of a CRD, so
 * it cannot be merged with entries another manager set: the program owns it whole, from config.
 */
export function appProjectPatch(project: Readonly<ArgoProjectConfig>, namespace: string): AppProjectPatchBody {
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "AppProject",
        metadata: { name: project.name, namespace, annotations: { ...TAKE_OVER_LISTS } },
        spec: { namespaceResourceWhitelist: projectWhitelist(project.namespaceResources) },
    };
}
