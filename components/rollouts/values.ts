import { RELEASE_NAME, restrictedContainerSecurityContext } from "../argoRollouts";
import type { MimirConfig } from "../gateway/config";
import { ControllerConfig, PluginConfig } from "./config";
import { pluginImage, pluginImageDelivery, pluginListDigest, trafficRouterPlugin } from "./plugin";
import { controllerTrust } from "./trust";

/** Pod annotation carrying the plugin list digest (see `pluginListDigest`). */
export const PLUGINS_DIGEST_ANNOTATION = "argo-rollouts-addon.platform/plugins-sha256";

const MESH_PROVIDERS = "istio smi ambassador awsLoadBalancerController awsAppMesh traefik apisix contour glooPlatform gatewayAPI".split(" ");

/**
 * The chart's values for the controller (chart 2.41.0 keys only: test/versions.test.ts). A spoke's
 * `mimir.readCaBundle` adds its volume, mount and `SSL_CERT_DIR` (trust.ts) beside the plugin
 * image's volume.
 */
export function controllerValues(cfg: {
    controller: ControllerConfig;
    plugin: PluginConfig;
    imageRegistry?: string;
    mimir?: Pick<MimirConfig, "readCaBundle">;
}): Record<string, unknown> {
    const c = cfg.controller;
    const registry = cfg.imageRegistry;
    const plugins = [trafficRouterPlugin(cfg.plugin)];
    const imageDelivery = pluginImageDelivery(cfg.plugin, registry);
    const trust = controllerTrust(cfg.mimir?.readCaBundle);
    const volumes = [...(imageDelivery?.volumes ?? []), ...(trust?.volumes ?? [])];
    const volumeMounts = [...(imageDelivery?.volumeMounts ?? []), ...(trust?.volumeMounts ?? [])];
    const podSecurityContext = { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } };

    return {
        // CRDs are their own protected step (stage.ts), never part of the chart's lifecycle.
        installCRDs: false,
        keepCRDs: true,
        clusterInstall: true,
        // Separation of duties (ADR-040/049): aggregate roles would let any namespace editor promote (tenants.ts).
        createClusterAggregateRoles: false,
        fullnameOverride: RELEASE_NAME,
        serviceAccount: { create: true, name: RELEASE_NAME },
        podSecurityContext,
        containerSecurityContext: restrictedContainerSecurityContext(),
        // Least privilege: no blanket provider RBAC; the addon declares the controller's roles.
        providerRBAC: { enabled: false, providers: Object.fromEntries(MESH_PROVIDERS.map((p) => [p, false])) },
        controller: {
            replicas: c.replicas,
            // The chart renders `<registry>/<repository>:<tag>` and strips `@sha256:…` from the tag for its version label
            // (argoproj/argo-helm argo-rollouts-2.41.0 and 2.40.7, charts/argo-rollouts/templates/controller/deployment.yaml
            // and _helpers.tpl `argo-rollouts.chart_version_label`): the runtime pulls by the digest, the tag stays readable.
            image: { registry: registry ?? "quay.io", repository: "argoproj/argo-rollouts", tag: `${c.appVersion}@${c.imageDigest}` },
            createClusterRole: false,
            resources: { requests: { ...c.requests }, limits: { ...c.limits } },
            logging: { level: c.logLevel, format: "json" },
            metrics: { enabled: true, serviceMonitor: { enabled: c.serviceMonitor } },
            // An integer budget: with neither bound, or 0 (falsy to the template), the chart renders minAvailable: 0.
            pdb: { enabled: true, maxUnavailable: c.pdbMaxUnavailable },
            topologySpreadConstraints: [{ maxSkew: 1, topologyKey: "topology.kubernetes.io/zone", whenUnsatisfiable: "ScheduleAnyway" }],
            trafficRouterPlugins: plugins,
            podAnnotations: { [PLUGINS_DIGEST_ANNOTATION]: pluginListDigest(plugins, pluginImage(cfg.plugin, registry)), ...trust?.podAnnotations },
            ...(c.priorityClassName ? { priorityClassName: c.priorityClassName } : {}),
            ...(imageDelivery ? { initContainers: imageDelivery.initContainers } : {}),
            ...(volumes.length > 0 ? { volumes, volumeMounts } : {}),
            ...(trust ? { extraEnv: trust.extraEnv } : {}),
        },
        // The stage declares the notification ConfigMap and Secret: the token stays a Pulumi secret, the templates show in the plan.
        notifications: { configmap: { create: false }, secret: { create: false } },
        dashboard: {
            enabled: c.dashboard,
            // Without readonly the dashboard promotes with its own ServiceAccount, bypassing the approver role.
            readonly: true,
            image: { registry: registry ?? "quay.io", repository: "argoproj/kubectl-argo-rollouts", tag: c.appVersion },
            podSecurityContext,
            containerSecurityContext: restrictedContainerSecurityContext(),
            resources: { requests: { cpu: "10m", memory: "64Mi" }, limits: { cpu: "200m", memory: "128Mi" } },
        },
    };
}
