/**
 * The strategy library's vocabulary (ADR-056 D3): the tiers, classes and shapes the stack's
 * `delivery` section is keyed by, what an app and its options are, and the objects a plan holds.
 */
import type { PolicyRule } from "../argoRollouts";
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

export interface AppRoute {
    /** The app's single existing HTTPRoute: the hostname is unchanged (ADR-056 D4). */
    name: string;
    gateway: { name: string; namespace: string; listener: string };
    hostnames: string[];
}

export interface AppSpec {
    name: string;
    namespace: string;
    /** The container port the Services target. */
    port: number;
    /** The Services' port (default 80). */
    servicePort?: number;
    /** Optional below prod (replica-based canary); required for a prod canary and a preview gate. */
    route?: AppRoute;
    /** Critical apps bypass the error-budget freeze. */
    critical?: boolean;
    /** Opt-in to the error-budget freeze: the app's SLO as its Sloth recording rules name it. */
    slo?: { service: string; name: string };
}

/**
 * How test traffic reaches a blue/green app's preview Service, so the gate judges the new version
 * before it takes production traffic: a `header` rule in the app's own route (anyone reaching the
 * Gateway can send it: internal Gateways), or a `hostname` route of its own, on the app's listener
 * or on `gateway` (a listener only trusted clients reach).
 */
export type PreviewGate = { header: string } | { hostname: string; gateway?: AppRoute["gateway"] };

/** When the background gate takes its first measurements (the cluster's `analysis`). */
export type GateTiming = Pick<AnalysisConfig, "initialDelay" | "interval">;

/** Who approves and who deploys: the platform's groups (`policy.regulated`). */
export interface ApprovalGroups {
    approverGroups: readonly string[];
    deployerGroups: readonly string[];
}

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
    /** Regulated prod: the groups the approver and deployer Roles are bound to; approvers required. */
    approval?: ApprovalGroups;
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

type Meta = { name: string; namespace: string; labels: Record<string, string> };

export interface ServiceObject {
    apiVersion: "v1";
    kind: "Service";
    metadata: Meta;
    spec: { type: "ClusterIP"; selector: Record<string, string>; ports: { name: string; port: number; targetPort: number; protocol: "TCP" }[] };
}

export type RouteMatch = { path: { type: "PathPrefix"; value: string }; headers?: { type: "Exact"; name: string; value: string }[] };
export type RouteRule = { matches: RouteMatch[]; backendRefs: { group: ""; kind: "Service"; name: string; port: number; weight: number }[] };

export interface HttpRouteObject {
    apiVersion: "gateway.networking.k8s.io/v1";
    kind: "HTTPRoute";
    metadata: Meta;
    spec: {
        parentRefs: { group: "gateway.networking.k8s.io"; kind: "Gateway"; name: string; namespace: string; sectionName: string }[];
        hostnames: string[];
        rules: RouteRule[];
    };
}

export interface RoleObject {
    apiVersion: "rbac.authorization.k8s.io/v1";
    kind: "Role";
    metadata: Meta;
    rules: PolicyRule[];
}

export interface RoleBindingObject {
    apiVersion: "rbac.authorization.k8s.io/v1";
    kind: "RoleBinding";
    metadata: Meta;
    roleRef: { apiGroup: "rbac.authorization.k8s.io"; kind: "Role"; name: string };
    subjects: { apiGroup: "rbac.authorization.k8s.io"; kind: "Group"; name: string }[];
}

export interface ApprovalRoles {
    approver: RoleObject;
    deployer: RoleObject;
    /** One per Role that has groups to bind. */
    bindings: RoleBindingObject[];
}

export interface DeliveryPlan {
    tier: Tier;
    prodClass?: ProdClass;
    shape: Shape;
    strategy: CanaryStrategy | BlueGreenStrategy;
    /** The Services the strategy names (stable/canary or active/preview), both ClusterIP. */
    services: ServiceObject[];
    /** The app's route: both canary Services as weighted backends, or the active one (and the header preview rule). */
    httpRoute?: HttpRouteObject;
    /** Blue/green with a hostname preview gate: the preview hostname's route. */
    previewRoute?: HttpRouteObject;
    /** Blue/green with a preview gate: how test traffic reaches the preview. */
    previewGate?: PreviewGate;
    /** Regulated prod: approver and deployer Roles, so deployer != approver is enforced by RBAC. */
    roles?: ApprovalRoles;
    /** One line for the tier x class table of docs/tenants/delivery-strategies.md. */
    behaviour: string;
}

/**
 * One strategy the stack's `delivery` section configures; `id` names its component folder
 * (`npm run delivery`) and its entry in the stack output `deliveryStrategies`.
 */
export interface TierStrategy {
    /** `<tier>-canary` below prod, `prod-<class>-<shape>` (e.g. `prod-regulated-canary`). */
    id: string;
    tier: Tier;
    prodClass?: ProdClass;
    shape: Shape;
    /** Whether the app must have an HTTPRoute (the plugin moves its weights, or it carries the preview rule). */
    routed: boolean;
    options: StrategyOptions;
}
