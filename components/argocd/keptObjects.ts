import {
    CONTROLLER_FIELD_MANAGER,
    GroupKind,
    HTTPROUTE,
    HTTPROUTE_WEIGHTS_RULE,
    ROLLOUTS_POD_TEMPLATE_HASH,
    ResourceIgnoreDifferences,
    SERVICE,
    SERVICE_SELECTOR_RULE,
    applicationRuleProblems,
    fromApplicationRule,
    kindLabel,
    pointerCovers,
    toApplicationRule,
} from "./ignoreRules";
import { ROLLOUT_PROJECT_KINDS } from "./projects";
import { RESPECT_IGNORE_DIFFERENCES } from "./syncOptions";

/**
 * ArgoCD objects another owner keeps (ADR-056 as-built: "an applied-but-unmerged module change gets
 * clobbered by the registry-reconcile re-applying from main"): the preview reads them and fails
 * naming every requirement the live object misses, for the owner to fix in its source; verify runs
 * the same checks on a live cluster.
 */

/** The part of a live AppProject the check reads (argoproj.io/v1alpha1). */
export interface LiveAppProject {
    spec?: { namespaceResourceWhitelist?: Partial<GroupKind>[] | null; namespaceResourceBlacklist?: Partial<GroupKind>[] | null } | null;
}

/** An Application's spec, or an ApplicationSet's template spec, as the checks read it. */
export interface TenantSpec {
    syncPolicy?: { syncOptions?: string[] | null } | null;
    ignoreDifferences?: ResourceIgnoreDifferences[] | null;
}

/** The part of a live ApplicationSet the check reads (argoproj.io/v1alpha1). */
export interface LiveApplicationSet {
    spec?: { template?: { spec?: TenantSpec | null } | null; templatePatch?: string | null } | null;
}

/** Which object, and the config key that names it (e.g. `argocd.projects.tenants`), for the messages. */
export interface KeptObjectRef {
    namespace: string;
    name: string;
    key: string;
}

/** ArgoCD's whitelist match: Go's `filepath.Match` on kind and group (argo-cd pkg/apis/application/v1alpha1/types.go `isResourceInList`). */
export function globMatch(pattern: string, value: string): boolean {
    const esc = (c: string) => c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    let re = "";
    for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i];
        const end = c === "[" ? pattern.indexOf("]", i + 1) : -1;
        if (c === "[" && end < 0) {
            return false;
        } else if (c === "[") {
            const body = pattern.slice(i + 1, end);
            re += `[${body.startsWith("^") ? `^${body.slice(1)}` : body.replace(/\\/g, "\\\\")}]`;
            i = end;
        } else {
            re += c === "*" ? "[^/]*" : c === "?" ? "[^/]" : c === "\\" && i + 1 < pattern.length ? esc(pattern[++i]) : esc(c);
        }
    }
    return new RegExp(`^${re}$`).test(value);
}

const inList = (gk: Readonly<GroupKind>, list: readonly Partial<GroupKind>[]): Partial<GroupKind> | undefined =>
    list.find((e) => globMatch(e.kind ?? "", gk.kind) && globMatch(e.group ?? "", gk.group));
const entry = (gk: Readonly<GroupKind>): string => `{group: ${gk.group === "" ? '""' : gk.group}, kind: ${gk.kind}}`;

/**
 * What a live AppProject lacks for Rollouts (ADR-056 D2). ArgoCD permits a namespaced kind when the
 * whitelist is absent (every kind) or lists it, and the blacklist does not (argo-cd
 * app_project_types.go `IsGroupKindNamePermitted`); an empty whitelist permits nothing.
 */
export function appProjectProblems(ref: KeptObjectRef, live: LiveAppProject): string[] {
    const where = `AppProject ${ref.namespace}/${ref.name} (${ref.key})`;
    const whitelist = live.spec?.namespaceResourceWhitelist;
    const missing = whitelist === undefined || whitelist === null ? [] : ROLLOUT_PROJECT_KINDS.filter((gk) => !inList(gk, whitelist));
    const problems = missing.length
        ? [
              `${where}: spec.namespaceResourceWhitelist does not permit ${missing.map(kindLabel).join(", ")}, and ArgoCD refuses to sync a kind its project does not permit (ADR-056 D2: the whitelist must add argoproj.io/Rollout, AnalysisTemplate and AnalysisRun); add ${missing.map(entry).join(", ")} in the project's source`,
          ]
        : [];
    for (const gk of ROLLOUT_PROJECT_KINDS) {
        const hit = inList(gk, live.spec?.namespaceResourceBlacklist ?? []);
        if (hit) {
            problems.push(
                `${where}: spec.namespaceResourceBlacklist entry {group: ${hit.group ?? ""}, kind: ${hit.kind ?? ""}} refuses ${kindLabel(gk)}, which ADR-056 D2 requires the project to sync; remove it in the project's source`,
            );
        }
    }
    return problems;
}

const compact = (q: string): string => q.replace(/\s+/g, "");
/** jq paths that ignore exactly the selector key the controller writes, or the objects above it. */
const SELECTOR_KEY_JQ = [`.spec.selector["${ROLLOUTS_POD_TEMPLATE_HASH}"]`, `.spec.selector."${ROLLOUTS_POD_TEMPLATE_HASH}"`, ".spec", ".spec.selector"];
/** jq paths that ignore every canary weight: the program's, and the unconditional one ADR-056's as-built rule used. */
const WEIGHTS_JQ = [...HTTPROUTE_WEIGHTS_RULE.jqPathExpressions, ".spec.rules[]?.backendRefs[]?.weight"].map(compact);
const matchesKind = (r: ResourceIgnoreDifferences, gk: Readonly<GroupKind>): boolean => globMatch(r.group ?? "", gk.group) && globMatch(r.kind, gk.kind);

/** A rule that keeps the controller's selector key from being reverted. */
export function coversSelectorKey(r: ResourceIgnoreDifferences): boolean {
    return (
        matchesKind(r, SERVICE) &&
        ((r.jsonPointers ?? []).some((p) => pointerCovers(p, SERVICE_SELECTOR_RULE.jsonPointers[0])) ||
            (r.jqPathExpressions ?? []).some((q) => SELECTOR_KEY_JQ.map(compact).includes(compact(q))) ||
            (r.managedFieldsManagers ?? []).includes(CONTROLLER_FIELD_MANAGER))
    );
}

/** A rule that keeps the plugin's weights from being reverted. */
export function coversWeights(r: ResourceIgnoreDifferences): boolean {
    return (
        matchesKind(r, HTTPROUTE) &&
        ((r.jqPathExpressions ?? []).some((q) => WEIGHTS_JQ.includes(compact(q))) || (r.jsonPointers ?? []).some((p) => p === "/spec" || p === "/spec/rules"))
    );
}

/**
 * What a tenant Application's spec (`at`: `spec`) or an ApplicationSet's template (`at`:
 * `spec.template.spec`) lacks for canaries, and the rules in it that break one (ADR-056 as-built
 * corrections). `note` follows each finding (why the object's other parts were not read).
 */
export function tenantSpecProblems(at: string, spec: TenantSpec | null | undefined, note = ""): string[] {
    const options = spec?.syncPolicy?.syncOptions ?? [];
    const rules = spec?.ignoreDifferences ?? [];
    const problems: string[] = [];
    if (!options.includes(RESPECT_IGNORE_DIFFERENCES)) {
        const off = options.filter((o) => o.startsWith("RespectIgnoreDifferences="));
        problems.push(
            `${at}.syncPolicy.syncOptions ${off.length > 0 ? `sets ${off.join(", ")}` : `lack ${RESPECT_IGNORE_DIFFERENCES}`}${note}: ignoreDifferences alone only hides drift, and a sync triggered by any other change overwrites the plugin's weights and the controller's selector key (ADR-056 as-built 2026-06-27, correction to prerequisite #3)`,
        );
    }
    if (!rules.some(coversSelectorKey)) {
        problems.push(
            `${at}.ignoreDifferences has no rule for the Service selector key ${ROLLOUTS_POD_TEMPLATE_HASH}${note}: selfHeal reverts the controller's switch of the stable and canary selectors (ADR-056 as-built #871); add ${JSON.stringify(toApplicationRule(SERVICE_SELECTOR_RULE))}`,
        );
    }
    if (!rules.some(coversWeights)) {
        problems.push(
            `${at}.ignoreDifferences has no rule for the canary weights of HTTPRoutes${note}: selfHeal reverts the plugin's weights mid-canary (ADR-056 as-built 2026-06-26); add ${JSON.stringify(toApplicationRule(HTTPROUTE_WEIGHTS_RULE))}`,
        );
    }
    rules.forEach((raw, i) => {
        const r = fromApplicationRule(raw);
        problems.push(...applicationRuleProblems(r).map((p) => `${at}.ignoreDifferences[${i}] (${kindLabel(r)}) ${p}`));
    });
    return problems;
}

/**
 * What a live tenant ApplicationSet's template lacks for canaries. Reads `spec.template` only: a
 * `templatePatch` is rendered per Application by the ApplicationSet controller (verify reads those).
 */
export function applicationSetProblems(ref: KeptObjectRef, live: LiveApplicationSet): string[] {
    const note = live.spec?.templatePatch ? " (spec.templatePatch is not read: set it in spec.template)" : "";
    return tenantSpecProblems("spec.template.spec", live.spec?.template?.spec, note).map(
        (p) => `ApplicationSet ${ref.namespace}/${ref.name} (${ref.key}): ${p}`,
    );
}

/** The preview's error: every problem of every object another owner keeps, at once. */
export function keptObjectsError(stack: string, problems: readonly string[]): string {
    return `stack "${stack}": ArgoCD objects kept by another owner miss what ADR-056 requires (${problems.length}); fix them in their source, or set owner: addon to let this stack patch them:\n${problems.map((p) => `  - ${p}`).join("\n")}`;
}
