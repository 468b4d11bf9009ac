import * as YAML from "yaml";

/**
 * ArgoCD ignoreDifferences decisions (ADR-056 as-built corrections of 2026-06-27 and 2026-07-14).
 *
 * With `RespectIgnoreDifferences=true`, ArgoCD copies the live value of every ignored field into
 * what it applies. For a kind without a registered scheme (every CRD: Rollout, HTTPRoute) it does
 * that with a JSON merge patch, which replaces whole arrays: a rule whose path runs through an
 * array makes the sync keep the live array, so a Rollout's `containers[].image` stays stale while
 * ArgoCD reports "synced" (argo-cd #23283, #26588). Rules in argocd-cm's `.all` key cannot be
 * narrowed by kind, so a rule meant for every kind is written once per built-in kind instead.
 */

/** An ArgoCD group/kind pair; `group` is `""` for the core group. */
export interface GroupKind {
    group: string;
    kind: string;
}

/**
 * An ArgoCD ignoreDifferences rule. `kind: "*"` means every kind (ArgoCD's `.all`); the program
 * writes such a rule once per built-in kind instead (ADR-056 as-built 2026-07-14).
 */
export interface IgnoreRule {
    group: string;
    kind: string;
    /** Application-level rules only. */
    name?: string;
    namespace?: string;
    jsonPointers: string[];
    jqPathExpressions: string[];
    managedFieldsManagers: string[];
}

export const ROLLOUT: Readonly<GroupKind> = { group: "argoproj.io", kind: "Rollout" };
export const HTTPROUTE: Readonly<GroupKind> = { group: "gateway.networking.k8s.io", kind: "HTTPRoute" };
export const SERVICE: Readonly<GroupKind> = { group: "", kind: "Service" };

/**
 * Built-in kinds, which ArgoCD patches with a strategic merge patch (their scheme is registered),
 * so an array path on them keeps list elements by merge key instead of freezing the list. This is
 * what a rule "for every kind" is written for; CRDs are left out on purpose.
 */
export const BUILTIN_KINDS: readonly Readonly<GroupKind>[] = [
    { group: "", kind: "Pod" },
    { group: "", kind: "Service" },
    { group: "", kind: "ServiceAccount" },
    { group: "", kind: "ConfigMap" },
    { group: "", kind: "Secret" },
    { group: "", kind: "PersistentVolumeClaim" },
    { group: "", kind: "Namespace" },
    { group: "", kind: "ResourceQuota" },
    { group: "", kind: "LimitRange" },
    { group: "apps", kind: "Deployment" },
    { group: "apps", kind: "StatefulSet" },
    { group: "apps", kind: "DaemonSet" },
    { group: "apps", kind: "ReplicaSet" },
    { group: "batch", kind: "Job" },
    { group: "batch", kind: "CronJob" },
    { group: "autoscaling", kind: "HorizontalPodAutoscaler" },
    { group: "policy", kind: "PodDisruptionBudget" },
    { group: "networking.k8s.io", kind: "Ingress" },
    { group: "networking.k8s.io", kind: "NetworkPolicy" },
    { group: "rbac.authorization.k8s.io", kind: "Role" },
    { group: "rbac.authorization.k8s.io", kind: "RoleBinding" },
    { group: "rbac.authorization.k8s.io", kind: "ClusterRole" },
    { group: "rbac.authorization.k8s.io", kind: "ClusterRoleBinding" },
    { group: "admissionregistration.k8s.io", kind: "MutatingWebhookConfiguration" },
    { group: "admissionregistration.k8s.io", kind: "ValidatingWebhookConfiguration" },
    { group: "apiextensions.k8s.io", kind: "CustomResourceDefinition" },
];

function rule(gk: Readonly<GroupKind>, paths: Partial<Pick<IgnoreRule, "jsonPointers" | "jqPathExpressions">>): IgnoreRule {
    return { ...gk, jsonPointers: paths.jsonPointers ?? [], jqPathExpressions: paths.jqPathExpressions ?? [], managedFieldsManagers: [] };
}

/**
 * The label every Rollout pod carries and the controller writes into the stable and canary (or
 * active and preview) Services' selectors (argo-rollouts pkg/apis/rollouts/v1alpha1/types.go
 * `DefaultRolloutUniqueLabelKey`).
 */
export const ROLLOUTS_POD_TEMPLATE_HASH = "rollouts-pod-template-hash";

/**
 * Field managers, for reading managedFields and for recognising `managedFieldsManagers` rules.
 * Neither program sets a FieldManager or a user agent, so client-go sends
 * `DefaultKubernetesUserAgent()`, which starts with `filepath.Base(os.Args[0])` (client-go
 * rest/config.go, and the generated clientsets' `setConfigDefaults`), and the API server names
 * the manager after the user agent's text before the first "/" (apiserver
 * endpoints/handlers/create.go `managerOrUserAgent` / `prefixFromUserAgent`).
 * - The controller runs as `/bin/rollouts-controller` (argo-rollouts Dockerfile ENTRYPOINT; the
 *   chart sets only args). It writes the selector with a strategic merge Patch and no
 *   PatchOptions.FieldManager (rollout/service.go `switchServiceSelector`).
 * - The plugin is started by the controller with `exec.Command(<cwd>/plugin-bin/<ns>/<name>)`
 *   (argo-rollouts utils/plugin/plugin.go `GetPluginInfo`, utils/config/config.go
 *   `GetPluginDirectoryAndFilename`, rollout/trafficrouting/plugin/client/client.go; go-plugin's
 *   cmdrunner starts that exec.Cmd as given), whichever way it was delivered: for `argoproj-labs/gatewayAPI` its
 *   os.Args[0] ends in `gatewayAPI`. It builds its clients from a bare rest.Config (plugin v0.15.0
 *   internal/utils/common.go `GetKubeConfig`, pkg/plugin/plugin.go `InitPlugin`) and writes routes
 *   with `Update(ctx, route, metav1.UpdateOptions{})` (pkg/plugin/httproute.go).
 */
export const CONTROLLER_FIELD_MANAGER = "rollouts-controller";
export const PLUGIN_FIELD_MANAGER = "gatewayAPI";

/**
 * The canary weights the plugin writes, and nothing else (ADR-056 as-built 2026-06-26: selfHeal
 * must not revert them mid-canary). What ArgoCD does with such a rule under
 * `RespectIgnoreDifferences=true` (argo-cd v3.0-v3.5 `controller/sync.go` `normalizeTargetResources`):
 * it strips the ignored fields from live and target (`util/argo/diff/normalize.go`), computes a
 * patch from the stripped live to the live object and applies it to the target. HTTPRoute has no
 * registered scheme, so that is a JSON merge patch (RFC 7386), which cannot address an array
 * element: whatever the rule names inside `spec.rules[]`, the patch carries the whole live
 * `spec.rules`, and the sync applies the live rules instead of git's. No mechanism avoids it:
 * - a JSON pointer can only reach a weight through indices (`/spec/rules/0/backendRefs/1/weight`),
 *   so it runs through the same array;
 * - `managedFieldsManagers: [gatewayAPI]` is honoured by the sync too (`Normalize` ->
 *   `preDiffNormalize` -> `util/argo/managedfields`), and is worse: `spec.rules` and
 *   `backendRefs` are atomic lists (Gateway API v1.4 `+listType=atomic`; a CRD list without a
 *   list type is atomic anyway), so the plugin's Update makes it own the whole `spec.rules`, and
 *   every route edit in git that differs from live is removed from the diff as well: the route
 *   never syncs and the Application reports Synced;
 * - argo-cd master (3.6, #28220) patches CRDs with a strategic merge built from the OpenAPI
 *   schema, which still replaces lists that have no merge key, as these atomic ones.
 * So this rule keeps the live weights at the price of keeping the live rules of every route it
 * strips a weight from (a route edit shows OutOfSync and a sync does not apply it:
 * docs/operations/troubleshooting.md, "Route edits stay OutOfSync"). What keeps that price small:
 * - only rules with two or more backendRefs are touched: the plugin needs the stable and the
 *   canary Service in one rule, so a single-backend rule is never one it weights, and a route
 *   made only of those (blue/green, redirects, other routes of the app) is synced as git says.
 *   The condition reads the rule itself, which git and live share, so it selects the same rules
 *   on both sides (a condition only live satisfies, such as the plugin's in-progress label, is
 *   a permanent OutOfSync on ArgoCD 3.x: rollouts-plugin-trafficrouter-gatewayapi #208);
 * - it is an Application-level rule of the tenant ApplicationSets (`TENANT_IGNORE_RULES`), not an
 *   argocd-cm rule, which would apply to every HTTPRoute of every Application.
 * `[]?` everywhere: on a rule without backendRefs (a redirect) `[]` fails with "Cannot iterate over
 * null", and ArgoCD then skips the rule for that route (`util/argo/normalizers/diff_normalizer.go`
 * logs and continues), so its weights would not be ignored at all.
 */
export const HTTPROUTE_WEIGHTS_RULE: Readonly<IgnoreRule> = rule(HTTPROUTE, {
    jqPathExpressions: [".spec.rules[]? | select((.backendRefs // []) | length > 1) | .backendRefs[]?.weight"],
});

/**
 * The one selector key the controller writes (ADR-056 as-built #871), not the whole
 * `/spec/selector`: that would make a sync keep the live selector and drop selector edits from
 * git. Service has a registered scheme, so the sync copies the live value with a strategic merge
 * patch, which merges map keys: the other keys come from git (argo-cd controller/sync.go
 * `getMergePatch`/`applyMergePatch`; ServiceSpec.Selector has no patchStrategy in k8s.io/api).
 * The key has no "/" or "~", so the pointer needs no RFC 6901 escaping (`~1`, `~0`). A Service
 * without the key (git's, or one no Rollout uses) fails the remove, which ArgoCD skips quietly.
 */
export const SERVICE_SELECTOR_RULE: Readonly<IgnoreRule> = rule(SERVICE, { jsonPointers: [`/spec/selector/${ROLLOUTS_POD_TEMPLATE_HASH}`] });

export const sameKind = (a: Readonly<GroupKind>, b: Readonly<GroupKind>): boolean => a.group === b.group && a.kind === b.kind;
export const kindLabel = (gk: Readonly<GroupKind>): string => (gk.group === "" ? gk.kind : `${gk.group}/${gk.kind}`);

/** Rules for every kind (`kind: "*"`) become one rule per kind of `allKinds`; others stay. */
export function expandAllKinds(rules: readonly IgnoreRule[], allKinds: readonly Readonly<GroupKind>[]): IgnoreRule[] {
    return rules.flatMap((r) => (r.kind === "*" ? allKinds.map((gk) => ({ ...r, group: gk.group, kind: gk.kind })) : [{ ...r }]));
}

/** A jq path that names fields only, e.g. `.spec.replicas`: it cannot iterate an array. */
const PLAIN_JQ_PATH = /^(\.[A-Za-z_][A-Za-z0-9_]*|\."[^"]+")+$/;

/**
 * Why `rule` would freeze a Rollout's arrays under RespectIgnoreDifferences; empty when it does
 * not reach argoproj.io/Rollout or names scalar fields only (such as `/spec/replicas` for an HPA).
 */
export function rolloutArrayPathReasons(r: Readonly<IgnoreRule>): string[] {
    if (!sameKind(r, ROLLOUT)) {
        return [];
    }
    const reasons: string[] = [];
    for (const p of r.jsonPointers) {
        if (p.split("/").some((segment) => /^([0-9]+|-)$/.test(segment))) {
            reasons.push(`JSON pointer ${p} addresses an array element`);
        }
    }
    for (const q of r.jqPathExpressions) {
        if (!PLAIN_JQ_PATH.test(q)) {
            reasons.push(`jq path ${q} is not a plain field path, so it may run through an array`);
        }
    }
    if (r.managedFieldsManagers.length > 0) {
        reasons.push(`managedFieldsManagers ${r.managedFieldsManagers.join(", ")} ignore whatever those managers own, array elements included`);
    }
    return reasons;
}

/** A HTTPRoute rule conditional on a label: the plugin's in-progress-label rule (plugin #208). */
export function labelConditionalRouteRule(r: Readonly<IgnoreRule>): string | undefined {
    if (!sameKind(r, HTTPROUTE)) {
        return undefined;
    }
    return r.jqPathExpressions.find((q) => /select\s*\(/.test(q) && /labels/.test(q));
}

/** Where a rule is written: argocd-cm (every Application) or one Application (or ApplicationSet template). */
export type RuleScope = "system" | "application";

const normalizeJq = (q: string): string => q.replace(/\s+/g, "");
const pointerPrefixes = (pointer: string): string[] =>
    pointer
        .split("/")
        .slice(1)
        .map((_, i, parts) => `/${parts.slice(0, i + 1).join("/")}`);

/**
 * Why `r` would undo the narrow canary rules (issue of ADR-056 as-built #871 and 2026-06-26, read
 * against argo-cd's sync, see `HTTPROUTE_WEIGHTS_RULE`); empty when it does not.
 * - HTTPRoute `managedFieldsManagers`: the plugin's Update owns the atomic `spec.rules` whole, so
 *   every route edit disappears from the diff and is never applied, while the app reports Synced.
 * - An argocd-cm HTTPRoute rule inside `spec.rules`: it applies to every HTTPRoute of every
 *   Application, and freezes each route's rules under RespectIgnoreDifferences.
 * - A Service rule for the whole selector: a sync keeps the live selector, so selector edits in git
 *   are never applied; the controller writes one key only.
 */
export function canaryRuleReasons(r: Readonly<IgnoreRule>, scope: RuleScope): string[] {
    const reasons: string[] = [];
    if (sameKind(r, HTTPROUTE)) {
        if (r.managedFieldsManagers.length > 0) {
            reasons.push(
                `managedFieldsManagers ${r.managedFieldsManagers.join(", ")} on HTTPRoute: the plugin (field manager ${PLUGIN_FIELD_MANAGER}) updates the whole route, and spec.rules is an atomic list, so it owns every rule: each route edit in git is hidden from the diff and, with RespectIgnoreDifferences, never applied while the Application reports Synced`,
            );
        }
        const intoRules = [
            ...r.jsonPointers.filter((p) => p === "/spec" || p.startsWith("/spec/rules")),
            ...r.jqPathExpressions.filter((q) => /^\.spec(\.rules|\s*$)/.test(q.trim())),
        ];
        if (scope === "system" && intoRules.length > 0) {
            reasons.push(
                `${intoRules.join(", ")} in argocd-cm applies to every HTTPRoute of every Application, and with RespectIgnoreDifferences each of those routes keeps its live spec.rules: the weight rule belongs on the Applications that run canaries (the tenant ApplicationSets)`,
            );
        }
    }
    if (sameKind(r, SERVICE)) {
        const whole = [
            ...r.jsonPointers.filter((p) => p === "/spec" || p === "/spec/selector"),
            ...r.jqPathExpressions.filter((q) => [".spec", ".spec.selector"].includes(normalizeJq(q))),
            ...r.managedFieldsManagers.filter((m) => m === CONTROLLER_FIELD_MANAGER),
        ];
        if (whole.length > 0) {
            reasons.push(
                `${whole.join(", ")} ignores the whole Service selector (a managedFieldsManagers rule for ${CONTROLLER_FIELD_MANAGER} does too: its Patch makes it own the atomic selector map), so with RespectIgnoreDifferences a sync keeps the live selector and a selector edit in git is never applied: ignore only ${SERVICE_SELECTOR_RULE.jsonPointers[0]}, the key the controller writes`,
            );
        }
    }
    return reasons;
}

/** True when `pointer` is `target` or one of the objects above it (`/spec/selector` for `/spec/selector/x`). */
export function pointerCovers(pointer: string, target: string): boolean {
    return pointerPrefixes(target).includes(pointer);
}

/** argocd-cm key of a system-level rule: `<group>_<Kind>`, or `<Kind>` for the core group. */
export function argocdCmKey(gk: Readonly<GroupKind>): string {
    return `resource.customizations.ignoreDifferences.${gk.group === "" ? gk.kind : `${gk.group}_${gk.kind}`}`;
}

const union = (lists: string[][]): string[] => [...new Set(lists.flat())];

/**
 * argocd-cm data for system-level rules: one key per kind, rules of the same kind merged. Every
 * rule must already be per kind (see `expandAllKinds`): nothing is written under `.all`.
 */
export function argocdCmIgnoreData(rules: readonly IgnoreRule[]): Record<string, string> {
    const byKey = new Map<string, IgnoreRule[]>();
    for (const r of rules) {
        if (r.kind === "*") {
            throw new Error("a rule for every kind must be expanded per kind before it is written (ADR-056 as-built 2026-07-14)");
        }
        byKey.set(argocdCmKey(r), [...(byKey.get(argocdCmKey(r)) ?? []), r]);
    }
    const data: Record<string, string> = {};
    for (const [key, group] of [...byKey.entries()].sort(([a], [b]) => a.localeCompare(b))) {
        const body: Record<string, string[]> = {};
        for (const field of ["jsonPointers", "jqPathExpressions", "managedFieldsManagers"] as const) {
            const values = union(group.map((r) => r[field]));
            if (values.length > 0) {
                body[field] = values;
            }
        }
        data[key] = YAML.stringify(body, { lineWidth: 0 });
    }
    return data;
}

/** ArgoCD's Application `spec.ignoreDifferences[]` entry (argoproj.io/v1alpha1). */
export interface ResourceIgnoreDifferences {
    group?: string;
    kind: string;
    name?: string;
    namespace?: string;
    jsonPointers?: string[];
    jqPathExpressions?: string[];
    managedFieldsManagers?: string[];
}

/** An Application-level rule as ArgoCD's schema spells it: no empty lists, no group for core. */
export function toApplicationRule(r: Readonly<IgnoreRule>): ResourceIgnoreDifferences {
    return {
        ...(r.group !== "" ? { group: r.group } : {}),
        kind: r.kind,
        ...(r.name ? { name: r.name } : {}),
        ...(r.namespace ? { namespace: r.namespace } : {}),
        ...(r.jsonPointers.length ? { jsonPointers: [...r.jsonPointers] } : {}),
        ...(r.jqPathExpressions.length ? { jqPathExpressions: [...r.jqPathExpressions] } : {}),
        ...(r.managedFieldsManagers.length ? { managedFieldsManagers: [...r.managedFieldsManagers] } : {}),
    };
}

/** Reads an Application-level entry back into the program's rule shape. */
export function fromApplicationRule(r: Readonly<ResourceIgnoreDifferences>): IgnoreRule {
    return {
        group: r.group ?? "",
        kind: r.kind,
        ...(r.name ? { name: r.name } : {}),
        ...(r.namespace ? { namespace: r.namespace } : {}),
        jsonPointers: [...(r.jsonPointers ?? [])],
        jqPathExpressions: [...(r.jqPathExpressions ?? [])],
        managedFieldsManagers: [...(r.managedFieldsManagers ?? [])],
    };
}
