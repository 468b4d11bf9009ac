import type { ArgoCdStageConfig } from "../components/argocd";
import { ARGOCD_FIELDS, readArgoCd } from "../components/argocd";
import { CLUSTER_FIELDS, readCluster } from "../components/cluster/config";
import { field } from "../components/config/declare";
import { DELIVERY_FIELDS, readDelivery } from "../components/delivery";
import { exampleValues } from "../components/config/examples";
import { ProjectStack, projectStack, readStackConfig } from "../components/config/load";
import { checkAcrossProject } from "../components/config/project";
import { PLUGIN_UPSTREAM_REGISTRY } from "../components/rollouts/plugin";
import { ConfigError, ConfigProblem, ConfigReader, OFFLINE_SECRET, PROJECT, Plain, isPlainObject } from "../components/config/reader";
import { KNOWN_NAMESPACES, NAME_TOTAL_LENGTH_MAX, PLATFORM_NAMESPACES, foreignNamespace } from "../components/config/reader";
import type { GatewayStageConfig } from "../components/gateway";
import * as gw from "../components/gateway/config";
import type { PolicyStageConfig } from "../components/policy";
import { POLICY_FIELDS, readPolicy } from "../components/policy/config";
import * as ro from "../components/rollouts/config";
import type { SmokeCanaryConfig } from "../components/smoke";
import { SMOKE_TEST_FIELDS, readSmokeTest } from "../components/smoke/config";
import type { RolloutsStageConfig } from "../components/rollouts/stage";

/**
 * The one typed configuration of a stack, in the stack file's shape, assembled from the sections the
 * stage folders own and built once, before any resource is declared (parseAddonConfig). It lives
 * beside the program because, like the program, it composes the stages, so no stage imports a folder
 * that imports it back. `examples`: the keys that still hold an example value (a preview warns of
 * each, `pulumi up` refuses them); `notifications.token`: `notificationsToken`.
 */
export type AddonConfig = ReturnType<typeof parseAddonConfig>;

/** Compiles only while AddonConfig has every section each stage reads, under the same name and with the same type. */
export function stageConfigs(c: AddonConfig): [GatewayStageConfig, RolloutsStageConfig, PolicyStageConfig, ArgoCdStageConfig, SmokeCanaryConfig] {
    return [c, c, c, c, c];
}

/**
 * Every key a stack file may set under the `argo-rollouts-addon:` namespace, with its section's
 * declaration: the schema (schema/stack.schema.json) and the reference (docs/configuration.md) follow.
 */
export const STACK_FIELDS = {
    cluster: field.section({
        doc: "which cluster this stack manages, its role in the Mimir topology (D5), how the program reaches it, and whether this run adopts an existing install",
        defaultDoc: "required",
        fields: CLUSTER_FIELDS,
    }),
    gateway: field.section({
        doc: "the shared Gateway the traffic-router plugin's HTTPRoutes attach to (D4, D7); read and checked, never declared",
        defaultDoc: "required",
        fields: gw.GATEWAY_FIELDS,
    }),
    imageRegistry: ro.IMAGE_REGISTRY_FIELDS,
    controller: field.section({ doc: "the controller chart, its image and CRDs (one pinned version), size and placement (D7)", fields: ro.CONTROLLER_FIELDS }),
    plugin: field.section({ doc: "the Gateway API traffic-router plugin and how its binary reaches the controller (D4)", fields: ro.PLUGIN_FIELDS }),
    mimir: field.section({
        doc: "hub: where Mimir runs and who owns the spoke routes; spoke: how it finds the read endpoint the hub routes for it (D5, W8c)",
        fields: gw.MIMIR_FIELDS,
    }),
    spokes: gw.SPOKES_FIELD,
    analysis: field.section({ doc: "the shared metric gates' thresholds and timing (D5); the reader refuses the timing traps", fields: ro.ANALYSIS_FIELDS }),
    network: field.section({ doc: "the controller's network policy (D5, D7)", fields: ro.NETWORK_FIELDS }),
    errorBudget: field.section({ doc: "the error-budget gate's template (D6)", fields: ro.ERROR_BUDGET_FIELDS }),
    notifications: field.section({ doc: "where Argo Rollouts sends its events (D6); unset: templates and triggers only", fields: ro.NOTIFICATIONS_FIELDS }),
    notificationsToken: ro.NOTIFICATIONS_TOKEN_FIELDS,
    smokeTest: field.section({ doc: "the opt-in smoke canary that proves the whole path, gate and abort included (Phase 3)", fields: SMOKE_TEST_FIELDS }),
    delivery: field.section({
        doc: "the delivery strategy per tier and prod class (D3): what `npm run delivery` renders as kustomize components and the stack output deliveryStrategies shows",
        fields: DELIVERY_FIELDS,
    }),
    policy: field.section({ doc: "the admission layer made Rollout-aware (D2, D3, D8)", fields: POLICY_FIELDS }),
    argocd: field.section({ doc: "ArgoCD's tenant AppProjects, ApplicationSets, argocd-cm and RBAC (D2, D3, as-built)", fields: ARGOCD_FIELDS }),
} as const;

/** The top-level keys every stack file must set. */
export const REQUIRED_KEYS: readonly (keyof typeof STACK_FIELDS)[] = ["cluster", "gateway", "policy"];

/** The keys a stack may set under the `argo-rollouts-addon:` namespace. */
export const TOP_LEVEL_KEYS = Object.keys(STACK_FIELDS) as (keyof typeof STACK_FIELDS)[];

/**
 * Builds the stack's typed configuration from the raw values under the project namespace (`raw`,
 * keys without the namespace), or throws one ConfigError listing every problem. `ambient` carries
 * what the program honours from elsewhere (`aws:region`, the secret keys, the project's other stacks).
 * A section that depends on another is read after it and handed what it needs.
 */
export function parseAddonConfig(
    stack: string,
    raw: Plain,
    ambient: {
        awsRegion?: string;
        secretKeys?: readonly string[];
        otherKeys?: readonly string[];
        projectStacks?: readonly ProjectStack[];
    } = {},
) {
    const r = new ConfigReader();
    const secretKeys = ambient.secretKeys ?? [];
    // A key of another namespace is Pulumi's or a provider's; any other namespace is a typo of
    // this project's, whose keys would otherwise be ignored without a word.
    const known = KNOWN_NAMESPACES.map((n) => `${n}:`).join(", ");
    for (const key of ambient.otherKeys ?? []) {
        const namespace = key.includes(":") ? key.slice(0, key.indexOf(":")) : "";
        const takes = `the namespace ${namespace}: is neither ${PROJECT}: nor one of Pulumi's and its providers' (${known})`;
        if (!KNOWN_NAMESPACES.includes(namespace)) r.unknownKey(key, namespace, takes, [PROJECT], { qualified: true });
    }
    // notificationsToken alone is read as a secret: every other key's values (groups, identities, URLs) go in plain text into
    // the cluster's objects (a RoleBinding's subjects), the outputs and `npm run delivery`'s files, so a secret there would leak.
    for (const key of secretKeys.filter((k) => k !== ro.NOTIFICATIONS_TOKEN_KEY)) {
        r.problem(key, undefined, "must not be a secret (secure:): its values are written in plain text; set it without --secret");
    }
    for (const key of Object.keys(raw).filter((k) => !(TOP_LEVEL_KEYS as readonly string[]).includes(k))) {
        r.unknownKey(key, key, `the ${PROJECT} namespace takes ${TOP_LEVEL_KEYS.join(", ")}`, TOP_LEVEL_KEYS);
    }

    const cluster = readCluster(r, raw.cluster, ambient);
    const gateway = gw.readGateway(r, raw.gateway);
    const { registry: imageRegistry } = ro.readImages(r, raw.imageRegistry);
    const controller = ro.readController(r, raw.controller);
    const plugin = ro.readPlugin(r, raw.plugin);
    // A cluster section with a problem elsewhere still tells the metric sections its role and tenant.
    const own = projectStack(stack, raw);
    const role = own.role === "hub" || own.role === "spoke" ? own.role : undefined;
    const routes = gw.readMimirAndSpokes(r, raw, { role, mimirTenant: own.mimirTenant, name: own.cluster, stack }, gateway);
    const analysis = ro.readAnalysis(r, raw.analysis);
    const network = ro.readNetwork(r, raw.network, role);
    const errorBudget = ro.readErrorBudget(r, raw.errorBudget);
    const notifications = ro.readNotifications(r, raw.notifications, raw[ro.NOTIFICATIONS_TOKEN_KEY], secretKeys.includes(ro.NOTIFICATIONS_TOKEN_KEY));
    const smokeTest = readSmokeTest(r, raw.smokeTest);
    // A canary's pause per weight is checked against the gate's timing; a broken analysis section is reported on its own.
    const delivery = readDelivery(r, raw.delivery, analysis ?? ro.ANALYSIS_DEFAULTS);
    const policy = readPolicy(r, raw.policy, raw.delivery);
    // ArgoCD's RBAC names the groups as its token's claim does, without the API server's OIDC prefix (projectStack).
    const argocd = readArgoCd(r, raw.argocd, cluster?.name, policy?.regulated && { ...policy.regulated, ...own.groups?.regulated });
    if (ambient.projectStacks) checkAcrossProject(r, own, ambient.projectStacks);
    // The controller namespace's default-deny admits the metrics port from the scrape namespaces
    // alone (components/rollouts/network.ts), so with none listed every scrape is dropped.
    if (controller?.serviceMonitor && network?.controllerDefaultDeny && network.metricsScrapeNamespaces.length === 0) {
        r.problem(
            "network.metricsScrapeNamespaces",
            isPlainObject(raw.network) ? raw.network.metricsScrapeNamespaces : undefined,
            "must name the namespace of the Prometheus that scrapes the controller when controller.serviceMonitor is true and network.controllerDefaultDeny is true: the default-deny policy admits the metrics port from these namespaces alone, so the ServiceMonitor's scrapes would all be denied",
        );
    }
    // The smoke stage declares its namespace as the rollouts stage declares the controller's: one object, two owners.
    if (smokeTest?.enabled && controller && smokeTest.namespace === controller.namespace) {
        r.problem(
            "smokeTest.namespace",
            smokeTest.namespace,
            `must differ from controller.namespace (${controller.namespace}): both stages declare their namespace, and a tenant-shaped canary does not run beside the controller`,
        );
    }
    // The namespaces the addon creates, and a destroy deletes, are its own: never one another key of
    // this stack names as someone else's, nor Kubernetes' (reported by the section itself).
    const others = {
        "gateway.namespace": gateway?.namespace,
        "mimir.ingestGateway.namespace": routes?.mimir.ingestGateway.namespace,
        "mimir.namespace (Mimir, the observability namespace)": routes?.mimir.namespace,
        "mimir.spokeRouteNamespace": routes?.mimir.spokeRouteNamespace,
        "argocd.namespace (ArgoCD's)": argocd?.namespace,
        "network.dnsNamespace (the cluster resolver's)": network?.dnsNamespace,
    };
    for (const [key, ns] of [
        ["controller.namespace", controller?.namespace],
        ["smokeTest.namespace", smokeTest?.enabled ? smokeTest.namespace : undefined],
    ] as const) {
        const foreign = ns === undefined || PLATFORM_NAMESPACES.includes(ns) ? undefined : foreignNamespace(ns, others);
        if (foreign) r.problem(key, ns, `must be a namespace of the addon's own, not ${foreign}`);
    }
    // Where imageRegistry is set the cluster admits only the mirror: a smoke image from elsewhere plans and then never starts.
    for (const key of ["image", "loadImage"] as const) {
        const ref = smokeTest?.enabled ? smokeTest[key] : undefined;
        if (imageRegistry && ref && !ref.startsWith(`${imageRegistry}/`)) {
            r.problem(
                `smokeTest.${key}`,
                ref,
                `must come from imageRegistry (${imageRegistry}/<repository>@sha256:...): every image of the addon is pulled from the mirror, which the cluster admits alone`,
            );
        }
    }
    // The plugin image's name is the registry and the repository together (rollouts/plugin.ts), within the runtime's limit as a whole.
    const pluginImage = plugin?.delivery.mode === "image" ? `${imageRegistry ?? PLUGIN_UPSTREAM_REGISTRY}/${plugin.delivery.repository}` : "";
    if (plugin?.delivery.mode === "image" && pluginImage.length > NAME_TOTAL_LENGTH_MAX) {
        r.problem(
            "plugin.repository",
            plugin.delivery.repository,
            `must leave the image name ${imageRegistry ? "(imageRegistry/repository)" : "(ghcr.io/repository)"} within ${NAME_TOTAL_LENGTH_MAX} characters (distribution/reference NameTotalLengthMax); it is ${pluginImage.length}`,
        );
    }
    const sections = { cluster, gateway, controller, plugin, analysis, network, errorBudget, notifications, smokeTest, delivery, policy, argocd };
    const missing = Object.entries({ ...sections, mimir: routes }).flatMap(([k, v]) => (v ? [] : [k]));
    if (r.problems.length > 0 || missing.length > 0) {
        if (r.problems.length === 0) {
            // A reader gave up without saying why: name the sections rather than report "0 problems".
            r.problem(missing.join(", "), undefined, "could not be read; check these sections against the configuration reference");
        }
        throw new ConfigError(stack, PROJECT, secretsHidden(r.problems, secretKeys));
    }
    const read = sections as { [K in keyof typeof sections]: NonNullable<(typeof sections)[K]> };
    return { stack, examples: exampleValues(raw, secretKeys), ...read, ...routes!, ...(imageRegistry ? { imageRegistry } : {}) };
}

/** Problems of keys set as secrets (`secure:`): the value is never shown (a `pulumi up` hands the program the decrypted text). */
export function secretsHidden(problems: readonly ConfigProblem[], secretKeys: readonly string[]): ConfigProblem[] {
    const hidden = (p: ConfigProblem) => !p.qualified && p.key.split(/[.[]/)[0] !== ro.NOTIFICATIONS_TOKEN_KEY && secretKeys.includes(p.key.split(/[.[]/)[0]);
    return problems.map((p) => (hidden(p) ? { ...p, given: OFFLINE_SECRET } : p));
}

/** Reads and validates this stack's configuration, as the Pulumi CLI hands it to the program. */
export function loadAddonConfig(): AddonConfig {
    const { stack, raw, ambient } = readStackConfig();
    return parseAddonConfig(stack, raw, ambient);
}
