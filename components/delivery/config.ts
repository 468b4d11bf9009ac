import { readSection, type Values } from "../config/declare";
import { ConfigReader, Plain, absent, isPlainObject } from "../config/reader";
import { DELIVERY_DEFAULTS, DELIVERY_FIELDS, DeliveryConfig, ProdClassConfig, STANDARD_FIELDS } from "./fields";
import { defaultStepPause, optionProblems, tierStrategies } from "./strategy";
import { GateTiming, PROD_CLASSES, ProdClass, SHAPES, Shape, StrategyOptions, TIERS, TierStrategy } from "./types";

/**
 * The reader of the `delivery` section (fields.ts declares it): each key by its declaration, then each
 * prod class's options by the library's own rules with the cluster's gate timing, so a stack file is
 * refused for exactly what the library would refuse, named by the key that set it.
 */
export function readDelivery(r: ConfigReader, value: unknown, gate: GateTiming): DeliveryConfig | undefined {
    const s = readSection(r, "delivery", DELIVERY_FIELDS, value);
    if (!s) return undefined;
    const rawProd = isPlainObject(s.raw.prod) ? s.raw.prod : {};
    const prod = {} as Record<ProdClass, ProdClassConfig>;
    for (const prodClass of PROD_CLASSES) {
        const key = (k: string) => `delivery.prod.${prodClass}.${k}`;
        const read: Partial<Values<typeof STANDARD_FIELDS>> & Omit<Values<typeof STANDARD_FIELDS>, "admission"> = s.prod[prodClass];
        const raw = isPlainObject(rawProd[prodClass]) ? rawProd[prodClass] : {};
        const steps = raw.steps ?? [...DELIVERY_DEFAULTS.prod[prodClass].steps];
        // The Pulumi CLI hands scalars over as text: "25" is 25, anything else (a list's too) stays as given for the rule below.
        const weights = (Array.isArray(steps) ? steps.map((w) => (typeof w === "string" && /^[0-9]+$/.test(w) ? Number(w) : w)) : steps) as number[];
        // A prod class's options alone: what optionProblems finds is a steps, stepPause or autoPromotion problem.
        const options: StrategyOptions = { tier: "prod", prodClass, steps: weights, gate, autoPromotion: read.autoPromotion, stepPause: read.stepPause };
        for (const p of optionProblems(options)) r.problem(key(p.option), p.given, p.allowed);
        if (raw.previewHeader !== undefined && read.previewGate !== "header") {
            r.problem(key("previewHeader"), raw.previewHeader, `only applies with ${key("previewGate")}: header, the gate that reads it`);
        }
        prod[prodClass] = {
            ...read,
            // The reader has refused any other name and dropped a repeated one.
            shapes: read.shapes.filter((x): x is Shape => (SHAPES as readonly string[]).includes(x)),
            steps: weights,
            stepPause: read.stepPause ?? defaultStepPause(gate),
            previewHeader: read.previewHeader ?? DELIVERY_DEFAULTS.prod[prodClass].previewHeader,
        };
    }
    // One name per tier (D3 keeps four): a preprod called prod would put prod's words on preprod's components.
    const names = TIERS.map((t) => [t, (t === "prod" ? s.prod : s[t]).name] as const);
    for (const [tier, name] of names) {
        const other = names.find(([t, n]) => t !== tier && (n === name || t === name))?.[0];
        const is = other === name ? `the ADR-056 tier ${other}` : `delivery.${other}.name`;
        if (name && other) r.problem(`delivery.${tier}.name`, name, `must be a DNS label of this tier alone: "${name}" is also ${is}`);
    }
    return { dev: s.dev, test: s.test, preprod: s.preprod, prod: { ...prod, name: s.prod.name } };
}

/**
 * The strategies a stack configures, with its gate timing, regulated ones with `policy.regulated`, none of a tier
 * `policy.absentClasses` leaves out (prod; with tenants, every tier): what the stack output `deliveryStrategies`
 * shows and what `npm run delivery` renders.
 */
export function stackStrategies(c: { delivery: DeliveryConfig; analysis: GateTiming; policy: Plain }): TierStrategy[] {
    const gate: GateTiming = { initialDelay: c.analysis.initialDelay, interval: c.analysis.interval };
    return tierStrategies(c.delivery, gate, c.policy.regulated !== undefined).filter((s) => !absent(c.policy, s.tier));
}
