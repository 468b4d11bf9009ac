/**
 * The delivery strategy library (ADR-056 D1, D3, D4, D6, D8): every environment workload is a
 * Rollout on every stage (D1), one manifest shape for every stage of every app, with the strategy
 * decided by the tier, never per app (D3). Pure and exported, so tenant scaffolders and other
 * programs render exactly what the platform tests.
 */
import { ANALYSIS_DEFAULTS, AnalysisConfig, durationSeconds } from "../rollouts/config";
import { ApprovalGroups, ApprovalRoles, approvalRoles } from "./approval";
import { DELIVERY_DEFAULTS, DeliveryConfig } from "./fields";
import { appLabels } from "./labels";
import { LOWER_TIERS, PROD_CLASSES, ProdClass, Shape, TIERS, Tier } from "./tiers";
import { ERROR_BUDGET, ERROR_BUDGET_WAIT, SUCCESS_RATE, SUCCESS_RATE_FINITE, GATEWAY_API_PLUGIN } from "../argoRollouts";

export { approvalRoles } from "./approval";
export { DELIVERY_DEFAULTS, DELIVERY_FIELDS } from "./fields";
export type { DeliveryConfig, LowerTierConfig, PreviewGateKind, ProdClassConfig } from "./fields";
export type { ApprovalGroups, ApprovalRoles, RoleBindingObject, RoleObject } from "./approval";
export { appLabels } from "./labels";

export { LOWER_TIERS, PREVIEW_HEADER, PROD_CLASSES, SHAPES, TIERS } from "./tiers";
export type { LowerTier, ProdClass, Shape, Tier } from "./tiers";

/** Apps with this label set to "true" bypass the error-budget freeze (ADR-056 D6). */
export const CRITICAL_LABEL = "argo-rollouts-addon.platform/critical";
/**
 * The shared templates the library references (rollouts/analysis.ts): the background success rate
 * runs beside a canary until it is promoted; everything else must terminate (see there).
 */
export const SUCCESS_RATE_TEMPLATE = SUCCESS_RATE;
export const SUCCESS_RATE_FINITE_TEMPLATE = SUCCESS_RATE_FINITE;
/** The error-budget check (blue/green pre-promotion: exhausted pauses) and the waiting freeze (canary: exhausted waits). */
export const ERROR_BUDGET_TEMPLATE = ERROR_BUDGET;
export const ERROR_BUDGET_WAIT_TEMPLATE = ERROR_BUDGET_WAIT;

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
    /** Optional below prod (replica-based canary); required for a prod canary (weighted routing) and a preview gate. */
    route?: AppRoute;
    /** Critical apps bypass the error-budget freeze. */
    critical?: boolean;
    /** Opt-in to the error-budget freeze: the app's SLO as its Sloth recording rules name it. */
    slo?: { service: string; name: string };
}

export interface StrategyOptions {
    tier: Tier;
    /** Prod only (default standard). */
    prodClass?: ProdClass;
    /** Prod only (default canary). */
    shape?: Shape;
    /** Prod canary weights, ascending, ending at 100 (default the `delivery` section's: 25, 50, 100 as proven in ADR-056). */
    steps?: number[];
    /**
     * How long each weight holds before the next: at least the gate's `initialDelay + interval`, so
     * the gate has measured the first weight before the next one (default exactly that).
     */
    stepPause?: string;
    /** The cluster's gate timing (config `analysis`); default the platform's defaults. */
    gate?: GateTiming;
    /**
     * Regulated prod: the groups the approver and deployer Roles are bound to, the same as the
     * stack's `policy.regulated` (its admission guard decides by these groups); approvers required.
     */
    approval?: ApprovalGroups;
    /**
     * Prod blue/green only, opt-in: route test traffic to the preview Service and gate the new
     * version on it before the switch (see `PreviewGate`). Only for apps where something drives
     * that traffic: without it the pre-promotion run is Inconclusive and the rollout pauses.
     */
    previewGate?: PreviewGate;
    /**
     * Prod only: whether the last step needs nobody (default true for standard, false for
     * regulated, which must keep it false). False adds the approval: `pause: {}` before 100% on a
     * canary, `autoPromotionEnabled: false` on blue/green.
     */
    autoPromotion?: boolean;
    /** Prod only: whether an app with an SLO (and not critical) waits for its error budget (default true, ADR-056 D6). */
    errorBudgetFreeze?: boolean;
}

/**
 * How test traffic reaches the preview Service of a blue/green app, so the metric gate can judge
 * the new version before it takes any production traffic (ADR-056 as-built: blue/green's "a bad
 * version gets zero prod traffic").
 *
 * - `header`: a rule in the app's own HTTPRoute, on its own hostnames, sends requests carrying
 *   `<header>: true` to the preview Service. Anyone who can reach the Gateway can reach the
 *   unreleased version by sending the header: for internal Gateways.
 * - `hostname`: a second HTTPRoute, `<route>-preview`, sends that hostname to the preview Service,
 *   on the app's Gateway listener or on `gateway` (a listener only trusted clients reach, which is
 *   what restricts the unreleased version). The app's own route is unchanged.
 */
export type PreviewGate = { header: string } | { hostname: string; gateway?: AppRoute["gateway"] };

/** The value the preview rule matches exactly. */
export const PREVIEW_HEADER_VALUE = "true";
/** Header names a preview gate takes: a subset of Gateway API's HeaderName, safe to pass to curl or a test tool as is. */
const PREVIEW_HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,255}$/;
/** A single host, Gateway API's PreciseHostname (apis/v1/shared_types.go): no wildcard. */
const PRECISE_HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** When the background gate takes its first measurements (the `analysis` config of the cluster). */
export type GateTiming = Pick<AnalysisConfig, "initialDelay" | "interval">;

type Arg = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string }; podTemplateHashValue?: "Latest" | "Stable" } };
type TemplateRef = { templateName: string; clusterScope: true };
export type AnalysisRef = { templates: TemplateRef[]; args: Arg[] };
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
        /**
         * Before the switch: the error-budget freeze when it applies, and with a preview gate the
         * finite success-rate gate on the preview's test traffic.
         */
        prePromotionAnalysis?: AnalysisRef;
        /** The metric gate on the promoted version, which then serves the production traffic. */
        postPromotionAnalysis: AnalysisRef;
        scaleDownDelaySeconds: number;
    };
}

export type RolloutStrategy = CanaryStrategy | BlueGreenStrategy;

export interface ServiceObject {
    apiVersion: "v1";
    kind: "Service";
    metadata: { name: string; namespace: string; labels: Record<string, string> };
    spec: {
        type: "ClusterIP";
        selector: Record<string, string>;
        ports: { name: string; port: number; targetPort: number; protocol: "TCP" }[];
    };
}

export type HeaderMatch = { type: "Exact"; name: string; value: string };
export type RouteMatch = { path: { type: "PathPrefix"; value: string }; headers?: HeaderMatch[] };
export type RouteRule = { matches: RouteMatch[]; backendRefs: { group: ""; kind: "Service"; name: string; port: number; weight: number }[] };

export interface HttpRouteObject {
    apiVersion: "gateway.networking.k8s.io/v1";
    kind: "HTTPRoute";
    metadata: { name: string; namespace: string; labels: Record<string, string> };
    spec: {
        parentRefs: { group: "gateway.networking.k8s.io"; kind: "Gateway"; name: string; namespace: string; sectionName: string }[];
        hostnames: string[];
        rules: RouteRule[];
    };
}

export interface DeliveryPlan {
    tier: Tier;
    prodClass?: ProdClass;
    shape: Shape;
    strategy: RolloutStrategy;
    /** The Services the strategy names (stable/canary or active/preview), both ClusterIP. */
    services: ServiceObject[];
    /**
     * The app's route with both Services as weighted backends (canary) or the active one (with a
     * header preview gate, also the header rule to the preview).
     */
    httpRoute?: HttpRouteObject;
    /** Blue/green with a hostname preview gate: the preview hostname's route to the preview Service. */
    previewRoute?: HttpRouteObject;
    /** Blue/green with a preview gate: how test traffic reaches the preview (what to send it). */
    previewGate?: PreviewGate;
    /** Regulated prod: approver and deployer Roles, so deployer != approver is enforced by RBAC. */
    roles?: ApprovalRoles;
    /** One line for the tier x class table of docs/tenants/delivery-strategies.md. */
    behaviour: string;
}

/** The prod canary weights when the caller names none: the `delivery` section's default (fields.ts). */
export const DEFAULT_STEPS: readonly number[] = DELIVERY_DEFAULTS.prod.standard.steps;
/**
 * The shortest pause per weight that lets the background gate measure the first weight: the run
 * starts with it and measures first after `initialDelay` (analysis/analysis.go), and a measurement
 * more leaves room for the controller's reconcile timing. A gate that has not measured when the
 * canary is promoted is terminated without a measurement, which Argo Rollouts counts as
 * Successful (assessMetricStatus): the weights would outrun the gate.
 */
export function defaultStepPause(gate: GateTiming = ANALYSIS_DEFAULTS): string {
    const seconds = durationSeconds(gate.initialDelay) + durationSeconds(gate.interval);
    return seconds % 60 === 0 ? `${seconds / 60}m` : `${seconds}s`;
}
export const DEFAULT_STEP_PAUSE = defaultStepPause();
const DURATION = /^[1-9][0-9]*(s|m|h)$/;

/** Arguments of the shared metric templates, resolved from the Rollout itself. */
export function metricArgs(): Arg[] {
    return [
        { name: "namespace", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
        { name: "rollout", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
        { name: "canary-hash", valueFrom: { podTemplateHashValue: "Latest" } },
    ];
}

function templates(...names: string[]): TemplateRef[] {
    return names.map((templateName) => ({ templateName, clusterScope: true as const }));
}

/**
 * The error-budget gate applies to non-critical apps that authored an SLO (ADR-056 D6). A canary
 * waits for the budget in its first step (`wait`); blue/green checks it once before the switch and
 * pauses when it is exhausted, since only a paused blue/green rollout is spared the progress
 * deadline (rollouts/analysis.ts, errorBudgetTemplateSpec).
 */
export function errorBudgetGate(app: AppSpec, kind: "wait" | "check", freeze = true): AnalysisRef | undefined {
    if (!freeze || app.critical || !app.slo) {
        return undefined;
    }
    return {
        templates: templates(kind === "wait" ? ERROR_BUDGET_WAIT_TEMPLATE : ERROR_BUDGET_TEMPLATE),
        args: [
            { name: "service", value: app.slo.service },
            { name: "slo", value: app.slo.name },
        ],
    };
}

export function serviceNames(app: Pick<AppSpec, "name">, shape: Shape): [string, string] {
    return shape === "canary" ? [`${app.name}-stable`, `${app.name}-canary`] : [`${app.name}-active`, `${app.name}-preview`];
}

function service(app: AppSpec, name: string): ServiceObject {
    return {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name, namespace: app.namespace, labels: appLabels(app) },
        spec: {
            type: "ClusterIP",
            // The controller adds rollouts-pod-template-hash to each Service's selector.
            selector: appLabels(app),
            ports: [{ name: "http", port: app.servicePort ?? 80, targetPort: app.port, protocol: "TCP" }],
        },
    };
}

/** A Service backend with the defaults the API server would fill in written out (see `appRoute`). */
function backendRef(app: AppSpec, name: string, weight: number): RouteRule["backendRefs"][number] {
    return { group: "", kind: "Service", name, port: app.servicePort ?? 80, weight };
}

/** Every path: the match the API server defaults a rule to, written out. */
function everyPath(): RouteMatch["path"] {
    return { type: "PathPrefix", value: "/" };
}

function gatewayParent(gateway: AppRoute["gateway"]): HttpRouteObject["spec"]["parentRefs"][number] {
    return { group: "gateway.networking.k8s.io", kind: "Gateway", name: gateway.name, namespace: gateway.namespace, sectionName: gateway.listener };
}

/**
 * The app's HTTPRoute with explicit defaults (`group: ""`, `kind`, `weight`, path match and header
 * match type): Cilium wants `group: ""` on Service backends, and ArgoCD shows defaults the API
 * server fills in as drift. A canary lists both Services, stable at 100 and canary at 0, for the
 * plugin to move. `before` are rules that take precedence (the preview header rule).
 */
export function appRoute(app: AppSpec, backends: { name: string; weight: number }[], before: RouteRule[] = []): HttpRouteObject | undefined {
    if (!app.route) {
        return undefined;
    }
    const r = app.route;
    return {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: r.name, namespace: app.namespace, labels: appLabels(app) },
        spec: {
            parentRefs: [gatewayParent(r.gateway)],
            hostnames: [...r.hostnames],
            rules: [...before, { matches: [{ path: everyPath() }], backendRefs: backends.map((b) => backendRef(app, b.name, b.weight)) }],
        },
    };
}

/**
 * The header preview gate's rule: every path of the app's hostnames, only with `<header>: true`,
 * to the preview Service. It wins over the app's path-only rule by Gateway API's match precedence
 * (kubernetes-sigs/gateway-api apis/v1/httproute_types.go, HTTPRouteRule.Matches, the same at
 * v1.2.0 and v1.4.1): across rules, the longest Exact or PathPrefix path first, then a method match,
 * then the largest number of header matches; both rules match PathPrefix "/" and no method, and
 * this one has a header match where the other has none. Only a tie left after those goes to the
 * first rule in list order, and this rule is listed first too. Cilium orders its Envoy routes by
 * those criteria (cilium/cilium operator/pkg/model/translation/envoy_virtual_host.go,
 * SortableRoute). Header matches are ANDed with the path and `Exact` is Core support; header names
 * match case-insensitively. A request without the header never matches it, so production traffic
 * is unchanged. One backend per rule: the ArgoCD weight rule touches only rules with two or more
 * (components/argocd/ignoreRules.ts, HTTPROUTE_WEIGHTS_RULE), so this route syncs as git says.
 */
export function previewHeaderRule(app: AppSpec, header: string, previewService: string): RouteRule {
    return {
        matches: [{ path: everyPath(), headers: [{ type: "Exact", name: header, value: PREVIEW_HEADER_VALUE }] }],
        backendRefs: [backendRef(app, previewService, 100)],
    };
}

/**
 * The hostname preview gate's route, `<app route>-preview`: the preview hostname, every path, to the
 * preview Service, attached to `gateway` (default the app's listener). A route of its own because
 * hostnames belong to a route, not a rule; its hostname is precise and not one of the app's, so it
 * never competes with the app's route for production requests.
 */
export function previewHostnameRoute(app: AppSpec, gate: { hostname: string; gateway?: AppRoute["gateway"] }, previewService: string): HttpRouteObject {
    const r = app.route!;
    return {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: `${r.name}-preview`, namespace: app.namespace, labels: appLabels(app) },
        spec: {
            parentRefs: [gatewayParent(gate.gateway ?? r.gateway)],
            hostnames: [gate.hostname],
            rules: [{ matches: [{ path: everyPath() }], backendRefs: [backendRef(app, previewService, 100)] }],
        },
    };
}

/** The reasons a preview gate cannot be used (empty when fine). */
function previewGateProblems(app: AppSpec, opts: StrategyOptions): string[] {
    const gate = opts.previewGate;
    if (gate === undefined) {
        return [];
    }
    if (opts.tier !== "prod" || opts.shape !== "blueGreen") {
        return [
            `previewGate applies to prod blueGreen only, got ${opts.tier}${opts.tier === "prod" ? ` ${opts.shape ?? "canary"}` : ""}: a prod canary's gate already measures the canary's slice of production traffic, and lower tiers are not gated (ADR-056 D3)`,
        ];
    }
    const problems: string[] = [];
    if (!app.route) {
        problems.push("previewGate needs the app's HTTPRoute: the preview rule is written into it, or beside it on its Gateway");
    }
    const header = "header" in gate ? gate.header : undefined;
    const hostname = "hostname" in gate ? gate.hostname : undefined;
    if ((header === undefined) === (hostname === undefined)) {
        problems.push(`previewGate takes either header or hostname, got ${JSON.stringify(gate)}`);
    } else if (header !== undefined && !PREVIEW_HEADER_NAME.test(header)) {
        problems.push(`previewGate.header must be a header name of letters, digits and '-' (at most 256), got ${JSON.stringify(header)}`);
    } else if (hostname !== undefined && !PRECISE_HOSTNAME.test(hostname)) {
        problems.push(`previewGate.hostname must be a single lowercase DNS name, no wildcard, got ${JSON.stringify(hostname)}`);
    } else if (hostname !== undefined && app.route?.hostnames.includes(hostname)) {
        problems.push(
            `previewGate.hostname ${hostname} is one of the app's hostnames: its production requests would go to the preview; use a hostname of its own, or the header`,
        );
    }
    return problems;
}

/**
 * A problem with one option, apart from any app: `option` names it as the `delivery` section's key
 * does, `given` is the value, `allowed` what it must be. The stack's reader (config.ts) reports
 * these for the key of the tier that set it; `checkOptions` for a library caller.
 */
export interface OptionProblem {
    option: "tier" | "prodClass" | "steps" | "stepPause" | "autoPromotion" | "approval" | "previewGate";
    given: unknown;
    allowed: string;
}

/** The problems of the options alone (no app): what a tier of the stack's `delivery` section may say. */
export function optionProblems(opts: StrategyOptions): OptionProblem[] {
    const problems: OptionProblem[] = [];
    const prod = opts.tier === "prod";
    if (!TIERS.includes(opts.tier)) {
        problems.push({ option: "tier", given: opts.tier, allowed: `must be one of ${TIERS.join(", ")}` });
    }
    if (
        !prod &&
        (opts.prodClass !== undefined ||
            opts.shape !== undefined ||
            opts.steps !== undefined ||
            opts.autoPromotion !== undefined ||
            opts.errorBudgetFreeze !== undefined)
    ) {
        problems.push({
            option: "prodClass",
            given: opts.tier,
            allowed: `prodClass, shape, steps, autoPromotion and errorBudgetFreeze apply to prod only; ${opts.tier} always gets the auto-promoting canary (ADR-056 D3)`,
        });
    }
    const steps = opts.steps ?? DEFAULT_STEPS;
    const ascending =
        Array.isArray(steps) && steps.length > 0 && steps.every((w, i) => Number.isInteger(w) && w > 0 && w <= 100 && (i === 0 || w > steps[i - 1]));
    if (!ascending || steps[steps.length - 1] !== 100) {
        problems.push({
            option: "steps",
            given: steps,
            allowed: "must be ascending whole percentages ending at 100 (each weight a step of the canary, the last one full promotion)",
        });
    }
    if (opts.stepPause !== undefined && !DURATION.test(opts.stepPause)) {
        problems.push({ option: "stepPause", given: opts.stepPause, allowed: "must be a duration such as 5m" });
    } else if (opts.stepPause !== undefined && prod && durationSeconds(opts.stepPause) < durationSeconds(defaultStepPause(opts.gate))) {
        const g = opts.gate ?? ANALYSIS_DEFAULTS;
        problems.push({
            option: "stepPause",
            given: opts.stepPause,
            allowed: `must be at least the gate's initialDelay + interval (${g.initialDelay} + ${g.interval} = ${defaultStepPause(opts.gate)}): the first weight would end before the gate has measured it`,
        });
    }
    const regulated = prod && opts.prodClass === "regulated";
    if (regulated && opts.autoPromotion === true) {
        problems.push({
            option: "autoPromotion",
            given: true,
            allowed: "must be false for prod / regulated: only an approver continues before 100% or the switch (ADR-056 D3, ADR-049)",
        });
    }
    if (opts.approval !== undefined && !regulated) {
        problems.push({ option: "approval", given: "approval groups", allowed: "apply to prod / regulated only: the other classes have no approval gate" });
    } else if (regulated) {
        const approvers = opts.approval?.approverGroups ?? [];
        const both = approvers.filter((g) => (opts.approval?.deployerGroups ?? []).includes(g));
        if (approvers.length === 0) {
            problems.push({
                option: "approval",
                given: approvers,
                allowed:
                    "a regulated app needs approval.approverGroups (the stack's policy.regulated.approverGroups): an approver Role nobody holds is no gate (ADR-056 D3, ADR-049)",
            });
        }
        if (both.length > 0) {
            problems.push({
                option: "approval",
                given: both,
                allowed: `approval groups ${both.join(", ")} are both approver and deployer groups: the deployer is never the approver (ADR-049)`,
            });
        }
    }
    return problems;
}

/** How `checkOptions` words an option problem for a library caller (the option, then the rule, then the value). */
function worded(p: OptionProblem): string {
    switch (p.option) {
        case "steps":
        case "stepPause":
            return `${p.option} ${p.allowed.replace(/^must be (.*?)(:|$)/, (_m, rule: string, colon: string) => `must be ${rule}, got ${typeof p.given === "string" ? p.given : JSON.stringify(p.given)}${colon}`)}`;
        case "autoPromotion":
            return `autoPromotion ${p.allowed}`;
        case "tier":
            return `tier ${p.allowed}, got ${String(p.given)}`;
        default:
            return p.allowed;
    }
}

/** Checks the options; returns the reasons they cannot be used (empty when fine). */
export function checkOptions(app: AppSpec, opts: StrategyOptions): string[] {
    const problems = optionProblems(opts).map(worded);
    if (opts.tier === "prod" && (opts.shape ?? "canary") === "canary" && !app.route) {
        problems.push("a prod canary needs the app's HTTPRoute: its weights are the traffic split (ADR-056 D4)");
    }
    problems.push(...previewGateProblems(app, opts));
    return problems;
}

/**
 * The strategy for an app at a tier, and the objects it needs. Throws when the options cannot be
 * used (see `checkOptions`).
 */
export function deliveryPlan(app: AppSpec, opts: StrategyOptions): DeliveryPlan {
    const problems = checkOptions(app, opts);
    if (problems.length > 0) {
        throw new Error(`app ${app.namespace}/${app.name}: ${problems.join("; ")}`);
    }
    if (opts.tier !== "prod") {
        return lowerTierPlan(app, opts.tier);
    }
    const prodClass = opts.prodClass ?? "standard";
    return (opts.shape ?? "canary") === "canary" ? prodCanaryPlan(app, prodClass, opts) : blueGreenPlan(app, prodClass, opts);
}

/**
 * dev / test / preprod: the trivial auto-promoting canary. It dogfoods the Rollout object,
 * admission and (with a route) the traffic plumbing at near-zero cost; lower tiers do not gate
 * on metrics (ADR-056 D3). maxSurge 1 with maxUnavailable 0 keeps headroom against the PDB (D8).
 */
function lowerTierPlan(app: AppSpec, tier: Tier): DeliveryPlan {
    const [stable, canary] = serviceNames(app, "canary");
    const routed = app.route !== undefined;
    return {
        tier,
        shape: "canary",
        strategy: {
            canary: {
                maxSurge: 1,
                maxUnavailable: 0,
                steps: [{ setWeight: 100 }],
                ...(routed
                    ? { canaryService: canary, stableService: stable, trafficRouting: { plugins: { [GATEWAY_API_PLUGIN]: { httpRoute: app.route!.name } } } }
                    : {}),
            },
        },
        services: routed ? [service(app, stable), service(app, canary)] : [],
        httpRoute: appRoute(app, [
            { name: stable, weight: 100 },
            { name: canary, weight: 0 },
        ]),
        behaviour: "auto-promoting canary (setWeight 100), no analysis" + (routed ? ", routed through the plugin" : ", replica-based"),
    };
}

/**
 * prod canary: stepped weights through the Gateway API plugin with the success-rate gate running
 * in the background once the first weight is in effect; a breach aborts and traffic snaps back to
 * stable. Regulated (or `autoPromotion: false`) adds `pause: {}` before full promotion: only an approver can continue.
 */
function prodCanaryPlan(app: AppSpec, prodClass: ProdClass, opts: StrategyOptions): DeliveryPlan {
    const [stable, canary] = serviceNames(app, "canary");
    const pause = opts.stepPause ?? defaultStepPause(opts.gate);
    const weights = opts.steps ?? DEFAULT_STEPS;
    const steps: CanaryStep[] = [];
    const budget = errorBudgetGate(app, "wait", opts.errorBudgetFreeze ?? true);
    const manual = !(opts.autoPromotion ?? prodClass !== "regulated");
    if (budget) {
        // The freeze: no traffic moves while the app's error budget is exhausted; the canary goes
        // on by itself once it recovers, or pauses for a human after errorBudget.maxFreeze.
        steps.push({ analysis: budget });
    }
    const firstWeight = steps.length;
    weights.forEach((w, i) => {
        const last = i === weights.length - 1;
        if (last && manual) {
            steps.push({ pause: {} });
        }
        steps.push({ setWeight: w });
        if (!last) {
            steps.push({ pause: { duration: pause } });
        }
    });
    const regulated = prodClass === "regulated";
    return {
        tier: "prod",
        prodClass,
        shape: "canary",
        strategy: {
            canary: {
                maxSurge: 1,
                maxUnavailable: 0,
                canaryService: canary,
                stableService: stable,
                trafficRouting: { plugins: { [GATEWAY_API_PLUGIN]: { httpRoute: app.route!.name } } },
                // The step after the first setWeight: the gate's first window sees canary traffic.
                analysis: { templates: templates(SUCCESS_RATE_TEMPLATE), args: metricArgs(), startingStep: firstWeight + 1 },
                steps,
            },
        },
        services: [service(app, stable), service(app, canary)],
        httpRoute: appRoute(app, [
            { name: stable, weight: 100 },
            { name: canary, weight: 0 },
        ]),
        ...(regulated ? { roles: approvalRoles(app, opts.approval) } : {}),
        behaviour:
            `canary ${weights.join(" -> ")} through the Gateway API plugin, background success-rate gate, abort on breach` +
            (manual ? ", manual approval (pause) before 100%" : "") +
            (budget ? ", error-budget freeze first (waits for the budget, pauses after maxFreeze)" : ""),
    };
}

/**
 * prod blue/green: the new version comes up behind the preview Service, then takes the active
 * Service, and the finite success-rate gate measures it there, on production traffic
 * (post-promotion). Without a preview gate nothing routes to the preview Service, so a metric gate on
 * it would only ever see no data; with one (`previewGate`, opt-in) test traffic reaches it and the
 * same finite gate runs before the switch as well, on the preview ReplicaSet: `podTemplateHashValue:
 * Latest` is the new ReplicaSet's hash from its creation on (utils/analysis/factory.go,
 * BuildArgumentsForRolloutAnalysisRun, newRS), and the preview Service selects it as soon as it
 * exists (rollout/bluegreen.go, reconcilePreviewService). Every pre- and post-promotion run must
 * end (Argo Rollouts rejects an indefinite one, see rollouts/analysis.ts): both use the finite
 * templates. Argo Rollouts v1.9.0, rollout/analysis.go and rollout/service.go:
 *
 * - Pre-promotion starts once the new ReplicaSet is saturated (skipPrePromotionAnalysisRun) and the
 *   active Service switches only after it is Successful (reconcileActiveService,
 *   completedPrePromotionAnalysis). With autoPromotionEnabled that is the switch; with it false
 *   (regulated) the blue/green pause is only added after a Successful run (rollout/bluegreen.go,
 *   reconcileBlueGreenPause), so the approver promotes a version that has passed the gate.
 * - A Failed or Error pre-promotion run aborts (setPauseOrAbortForBlueGreen) before any switch: the
 *   active Service stays on the stable ReplicaSet (reconcileActiveService points an aborted rollout
 *   at `status.stableRS`), the Rollout is Degraded (utils/rollout/rolloututil.go,
 *   CalculateRolloutPhase, RolloutAborted), and the preview ReplicaSet is scaled down after
 *   `abortScaleDownDelaySeconds` (30 s by default; rollout/replicaset.go, reconcileNewReplicaSet,
 *   shouldDelayScaleDownOnAbort). The bad version served test traffic only.
 * - An Inconclusive run (no test traffic reaches the preview: the `analysis.minRequests` floor
 *   empties the query) pauses the rollout before the switch (haltProgress) for a human:
 *   `promote` starts a fresh pre-promotion run (needsNewAnalysisRun), `promote --full` switches
 *   without the gate, `abort` gives up.
 *
 * After the switch (with or without a preview gate), until the post-promotion run is Successful the
 * old ReplicaSet stays `status.stableRS` (rollout/sync.go, shouldFullPromote), which the controller
 * keeps at full scale (rollout/bluegreen.go, reconcileBlueGreenStableReplicaSet) and never scales
 * down while referenced (rollout/replicaset.go, isReplicaSetReferenced) - whatever
 * `scaleDownDelaySeconds` says, which only starts once the new version is stable. A Failed or Error
 * post-promotion run aborts, and an aborted rollout points the active Service back at the stable
 * ReplicaSet, then scales the new one down after `abortScaleDownDelaySeconds`. An Inconclusive one
 * pauses with the new version active, for a human as above. The error-budget check, when it
 * applies, is part of the pre-promotion run: it reads the app's SLO, not the preview, and an
 * exhausted budget is an Inconclusive metric, which ends the whole run (utils/analysis/helpers.go,
 * IsTerminating) and pauses the rollout before the switch; `promote` checks it again.
 */
function blueGreenPlan(app: AppSpec, prodClass: ProdClass, opts: StrategyOptions): DeliveryPlan {
    const [active, preview] = serviceNames(app, "blueGreen");
    const budget = errorBudgetGate(app, "check", opts.errorBudgetFreeze ?? true);
    const regulated = prodClass === "regulated";
    const manual = !(opts.autoPromotion ?? !regulated);
    const gate = opts.previewGate;
    const finiteGate = (): AnalysisRef => ({ templates: templates(SUCCESS_RATE_FINITE_TEMPLATE), args: metricArgs() });
    const pre = prePromotion(budget, gate ? finiteGate() : undefined);
    return {
        tier: "prod",
        prodClass,
        shape: "blueGreen",
        strategy: {
            blueGreen: {
                activeService: active,
                previewService: preview,
                autoPromotionEnabled: !manual,
                ...(pre ? { prePromotionAnalysis: pre } : {}),
                postPromotionAnalysis: finiteGate(),
                scaleDownDelaySeconds: 30,
            },
        },
        services: [service(app, active), service(app, preview)],
        httpRoute: appRoute(app, [{ name: active, weight: 100 }], gate && "header" in gate ? [previewHeaderRule(app, gate.header, preview)] : []),
        ...(gate && "hostname" in gate ? { previewRoute: previewHostnameRoute(app, gate, preview) } : {}),
        ...(gate ? { previewGate: gate } : {}),
        ...(regulated ? { roles: approvalRoles(app, opts.approval) } : {}),
        behaviour:
            "blue/green: " +
            (budget ? "error-budget check before promotion (an exhausted budget pauses), " : "") +
            (gate
                ? `finite success-rate gate on the preview's test traffic (${"header" in gate ? `header ${gate.header}: ${PREVIEW_HEADER_VALUE}` : `hostname ${gate.hostname}`}) before the switch, a breach aborts with the active Service untouched; ` +
                  (manual ? "then manual promotion (autoPromotionEnabled: false)" : "then auto-promotes")
                : manual
                  ? "manual promotion (autoPromotionEnabled: false)"
                  : "auto-promotes once the preview is ready") +
            ", then a finite success-rate gate on the promoted version's production traffic; a breach switches the active Service back to the old version",
    };
}

/** One pre-promotion analysis of the freeze and the preview gate, whichever apply (one run: blue/green has one). */
function prePromotion(budget: AnalysisRef | undefined, previewGate: AnalysisRef | undefined): AnalysisRef | undefined {
    const parts = [budget, previewGate].filter((a): a is AnalysisRef => a !== undefined);
    if (parts.length === 0) {
        return undefined;
    }
    return { templates: parts.flatMap((a) => a.templates), args: parts.flatMap((a) => a.args) };
}

/**
 * One strategy the stack's `delivery` section configures: the tier (and prod class and shape), and
 * the options the library renders it with. `id` names its component folder (`npm run delivery`)
 * and its entry in the stack output `deliveryStrategies`.
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

/**
 * Every strategy a stack's `delivery` section configures, with the cluster's gate timing and the
 * approval groups of `policy.regulated`: the lower tiers' canary, and each shape each prod class
 * offers. Regulated strategies need those groups (their Roles are bound to them), so a stack
 * without `policy.regulated` configures no regulated strategy.
 */
export function tierStrategies(delivery: DeliveryConfig, gate: GateTiming, approval?: ApprovalGroups): TierStrategy[] {
    const out: TierStrategy[] = LOWER_TIERS.map((tier) => ({
        id: `${tier}-canary`,
        tier,
        shape: "canary" as const,
        routed: delivery[tier].trafficRouting,
        options: { tier, gate },
    }));
    for (const prodClass of PROD_CLASSES) {
        if (prodClass === "regulated" && approval === undefined) {
            continue;
        }
        const c = delivery.prod[prodClass];
        for (const shape of c.shapes) {
            const options: StrategyOptions = {
                tier: "prod",
                prodClass,
                shape,
                gate,
                autoPromotion: c.autoPromotion,
                errorBudgetFreeze: c.errorBudgetFreeze,
                ...(shape === "canary" ? { steps: [...c.steps], stepPause: c.stepPause } : {}),
                ...(shape === "blueGreen" && c.previewGate === "header" ? { previewGate: { header: c.previewHeader } } : {}),
                ...(prodClass === "regulated" ? { approval } : {}),
            };
            out.push({ id: `prod-${prodClass}-${shape}`, tier: "prod", prodClass, shape, routed: true, options });
        }
    }
    return out;
}
