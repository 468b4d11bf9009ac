import type { PolicyConfig } from "./config";
import { componentPlan, COMPONENT_APP } from "../delivery/kustomize";
import { AnalysisRef, CanaryStep, CanaryStrategy, TierStrategy, deliveryPlan } from "../delivery";
import type { ProdClass, Shape } from "../delivery";
import type { TierAdmissionAction } from "../delivery/fields";
import { POLICY_NAMES, PolicyContext, notTheController } from "./builders";
import { Cond, Rule, and, eq, field, has, not, obj, or } from "./rule";
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

export const TIER_POLICY_NAMES: Record<ProdClass, string> = { standard: POLICY_NAMES.tierStandard, regulated: POLICY_NAMES.tierRegulated };

const clusterTemplates = (a: AnalysisRef | undefined): string[] => (a?.templates ?? []).filter((t) => t.clusterScope).map((t) => t.templateName);

/** The error-budget freeze moves the first weight back a step: the rendering of an app with an SLO. */
const WITH_SLO = { ...COMPONENT_APP, slo: { service: "app", name: "availability" } };

/** The steps from the last indefinite pause on: the approval and what follows it. */
function tailOf(steps: CanaryStep[]): TailStep[] {
    const indefinite = (s: CanaryStep) => "pause" in s && s.pause.duration === undefined;
    const tail = steps.slice(steps.map(indefinite).lastIndexOf(true));
    if (!indefinite(tail[0]) || tail.some((s) => !indefinite(s) && !("setWeight" in s))) {
        throw new Error(`a regulated canary's steps the rule cannot check from the approval on: ${JSON.stringify(tail)}`);
    }
    return tail.map((s): TailStep => ("setWeight" in s ? { setWeight: s.setWeight } : { pause: "indefinite" }));
}

/**
 * What the rules check, from the stack's strategies (`stackStrategies`): standard's action is the
 * stack's `delivery.prod.standard.admission` (default Audit), regulated's always Enforce.
 */
export function tierAdmission(strategies: readonly TierStrategy[], standardAction: TierAdmissionAction = "Audit"): TierAdmission {
    const classes = (["standard", "regulated"] as const).map((prodClass) => {
        const regulated = prodClass === "regulated";
        const c: ClassAdmission = { prodClass, action: regulated ? "Enforce" : standardAction, components: {} };
        for (const s of strategies.filter((x) => x.tier === "prod" && x.prodClass === prodClass)) {
            c.components[s.shape] = s.id;
            const { strategy } = componentPlan(s);
            if ("canary" in strategy) {
                const freeze = s.options.errorBudgetFreeze !== false ? [deliveryPlan(WITH_SLO, s.options).strategy as CanaryStrategy] : [];
                const { analysis, steps } = strategy.canary;
                const startingSteps = [strategy, ...freeze].map((x) => x.canary.analysis!.startingStep);
                c.canary = {
                    templates: clusterTemplates(analysis),
                    startingSteps: [...new Set(startingSteps)].sort((a, b) => a - b),
                    ...(regulated ? { tail: tailOf(steps) } : {}),
                };
            } else {
                const b = strategy.blueGreen;
                const analyses = (["prePromotionAnalysis", "postPromotionAnalysis"] as const).map((field) => ({
                    field,
                    templates: clusterTemplates(b[field]),
                }));
                c.blueGreen = { analyses: analyses.filter((a) => a.templates.length > 0), manualPromotion: regulated && b.autoPromotionEnabled === false };
            }
        }
        return c;
    });
    return { classes: classes.filter((c) => Object.keys(c.components).length > 0) };
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

const CANARY = ["spec", "strategy", "canary"];
const BLUE_GREEN = ["spec", "strategy", "blueGreen"];

/** The list at `path` names each template, cluster-scoped. */
const names = (path: string[], templates: readonly string[]): Cond[] =>
    templates.map((n) => ({ some: obj(path), where: and(eq(field("item", "templateName"), n), eq(field("item", "clusterScope"), true)) }));

/** A Rollout's canary as the class's rendered one: its background gate from the first weight, and for regulated its approval tail. */
export function canaryConforms(c: NonNullable<ClassAdmission["canary"]>): Cond {
    const step = (i: number, key: string) => obj([...CANARY, "steps", i, key]);
    const startsAt = (k: number) =>
        and(
            eq(obj([...CANARY, "analysis", "startingStep"]), k),
            has(step(k - 1, "setWeight")),
            ...Array.from({ length: k - 1 }, (_x, i) => not(has(step(i, "setWeight")))),
        );
    const n = c.tail?.length ?? 0;
    return and(
        has(obj([...CANARY, "analysis"])),
        ...names([...CANARY, "analysis", "templates"], c.templates),
        or(...c.startingSteps.map(startsAt)),
        ...(c.tail ?? []).map((t, i) =>
            "pause" in t
                ? and(has(step(i - n, "pause")), not(has(obj([...CANARY, "steps", i - n, "pause", "duration"]))))
                : eq(step(i - n, "setWeight"), t.setWeight),
        ),
    );
}

export function blueGreenConforms(b: NonNullable<ClassAdmission["blueGreen"]>): Cond {
    return and(
        ...b.analyses.flatMap((a) => [has(obj([...BLUE_GREEN, a.field])), ...names([...BLUE_GREEN, a.field, "templates"], a.templates)]),
        b.manualPromotion ? eq(obj([...BLUE_GREEN, "autoPromotionEnabled"]), false) : true,
    );
}

/** A class's rule; `policy.validationAction: Audit` makes both classes Audit. */
export function tierRules(cfg: PolicyConfig, ctx: PolicyContext): Rule[] {
    return (ctx.tiers?.classes ?? [])
        .filter((c) => c.prodClass !== "regulated" || cfg.regulated !== undefined)
        .map((c) => ({
            name: TIER_POLICY_NAMES[c.prodClass],
            description: tierMessage(c, c.components.canary ? "canary" : "blueGreen"),
            // The namespaces a class's rule applies to: the prod ones, and for regulated the regulated ones among them.
            scope: c.prodClass === "regulated" ? "prod-regulated" : "prod",
            background: true,
            action: cfg.validationAction === "Audit" ? "Audit" : c.action,
            when: [notTheController(ctx)],
            checks: (["canary", "blueGreen"] as const).map((shape) => ({
                id: shape.toLowerCase(),
                on: [{ kind: ROLLOUT }],
                deny: and(
                    has(obj(shape === "canary" ? CANARY : BLUE_GREEN)),
                    not(c[shape] ? (shape === "canary" ? canaryConforms(c.canary!) : blueGreenConforms(c.blueGreen!)) : false),
                ),
                message: tierMessage(c, shape),
            })),
        }));
}
