import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { MimirRole } from "../mimir";
import { PART_OF, Stage, StageOptions } from "../stage";
import { MimirConfig, SharedGatewayConfig, SpokeConfig } from "./config";
import { GatewayRead, gatewaysRead, mimirReferenceGrantSpec, spokeReadEndpoint, spokeRoutes } from "./spokeRoutes";

/** The sections the gateway stage reads: the shared Gateway and, on a hub, Mimir and the spokes it routes. */
export interface GatewayStageConfig {
    stack: string;
    cluster: { role: MimirRole };
    gateway: SharedGatewayConfig;
    mimir: MimirConfig;
    spokes: SpokeConfig[];
}

/** Why a live Gateway lacks a listener the stack attaches routes to, or undefined. */
export function checkGatewayListeners(stack: string, ref: GatewayRead, live?: { listeners?: { name?: string }[] }): string | undefined {
    const names = (live?.listeners ?? []).flatMap((l) => (l.name ? [l.name] : []));
    const missing = ref.wanted.filter((w) => !names.includes(w.listener)).map((m) => `"${m.listener}" (${m.key})`);
    return missing.length === 0
        ? undefined
        : `stack "${stack}": the Gateway ${ref.namespace}/${ref.name} has no listener ${missing.join(", ")}; it has: ${names.join(", ") || "none"}`;
}

/**
 * Gateway stage (ADR-056 D4, D5, D7). The platform owns the shared Gateway, so this stage reads the
 * live object: a missing Gateway or listener fails the preview rather than a canary at run time. On
 * the hub it also declares each spoke's Mimir route.
 */
export class GatewayStage extends Stage {
    /** `<namespace>/<name>` of the shared Gateway, once the live object has been checked. */
    readonly sharedGatewayRef: pulumi.Output<string>;
    /** Hub: the spoke routes it declares, by route name. */
    readonly spokeRoutes: Record<string, k8s.apiextensions.CustomResource> = {};
    /** Hub: the read endpoint each spoke's analysis must use (spokes with `query` only). */
    readonly spokeReadEndpoints: pulumi.Output<Record<string, string>>;

    constructor(name: string, args: { config: GatewayStageConfig }, opts: StageOptions) {
        super("gateway", name, opts);
        const { stack, gateway: g, mimir } = args.config;
        const spokes = args.config.cluster.role === "hub" ? args.config.spokes : [];
        const [shared, ingest] = gatewaysRead(g, spokes, mimir).map((read, i) => this.checkedGateway(i ? "ingest-gateway" : "shared-gateway", stack, read));
        const ingested = ingest ?? shared;
        this.sharedGatewayRef = pulumi.all([shared.checked, ingested.checked]).apply(() => `${g.namespace}/${g.name}`);

        const spec = mimirReferenceGrantSpec(mimir);
        const metadata = { name: "mimir-spoke-routes", namespace: mimir.namespace, labels: PART_OF };
        const grant = { apiVersion: "gateway.networking.k8s.io/v1beta1", kind: "ReferenceGrant", metadata, spec };
        const grants = spec ? [new k8s.apiextensions.CustomResource("mimir-spoke-routes-grant", grant, this.child())] : [];
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
                    this.child({ dependsOn: [ingested.gateway, ...grants] }),
                );
            }
        }
        const endpoints = Object.fromEntries(spokes.flatMap((s) => (s.query ? [[s.name, spokeReadEndpoint(s, mimir)!]] : [])));
        // Only after the routes exist does an endpoint mean anything to a spoke.
        this.spokeReadEndpoints = pulumi.all(Object.values(this.spokeRoutes).map((r) => r.id)).apply(() => endpoints);
        this.registerOutputs({ sharedGatewayRef: this.sharedGatewayRef, spokeReadEndpoints: this.spokeReadEndpoints });
    }

    /** Reads a Gateway (naming `spec` makes the live spec an output) and fails the run when it lacks a wanted listener. */
    private checkedGateway(name: string, stack: string, ref: GatewayRead) {
        const gateway = new k8s.apiextensions.CustomResource(
            name,
            { apiVersion: "gateway.networking.k8s.io/v1", kind: "Gateway", metadata: undefined, spec: undefined },
            this.child({ id: `${ref.namespace}/${ref.name}` }),
        );
        const spec = (gateway as unknown as { spec: pulumi.Output<{ listeners?: { name?: string }[] } | undefined> }).spec;
        const checked = spec.apply((live) => {
            const problem = checkGatewayListeners(stack, ref, live);
            if (problem) throw new Error(problem);
            return true;
        });
        return { gateway, checked };
    }
}
