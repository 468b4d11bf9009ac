import { defaultsOf, field, readField, readSection } from "../../config/declare";
import { ConfigReader, DNS_LABEL, DNS_SUBDOMAIN, HTTPS_URL, QUANTITY, StringRule, parseQuantity } from "../../config/reader";
import { METADATA_NAME_LABEL, NAME_TOTAL_LENGTH_MAX, PEOPLE_GROUP_RULE, PLATFORM_NAMESPACES, POD_SECURITY_LABEL, hasRegistryHost } from "../../config/reader";
import { TenantOperatorBinding, readTenantOperators } from "../tenants";
import { SEMVER, VTAG, CHART_REPO, REGISTRY } from "./patterns";
import { CONTROLLER_RELEASES } from "../versions";

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
    /**
     * Whether the stack file names the release (`chartVersion` or `appVersion`). Unnamed, a run
     * keeps the line the cluster runs (stacks/preflight.ts); the default is for a new cluster.
     */
    releaseFromStackFile: boolean;
    /**
     * The controller line whose move across the pod-template-hash boundary the platform accepts,
     * knowing that Rollouts get a new revision (versions.ts, docs/operations/upgrade.md).
     */
    acknowledgeNewRevisions?: string;
}

/**
 * Chart versions whose appVersion is known: the version table's (versions.ts). A chart not listed
 * here needs `controller.appVersion`, because the CRDs are pinned to the controller's version and
 * must not be guessed.
 */
export const KNOWN_CHART_APP_VERSIONS: Readonly<Record<string, string>> = Object.fromEntries(CONTROLLER_RELEASES.map((r) => [r.chartVersion, r.appVersion]));

const QTY: StringRule = { pattern: QUANTITY, describe: "a Kubernetes quantity such as 100m, 1, 256Mi or 1Gi" };
const quantities = (doc: string, cpu: string, memory: string) =>
    field.section({
        doc,
        fields: {
            cpu: field.string({ rule: QTY, default: cpu, doc: "cpu quantity" }),
            memory: field.string({ rule: QTY, default: memory, doc: "memory quantity" }),
        },
    });

/**
 * The longest repository the addon pulls under imageRegistry (the dashboard's
 * argoproj/kubectl-argo-rollouts; the plugin's repository is checked with it, stacks/config.ts):
 * the registry leaves room for it within the image name limit.
 */
export const LONGEST_ADDON_REPOSITORY = "argoproj/kubectl-argo-rollouts";
export const REGISTRY_MAX_LENGTH = NAME_TOTAL_LENGTH_MAX - LONGEST_ADDON_REPOSITORY.length - 1;

/** The `imageRegistry` key: one string, no section. */
export const IMAGE_REGISTRY_FIELDS = field.string({
    rule: {
        pattern: REGISTRY,
        // Without a host part the runtime pulls from Docker Hub (../../config/images.ts).
        valid: hasRegistryHost,
        maxLength: REGISTRY_MAX_LENGTH,
        describe: `a registry host (with a '.' or ':', or localhost: otherwise the runtime reads it as a Docker Hub namespace) with an optional port and path, e.g. registry.example.com/mirror (no scheme, no trailing slash), at most ${REGISTRY_MAX_LENGTH} characters so every image name under it stays within ${NAME_TOTAL_LENGTH_MAX}`,
    },
    defaultDoc: "the upstream registries",
    doc: "registry mirror every image of the addon is pulled from (clusters admit only the mirror); unset suits only clusters without a registry policy",
});

/** The `controller` section: every key, once. */
export const CONTROLLER_FIELDS = {
    namespace: field.string({
        rule: {
            pattern: DNS_LABEL,
            valid: (n) => !PLATFORM_NAMESPACES.includes(n),
            describe: `a namespace name (DNS label) of the addon's own, not one of Kubernetes' (${PLATFORM_NAMESPACES.join(", ")})`,
            maxLength: 63,
        },
        default: "argo-rollouts",
        doc: "namespace of the controller, created by the addon: never kube-*, nor the namespace of the Gateway, Mimir, ArgoCD or the resolver this stack names",
    }),
    namespaceLabels: field.labels({
        doc: "extra labels for that namespace, merged over the defaults (restricted Pod Security, app.kubernetes.io/part-of); never a Pod Security label nor kubernetes.io/metadata.name (the API server owns it)",
    }),
    chartRepository: field.string({
        rule: { pattern: CHART_REPO, describe: "an https:// or oci:// chart repository URL" },
        default: "https://argoproj.github.io/argo-helm",
        doc: "Helm repository (https://) or OCI registry path (oci://) holding argo-rollouts",
    }),
    chartVersion: field.string({
        rule: { pattern: SEMVER, describe: "an exact chart version such as 2.41.0 (no ranges)" },
        default: "2.41.0",
        doc: "exact chart version; unset, a cluster that runs a controller keeps the release of its line (docs/operations/upgrade.md), a new one gets the default",
    }),
    appVersion: field.string({
        rule: { pattern: VTAG, describe: "an Argo Rollouts release tag such as v1.9.0" },
        defaultDoc: "the chart's appVersion (v1.9.0 for 2.41.0)",
        doc: "Argo Rollouts tag of the controller image and the CRDs, so the CRDs never drift from the controller that reads them; required for a chart the program does not know",
    }),
    crdBaseUrl: field.string({
        rule: { pattern: HTTPS_URL, describe: "an https:// URL without a trailing query" },
        default: "https://raw.githubusercontent.com/argoproj/argo-rollouts",
        doc: "where <appVersion>/manifests/crds/*.yaml are read from (point it at a mirror of the source tree)",
    }),
    // Two replicas: the controller runs leader election, so one is active and one is warm.
    replicas: field.integer({ min: 2, max: 5, default: 2, doc: "controller replicas (leader election: one active, the rest warm)" }),
    pdbMaxUnavailable: field.integer({
        min: 1,
        max: 4,
        default: 1,
        doc: "maxUnavailable of the controller's PodDisruptionBudget, less than replicas (the chart renders minAvailable: 0 otherwise)",
    }),
    resources: field.section({
        doc: "the controller container's resources",
        fields: {
            requests: quantities("requests, not above the limits", "100m", "256Mi"),
            limits: quantities("limits of the controller container", "1", "512Mi"),
        },
    }),
    logLevel: field.oneOf(["debug", "info", "warn", "error"], { default: "info", doc: "controller log level (JSON logs)" }),
    serviceMonitor: field.boolean({ default: false, doc: "declare a Prometheus Operator ServiceMonitor for the metrics Service" }),
    dashboard: field.boolean({ default: false, doc: "deploy the dashboard; it is always read-only" }),
    // PriorityClass names are DNS subdomains (kubernetes pkg/apis/scheduling/validation/validation.go
    // v1.34.0 `ValidatePriorityClass`: `apimachineryvalidation.NameIsDNSSubdomain`): dots allowed.
    priorityClassName: field.string({
        rule: { pattern: DNS_SUBDOMAIN, maxLength: 253, describe: "a PriorityClass name (DNS subdomain: lowercase letters, digits, '-', '.', at most 253)" },
        defaultDoc: "none",
        doc: "PriorityClass of the controller pods (dots allowed)",
    }),
    // Never a default: every Rollout restarting is a decision someone takes for one upgrade.
    acknowledgeNewRevisions: field.string({
        rule: { pattern: /^\d+\.\d+$/, describe: "a controller line such as 1.9" },
        defaultDoc: "none",
        doc: "the controller line (e.g. 1.9) of an upgrade across the pod-template-hash boundary, accepting that Rollouts get a new revision (docs/operations/upgrade.md); refused while a Rollout is paused or progressing",
    }),
    tenantOperators: field.listReadBySection({
        describe: "a list of at most 200 { namespace, groups } entries",
        doc: "tenant namespaces (once each; not the controller's, default or kube-*; never a regulated one; must exist) whose groups get argo-rollouts-addon:rollouts-operator: restart, abort, retry, promote, scale",
        items: {
            namespace: field.string({
                rule: { pattern: DNS_LABEL, describe: "a tenant namespace name (DNS label)", maxLength: 63 },
                required: true,
                doc: "the tenant namespace",
            }),
            groups: field.strings({
                rule: PEOPLE_GROUP_RULE,
                size: { min: 1, max: 20 },
                doc: "1-20 groups that may operate the namespace's Rollouts (blanks inside allowed); never a Kubernetes system: group (system:authenticated is every user), never * or ?",
            }),
        },
    }),
} as const;

/** Every default of the section, in one object. */
export const CONTROLLER_DEFAULTS = defaultsOf<{
    namespace: string;
    chartRepository: string;
    chartVersion: string;
    crdBaseUrl: string;
    replicas: number;
    pdbMaxUnavailable: number;
    resources: { requests: Quantities; limits: Quantities };
    logLevel: ControllerConfig["logLevel"];
    serviceMonitor: boolean;
    dashboard: boolean;
}>(CONTROLLER_FIELDS);

/** The registry mirror every image is pulled from (`imageRegistry`). */
export function readImages(r: ConfigReader, value: unknown): ImagesConfig {
    return { registry: readField(r, "imageRegistry", IMAGE_REGISTRY_FIELDS, value) as string | undefined };
}

/**
 * The platform's extra namespace labels, never a Pod Security one: the namespace enforces
 * restricted because every container of the addon runs restricted, and a label from config would
 * override it (the stage merges these over its own).
 */
function platformLabels(r: ConfigReader, labels: Record<string, string>): Record<string, string> {
    for (const k of Object.keys(labels).filter((k) => POD_SECURITY_LABEL.test(k))) {
        r.problem(
            `controller.namespaceLabels.${k}`,
            labels[k],
            "must not be set: the controller namespace enforces Pod Security restricted, which the addon's pods meet; a label here would override it",
        );
        delete labels[k];
    }
    if (METADATA_NAME_LABEL in labels) {
        r.problem(
            `controller.namespaceLabels.${METADATA_NAME_LABEL}`,
            labels[METADATA_NAME_LABEL],
            "must not be set: the API server sets it to the namespace's name on every write, so a value here is overwritten and shows as a change on every preview",
        );
        delete labels[METADATA_NAME_LABEL];
    }
    return labels;
}

export function readController(r: ConfigReader, value: unknown): ControllerConfig | undefined {
    const c = readSection(r, "controller", CONTROLLER_FIELDS, value);
    if (!c) {
        return undefined;
    }
    const { chartVersion, replicas, pdbMaxUnavailable } = c;
    const appVersion = c.appVersion ?? KNOWN_CHART_APP_VERSIONS[chartVersion];
    // The chart's image and the CRDs must be one release: a chart whose appVersion is known pins it.
    const pinned = KNOWN_CHART_APP_VERSIONS[chartVersion];
    if (c.appVersion !== undefined && pinned !== undefined && c.appVersion !== pinned) {
        r.problem(
            "controller.appVersion",
            c.appVersion,
            `must be ${pinned}, the appVersion of chart ${chartVersion} (or unset): the CRDs and the controller image would be another release than the chart's templates and RBAC`,
        );
    }
    if (appVersion === undefined && c.raw.appVersion === undefined) {
        r.problem(
            "controller.appVersion",
            undefined,
            `is required with chart ${chartVersion}: set it to that chart's appVersion (known charts: ${Object.keys(KNOWN_CHART_APP_VERSIONS).join(", ")})`,
        );
    }
    if (pdbMaxUnavailable >= replicas) {
        r.problem(
            "controller.pdbMaxUnavailable",
            c.raw.pdbMaxUnavailable ?? pdbMaxUnavailable,
            `must be less than controller.replicas (${replicas}) so a drain keeps a controller running`,
        );
    }
    const { requests, limits } = c.resources;
    for (const kind of ["cpu", "memory"] as const) {
        if (QUANTITY.test(requests[kind]) && QUANTITY.test(limits[kind]) && parseQuantity(requests[kind]) > parseQuantity(limits[kind])) {
            r.problem(`controller.resources.requests.${kind}`, requests[kind], `must not exceed controller.resources.limits.${kind} (${limits[kind]})`);
        }
    }
    return {
        namespace: c.namespace,
        namespaceLabels: platformLabels(r, c.namespaceLabels),
        chartRepository: c.chartRepository,
        chartVersion,
        appVersion: appVersion ?? "",
        crdBaseUrl: c.crdBaseUrl.replace(/\/+$/, ""),
        replicas,
        pdbMaxUnavailable,
        requests,
        limits,
        logLevel: c.logLevel,
        serviceMonitor: c.serviceMonitor,
        dashboard: c.dashboard,
        ...(c.priorityClassName ? { priorityClassName: c.priorityClassName } : {}),
        tenantOperators: readTenantOperators(r, c.raw.tenantOperators, c.namespace, PLATFORM_NAMESPACES),
        releaseFromStackFile: c.raw.chartVersion !== undefined || c.raw.appVersion !== undefined,
        ...(c.acknowledgeNewRevisions ? { acknowledgeNewRevisions: c.acknowledgeNewRevisions } : {}),
    };
}
