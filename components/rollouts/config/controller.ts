import { ConfigReader, DNS_LABEL, HTTPS_URL, QUANTITY, parseQuantity } from "../../config/reader";
import { PLATFORM_NAMESPACES, POD_SECURITY_LABEL } from "../../config/namespaces";
import { TenantOperatorBinding, readTenantOperators } from "../tenants";
import { SEMVER, VTAG, CHART_REPO, REGISTRY } from "./patterns";

/** The `imageRegistry` and `controller` sections (ADR-056 D7): the controller chart, its image and CRDs, size and placement. */

export interface ImagesConfig {
    /**
     * The registry mirror every image is pulled from (clusters admit only the mirror). Unset means
     * the upstream registries, which only suits clusters without a registry policy.
     */
    registry?: string;
}

export interface Quantities {
    cpu: string;
    memory: string;
}

export interface ControllerConfig {
    namespace: string;
    /** Extra namespace labels the platform's admission layer expects (merged over the defaults). */
    namespaceLabels: Record<string, string>;
    chartRepository: string;
    chartVersion: string;
    /**
     * The Argo Rollouts version the controller image and the CRDs are both pinned to, so the
     * CRDs can never drift from the controller that reads them.
     */
    appVersion: string;
    /** Base URL of the Argo Rollouts source tree the CRD manifests are read from, per tag. */
    crdBaseUrl: string;
    replicas: number;
    /** Integer budget for the controller's PodDisruptionBudget (the chart renders minAvailable: 0 otherwise). */
    pdbMaxUnavailable: number;
    requests: Quantities;
    limits: Quantities;
    logLevel: "debug" | "info" | "warn" | "error";
    serviceMonitor: boolean;
    dashboard: boolean;
    priorityClassName?: string;
    /** Namespaces whose groups may restart, abort, retry, promote and scale Rollouts (tenants.ts). */
    tenantOperators: TenantOperatorBinding[];
}

/**
 * Chart versions whose appVersion is known. A chart not listed here needs `controller.appVersion`,
 * because the CRDs are pinned to the controller's version and must not be guessed.
 * Source: argoproj/argo-helm charts/argo-rollouts Chart.yaml (2.41.0 -> appVersion v1.9.0).
 */
export const KNOWN_CHART_APP_VERSIONS: Readonly<Record<string, string>> = {
    "2.41.0": "v1.9.0",
};

/**
 * Every default of these sections, one object per section; the README's config reference follows
 * them.
 */
export const CONTROLLER_DEFAULTS = {
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
} as const;

/** Namespaces the cluster itself owns: no tenant's. */

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
    "tenantOperators",
];

/** The registry mirror every image is pulled from (`imageRegistry`). */
export function readImages(r: ConfigReader, value: unknown): ImagesConfig {
    const registry = r.string("imageRegistry", value, {
        pattern: REGISTRY,
        describe: "a registry host with an optional port and path, e.g. registry.example.com/mirror (no scheme, no trailing slash)",
    });
    return { registry };
}

function readQuantities(r: ConfigReader, key: string, value: unknown, fallback: Quantities): Quantities {
    const q = r.object(key, value, ["cpu", "memory"]) ?? {};
    const rule = { pattern: QUANTITY, describe: "a Kubernetes quantity such as 100m, 1, 256Mi or 1Gi" };
    return {
        cpu: r.string(`${key}.cpu`, q.cpu, rule, fallback.cpu),
        memory: r.string(`${key}.memory`, q.memory, rule, fallback.memory),
    };
}

/**
 * The platform's extra namespace labels, never a Pod Security one: the namespace enforces
 * restricted because every container of the addon runs restricted, and a label from config would
 * override it (the stage merges these over its own).
 */
function platformLabels(r: ConfigReader, value: unknown): Record<string, string> {
    const labels = r.labels("controller.namespaceLabels", value);
    for (const k of Object.keys(labels).filter((k) => POD_SECURITY_LABEL.test(k))) {
        r.problem(`controller.namespaceLabels.${k}`, labels[k], "must not be set: the controller namespace enforces Pod Security restricted, which the addon's pods meet; a label here would override it");
        delete labels[k];
    }
    return labels;
}

export function readController(r: ConfigReader, value: unknown): ControllerConfig | undefined {
    const d = CONTROLLER_DEFAULTS;
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
    const namespace = r.string(
        "controller.namespace",
        c.namespace,
        { pattern: DNS_LABEL, valid: (n) => !PLATFORM_NAMESPACES.includes(n), describe: `a namespace name (DNS label) of the addon's own, not one of Kubernetes' (${PLATFORM_NAMESPACES.join(", ")})`, maxLength: 63 },
        d.namespace,
    );
    const config: ControllerConfig = {
        namespace,
        namespaceLabels: platformLabels(r, c.namespaceLabels),
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
        tenantOperators: readTenantOperators(r, c.tenantOperators, namespace, PLATFORM_NAMESPACES),
    };
    return config;
}
