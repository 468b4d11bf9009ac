import * as YAML from "yaml";

/**
 * ArgoCD ignoreDifferences decisions (ADR-056 as-built corrections of 2026-06-27 and 2026-07-14).
 * With `RespectIgnoreDifferences=true` ArgoCD copies the live value of every ignored field into
 * what it applies; for a kind without a registered scheme (every CRD: Rollout, HTTPRoute) that is
 * a JSON merge patch, which replaces whole arrays, so a rule whose path runs through an array
 * keeps the live array: a Rollout's `containers[].image` stays stale while ArgoCD reports "synced"
 * (argo-cd #23283, #26588). argocd-cm's `.all` key cannot be narrowed by kind, so a rule for every
 * kind is written once per built-in kind instead.
 */

/** An ArgoCD group/kind pair; `group` is `""` for the core group. */
export interface GroupKind {
    group: string;
    kind: string;
}

/** An ignoreDifferences rule; `kind: "*"` is every kind of `argocd.allKinds`. `name`, `namespace`: Application-level rules only. */
export interface IgnoreRule {
    group: string;
    kind: string;
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
 * keeping list elements by merge key: what a rule "for every kind" is written for. CRDs are left out on purpose.
 */
export const BUILTIN_KINDS: readonly Readonly<GroupKind>[] = Object.entries({
    "": "Pod Service ServiceAccount ConfigMap Secret PersistentVolumeClaim Namespace ResourceQuota LimitRange",
    apps: "Deployment StatefulSet DaemonSet ReplicaSet",
    batch: "Job CronJob",
    autoscaling: "HorizontalPodAutoscaler",
    policy: "PodDisruptionBudget",
    "networking.k8s.io": "Ingress NetworkPolicy",
    "rbac.authorization.k8s.io": "Role RoleBinding ClusterRole ClusterRoleBinding",
    "admissionregistration.k8s.io": "MutatingWebhookConfiguration ValidatingWebhookConfiguration",
    "apiextensions.k8s.io": "CustomResourceDefinition",
}).flatMap(([group, kinds]) => kinds.split(" ").map((kind) => ({ group, kind })));

/**
 * The label every Rollout pod carries and the controller writes into the stable and canary
 * Services' selectors (argo-rollouts pkg/apis/rollouts/v1alpha1/types.go `DefaultRolloutUniqueLabelKey`).
 */
export const ROLLOUTS_POD_TEMPLATE_HASH = "rollouts-pod-template-hash";

/**
 * Field managers: neither program sets one, so the API server names it after client-go's default
 * user agent, the binary's name (client-go rest/config.go `DefaultKubernetesUserAgent`): the
 * controller runs as `/bin/rollouts-controller` (argo-rollouts Dockerfile), the plugin as
 * `plugin-bin/<ns>/gatewayAPI` (argo-rollouts utils/plugin/plugin.go).
 */
export const CONTROLLER_FIELD_MANAGER = "rollouts-controller";
export const PLUGIN_FIELD_MANAGER = "gatewayAPI";

const rule = (gk: Readonly<GroupKind>, paths: Partial<IgnoreRule>): IgnoreRule => ({
    ...gk,
    jsonPointers: [],
    jqPathExpressions: [],
    managedFieldsManagers: [],
    ...paths,
});

/**
 * The canary weights the plugin writes (ADR-056 as-built 2026-06-26: selfHeal must not revert them
 * mid-canary). Under RespectIgnoreDifferences ArgoCD patches the ignored live values back into what
 * it syncs (argo-cd v3.0-v3.5 controller/sync.go `normalizeTargetResources`); HTTPRoute has no
 * registered scheme, so that is a JSON merge patch, which cannot address an array element: the sync
 * applies the live `spec.rules` of every route it strips a weight from, whatever the mechanism (a
 * pointer reaches a weight only through indices; `managedFieldsManagers` hides every route edit, the
 * plugin's Update owning the atomic `spec.rules`). So only rules with two or more backendRefs are
 * touched, by a condition git and live share (a label only live carries is a permanent OutOfSync:
 * rollouts-plugin-trafficrouter-gatewayapi #208), in the tenant ApplicationSets, not argocd-cm;
 * docs/operations/troubleshooting.md, "Route edits stay OutOfSync". `[]?`: on a rule without
 * backendRefs `[]` fails and ArgoCD skips the rule for that route. This jq is beyond the subset a
 * stack file may write (config/section.ts `JQ_PATH`), which is for the platform's rules.
 */
export const HTTPROUTE_WEIGHTS_RULE: Readonly<IgnoreRule> = rule(HTTPROUTE, {
    jqPathExpressions: [".spec.rules[]? | select((.backendRefs // []) | length > 1) | .backendRefs[]?.weight"],
});

/**
 * The one selector key the controller writes (ADR-056 as-built #871), not the whole selector: a
 * sync would keep the live selector and drop selector edits from git. Service has a registered
 * scheme, so the sync copies the live value with a strategic merge patch, which merges map keys
 * (argo-cd controller/sync.go). A Service without the key fails the remove, which ArgoCD skips.
 */
export const SERVICE_SELECTOR_RULE: Readonly<IgnoreRule> = rule(SERVICE, { jsonPointers: [`/spec/selector/${ROLLOUTS_POD_TEMPLATE_HASH}`] });

export const sameKind = (a: Readonly<GroupKind>, b: Readonly<GroupKind>): boolean => a.group === b.group && a.kind === b.kind;
export const kindLabel = (gk: Readonly<GroupKind>): string => (gk.group === "" ? gk.kind : `${gk.group}/${gk.kind}`);

/** Rules for every kind (`kind: "*"`) become one rule per kind of `allKinds`; others stay. */
export function expandAllKinds(rules: readonly IgnoreRule[], allKinds: readonly Readonly<GroupKind>[]): IgnoreRule[] {
    return rules.flatMap((r) => (r.kind === "*" ? allKinds.map((gk) => ({ ...r, group: gk.group, kind: gk.kind })) : [{ ...r }]));
}

/**
 * Why `rule` would freeze a Rollout's arrays under RespectIgnoreDifferences; empty when it does not
 * reach argoproj.io/Rollout or names fields only (`/spec/replicas`, `.spec.paused`).
 */
export function rolloutArrayPathReasons(r: Readonly<IgnoreRule>): string[] {
    if (!sameKind(r, ROLLOUT)) return [];
    return [
        ...r.jsonPointers.filter((p) => p.split("/").some((s) => /^([0-9]+|-)$/.test(s))).map((p) => `JSON pointer ${p} addresses an array element`),
        ...r.jqPathExpressions
            .filter((q) => !/^(\.[A-Za-z_][A-Za-z0-9_]*|\."[^"]+")+$/.test(q))
            .map((q) => `jq path ${q} is not a plain field path, so it may run through an array`),
        ...(r.managedFieldsManagers.length > 0
            ? [`managedFieldsManagers ${r.managedFieldsManagers.join(", ")} ignore whatever those managers own, array elements included`]
            : []),
    ];
}

/** A HTTPRoute rule conditional on a label: the plugin's in-progress-label rule (plugin #208). */
export function labelConditionalRouteRule(r: Readonly<IgnoreRule>): string | undefined {
    return sameKind(r, HTTPROUTE) ? r.jqPathExpressions.find((q) => /select\s*\(/.test(q) && /labels/.test(q)) : undefined;
}

/** Where a rule is written: argocd-cm (every Application) or one Application (or ApplicationSet template). */
export type RuleScope = "system" | "application";

const compact = (q: string): string => q.replace(/\s+/g, "");

/**
 * Why `r` would undo the narrow canary rules (ADR-056 as-built #871 and 2026-06-26, see
 * `HTTPROUTE_WEIGHTS_RULE`); empty when it does not: an HTTPRoute rule by field manager (the
 * plugin owns the atomic `spec.rules`), an argocd-cm HTTPRoute rule inside `spec.rules` (every
 * route of every Application), a Service rule for the whole selector (the controller writes one key).
 */
export function canaryRuleReasons(r: Readonly<IgnoreRule>, scope: RuleScope): string[] {
    const reasons: string[] = [];
    if (sameKind(r, HTTPROUTE) && r.managedFieldsManagers.length > 0) {
        reasons.push(
            `managedFieldsManagers ${r.managedFieldsManagers.join(", ")} on HTTPRoute: the plugin (field manager ${PLUGIN_FIELD_MANAGER}) updates the whole route, and spec.rules is an atomic list, so it owns every rule: each route edit in git is hidden from the diff and, with RespectIgnoreDifferences, never applied while the Application reports Synced`,
        );
    }
    const intoRules = [
        ...r.jsonPointers.filter((p) => p === "/spec" || p.startsWith("/spec/rules")),
        ...r.jqPathExpressions.filter((q) => /^\.spec(\.rules|$)/.test(q.trim())),
    ];
    if (sameKind(r, HTTPROUTE) && scope === "system" && intoRules.length > 0) {
        reasons.push(
            `${intoRules.join(", ")} in argocd-cm applies to every HTTPRoute of every Application, and with RespectIgnoreDifferences each of those routes keeps its live spec.rules: the weight rule belongs on the Applications that run canaries (the tenant ApplicationSets)`,
        );
    }
    const whole = [
        ...r.jsonPointers.filter((p) => p === "/spec" || p === "/spec/selector"),
        ...r.jqPathExpressions.filter((q) => [".spec", ".spec.selector"].includes(compact(q))),
        ...r.managedFieldsManagers.filter((m) => m === CONTROLLER_FIELD_MANAGER),
    ];
    if (sameKind(r, SERVICE) && whole.length > 0) {
        reasons.push(
            `${whole.join(", ")} ignores the whole Service selector (a managedFieldsManagers rule for ${CONTROLLER_FIELD_MANAGER} does too: its Patch makes it own the atomic selector map), so with RespectIgnoreDifferences a sync keeps the live selector and a selector edit in git is never applied: ignore only ${SERVICE_SELECTOR_RULE.jsonPointers[0]}, the key the controller writes`,
        );
    }
    return reasons;
}

/** What an array path reaching a Rollout does (ADR-056 as-built 2026-07-14). */
export const FROZEN_ROLLOUT =
    'with RespectIgnoreDifferences ArgoCD syncs a Rollout with a JSON merge patch that keeps the whole live array, so containers[].image stays stale while ArgoCD reports "synced" (ADR-056 as-built 2026-07-14; argo-cd #23283)';

/** Why an Application-level rule breaks a canary or freezes a Rollout, one sentence each; empty when it does neither. */
export function applicationRuleProblems(r: Readonly<IgnoreRule>): string[] {
    const arrays = rolloutArrayPathReasons(r);
    const label = labelConditionalRouteRule(r);
    return [
        ...(arrays.length > 0 ? [`reaches a Rollout with an array path (${arrays.join("; ")}): ${FROZEN_ROLLOUT}`] : []),
        ...(label
            ? [
                  `${label} is conditional on a label only live carries, which keeps apps OutOfSync forever on ArgoCD 3.x (rollouts-plugin-trafficrouter-gatewayapi #208)`,
              ]
            : []),
        ...canaryRuleReasons(r, "application").map((reason) => `${reason} (ADR-056 as-built #871)`),
    ];
}

/** True when `pointer` is `target` or one of the objects above it (`/spec/selector` for `/spec/selector/x`). */
export function pointerCovers(pointer: string, target: string): boolean {
    const parts = target.split("/");
    return parts.some((_, i) => i > 0 && parts.slice(0, i + 1).join("/") === pointer);
}

/** argocd-cm key of a system-level rule: `<group>_<Kind>`, or `<Kind>` for the core group. */
export function argocdCmKey(gk: Readonly<GroupKind>): string {
    return `resource.customizations.ignoreDifferences.${gk.group === "" ? gk.kind : `${gk.group}_${gk.kind}`}`;
}

/** argocd-cm data for system-level rules: one key per kind, rules of the same kind merged; never `.all`. */
export function argocdCmIgnoreData(rules: readonly IgnoreRule[]): Record<string, string> {
    const byKey = new Map<string, IgnoreRule[]>();
    for (const r of rules) {
        if (r.kind === "*") throw new Error("a rule for every kind must be expanded per kind before it is written (ADR-056 as-built 2026-07-14)");
        byKey.set(argocdCmKey(r), [...(byKey.get(argocdCmKey(r)) ?? []), r]);
    }
    const data: Record<string, string> = {};
    for (const [key, group] of [...byKey.entries()].sort(([a], [b]) => a.localeCompare(b))) {
        const fields = (["jsonPointers", "jqPathExpressions", "managedFieldsManagers"] as const).map(
            (f) => [f, [...new Set(group.flatMap((r) => r[f]))]] as const,
        );
        data[key] = YAML.stringify(Object.fromEntries(fields.filter(([, v]) => v.length > 0)), { lineWidth: 0 });
    }
    return data;
}

/** ArgoCD's Application `spec.ignoreDifferences[]` entry (argoproj.io/v1alpha1): the rule's fields, each optional but the kind. */
export type ResourceIgnoreDifferences = Partial<IgnoreRule> & { kind: string };

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
    const { group, jsonPointers, jqPathExpressions, managedFieldsManagers, ...rest } = r;
    return {
        ...rest,
        group: group ?? "",
        jsonPointers: [...(jsonPointers ?? [])],
        jqPathExpressions: [...(jqPathExpressions ?? [])],
        managedFieldsManagers: [...(managedFieldsManagers ?? [])],
    };
}
