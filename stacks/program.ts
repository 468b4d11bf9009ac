import * as pulumi from "@pulumi/pulumi";
import { ArgoCdAppsStage } from "../components/argocd";
import { clusterProvider } from "../components/cluster";
import { AddonConfig, loadAddonConfig } from "../components/config";
import { GatewayStage } from "../components/gateway";
import { PolicyStage } from "../components/policy";
import { RolloutsStage } from "../components/rollouts";
import { STAGES } from "../components/stage";

/**
 * The whole addon for one cluster: gateway -> rollouts -> policy -> argocd-apps (ADR-056 D7).
 * The configuration is validated before the first resource is declared, so a bad stack file
 * stops the program with nothing half-applied.
 */
export function defineStack(config: AddonConfig = loadAddonConfig()): Record<string, unknown> {
    const provider = clusterProvider(config.cluster);
    const providers = [provider];

    const gateway = new GatewayStage("gateway", { stack: config.stack, gateway: config.gateway }, { providers });
    const rollouts = new RolloutsStage("rollouts", { config }, { providers, after: gateway });
    const policy = new PolicyStage("policy", { config }, { providers, after: rollouts });
    new ArgoCdAppsStage("argocd-apps", { config }, { providers, after: policy });

    return {
        cluster: config.cluster.name,
        role: config.cluster.role,
        mimirTenant: config.cluster.mimirTenant,
        stages: [...STAGES],
        sharedGateway: gateway.sharedGatewayRef,
        controllerNamespace: rollouts.namespace.metadata.name,
        chartVersion: config.controller.chartVersion,
        controllerVersion: config.controller.appVersion,
        pluginVersion: config.plugin.version,
        pluginLocation: pulumi.output(rollouts.pluginLocation),
    };
}
