import type { TenantApplicationSetConfig } from "./config/types";
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
 * (ADR-056 as-built corrections). Exported for other programs that render tenant Applications.
 */

/**
 * `RespectIgnoreDifferences=true`: ignoreDifferences alone only hides drift; a sync triggered by
 * any other change still overwrites the ignored fields (ADR-056 as-built 2026-06-27, caught in
 * prod). It is the one option the program imposes: `ServerSideApply` and the others stay the
 * tenant's choice (extra `syncOptions`).
 */
export const RESPECT_IGNORE_DIFFERENCES = "RespectIgnoreDifferences=true";
export const TENANT_SYNC_OPTIONS: readonly string[] = [RESPECT_IGNORE_DIFFERENCES];

export const COMPARE_OPTIONS_ANNOTATION = "argocd.argoproj.io/compare-options";

/**
 * Server-side diff with mutation webhooks included, so Kyverno's mutations (topology spread) are
 * not drift. ArgoCD has no global switch for `IncludeMutationWebhook`: it is an Application
 * annotation only (argo-cd docs "Diff Strategies", argo-cd #19800); stable since 3.1.
 */
export const TENANT_COMPARE_OPTIONS = "ServerSideDiff=true,IncludeMutationWebhook=true";

/**
 * The rules every tenant Application carries: the one selector key the controller writes and the
 * canary weights the plugin writes. Application-level on purpose: argocd-cm rules would apply to
 * every Application, including those that run no canary.
 */
export const TENANT_IGNORE_RULES: readonly Readonly<IgnoreRule>[] = [SERVICE_SELECTOR_RULE, HTTPROUTE_WEIGHTS_RULE];

const optionName = (option: string): string => option.split("=")[0];

/** Extra sync options that would switch one of the program's own off (or set it differently). */
export function conflictingSyncOptions(extra: readonly string[]): string[] {
    return extra.filter((o) => TENANT_SYNC_OPTIONS.some((own) => optionName(own) === optionName(o) && own !== o));
}

/** The program's options first, then the extra ones it does not already set. */
export function tenantSyncOptions(extra: readonly string[] = []): string[] {
    return [...TENANT_SYNC_OPTIONS, ...extra.filter((o) => !TENANT_SYNC_OPTIONS.some((own) => optionName(own) === optionName(o)))];
}

/** Everything a tenant Application needs, in the shape of ArgoCD's Application spec. */
export interface TenantSyncSettings {
    /** For `spec.syncPolicy.syncOptions`. */
    syncOptions: string[];
    /** For `spec.ignoreDifferences`. */
    ignoreDifferences: ResourceIgnoreDifferences[];
    /** For `metadata.annotations`. */
    annotations: Record<string, string>;
}

export interface TenantSyncExtras {
    syncOptions?: readonly string[];
    /** `kind: "*"` is written once per kind of `allKinds` (never reaches Rollout). */
    ignoreDifferences?: readonly ResourceIgnoreDifferences[];
    allKinds?: readonly Readonly<GroupKind>[];
}

/**
 * The sync settings of a tenant Application, with `extra` kept beside them. Throws on the traps
 * the preflight refuses in this program's own config, with the same reasons.
 */
export function tenantSyncSettings(extra: TenantSyncExtras = {}): TenantSyncSettings {
    const problems: string[] = [];
    for (const o of conflictingSyncOptions(extra.syncOptions ?? [])) {
        problems.push(`sync option ${o} overrides ${TENANT_SYNC_OPTIONS.join(", ")} (ADR-056 as-built 2026-06-27)`);
    }
    const rules = tenantIgnoreRules((extra.ignoreDifferences ?? []).map(fromApplicationRule), extra.allKinds ?? BUILTIN_KINDS);
    problems.push(...rules.flatMap((r) => applicationRuleProblems(r).map((p) => `ignore rule for ${kindLabel(r)} ${p}`)));
    if (problems.length > 0) {
        throw new Error(`tenant sync settings refused:\n  - ${problems.join("\n  - ")}`);
    }
    return {
        syncOptions: tenantSyncOptions(extra.syncOptions ?? []),
        ignoreDifferences: rules.map(toApplicationRule),
        annotations: { [COMPARE_OPTIONS_ANNOTATION]: TENANT_COMPARE_OPTIONS },
    };
}

/** The program's rules, then the extra ones (expanded per kind), without duplicates. */
export function tenantIgnoreRules(extra: readonly IgnoreRule[], allKinds: readonly Readonly<GroupKind>[]): IgnoreRule[] {
    const out: IgnoreRule[] = [];
    const seen = new Set<string>();
    for (const r of [...TENANT_IGNORE_RULES, ...expandAllKinds(extra, allKinds)]) {
        const key = JSON.stringify(toApplicationRule(r));
        if (!seen.has(key)) {
            seen.add(key);
            out.push({ ...r });
        }
    }
    return out;
}

/** A Patch of a tenant ApplicationSet: its template syncs with the tenant settings. */
export interface ApplicationSetPatchBody {
    apiVersion: "argoproj.io/v1alpha1";
    kind: "ApplicationSet";
    metadata: { name: string; namespace: string; annotations: Record<string, string> };
    spec: {
        template: {
            metadata: { annotations: Record<string, string> };
            spec: { syncPolicy: { syncOptions: string[] }; ignoreDifferences: ResourceIgnoreDifferences[] };
        };
    };
}

/**
 * The tenant ApplicationSet's template, patched. `syncOptions` and `ignoreDifferences` are atomic
 * lists of a CRD: the program owns them whole (see ownership.ts), which is why config carries the
 * tenant's other entries.
 */
export function applicationSetPatch(
    appSet: Readonly<TenantApplicationSetConfig>,
    namespace: string,
    allKinds: readonly Readonly<GroupKind>[],
): ApplicationSetPatchBody {
    const settings = tenantSyncSettings({
        syncOptions: appSet.syncOptions,
        ignoreDifferences: appSet.ignoreDifferences.map(toApplicationRule),
        allKinds,
    });
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "ApplicationSet",
        metadata: { name: appSet.name, namespace, annotations: { ...TAKE_OVER_LISTS } },
        spec: {
            template: {
                metadata: { annotations: settings.annotations },
                spec: { syncPolicy: { syncOptions: settings.syncOptions }, ignoreDifferences: settings.ignoreDifferences },
            },
        },
    };
}
