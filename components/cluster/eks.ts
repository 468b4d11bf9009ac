/** A kubeconfig for an EKS cluster whose token comes from the aws CLI's exec plugin. */
export function eksKubeconfig(args: { clusterName: string; region: string; endpoint: string; certificateAuthority: string }): object {
    const user = `${args.clusterName}-aws`;
    return {
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: args.clusterName, cluster: { server: args.endpoint, "certificate-authority-data": args.certificateAuthority } }],
        contexts: [{ name: args.clusterName, context: { cluster: args.clusterName, user } }],
        "current-context": args.clusterName,
        users: [
            {
                name: user,
                user: {
                    exec: {
                        apiVersion: "client.authentication.k8s.io/v1beta1",
                        command: "aws",
                        args: ["eks", "get-token", "--cluster-name", args.clusterName, "--region", args.region, "--output", "json"],
                        interactiveMode: "Never",
                    },
                },
            },
        ],
    };
}
