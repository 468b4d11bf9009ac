import type { ProdClass, Shape, TierAdmissionAction } from "../delivery";

/**
 * What the tier admission rules check (tierAdmission.ts derives it from the stack's rendered
 * strategies): apart, so the policies' context (builders.ts) can name it.
 */

/** One step of the approval's tail, as the rendered steps end. */
export type TailStep = { pause: "indefinite" } | { setWeight: number };

export interface ClassAdmission {
    prodClass: ProdClass;
    /** The platform's name of the prod tier (`delivery.prod.name`), for the messages. */
    environment: string;
    /** Enforce (refuse) or Audit (report and warn). */
    action: TierAdmissionAction;
    /** The component of each shape the class offers (`npm run delivery`'s folder names). */
    components: Partial<Record<Shape, string>>;
    canary?: {
        /** The background analysis's cluster-scoped templates. */
        templates: string[];
        /** The startingStep values the library renders (the step before each is the first setWeight). */
        startingSteps: number[];
        /** Regulated: how the steps end, from the approval pause on. */
        tail?: TailStep[];
        /** Regulated: the highest weight the rendered steps reach before the approval pause (0: none). */
        maxBeforeApproval?: number;
    };
    /** The gates' arguments taken from the Rollout itself, as the rendered gates write them: the value at `path` of the argument `name`. */
    gateArgs: { name: string; path: string[]; value: string }[];
    blueGreen?: {
        /** Per analysis field, the cluster-scoped templates it must name. */
        analyses: { field: "prePromotionAnalysis" | "postPromotionAnalysis"; templates: string[] }[];
        /** Regulated: the switch waits for an approver. */
        manualPromotion: boolean;
        /** How the components name the preview Service (`<app>` and this suffix), and the header of the class's preview gate, if any. */
        preview: { suffix: string; header?: string };
    };
}

/** What the tier admission rules check: one entry per prod class the stack configures. */
export interface TierAdmission {
    classes: ClassAdmission[];
}
