import type { PolicyRule } from "../argoRollouts";
import { ApprovalGroups, appLabels } from "./types";

export type ApprovalRoles = ReturnType<typeof approvalRoles>;

/**
 * Regulated prod (ADR-056 D3, ADR-049 separation of duties): approvers may patch `rollouts/status`
 * (promote and abort live there) and read the rest; deployers only read, and ship through git. A
 * deployer who could delete the Rollout would bypass every gate: GitOps recreates it and Argo
 * Rollouts promotes a new Rollout's first version fully (v1.9.0 rollout/sync.go shouldFullPromote).
 * RBAC alone still lets a writer change the steps, which drops the approval pause: the policy
 * stage's restrict-regulated-rollout-changes closes that at admission.
 */
export function approvalRoles(app: { name: string; namespace: string }, groups: ApprovalGroups = { approverGroups: [], deployerGroups: [] }) {
    const read = ["get", "list", "watch"];
    const labels = appLabels(app);
    const role = (suffix: string, rules: PolicyRule[]) => ({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: `${app.name}-rollout-${suffix}`, namespace: app.namespace, labels },
        rules: [
            { apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: read },
            ...rules,
            { apiGroups: ["argoproj.io"], resources: ["analysisruns", "experiments"], verbs: read },
        ],
    });
    const approver = role("approver", [{ apiGroups: ["argoproj.io"], resources: ["rollouts/status"], verbs: ["get", "patch"] }]);
    const deployer = role("deployer", []);
    const sides = [
        [approver, groups.approverGroups],
        [deployer, groups.deployerGroups],
    ] as const;
    const bindings = sides
        .filter(([, names]) => names.length > 0)
        .map(([r, names]) => ({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
            metadata: { name: r.metadata.name, namespace: app.namespace, labels },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: r.metadata.name },
            subjects: [...new Set(names)].map((name) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name })),
        }));
    return { approver, deployer, bindings };
}
