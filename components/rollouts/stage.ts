import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { CRD_TYPE, RELEASE_NAME, TEMPLATE_NAME_PREFIX, rolloutsCrdUrls } from "../argoRollouts";
import type { MimirConfig } from "../gateway/config";
import { MimirRole, inClusterMimirAddress } from "../mimir";
import { PART_OF, Stage, StageOptions } from "../stage";
import { annotating } from "../cluster/adoption";
import { clusterAnalysisTemplateSpec, errorBudgetTemplates, sharedTemplates } from "./analysis";
import { AnalysisConfig, ControllerConfig, ErrorBudgetConfig, NetworkConfig, NotificationsConfig, PluginConfig } from "./config";
import { controllerNetworkPolicy, mimirIngressNetworkPolicy, namespaceDefaultDeny } from "./network";
import { NOTIFICATION_CONFIGMAP, NOTIFICATION_SECRET, notificationConfigData, tokenKey } from "./notifications";
import { trafficRouterPlugin } from "./plugin";
import { controllerClusterRules, controllerNamespaceRules } from "./rbac";
import { tenantOperatorBinding, tenantOperatorRole, tenantViewRole } from "./tenants";
import { READ_CA_CONFIGMAP, controllerTrust } from "./trust";
import { controllerValues } from "./values";

/**
 * Protects every CRD the group declares: deleting the Rollout CRD deletes every Rollout, and
 * protect and retainOnDelete set on the group do not reach its children (pulumi-kubernetes #3065).
 */
export const protectCrds: pulumi.ResourceTransform = (args) =>
    args.type === CRD_TYPE ? { props: args.props, opts: pulumi.mergeOptions(args.opts, { protect: true, retainOnDelete: true }) } : undefined;

/**
 * The chart's Services are created without the provider's await: it waits until a Service's Endpoints
 * have not changed for ten seconds (pulumi-kubernetes provider/pkg/await/service.go, v4.25.0), which
 * proves no more than the await of the chart's Deployment, whose pods they select, already has, and
 * held every later stage ten seconds at each `up`. The Deployment is still awaited. Named, so the
 * plan and its review diff name the transform.
 */
const skipServiceAwait = annotating(() => ({ "pulumi.com/skipAwait": "true" }), "kubernetes:core/v1:Service");
export const chartServicesUnawaited: pulumi.ResourceTransform = (args) => skipServiceAwait(args);

/** Chart reference and repository options for an https or an OCI chart repository. */
export function chartSource(repository: string): { chart: string; repositoryOpts?: { repo: string } } {
    return repository.startsWith("oci://")
        ? { chart: `${repository.replace(/\/+$/, "")}/argo-rollouts` }
        : { chart: "argo-rollouts", repositoryOpts: { repo: repository } };
}

/** The sections the rollouts stage reads: its own, and the cluster's and the hub Mimir's facts. */
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
    /** Spoke: the read endpoint the hub routes for this spoke (its stack output, or the stack file). */
    readEndpoint?: pulumi.Input<string>;
}

/**
 * Rollouts stage (ADR-056 D5, D7): the namespace, the CRDs as their own protected step, the
 * controller's least-privilege RBAC, the pinned chart with the Gateway API plugin, the controller's
 * network policy to its metrics, tenant access, and the shared analysis templates.
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
        // Every container of the addon runs restricted; the platform's own labels go on top.
        const security = { "pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest" };
        const labels = { ...PART_OF, "app.kubernetes.io/managed-by": "pulumi", ...security, ...cfg.controller.namespaceLabels };
        this.namespace = new k8s.core.v1.Namespace("controller-namespace", { metadata: { name: ns, labels } }, this.child());
        const inNamespace = this.child({ dependsOn: [this.namespace] });

        // Before the controller and before anything naming a Rollout (ADR-056 D2, D7).
        this.crds = new k8s.yaml.v2.ConfigGroup(
            "rollouts-crds",
            { files: rolloutsCrdUrls(cfg.controller.crdBaseUrl, cfg.controller.appVersion), skipAwait: false },
            this.child({ protect: true, retainOnDelete: true, transforms: [protectCrds] }),
        );
        const afterCrds = this.child({ dependsOn: [this.crds] });

        // The controller's roles, declared here: the chart's provider RBAC grants meshes the platform does not run (rbac.ts).
        const component = { ...PART_OF, "app.kubernetes.io/component": "rollouts-controller" };
        const after = (r: pulumi.Resource) => this.child({ dependsOn: [r] });
        const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), labels: component });
        const binding = (kind: string) => ({
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name: RELEASE_NAME },
            subjects: [{ kind: "ServiceAccount", name: RELEASE_NAME, namespace: ns }],
        });
        const rules = controllerClusterRules(cfg.plugin);
        const clusterRole = new k8s.rbac.v1.ClusterRole("controller-clusterrole", { metadata: meta(RELEASE_NAME), rules }, this.child());
        const clusterBinding = new k8s.rbac.v1.ClusterRoleBinding(
            "controller-clusterrolebinding",
            { metadata: meta(RELEASE_NAME), ...binding("ClusterRole") },
            after(clusterRole),
        );
        const role = new k8s.rbac.v1.Role("controller-role", { metadata: meta(RELEASE_NAME, ns), rules: controllerNamespaceRules() }, inNamespace);
        const roleBinding = new k8s.rbac.v1.RoleBinding("controller-rolebinding", { metadata: meta(RELEASE_NAME, ns), ...binding("Role") }, after(role));

        // The notification ConfigMap and, with a service, its token as a Pulumi secret (the chart creates neither); a
        // spoke's mimir.readCaBundle, which the controller mounts (trust.ts): a pod whose ConfigMap is missing does not start.
        const n = cfg.notifications;
        const configMap = (id: string, name: string, data: Record<string, string>) =>
            new k8s.core.v1.ConfigMap(id, { metadata: meta(name, ns), data }, inNamespace);
        const before: pulumi.Resource[] = [configMap("notification-configmap", NOTIFICATION_CONFIGMAP, notificationConfigData(n, cfg.cluster.name))];
        if (n.service && n.token) {
            const stringData = { [tokenKey(n.service)]: pulumi.secret(n.token.reveal()) };
            before.push(new k8s.core.v1.Secret("notification-secret", { metadata: meta(NOTIFICATION_SECRET, ns), type: "Opaque", stringData }, inNamespace));
        }
        const trust = controllerTrust(cfg.mimir.readCaBundle);
        if (trust) before.push(configMap("mimir-read-ca", READ_CA_CONFIGMAP, trust.configMapData));

        const chart = { ...chartSource(cfg.controller.chartRepository), name: RELEASE_NAME, version: cfg.controller.chartVersion, namespace: ns };
        const waits = [this.namespace, this.crds, clusterRole, clusterBinding, role, roleBinding, ...before];
        this.controller = new k8s.helm.v4.Chart(
            "rollouts-controller",
            { ...chart, values: controllerValues(cfg) },
            this.child({ dependsOn: waits, transforms: [chartServicesUnawaited] }),
        );
        this.pluginLocation = trafficRouterPlugin(cfg.plugin).location;

        // Hub: Mimir in-cluster. Spoke: the hub's route for this spoke, which forces its tenant.
        if (cfg.cluster.role === "spoke" && args.readEndpoint === undefined) {
            throw new Error(`stack "${cfg.stack}": a spoke needs the read endpoint the hub routes for it`);
        }
        this.metricsAddress = pulumi.output(cfg.cluster.role === "hub" ? inClusterMimirAddress(cfg.mimir) : args.readEndpoint!);

        // The controller's CiliumNetworkPolicies, and on the hub the matching ingress into Mimir.
        const custom = (id: string, apiVersion: string, kind: string, metadata: object, spec: pulumi.Input<object>, opts: pulumi.CustomResourceOptions) =>
            new k8s.apiextensions.CustomResource(id, { apiVersion, kind, metadata, spec }, opts);
        const networkLabels = { ...PART_OF, "app.kubernetes.io/component": "network-policy" };
        const cnp = (name: string, namespace: string, spec: pulumi.Input<object>) =>
            custom(name, "cilium.io/v2", "CiliumNetworkPolicy", { name, namespace, labels: networkLabels }, spec, inNamespace);
        if (cfg.network.controllerDefaultDeny) cnp("default-deny", ns, namespaceDefaultDeny());
        const address = this.metricsAddress;
        cnp(
            "argo-rollouts-controller",
            ns,
            address.apply((a) => controllerNetworkPolicy(cfg, a)),
        );
        if (cfg.cluster.role === "hub") cnp("argo-rollouts-metric-gates", cfg.mimir.namespace, mimirIngressNetworkPolicy(cfg.mimir, ns));

        // What tenants may do with their Rollouts, in place of the chart's aggregate roles (tenants.ts); the roles name kinds of the CRDs.
        new k8s.rbac.v1.ClusterRole("tenant-rollouts-view", tenantViewRole(), afterCrds);
        const operator = new k8s.rbac.v1.ClusterRole("tenant-rollouts-operator", tenantOperatorRole(), afterCrds);
        for (const b of cfg.controller.tenantOperators) {
            new k8s.rbac.v1.RoleBinding(`tenant-rollouts-operator-${b.namespace}`, tenantOperatorBinding(b), after(operator));
        }

        // The shared templates name a kind of the CRDs, so they wait for them.
        const analysisLabels = { ...PART_OF, "app.kubernetes.io/component": "analysis" };
        const tenant = cfg.cluster.mimirTenant;
        const templates = [
            ...sharedTemplates(cfg.analysis).map((t) => ({ name: t.name, spec: (a: string) => clusterAnalysisTemplateSpec(t, cfg.analysis, a, tenant) })),
            ...errorBudgetTemplates(cfg.errorBudget, cfg.analysis).map((t) => ({ name: t.name, spec: (a: string) => t.spec(a, tenant) })),
        ];
        for (const { name, spec } of templates) {
            const metadata = { name, labels: analysisLabels };
            const id = `analysis-${name.slice(TEMPLATE_NAME_PREFIX.length)}`;
            this.analysisTemplates[name] = custom(id, "argoproj.io/v1alpha1", "ClusterAnalysisTemplate", metadata, address.apply(spec), afterCrds);
        }
        this.registerOutputs({ namespace: this.namespace.metadata.name, pluginLocation: this.pluginLocation, metricsAddress: this.metricsAddress });
    }
}
