import { Values, defaultsOf, field, readSection } from "../config/declare";
import { ConfigReader, DNS_LABEL, HOSTNAME, MIMIR_TENANT_RULE, PROJECT, Plain, isPlainObject } from "../config/reader";
import { PROMETHEUS_API_PREFIX, inClusterMimirAddress, type MimirRole } from "../mimir";
import { CA_BUNDLE_RULE, PEM_CERTIFICATES, readSpokeCaBundle } from "./caBundle";

/**
 * The gateway stage's sections (ADR-056 D4, D5, D7, as-built W8c): `gateway` (the shared Gateway the
 * plugin's routes attach to), `mimir` (Mimir on the hub, the spoke routes, a spoke's read endpoint)
 * and `spokes` (the spokes a hub routes).
 */

/**
 * Who declares a spoke's ingest route on the hub: this program (`addon`) or the platform's
 * observability module (`observability`: the program declares only the read route beside it).
 */
export type PushRouteOwner = "addon" | "observability";
const PUSH_ROUTE_OWNERS: readonly PushRouteOwner[] = ["addon", "observability"];

/** How a spoke finds the read endpoint the hub routes for it. */
export type ReadEndpointSource = { kind: "url"; url: string } | { kind: "stack"; stack: string };

/** Mimir on the hub, as the analysis, the network policy and the spoke routes reach it (the keys are MIMIR_FIELDS'). */
export type MimirConfig = Pick<
    Values<typeof MIMIR_FIELDS>,
    "namespace" | "gatewayService" | "gatewayServicePort" | "gatewayTargetPort" | "gatewayPodLabels" | "readScheme" | "pushRouteOwner"
> & {
    spokeRouteNamespace: string;
    ingestGateway: SharedGatewayConfig;
    readEndpoint?: ReadEndpointSource;
    /** Spoke: the PEM CA certificates of the hub's read endpoint (caBundle.ts). */
    readCaBundle?: string;
};

const LABEL = { pattern: DNS_LABEL, describe: "a DNS label (lowercase letters, digits, '-')", maxLength: 63 };
const READ_URL = /^https?:\/\/[a-z0-9.-]+(:[0-9]+)?\/[A-Za-z0-9._~/-]*$/;
const STACK_NAME = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const OWNER_RULE =
    "addon (this program declares the spoke's ingest route) or observability (the observability module owns it; only the read route is declared)";

/** The `gateway` section: every key, once. */
export const GATEWAY_FIELDS = {
    name: field.string({ rule: { ...LABEL, maxLength: 253 }, required: true, doc: "the shared Gateway tenant HTTPRoutes attach to" }),
    namespace: field.string({ rule: LABEL, required: true, doc: "its namespace" }),
    // Gateway API listener names are section names: DNS labels.
    listener: field.string({ rule: LABEL, required: true, doc: "the listener (sectionName) routes attach to; must exist on the live Gateway" }),
} as const;

/** The `mimir` section: every key, once. */
export const MIMIR_FIELDS = {
    namespace: field.string({ rule: LABEL, default: "observability", doc: "namespace of Mimir on the hub" }),
    gatewayService: field.string({ rule: LABEL, default: "mimir-gateway", doc: "the mimir-distributed gateway Service (<release>-gateway)" }),
    gatewayServicePort: field.integer({ min: 1, max: 65535, default: 80, doc: "its Service port (analysis address, route backends)" }),
    gatewayTargetPort: field.integer({
        min: 1,
        max: 65535,
        default: 8080,
        doc: "its pods' port (network policy: Cilium L4 rules match the pod's port, not the Service's)",
    }),
    gatewayPodLabels: field.labels({
        default: { "app.kubernetes.io/name": "mimir", "app.kubernetes.io/component": "gateway" },
        doc: "labels of the gateway pods (at least one)",
    }),
    spokeRouteNamespace: field.string({
        rule: LABEL,
        defaultDoc: "mimir.namespace",
        doc: "namespace of the spoke routes; another one gets a ReferenceGrant to the gateway Service",
    }),
    ingestGateway: field.section({
        readBySection: true,
        defaultDoc: "the shared gateway",
        doc: "the Gateway spokes arrive on (the internal one behind the transit network)",
        fields: {
            name: field.string({ ...GATEWAY_FIELDS.name, doc: "the ingest Gateway's name" }),
            namespace: field.string({ ...GATEWAY_FIELDS.namespace, doc: "its namespace" }),
            listener: field.string({ ...GATEWAY_FIELDS.listener, doc: "the listener spoke routes attach to, unless a spoke names its own" }),
        },
    }),
    readScheme: field.oneOf(["https", "http"], { default: "https", describe: "", doc: "scheme of the spoke read endpoints the hub publishes" }),
    readEndpoint: field.string({
        rule: {
            pattern: READ_URL,
            // Mimir serves the Prometheus API under its prefix only: without it every gate query 404s.
            valid: (u) => u.replace(/\/+$/, "").endsWith(PROMETHEUS_API_PREFIX),
            describe: `an http(s) URL ending in the Prometheus API prefix ${PROMETHEUS_API_PREFIX}, e.g. https://mimir-preprod.hub.example/prometheus`,
        },
        doc: "spoke: the read URL the hub routes for it, when the hub stack is not in this backend (exactly one of this and hubStack)",
    }),
    hubStack: field.string({
        rule: { pattern: STACK_NAME, describe: "a fully qualified stack name, <org>/<project>/<stack>" },
        doc: "spoke: the hub's stack, <org>/<project>/<stack> (self-managed backends: organization/argo-rollouts-addon/hub); when it names a stack file of this project, that hub's spokes must list this cluster",
    }),
    readCaBundle: field.string({
        rule: { pattern: PEM_CERTIFICATES, describe: CA_BUNDLE_RULE },
        readBySection: true,
        doc: "spoke: the private CA certificates (PEM) of the hub's read endpoint, trusted by the controller's gates (beside its system roots) and by verify",
    }),
    pushRouteOwner: field.oneOf(PUSH_ROUTE_OWNERS, {
        default: "addon",
        describe: OWNER_RULE,
        doc: "hub: who owns the spokes' ingest (remote write) routes: addon (this program) or observability (the observability module; the program declares only the read routes beside them)",
    }),
} as const;

/** The shared Gateway the traffic-router plugin's HTTPRoutes attach to, at `listener`. */
export type SharedGatewayConfig = Values<typeof GATEWAY_FIELDS, "name" | "namespace" | "listener">;

/** The `spokes` key: the spokes a hub routes. */
export const SPOKES_FIELD = field.listReadBySection({
    describe: "a list of spokes, each with name, tenant, hostname and query",
    doc: "hub: the spokes it routes; names, tenants and hostnames unique, no tenant equal to the hub's",
    items: {
        name: field.string({ rule: { pattern: DNS_LABEL, describe: "a DNS label", maxLength: 63 }, required: true, doc: "the spoke's cluster.name" }),
        tenant: field.string({
            rule: MIMIR_TENANT_RULE,
            required: true,
            doc: "the spoke's Mimir tenant: its cluster.mimirTenant, checked against its stack file when that is in the project",
        }),
        hostname: field.string({
            rule: { pattern: HOSTNAME, describe: "a fully qualified lowercase hostname" },
            required: true,
            doc: "the spoke's hostname on the ingest Gateway",
        }),
        listener: field.string({
            rule: { pattern: DNS_LABEL, describe: "a DNS label", maxLength: 63 },
            doc: "a listener of its own on the ingest Gateway, when spokes are separated by listener",
        }),
        query: field.boolean({ default: false, doc: "opt-in read path: route Mimir's Prometheus read endpoints for the spoke's gates (W8c)" }),
        pushRouteOwner: field.oneOf(PUSH_ROUTE_OWNERS, {
            describe: OWNER_RULE,
            defaultDoc: "mimir.pushRouteOwner",
            doc: "overrides mimir.pushRouteOwner for this spoke",
        }),
    },
});

/** One spoke the hub routes; `pushRouteOwner` resolved from `mimir.pushRouteOwner`. */
export type SpokeConfig = Values<typeof SPOKES_FIELD.items, "name" | "tenant" | "hostname" | "pushRouteOwner">;

/** Every default of the `mimir` section, in one object. */
export const MIMIR_DEFAULTS = defaultsOf(MIMIR_FIELDS);

export function readGateway(r: ConfigReader, value: unknown): SharedGatewayConfig | undefined {
    if (value === undefined) {
        r.problem("gateway", value, "is required: the shared Gateway's name, namespace and listener");
        return undefined;
    }
    const g = readSection(r, "gateway", GATEWAY_FIELDS, value);
    return g?.name && g.namespace && g.listener ? { name: g.name, namespace: g.namespace, listener: g.listener } : undefined;
}

type ClusterFacts = { role?: MimirRole; name?: string; mimirTenant?: string; stack?: string };

/**
 * Reads the `mimir` and `spokes` sections, given the cluster section's role, name and tenant and the
 * shared Gateway: a hub lists spokes, a spoke names its read endpoint, every tenant is unique, and
 * spokes arrive on the shared Gateway unless `mimir.ingestGateway` names another.
 */
export function readMimirAndSpokes(
    r: ConfigReader,
    raw: Plain,
    cluster: ClusterFacts,
    shared?: SharedGatewayConfig,
): { mimir: MimirConfig; spokes: SpokeConfig[] } | undefined {
    const section = readSection(r, "mimir", MIMIR_FIELDS, raw.mimir);
    const m = section?.raw ?? {};
    const ig = m.ingestGateway === undefined ? shared : readSection(r, "mimir.ingestGateway", MIMIR_FIELDS.ingestGateway.fields, m.ingestGateway);
    const ingestGateway = ig?.name && ig.namespace && ig.listener ? { name: ig.name, namespace: ig.namespace, listener: ig.listener } : undefined;
    if (section && Object.keys(section.gatewayPodLabels).length === 0) {
        r.problem("mimir.gatewayPodLabels", m.gatewayPodLabels, "must select the Mimir gateway pods with at least one label");
    }
    const spokes = readSpokes(r, raw.spokes, cluster, section?.pushRouteOwner ?? MIMIR_DEFAULTS.pushRouteOwner);
    let readEndpoint: ReadEndpointSource | undefined;
    if (cluster.role === "spoke") {
        const { readEndpoint: url, hubStack } = section ?? {};
        const [, project, stackName] = hubStack?.split("/") ?? [];
        if ((m.readEndpoint === undefined) === (m.hubStack === undefined)) {
            r.problem(
                "mimir",
                { readEndpoint: m.readEndpoint, hubStack: m.hubStack },
                "a spoke sets exactly one of mimir.hubStack (the hub's stack, <org>/<project>/<stack>) or mimir.readEndpoint (the URL the hub routes for this spoke)",
            );
        } else if (project === PROJECT && stackName === cluster.stack) {
            r.problem(
                "mimir.hubStack",
                hubStack,
                `must name the hub's stack, not this spoke's own (${cluster.stack}): a spoke reads the read endpoint the hub routes for it`,
            );
        }
        readEndpoint = url ? { kind: "url", url: url.replace(/\/+$/, "") } : hubStack ? { kind: "stack", stack: hubStack } : undefined;
        if (raw.spokes !== undefined) r.problem("spokes", raw.spokes, "only a hub routes spokes (cluster.role is spoke)");
        if (m.pushRouteOwner !== undefined) r.problem("mimir.pushRouteOwner", m.pushRouteOwner, "only applies to a hub (spoke routes live on the hub)");
    } else {
        for (const k of ["readEndpoint", "hubStack"].filter((k) => m[k] !== undefined)) {
            r.problem(`mimir.${k}`, m[k], "only applies to a spoke (the hub reads Mimir in-cluster)");
        }
    }
    const readCaBundle = readSpokeCaBundle(
        r,
        m.readCaBundle,
        cluster.role === "spoke"
            ? { endpointUrl: readEndpoint?.kind === "url" ? readEndpoint.url : undefined }
            : { hubAddress: inClusterMimirAddress(section ?? MIMIR_DEFAULTS) },
    );
    if (!section || !ingestGateway || !spokes) return undefined;
    const { readEndpoint: _url, hubStack: _stack, ingestGateway: _ingest, readCaBundle: _bundle, ...fields } = section;
    const mimir = { ...fields, spokeRouteNamespace: section.spokeRouteNamespace ?? section.namespace, ingestGateway };
    return { mimir: { ...mimir, ...(readEndpoint ? { readEndpoint } : {}), ...(readCaBundle ? { readCaBundle } : {}) }, spokes };
}

function readSpokes(r: ConfigReader, value: unknown, cluster: ClusterFacts, defaultOwner: PushRouteOwner): SpokeConfig[] | undefined {
    if (value == null) return [];
    if (!Array.isArray(value)) {
        r.problem("spokes", value, `must be ${SPOKES_FIELD.describe}`);
        return undefined;
    }
    const spokes: SpokeConfig[] = [];
    // Who has each name, tenant and hostname so far: one tenant per cluster keeps tenants isolated.
    const seen = new Map<string, string>(cluster.mimirTenant ? [[`tenant ${cluster.mimirTenant}`, "cluster.mimirTenant (the hub's own tenant)"]] : []);
    value.forEach((item, i) => {
        const key = `spokes[${i}]`;
        const s = isPlainObject(item) ? readSection(r, key, SPOKES_FIELD.items, item) : undefined;
        if (!s) {
            r.problem(key, item, "must be an object with name, tenant, hostname and query");
            return;
        }
        if (s.name !== undefined && s.name === cluster.name) {
            r.problem(`${key}.name`, s.name, "must not be the hub's own cluster.name: a hub routes its spokes, not itself");
        }
        for (const f of ["name", "tenant", "hostname"] as const) {
            const had = seen.get(`${f} ${s[f]}`);
            if (had && s[f] !== undefined) {
                r.problem(`${key}.${f}`, s[f], `must be unique; ${had} has it already (one tenant per cluster keeps tenants isolated)`);
            }
            seen.set(`${f} ${s[f]}`, had ?? `${key}.${f}`);
        }
        if (s.name && s.tenant && s.hostname) {
            const { name, tenant, hostname, listener, query } = s;
            spokes.push({ name, tenant, hostname, ...(listener ? { listener } : {}), query, pushRouteOwner: s.pushRouteOwner ?? defaultOwner });
        }
    });
    return spokes;
}
