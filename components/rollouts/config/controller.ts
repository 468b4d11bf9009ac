import { defaultsOf, field, readField, readSection, type Values } from "../../config/declare";
import { PEOPLE_GROUP_RULE } from "../../config/reader";
import { NAME_TOTAL_LENGTH_MAX, hasRegistryHost } from "../../config/reader";
import { METADATA_NAME_LABEL, PLATFORM_NAMESPACES, POD_SECURITY_LABEL } from "../../config/reader";
import { ConfigReader, DNS_LABEL, DNS_SUBDOMAIN, HTTPS_URL, QUANTITY, StringRule, parseQuantity } from "../../config/reader";
import { CONTROLLER_RELEASES } from "../versions";
import { CHART_REPO, REGISTRY, SEMVER, VTAG, imageDigestRule } from "./patterns";

/** The `imageRegistry` and `controller` sections (ADR-056 D7): the controller chart, its image and CRDs, size and placement. */

type Quantities = { cpu: string; memory: string };
/** A namespace whose groups get the tenant operator role (tenants.ts). */
export type TenantOperatorBinding = { namespace: string; groups: string[] };

/** The section as read, with the release resolved and the resources' bounds at the top. */
export type ControllerConfig = Omit<Values<typeof CONTROLLER_FIELDS>, "appVersion" | "resources" | "tenantOperators"> & {
    /** The Argo Rollouts tag the controller image and the CRDs are both pinned to. */
    appVersion: string;
    requests: Quantities;
    limits: Quantities;
    tenantOperators: TenantOperatorBinding[];
    /** Whether the stack file names the release: unnamed, a run keeps the line the cluster runs (stacks/preflight.ts). */
    releaseFromStackFile: boolean;
};

/** Chart versions whose appVersion is known (versions.ts); another chart needs `controller.appVersion`: the CRDs' tag is never guessed. */
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

/** Room under the image name limit for the longest repository the addon pulls (the dashboard's; stacks/config.ts checks the plugin's). */
const REGISTRY_MAX_LENGTH = NAME_TOTAL_LENGTH_MAX - "argoproj/kubectl-argo-rollouts".length - 1;

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
        doc: "exact chart version; unset, a new cluster gets the default, and a run stops where the cluster runs another line (controller.imageDigest pins one release's image: docs/operations/upgrade.md)",
    }),
    appVersion: field.string({
        rule: { pattern: VTAG, describe: "an Argo Rollouts release tag such as v1.9.0" },
        defaultDoc: "the chart's appVersion (v1.9.0 for 2.41.0)",
        doc: "Argo Rollouts tag of the controller image and the CRDs, so the CRDs never drift from the controller that reads them; required for a chart the program does not know",
    }),
    // Like the plugin's: the tag is mutable, the digest names one image (docs/operations/upgrade.md moves both).
    imageDigest: field.string({
        rule: imageDigestRule("the controller image"),
        required: true,
        defaultDoc: "required",
        doc: "sha256:<64 hex> of <imageRegistry>/argoproj/argo-rollouts:<appVersion>; the chart pulls the controller by it, never by the tag alone",
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
    // Named one by one: a Rollout in flight restarts from its first step when its revision changes.
    acknowledgeInFlight: field.strings({
        rule: {
            pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
            describe: "<namespace>/<name> of a Rollout, such as shop-prod/cart",
        },
        size: { min: 0, max: 200 },
        doc: "Rollouts left paused, aborted or progressing that may get a new revision in the upgrade controller.acknowledgeNewRevisions names (it starts their rollout over); every other one in flight still refuses the move",
    }),
    tenantOperators: field.list({
        describe: "a list of at most 200 { namespace, groups } entries",
        maxItems: 200,
        doc: "tenant namespaces (once each; not the controller's, default or kube-*; never a regulated one; must exist) whose groups get argo-rollouts-addon:rollouts-operator: restart, abort, retry, promote, scale",
        items: {
            namespace: field.string({
                rule: { pattern: DNS_LABEL, describe: "a tenant namespace name (DNS label)", maxLength: 63 },
                required: true,
                doc: "the tenant namespace",
            }),
            groups: field.strings({
                rule: PEOPLE_GROUP_RULE,
                required: true,
                size: { min: 1, max: 20 },
                doc: "1-20 groups that may operate the namespace's Rollouts (blanks inside allowed); never a Kubernetes system: group (system:authenticated is every user), never * or ?",
            }),
        },
    }),
} as const;

/** Every default of the section, in one object. */
export const CONTROLLER_DEFAULTS = defaultsOf(CONTROLLER_FIELDS);

/** The registry mirror every image is pulled from (`imageRegistry`); unset, the upstream registries. */
export function readImages(r: ConfigReader, value: unknown): { registry?: string } {
    return { registry: readField(r, "imageRegistry", IMAGE_REGISTRY_FIELDS, value) as string | undefined };
}

export function readController(r: ConfigReader, value: unknown): ControllerConfig | undefined {
    const c = readSection(r, "controller", CONTROLLER_FIELDS, value);
    if (!c) return undefined;
    const { chartVersion, replicas, pdbMaxUnavailable, raw } = c;
    // The chart's image and the CRDs must be one release: a chart whose appVersion is known pins it.
    const pinned = KNOWN_CHART_APP_VERSIONS[chartVersion];
    if (c.appVersion !== undefined && pinned !== undefined && c.appVersion !== pinned) {
        r.problem(
            "controller.appVersion",
            c.appVersion,
            `must be ${pinned}, the appVersion of chart ${chartVersion} (or unset): the CRDs and the controller image would be another release than the chart's templates and RBAC`,
        );
    }
    if (pinned === undefined && c.appVersion === undefined && raw.appVersion === undefined) {
        r.problem(
            "controller.appVersion",
            undefined,
            `is required with chart ${chartVersion}: set it to that chart's appVersion (known charts: ${Object.keys(KNOWN_CHART_APP_VERSIONS).join(", ")})`,
        );
    }
    if (pdbMaxUnavailable >= replicas) {
        r.problem(
            "controller.pdbMaxUnavailable",
            raw.pdbMaxUnavailable ?? pdbMaxUnavailable,
            `must be less than controller.replicas (${replicas}) so a drain keeps a controller running`,
        );
    }
    const { requests, limits } = c.resources;
    for (const kind of ["cpu", "memory"] as const) {
        if (QUANTITY.test(requests[kind]) && QUANTITY.test(limits[kind]) && parseQuantity(requests[kind]) > parseQuantity(limits[kind])) {
            r.problem(`controller.resources.requests.${kind}`, requests[kind], `must not exceed controller.resources.limits.${kind} (${limits[kind]})`);
        }
    }
    // The namespace enforces restricted Pod Security, which the addon's pods meet; the API server owns the name label.
    const namespaceLabels = { ...c.namespaceLabels };
    for (const k of Object.keys(namespaceLabels).filter((k) => POD_SECURITY_LABEL.test(k) || k === METADATA_NAME_LABEL)) {
        r.problem(
            `controller.namespaceLabels.${k}`,
            namespaceLabels[k],
            k === METADATA_NAME_LABEL
                ? "must not be set: the API server sets it to the namespace's name on every write, so a value here is overwritten and shows as a change on every preview"
                : "must not be set: the controller namespace enforces Pod Security restricted, which the addon's pods meet; a label here would override it",
        );
        delete namespaceLabels[k];
    }
    // Tenant namespaces only, each once; a binding with no groups is not made.
    const tenantOperators: TenantOperatorBinding[] = [];
    c.tenantOperators.forEach(({ namespace, groups }, i) => {
        const key = `controller.tenantOperators[${i}].namespace`;
        if (namespace === undefined) return;
        if (namespace === c.namespace || PLATFORM_NAMESPACES.includes(namespace)) {
            r.problem(
                key,
                namespace,
                `must be a tenant namespace, not ${namespace === c.namespace ? "the controller's own (controller.namespace)" : "a platform namespace"}`,
            );
        } else if (tenantOperators.some((o) => o.namespace === namespace)) {
            r.problem(key, namespace, "must appear once: list every group of the namespace in one entry");
        } else if (groups?.length) {
            tenantOperators.push({ namespace, groups });
        }
    });
    const { resources: _resources, appVersion: _appVersion, tenantOperators: _tenantOperators, namespaceLabels: _labels, ...rest } = c;
    return {
        ...rest,
        namespaceLabels,
        appVersion: c.appVersion ?? pinned ?? "",
        crdBaseUrl: c.crdBaseUrl.replace(/\/+$/, ""),
        requests,
        limits,
        tenantOperators,
        releaseFromStackFile: raw.chartVersion !== undefined || raw.appVersion !== undefined,
    };
}
