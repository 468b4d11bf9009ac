import * as pulumi from "@pulumi/pulumi";

/** The Argo Rollouts CRD manifests, as published in the source tree under manifests/crds/. */
export const ROLLOUTS_CRD_FILES = [
    "rollout-crd.yaml",
    "analysis-template-crd.yaml",
    "cluster-analysis-template-crd.yaml",
    "analysis-run-crd.yaml",
    "experiment-crd.yaml",
] as const;

export const CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";

/** The CRD manifest URLs at the controller's own release tag, so CRDs and controller never drift. */
export function rolloutsCrdUrls(baseUrl: string, appVersion: string): string[] {
    return ROLLOUTS_CRD_FILES.map((file) => `${baseUrl}/${appVersion}/manifests/crds/${file}`);
}

/**
 * Protects every CRD the group declares. Deleting the Rollout CRD deletes every Rollout in the
 * cluster, so a CRD must survive `pulumi destroy` (protect) and any refactor that drops it from
 * the program (retainOnDelete). Set on the group alone these do not reach its children
 * (pulumi-kubernetes #3065), hence a transform, which the engine applies to each child.
 */
export const protectCrds: pulumi.ResourceTransform = (args) => {
    if (args.type !== CRD_TYPE) {
        return undefined;
    }
    return { props: args.props, opts: pulumi.mergeOptions(args.opts, { protect: true, retainOnDelete: true }) };
};
