import type { PolicyConfig } from "./config";
import { AnalysisRef, COMPONENT_APP, CanaryStep, CanaryStrategy, PREVIEW_HEADER_VALUE, ProdClass, Shape, TierStrategy } from "../delivery";
import { type TierAdmissionAction, componentPlan, deliveryPlan } from "../delivery";
import { POLICY_NAMES, PolicyContext, notTheController } from "./builders";
import { Check, Cond, Field, Rule, and, eq, field, has, not, obj, or } from "./rule";
import type { ClassAdmission, TailStep, TierAdmission } from "./tierTypes";
import { HTTPROUTE, ROLLOUT } from "./workloads";

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
 * - what would switch the gate or the approval off (`holes`, `previewRoute`).
 * Standard's weights, the pauses and the error-budget freeze are not checked: the gate keeps a bad
 * version from most of the traffic, and the freeze needs the app's SLO, which only the app knows
 * (docs/tenants/admission.md).
 */

export const TIER_POLICY_NAMES: Record<ProdClass, string> = { standard: POLICY_NAMES.tierStandard, regulated: POLICY_NAMES.tierRegulated };

const clusterTemplates = (a: AnalysisRef | undefined): string[] => (a?.templates ?? []).filter((t) => t.clusterScope).map((t) => t.templateName);

const PROMOTION_ANALYSES = ["prePromotionAnalysis", "postPromotionAnalysis"] as const;

/** The error-budget freeze moves the first weight back a step: the rendering of an app with an SLO. */
const WITH_SLO = { ...COMPONENT_APP, slo: { service: "app", name: "availability" } };

/** The highest weight the steps reach before the approval tail (0: none); the tail's own weight is 100 and above it. */
export function maxBeforeApproval(steps: CanaryStep[], tail: number): number {
    return Math.max(0, ...steps.slice(0, steps.length - tail).flatMap((s) => ("setWeight" in s ? [s.setWeight] : [])));
}

/** The leaves of an argument's `valueFrom`, each by its path (`valueFrom.fieldRef.fieldPath`, `valueFrom.podTemplateHashValue`). */
const leaves = (o: object, path: string[]): { path: string[]; value: string }[] =>
    Object.entries(o).flatMap(([k, v]) => (typeof v === "object" && v !== null ? leaves(v, [...path, k]) : [{ path: [...path, k], value: String(v) }]));

/** The gates' arguments the rendered strategy takes from the Rollout (argoRollouts.ts SHARED_TEMPLATE_ARGS), once each. */
function gateArgs(refs: (AnalysisRef | undefined)[]): ClassAdmission["gateArgs"] {
    const all = refs.flatMap((r) => r?.args ?? []).flatMap((a) => (a.valueFrom ? leaves(a.valueFrom, ["valueFrom"]).map((l) => ({ name: a.name, ...l })) : []));
    return [...new Map(all.map((a) => [JSON.stringify(a), a])).values()];
}

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
    const environment = strategies.find((s) => s.tier === "prod")?.name ?? "prod";
    const classes = (["standard", "regulated"] as const).map((prodClass) => {
        const regulated = prodClass === "regulated";
        const c: ClassAdmission = { prodClass, environment, action: regulated ? "Enforce" : standardAction, components: {}, gateArgs: [] };
        const gates: (AnalysisRef | undefined)[] = [];
        for (const s of strategies.filter((x) => x.tier === "prod" && x.prodClass === prodClass)) {
            c.components[s.shape] = s.id;
            const { strategy, previewGate } = componentPlan(s);
            if ("canary" in strategy) {
                const freeze = s.options.errorBudgetFreeze !== false ? [deliveryPlan(WITH_SLO, s.options).strategy as CanaryStrategy] : [];
                const { analysis, steps } = strategy.canary;
                const startingSteps = [strategy, ...freeze].map((x) => x.canary.analysis!.startingStep);
                const tail = regulated ? tailOf(steps) : undefined;
                c.canary = {
                    templates: clusterTemplates(analysis),
                    startingSteps: [...new Set(startingSteps)].sort((a, b) => a - b),
                    ...(tail ? { tail, maxBeforeApproval: maxBeforeApproval(steps, tail.length) } : {}),
                };
                gates.push(analysis);
            } else {
                const b = strategy.blueGreen;
                c.blueGreen = {
                    analyses: PROMOTION_ANALYSES.map((field) => ({ field, templates: clusterTemplates(b[field]) })).filter((a) => a.templates.length > 0),
                    manualPromotion: regulated && b.autoPromotionEnabled === false,
                    preview: {
                        suffix: b.previewService.slice(COMPONENT_APP.name.length),
                        ...(previewGate && "header" in previewGate ? { header: previewGate.header } : {}),
                    },
                };
                gates.push(...c.blueGreen.analyses.map((a) => b[a.field]));
            }
        }
        c.gateArgs = gateArgs(gates);
        return c;
    });
    return { classes: classes.filter((c) => Object.keys(c.components).length > 0) };
}

/** Where a class's rule applies, in the platform's name of the prod tier. */
const where = (c: ClassAdmission) => `in a ${c.environment} ${c.prodClass} namespace`;

/** The message of a class's rule for a shape: what is missing and the component that has it. */
export function tierMessage(c: ClassAdmission, shape: Shape): string {
    const use = (id: string) => `components: [<npm run delivery output>/${id}]`;
    const offered = Object.values(c.components).map(use).join(" or ");
    const id = c.components[shape];
    if (!id) {
        return `${where(c)} a Rollout must use a shape this class offers (${Object.keys(c.components).join(", ")}); add ${offered} to its overlay (ADR-056 D3)`;
    }
    const what =
        shape === "canary"
            ? `the shared success-rate gate as background analysis (${c.canary!.templates.join(", ")}, cluster-scoped) from its first setWeight` +
              (c.canary!.tail ? ", and the approval: its steps ending pause: {} then setWeight 100" : "")
            : `the finite success-rate gate (${c.blueGreen!.analyses.map((a) => `${a.field}: ${a.templates.join(", ")}`).join("; ")}, cluster-scoped)` +
              (c.blueGreen!.manualPromotion ? ", and the approval: autoPromotionEnabled: false" : "");
    return `${where(c)} a ${shape === "canary" ? "canary" : "blue/green"} Rollout must run ${what}; add ${use(id)} to its overlay (ADR-056 D3)`;
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

/** The analyses a class's gate runs in: the canary's background analysis, blue/green's pre- and post-promotion ones. */
const gateFields = (c: ClassAdmission): string[][] => [
    ...(c.canary ? [[...CANARY, "analysis"]] : []),
    ...(c.blueGreen?.analyses ?? []).map((a) => [...BLUE_GREEN, a.field]),
];
const listed = (f: Field): Cond => ({ some: f, where: true });

/**
 * The refusals beside a shape's conformance, each naming its field:
 * - any `dryRun` entry ("*" or a metric's name) in a canary's background or step analysis or a
 *   blue/green one: a dry-run metric never sets its run's phase, so the gate cannot fail
 *   (argoproj/argo-rollouts analysis/analysis.go v1.9.0, runMeasurements and assessRunStatus);
 * - a gate argument the rendered gates take from the Rollout (`valueFrom`) read from elsewhere:
 *   `valueFrom` wins over `value`, and `podTemplateHashValue: Stable` is the stable ReplicaSet's
 *   hash (argoproj/argo-rollouts utils/analysis/factory.go v1.9.0, BuildArgumentsForRolloutAnalysisRun),
 *   so the gate would measure the old version or another workload;
 * - regulated: a weight before the approval above the rendered steps' (the tail's own 100 is the one
 *   weight above it the steps may hold, its place checked by `canaryConforms`), or any
 *   `trafficRouting.maxTrafficWeight`, which turns each weight into a larger share
 *   (pkg/apis/rollouts/v1alpha1/types.go v1.9.0); and `spec.workloadRef`, whose pod template the
 *   controller reads from a Deployment no guard covers (rollout/templateref.go v1.9.0, Resolve).
 */
export function holes(c: ClassAdmission): Check[] {
    const args = c.gateArgs.map((a) => `${a.name} ${a.path.join(".")}: ${a.value}`).join(", ");
    const max = c.canary?.maxBeforeApproval;
    const weight = field("item", "setWeight");
    return [
        {
            id: "dry-run",
            deny: or(
                ...[
                    [...CANARY, "analysis"],
                    [...BLUE_GREEN, "prePromotionAnalysis"],
                    [...BLUE_GREEN, "postPromotionAnalysis"],
                ].map((p) => listed(obj([...p, "dryRun"]))),
                { some: obj([...CANARY, "steps"]), where: listed(field("item", ["analysis", "dryRun"])) },
            ),
            message: `${where(c)} a Rollout's analysis must not set dryRun (spec.strategy.canary.analysis.dryRun, spec.strategy.canary.steps[].analysis.dryRun, spec.strategy.blueGreen.prePromotionAnalysis.dryRun, spec.strategy.blueGreen.postPromotionAnalysis.dryRun): a dry-run metric never fails its run, so the gate could not stop a bad version (ADR-056 D3)`,
        },
        {
            id: "gate-args",
            deny: or(
                ...gateFields(c).map((f) => ({
                    some: obj([...f, "args"]),
                    where: or(...c.gateArgs.map((a) => and(eq(field("item", "name"), a.name), not(eq(field("item", a.path), a.value))))),
                })),
            ),
            message: `${where(c)} the gate's arguments (spec.strategy.canary.analysis.args, spec.strategy.blueGreen.*PromotionAnalysis.args) must come from the Rollout itself as the components write them (${args}): a Stable hash measures the old version, a literal another workload (ADR-056 D3, D5)`,
        },
        ...(max === undefined
            ? []
            : [
                  {
                      id: "weights",
                      deny: and(
                          has(obj(CANARY)),
                          or(has(obj([...CANARY, "trafficRouting", "maxTrafficWeight"])), {
                              count: obj([...CANARY, "steps"]),
                              where: and(has(weight), not({ lt: weight, than: max + 1 })),
                              over: 1,
                          }),
                      ),
                      message: `${where(c)} no canary weight before the approval pause may exceed the tier's ${max} (spec.strategy.canary.steps[].setWeight), and spec.strategy.canary.trafficRouting.maxTrafficWeight must not be set: an unapproved version would serve more traffic than the tier's steps while it waits for the approver (ADR-056 D3)`,
                  },
              ]),
        ...(c.prodClass === "regulated"
            ? [
                  {
                      id: "workload-ref",
                      deny: has(obj("spec.workloadRef")),
                      message: `${where(c)} a Rollout must carry its own pod template (spec.template), not spec.workloadRef: the controller reads a referenced Deployment's template, which the approval guard does not cover, so a change to it would start an unapproved version (ADR-056 D3)`,
                  },
              ]
            : []),
    ].map((check) => ({ ...check, on: [{ kind: ROLLOUT }] }));
}

/**
 * A blue/green app's production traffic stays off its preview Service: the Rollout's preview Service
 * is named as the components name it (`<app>-preview`, kustomize's name suffix after it allowed) and
 * its active one is not, and a route rule that sends requests to a Service of that name must match
 * only requests with the class's preview header (routes.ts previewHeaderRule), or, without a header
 * gate, none. The route is judged when it is written, whatever order ArgoCD syncs it in.
 */
export function previewRoute(c: ClassAdmission): Check[] {
    if (!c.blueGreen) return [];
    const { suffix, header } = c.blueGreen.preview;
    const re = `${suffix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(-|$)`;
    const named = (f: Field): Cond => ({ matches: f, re });
    const gated = (m: Field): Cond =>
        header ? { some: m, where: and(eq(field("item", "name"), header), eq(field("item", "value"), PREVIEW_HEADER_VALUE)) } : false;
    const form = `<app>${suffix}`;
    return [
        {
            id: "preview-service",
            on: [{ kind: ROLLOUT }],
            deny: and(has(obj(BLUE_GREEN)), or(not(named(obj([...BLUE_GREEN, "previewService"]))), named(obj([...BLUE_GREEN, "activeService"])))),
            message: `${where(c)} a blue/green Rollout's spec.strategy.blueGreen.previewService must be named as the components name it (${form}) and its activeService must not be: the route rule that admits the preview is read by that name (ADR-056 D3, D4)`,
        },
        {
            id: "preview-route",
            on: [{ kind: HTTPROUTE }],
            deny: {
                some: obj("spec.rules"),
                where: and(
                    { some: field("item", "backendRefs"), where: named(field("item", "name")) },
                    or(not(has(field("item", "matches"))), { some: field("item", "matches"), where: not(gated(field("item", "headers"))) }),
                ),
            },
            message:
                `${where(c)} an HTTPRoute rule whose spec.rules[].backendRefs[].name is a preview Service (${form}) must match ` +
                (header
                    ? `only requests with ${header}: ${PREVIEW_HEADER_VALUE} (the components' preview rule)`
                    : "no request (this class has no preview gate)") +
                `: production traffic would reach a version before its promotion (ADR-056 D3, D4)`,
        },
    ];
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
            checks: [
                ...(["canary", "blueGreen"] as const).map((shape) => ({
                    id: shape.toLowerCase(),
                    on: [{ kind: ROLLOUT }],
                    deny: and(
                        has(obj(shape === "canary" ? CANARY : BLUE_GREEN)),
                        not(c[shape] ? (shape === "canary" ? canaryConforms(c.canary!) : blueGreenConforms(c.blueGreen!)) : false),
                    ),
                    message: tierMessage(c, shape),
                })),
                ...holes(c),
                ...previewRoute(c),
            ],
        }));
}
