import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { SharedGatewayConfig } from "../config";
import { Stage, StageOptions } from "../stage";

export interface GatewayStageArgs {
    stack: string;
    gateway: SharedGatewayConfig;
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
 * Checks that the live shared Gateway offers the listener tenant HTTPRoutes attach to; returns
 * the reason it does not, or undefined.
 */
export function checkSharedGateway(stack: string, cfg: SharedGatewayConfig, live: LiveGateway): string | undefined {
    const names = listenerNames(live);
    if (names.includes(cfg.listener)) {
        return undefined;
    }
    return (
        `stack "${stack}": the shared Gateway ${cfg.namespace}/${cfg.name} has no listener "${cfg.listener}" ` +
        `(gateway.listener); it has: ${names.length ? names.join(", ") : "none"}`
    );
}

/**
 * Gateway stage (ADR-056 D4, D7): the shared Gateway the traffic-router plugin's HTTPRoutes
 * attach to. The platform owns the Gateway, so this stage reads the live object: a missing
 * Gateway or listener fails the preview here rather than a canary at run time.
 */
export class GatewayStage extends Stage {
    /** The shared Gateway as it exists in the cluster. */
    readonly sharedGateway: k8s.apiextensions.CustomResource;
    /** `<namespace>/<name>` of the shared Gateway, once the live object has been checked. */
    readonly sharedGatewayRef: pulumi.Output<string>;

    constructor(name: string, args: GatewayStageArgs, opts: StageOptions) {
        super("gateway", name, opts);
        const g = args.gateway;
        // A read, not a declaration: naming `spec` makes the live spec an output to check.
        this.sharedGateway = new k8s.apiextensions.CustomResource(
            "shared-gateway",
            { apiVersion: "gateway.networking.k8s.io/v1", kind: "Gateway", metadata: undefined, spec: undefined },
            this.child({ id: `${g.namespace}/${g.name}` }),
        );
        const liveSpec = (this.sharedGateway as unknown as { spec: pulumi.Output<LiveGateway["spec"]> }).spec;
        this.sharedGatewayRef = liveSpec.apply((spec) => {
            const problem = checkSharedGateway(args.stack, g, { spec });
            if (problem) {
                throw new Error(problem);
            }
            return `${g.namespace}/${g.name}`;
        });
        this.registerOutputs({ sharedGatewayRef: this.sharedGatewayRef });
    }
}
