import { readArgoCd } from "../argocd/config";
import { readPolicy } from "../policy/config";
import { readDelivery } from "./delivery";
import { readMetrics } from "./metrics";
import { ConfigError, ConfigReader, DNS_LABEL, HTTPS_URL, MIMIR_TENANT_RULE, Plain, QUANTITY, isPlainObject } from "./reader";
import {
    AddonConfig,
    ClusterConfig,
    ClusterConnection,
    ControllerConfig,
    PROJECT,
    PluginConfig,
    PluginDelivery,
    Quantities,
    SharedGatewayConfig,
} from "./types";

/**
 * Chart versions whose appVersion is known. A chart not listed here needs `controller.appVersion`,
 * because the CRDs are pinned to the controller's version and must not be guessed.
 * Source: argoproj/argo-helm charts/argo-rollouts Chart.yaml (2.41.0 -> appVersion v1.9.0).
 */
export const KNOWN_CHART_APP_VERSIONS: Readonly<Record<string, string>> = {
    "2.41.0": "v1.9.0",
};

/** Every default, in one place; the README's config reference is written from this object. */
export const DEFAULTS = {
    cluster: {
        // Adopting is one deliberate run (README, "Adopting an existing install"), never the default.
        adoptExisting: false,
    },
    controller: {
        namespace: "argo-rollouts",
        chartRepository: "https://argoproj.github.io/argo-helm",
        chartVersion: "2.41.0",
        crdBaseUrl: "https://raw.githubusercontent.com/argoproj/argo-rollouts",
        // Two replicas: the controller runs leader election, so one is active and one is warm.
        replicas: 2,
        pdbMaxUnavailable: 1,
        requests: { cpu: "100m", memory: "256Mi" },
        limits: { cpu: "1", memory: "512Mi" },
        logLevel: "info",
        serviceMonitor: false,
        dashboard: false,
    },
    plugin: {
        version: "v0.15.0",
        delivery: "download",
        arch: "amd64",
        baseUrl: "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi/releases/download",
        repository: "argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi",
        tcpRoutes: false,
        tlsRoutes: false,
    },
} as const;

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

const CLUSTER_KEYS = ["name", "role", "mimirTenant", "eksClusterName", "region", "kubeconfigContext", "kubeconfigPath", "adoptExisting"];
const GATEWAY_KEYS = ["name", "namespace", "listener"];
const CONTROLLER_KEYS = [
    "namespace",
    "namespaceLabels",
    "chartRepository",
    "chartVersion",
    "appVersion",
    "crdBaseUrl",
    "replicas",
    "pdbMaxUnavailable",
    "resources",
    "logLevel",
    "serviceMonitor",
    "dashboard",
    "priorityClassName",
];
const PLUGIN_KEYS = ["version", "delivery", "arch", "sha256", "baseUrl", "repository", "digest", "tcpRoutes", "tlsRoutes"];

const SEMVER = /^[0-9]+\.[0-9]+\.[0-9]+$/;
const VTAG = /^v[0-9]+\.[0-9]+\.[0-9]+(-rc[0-9]+)?$/;
const CHART_REPO = /^(https|oci):\/\/[A-Za-z0-9.-]+(:[0-9]+)?(\/[A-Za-z0-9._~%\/-]*)?$/;
const REGISTRY = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;
const REPOSITORY = /^[a-z0-9]+([._-][a-z0-9]+)*(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;
const SHA256_HEX = /^[A-Fa-f0-9]{64}$/;
const IMAGE_DIGEST = /^sha256:[a-f0-9]{64}$/;
const AWS_REGION = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$/;
const EKS_NAME = /^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/;

/**
 * Builds the stack's typed configuration from the raw values under the project namespace, or
 * throws one ConfigError listing every problem. `raw` maps keys without the namespace to values
 * as parsed from the stack file; `ambient` carries other namespaces' keys the program honours
 * (only `aws:region`).
 */
export function parseAddonConfig(stack: string, raw: Plain, ambient: { awsRegion?: string; secretKeys?: readonly string[] } = {}): AddonConfig {
    const r = new ConfigReader();
    const secretKeys = ambient.secretKeys ?? [];
    for (const key of Object.keys(raw)) {
        if (!(TOP_LEVEL_KEYS as readonly string[]).includes(key)) {
            r.problem(key, secretKeys.includes(key) ? "[not shown]" : raw[key], `unknown key; the ${PROJECT} namespace takes ${TOP_LEVEL_KEYS.join(", ")}`);
        }
    }

    const cluster = readCluster(r, raw.cluster, ambient);
    const gateway = readGateway(r, raw.gateway);
    const registry = r.string("imageRegistry", raw.imageRegistry, {
        pattern: REGISTRY,
        describe: "a registry host with an optional port and path, e.g. registry.example.com/mirror (no scheme, no trailing slash)",
    });
    const controller = readController(r, raw.controller);
    const plugin = readPlugin(r, raw.plugin);
    const rawCluster = isPlainObject(raw.cluster) ? raw.cluster : {};
    const metrics = readMetrics(
        r,
        raw,
        {
            role: cluster?.role ?? (rawCluster.role === "hub" || rawCluster.role === "spoke" ? rawCluster.role : undefined),
            mimirTenant: cluster?.mimirTenant ?? (typeof rawCluster.mimirTenant === "string" ? rawCluster.mimirTenant : undefined),
        },
        gateway,
    );
    const delivery = readDelivery(r, raw, secretKeys);
    const policy = readPolicy(r, raw.policy);
    const argocd = readArgoCd(r, raw.argocd, cluster?.name);

    if (r.problems.length > 0 || !cluster || !gateway || !controller || !plugin || !metrics || !delivery || !policy || !argocd) {
        throw new ConfigError(stack, PROJECT, r.problems);
    }
    return { stack, cluster, gateway, images: { registry }, controller, plugin, metrics, delivery, policy, argocd };
}

function readCluster(r: ConfigReader, value: unknown, ambient: { awsRegion?: string }): ClusterConfig | undefined {
    if (value === undefined) {
        r.problem("cluster", value, "is required: an object with name, role, mimirTenant and eksClusterName or kubeconfigContext");
        return undefined;
    }
    const c = r.object("cluster", value, CLUSTER_KEYS);
    if (!c) {
        return undefined;
    }
    const name = r.requiredString("cluster.name", c.name, { pattern: DNS_LABEL, describe: "a DNS label (lowercase letters, digits, '-')", maxLength: 63 });
    const role = r.requiredString("cluster.role", c.role, { oneOf: ["hub", "spoke"], describe: "hub or spoke" }) as ClusterConfig["role"] | undefined;
    const mimirTenant = r.requiredString("cluster.mimirTenant", c.mimirTenant, MIMIR_TENANT_RULE);

    let connection: ClusterConnection | undefined;
    const hasEks = c.eksClusterName !== undefined;
    const hasKubeconfig = c.kubeconfigContext !== undefined;
    if (hasEks === hasKubeconfig) {
        r.problem(
            "cluster",
            { eksClusterName: c.eksClusterName, kubeconfigContext: c.kubeconfigContext },
            "set exactly one of cluster.eksClusterName (EKS, token through the aws CLI) or cluster.kubeconfigContext",
        );
    } else if (hasEks) {
        const clusterName = r.string("cluster.eksClusterName", c.eksClusterName, { pattern: EKS_NAME, describe: "an EKS cluster name (1-100 letters, digits, '-', '_')" });
        const region = r.string("cluster.region", c.region ?? ambient.awsRegion, { pattern: AWS_REGION, describe: "an AWS region such as eu-west-1" });
        if (region === undefined && c.region === undefined && ambient.awsRegion === undefined) {
            r.problem("cluster.region", undefined, "is required with cluster.eksClusterName (or set aws:region)");
        }
        if (c.kubeconfigPath !== undefined) {
            r.problem("cluster.kubeconfigPath", c.kubeconfigPath, "only applies with cluster.kubeconfigContext");
        }
        if (clusterName && region) {
            connection = { kind: "eks", clusterName, region };
        }
    } else {
        const context = r.string("cluster.kubeconfigContext", c.kubeconfigContext, { pattern: /^\S+$/, describe: "a kubeconfig context name" });
        const path = r.string("cluster.kubeconfigPath", c.kubeconfigPath, { pattern: /^\S+$/, describe: "a path to a kubeconfig file" });
        if (c.region !== undefined) {
            r.problem("cluster.region", c.region, "only applies with cluster.eksClusterName");
        }
        if (context) {
            connection = { kind: "kubeconfig", context, ...(path ? { path } : {}) };
        }
    }
    const adoptExisting = r.boolean("cluster.adoptExisting", c.adoptExisting, DEFAULTS.cluster.adoptExisting);
    if (!name || !role || !mimirTenant || !connection) {
        return undefined;
    }
    return { name, role, mimirTenant, connection, adoptExisting };
}

function readGateway(r: ConfigReader, value: unknown): SharedGatewayConfig | undefined {
    if (value === undefined) {
        r.problem("gateway", value, "is required: the shared Gateway's name, namespace and listener");
        return undefined;
    }
    const g = r.object("gateway", value, GATEWAY_KEYS);
    if (!g) {
        return undefined;
    }
    const label = { pattern: DNS_LABEL, describe: "a DNS label (lowercase letters, digits, '-')", maxLength: 63 };
    const name = r.requiredString("gateway.name", g.name, { ...label, maxLength: 253 });
    const namespace = r.requiredString("gateway.namespace", g.namespace, label);
    // Gateway API listener names are section names: DNS labels.
    const listener = r.requiredString("gateway.listener", g.listener, label);
    return name && namespace && listener ? { name, namespace, listener } : undefined;
}

function readQuantities(r: ConfigReader, key: string, value: unknown, fallback: Quantities): Quantities {
    const q = r.object(key, value, ["cpu", "memory"]) ?? {};
    const rule = { pattern: QUANTITY, describe: "a Kubernetes quantity such as 100m, 1, 256Mi or 1Gi" };
    return {
        cpu: r.string(`${key}.cpu`, q.cpu, rule, fallback.cpu),
        memory: r.string(`${key}.memory`, q.memory, rule, fallback.memory),
    };
}

function readController(r: ConfigReader, value: unknown): ControllerConfig | undefined {
    const d = DEFAULTS.controller;
    const c = r.object("controller", value, CONTROLLER_KEYS);
    if (!c) {
        return undefined;
    }
    const chartVersion = r.string("controller.chartVersion", c.chartVersion, { pattern: SEMVER, describe: "an exact chart version such as 2.41.0 (no ranges)" }, d.chartVersion);
    const explicitApp = r.string("controller.appVersion", c.appVersion, { pattern: VTAG, describe: "an Argo Rollouts release tag such as v1.9.0" });
    const appVersion = explicitApp ?? KNOWN_CHART_APP_VERSIONS[chartVersion];
    if (appVersion === undefined && c.appVersion === undefined) {
        r.problem(
            "controller.appVersion",
            undefined,
            `is required with chart ${chartVersion}: set it to that chart's appVersion (known charts: ${Object.keys(KNOWN_CHART_APP_VERSIONS).join(", ")})`,
        );
    }

    const replicas = r.integer("controller.replicas", c.replicas, 2, 5, d.replicas);
    const pdbMaxUnavailable = r.integer("controller.pdbMaxUnavailable", c.pdbMaxUnavailable, 1, 4, d.pdbMaxUnavailable);
    if (pdbMaxUnavailable >= replicas) {
        r.problem("controller.pdbMaxUnavailable", c.pdbMaxUnavailable ?? pdbMaxUnavailable, `must be less than controller.replicas (${replicas}) so a drain keeps a controller running`);
    }

    const res = r.object("controller.resources", c.resources, ["requests", "limits"]) ?? {};
    const requests = readQuantities(r, "controller.resources.requests", res.requests, d.requests);
    const limits = readQuantities(r, "controller.resources.limits", res.limits, d.limits);
    for (const kind of ["cpu", "memory"] as const) {
        if (QUANTITY.test(requests[kind]) && QUANTITY.test(limits[kind]) && parseQuantity(requests[kind]) > parseQuantity(limits[kind])) {
            r.problem(`controller.resources.requests.${kind}`, requests[kind], `must not exceed controller.resources.limits.${kind} (${limits[kind]})`);
        }
    }

    const priorityClassName = r.string("controller.priorityClassName", c.priorityClassName, { pattern: DNS_LABEL, describe: "a PriorityClass name" });
    const config: ControllerConfig = {
        namespace: r.string("controller.namespace", c.namespace, { pattern: DNS_LABEL, describe: "a namespace name (DNS label)", maxLength: 63 }, d.namespace),
        namespaceLabels: r.labels("controller.namespaceLabels", c.namespaceLabels),
        chartRepository: r.string("controller.chartRepository", c.chartRepository, { pattern: CHART_REPO, describe: "an https:// or oci:// chart repository URL" }, d.chartRepository),
        chartVersion,
        appVersion: appVersion ?? "",
        crdBaseUrl: r.string("controller.crdBaseUrl", c.crdBaseUrl, { pattern: HTTPS_URL, describe: "an https:// URL without a trailing query" }, d.crdBaseUrl).replace(/\/+$/, ""),
        replicas,
        pdbMaxUnavailable,
        requests,
        limits,
        logLevel: r.string("controller.logLevel", c.logLevel, { oneOf: ["debug", "info", "warn", "error"], describe: "" }, d.logLevel) as ControllerConfig["logLevel"],
        serviceMonitor: r.boolean("controller.serviceMonitor", c.serviceMonitor, d.serviceMonitor),
        dashboard: r.boolean("controller.dashboard", c.dashboard, d.dashboard),
        ...(priorityClassName ? { priorityClassName } : {}),
    };
    return config;
}

function readPlugin(r: ConfigReader, value: unknown): PluginConfig | undefined {
    const d = DEFAULTS.plugin;
    const p = r.object("plugin", value, PLUGIN_KEYS);
    if (!p) {
        return undefined;
    }
    const version = r.string("plugin.version", p.version, { pattern: VTAG, describe: "a plugin release tag such as v0.15.0" }, d.version);
    const mode = r.string("plugin.delivery", p.delivery, { oneOf: ["download", "image"], describe: "" }, d.delivery);
    const misplaced = (keys: string[], why: string) => {
        for (const k of keys) {
            if (p[k] !== undefined) {
                r.problem(`plugin.${k}`, p[k], why);
            }
        }
    };

    let delivery: PluginDelivery | undefined;
    if (mode === "download") {
        misplaced(["repository", "digest"], "only applies with plugin.delivery: image");
        const arch = r.string("plugin.arch", p.arch, { oneOf: ["amd64", "arm64"], describe: "" }, d.arch) as "amd64" | "arm64";
        const baseUrl = r.string("plugin.baseUrl", p.baseUrl, { pattern: HTTPS_URL, describe: "an https:// URL (the controller checks the sha256 only for http(s) locations)" }, d.baseUrl);
        // No checksum file is published with the plugin's releases: without a configured sha256 the
        // controller would run whatever the URL serves (design.md §2, plugin).
        const sha256 = r.requiredString("plugin.sha256", p.sha256, {
            pattern: SHA256_HEX,
            describe: `the 64-hex sha256 of gatewayapi-plugin-linux-${arch} for ${version} (a download without a checksum is refused)`,
        });
        if (sha256) {
            delivery = { mode: "download", arch, baseUrl: baseUrl.replace(/\/+$/, ""), sha256: sha256.toLowerCase() };
        }
    } else {
        misplaced(["arch", "sha256", "baseUrl"], "only applies with plugin.delivery: download");
        const repository = r.string("plugin.repository", p.repository, { pattern: REPOSITORY, describe: "an image repository path without registry or tag" }, d.repository);
        const digest = r.requiredString("plugin.digest", p.digest, { pattern: IMAGE_DIGEST, describe: "the plugin image's digest, sha256: followed by 64 lowercase hex (tags are mutable)" });
        if (digest) {
            delivery = { mode: "image", repository, digest };
        }
    }
    const tcpRoutes = r.boolean("plugin.tcpRoutes", p.tcpRoutes, d.tcpRoutes);
    const tlsRoutes = r.boolean("plugin.tlsRoutes", p.tlsRoutes, d.tlsRoutes);
    return delivery ? { version, delivery, tcpRoutes, tlsRoutes } : undefined;
}

/** Converts a Kubernetes quantity to a number in base units, enough to compare two of them. */
export function parseQuantity(q: string): number {
    const m = /^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(q);
    if (!m) {
        throw new Error(`not a quantity: ${q}`);
    }
    const factor: Record<string, number> = {
        "": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4,
    };
    return Number(m[1]) * factor[m[2] ?? ""];
}
