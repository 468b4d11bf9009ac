import { readSection } from "../config/declare";
import { ConfigReader, Plain, isPlainObject } from "../config/reader";
import {
    DELIVERY_DEFAULTS,
    DELIVERY_FIELDS,
    DeliveryConfig,
    PreviewGateKind,
    ProdClassConfig,
    REGULATED_FIELDS,
    STANDARD_FIELDS,
    TierAdmissionAction,
} from "./fields";
import { OptionProblem, defaultStepPause, optionProblems, tierStrategies } from "./strategy";
import { ApprovalGroups, GateTiming, PROD_CLASSES, ProdClass, SHAPES, Shape, StrategyOptions, TierStrategy } from "./types";

/**
 * The reader of the `delivery` section (fields.ts declares it): each key by its declaration, then each
 * prod class's options by the library's own rules with the cluster's gate timing, so a stack file is
 * refused for exactly what the library would refuse, named by the key that set it.
 */

/** The `delivery` key each library option is set by, under `delivery.prod.<class>`. */
const KEY_OF: Partial<Record<OptionProblem["option"], keyof ProdClassConfig>> = { steps: "steps", stepPause: "stepPause", autoPromotion: "autoPromotion" };

export function readDelivery(r: ConfigReader, value: unknown, gate: GateTiming): DeliveryConfig | undefined {
    const s = readSection(r, "delivery", DELIVERY_FIELDS, value);
    if (!s) {
        return undefined;
    }
    const rawProd = isPlainObject(s.raw.prod) ? s.raw.prod : {};
    const prod = {} as Record<ProdClass, ProdClassConfig>;
    for (const prodClass of PROD_CLASSES) {
        const c = readProdClass(r, prodClass, s.prod[prodClass], isPlainObject(rawProd[prodClass]) ? rawProd[prodClass] : {}, gate);
        if (!c) {
            return undefined;
        }
        prod[prodClass] = c;
    }
    return { dev: s.dev, test: s.test, preprod: s.preprod, prod };
}

/** The values the generic reader gave one class, completed (steps, stepPause) and checked with the library's rules. */
function readProdClass(
    r: ConfigReader,
    prodClass: ProdClass,
    read: {
        shapes: string[];
        autoPromotion: boolean;
        previewGate: PreviewGateKind;
        previewHeader?: string;
        errorBudgetFreeze: boolean;
        admission?: TierAdmissionAction;
    },
    raw: Plain,
    gate: GateTiming,
): ProdClassConfig | undefined {
    const key = (k: string) => `delivery.prod.${prodClass}.${k}`;
    const fields = prodClass === "standard" ? STANDARD_FIELDS : REGULATED_FIELDS;
    const steps = raw.steps === undefined || raw.steps === null ? [...DELIVERY_DEFAULTS.prod[prodClass].steps] : raw.steps;
    if (!Array.isArray(steps)) {
        r.problem(key("steps"), steps, `must be a list of ${fields.steps.type}: canary weights in percent, ascending, ending at 100`);
        return undefined;
    }
    // The Pulumi CLI hands scalars over as text: "25" is 25, anything else stays as given for the rule below.
    const weights = steps.map((w) => (typeof w === "string" && /^[0-9]+$/.test(w) ? Number(w) : w)) as number[];
    let stepPause: string | undefined;
    if (raw.stepPause !== undefined && raw.stepPause !== null) {
        stepPause = r.string(key("stepPause"), raw.stepPause, fields.stepPause.rule);
        if (stepPause === undefined) {
            return undefined;
        }
    }
    // The reader has refused any other name and dropped a repeated one.
    const shapes = read.shapes.filter((x): x is Shape => (SHAPES as readonly string[]).includes(x));
    const options: StrategyOptions = {
        tier: "prod",
        prodClass,
        steps: weights,
        gate,
        autoPromotion: read.autoPromotion,
        ...(stepPause !== undefined ? { stepPause } : {}),
        ...(read.previewGate === "header" && read.previewHeader !== undefined ? { previewGate: { header: read.previewHeader } } : {}),
    };
    for (const p of optionProblems(options)) {
        const k = KEY_OF[p.option];
        if (k !== undefined) {
            r.problem(key(k), p.given, p.allowed);
        }
    }
    return {
        shapes,
        steps: weights,
        stepPause: stepPause ?? defaultStepPause(gate),
        autoPromotion: read.autoPromotion,
        previewGate: read.previewGate,
        previewHeader: read.previewHeader ?? DELIVERY_DEFAULTS.prod[prodClass].previewHeader,
        errorBudgetFreeze: read.errorBudgetFreeze,
        ...(read.admission !== undefined ? { admission: read.admission } : {}),
    };
}

/** What `stackStrategies` reads of a stack's configuration. */
export interface StrategiesConfig {
    delivery: DeliveryConfig;
    analysis: GateTiming;
    policy: { regulated?: ApprovalGroups };
}

/**
 * The strategies a stack configures (`tierStrategies` with its gate timing and its
 * `policy.regulated` groups): what the stack output `deliveryStrategies` shows and what
 * `npm run delivery` renders.
 */
export function stackStrategies(c: StrategiesConfig): TierStrategy[] {
    const regulated = c.policy.regulated;
    const gate: GateTiming = { initialDelay: c.analysis.initialDelay, interval: c.analysis.interval };
    return tierStrategies(
        c.delivery,
        gate,
        regulated ? { approverGroups: [...regulated.approverGroups], deployerGroups: [...regulated.deployerGroups] } : undefined,
    );
}
