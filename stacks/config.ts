import { ArgoCdConfig, readArgoCd } from "../components/argocd/config";
import { ClusterConfig, readCluster } from "../components/cluster/config";
import { readStackConfig } from "../components/config/load";
import { ConfigError, ConfigReader, PROJECT, Plain, isPlainObject } from "../components/config/reader";
import { MimirRoutesConfig, SharedGatewayConfig, readGateway, readMimirAndSpokes } from "../components/gateway/config";
import type { MimirRole } from "../components/mimir";
import { PolicyConfig, readPolicy } from "../components/policy/config";
import {
    AnalysisConfig,
    ControllerConfig,
    ErrorBudgetConfig,
    ImagesConfig,
    NOTIFICATIONS_TOKEN_KEY,
    NetworkConfig,
    NotificationsConfig,
    PluginConfig,
    readAnalysis,
    readController,
    readErrorBudget,
    readImages,
    readNetwork,
    readNotifications,
    readPlugin,
} from "../components/rollouts/config";
import { SmokeTestConfig, readSmokeTest } from "../components/smoke/config";

/**
 * The one typed configuration of a stack, assembled from the sections the stage folders own
 * (each folder's `config.ts`: types, defaults, reader, preflight). It is built once, before any
 * resource is declared; components receive the parts they need and never read Pulumi config
 * themselves. It lives beside the program because, like the program, it composes the stages:
 * components/config holds only the reader framework the sections are written with, so no stage
 * imports a folder that imports it back.
 */

/** Metric gates (ADR-056 D5): the hub's Mimir and spoke routes (gateway stage), analysis and network policy (rollouts stage). */
export interface MetricsConfig extends MimirRoutesConfig {
    analysis: AnalysisConfig;
    network: NetworkConfig;
}

/** Delivery (ADR-056 D6, Phase 3): the error-budget gate and notifications (rollouts stage), the smoke canary. */
export interface DeliveryConfig {
    errorBudget: ErrorBudgetConfig;
    notifications: NotificationsConfig;
    smokeTest: SmokeTestConfig;
}

export interface AddonConfig {
    stack: string;
    cluster: ClusterConfig;
    gateway: SharedGatewayConfig;
    images: ImagesConfig;
    controller: ControllerConfig;
    plugin: PluginConfig;
    /** Metric gates: Mimir, the hub's spokes or this spoke's read endpoint, analysis, network policy. */
    metrics: MetricsConfig;
    /** Error-budget freeze, notifications, smoke canary. */
    delivery: DeliveryConfig;
    policy: PolicyConfig;
    argocd: ArgoCdConfig;
}

/** Namespaces other than the project's whose keys a stack file may carry: Pulumi's and the providers'. */
export const KNOWN_NAMESPACES: readonly string[] = ["pulumi", "aws", "kubernetes"];

/** The keys a stack may set under the `argo-rollouts-addon:` namespace. */
export const TOP_LEVEL_KEYS = [
    "cluster",
    "gateway",
    "imageRegistry",
    "controller",
    "plugin",
    "mimir",
    "spokes",
    "analysis",
    "network",
    "errorBudget",
    "notifications",
    "notificationsToken",
    "smokeTest",
    "policy",
    "argocd",
] as const;

/**
 * Builds the stack's typed configuration from the raw values under the project namespace, or
 * throws one ConfigError listing every problem. `raw` maps keys without the namespace to values
 * as parsed from the stack file; `ambient` carries other namespaces' keys the program honours
 * (only `aws:region`).
 *
 * Sections that depend on another are read after it and handed what they need: the spoke routes
 * and the network policy depend on the cluster's role, tenant uniqueness on its tenant, the ingest
 * Gateway on the shared one, and ArgoCD's default `runsOn` on the cluster's name.
 */
export function parseAddonConfig(stack: string, raw: Plain, ambient: { awsRegion?: string; secretKeys?: readonly string[]; otherKeys?: readonly string[] } = {}): AddonConfig {
    const r = new ConfigReader();
    const secretKeys = ambient.secretKeys ?? [];
    // A key of another namespace is Pulumi's or a provider's; any other namespace is a typo of
    // this project's, whose keys would otherwise be ignored without a word.
    for (const key of ambient.otherKeys ?? []) {
        const namespace = key.includes(":") ? key.slice(0, key.indexOf(":")) : "";
        if (!KNOWN_NAMESPACES.includes(namespace)) {
            r.unknownKey(key, namespace, `the namespace ${namespace}: is neither ${PROJECT}: nor one of Pulumi's and its providers' (${KNOWN_NAMESPACES.map((n) => `${n}:`).join(", ")})`, [PROJECT], { qualified: true });
        }
    }
    for (const key of Object.keys(raw)) {
        if (!(TOP_LEVEL_KEYS as readonly string[]).includes(key)) {
            r.unknownKey(key, key, `the ${PROJECT} namespace takes ${TOP_LEVEL_KEYS.join(", ")}`, TOP_LEVEL_KEYS);
        }
    }

    const cluster = readCluster(r, raw.cluster, ambient);
    const gateway = readGateway(r, raw.gateway);
    const images = readImages(r, raw.imageRegistry);
    const controller = readController(r, raw.controller);
    const plugin = readPlugin(r, raw.plugin);
    // A cluster section with a problem elsewhere still tells the metric sections its role and tenant.
    const rawCluster = isPlainObject(raw.cluster) ? raw.cluster : {};
    const role = cluster?.role ?? (rawCluster.role === "hub" || rawCluster.role === "spoke" ? rawCluster.role : undefined);
    const mimirTenant = cluster?.mimirTenant ?? (typeof rawCluster.mimirTenant === "string" ? rawCluster.mimirTenant : undefined);
    const metrics = readMetrics(r, raw, { role, mimirTenant }, gateway);
    const delivery = readDelivery(r, raw, secretKeys);
    const policy = readPolicy(r, raw.policy);
    const argocd = readArgoCd(r, raw.argocd, cluster?.name, policy?.regulated);

    // The smoke stage declares its namespace as the rollouts stage declares the controller's: one object, two owners.
    if (delivery?.smokeTest.enabled && controller && delivery.smokeTest.namespace === controller.namespace) {
        r.problem("smokeTest.namespace", delivery.smokeTest.namespace, `must differ from controller.namespace (${controller.namespace}): both stages declare their namespace, and a tenant-shaped canary does not run beside the controller`);
    }
    if (r.problems.length > 0 || !cluster || !gateway || !controller || !plugin || !metrics || !delivery || !policy || !argocd) {
        if (r.problems.length === 0) {
            // A reader gave up without saying why: name the sections rather than report "0 problems".
            const missing = Object.entries({ cluster, gateway, controller, plugin, metrics, delivery, policy, argocd }).filter(([, v]) => !v).map(([k]) => k);
            r.problem(missing.join(", "), undefined, "could not be read; check these sections against the configuration reference");
        }
        throw new ConfigError(stack, PROJECT, r.problems);
    }
    return { stack, cluster, gateway, images, controller, plugin, metrics, delivery, policy, argocd };
}

function readMetrics(
    r: ConfigReader,
    raw: Plain,
    cluster: { role?: MimirRole; mimirTenant?: string },
    sharedGateway: SharedGatewayConfig | undefined,
): MetricsConfig | undefined {
    const routes = readMimirAndSpokes(r, raw, cluster, sharedGateway);
    const analysis = readAnalysis(r, raw.analysis);
    const network = readNetwork(r, raw.network, cluster.role);
    if (!routes || !analysis || !network) {
        return undefined;
    }
    return { ...routes, analysis, network };
}

function readDelivery(r: ConfigReader, raw: Plain, secretKeys: readonly string[]): DeliveryConfig | undefined {
    const errorBudget = readErrorBudget(r, raw.errorBudget);
    const notifications = readNotifications(r, raw.notifications, raw[NOTIFICATIONS_TOKEN_KEY], secretKeys.includes(NOTIFICATIONS_TOKEN_KEY));
    const smokeTest = readSmokeTest(r, raw.smokeTest);
    return errorBudget && notifications && smokeTest ? { errorBudget, notifications, smokeTest } : undefined;
}

/** Reads and validates this stack's configuration, as the Pulumi CLI hands it to the program. */
export function loadAddonConfig(): AddonConfig {
    const { stack, raw, ambient } = readStackConfig();
    return parseAddonConfig(stack, raw, ambient);
}
