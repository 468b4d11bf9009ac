import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { MimirRole } from "../mimir";
import { PART_OF, Stage, StageOptions } from "../stage";
import { MimirConfig, SharedGatewayConfig, SpokeConfig } from "./config";
import { ingestListeners, mimirReferenceGrantSpec, spokeReadEndpoint, spokeRoutes } from "./spokeRoutes";

/** The sections the gateway stage reads: the shared Gateway and, on a hub, Mimir and the spokes it routes. */
export interface GatewayStageConfig {
    stack: string;
    cluster: { role: MimirRole };
    gateway: SharedGatewayConfig;
    mimir: MimirConfig;
    spokes: SpokeConfig[];
}

export interface GatewayStageArgs {
    config: GatewayStageConfig;
}

/** The part of a live Gateway this stage reads. */
export interface LiveGateway {
    spec?: { listeners?: { name?: string }[] };
}

/** The Gateway API listeners of a live Gateway, by name. */
export function listenerNames(gateway: LiveGateway): string[] {
    return (gateway.spec?.listeners ?? []).map((l) => l.name ?? "").filter((n) => n !== "");
}

/**
 * Checks that a live Gateway offers every listener the stack attaches routes to; returns the
 * reason it does not, or undefined.
 */
export function checkGatewayListeners(
    stack: string,
    ref: { name: string; namespace: string },
    wanted: { listener: string; key: string }[],
    live: LiveGateway,
): string | undefined {
    const names = listenerNames(live);
    const missing = wanted.filter((w) => !names.includes(w.listener));
    if (missing.length === 0) {
        return undefined;
    }
    const what = missing.map((m) => `"${m.listener}" (${m.key})`).join(", ");
    return `stack "${stack}": the Gateway ${ref.namespace}/${ref.name} has no listener ${what}; it has: ${names.length ? names.join(", ") : "none"}`;
}

/**
 * Gateway stage (ADR-056 D4, D5, D7). The platform owns the shared Gateway, so this stage reads
 * the live object: a missing Gateway or listener fails the preview here rather than a canary at
 * run time. On the hub it also declares each spoke's Mimir ingest route.
 */
export class GatewayStage extends Stage {
    /** The shared Gateway as it exists in the cluster. */
    readonly sharedGateway: k8s.apiextensions.CustomResource;
    /** `<namespace>/<name>` of the shared Gateway, once the live object has been checked. */
    readonly sharedGatewayRef: pulumi.Output<string>;
    /** Hub: the spoke routes it declares (ingest, or read beside the observability module's ingest route), by route name. */
    readonly spokeRoutes: Record<string, k8s.apiextensions.CustomResource> = {};
    /** Hub: the read endpoint each spoke's analysis must use (spokes with `query` only). */
    readonly spokeReadEndpoints: pulumi.Output<Record<string, string>>;

    constructor(name: string, args: GatewayStageArgs, opts: StageOptions) {
        super("gateway", name, opts);
        const cfg = args.config;
        const g = cfg.gateway;
        const mimir = cfg.mimir;
        const spokes = cfg.cluster.role === "hub" ? cfg.spokes : [];
        const ingest = mimir.ingestGateway;
        const ingestIsShared = ingest.name === g.name && ingest.namespace === g.namespace;

        const wantedOnShared = [{ listener: g.listener, key: "gateway.listener" }];
        const wantedOnIngest =
            spokes.length === 0 ? [] : ingestListeners(spokes, mimir).map((listener) => ({ listener, key: "mimir.ingestGateway / spokes[].listener" }));

        this.sharedGateway = this.readGateway("shared-gateway", g);
        const checks = [this.checked(cfg.stack, this.sharedGateway, g, ingestIsShared ? [...wantedOnShared, ...wantedOnIngest] : wantedOnShared)];
        let ingestGateway = this.sharedGateway;
        if (!ingestIsShared && spokes.length > 0) {
            ingestGateway = this.readGateway("ingest-gateway", ingest);
            checks.push(this.checked(cfg.stack, ingestGateway, ingest, wantedOnIngest));
        }
        this.sharedGatewayRef = pulumi.all(checks).apply(() => `${g.namespace}/${g.name}`);

        const grant = mimirReferenceGrantSpec(mimir);
        const grantResource = grant
            ? new k8s.apiextensions.CustomResource(
                  "mimir-spoke-routes-grant",
                  {
                      apiVersion: "gateway.networking.k8s.io/v1beta1",
                      kind: "ReferenceGrant",
                      metadata: { name: "mimir-spoke-routes", namespace: mimir.namespace, labels: PART_OF },
                      spec: grant,
                  },
                  this.child(),
              )
            : undefined;
        for (const spoke of spokes) {
            for (const route of spokeRoutes(spoke, mimir)) {
                this.spokeRoutes[route.name] = new k8s.apiextensions.CustomResource(
                    route.name,
                    {
                        apiVersion: "gateway.networking.k8s.io/v1",
                        kind: "HTTPRoute",
                        metadata: {
                            name: route.name,
                            namespace: mimir.spokeRouteNamespace,
                            labels: { ...PART_OF, "argo-rollouts-addon.platform/spoke": spoke.name },
                        },
                        spec: route.spec,
                    },
                    this.child({ dependsOn: [ingestGateway, ...(grantResource ? [grantResource] : [])] }),
                );
            }
        }
        const endpoints: Record<string, string> = {};
        for (const spoke of spokes) {
            const url = spokeReadEndpoint(spoke, mimir);
            if (url) {
                endpoints[spoke.name] = url;
            }
        }
        // Only after the routes exist does an endpoint mean anything to a spoke.
        this.spokeReadEndpoints = pulumi.all(Object.values(this.spokeRoutes).map((r) => r.id)).apply(() => endpoints);
        this.registerOutputs({ sharedGatewayRef: this.sharedGatewayRef, spokeReadEndpoints: this.spokeReadEndpoints });
    }

    /** A read, not a declaration: naming `spec` makes the live spec an output to check. */
    private readGateway(name: string, ref: { name: string; namespace: string }): k8s.apiextensions.CustomResource {
        return new k8s.apiextensions.CustomResource(
            name,
            { apiVersion: "gateway.networking.k8s.io/v1", kind: "Gateway", metadata: undefined, spec: undefined },
            this.child({ id: `${ref.namespace}/${ref.name}` }),
        );
    }

    private checked(
        stack: string,
        gateway: k8s.apiextensions.CustomResource,
        ref: { name: string; namespace: string },
        wanted: { listener: string; key: string }[],
    ): pulumi.Output<string> {
        const liveSpec = (gateway as unknown as { spec: pulumi.Output<LiveGateway["spec"]> }).spec;
        return liveSpec.apply((spec) => {
            const problem = checkGatewayListeners(stack, ref, wanted, { spec });
            if (problem) {
                throw new Error(problem);
            }
            return `${ref.namespace}/${ref.name}`;
        });
    }
}
