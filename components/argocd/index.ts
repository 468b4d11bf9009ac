import { AddonConfig } from "../config";
import { Stage, StageOptions } from "../stage";

export interface ArgoCdAppsStageArgs {
    config: AddonConfig;
}

/**
 * ArgoCD stage (ADR-056 D2, as-built corrections): the last stage, so no tenant Rollout is synced
 * before the CRDs exist and the admission policies understand Rollout.
 */
export class ArgoCdAppsStage extends Stage {
    constructor(name: string, _args: ArgoCdAppsStageArgs, opts: StageOptions) {
        super("argocd-apps", name, opts);
        this.registerOutputs({});
    }
}
