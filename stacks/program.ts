import * as pulumi from "@pulumi/pulumi";
import { ArgoCdAppsStage } from "../components/argocd";
import { SPOKE_READ_ENDPOINTS_OUTPUT, stackTransforms, clusterProvider, hubReadEndpoint } from "../components/cluster";
import { GatewayStage } from "../components/gateway";
import { PolicyStage } from "../components/policy";
import { SmokeCanary } from "../components/smoke";
import { STAGES } from "../components/stage";
import { stackStrategies } from "../components/delivery/config";
import { deliveryStrategiesOutput } from "../components/delivery/kustomize";
import { refuseExampleValues } from "../components/config/examples";
import { PROJECT } from "../components/config/reader";
import { AddonConfig, loadAddonConfig } from "./config";
import { RolloutsStage } from "../components/rollouts/stage";

/** A warning is said once per process: the offline plan and the unit tests run the program many times in one. */
const warned = new Set<string>();
/** Forgets what was said: a test that asserts a warning starts from silence. */
export function forgetWarnings(): void {
    warned.clear();
}
function warnOnce(message: string): void {
    if (!warned.has(message)) {
        warned.add(message);
        void pulumi.log.warn(message);
    }
}

/** The whole addon for one cluster: gateway -> rollouts -> policy -> argocd-apps (ADR-056 D7), from a validated configuration. */
export async function defineStack(config: AddonConfig = loadAddonConfig()): Promise<Record<string, unknown>> {
    refuseExampleValues(config.stack, PROJECT, config.examples, pulumi.runtime.isDryRun(), warnOnce);
    const provider = clusterProvider(config.cluster);
    const providers = [provider];
    // Every whole object carries the stack's mark; the adopting run also forces its ownership, never of a patch (adoption.ts).
    const transforms = stackTransforms(config.cluster.adoptExisting);

    const readEndpoint = await hubReadEndpoint(config);

    const gateway = new GatewayStage("gateway", { config }, { providers, transforms });
    const rollouts = new RolloutsStage("rollouts", { config, readEndpoint }, { providers, transforms, after: gateway });
    const policy = new PolicyStage("policy", { config }, { providers, transforms, after: rollouts });
    const argocd = new ArgoCdAppsStage("argocd-apps", { config }, { providers, transforms, after: policy });
    // The smoke canary is a tenant-shaped app: it comes after everything a tenant app relies on.
    const smoke = config.smokeTest.enabled ? new SmokeCanary("smoke-canary", { config }, { providers, transforms, after: argocd }) : undefined;

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
        metricsAddress: rollouts.metricsAddress,
        analysisTemplates: Object.keys(rollouts.analysisTemplates),
        kyvernoApi: config.policy.kyvernoApi,
        argocdRunsOn: config.argocd.runsOn,
        argocdPatched: argocd.patched,
        argocdVerified: argocd.verified,
        // The tier strategies (delivery section) by component name, as `npm run delivery` renders them.
        deliveryStrategies: deliveryStrategiesOutput(stackStrategies(config)),
        // Hub: what each spoke's analysis reads; a spoke's StackReference picks its own entry.
        ...(config.cluster.role === "hub" && { [SPOKE_READ_ENDPOINTS_OUTPUT]: gateway.spokeReadEndpoints }),
        ...(smoke && {
            smokeCanary: {
                namespace: config.smokeTest.namespace,
                rollout: smoke.rollout.metadata.name,
                strategy: config.smokeTest.strategy,
                url: `https://${config.smokeTest.hostname}/`,
                revision: smoke.revision,
                expect: config.smokeTest.failGate ? "aborted" : "promoted",
            },
        }),
    };
}
