import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { Stage, StageOptions } from "../stage";
import type { ArgoCdConfig } from "./config/section";
import { argocdCmIgnoreData, expandAllKinds } from "./ignoreRules";
import { appProjectPatch } from "./projects";
import { ROLLOUT_ACTIONS_POLICY_KEY, rolloutActionsPolicyCsv } from "./rbac";
import { applicationSetPatch } from "./syncOptions";
import { KeptObjectRef, appProjectProblems, applicationSetProblems, keptObjectsError } from "./keptObjects";

/** The sections the argocd-apps stage reads: the stack's name and its argocd section. */
export interface ArgoCdStageConfig {
    stack: string;
    argocd: ArgoCdConfig;
}

/**
 * ArgoCD stage (ADR-056 D2, as-built corrections): the last stage, so no tenant Rollout is synced
 * before the CRDs exist and the admission policies understand Rollout. ArgoCD and its objects
 * belong to the platform: what this stack owns is a Patch of the existing object (a create fails
 * with AlreadyExists since @pulumi/kubernetes 4.29, pulumi/pulumi-kubernetes #4278); what another
 * owner keeps is read, and the preview fails naming what ADR-056 needs from it (keptObjects.ts).
 */
export class ArgoCdAppsStage extends Stage {
    /** Names of the objects patched, for the plan and the stack's readers. */
    readonly patched: string[] = [];
    /** Names of the objects another owner keeps, once each has passed its check. */
    readonly verified: pulumi.Output<string[]>;

    constructor(name: string, args: { config: ArgoCdStageConfig }, opts: StageOptions) {
        super("argocd-apps", name, opts);
        const cfg = args.config.argocd;
        const checks: pulumi.Output<string[]>[] = [];
        const verifiedNames: string[] = [];
        // Only the stack of the cluster where ArgoCD runs touches ArgoCD's objects (argocd.runsOn).
        if (cfg.local) {
            // argocd-cm carries only the stack's system rules, per kind, never `.all` (as-built
            // 2026-07-14): ConfigMap keys merge under server-side apply, so the program owns only its
            // keys; dropping the Patch relinquishes them (pulumi-kubernetes ssa.Relinquish).
            const data = argocdCmIgnoreData(expandAllKinds(cfg.ignoreDifferences, cfg.allKinds));
            if (Object.keys(data).length > 0) {
                new k8s.core.v1.ConfigMapPatch(
                    "argocd-cm-diff-customizations",
                    { metadata: { name: "argocd-cm", namespace: cfg.namespace }, data },
                    this.child(),
                );
                this.patched.push(`ConfigMap/argocd-cm[${Object.keys(data).length} keys]`);
            }
            // AppProjects permit the Rollout kinds (D2); tenant Applications neither revert a canary nor freeze a Rollout.
            const kept = [
                ...cfg.projects.map((p) => ({
                    kind: "AppProject",
                    key: `argocd.projects.${p.name}`,
                    owner: p.owner,
                    name: p.name,
                    patch: () => appProjectPatch(p, cfg.namespace),
                    check: appProjectProblems,
                })),
                ...cfg.applicationSets.map((s) => ({
                    kind: "ApplicationSet",
                    key: `argocd.applicationSets.${s.name}`,
                    owner: s.owner,
                    name: s.name,
                    patch: () => applicationSetPatch(s, cfg.namespace, cfg.allKinds),
                    check: applicationSetProblems,
                })),
            ];
            for (const o of kept) {
                const ref: KeptObjectRef = { namespace: cfg.namespace, name: o.name, key: o.key };
                if (o.owner === "addon") {
                    new k8s.apiextensions.CustomResourcePatch(`${o.kind.toLowerCase()}-${o.name}`, o.patch(), this.child());
                    this.patched.push(`${o.kind}/${o.name}`);
                } else {
                    // A read, not a declaration: naming `spec` makes the live spec an output to check.
                    const live = new k8s.apiextensions.CustomResource(
                        `kept-${o.kind.toLowerCase()}-${o.name}`,
                        { apiVersion: "argoproj.io/v1alpha1", kind: o.kind, metadata: undefined, spec: undefined },
                        this.child({ id: `${ref.namespace}/${ref.name}` }),
                    );
                    checks.push(
                        (live as unknown as { spec: pulumi.Output<unknown> }).spec.apply((spec) => o.check(ref, { spec: (spec ?? undefined) as never })),
                    );
                    verifiedNames.push(`${o.kind}/${o.name}`);
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
            if (problems.length > 0) throw new Error(keptObjectsError(args.config.stack, problems));
            return verifiedNames;
        });
        this.registerOutputs({ patched: pulumi.output(this.patched), verified: this.verified });
    }
}
