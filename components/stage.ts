import * as pulumi from "@pulumi/pulumi";

/**
 * The addon's four stages, in the order ADR-056 D7 fixes: the plugin needs the shared Gateway,
 * Kyverno policies naming Rollout need the CRDs (D2, Kyverno #7839), and ArgoCD must not sync a
 * tenant Rollout before the CRDs and the admission policies exist.
 */
export const STAGES = ["gateway", "rollouts", "policy", "argocd-apps"] as const;
export type StageName = (typeof STAGES)[number];

/** The label every object the addon declares carries. */
export const PART_OF = { "app.kubernetes.io/part-of": "argo-rollouts-addon" } as const;

/** The Pulumi type token of each stage's component. */
export const STAGE_TYPES: Readonly<Record<StageName, string>> = {
    gateway: "argo-rollouts-addon:stages:Gateway",
    rollouts: "argo-rollouts-addon:stages:Rollouts",
    policy: "argo-rollouts-addon:stages:Policy",
    "argocd-apps": "argo-rollouts-addon:stages:ArgoCdApps",
};

export interface StageOptions {
    /** The stack's Kubernetes provider; every child of the stage uses it. */
    providers: pulumi.ProviderResource[];
    /** The component this one runs after. */
    after?: OrderedComponent;
    /** Transforms for every resource of the stage, its packaged components' children included. */
    transforms?: pulumi.ResourceTransform[];
}

/**
 * A component that runs after another. A component's `dependsOn` does not reach its children in
 * Pulumi, so it hands its predecessor to every child it declares through `child()`: each
 * resource waits for every resource of the earlier components, not just the component record.
 */
export abstract class OrderedComponent extends pulumi.ComponentResource {
    private readonly predecessors: pulumi.Resource[];
    private declaredChildren = false;

    protected constructor(type: string, name: string, opts: StageOptions) {
        super(type, name, {}, { providers: opts.providers, dependsOn: opts.after ? [opts.after] : [], transforms: opts.transforms ?? [] });
        this.predecessors = opts.after ? opts.after.orderingTargets() : [];
    }

    /**
     * What a later component's resources wait for: this component, or, when it declared nothing
     * (an argocd-apps stage with nothing to patch or read), what it waits for itself. A dependency
     * on a component is a dependency on its custom resources only, not on the component's own
     * dependencies (@pulumi/pulumi runtime/dependsOn.js getAllTransitivelyReferencedResources),
     * so an empty component in the chain would otherwise cut the order.
     */
    orderingTargets(): pulumi.Resource[] {
        return this.declaredChildren ? [this] : [...this.predecessors];
    }

    /** Options for a resource of this component: parented here and ordered after the earlier ones. */
    protected child<T extends pulumi.ResourceOptions>(extra?: T): T {
        this.declaredChildren = true;
        const own = extra?.dependsOn;
        const ownList = own === undefined ? [] : Array.isArray(own) ? own : [own];
        return { ...(extra as T), parent: this, dependsOn: [...this.predecessors, ...ownList] };
    }
}

/** One of the addon's four stages. */
export abstract class Stage extends OrderedComponent {
    readonly stage: StageName;

    protected constructor(stage: StageName, name: string, opts: StageOptions) {
        super(STAGE_TYPES[stage], name, opts);
        this.stage = stage;
    }
}
