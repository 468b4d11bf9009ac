/**
 * The strategy library's vocabulary (ADR-056 D3): the tiers, classes and shapes the stack's
 * `delivery` section is keyed by, what an app and its options are, and the Rollout strategies.
 */
import type { AnalysisConfig } from "../rollouts/config";

export type Tier = "dev" | "test" | "preprod" | "prod";
/** The tiers below prod: the trivial auto-promoting canary. */
export type LowerTier = Exclude<Tier, "prod">;
/** How strictly a prod app is gated: standard (metric gate) or regulated (+ human approval). */
export type ProdClass = "standard" | "regulated";
export type Shape = "canary" | "blueGreen";
export const TIERS: readonly Tier[] = ["dev", "test", "preprod", "prod"];
export const LOWER_TIERS: readonly LowerTier[] = ["dev", "test", "preprod"];
export const PROD_CLASSES: readonly ProdClass[] = ["standard", "regulated"];
export const SHAPES: readonly Shape[] = ["canary", "blueGreen"];

/** The platform's preview header (what the smoke canary sends), and the value its rule matches exactly. */
export const PREVIEW_HEADER = "x-rollouts-preview";
export const PREVIEW_HEADER_VALUE = "true";
/** A subset of Gateway API's HeaderName, safe to pass to curl or a test tool as is. */
export const HEADER_NAME = { pattern: /^[A-Za-z0-9][A-Za-z0-9-]{0,255}$/, describe: "an HTTP header name of letters, digits and '-' (at most 256)" };

/** The labels every object of an app carries; the Services select the Rollout's pods with them. */
export const appLabels = (app: { name: string }): Record<string, string> => ({ "app.kubernetes.io/name": app.name });

/** The app's single existing HTTPRoute: the hostname never changes (ADR-056 D4). */
export type AppRoute = { name: string; gateway: { name: string; namespace: string; listener: string }; hostnames: string[] };

/**
 * An app: the container `port` its Services target, their `servicePort` (default 80), its `route`
 * (optional below prod, required for a prod canary and a preview gate), whether it is `critical`
 * (which bypasses the error-budget freeze), and its `slo` as its Sloth recording rules name it (the
 * opt-in to the freeze).
 */
export type AppSpec = {
    name: string;
    namespace: string;
    port: number;
    servicePort?: number;
    route?: AppRoute;
    critical?: boolean;
    slo?: { service: string; name: string };
};

/**
 * How test traffic reaches a blue/green app's preview Service, so the gate judges the new version
 * before it takes production traffic: a `header` rule in the app's own route (anyone reaching the
 * Gateway can send it: internal Gateways), or a `hostname` route of its own, on the app's listener
 * or on `gateway` (a listener only trusted clients reach).
 */
export type PreviewGate = { header: string } | { hostname: string; gateway?: AppRoute["gateway"] };

/** When the background gate takes its first measurements (the cluster's `analysis`). */
export type GateTiming = Pick<AnalysisConfig, "initialDelay" | "interval">;

export interface StrategyOptions {
    tier: Tier;
    /** Prod only (default standard). */
    prodClass?: ProdClass;
    /** Prod only (default canary). */
    shape?: Shape;
    /** Prod canary weights, ascending, ending at 100 (default the `delivery` section's). */
    steps?: number[];
    /** How long each weight holds: at least the gate's `initialDelay + interval` (the default). */
    stepPause?: string;
    /** The cluster's gate timing; default the platform's. */
    gate?: GateTiming;
    /** Prod blue/green only, opt-in: without test traffic the pre-promotion run pauses the rollout. */
    previewGate?: PreviewGate;
    /** Prod only: whether the last step needs nobody (default true for standard; regulated must keep false). */
    autoPromotion?: boolean;
    /** Prod only: whether an app with an SLO (and not critical) waits for its error budget (default true, D6). */
    errorBudgetFreeze?: boolean;
}

type Arg = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string }; podTemplateHashValue?: "Latest" | "Stable" } };
export type AnalysisRef = { templates: { templateName: string; clusterScope: true }[]; args: Arg[] };
export type CanaryStep = { setWeight: number } | { pause: { duration?: string } } | { analysis: AnalysisRef };

export interface CanaryStrategy {
    canary: {
        maxSurge: number;
        maxUnavailable: number;
        steps: CanaryStep[];
        canaryService?: string;
        stableService?: string;
        trafficRouting?: { plugins: Record<string, { httpRoute: string }> };
        analysis?: AnalysisRef & { startingStep: number };
    };
}

export interface BlueGreenStrategy {
    blueGreen: {
        activeService: string;
        previewService: string;
        autoPromotionEnabled: boolean;
        /** Before the switch: the error-budget freeze, and with a preview gate the gate on its test traffic. */
        prePromotionAnalysis?: AnalysisRef;
        /** The gate on the promoted version, which then serves the production traffic. */
        postPromotionAnalysis: AnalysisRef;
        scaleDownDelaySeconds: number;
    };
}

/**
 * One strategy the stack's `delivery` section configures: `id` (`<name>-canary` below prod,
 * `<name>-<class>-<shape>`, `name` the platform's for the tier, by default the tier) names its component
 * folder (`npm run delivery`) and its entry in the stack output `deliveryStrategies`; `routed`: whether the app must have an HTTPRoute.
 */
export type TierStrategy = { id: string; name: string; tier: Tier; prodClass?: ProdClass; shape: Shape; routed: boolean; options: StrategyOptions };
