/**
 * The delivery strategy library (ADR-056 D1, D3, D4, D6, D8): every environment workload is a Rollout
 * on every stage (D1), one manifest shape for every app, with the strategy decided by the tier, never
 * per app (D3). Pure, so tenant scaffolders and other programs render exactly what the platform tests.
 */
import { ERROR_BUDGET, ERROR_BUDGET_WAIT, GATEWAY_API_PLUGIN, SHARED_TEMPLATE_ARGS, SUCCESS_RATE, SUCCESS_RATE_FINITE } from "../argoRollouts";
import { ANALYSIS_DEFAULTS, durationSeconds } from "../rollouts/config";
import { DELIVERY_DEFAULTS, DeliveryConfig, MAX_WEIGHTS } from "./fields";
import { HttpRouteObject, ServiceObject, appRoute, previewGateProblems, previewHeaderRule, previewHostnameRoute, service, serviceNames } from "./routes";
import type { AnalysisRef, AppSpec, BlueGreenStrategy, CanaryStep, CanaryStrategy, GateTiming, PreviewGate, ProdClass, Shape } from "./types";
import type { StrategyOptions, Tier, TierStrategy } from "./types";
import { LOWER_TIERS, PREVIEW_HEADER_VALUE, PROD_CLASSES, TIERS } from "./types";

/** An app's strategy and the objects it needs; `behaviour` is its line in docs/tenants/delivery-strategies.md. */
export interface DeliveryPlan {
    tier: Tier;
    prodClass?: ProdClass;
    shape: Shape;
    strategy: CanaryStrategy | BlueGreenStrategy;
    /** Stable and canary, or active and preview. */
    services: ServiceObject[];
    httpRoute?: HttpRouteObject;
    /** A hostname preview gate's own route. */
    previewRoute?: HttpRouteObject;
    previewGate?: PreviewGate;
    behaviour: string;
}

/** The prod canary weights when the caller names none: the `delivery` section's default. */
export const DEFAULT_STEPS: readonly number[] = DELIVERY_DEFAULTS.prod.standard.steps;

/**
 * The shortest pause per weight that lets the background gate measure it: the run measures first
 * after `initialDelay`, plus one interval for the controller's timing. A gate that has not measured
 * when the canary is promoted ends without a measurement, which counts as Successful
 * (analysis/analysis.go assessMetricStatus): the weights would outrun the gate.
 */
export function defaultStepPause(gate: GateTiming = ANALYSIS_DEFAULTS): string {
    const seconds = durationSeconds(gate.initialDelay) + durationSeconds(gate.interval);
    return seconds % 60 === 0 ? `${seconds / 60}m` : `${seconds}s`;
}

const templates = (...names: string[]) => names.map((templateName) => ({ templateName, clusterScope: true as const }));

/** A shared metric gate, with the arguments from the Rollout itself. */
const gate = (template: string): AnalysisRef => ({ templates: templates(template), args: SHARED_TEMPLATE_ARGS.map((a) => ({ ...a })) });

/**
 * The error-budget freeze (D6) of a non-critical app with an SLO: a canary waits for its budget in its
 * first step; blue/green checks it once before the switch and pauses, since only a paused blue/green
 * rollout is spared the progress deadline (rollouts/analysis.ts errorBudgetTemplateSpec).
 */
export function errorBudgetGate(app: AppSpec, kind: "wait" | "check", freeze = true): AnalysisRef | undefined {
    const slo = freeze && !app.critical ? app.slo : undefined;
    const args = slo && [
        { name: "service", value: slo.service },
        { name: "slo", value: slo.name },
    ];
    return args && { templates: templates(kind === "wait" ? ERROR_BUDGET_WAIT : ERROR_BUDGET), args };
}

/** A problem with one option apart from any app, named as the `delivery` section's key: the reader reports it for that key. */
export type OptionProblem = { option: "tier" | "prodClass" | "steps" | "stepPause" | "autoPromotion"; given: unknown; allowed: string };

/** The problems of the options alone: what a tier of the stack's `delivery` section may say. */
export function optionProblems(opts: StrategyOptions): OptionProblem[] {
    const problems: OptionProblem[] = [];
    const add = (option: OptionProblem["option"], given: unknown, allowed: string) => problems.push({ option, given, allowed });
    const prod = opts.tier === "prod";
    if (!TIERS.includes(opts.tier)) add("tier", opts.tier, `must be one of ${TIERS.join(", ")}`);
    const prodOnly = "prodClass, shape, steps, autoPromotion and errorBudgetFreeze apply to prod only";
    if (!prod && [opts.prodClass, opts.shape, opts.steps, opts.autoPromotion, opts.errorBudgetFreeze].some((o) => o !== undefined)) {
        add("prodClass", opts.tier, `${prodOnly}; ${opts.tier} always gets the auto-promoting canary (ADR-056 D3)`);
    }
    const steps = opts.steps ?? DEFAULT_STEPS;
    // [100] would move all traffic at once, before the background gate measures anything.
    const stepped = Array.isArray(steps) && steps.length >= 2 && steps.length <= MAX_WEIGHTS && steps.at(-1) === 100;
    if (!stepped || !steps.every((w, i) => Number.isInteger(w) && w > 0 && w <= 100 && (i === 0 || w > steps[i - 1]))) {
        add("steps", steps, `must be a list of 2 to ${MAX_WEIGHTS} ascending whole percentages ending at 100: the gate measures the weights below 100`);
    }
    if (opts.stepPause !== undefined && !/^[1-9][0-9]*(s|m|h)$/.test(opts.stepPause)) {
        add("stepPause", opts.stepPause, "must be a duration such as 5m");
    } else if (opts.stepPause !== undefined && prod && durationSeconds(opts.stepPause) < durationSeconds(defaultStepPause(opts.gate))) {
        const g = opts.gate ?? ANALYSIS_DEFAULTS;
        add(
            "stepPause",
            opts.stepPause,
            `must be at least the gate's initialDelay + interval (${g.initialDelay} + ${g.interval} = ${defaultStepPause(opts.gate)}): the first weight would end before the gate has measured it`,
        );
    }
    if (prod && opts.prodClass === "regulated" && opts.autoPromotion === true) {
        add("autoPromotion", true, "must be false for prod / regulated: only an approver continues before 100% or the switch (ADR-056 D3, ADR-049)");
    }
    return problems;
}

/** The reasons the options cannot be used for the app, as `option = value: what is allowed` (empty when fine). */
export function checkOptions(app: AppSpec, opts: StrategyOptions): string[] {
    const problems = optionProblems(opts).map((p) => `${p.option} = ${JSON.stringify(p.given)}: ${p.allowed}`);
    if (opts.tier === "prod" && (opts.shape ?? "canary") === "canary" && !app.route) {
        problems.push("a prod canary needs the app's HTTPRoute: its weights are the traffic split (ADR-056 D4)");
    }
    return [...problems, ...previewGateProblems(app, opts)];
}

/** The strategy for an app at a tier, and the objects it needs; throws what `checkOptions` finds. */
export function deliveryPlan(app: AppSpec, opts: StrategyOptions): DeliveryPlan {
    const problems = checkOptions(app, opts);
    if (problems.length > 0) throw new Error(`app ${app.namespace}/${app.name}: ${problems.join("; ")}`);
    if (opts.tier !== "prod") return lowerTierPlan(app, opts.tier);
    const prodClass = opts.prodClass ?? "standard";
    return (opts.shape ?? "canary") === "canary" ? prodCanaryPlan(app, prodClass, opts) : blueGreenPlan(app, prodClass, opts);
}

/** A canary's Services and route: stable at 100 and canary at 0, for the plugin to move (D4). */
function canaryObjects(app: AppSpec) {
    const [stable, canary] = serviceNames(app, "canary");
    const routing = app.route && {
        canaryService: canary,
        stableService: stable,
        trafficRouting: { plugins: { [GATEWAY_API_PLUGIN]: { httpRoute: app.route.name } } },
    };
    const httpRoute = appRoute(app, [
        { name: stable, weight: 100 },
        { name: canary, weight: 0 },
    ]);
    return { routing, services: routing ? [service(app, stable), service(app, canary)] : [], httpRoute };
}

/**
 * dev / test / preprod: the trivial auto-promoting canary; lower tiers do not gate on metrics (D3).
 * maxSurge 1 with maxUnavailable 0 keeps headroom against the PDB (D8), in every tier.
 */
function lowerTierPlan(app: AppSpec, tier: Tier): DeliveryPlan {
    const { routing, services, httpRoute } = canaryObjects(app);
    return {
        tier,
        shape: "canary",
        strategy: { canary: { maxSurge: 1, maxUnavailable: 0, steps: [{ setWeight: 100 }], ...routing } },
        services,
        httpRoute,
        behaviour: "auto-promoting canary (setWeight 100), no analysis" + (routing ? ", routed through the plugin" : ", replica-based"),
    };
}

/**
 * prod canary: stepped weights with the success-rate gate in the background from the first weight
 * on; a breach aborts and traffic snaps back to stable. Without auto-promotion (regulated) a
 * `pause: {}` before 100% waits for an approver.
 */
function prodCanaryPlan(app: AppSpec, prodClass: ProdClass, opts: StrategyOptions): DeliveryPlan {
    const { routing, services, httpRoute } = canaryObjects(app);
    const pause = opts.stepPause ?? defaultStepPause(opts.gate);
    const weights = opts.steps ?? DEFAULT_STEPS;
    const budget = errorBudgetGate(app, "wait", opts.errorBudgetFreeze ?? true);
    const manual = !(opts.autoPromotion ?? prodClass !== "regulated");
    const steps: CanaryStep[] = budget ? [{ analysis: budget }] : [];
    const firstWeight = steps.length;
    weights.forEach((w, i) => {
        const last = i === weights.length - 1;
        steps.push(...(last && manual ? [{ pause: {} }] : []), { setWeight: w }, ...(last ? [] : [{ pause: { duration: pause } }]));
    });
    return {
        tier: "prod",
        prodClass,
        shape: "canary",
        // The gate starts on the step after the first setWeight: its first window sees canary traffic.
        strategy: { canary: { maxSurge: 1, maxUnavailable: 0, ...routing, analysis: { ...gate(SUCCESS_RATE), startingStep: firstWeight + 1 }, steps } },
        services,
        httpRoute,
        behaviour:
            `canary ${weights.join(" -> ")} through the Gateway API plugin, background success-rate gate, abort on breach` +
            (manual ? ", manual approval (pause) before 100%" : "") +
            (budget ? ", error-budget freeze first (waits for the budget, pauses after maxFreeze)" : ""),
    };
}

/**
 * prod blue/green: the new version comes up behind the preview Service, takes the active Service, and
 * the finite success-rate gate measures it there (post-promotion); with a preview gate the same gate
 * runs before the switch on the preview's test traffic. Argo Rollouts v1.9.0 (rollout/bluegreen.go,
 * rollout/analysis.go, rollout/service.go): the switch waits for a Successful pre-promotion run, and
 * without auto-promotion the pause is only added after it, so an approver promotes a version that
 * passed; a Failed run aborts with the active Service on the stable ReplicaSet; an Inconclusive one
 * (no test traffic) pauses for a human. After the switch the old ReplicaSet stays at full scale until
 * the post-promotion run is Successful, and a breach switches back. Every pre- and post-promotion run
 * must end, so both use the finite template; the freeze shares the pre-promotion run.
 */
function blueGreenPlan(app: AppSpec, prodClass: ProdClass, opts: StrategyOptions): DeliveryPlan {
    const [active, preview] = serviceNames(app, "blueGreen");
    const budget = errorBudgetGate(app, "check", opts.errorBudgetFreeze ?? true);
    const manual = !(opts.autoPromotion ?? prodClass !== "regulated");
    const previewGate = opts.previewGate;
    const pre = [budget, previewGate ? gate(SUCCESS_RATE_FINITE) : undefined].filter((a): a is AnalysisRef => a !== undefined);
    const headerRule = previewGate && "header" in previewGate ? [previewHeaderRule(app, previewGate.header, preview)] : [];
    const gated = previewGate
        ? `finite success-rate gate on the preview's test traffic (${"header" in previewGate ? `header ${previewGate.header}: ${PREVIEW_HEADER_VALUE}` : `hostname ${previewGate.hostname}`}) before the switch, a breach aborts with the active Service untouched; ` +
          (manual ? "then manual promotion (autoPromotionEnabled: false)" : "then auto-promotes")
        : manual
          ? "manual promotion (autoPromotionEnabled: false)"
          : "auto-promotes once the preview is ready";
    return {
        tier: "prod",
        prodClass,
        shape: "blueGreen",
        strategy: {
            blueGreen: {
                activeService: active,
                previewService: preview,
                autoPromotionEnabled: !manual,
                ...(pre.length > 0 ? { prePromotionAnalysis: { templates: pre.flatMap((a) => a.templates), args: pre.flatMap((a) => a.args) } } : {}),
                postPromotionAnalysis: gate(SUCCESS_RATE_FINITE),
                scaleDownDelaySeconds: 30,
            },
        },
        services: [service(app, active), service(app, preview)],
        httpRoute: appRoute(app, [{ name: active, weight: 100 }], headerRule),
        ...(previewGate && "hostname" in previewGate ? { previewRoute: previewHostnameRoute(app, previewGate, preview) } : {}),
        ...(previewGate ? { previewGate } : {}),
        behaviour:
            "blue/green: " +
            (budget ? "error-budget check before promotion (an exhausted budget pauses), " : "") +
            gated +
            ", then a finite success-rate gate on the promoted version's production traffic; a breach switches the active Service back to the old version",
    };
}

/**
 * Every strategy a stack's `delivery` section configures, with the cluster's gate timing: the lower
 * tiers' canary and each shape of each prod class; the regulated class only where the stack has
 * `policy.regulated` (its approvers are the platform's approval roles, components/policy/approvalBindings.ts).
 */
export function tierStrategies(delivery: DeliveryConfig, gate: GateTiming, regulated = false): TierStrategy[] {
    const out: TierStrategy[] = LOWER_TIERS.map((tier) => ({
        id: `${delivery[tier].name}-canary`,
        name: delivery[tier].name,
        tier,
        shape: "canary",
        routed: delivery[tier].trafficRouting,
        options: { tier, gate },
    }));
    for (const prodClass of PROD_CLASSES.filter((c) => c === "standard" || regulated)) {
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
            };
            out.push({ id: `${delivery.prod.name}-${prodClass}-${shape}`, name: delivery.prod.name, tier: "prod", prodClass, shape, routed: true, options });
        }
    }
    return out;
}
