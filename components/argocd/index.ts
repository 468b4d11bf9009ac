import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { AddonConfig, IgnoreRule } from "../config";
import { Stage, StageOptions } from "../stage";
import { argocdCmIgnoreData, expandAllKinds } from "./ignoreRules";
import { appProjectPatch } from "./projects";
import { ROLLOUT_ACTIONS_POLICY_KEY, rolloutActionsPolicyCsv } from "./rbac";
import { applicationSetPatch } from "./syncOptions";

export * from "./ignoreRules";
export * from "./ownership";
export * from "./projects";
export * from "./rbac";
export * from "./syncOptions";

export interface ArgoCdAppsStageArgs {
    config: AddonConfig;
}

/**
 * ArgoCD stage (ADR-056 D2, as-built corrections): the last stage, so no tenant Rollout is synced
 * before the CRDs exist and the admission policies understand Rollout. ArgoCD and its objects
 * belong to the platform: everything here is a Patch of an existing object (design.md §2,
 * Pulumi: a create of an existing object fails with AlreadyExists since @pulumi/kubernetes 4.29).
 */
export class ArgoCdAppsStage extends Stage {
    /** Names of the objects patched, for the plan and the stack's readers. */
    readonly patched: string[] = [];

    constructor(name: string, args: ArgoCdAppsStageArgs, opts: StageOptions) {
        super("argocd-apps", name, opts);
        const cfg = args.config.argocd;
        if (cfg.enabled) {
            // The program's own rules are Application-level (tenant ApplicationSets): argocd-cm carries
            // only the stack's system rules, and nothing when there are none. Dropping the Patch
            // relinquishes the keys it owned (pulumi-kubernetes await.Deletion -> ssa.Relinquish).
            if (cfg.ignoreDifferences.length > 0) {
                this.diffCustomizations(cfg.namespace, expandAllKinds(cfg.ignoreDifferences, cfg.allKinds));
            }
            for (const project of cfg.projects) {
                // AppProjects permit Rollout and show its children in the resource tree (ADR-056 D2).
                new k8s.apiextensions.CustomResourcePatch(`appproject-${project.name}`, appProjectPatch(project, cfg.namespace), this.child());
                this.patched.push(`AppProject/${project.name}`);
            }
            for (const appSet of cfg.applicationSets) {
                // Tenant Applications neither revert a canary nor freeze a Rollout (as-built corrections).
                new k8s.apiextensions.CustomResourcePatch(`applicationset-${appSet.name}`, applicationSetPatch(appSet, cfg.namespace, cfg.allKinds), this.child());
                this.patched.push(`ApplicationSet/${appSet.name}`);
            }
            const policy = rolloutActionsPolicyCsv(cfg.rbac);
            if (policy !== undefined) {
                new k8s.core.v1.ConfigMapPatch(
                    "argocd-rbac-rollout-actions",
                    { metadata: { name: "argocd-rbac-cm", namespace: cfg.namespace }, data: { [ROLLOUT_ACTIONS_POLICY_KEY]: policy } },
                    this.child(),
                );
                this.patched.push(`ConfigMap/argocd-rbac-cm[${ROLLOUT_ACTIONS_POLICY_KEY}]`);
            }
        }
        this.registerOutputs({ patched: pulumi.output(this.patched) });
    }

    /**
     * argocd-cm keys, one per kind, for the config's system rules, never `.all` (ADR-056 as-built
     * 2026-07-14). ConfigMap data keys merge per key under server-side apply, so the program owns
     * only its keys; a key another manager owns is a conflict the apply reports instead of
     * overwriting.
     */
    private diffCustomizations(namespace: string, rules: readonly IgnoreRule[]): void {
        const data = argocdCmIgnoreData(rules);
        new k8s.core.v1.ConfigMapPatch(
            "argocd-cm-diff-customizations",
            { metadata: { name: "argocd-cm", namespace }, data },
            this.child(),
        );
        this.patched.push(`ConfigMap/argocd-cm[${Object.keys(data).length} keys]`);
    }
}
