import { createHash } from "crypto";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import {
    AppSpec,
    DeliveryConfig,
    DeliveryPlan,
    GateTiming,
    PREVIEW_HEADER,
    PREVIEW_HEADER_VALUE,
    PreviewGate,
    ProdClassConfig,
    StrategyOptions,
    appLabels,
    deliveryPlan,
} from "../delivery";
import { SharedGatewayConfig } from "../gateway/config";
import { OrderedComponent, PART_OF, StageOptions } from "../stage";
import { SmokeTestConfig } from "./config";
import { restrictedContainerSecurityContext } from "../argoRollouts";

/**
 * The per-cluster smoke canary (opt-in): a tiny app delivered with a prod / standard shape of the
 * strategy library on the shared Gateway, so a platform engineer can prove after `pulumi up` that
 * the gate promotes a healthy version and aborts a failing one, for either ADR-056 strategy: the
 * canary (the plugin moves HTTPRoute weights, Cilium honours them) or blue/green with the header
 * preview gate (the gate measures the preview on the load generator's header traffic and aborts a
 * bad version before the switch; a good one takes the active Service and is measured again there).
 */

export const SMOKE_APP = "rollouts-smoke";
export const SMOKE_PORT = 8080;
/** Pod-template annotation carrying the trigger's revision (smokeRevision): a new value is a new revision. */
export const SMOKE_REVISION_ANNOTATION = "argo-rollouts-addon.platform/smoke-revision";
/**
 * The demo app's error-injection variable. Half the requests fail at 50 whichever way the app
 * reads the percentage (upstream's check is inverted in some versions), far below the gate.
 */
export const FAILING_ERROR_RATE = "50";

export const SMOKE_CANARY_TYPE = "argo-rollouts-addon:smoke:SmokeCanary";

export function smokeApp(cfg: SmokeTestConfig, gateway: SharedGatewayConfig): AppSpec {
    return {
        name: SMOKE_APP,
        namespace: cfg.namespace,
        port: SMOKE_PORT,
        route: { name: SMOKE_APP, gateway, hostnames: [cfg.hostname] },
        // The smoke app has no SLO: the error-budget freeze does not apply.
        critical: true,
    };
}

/**
 * The smoke app's strategy: prod / standard of the configured shape, with this cluster's gate
 * timing and the stack's prod / standard canary steps and pause (`delivery.prod.standard`), so the
 * smoke canary proves the weights tenants get. It always promotes by itself (it proves the gate,
 * not an approval), and the error-budget freeze does not apply (it has no SLO). Blue/green gets the
 * header preview gate (the shared Gateway is internal, where the header variant is the one to use),
 * since the load generator drives the preview.
 */
export function smokeStrategyOptions(cfg: SmokeTestConfig, gate: GateTiming, standard: Pick<ProdClassConfig, "steps" | "stepPause">): StrategyOptions {
    return {
        tier: "prod",
        prodClass: "standard",
        shape: cfg.strategy,
        gate,
        ...(cfg.strategy === "canary" ? { steps: [...standard.steps], stepPause: standard.stepPause } : {}),
        ...(cfg.strategy === "blueGreen" ? { previewGate: { header: PREVIEW_HEADER } } : {}),
    };
}

/** The smoke pods run as a fixed non-root user: the demo images set none. */
const SMOKE_POD_SECURITY = { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: "RuntimeDefault" } };

/**
 * The pod-template revision of a trigger value: a new value is a new pod template, so Argo
 * Rollouts runs a real canary. It is derived from the value alone (no random state, no extra
 * provider plugin), so an earlier value names an earlier pod template again: the stable one is no
 * update at all, and ADR-056 as-built saw a return to an in-history revision fast-tracked past the
 * steps. Hence the rule of docs/operations/smoke-canary.md: never reuse a trigger value.
 */
export function smokeRevision(trigger: string): string {
    return createHash("sha256").update(`smoke-trigger:${trigger}`).digest("hex").slice(0, 8);
}

/** The smoke Rollout's pod template; `revision` changes with every trigger. */
export function smokePodTemplate(cfg: SmokeTestConfig, revision: string): Record<string, unknown> {
    return {
        metadata: { labels: appLabels({ name: SMOKE_APP }), annotations: { [SMOKE_REVISION_ANNOTATION]: revision } },
        spec: {
            securityContext: SMOKE_POD_SECURITY,
            containers: [
                {
                    name: "app",
                    image: cfg.image,
                    ports: [{ name: "http", containerPort: SMOKE_PORT, protocol: "TCP" }],
                    env: cfg.failGate ? [{ name: "ERROR_RATE", value: FAILING_ERROR_RATE }] : [],
                    readinessProbe: { httpGet: { path: "/", port: "http" }, periodSeconds: 5 },
                    resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "200m", memory: "64Mi" } },
                    securityContext: restrictedContainerSecurityContext(),
                },
            ],
        },
    };
}

/**
 * Requests per second the load generator sends at most (one, then a pause). At the first canary
 * weight the canary gets a quarter of them, and a blue/green preview half of them (every other
 * request carries the preview header): far above the gates' default `analysis.minRequests` per
 * window, so a smoke run is never Inconclusive for lack of traffic.
 */
export const SMOKE_REQUESTS_PER_SECOND = 5;
const SAFE_SHELL_WORD = /^[A-Za-z0-9][A-Za-z0-9.-]*$/;

/**
 * The load generator's loop: requests through the shared Gateway to the app's hostname, which the
 * route sends to the stable and canary Services by weight (canary) or to the active Service
 * (blue/green, which after the switch is the version the gate measures). With a header preview
 * gate every other request carries the header, so the preview's gate has test traffic too.
 */
export function loadScript(hostname: string, previewGate?: PreviewGate): string {
    const preview = previewGate && "header" in previewGate ? previewGate.header : undefined;
    for (const word of [hostname, ...(preview ? [preview] : [])]) {
        if (!SAFE_SHELL_WORD.test(word)) {
            throw new Error(`not safe in the load generator's shell loop: ${word}`);
        }
    }
    const request = (header?: string) =>
        `curl -s -o /dev/null --max-time 2${header ? ` -H '${header}: ${PREVIEW_HEADER_VALUE}'` : ""} https://${hostname}/color; sleep ${1 / SMOKE_REQUESTS_PER_SECOND}`;
    return `while true; do ${[request(), ...(preview ? [request(preview)] : [])].join("; ")}; done`;
}

/** A steady trickle of requests through the shared Gateway, so the gate has traffic to measure. */
export function loadGeneratorSpec(cfg: SmokeTestConfig, previewGate?: PreviewGate): k8s.types.input.apps.v1.DeploymentSpec {
    const labels = { "app.kubernetes.io/name": `${SMOKE_APP}-load` };
    return {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
            metadata: { labels },
            spec: {
                securityContext: SMOKE_POD_SECURITY,
                containers: [
                    {
                        name: "load",
                        image: cfg.loadImage,
                        command: ["sh", "-c", loadScript(cfg.hostname, previewGate)],
                        resources: { requests: { cpu: "10m", memory: "16Mi" }, limits: { cpu: "100m", memory: "32Mi" } },
                        securityContext: restrictedContainerSecurityContext(),
                    },
                ],
            },
        },
    };
}

/** The sections the smoke canary reads; `analysis` is the cluster's gate timing: each weight holds until the gate has measured it. */
export interface SmokeCanaryConfig {
    smokeTest: SmokeTestConfig;
    gateway: SharedGatewayConfig;
    analysis: GateTiming;
    delivery: Pick<DeliveryConfig, "prod">;
}

export interface SmokeCanaryArgs {
    config: SmokeCanaryConfig;
}

export class SmokeCanary extends OrderedComponent {
    readonly plan: DeliveryPlan;
    readonly rollout: k8s.apiextensions.CustomResource;
    readonly revision: pulumi.Output<string>;

    constructor(name: string, args: SmokeCanaryArgs, opts: StageOptions) {
        super(SMOKE_CANARY_TYPE, name, opts);
        const cfg = args.config.smokeTest;
        const app = smokeApp(cfg, args.config.gateway);
        this.plan = deliveryPlan(app, smokeStrategyOptions(cfg, args.config.analysis, args.config.delivery.prod.standard));

        const ns = new k8s.core.v1.Namespace(
            "smoke-namespace",
            { metadata: { name: cfg.namespace, labels: { ...PART_OF, "pod-security.kubernetes.io/enforce": "restricted" } } },
            this.child(),
        );
        // A new trigger value is a new pod template, so Argo Rollouts runs a real canary instead of
        // fast-tracking a rollback to a revision still in its history (ADR-056 as-built).
        this.revision = pulumi.output(smokeRevision(cfg.trigger));

        // Every object of the app lives in its namespace and goes with it (`deletedWith`): turning
        // the canary off or moving it to another namespace deletes the namespace alone, and the
        // namespace controller removes what it holds. The provider's own delete of a Rollout waits
        // on the object with kstatus (pulumi/pulumi-kubernetes provider/pkg/await/condition/deleted.go
        // at the v4.25.0 commit), which cannot read a Rollout's string status.observedGeneration
        // (sigs.k8s.io/cli-utils v0.37.2 pkg/kstatus/status/generic.go checkGeneration; argoproj/argo-rollouts
        // pkg/apis/rollouts/v1alpha1/types.go v1.9.0 RolloutStatus.ObservedGeneration) and can crash
        // the provider mid-update. Pulumi skips the delete of a resource whose `deletedWith` target
        // is deleted in the same update (pulumi/pulumi pkg/resource/deploy/step.go v3.248.0 isDeletedWith).
        const inNamespace = this.child({ dependsOn: [ns], deletedWith: ns });
        const services = this.plan.services.map(
            (s) => new k8s.core.v1.Service(`smoke-${s.metadata.name}`, { metadata: s.metadata, spec: s.spec }, inNamespace),
        );
        const route = this.plan.httpRoute!;
        const httpRoute = new k8s.apiextensions.CustomResource(
            "smoke-route",
            { apiVersion: route.apiVersion, kind: route.kind, metadata: route.metadata, spec: route.spec },
            this.child({ dependsOn: [ns, ...services], deletedWith: ns }),
        );
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
            this.child({ dependsOn: [httpRoute, ...services], deletedWith: ns }),
        );
        new k8s.apps.v1.Deployment(
            "smoke-load",
            { metadata: { name: `${SMOKE_APP}-load`, namespace: cfg.namespace, labels: PART_OF }, spec: loadGeneratorSpec(cfg, this.plan.previewGate) },
            this.child({ dependsOn: [this.rollout], deletedWith: ns }),
        );
        this.registerOutputs({ revision: this.revision });
    }
}
