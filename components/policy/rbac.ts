import type { PolicyConfig } from "./config";
import { ownsAvailability } from "./builders";
import type { PolicyRule } from "../argoRollouts";
import { approvalRoleName } from "./approvalBindings";

/**
 * What Kyverno's controllers need to run the policies of this stage, granted read-only where
 * reading is enough and only to Kyverno's own ServiceAccounts.
 *
 * The Kyverno chart gives each controller a ClusterRole that aggregates every ClusterRole labelled
 * `rbac.kyverno.io/aggregate-to-<controller>: "true"` (kyverno/kyverno `charts/kyverno/templates/
 * {admission,background,reports}-controller/clusterrole.yaml`, 1.14 through 1.19); the same
 * controllers also read through the cluster's `view` role (`createViewRoleBinding`,
 * `viewRoleName: view`). `view` does not cover Rollouts: the argo-rollouts chart's aggregate roles
 * are off, because `aggregate-to-edit` would let every namespace editor promote. Labelling a
 * read-only role for Kyverno's controllers reaches exactly those three ServiceAccounts; an
 * `aggregate-to-view` role would extend every viewer of every namespace as well.
 */
export const KYVERNO_AGGREGATE_LABELS = {
    admission: "rbac.kyverno.io/aggregate-to-admission-controller",
    background: "rbac.kyverno.io/aggregate-to-background-controller",
    reports: "rbac.kyverno.io/aggregate-to-reports-controller",
} as const;

export type KyvernoController = keyof typeof KYVERNO_AGGREGATE_LABELS;

/** The roles' names, by what each grants (`npm run verify` finds them by these). */
export const KYVERNO_ROLES = {
    readRollouts: "read-rollouts",
    readApprovalSubresources: "read-approval-subresources",
    generatePdb: "generate-pdb",
    bindApproval: "bind-regulated-approval-roles",
    policyLookups: "read-policy-lookups",
} as const;

/** A role's ClusterRole name in the cluster. */
export const kyvernoRoleName = (role: Pick<KyvernoRole, "name">): string => `kyverno:argo-rollouts-addon:${role.name}`;

const READ = ["get", "list", "watch"];
const APPROVAL_ROLE_NAMES = [approvalRoleName("approver"), approvalRoleName("deployer")];

export interface KyvernoRole {
    /** The ClusterRole's name and Pulumi name suffix. */
    name: string;
    controllers: KyvernoController[];
    rules: PolicyRule[];
    why: string;
}

/**
 * What Kyverno's background controller needs to generate a PodDisruptionBudget per workload
 * (ADR-085's generate-workload-pdb, made Rollout-aware by ADR-056 D2 and D8).
 */
export function pdbGenerationRules(): PolicyRule[] {
    return [{ apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: [...READ, "create", "update", "patch", "delete"] }];
}

/** The roles the stage declares for Kyverno, by the policies it declares. */
export function kyvernoRoles(cfg: PolicyConfig): KyvernoRole[] {
    const roles: KyvernoRole[] = [
        {
            // The background controller fetches the trigger of every generate request, listing the
            // trigger's kind (kyverno/kyverno `pkg/background/common/resource.go` `GetTrigger`,
            // `getTriggerForCreateOperation`, `GetResource`; used by `pkg/background/gpol/
            // generate_controller.go`), and lists them for generateExisting; the reports controller
            // lists and reads them for background scans. The admission controller does not read
            // them: the object is in the request, and for a generating policy it only records an
            // update request (`pkg/webhooks/resource/gpol/handler.go`). Needed in both modes: in
            // `complement` the platform's own PDB generator reads Rollouts the same way.
            // HTTPRoutes too: tier admission judges a blue/green app's route (tierAdmission.ts
            // previewRoute), and Kyverno reports a CEL policy not ready unless the reports controller
            // may read what it matches (see read-approval-subresources below).
            name: KYVERNO_ROLES.readRollouts,
            controllers: ["background", "reports"],
            rules: [
                { apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: [...READ] },
                { apiGroups: ["gateway.networking.k8s.io"], resources: ["httproutes"], verbs: [...READ] },
            ],
            why: "trigger and background-scan reads of Rollouts, and background-scan reads of HTTPRoutes",
        },
    ];
    if (cfg.regulated && cfg.kyvernoApi === "policies.kyverno.io/v1") {
        roles.push({
            // The approval guards match subresources: rollouts/status and pods/ephemeralcontainers
            // (replicasets/scale is in `view`). Kyverno's policy status controller asks, for every
            // resource a CEL policy matches, whether the reports controller may get, list and watch
            // it, with the subresource in the resource name (kyverno/kyverno
            // pkg/controllers/policystatus/controller.go resolveGVRs and permissionsCheck at
            // v1.17.2), and reports the policy not ready otherwise: the e2e scenario kyverno-ready
            // found restrict-regulated-rollout-changes at RBACPermissionsGranted=False without this
            // role. Reading a subresource reads no more than its object.
            name: KYVERNO_ROLES.readApprovalSubresources,
            controllers: ["reports"],
            rules: [
                { apiGroups: ["argoproj.io"], resources: ["rollouts/status"], verbs: [...READ] },
                { apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: [...READ] },
            ],
            why: "the reports controller's reads of the subresources the approval guards match (Rollout status, Pod ephemeral containers)",
        });
    }
    if (cfg.regulated) {
        roles.push({
            // The approval bindings (approvalBindings.ts). The API server lets a RoleBinding be written
            // by whoever may `bind` its role, without holding the role's rights (kubernetes v1.35.4
            // pkg/registry/rbac/escalation_check.go `BindingAuthorized`, asked for the role by name),
            // so Kyverno binds the two ClusterRoles and no other, and never holds rollouts/status
            // itself. RoleBindings by any name: Kyverno admits a generate rule only when its background
            // controller may get, create, update and delete the kind in the namespace, asked without a
            // name (kyverno/kyverno pkg/policy/generate/validate.go `canIGenerate` at v1.17.2; e2e
            // kyverno-generates-approval-bindings).
            name: KYVERNO_ROLES.bindApproval,
            controllers: ["background"],
            rules: [
                { apiGroups: ["rbac.authorization.k8s.io"], resources: ["clusterroles"], verbs: ["bind"], resourceNames: APPROVAL_ROLE_NAMES },
                { apiGroups: ["rbac.authorization.k8s.io"], resources: ["rolebindings"], verbs: [...READ, "create", "update", "patch", "delete"] },
            ],
            why: "the approval RoleBindings generate-regulated-approval-bindings writes in regulated namespaces",
        });
    }
    if (ownsAvailability(cfg)) {
        roles.push(
            {
                name: KYVERNO_ROLES.generatePdb,
                controllers: ["background"],
                rules: pdbGenerationRules(),
                why: "the PodDisruptionBudgets generate-workload-pdb writes",
            },
            {
                // The replica floor lists the namespace's HPAs and the generator its PDBs (resource.List /
                // apiCall); a refused list is a policy error, and the floor fails closed.
                name: KYVERNO_ROLES.policyLookups,
                controllers: ["admission", "background", "reports"],
                rules: [
                    { apiGroups: ["autoscaling"], resources: ["horizontalpodautoscalers"], verbs: [...READ] },
                    { apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: [...READ] },
                ],
                why: "the lookups of the replica floor and the PDB generator",
            },
        );
    }
    return roles;
}
