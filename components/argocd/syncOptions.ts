import type { TenantApplicationSetConfig } from "./config/section";
import {
    BUILTIN_KINDS,
    GroupKind,
    HTTPROUTE_WEIGHTS_RULE,
    IgnoreRule,
    ResourceIgnoreDifferences,
    SERVICE_SELECTOR_RULE,
    applicationRuleProblems,
    expandAllKinds,
    fromApplicationRule,
    kindLabel,
    toApplicationRule,
} from "./ignoreRules";
import { TAKE_OVER_LISTS } from "./ownership";

/**
 * How a tenant Application syncs so that ArgoCD neither fights a canary nor freezes a Rollout
 * (ADR-056 as-built corrections); exported for other programs that render tenant Applications.
 * `RespectIgnoreDifferences=true`: ignoreDifferences alone only hides drift, and a sync triggered
 * by any other change still overwrites the ignored fields (as-built 2026-06-27, caught in prod). It
 * is the one option the program imposes; `ServerSideApply` and the others stay the tenant's choice.
 */
export const RESPECT_IGNORE_DIFFERENCES = "RespectIgnoreDifferences=true";
export const TENANT_SYNC_OPTIONS: readonly string[] = [RESPECT_IGNORE_DIFFERENCES];

/**
 * Server-side diff with mutation webhooks included, so Kyverno's mutations (topology spread) are
 * not drift: an Application annotation only (argo-cd docs "Diff Strategies", argo-cd #19800).
 */
export const COMPARE_OPTIONS_ANNOTATION = "argocd.argoproj.io/compare-options";
export const TENANT_COMPARE_OPTIONS = "ServerSideDiff=true,IncludeMutationWebhook=true";

/** Every tenant Application's rules: Application-level, as argocd-cm rules would reach Applications that run no canary. */
export const TENANT_IGNORE_RULES: readonly Readonly<IgnoreRule>[] = [SERVICE_SELECTOR_RULE, HTTPROUTE_WEIGHTS_RULE];

const optionName = (option: string): string => option.split("=")[0];

/** Extra sync options that would switch one of the program's own off (or set it differently). */
export function conflictingSyncOptions(extra: readonly string[]): string[] {
    return extra.filter((o) => TENANT_SYNC_OPTIONS.some((own) => optionName(own) === optionName(o) && own !== o));
}

/**
 * The sync settings of a tenant Application (`syncPolicy.syncOptions`, `ignoreDifferences`,
 * `metadata.annotations`): the program's first, then the extra ones it does not already set, a rule
 * for every kind written per kind of `allKinds`. Throws on the traps the preflight refuses.
 */
export function tenantSyncSettings(
    extra: { syncOptions?: readonly string[]; ignoreDifferences?: readonly ResourceIgnoreDifferences[]; allKinds?: readonly Readonly<GroupKind>[] } = {},
) {
    const options = extra.syncOptions ?? [];
    const rules = [...TENANT_IGNORE_RULES, ...expandAllKinds((extra.ignoreDifferences ?? []).map(fromApplicationRule), extra.allKinds ?? BUILTIN_KINDS)];
    const unique = [...new Map(rules.map((r) => [JSON.stringify(toApplicationRule(r)), r])).values()];
    const problems = [
        ...conflictingSyncOptions(options).map((o) => `sync option ${o} overrides ${TENANT_SYNC_OPTIONS.join(", ")} (ADR-056 as-built 2026-06-27)`),
        ...unique.flatMap((r) => applicationRuleProblems(r).map((p) => `ignore rule for ${kindLabel(r)} ${p}`)),
    ];
    if (problems.length > 0) throw new Error(`tenant sync settings refused:\n  - ${problems.join("\n  - ")}`);
    return {
        syncOptions: [...TENANT_SYNC_OPTIONS, ...options.filter((o) => !TENANT_SYNC_OPTIONS.some((own) => optionName(own) === optionName(o)))],
        ignoreDifferences: unique.map(toApplicationRule),
        annotations: { [COMPARE_OPTIONS_ANNOTATION]: TENANT_COMPARE_OPTIONS },
    };
}

/**
 * A Patch of a tenant ApplicationSet (`owner: addon`): its template syncs with the tenant settings.
 * `syncOptions` and `ignoreDifferences` are atomic lists of a CRD: the program owns them whole
 * (ownership.ts), which is why config carries the tenant's other entries.
 */
export function applicationSetPatch(appSet: Readonly<TenantApplicationSetConfig>, namespace: string, allKinds: readonly Readonly<GroupKind>[]) {
    const settings = tenantSyncSettings({ syncOptions: appSet.syncOptions, ignoreDifferences: appSet.ignoreDifferences.map(toApplicationRule), allKinds });
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "ApplicationSet" as const,
        metadata: { name: appSet.name, namespace, annotations: { ...TAKE_OVER_LISTS } },
        spec: {
            template: {
                metadata: { annotations: settings.annotations },
                spec: { syncPolicy: { syncOptions: settings.syncOptions }, ignoreDifferences: settings.ignoreDifferences },
            },
        },
    };
}
