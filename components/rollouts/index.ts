import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { AddonConfig } from "../config";
import { Stage, StageOptions } from "../stage";
import { protectCrds, rolloutsCrdUrls } from "./crds";
import { trafficRouterPlugin } from "./plugin";
import { controllerClusterRules, controllerNamespaceRules } from "./rbac";
import { RELEASE_NAME, controllerValues } from "./values";

export * from "./chartKeys";
export * from "./crds";
export * from "./plugin";
export * from "./rbac";
export * from "./values";

export const PART_OF = { "app.kubernetes.io/part-of": "argo-rollouts-addon" };

/**
 * The controller namespace's labels: restricted Pod Security (every container of the addon runs
 * restricted) and ownership, with the platform's own labels from config on top.
 */
export function controllerNamespaceLabels(extra: Record<string, string>): Record<string, string> {
    return {
        ...PART_OF,
        "app.kubernetes.io/managed-by": "pulumi",
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "latest",
        ...extra,
    };
}

/** Chart reference and repository options for an https or an OCI chart repository. */
export function chartSource(repository: string): { chart: string; repositoryOpts?: { repo: string } } {
    if (repository.startsWith("oci://")) {
        return { chart: `${repository.replace(/\/+$/, "")}/argo-rollouts` };
    }
    return { chart: "argo-rollouts", repositoryOpts: { repo: repository } };
}

export interface RolloutsStageArgs {
    config: AddonConfig;
}

/**
 * Rollouts stage (ADR-056 D7): the namespace, the CRDs as their own protected step, the
 * controller's least-privilege RBAC, and the pinned controller chart with the Gateway API
 * traffic-router plugin.
 */
export class RolloutsStage extends Stage {
    readonly namespace: k8s.core.v1.Namespace;
    readonly crds: k8s.yaml.v2.ConfigGroup;
    readonly controller: k8s.helm.v4.Chart;
    /** Where the controller loads the Gateway API plugin from. */
    readonly pluginLocation: string;

    constructor(name: string, args: RolloutsStageArgs, opts: StageOptions) {
        super("rollouts", name, opts);
        const cfg = args.config;
        const ns = cfg.controller.namespace;

        this.namespace = new k8s.core.v1.Namespace(
            "controller-namespace",
            { metadata: { name: ns, labels: controllerNamespaceLabels(cfg.controller.namespaceLabels) } },
            this.child(),
        );

        // Before the controller and before anything naming a Rollout (ADR-056 D2, D7).
        this.crds = new k8s.yaml.v2.ConfigGroup(
            "rollouts-crds",
            { files: rolloutsCrdUrls(cfg.controller.crdBaseUrl, cfg.controller.appVersion), skipAwait: false },
            this.child({ protect: true, retainOnDelete: true, transforms: [protectCrds] }),
        );

        const rbac = this.controllerRbac(ns, cfg);

        this.controller = new k8s.helm.v4.Chart(
            "rollouts-controller",
            {
                ...chartSource(cfg.controller.chartRepository),
                name: RELEASE_NAME,
                version: cfg.controller.chartVersion,
                namespace: ns,
                values: controllerValues(cfg),
            },
            this.child({ dependsOn: [this.namespace, this.crds, ...rbac] }),
        );
        this.pluginLocation = trafficRouterPlugin(cfg.plugin).location;
        this.registerOutputs({ namespace: this.namespace.metadata.name, pluginLocation: this.pluginLocation });
    }

    /** The controller's roles, declared here rather than by the chart (see rbac.ts). */
    private controllerRbac(ns: string, cfg: AddonConfig): pulumi.Resource[] {
        const subject = [{ kind: "ServiceAccount", name: RELEASE_NAME, namespace: ns }];
        const labels = { ...PART_OF, "app.kubernetes.io/component": "rollouts-controller" };
        const clusterRole = new k8s.rbac.v1.ClusterRole(
            "controller-clusterrole",
            { metadata: { name: RELEASE_NAME, labels }, rules: controllerClusterRules(cfg.plugin) },
            this.child(),
        );
        const clusterBinding = new k8s.rbac.v1.ClusterRoleBinding(
            "controller-clusterrolebinding",
            {
                metadata: { name: RELEASE_NAME, labels },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: RELEASE_NAME },
                subjects: subject,
            },
            this.child({ dependsOn: [clusterRole] }),
        );
        const role = new k8s.rbac.v1.Role(
            "controller-role",
            { metadata: { name: RELEASE_NAME, namespace: ns, labels }, rules: controllerNamespaceRules() },
            this.child({ dependsOn: [this.namespace] }),
        );
        const binding = new k8s.rbac.v1.RoleBinding(
            "controller-rolebinding",
            {
                metadata: { name: RELEASE_NAME, namespace: ns, labels },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: RELEASE_NAME },
                subjects: subject,
            },
            this.child({ dependsOn: [role] }),
        );
        return [clusterRole, clusterBinding, role, binding];
    }
}
