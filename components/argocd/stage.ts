import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { Stage, StageOptions } from "../stage";
import type { ArgoCdConfig } from "./config/types";
import { IgnoreRule, argocdCmIgnoreData, expandAllKinds } from "./ignoreRules";
import { appProjectPatch } from "./projects";
import { ROLLOUT_ACTIONS_POLICY_KEY, rolloutActionsPolicyCsv } from "./rbac";
import { applicationSetPatch } from "./syncOptions";
import { KeptObjectRef, LiveAppProject, LiveApplicationSet, appProjectProblems, applicationSetProblems, keptObjectsError } from "./keptObjects";

/** The sections the argocd-apps stage reads: the stack's name and its argocd section. */
export interface ArgoCdStageConfig {
    stack: string;
    argocd: ArgoCdConfig;
}

export interface ArgoCdAppsStageArgs {
    config: ArgoCdStageConfig;
}

type KeptKind = "AppProject" | "ApplicationSet";

/**
 * ArgoCD stage (ADR-056 D2, as-built corrections): the last stage, so no tenant Rollout is synced
 * before the CRDs exist and the admission policies understand Rollout. ArgoCD and its objects
 * belong to the platform. What this stack owns is a Patch of the existing object (a create of an
 * existing object fails with AlreadyExists since @pulumi/kubernetes 4.29, pulumi/pulumi-kubernetes #4278);
 * what another owner keeps is read, and the preview fails naming what ADR-056 needs from it.
 */
export class ArgoCdAppsStage extends Stage {
    /** Names of the objects patched, for the plan and the stack's readers. */
    readonly patched: string[] = [];
    /** Names of the objects another owner keeps, once each has passed its check. */
    readonly verified: pulumi.Output<string[]>;

    constructor(name: string, args: ArgoCdAppsStageArgs, opts: StageOptions) {
        super("argocd-apps", name, opts);
        const cfg = args.config.argocd;
        const checks: pulumi.Output<string[]>[] = [];
        const verifiedNames: string[] = [];
        // Only the stack of the cluster where ArgoCD runs touches ArgoCD's objects (argocd.runsOn).
        if (cfg.local) {
            // The program's own rules are Application-level (tenant ApplicationSets): argocd-cm carries
            // only the stack's system rules, and nothing when there are none. Dropping the Patch
            // relinquishes the keys it owned (pulumi-kubernetes await.Deletion -> ssa.Relinquish).
            if (cfg.ignoreDifferences.length > 0) {
                this.diffCustomizations(cfg.namespace, expandAllKinds(cfg.ignoreDifferences, cfg.allKinds));
            }
            for (const project of cfg.projects) {
                const ref = { namespace: cfg.namespace, name: project.name, key: `argocd.projects.${project.name}` };
                if (project.owner === "addon") {
                    // AppProjects permit the Rollout kinds (ADR-056 D2).
                    new k8s.apiextensions.CustomResourcePatch(`appproject-${project.name}`, appProjectPatch(project, cfg.namespace), this.child());
                    this.patched.push(`AppProject/${project.name}`);
                } else {
                    checks.push(this.kept("AppProject", ref, (spec) => appProjectProblems(ref, { spec: spec as LiveAppProject["spec"] })));
                    verifiedNames.push(`AppProject/${project.name}`);
                }
            }
            for (const appSet of cfg.applicationSets) {
                const ref = { namespace: cfg.namespace, name: appSet.name, key: `argocd.applicationSets.${appSet.name}` };
                if (appSet.owner === "addon") {
                    // Tenant Applications neither revert a canary nor freeze a Rollout (as-built corrections).
                    new k8s.apiextensions.CustomResourcePatch(
                        `applicationset-${appSet.name}`,
                        applicationSetPatch(appSet, cfg.namespace, cfg.allKinds),
                        this.child(),
                    );
                    this.patched.push(`ApplicationSet/${appSet.name}`);
                } else {
                    checks.push(this.kept("ApplicationSet", ref, (spec) => applicationSetProblems(ref, { spec: spec as LiveApplicationSet["spec"] })));
                    verifiedNames.push(`ApplicationSet/${appSet.name}`);
                }
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
        // Every problem of every kept object in one error, so the owner fixes them in one pass.
        this.verified = pulumi.all(checks).apply((lists) => {
            const problems = lists.flat();
            if (problems.length > 0) {
                throw new Error(keptObjectsError(args.config.stack, problems));
            }
            return verifiedNames;
        });
        this.registerOutputs({ patched: pulumi.output(this.patched), verified: this.verified });
    }

    /** A read, not a declaration: naming `spec` makes the live spec an output to check. */
    private kept(kind: KeptKind, ref: KeptObjectRef, check: (spec: unknown) => string[]): pulumi.Output<string[]> {
        const live = new k8s.apiextensions.CustomResource(
            `kept-${kind.toLowerCase()}-${ref.name}`,
            { apiVersion: "argoproj.io/v1alpha1", kind, metadata: undefined, spec: undefined },
            this.child({ id: `${ref.namespace}/${ref.name}` }),
        );
        return (live as unknown as { spec: pulumi.Output<unknown> }).spec.apply((spec) => check(spec ?? undefined));
    }

    /**
     * argocd-cm keys, one per kind, for the config's system rules, never `.all` (ADR-056 as-built
     * 2026-07-14). ConfigMap data keys merge per key under server-side apply, so the program owns
     * only its keys; a key another manager owns is a conflict the apply reports instead of
     * overwriting.
     */
    private diffCustomizations(namespace: string, rules: readonly IgnoreRule[]): void {
        const data = argocdCmIgnoreData(rules);
        new k8s.core.v1.ConfigMapPatch("argocd-cm-diff-customizations", { metadata: { name: "argocd-cm", namespace }, data }, this.child());
        this.patched.push(`ConfigMap/argocd-cm[${Object.keys(data).length} keys]`);
    }
}
