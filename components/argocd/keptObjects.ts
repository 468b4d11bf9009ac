import type { GroupKind } from "./ignoreRules";
import {
    CONTROLLER_FIELD_MANAGER,
    HTTPROUTE,
    HTTPROUTE_WEIGHTS_RULE,
    ROLLOUTS_POD_TEMPLATE_HASH,
    ResourceIgnoreDifferences,
    SERVICE,
    SERVICE_SELECTOR_RULE,
    canaryRuleReasons,
    fromApplicationRule,
    kindLabel,
    labelConditionalRouteRule,
    pointerCovers,
    rolloutArrayPathReasons,
    toApplicationRule,
} from "./ignoreRules";
import { ROLLOUT_PROJECT_KINDS } from "./projects";
import { RESPECT_IGNORE_DIFFERENCES } from "./syncOptions";

/**
 * ArgoCD objects another owner keeps (ADR-056 as-built: "an applied-but-unmerged module change gets
 * clobbered by the registry-reconcile re-applying from main"). Patching them would not last: a
 * self-healing parent reverts the patch, and taking an atomic list over drops the owner's other
 * entries (the HPA `/spec/replicas` rule, say). The program reads them instead and the preview
 * fails, naming every requirement of ADR-056 that the live object misses, for the owner to fix
 * in its source. These functions are the checks; the stage only reads and reports.
 */

/** The part of a live AppProject the check reads (argoproj.io/v1alpha1). */
export interface LiveAppProject {
    spec?: {
        namespaceResourceWhitelist?: Partial<GroupKind>[] | null;
        namespaceResourceBlacklist?: Partial<GroupKind>[] | null;
    } | null;
}

/** The part of a live ApplicationSet the check reads (argoproj.io/v1alpha1). */
export interface LiveApplicationSet {
    spec?: {
        template?: {
            spec?: {
                syncPolicy?: { syncOptions?: string[] | null } | null;
                ignoreDifferences?: ResourceIgnoreDifferences[] | null;
            } | null;
        } | null;
        templatePatch?: string | null;
    } | null;
}

/** Which object, and the config key that names it, for the messages. */
export interface KeptObjectRef {
    namespace: string;
    name: string;
    /** e.g. `argocd.projects.tenants`. */
    key: string;
}

/**
 * ArgoCD's whitelist match: `filepath.Match` on kind and group (argo-cd
 * pkg/apis/application/v1alpha1/types.go `isResourceInList`), so `*`, `?` and `[...]` are globs.
 */
export function globMatch(pattern: string, value: string): boolean {
    let re = "";
    for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i];
        if (c === "*") {
            re += "[^/]*";
        } else if (c === "?") {
            re += "[^/]";
        } else if (c === "[") {
            const end = pattern.indexOf("]", i + 1);
            if (end < 0) {
                return false;
            }
            const body = pattern.slice(i + 1, end);
            re += `[${body.startsWith("^") ? `^${body.slice(1)}` : body.replace(/\\/g, "\\\\")}]`;
            i = end;
        } else if (c === "\\" && i + 1 < pattern.length) {
            re += pattern[++i].replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        } else {
            re += c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        }
    }
    return new RegExp(`^${re}$`).test(value);
}

const inList = (gk: Readonly<GroupKind>, list: readonly Partial<GroupKind>[]): Partial<GroupKind> | undefined =>
    list.find((e) => globMatch(e.kind ?? "", gk.kind) && globMatch(e.group ?? "", gk.group));

const entry = (gk: Readonly<GroupKind>): string => `{group: ${gk.group === "" ? '""' : gk.group}, kind: ${gk.kind}}`;

/**
 * What a live AppProject lacks for Rollouts (ADR-056 D2). ArgoCD permits a namespaced kind when
 * the whitelist is absent (nil: every kind) or lists it, and the blacklist does not (argo-cd
 * app_project_types.go `IsGroupKindNamePermitted`); an empty whitelist permits nothing.
 */
export function appProjectProblems(ref: KeptObjectRef, live: LiveAppProject): string[] {
    const where = `AppProject ${ref.namespace}/${ref.name} (${ref.key})`;
    const whitelist = live.spec?.namespaceResourceWhitelist;
    const blacklist = live.spec?.namespaceResourceBlacklist ?? [];
    const problems: string[] = [];
    const notWhitelisted = whitelist === undefined || whitelist === null ? [] : ROLLOUT_PROJECT_KINDS.filter((gk) => !inList(gk, whitelist));
    if (notWhitelisted.length > 0) {
        problems.push(
            `${where}: spec.namespaceResourceWhitelist does not permit ${notWhitelisted.map(kindLabel).join(", ")}, and ArgoCD refuses to sync a kind its project does not permit (ADR-056 D2: the whitelist must add argoproj.io/Rollout, AnalysisTemplate and AnalysisRun); add ${notWhitelisted.map(entry).join(", ")} in the project's source`,
        );
    }
    for (const gk of ROLLOUT_PROJECT_KINDS) {
        const hit = inList(gk, blacklist);
        if (hit) {
            problems.push(
                `${where}: spec.namespaceResourceBlacklist entry {group: ${hit.group ?? ""}, kind: ${hit.kind ?? ""}} refuses ${kindLabel(gk)}, which ADR-056 D2 requires the project to sync; remove it in the project's source`,
            );
        }
    }
    return problems;
}

const compact = (q: string): string => q.replace(/\s+/g, "");

/** jq paths that ignore exactly the selector key the controller writes. */
const SELECTOR_KEY_JQ = [`.spec.selector["${ROLLOUTS_POD_TEMPLATE_HASH}"]`, `.spec.selector."${ROLLOUTS_POD_TEMPLATE_HASH}"`].map(compact);

/**
 * jq paths that ignore every canary weight: the program's, and the unconditional one ADR-056's
 * as-built rule used (it also ignores weights of single-backend rules, at no risk to a canary).
 */
const WEIGHTS_JQ = [...HTTPROUTE_WEIGHTS_RULE.jqPathExpressions, ".spec.rules[]?.backendRefs[]?.weight"].map(compact);

const matchesKind = (r: ResourceIgnoreDifferences, gk: Readonly<GroupKind>): boolean => globMatch(r.group ?? "", gk.group) && globMatch(r.kind, gk.kind);

/** A rule that keeps the controller's selector key from being reverted (also read by `npm run verify` on live Applications). */
export function coversSelectorKey(r: ResourceIgnoreDifferences): boolean {
    const target = SERVICE_SELECTOR_RULE.jsonPointers[0];
    return (
        matchesKind(r, SERVICE) &&
        ((r.jsonPointers ?? []).some((p) => pointerCovers(p, target)) ||
            (r.jqPathExpressions ?? []).some((q) => SELECTOR_KEY_JQ.includes(compact(q)) || [".spec", ".spec.selector"].includes(compact(q))) ||
            (r.managedFieldsManagers ?? []).includes(CONTROLLER_FIELD_MANAGER))
    );
}

/** A rule that keeps the plugin's weights from being reverted (also read by `npm run verify` on live Applications). */
export function coversWeights(r: ResourceIgnoreDifferences): boolean {
    return (
        matchesKind(r, HTTPROUTE) &&
        ((r.jqPathExpressions ?? []).some((q) => WEIGHTS_JQ.includes(compact(q))) || (r.jsonPointers ?? []).some((p) => p === "/spec" || p === "/spec/rules"))
    );
}

/**
 * What a live tenant ApplicationSet's template lacks for canaries (ADR-056 as-built corrections),
 * and the template rules that break one. Reads `spec.template` only: a `templatePatch` is
 * rendered per Application by the ApplicationSet controller and cannot be judged here.
 */
export function applicationSetProblems(ref: KeptObjectRef, live: LiveApplicationSet): string[] {
    const where = `ApplicationSet ${ref.namespace}/${ref.name} (${ref.key})`;
    const tmpl = live.spec?.template?.spec ?? {};
    const options = tmpl.syncPolicy?.syncOptions ?? [];
    const rules = tmpl.ignoreDifferences ?? [];
    const viaPatch = live.spec?.templatePatch ? " (spec.templatePatch is not read: set it in spec.template)" : "";
    const problems: string[] = [];
    if (!options.includes(RESPECT_IGNORE_DIFFERENCES)) {
        const off = options.filter((o) => o.startsWith("RespectIgnoreDifferences="));
        problems.push(
            `${where}: spec.template.spec.syncPolicy.syncOptions ${off.length > 0 ? `sets ${off.join(", ")}` : `lacks ${RESPECT_IGNORE_DIFFERENCES}`}${viaPatch}: ignoreDifferences alone only hides drift, and a sync triggered by any other change overwrites the plugin's weights and the controller's selector key (ADR-056 as-built 2026-06-27, correction to prerequisite #3)`,
        );
    }
    if (!rules.some(coversSelectorKey)) {
        problems.push(
            `${where}: spec.template.spec.ignoreDifferences has no rule for the Service selector key ${ROLLOUTS_POD_TEMPLATE_HASH}${viaPatch}: selfHeal reverts the controller's switch of the stable and canary selectors (ADR-056 as-built #871); add ${JSON.stringify(toApplicationRule(SERVICE_SELECTOR_RULE))}`,
        );
    }
    if (!rules.some(coversWeights)) {
        problems.push(
            `${where}: spec.template.spec.ignoreDifferences has no rule for the canary weights of HTTPRoutes${viaPatch}: selfHeal reverts the plugin's weights mid-canary (ADR-056 as-built 2026-06-26); add ${JSON.stringify(toApplicationRule(HTTPROUTE_WEIGHTS_RULE))}`,
        );
    }
    rules.forEach((raw, i) => {
        const r = fromApplicationRule(raw);
        const at = `${where}: spec.template.spec.ignoreDifferences[${i}] (${kindLabel(r)})`;
        const arrays = rolloutArrayPathReasons(r);
        if (arrays.length > 0) {
            problems.push(
                `${at} reaches a Rollout with an array path (${arrays.join("; ")}): with RespectIgnoreDifferences ArgoCD syncs the Rollout with a JSON merge patch that keeps the whole live array, so containers[].image stays stale while ArgoCD reports "synced" (ADR-056 as-built 2026-07-14)`,
            );
        }
        const conditional = labelConditionalRouteRule(r);
        if (conditional !== undefined) {
            problems.push(
                `${at} ${conditional} is conditional on a label only live carries, which keeps apps OutOfSync forever on ArgoCD 3.x (rollouts-plugin-trafficrouter-gatewayapi #208)`,
            );
        }
        for (const reason of canaryRuleReasons(r, "application")) {
            problems.push(`${at}: ${reason} (ADR-056 as-built #871)`);
        }
    });
    return problems;
}

/** The preview's error: every problem of every object another owner keeps, at once. */
export function keptObjectsError(stack: string, problems: readonly string[]): string {
    return `stack "${stack}": ArgoCD objects kept by another owner miss what ADR-056 requires (${problems.length}); fix them in their source, or set owner: addon to let this stack patch them:\n${problems.map((p) => `  - ${p}`).join("\n")}`;
}
