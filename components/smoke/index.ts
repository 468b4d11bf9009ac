import { createHash } from "crypto";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { restrictedContainerSecurityContext } from "../argoRollouts";
import {
    AppSpec,
    DeliveryConfig,
    DeliveryPlan,
    GateTiming,
    PREVIEW_HEADER,
    PREVIEW_HEADER_VALUE,
    PreviewGate,
    StrategyOptions,
    appLabels,
    deliveryPlan,
} from "../delivery";
import { SharedGatewayConfig } from "../gateway/config";
import { OrderedComponent, PART_OF, StageOptions } from "../stage";
import { SmokeTestConfig } from "./config";

/**
 * The per-cluster smoke canary (opt-in, ADR-056 Phase 3): a tiny app delivered with a prod /
 * standard shape of the strategy library on the shared Gateway, so a platform engineer can prove
 * after `pulumi up` that the gate promotes a healthy version and aborts a failing one: the canary (the
 * plugin moves the route's weights) or blue/green with the header preview gate (the load generator's
 * header traffic is measured on the preview before the switch).
 */
export const SMOKE_APP = "rollouts-smoke";
const SMOKE_PORT = 8080;
/** Pod-template annotation carrying the trigger's revision (smokeRevision). */
export const SMOKE_REVISION_ANNOTATION = "argo-rollouts-addon.platform/smoke-revision";
/** The demo app's error rate: half the requests fail whichever way the app reads it (upstream's check is inverted in some versions). */
export const FAILING_ERROR_RATE = "50";
export const SMOKE_CANARY_TYPE = "argo-rollouts-addon:smoke:SmokeCanary";

/** The smoke app: critical, since it has no SLO and the error-budget freeze does not apply. */
export function smokeApp(cfg: SmokeTestConfig, gateway: SharedGatewayConfig): AppSpec {
    return { name: SMOKE_APP, namespace: cfg.namespace, port: SMOKE_PORT, route: { name: SMOKE_APP, gateway, hostnames: [cfg.hostname] }, critical: true };
}

/**
 * Prod / standard of the configured shape, with this cluster's gate timing and the stack's prod /
 * standard steps and pause, so it proves the weights tenants get. It always promotes by itself (it
 * proves the gate, not an approval); blue/green gets the header preview gate (the shared Gateway is
 * internal), since the load generator drives the preview.
 */
export function smokeStrategyOptions(
    cfg: SmokeTestConfig,
    gate: GateTiming,
    standard: Pick<DeliveryConfig["prod"]["standard"], "steps" | "stepPause">,
): StrategyOptions {
    return {
        tier: "prod",
        prodClass: "standard",
        shape: cfg.strategy,
        gate,
        ...(cfg.strategy === "canary" ? { steps: [...standard.steps], stepPause: standard.stepPause } : { previewGate: { header: PREVIEW_HEADER } }),
    };
}

/** The smoke pods run as a fixed non-root user: the demo images set none. */
const SMOKE_POD_SECURITY = { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: "RuntimeDefault" } };

/**
 * The pod-template revision of a trigger value, from the value alone (no random state), so a new
 * value is a real canary and an earlier one names an earlier template again: ADR-056 as-built saw a
 * return to an in-history revision fast-tracked past the steps, hence "never reuse a trigger value"
 * (docs/operations/smoke-canary.md).
 */
export const smokeRevision = (trigger: string): string => createHash("sha256").update(`smoke-trigger:${trigger}`).digest("hex").slice(0, 8);

const container = (name: string, image: string, spec: Record<string, unknown>, limits: { cpu: string; memory: string }, memory: string) => ({
    name,
    image,
    ...spec,
    resources: { requests: { cpu: "10m", memory }, limits },
    securityContext: restrictedContainerSecurityContext(),
});

/** The smoke Rollout's pod template; `revision` changes with every trigger. */
export function smokePodTemplate(cfg: SmokeTestConfig, revision: string): Record<string, unknown> {
    const app = {
        ports: [{ name: "http", containerPort: SMOKE_PORT, protocol: "TCP" }],
        env: cfg.failGate ? [{ name: "ERROR_RATE", value: FAILING_ERROR_RATE }] : [],
        readinessProbe: { httpGet: { path: "/", port: "http" }, periodSeconds: 5 },
    };
    return {
        metadata: { labels: appLabels({ name: SMOKE_APP }), annotations: { [SMOKE_REVISION_ANNOTATION]: revision } },
        spec: { securityContext: SMOKE_POD_SECURITY, containers: [container("app", cfg.image, app, { cpu: "200m", memory: "64Mi" }, "32Mi")] },
    };
}

/**
 * Requests per second the load generator sends at most: at the first canary weight the canary gets
 * a quarter of them, a blue/green preview half (every other one carries the header), far above the
 * gates' default `analysis.minRequests` per window.
 */
export const SMOKE_REQUESTS_PER_SECOND = 5;

/**
 * The load generator's loop: requests through the shared Gateway to the app's hostname (the route
 * splits them by weight, or sends them to the active Service), and with a header preview gate every
 * other one with the header, so the preview's gate has test traffic too.
 */
export function loadScript(hostname: string, previewGate?: PreviewGate): string {
    const preview = previewGate && "header" in previewGate ? previewGate.header : undefined;
    for (const word of [hostname, ...(preview ? [preview] : [])].filter((w) => !/^[A-Za-z0-9][A-Za-z0-9.-]*$/.test(w))) {
        throw new Error(`not safe in the load generator's shell loop: ${word}`);
    }
    const request = (header?: string) =>
        `curl -s -o /dev/null --max-time 2${header ? ` -H '${header}: ${PREVIEW_HEADER_VALUE}'` : ""} https://${hostname}/color; sleep ${1 / SMOKE_REQUESTS_PER_SECOND}`;
    return `while true; do ${[request(), ...(preview ? [request(preview)] : [])].join("; ")}; done`;
}

/** The sections the smoke canary reads; `analysis` is the cluster's gate timing: each weight holds until the gate has measured it. */
export interface SmokeCanaryConfig {
    smokeTest: SmokeTestConfig;
    gateway: SharedGatewayConfig;
    analysis: GateTiming;
    delivery: Pick<DeliveryConfig, "prod">;
}

export class SmokeCanary extends OrderedComponent {
    readonly plan: DeliveryPlan;
    readonly rollout: k8s.apiextensions.CustomResource;
    readonly revision: pulumi.Output<string>;

    constructor(name: string, args: { config: SmokeCanaryConfig }, opts: StageOptions) {
        super(SMOKE_CANARY_TYPE, name, opts);
        const cfg = args.config.smokeTest;
        const app = smokeApp(cfg, args.config.gateway);
        this.plan = deliveryPlan(app, smokeStrategyOptions(cfg, args.config.analysis, args.config.delivery.prod.standard));
        const ns = new k8s.core.v1.Namespace(
            "smoke-namespace",
            { metadata: { name: cfg.namespace, labels: { ...PART_OF, "pod-security.kubernetes.io/enforce": "restricted" } } },
            this.child(),
        );
        this.revision = pulumi.output(smokeRevision(cfg.trigger));

        // Every object goes with its namespace (`deletedWith`): turning the canary off deletes the namespace alone. The
        // provider's own delete of a Rollout waits with kstatus, which cannot read a Rollout's string
        // status.observedGeneration (sigs.k8s.io/cli-utils v0.37.2 generic.go checkGeneration) and can crash the
        // provider; Pulumi skips the delete of a resource whose `deletedWith` target goes in the same update
        // (pulumi/pulumi v3.248.0 pkg/resource/deploy/step.go isDeletedWith).
        const after = (...dependsOn: pulumi.Resource[]) => this.child({ dependsOn, deletedWith: ns });
        const services = this.plan.services.map((s) => new k8s.core.v1.Service(`smoke-${s.metadata.name}`, { metadata: s.metadata, spec: s.spec }, after(ns)));
        const route = this.plan.httpRoute!;
        const httpRoute = new k8s.apiextensions.CustomResource("smoke-route", { ...route }, after(ns, ...services));
        this.rollout = new k8s.apiextensions.CustomResource(
            "smoke-rollout",
            {
                apiVersion: "argoproj.io/v1alpha1",
                kind: "Rollout",
                metadata: { name: SMOKE_APP, namespace: cfg.namespace, labels: appLabels(app) },
                spec: {
                    replicas: cfg.replicas,
                    revisionHistoryLimit: 3,
                    selector: { matchLabels: appLabels(app) },
                    template: this.revision.apply((rev) => smokePodTemplate(cfg, rev)),
                    strategy: this.plan.strategy,
                },
            },
            after(httpRoute, ...services),
        );

        const labels = { "app.kubernetes.io/name": `${SMOKE_APP}-load` };
        const command = ["sh", "-c", loadScript(cfg.hostname, this.plan.previewGate)];
        const pod = {
            securityContext: SMOKE_POD_SECURITY,
            containers: [container("load", cfg.loadImage, { command }, { cpu: "100m", memory: "32Mi" }, "16Mi")],
        };
        const spec = { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: pod } };
        new k8s.apps.v1.Deployment(
            "smoke-load",
            { metadata: { name: `${SMOKE_APP}-load`, namespace: cfg.namespace, labels: PART_OF }, spec },
            after(this.rollout),
        );
        this.registerOutputs({ revision: this.revision });
    }
}
