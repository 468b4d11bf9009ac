import { appLabels } from "./labels";
import type { PolicyRule } from "../argoRollouts";

/** A namespaced Role of an app, as the approval gives it. */
export interface RoleObject {
    apiVersion: "rbac.authorization.k8s.io/v1";
    kind: "Role";
    metadata: { name: string; namespace: string; labels: Record<string, string> };
    rules: PolicyRule[];
}

/** A RoleBinding of one of the approval Roles to groups. */
export interface RoleBindingObject {
    apiVersion: "rbac.authorization.k8s.io/v1";
    kind: "RoleBinding";
    metadata: { name: string; namespace: string; labels: Record<string, string> };
    roleRef: { apiGroup: "rbac.authorization.k8s.io"; kind: "Role"; name: string };
    subjects: { apiGroup: "rbac.authorization.k8s.io"; kind: "Group"; name: string }[];
}

/** Who approves and who deploys: the platform's groups (policy.regulated in the stack config). */
export interface ApprovalGroups {
    approverGroups: readonly string[];
    deployerGroups: readonly string[];
}

export interface ApprovalRoles {
    approver: RoleObject;
    deployer: RoleObject;
    /** One per Role that has groups to bind: approvers to the approver Role, deployers to the deployer Role. */
    bindings: RoleBindingObject[];
}

/**
 * Regulated prod: approvers may patch `rollouts/status` (promote and abort clear or set the pause
 * conditions there) and read the rest; deployers read, and ship through git, never through
 * `rollouts/status`, so nobody who ships a version can approve it (ADR-040/049 separation of duties). Each Role is bound
 * to its groups. RBAC alone still lets a deployer change the steps, which drops the approval pause
 * (argo-rollouts `rollout/sync.go` `resetRolloutStatus`): the policy stage's
 * restrict-regulated-rollout-changes closes that at admission.
 */
export function approvalRoles(app: { name: string; namespace: string }, groups: ApprovalGroups = { approverGroups: [], deployerGroups: [] }): ApprovalRoles {
    const read = ["get", "list", "watch"];
    const observe: PolicyRule = { apiGroups: ["argoproj.io"], resources: ["analysisruns", "experiments"], verbs: read };
    const labels = appLabels(app);
    const approver: RoleObject = {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: `${app.name}-rollout-approver`, namespace: app.namespace, labels },
        rules: [
            { apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: read },
            { apiGroups: ["argoproj.io"], resources: ["rollouts/status"], verbs: ["get", "patch"] },
            observe,
        ],
    };
    // Read only: in a regulated namespace a deployer ships through git, and only the GitOps
    // identities may create or change a Rollout (restrict-regulated-rollout-changes). A deployer who
    // could delete the Rollout would bypass every gate: GitOps recreates it, and Argo Rollouts
    // promotes a new Rollout's first version fully, without steps or analysis (argo-rollouts
    // v1.9.0 rollout/sync.go, shouldFullPromote: "Initial deploy").
    const deployer: RoleObject = {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: `${app.name}-rollout-deployer`, namespace: app.namespace, labels },
        rules: [{ apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: read }, observe],
    };
    const bind = (role: RoleObject, names: readonly string[]): RoleBindingObject[] =>
        names.length === 0
            ? []
            : [
                  {
                      apiVersion: "rbac.authorization.k8s.io/v1",
                      kind: "RoleBinding",
                      metadata: { name: role.metadata.name, namespace: app.namespace, labels },
                      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role.metadata.name },
                      subjects: [...new Set(names)].map((name) => ({ apiGroup: "rbac.authorization.k8s.io" as const, kind: "Group" as const, name })),
                  },
              ];
    return { approver, deployer, bindings: [...bind(approver, groups.approverGroups), ...bind(deployer, groups.deployerGroups)] };
}
