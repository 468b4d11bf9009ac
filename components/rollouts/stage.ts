import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { MimirConfig } from "../gateway/config";
import { MimirRole, inClusterMimirAddress } from "../mimir";
import { PART_OF, Stage, StageOptions } from "../stage";
import { clusterAnalysisTemplateSpec, errorBudgetTemplates, sharedTemplates, templateShortName } from "./analysis";
import { AnalysisConfig, ControllerConfig, ErrorBudgetConfig, NetworkConfig, NotificationsConfig, PluginConfig } from "./config";
import { NOTIFICATION_CONFIGMAP, NOTIFICATION_SECRET, notificationConfigData, notificationHosts, tokenKey } from "./notifications";
import { controllerNetworkPolicy, mimirIngressNetworkPolicy, namespaceDefaultDeny } from "./network";
import { trafficRouterPlugin } from "./plugin";
import { controllerClusterRules, controllerNamespaceRules } from "./rbac";
import { tenantOperatorBinding, tenantOperatorRole, tenantViewRole } from "./tenants";
import { READ_CA_CONFIGMAP, controllerTrust } from "./trust";
import { controllerValues } from "./values";
import { CRD_TYPE, RELEASE_NAME, rolloutsCrdUrls } from "../argoRollouts";

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

/**
 * Protects every CRD the group declares: deleting the Rollout CRD deletes every Rollout, and
 * protect and retainOnDelete set on the group do not reach its children (pulumi-kubernetes #3065).
 */
export const protectCrds: pulumi.ResourceTransform = (args) =>
    args.type === CRD_TYPE ? { props: args.props, opts: pulumi.mergeOptions(args.opts, { protect: true, retainOnDelete: true }) } : undefined;

/** Chart reference and repository options for an https or an OCI chart repository. */
export function chartSource(repository: string): { chart: string; repositoryOpts?: { repo: string } } {
    if (repository.startsWith("oci://")) {
        return { chart: `${repository.replace(/\/+$/, "")}/argo-rollouts` };
    }
    return { chart: "argo-rollouts", repositoryOpts: { repo: repository } };
}

/** What the rollouts stage reads of the stack's configuration: its own sections, and the cluster's and the hub Mimir's facts. */
/** The sections the rollouts stage reads. */
export interface RolloutsStageConfig {
    stack: string;
    cluster: { name: string; role: MimirRole; mimirTenant: string };
    imageRegistry?: string;
    controller: ControllerConfig;
    plugin: PluginConfig;
    mimir: MimirConfig;
    analysis: AnalysisConfig;
    network: NetworkConfig;
    errorBudget: ErrorBudgetConfig;
    notifications: NotificationsConfig;
}

export interface RolloutsStageArgs {
    config: RolloutsStageConfig;
    /** Spoke: the read endpoint the hub routes for this spoke, resolved from the hub's stack (a StackReference) or the stack file. */
    readEndpoint?: pulumi.Input<string>;
}

/**
 * Rollouts stage (ADR-056 D5, D7): the namespace, the CRDs as their own protected step, the
 * controller's least-privilege RBAC, the pinned controller chart with the Gateway API
 * traffic-router plugin, the controller's network policy to its metrics, and the shared
 * analysis templates.
 */
export class RolloutsStage extends Stage {
    readonly namespace: k8s.core.v1.Namespace;
    readonly crds: k8s.yaml.v2.ConfigGroup;
    readonly controller: k8s.helm.v4.Chart;
    /** Where the controller loads the Gateway API plugin from. */
    readonly pluginLocation: string;
    /** The Mimir Prometheus API this cluster's metric gates query. */
    readonly metricsAddress: pulumi.Output<string>;
    /** The shared ClusterAnalysisTemplates, by name. */
    readonly analysisTemplates: Record<string, k8s.apiextensions.CustomResource> = {};

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
        const notifications = this.notifications(cfg);
        const trust = this.readCaTrust(cfg);

        this.controller = new k8s.helm.v4.Chart(
            "rollouts-controller",
            {
                ...chartSource(cfg.controller.chartRepository),
                name: RELEASE_NAME,
                version: cfg.controller.chartVersion,
                namespace: ns,
                values: controllerValues(cfg),
            },
            this.child({ dependsOn: [this.namespace, this.crds, ...rbac, ...notifications, ...trust] }),
        );
        this.pluginLocation = trafficRouterPlugin(cfg.plugin).location;

        this.metricsAddress = this.resolveMetricsAddress(cfg, args.readEndpoint);
        this.networkPolicies(cfg);
        this.tenantRbac(cfg);
        // Templates name a kind of the CRDs, so they wait for them.
        const template = (name: string, spec: pulumi.Input<Record<string, unknown>>) =>
            new k8s.apiextensions.CustomResource(
                `analysis-${templateShortName(name)}`,
                {
                    apiVersion: "argoproj.io/v1alpha1",
                    kind: "ClusterAnalysisTemplate",
                    metadata: { name, labels: { ...PART_OF, "app.kubernetes.io/component": "analysis" } },
                    spec,
                },
                this.child({ dependsOn: [this.crds] }),
            );
        const analysis = cfg.analysis;
        for (const t of sharedTemplates(analysis)) {
            this.analysisTemplates[t.name] = template(
                t.name,
                this.metricsAddress.apply((address) => clusterAnalysisTemplateSpec(t, analysis, address, cfg.cluster.mimirTenant)),
            );
        }
        for (const t of errorBudgetTemplates(cfg.errorBudget, analysis)) {
            this.analysisTemplates[t.name] = template(
                t.name,
                this.metricsAddress.apply((address) => t.spec(address, cfg.cluster.mimirTenant)),
            );
        }
        this.registerOutputs({ namespace: this.namespace.metadata.name, pluginLocation: this.pluginLocation, metricsAddress: this.metricsAddress });
    }

    /**
     * The notification ConfigMap (templates, triggers, service, default subscription) and, with a
     * service, the Secret holding its token as a Pulumi secret.
     */
    private notifications(cfg: RolloutsStageConfig): pulumi.Resource[] {
        const n = cfg.notifications;
        const ns = cfg.controller.namespace;
        // The chart labels these with the controller's component; keep the same.
        const labels = { ...PART_OF, "app.kubernetes.io/component": "rollouts-controller" };
        const out: pulumi.Resource[] = [
            new k8s.core.v1.ConfigMap(
                "notification-configmap",
                { metadata: { name: NOTIFICATION_CONFIGMAP, namespace: ns, labels }, data: notificationConfigData(n, cfg.cluster.name) },
                this.child({ dependsOn: [this.namespace] }),
            ),
        ];
        if (n.service && n.token) {
            out.push(
                new k8s.core.v1.Secret(
                    "notification-secret",
                    {
                        metadata: { name: NOTIFICATION_SECRET, namespace: ns, labels },
                        type: "Opaque",
                        stringData: { [tokenKey(n.service)]: pulumi.secret(n.token.reveal()) },
                    },
                    this.child({ dependsOn: [this.namespace] }),
                ),
            );
        }
        return out;
    }

    /**
     * A spoke's `mimir.readCaBundle`: the ConfigMap the controller mounts and adds to its trust
     * (trust.ts). Before the chart: a pod whose ConfigMap volume is missing does not start.
     */
    private readCaTrust(cfg: RolloutsStageConfig): pulumi.Resource[] {
        const trust = controllerTrust(cfg.mimir.readCaBundle);
        if (!trust) {
            return [];
        }
        const labels = { ...PART_OF, "app.kubernetes.io/component": "rollouts-controller" };
        return [
            new k8s.core.v1.ConfigMap(
                "mimir-read-ca",
                { metadata: { name: READ_CA_CONFIGMAP, namespace: cfg.controller.namespace, labels }, data: trust.configMapData },
                this.child({ dependsOn: [this.namespace] }),
            ),
        ];
    }

    /** Hub: Mimir in-cluster. Spoke: the hub's route for this spoke, which forces its tenant. */
    private resolveMetricsAddress(cfg: RolloutsStageConfig, readEndpoint: pulumi.Input<string> | undefined): pulumi.Output<string> {
        if (cfg.cluster.role === "hub") {
            return pulumi.output(inClusterMimirAddress(cfg.mimir));
        }
        if (readEndpoint === undefined) {
            throw new Error(`stack "${cfg.stack}": a spoke needs the read endpoint the hub routes for it`);
        }
        return pulumi.output(readEndpoint);
    }

    /** The controller's CiliumNetworkPolicies, and on the hub the matching ingress into Mimir. */
    private networkPolicies(cfg: RolloutsStageConfig): void {
        const ns = cfg.controller.namespace;
        const plugin = trafficRouterPlugin(cfg.plugin);
        const labels = { ...PART_OF, "app.kubernetes.io/component": "network-policy" };
        const cnp = (name: string, namespace: string, spec: pulumi.Input<object>) =>
            new k8s.apiextensions.CustomResource(
                name,
                { apiVersion: "cilium.io/v2", kind: "CiliumNetworkPolicy", metadata: { name, namespace, labels }, spec },
                this.child({ dependsOn: [this.namespace] }),
            );
        if (cfg.network.controllerDefaultDeny) {
            cnp("default-deny", ns, namespaceDefaultDeny());
        }
        cnp(
            "argo-rollouts-controller",
            ns,
            this.metricsAddress.apply((address) =>
                controllerNetworkPolicy({
                    role: cfg.cluster.role,
                    controllerNamespace: ns,
                    mimir: cfg.mimir,
                    network: cfg.network,
                    ...(cfg.cluster.role === "spoke" ? { readEndpoint: address } : {}),
                    ...(plugin.location.startsWith("https://") ? { pluginDownloadUrl: plugin.location } : {}),
                    notificationHosts: notificationHosts(cfg.notifications),
                }),
            ),
        );
        if (cfg.cluster.role === "hub") {
            cnp("argo-rollouts-metric-gates", cfg.mimir.namespace, mimirIngressNetworkPolicy(cfg.mimir, ns));
        }
    }

    /**
     * What tenants may do with their Rollouts, in place of the chart's aggregate roles (tenants.ts):
     * read through `view`, and the operator role where `controller.tenantOperators` binds it. The
     * roles name kinds of the CRDs, so they wait for them.
     */
    private tenantRbac(cfg: RolloutsStageConfig): void {
        const view = tenantViewRole();
        new k8s.rbac.v1.ClusterRole("tenant-rollouts-view", view, this.child({ dependsOn: [this.crds] }));
        const operator = tenantOperatorRole();
        const role = new k8s.rbac.v1.ClusterRole("tenant-rollouts-operator", operator, this.child({ dependsOn: [this.crds] }));
        for (const b of cfg.controller.tenantOperators) {
            new k8s.rbac.v1.RoleBinding(`tenant-rollouts-operator-${b.namespace}`, tenantOperatorBinding(b), this.child({ dependsOn: [role] }));
        }
    }

    /** The controller's roles, declared here rather than by the chart (see rbac.ts). */
    private controllerRbac(ns: string, cfg: RolloutsStageConfig): pulumi.Resource[] {
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
