import { Fields, JsonSchema, Values, defaultsOf, field } from "../config/declare";
import { DNS_LABEL } from "../config/reader";
import { PAUSE_RULE } from "../rollouts/config/patterns";
import { HEADER_NAME, LowerTier, PREVIEW_HEADER, ProdClass, SHAPES, Shape, Tier } from "./types";

/**
 * The stack's `delivery` section (ADR-056 D3: the strategy is a tier property), per tier and per prod
 * class: the library takes its defaults from here, so a platform team changes a tier in its stack
 * file. The defaults are what ADR-056 proved (25 -> 50 -> 100 under the success-rate gate, regulated
 * approves before 100%); the rules between keys are the library's `optionProblems` (config.ts).
 */

/** A lower tier: always the trivial auto-promoting canary (D3); its name and whether it routes through the plugin (D4) are the platform's choice. */
export type LowerTierConfig = { name: string; trafficRouting: boolean };

/** What the tier admission rule of a class does with a Rollout that does not conform (components/policy/tierAdmission.ts). */
export type TierAdmissionAction = "Enforce" | "Audit";

/** One prod class as read: its shapes (one component each), its canary's weights and pause (from the gate timing when unset), its gates; `admission`: standard only. */
export type ProdClassConfig = Omit<Values<typeof STANDARD_FIELDS, "steps" | "stepPause" | "previewHeader">, "shapes" | "admission"> & {
    shapes: Shape[];
    admission?: TierAdmissionAction;
};
export type DeliveryConfig = Record<LowerTier, LowerTierConfig> & { prod: Record<ProdClass, ProdClassConfig> & { name: string } };

/**
 * The most weights a canary takes. The Rollout CRD sets no limit on spec.strategy.canary.steps
 * (argoproj/argo-rollouts manifests/crds/rollout-crd.yaml v1.9.0): the limit is ours, each weight
 * a step and a pause, so 20 already holds 40 steps and more is a typo or a loop's output.
 */
export const MAX_WEIGHTS = 20;
const STEPS_SCHEMA: JsonSchema = { type: "array", items: { type: "integer", minimum: 1, maximum: 100 }, minItems: 2, maxItems: MAX_WEIGHTS };

const TIER_NAME = "a DNS label (at most 63 lowercase letters, digits, '-') not ending in -standard or -regulated, and no other tier's name";
/** The platform's own name of an ADR-056 tier: its components, its entries in deliveryStrategies and its admission messages carry it. */
const nameField = (tier: Tier) =>
    field.string({
        // A lower tier called `live-standard` would write its canary into `live-standard-canary`, prod's standard folder.
        rule: { pattern: DNS_LABEL, maxLength: 63, valid: (v) => !/-(standard|regulated)$/.test(v), describe: TIER_NAME },
        default: tier,
        doc: `what the platform calls its ${tier} environment (delivery.preprod.name: staging): the tier's components, deliveryStrategies entries and admission messages say it`,
    });

const lowerTierFields = (tier: LowerTier) =>
    ({
        name: nameField(tier),
        trafficRouting: field.boolean({
            default: true,
            doc: `${tier}: route through the Gateway API plugin (the component adds stable and canary Services and puts both on the app's HTTPRoute); false: the replica-based canary, for apps without an HTTPRoute`,
        }),
    }) as const;

const prodClassFields = (prodClass: ProdClass) =>
    ({
        shapes: field.strings({
            rule: { oneOf: SHAPES, describe: SHAPES.join(", ") },
            default: [...SHAPES],
            size: { min: 1, max: 2 },
            doc: `the shapes prod / ${prodClass} apps may use (canary, blueGreen): one component each`,
        }),
        steps: field.custom<number[], true>({
            type: "list of integers",
            schema: STEPS_SCHEMA,
            default: [25, 50, 100],
            doc: "2 to 20 canary weights in percent, ascending, ending at 100: the gate measures those below 100 (ADR-056 proved 25 -> 50 -> 100)",
        }),
        stepPause: field.string({
            rule: PAUSE_RULE,
            defaultDoc: "analysis.initialDelay + analysis.interval (6m with their defaults)",
            doc: "how long each canary weight holds before the next: at least analysis.initialDelay + analysis.interval, so the background gate has measured it",
        }),
        autoPromotion: field.boolean({
            default: prodClass === "standard",
            doc:
                prodClass === "standard"
                    ? "true: a canary reaches 100% and a blue/green switches by itself once the gate allows; false: an approver promotes (pause before 100%, autoPromotionEnabled: false)"
                    : "must stay false: a regulated app waits for an approver before 100% (canary) or the switch (blue/green) (ADR-056 D3, ADR-049)",
        }),
        previewGate: field.oneOf(["none", "header"], {
            default: "none",
            describe: "",
            doc: "blue/green: header routes requests carrying previewHeader: true to the preview Service and gates the new version on them before the switch; none: the gate runs after the switch only",
        }),
        previewHeader: field.string({
            rule: HEADER_NAME,
            default: PREVIEW_HEADER,
            when: (s) => s.previewGate === "header",
            doc: "the header of the header preview gate (only with previewGate: header)",
        }),
        errorBudgetFreeze: field.boolean({
            default: true,
            doc: "apps that authored an SLO and are not critical wait for their error budget before any traffic moves (canary) or before the switch (blue/green) (D6)",
        }),
    }) as const;

export const STANDARD_FIELDS = {
    ...prodClassFields("standard"),
    admission: field.oneOf(["Audit", "Enforce"], {
        default: "Audit",
        describe: "",
        doc: "what the admission rule require-prod-standard-delivery does with a Rollout in a prod namespace that lacks this class's success-rate gate: Audit (report and warn) or Enforce (refuse); regulated is always enforced, and policy.validationAction Audit makes both Audit",
    }),
} as const;

/** The `delivery` section: every key, once. */
export const DELIVERY_FIELDS = {
    dev: field.section({ doc: "dev: the auto-promoting canary (setWeight 100, no analysis)", fields: lowerTierFields("dev") }),
    test: field.section({ doc: "test: the auto-promoting canary (setWeight 100, no analysis)", fields: lowerTierFields("test") }),
    preprod: field.section({ doc: "preprod: the auto-promoting canary (setWeight 100, no analysis)", fields: lowerTierFields("preprod") }),
    prod: field.section({
        doc: "prod, per class: standard (the metric gate) and regulated (the metric gate and an approver)",
        fields: {
            name: nameField("prod"),
            standard: field.section({
                doc: "prod / standard: stepped canary or blue/green under the success-rate gate, aborted on a breach",
                fields: STANDARD_FIELDS,
            }),
            regulated: field.section({
                doc: "prod / regulated: as standard, and an approver continues before 100% (the platform binds its approver and deployer roles to policy.regulated's groups); only with policy.regulated",
                fields: prodClassFields("regulated"),
            }),
        },
    }),
} as const satisfies Fields;

/** Every default of the section, in one object (stepPause follows the cluster's gate timing). */
export const DELIVERY_DEFAULTS = defaultsOf(DELIVERY_FIELDS);
