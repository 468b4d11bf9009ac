import type { PolicyRule } from "../argoRollouts";
import type { PolicyConfig, RegulatedConfig } from "./config";
import { POLICY_NAMES, metadata, namespaceSelector } from "./builders";
import type { ClusterPolicy, GeneratingPolicy } from "./shapes";
import { Template, ref, toCel, toKyverno } from "./template";

/**
 * The approval roles of regulated prod (ADR-056 D3, ADR-049 separation of duties) are the
 * platform's, not the tenant's: a tenant's Application that shipped Roles and RoleBindings would
 * need an AppProject that lets every tenant bind roles in its namespace. So the stack declares two
 * ClusterRoles, and Kyverno binds them in every regulated namespace to the stack's groups
 * (`policy.regulated.approverGroups`, `deployerGroups`), existing namespaces included.
 *
 * Approvers may patch `rollouts/status` (promote and abort live there) and read the rest;
 * deployers only read, and ship through git. A deployer who could delete the Rollout would bypass
 * every gate: GitOps recreates it and Argo Rollouts promotes a new Rollout's first version fully
 * (argo-rollouts v1.9.0 rollout/sync.go shouldFullPromote). RBAC alone still lets a writer change
 * the steps, which drops the approval pause: restrict-regulated-rollout-changes closes that at
 * admission (approval.ts).
 */
export type ApprovalSide = "approver" | "deployer";

/** The ClusterRole of a side, and the name of the RoleBinding to it in each regulated namespace. */
export const approvalRoleName = (side: ApprovalSide): string => `argo-rollouts-addon:rollout-${side}`;

export function approvalRoleRules(side: ApprovalSide): PolicyRule[] {
    const read = ["get", "list", "watch"];
    return [
        { apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: read },
        ...(side === "approver" ? [{ apiGroups: ["argoproj.io"], resources: ["rollouts/status"], verbs: ["get", "patch"] }] : []),
        { apiGroups: ["argoproj.io"], resources: ["analysisruns", "experiments"], verbs: read },
    ];
}

/** The sides with groups to bind: approvers always (at least one group), deployers when named. */
export function approvalSides(r: RegulatedConfig): { side: ApprovalSide; groups: string[] }[] {
    const groups = { approver: r.approverGroups, deployer: r.deployerGroups };
    return (["approver", "deployer"] as const).map((side) => ({ side, groups: [...new Set(groups[side])] })).filter((s) => s.groups.length > 0);
}

/**
 * The RoleBinding a side gets in a regulated namespace: by default the one that triggers the policy
 * (a Namespace object); a namespace's name gives the binding as Kyverno writes it there.
 */
export function approvalBinding(side: ApprovalSide, groups: readonly string[], namespace: Template = ref("metadata.name")): Template {
    const name = approvalRoleName(side);
    return {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name, namespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
        subjects: groups.map((g) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: g })),
    };
}

const DESCRIPTION = "binds the platform's approver and deployer ClusterRoles to policy.regulated's groups in every regulated namespace (ADR-056 D3, ADR-049)";

/**
 * The trigger is the regulated Namespace itself, selected by its own labels: the same selector the
 * guards use as a namespace selector (the tenant labels, the regulated labels, not an excluded
 * name), here an object selector; existing namespaces are bound when the policy is created.
 * The ClusterPolicy is synchronized, so a binding edited or deleted is restored and a change of
 * groups reaches every namespace, and orphans its bindings when it goes (a switch of
 * policy.kyvernoApi or of policy.regulated never leaves a regulated namespace unbound). The
 * GeneratingPolicy is not synchronized, like the PDB generator (availability.ts): on Kyverno 1.17
 * and 1.18 a synchronized one deletes everything it generated whenever one evaluation generates
 * nothing new (kyverno/kyverno pkg/background/gpol/dynamic_watcher.go SyncWatchers at v1.17.2),
 * which the e2e scenario kyverno-generates-approval-bindings saw when two generateExisting requests
 * bound an existing namespace at once. There a deleted binding comes back at the namespace's next
 * update, and a change of groups reaches namespaces bound after it.
 */
export function approvalBindingClusterPolicy(cfg: PolicyConfig): ClusterPolicy[] {
    if (!cfg.regulated) return [];
    const selector = namespaceSelector(cfg, "regulated");
    const rules = approvalSides(cfg.regulated).map(({ side, groups }) => {
        const { apiVersion, kind, metadata: m, ...data } = approvalBinding(side, groups) as { readonly [k: string]: Template };
        const { name, namespace } = m as { readonly [k: string]: Template };
        return {
            name: `bind-${side}s`,
            match: { any: [{ resources: { kinds: ["v1/Namespace"], selector } }] },
            generate: {
                apiVersion: apiVersion as string,
                kind: kind as string,
                name: name as string,
                namespace: toKyverno(namespace) as string,
                synchronize: true,
                orphanDownstreamOnPolicyDelete: true,
                data: toKyverno(data),
            },
        };
    });
    return [
        {
            apiVersion: "kyverno.io/v1",
            kind: "ClusterPolicy",
            metadata: metadata(POLICY_NAMES.approvalBindings, DESCRIPTION),
            spec: { background: true, generateExisting: true, rules },
        },
    ];
}

export function approvalBindingCelPolicy(cfg: PolicyConfig): GeneratingPolicy[] {
    if (!cfg.regulated) return [];
    const bindings = approvalSides(cfg.regulated).map(({ side, groups }) => approvalBinding(side, groups));
    return [
        {
            apiVersion: "policies.kyverno.io/v1",
            kind: "GeneratingPolicy",
            metadata: metadata(POLICY_NAMES.approvalBindings, DESCRIPTION),
            spec: {
                evaluation: { synchronize: { enabled: false }, generateExisting: { enabled: true } },
                matchConstraints: {
                    resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], resources: ["namespaces"], operations: ["CREATE", "UPDATE"] }],
                    objectSelector: namespaceSelector(cfg, "regulated"),
                },
                matchConditions: [],
                variables: [{ name: "bindings", expression: toCel(bindings) }],
                generate: [{ expression: "generator.Apply(object.metadata.name, variables.bindings)" }],
            },
        },
    ];
}
