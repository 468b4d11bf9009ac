import * as pulumi from "@pulumi/pulumi";

/** The Argo Rollouts CRDs, and the manifests that define them under manifests/crds/. */
export const ROLLOUTS_CRDS = [
    { file: "rollout-crd.yaml", name: "rollouts.argoproj.io" },
    { file: "analysis-template-crd.yaml", name: "analysistemplates.argoproj.io" },
    { file: "cluster-analysis-template-crd.yaml", name: "clusteranalysistemplates.argoproj.io" },
    { file: "analysis-run-crd.yaml", name: "analysisruns.argoproj.io" },
    { file: "experiment-crd.yaml", name: "experiments.argoproj.io" },
] as const;

export const ROLLOUTS_CRD_FILES = ROLLOUTS_CRDS.map((c) => c.file);

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
