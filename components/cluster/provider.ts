import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
// Only the EKS submodule: type-checking the whole @pulumi/aws package costs about 10 s and 700 MB,
// the eks submodule about 4 s (measured with tsc --noEmit on @pulumi/aws 7.x).
import { getClusterOutput } from "@pulumi/aws/eks/getCluster";
import { providerAdoptionOptions } from "./adoption";
import { ClusterConfig } from "./config";
import { eksKubeconfig } from "./eks";

/**
 * The stack's Kubernetes provider. `clusterIdentifier` is pinned: an EKS kubeconfig unknown at preview
 * would otherwise replace the provider and every resource (pulumi-kubernetes provider/pkg/provider/provider.go
 * DiffConfig); server-side apply because the v1.10 Rollout CRD is past client-side apply's annotation limit.
 */
export function clusterProvider(cluster: ClusterConfig): k8s.Provider {
    const common = { clusterIdentifier: cluster.name, enableServerSideApply: true, ...providerAdoptionOptions(cluster.adoptExisting) };
    const conn = cluster.connection;
    if (conn.kind === "eks") {
        const eks = getClusterOutput({ name: conn.clusterName, region: conn.region });
        const kubeconfig = pulumi
            .all([eks.endpoint, eks.certificateAuthorities])
            .apply(([endpoint, cas]) =>
                JSON.stringify(eksKubeconfig({ clusterName: conn.clusterName, region: conn.region, endpoint, certificateAuthority: cas[0]?.data ?? "" })),
            );
        return new k8s.Provider(cluster.name, { ...common, kubeconfig: pulumi.secret(kubeconfig) });
    }
    return new k8s.Provider(cluster.name, { ...common, context: conn.context, ...(conn.path ? { kubeconfig: conn.path } : {}) });
}
