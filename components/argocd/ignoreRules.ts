import * as YAML from "yaml";
import type { GroupKind, IgnoreRule } from "../config/admission";

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
 * The plugin rewrites backendRef weights mid-canary; selfHeal must not revert them (ADR-056
 * as-built 2026-06-26). Unconditional: the plugin's documented rule keyed on its in-progress label
 * keeps apps OutOfSync forever on ArgoCD 3.x (rollouts-plugin-trafficrouter-gatewayapi #208).
 * `[]?` because a rule without backendRefs (a redirect) makes `[]` fail with "Cannot iterate over
 * null", and ArgoCD's jq normalizer returns that error instead of a normalized object.
 */
export const HTTPROUTE_WEIGHTS_RULE: Readonly<IgnoreRule> = rule(HTTPROUTE, { jqPathExpressions: [".spec.rules[]?.backendRefs[]?.weight"] });

/** The controller swaps the stable/canary Service selectors (ADR-056 as-built #871). */
export const SERVICE_SELECTOR_RULE: Readonly<IgnoreRule> = rule(SERVICE, { jsonPointers: ["/spec/selector"] });

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
