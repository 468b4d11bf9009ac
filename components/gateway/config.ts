import { defaultsOf, field, readSection } from "../config/declare";
import { ConfigReader, DNS_LABEL, HOSTNAME, MIMIR_TENANT_RULE, PROJECT, Plain, isPlainObject } from "../config/reader";
import { PROMETHEUS_API_PREFIX, inClusterMimirAddress, type MimirRole } from "../mimir";
import { CA_BUNDLE_RULE, PEM_CERTIFICATES, readSpokeCaBundle } from "./caBundle";

/**
 * The gateway stage's configuration sections (ADR-056 D4, D5, D7 and the 2026-06-27 as-built
 * W8c): `gateway` (the shared Gateway the plugin's routes attach to) and, for the hub's spoke
 * routes, `mimir` (where Mimir runs on the hub, where the spoke routes go, and how a spoke finds
 * the read endpoint the hub routes for it) and `spokes` (the spokes the hub routes). Their types,
 * defaults and readers.
 */

/** The shared Gateway the traffic-router plugin's HTTPRoutes attach to (ADR-056 D4, D7). */
export interface SharedGatewayConfig {
    name: string;
    namespace: string;
    /** The listener (sectionName) tenant HTTPRoutes attach to; must exist on the live Gateway. */
    listener: string;
}

/** Mimir on the hub: the mimir-distributed gateway the analysis and the spoke routes reach. */
export interface MimirConfig {
    namespace: string;
    /** `<release>-gateway` of mimir-distributed. */
    gatewayService: string;
    gatewayServicePort: number;
    /** The gateway pods' port: Cilium L4 rules match the pod's port, not the Service's. */
    gatewayTargetPort: number;
    gatewayPodLabels: Record<string, string>;
    /** Namespace of the spoke-ingest HTTPRoutes; a ReferenceGrant is declared when it is not Mimir's. */
    spokeRouteNamespace: string;
    /** The Gateway spokes arrive on (the internal one behind the transit network). */
    ingestGateway: { name: string; namespace: string; listener: string };
    /** Scheme spokes use to reach their hostnames on the ingest Gateway. */
    readScheme: "https" | "http";
    /** Who owns the spokes' ingest (remote write) routes unless a spoke says otherwise. */
    pushRouteOwner: PushRouteOwner;
    /** Spoke: how it finds the read endpoint the hub routes for it (`mimir.readEndpoint` or `mimir.hubStack`). */
    readEndpoint?: ReadEndpointSource;
    /** Spoke: the CA certificates (PEM, caBundle.ts) of the hub's read endpoint, trusted by the controller and verify. */
    readCaBundle?: string;
}

/**
 * Who declares a spoke's ingest route on the hub: this program (`addon`: one route with the push
 * rule and, for a spoke that queries, the read rule) or the platform's observability module
 * (`observability`: the program declares only the read route beside it, ADR-056 as-built W8c).
 */
export type PushRouteOwner = "addon" | "observability";
export const PUSH_ROUTE_OWNERS: readonly PushRouteOwner[] = ["addon", "observability"];

/** One spoke the hub routes (hub only). */
export interface SpokeConfig {
    name: string;
    tenant: string;
    hostname: string;
    /** A listener of its own on the ingest Gateway, when spokes are separated by listener. */
    listener?: string;
    /** Opt-in read path: routes Mimir's Prometheus read endpoints (W8c `query_tenants`). */
    query: boolean;
    /** Resolved from `spokes[].pushRouteOwner`, else `mimir.pushRouteOwner`. */
    pushRouteOwner: PushRouteOwner;
}

/** How a spoke finds the read endpoint the hub routes for it (spoke only). */
export type ReadEndpointSource = { kind: "url"; url: string } | { kind: "stack"; stack: string };

/** The hub's Mimir and spoke routes, or a spoke's read endpoint: what `mimir` and `spokes` configure. */
export interface MimirRoutesConfig {
    mimir: MimirConfig;
    spokes: SpokeConfig[];
}

const LABEL = { pattern: DNS_LABEL, describe: "a DNS label (lowercase letters, digits, '-')", maxLength: 63 };
const READ_URL = /^https?:\/\/[a-z0-9.-]+(:[0-9]+)?\/[A-Za-z0-9._~/-]*$/;
const STACK_NAME = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const OWNER_RULE = {
    oneOf: [...PUSH_ROUTE_OWNERS],
    describe: "addon (this program declares the spoke's ingest route) or observability (the observability module owns it; only the read route is declared)",
};

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
            describe: `an http(s) URL ending in the Prometheus API prefix ${PROMETHEUS_API_PREFIX}, e.g. https://mimir-preprod.hub.example/prometheus`,
        },
        readBySection: true,
        doc: "spoke: the read URL the hub routes for it, when the hub stack is not in this backend (exactly one of this and hubStack)",
    }),
    hubStack: field.string({
        rule: { pattern: STACK_NAME, describe: "a fully qualified stack name, <org>/<project>/<stack>" },
        readBySection: true,
        doc: "spoke: the hub's stack, <org>/<project>/<stack> (self-managed backends: organization/argo-rollouts-addon/hub); when it names a stack file of this project, that hub's spokes must list this cluster",
    }),
    readCaBundle: field.string({
        rule: { pattern: PEM_CERTIFICATES, describe: CA_BUNDLE_RULE },
        readBySection: true,
        doc: "spoke: the private CA certificates (PEM) of the hub's read endpoint, trusted by the controller's gates (beside its system roots) and by verify",
    }),
    pushRouteOwner: field.oneOf(PUSH_ROUTE_OWNERS, {
        default: "addon",
        describe: OWNER_RULE.describe,
        doc: "hub: who owns the spokes' ingest (remote write) routes: addon (this program) or observability (the observability module; the program declares only the read routes beside them)",
    }),
} as const;

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
            describe: OWNER_RULE.describe,
            defaultDoc: "mimir.pushRouteOwner",
            doc: "overrides mimir.pushRouteOwner for this spoke",
        }),
    },
});

/** Every default of the `mimir` section, in one object. */
export const MIMIR_DEFAULTS = defaultsOf<{
    namespace: string;
    gatewayService: string;
    gatewayServicePort: number;
    gatewayTargetPort: number;
    gatewayPodLabels: Record<string, string>;
    readScheme: "https" | "http";
    pushRouteOwner: PushRouteOwner;
}>(MIMIR_FIELDS);

export const MIMIR_KEYS = Object.keys(MIMIR_FIELDS);

export function readGateway(r: ConfigReader, value: unknown): SharedGatewayConfig | undefined {
    if (value === undefined) {
        r.problem("gateway", value, "is required: the shared Gateway's name, namespace and listener");
        return undefined;
    }
    const g = readSection(r, "gateway", GATEWAY_FIELDS, value);
    return g?.name && g.namespace && g.listener ? { name: g.name, namespace: g.namespace, listener: g.listener } : undefined;
}

/**
 * Reads the `mimir` and `spokes` sections. `role` and `mimirTenant` come from the cluster section
 * and `sharedGateway` from the gateway section: a hub lists spokes, a spoke names its read
 * endpoint, every tenant must be unique, and spokes arrive on the shared Gateway unless
 * `mimir.ingestGateway` names another.
 */
export function readMimirAndSpokes(
    r: ConfigReader,
    raw: Plain,
    cluster: { role?: MimirRole; name?: string; mimirTenant?: string; stack?: string },
    sharedGateway?: { name: string; namespace: string; listener: string },
): MimirRoutesConfig | undefined {
    const section = readSection(r, "mimir", MIMIR_FIELDS, raw.mimir);
    const m = section?.raw ?? {};
    const label = LABEL;
    const namespace = section?.namespace ?? MIMIR_DEFAULTS.namespace;

    let ingestGateway = sharedGateway;
    if (m.ingestGateway !== undefined) {
        const g = r.object("mimir.ingestGateway", m.ingestGateway, ["name", "namespace", "listener"]);
        const name = r.requiredString("mimir.ingestGateway.name", g?.name, label);
        const ns = r.requiredString("mimir.ingestGateway.namespace", g?.namespace, label);
        const listener = r.requiredString("mimir.ingestGateway.listener", g?.listener, label);
        ingestGateway = name && ns && listener ? { name, namespace: ns, listener } : undefined;
    }
    const podLabels = section?.gatewayPodLabels ?? { ...MIMIR_DEFAULTS.gatewayPodLabels };
    if (Object.keys(podLabels).length === 0) {
        r.problem("mimir.gatewayPodLabels", m.gatewayPodLabels, "must select the Mimir gateway pods with at least one label");
    }
    const pushRouteOwner = section?.pushRouteOwner ?? MIMIR_DEFAULTS.pushRouteOwner;
    const mimir: MimirConfig | undefined = section &&
        ingestGateway && {
            namespace,
            gatewayService: section.gatewayService,
            gatewayServicePort: section.gatewayServicePort,
            gatewayTargetPort: section.gatewayTargetPort,
            gatewayPodLabels: podLabels,
            spokeRouteNamespace: section.spokeRouteNamespace ?? namespace,
            ingestGateway,
            readScheme: section.readScheme,
            pushRouteOwner,
        };

    const spokes = readSpokes(r, raw.spokes, cluster, pushRouteOwner);
    let readEndpoint: ReadEndpointSource | undefined;
    if (cluster.role === "spoke") {
        if ((m.readEndpoint === undefined) === (m.hubStack === undefined)) {
            r.problem(
                "mimir",
                { readEndpoint: m.readEndpoint, hubStack: m.hubStack },
                "a spoke sets exactly one of mimir.hubStack (the hub's stack, <org>/<project>/<stack>) or mimir.readEndpoint (the URL the hub routes for this spoke)",
            );
        } else if (m.readEndpoint !== undefined) {
            // Mimir serves the Prometheus API under its prefix only: without it every gate query 404s.
            const url = r.string("mimir.readEndpoint", m.readEndpoint, {
                ...MIMIR_FIELDS.readEndpoint.rule,
                valid: (u) => u.replace(/\/+$/, "").endsWith(PROMETHEUS_API_PREFIX),
            });
            readEndpoint = url ? { kind: "url", url: url.replace(/\/+$/, "") } : undefined;
        } else {
            const stack = r.string("mimir.hubStack", m.hubStack, MIMIR_FIELDS.hubStack.rule);
            const [, project, stackName] = stack?.split("/") ?? [];
            if (stack !== undefined && cluster.stack !== undefined && project === PROJECT && stackName === cluster.stack) {
                r.problem(
                    "mimir.hubStack",
                    stack,
                    `must name the hub's stack, not this spoke's own (${cluster.stack}): a spoke reads the read endpoint the hub routes for it`,
                );
            }
            readEndpoint = stack ? { kind: "stack", stack } : undefined;
        }
        if (raw.spokes !== undefined) {
            r.problem("spokes", raw.spokes, "only a hub routes spokes (cluster.role is spoke)");
        }
        if (m.pushRouteOwner !== undefined) {
            r.problem("mimir.pushRouteOwner", m.pushRouteOwner, "only applies to a hub (spoke routes live on the hub)");
        }
    } else {
        for (const k of ["readEndpoint", "hubStack"]) {
            if (m[k] !== undefined) {
                r.problem(`mimir.${k}`, m[k], "only applies to a spoke (the hub reads Mimir in-cluster)");
            }
        }
    }
    const readCaBundle = readSpokeCaBundle(
        r,
        m.readCaBundle,
        cluster.role === "spoke"
            ? { endpointUrl: readEndpoint?.kind === "url" ? readEndpoint.url : undefined }
            : { hubAddress: inClusterMimirAddress(section ?? MIMIR_DEFAULTS) },
    );

    if (!mimir || !spokes) {
        return undefined;
    }
    return { mimir: { ...mimir, ...(readEndpoint ? { readEndpoint } : {}), ...(readCaBundle ? { readCaBundle } : {}) }, spokes };
}

function readSpokes(
    r: ConfigReader,
    value: unknown,
    cluster: { mimirTenant?: string; name?: string },
    defaultOwner: PushRouteOwner,
): SpokeConfig[] | undefined {
    if (value === undefined || value === null) {
        return [];
    }
    if (!Array.isArray(value)) {
        r.problem("spokes", value, "must be a list of spokes, each with name, tenant, hostname and query");
        return undefined;
    }
    const spokes: SpokeConfig[] = [];
    const seen = { name: new Map<string, number>(), tenant: new Map<string, number>(), host: new Map<string, number>() };
    if (cluster.mimirTenant) {
        seen.tenant.set(cluster.mimirTenant, -1);
    }
    value.forEach((item, i) => {
        const key = `spokes[${i}]`;
        if (!isPlainObject(item)) {
            r.problem(key, item, "must be an object with name, tenant, hostname and query");
            return;
        }
        const s = readSection(r, key, SPOKES_FIELD.items, item);
        const { name, tenant, hostname, listener, query } = s ?? { query: false };
        const pushRouteOwner = s?.pushRouteOwner ?? defaultOwner;
        const unique = (kind: "name" | "tenant" | "host", v: string | undefined, field: string) => {
            if (v === undefined) {
                return;
            }
            const prev = seen[kind].get(v);
            if (prev !== undefined) {
                const other = prev === -1 ? "cluster.mimirTenant (the hub's own tenant)" : `spokes[${prev}].${field}`;
                r.problem(`${key}.${field}`, v, `must be unique; ${other} has it already (one tenant per cluster keeps tenants isolated)`);
            } else {
                seen[kind].set(v, i);
            }
        };
        if (name !== undefined && name === cluster.name) {
            r.problem(`${key}.name`, name, "must not be the hub's own cluster.name: a hub routes its spokes, not itself");
        }
        unique("name", name, "name");
        unique("tenant", tenant, "tenant");
        unique("host", hostname, "hostname");
        if (name && tenant && hostname) {
            spokes.push({ name, tenant, hostname, ...(listener ? { listener } : {}), query, pushRouteOwner });
        }
    });
    return spokes;
}
