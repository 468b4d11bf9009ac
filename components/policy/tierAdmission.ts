import type { PolicyConfig } from "./config";
import { componentPlan, COMPONENT_APP } from "../delivery/kustomize";
import { AnalysisRef, CanaryStep, DeliveryPlan, TierStrategy, deliveryPlan } from "../delivery/strategy";
import type { ProdClass, Shape } from "../delivery/tiers";
import type { TierAdmissionAction } from "../delivery/fields";
import {
    POLICY_NAMES,
    PolicyContext,
    Scope,
    clusterRule,
    clusterValidating,
    denyRule,
    metadata,
    namespaceSelector,
    notTheController,
    resourceRules,
    validationActions,
} from "./builders";
import type { ClusterPolicy, Condition, ValidatingPolicy } from "./shapes";
import type { ClassAdmission, TailStep, TierAdmission } from "./tierTypes";
import { ROLLOUT } from "./workloads";

export type { ClassAdmission, TailStep, TierAdmission } from "./tierTypes";

/**
 * Tier admission (ADR-056 D3, "the rollout strategy is a tier/stage property"): a Rollout in a prod
 * namespace must carry what its class's strategy carries, the shared success-rate gate and, for
 * regulated, the approval. What the rule checks is read from the same rendered strategies the
 * delivery components and the stack output `deliveryStrategies` are (`componentPlan` of the
 * stack's `tierStrategies`), never written here: a platform team that changes a tier's steps in its
 * stack file changes the components, the outputs and this rule together.
 *
 * What a rule checks, per shape the class offers:
 * - canary: the background analysis (`canary.analysis`) names each template the rendered strategy's
 *   does (`success-rate`, cluster-scoped), and starts with the first weight: `startingStep` is one
 *   the library renders (right after the first `setWeight`, also behind the error-budget freeze's
 *   analysis step when the class has the freeze), and the step before it is the Rollout's first
 *   `setWeight`. Regulated: the Rollout's steps end as the rendered ones do from the approval on
 *   (`pause: {}`, then `setWeight: 100`).
 * - blue/green: each analysis the rendered strategy gates with the finite success rate
 *   (`postPromotionAnalysis`, and `prePromotionAnalysis` with a preview gate) names that template,
 *   cluster-scoped. Regulated: `autoPromotionEnabled: false`.
 * - a shape the class does not offer is refused, naming the components it does.
 * Weights, pauses and the error-budget freeze are not checked: the gate, not the weights, keeps a
 * bad version from most of the traffic, and the freeze needs the app's SLO, which only the app
 * knows (docs/tenants/admission.md).
 */

export const TIER_POLICY_NAMES: Record<ProdClass, string> = {
    standard: POLICY_NAMES.tierStandard,
    regulated: POLICY_NAMES.tierRegulated,
};

const clusterTemplates = (a: AnalysisRef | undefined): string[] => (a?.templates ?? []).filter((t) => t.clusterScope).map((t) => t.templateName);

/** The error-budget freeze moves the first weight back a step: the rendering of an app with an SLO. */
const WITH_SLO = { ...COMPONENT_APP, slo: { service: "app", name: "availability" } };

function canaryOf(plans: DeliveryPlan[], regulated: boolean): ClassAdmission["canary"] {
    const canaries = plans.map((p) => ("canary" in p.strategy ? p.strategy.canary : undefined)).filter((c) => c !== undefined);
    const first = canaries[0]!;
    const startingSteps = [...new Set(canaries.map((c) => c.analysis!.startingStep))].sort((a, b) => a - b);
    for (const c of canaries) {
        const k = c.analysis!.startingStep;
        if (!("setWeight" in c.steps[k - 1]) || c.steps.slice(0, k - 1).some((s) => "setWeight" in s)) {
            throw new Error(`the rendered canary's analysis does not start with its first weight (startingStep ${k})`);
        }
    }
    return { templates: clusterTemplates(first.analysis), startingSteps, ...(regulated ? { tail: tailOf(first.steps) } : {}) };
}

/** The steps from the last indefinite pause on: the approval and what follows it. */
function tailOf(steps: CanaryStep[]): TailStep[] {
    const at = steps.map((s) => "pause" in s && s.pause.duration === undefined).lastIndexOf(true);
    if (at < 0) {
        throw new Error("a regulated canary without its approval pause");
    }
    return steps.slice(at).map((s): TailStep => {
        if ("pause" in s && s.pause.duration === undefined) {
            return { pause: "indefinite" };
        }
        if ("setWeight" in s) {
            return { setWeight: s.setWeight };
        }
        throw new Error(`a step after the approval pause the rule cannot check: ${JSON.stringify(s)}`);
    });
}

function blueGreenOf(plan: DeliveryPlan, regulated: boolean): ClassAdmission["blueGreen"] {
    const b = "blueGreen" in plan.strategy ? plan.strategy.blueGreen : undefined;
    if (!b) {
        throw new Error("not a blue/green plan");
    }
    const analyses = (["prePromotionAnalysis", "postPromotionAnalysis"] as const).flatMap((field) => {
        const templates = clusterTemplates(b[field]);
        return templates.length > 0 ? [{ field, templates }] : [];
    });
    return { analyses, manualPromotion: regulated && b.autoPromotionEnabled === false };
}

/**
 * What the rules check, from the stack's strategies (`stackStrategies`): standard's action is the
 * stack's `delivery.prod.standard.admission` (default Audit), regulated is always Enforce, and
 * `policy.validationAction: Audit` makes both Audit.
 */
export function tierAdmission(strategies: readonly TierStrategy[], standardAction: TierAdmissionAction = "Audit"): TierAdmission {
    const classes: ClassAdmission[] = [];
    for (const prodClass of ["standard", "regulated"] as const) {
        const mine = strategies.filter((s) => s.tier === "prod" && s.prodClass === prodClass);
        if (mine.length === 0) {
            continue;
        }
        const regulated = prodClass === "regulated";
        const c: ClassAdmission = { prodClass, action: regulated ? "Enforce" : standardAction, components: {} };
        for (const s of mine) {
            c.components[s.shape] = s.id;
            const plan = componentPlan(s);
            if (s.shape === "canary") {
                const plans = [plan, ...(s.options.errorBudgetFreeze !== false ? [deliveryPlan(WITH_SLO, s.options)] : [])];
                c.canary = canaryOf(plans, regulated);
            } else {
                c.blueGreen = blueGreenOf(plan, regulated);
            }
        }
        classes.push(c);
    }
    return { classes };
}

/** The message of a class's rule for a shape: what is missing and the component that has it. */
export function tierMessage(c: ClassAdmission, shape: Shape): string {
    const use = (id: string) => `components: [<npm run delivery output>/${id}]`;
    const offered = Object.values(c.components).map(use).join(" or ");
    const id = c.components[shape];
    if (!id) {
        return `in a prod ${c.prodClass} namespace a Rollout must use a shape this class offers (${Object.keys(c.components).join(", ")}); add ${offered} to its overlay (ADR-056 D3)`;
    }
    const what =
        shape === "canary"
            ? `the shared success-rate gate as background analysis (${c.canary!.templates.join(", ")}, cluster-scoped) from its first setWeight` +
              (c.canary!.tail ? ", and the approval: its steps ending pause: {} then setWeight 100" : "")
            : `the finite success-rate gate (${c.blueGreen!.analyses.map((a) => `${a.field}: ${a.templates.join(", ")}`).join("; ")}, cluster-scoped)` +
              (c.blueGreen!.manualPromotion ? ", and the approval: autoPromotionEnabled: false" : "");
    return `in a prod ${c.prodClass} namespace a ${shape === "canary" ? "canary" : "blue/green"} Rollout must run ${what}; add ${use(id)} to its overlay (ADR-056 D3)`;
}

// ---------------------------------------------------------------------------------------------
// CEL (policies.kyverno.io/v1)

const CANARY = "object.spec.strategy.canary";
const BLUE_GREEN = "object.spec.strategy.blueGreen";

const celNames = (list: string, names: readonly string[]) =>
    names.map(
        (n) =>
            `(has(${list}) && ${list}.exists(t, has(t.templateName) && t.templateName == ${JSON.stringify(n)} && has(t.clusterScope) && t.clusterScope == true))`,
    );

/** CEL: the canary's background gate starts at step k, right after its first setWeight. */
function celStartsAt(k: number): string {
    const step = (i: number) => `${CANARY}.steps[${i}]`;
    return [
        `${CANARY}.analysis.startingStep == ${k}`,
        `size(${CANARY}.steps) >= ${k}`,
        `has(${step(k - 1)}.setWeight)`,
        ...Array.from({ length: k - 1 }, (_x, i) => `!has(${step(i)}.setWeight)`),
    ].join(" && ");
}

function celTail(tail: readonly TailStep[]): string {
    const n = tail.length;
    const step = (i: number) => `${CANARY}.steps[size(${CANARY}.steps) - ${n - i}]`;
    return [
        `size(${CANARY}.steps) >= ${n}`,
        ...tail.map((t, i) =>
            "pause" in t ? `has(${step(i)}.pause) && !has(${step(i)}.pause.duration)` : `has(${step(i)}.setWeight) && ${step(i)}.setWeight == ${t.setWeight}`,
        ),
    ].join(" && ");
}

export function celCanaryConforms(c: NonNullable<ClassAdmission["canary"]>): string {
    return [
        `has(${CANARY}.analysis)`,
        ...celNames(`${CANARY}.analysis.templates`, c.templates),
        `has(${CANARY}.analysis.startingStep)`,
        `has(${CANARY}.steps)`,
        `(${c.startingSteps.map((k) => `(${celStartsAt(k)})`).join(" || ")})`,
        ...(c.tail ? [`(${celTail(c.tail)})`] : []),
    ].join(" && ");
}

export function celBlueGreenConforms(b: NonNullable<ClassAdmission["blueGreen"]>): string {
    return (
        [
            ...b.analyses.flatMap((a) => [`has(${BLUE_GREEN}.${a.field})`, ...celNames(`${BLUE_GREEN}.${a.field}.templates`, a.templates)]),
            ...(b.manualPromotion ? [`has(${BLUE_GREEN}.autoPromotionEnabled) && ${BLUE_GREEN}.autoPromotionEnabled == false`] : []),
        ].join(" && ") || "true"
    );
}

const IS_CANARY = "has(object.spec.strategy) && has(object.spec.strategy.canary)";
const IS_BLUE_GREEN = "has(object.spec.strategy) && has(object.spec.strategy.blueGreen)";

/** The namespaces a class's rule applies to: the prod ones, and for regulated the regulated ones among them. */
function scopeOf(prodClass: ProdClass): Scope {
    return prodClass === "regulated" ? "prod-regulated" : "prod";
}

const withAction = (cfg: PolicyConfig, c: ClassAdmission): PolicyConfig => ({
    ...cfg,
    validationAction: cfg.validationAction === "Audit" ? "Audit" : c.action,
});

export function tierCelPolicies(cfg: PolicyConfig, ctx: PolicyContext): ValidatingPolicy[] {
    return (ctx.tiers?.classes ?? [])
        .filter((c) => c.prodClass !== "regulated" || cfg.regulated !== undefined)
        .map((c) => {
            const name = TIER_POLICY_NAMES[c.prodClass];
            const validation = (shape: Shape, is: string) => ({
                expression: `!(${is}) || (${c[shape] ? (shape === "canary" ? celCanaryConforms(c.canary!) : celBlueGreenConforms(c.blueGreen!)) : "false"})`,
                message: tierMessage(c, shape),
            });
            const acting = withAction(cfg, c);
            return {
                apiVersion: "policies.kyverno.io/v1",
                kind: "ValidatingPolicy",
                metadata: metadata(name, tierMessage(c, c.components.canary ? "canary" : "blueGreen")),
                spec: {
                    validationActions: validationActions(acting),
                    failurePolicy: "Fail",
                    evaluation: { background: { enabled: true } },
                    matchConstraints: { resourceRules: resourceRules([ROLLOUT]), namespaceSelector: namespaceSelector(cfg, scopeOf(c.prodClass)) },
                    matchConditions: [notTheController(ctx)],
                    validations: [validation("canary", IS_CANARY), validation("blueGreen", IS_BLUE_GREEN)],
                },
            };
        });
}

// ---------------------------------------------------------------------------------------------
// JMESPath (kyverno.io/v1). Numbers are compared as text (`to_string`): Kyverno's JSON context and
// a literal may hold one number as different Go types.

const J_CANARY = "request.object.spec.strategy.canary";
const J_BLUE_GREEN = "request.object.spec.strategy.blueGreen";

const jmesNames = (list: string, names: readonly string[]) => names.map((n) => `length(${list}[?templateName=='${n}' && clusterScope] || \`[]\`) > \`0\``);

function jmesStartsAt(k: number): string {
    const step = (i: number) => `${J_CANARY}.steps[${i}]`;
    return [
        `to_string(${J_CANARY}.analysis.startingStep) == '${k}'`,
        `${step(k - 1)}.setWeight != \`null\``,
        ...Array.from({ length: k - 1 }, (_x, i) => `${step(i)}.setWeight == \`null\``),
    ].join(" && ");
}

function jmesTail(tail: readonly TailStep[]): string {
    const n = tail.length;
    const step = (i: number) => `${J_CANARY}.steps[${i - n}]`;
    return tail
        .map((t, i) =>
            "pause" in t ? `${step(i)}.pause != \`null\` && ${step(i)}.pause.duration == \`null\`` : `to_string(${step(i)}.setWeight) == '${t.setWeight}'`,
        )
        .join(" && ");
}

export function jmesCanaryConforms(c: NonNullable<ClassAdmission["canary"]>): string {
    return [
        ...jmesNames(`${J_CANARY}.analysis.templates`, c.templates),
        `(${c.startingSteps.map((k) => `(${jmesStartsAt(k)})`).join(" || ")})`,
        ...(c.tail ? [`(${jmesTail(c.tail)})`] : []),
    ].join(" && ");
}

export function jmesBlueGreenConforms(b: NonNullable<ClassAdmission["blueGreen"]>): string {
    return (
        [
            ...b.analyses.flatMap((a) => jmesNames(`${J_BLUE_GREEN}.${a.field}.templates`, a.templates)),
            ...(b.manualPromotion ? [`${J_BLUE_GREEN}.autoPromotionEnabled == \`false\``] : []),
        ].join(" && ") || "`true`"
    );
}

export function tierClusterPolicies(cfg: PolicyConfig, ctx: PolicyContext): ClusterPolicy[] {
    return (ctx.tiers?.classes ?? [])
        .filter((c) => c.prodClass !== "regulated" || cfg.regulated !== undefined)
        .map((c) => {
            const acting = withAction(cfg, c);
            const rule = (shape: Shape) => {
                const is: Condition = { key: `{{ ${shape === "canary" ? J_CANARY : J_BLUE_GREEN} != \`null\` }}`, operator: "Equals", value: true };
                // A shape the class does not offer is refused whole: Kyverno refuses a policy whose
                // variable is a bare literal such as {{ `false` }} (e2e engine-kyverno-cli).
                const conforms = c[shape] ? (shape === "canary" ? jmesCanaryConforms(c.canary!) : jmesBlueGreenConforms(c.blueGreen!)) : undefined;
                const base = clusterRule(cfg, shape.toLowerCase(), ROLLOUT, { scope: scopeOf(c.prodClass) });
                const fails: Condition[] = conforms === undefined ? [] : [{ key: `{{ ${conforms} }}`, operator: "Equals", value: false }];
                return denyRule(acting, base, tierMessage(c, shape), { all: [is, ...fails] });
            };
            const policy = clusterValidating(acting, TIER_POLICY_NAMES[c.prodClass], tierMessage(c, c.components.canary ? "canary" : "blueGreen"), [
                rule("canary"),
                rule("blueGreen"),
            ]);
            return {
                ...policy,
                spec: {
                    ...policy.spec,
                    // An audited violation is also a warning in the response, as a CEL policy's Audit, Warn.
                    ...(acting.validationAction === "Audit" ? { emitWarning: true } : {}),
                    webhookConfiguration: { matchConditions: [notTheController(ctx)] },
                },
            };
        });
}
