import type { ArgoRbacConfig } from "../config/admission";

/**
 * ArgoCD RBAC for Rollout actions (ADR-056 D3, regulated prod: deployer != approver, ADR-049).
 * The controller chart's aggregate roles are off (rollouts stage), so Kubernetes RBAC does not let
 * a namespace editor promote; this closes the same door in ArgoCD's UI and CLI.
 */

/**
 * argocd-rbac-cm merges every `policy.<name>.csv` key below `policy.csv` (argo-cd docs,
 * argocd-rbac-cm.yaml): the program writes its own key and never touches the platform's policy.
 */
export const ROLLOUT_ACTIONS_POLICY_KEY = "policy.argo-rollouts-addon.csv";

/**
 * One line per action and project: `p, <subject>, applications, action/argoproj.io/Rollout/<action>,
 * <project>/*, allow|deny`. The approver is allowed; each deployer role is denied, and in ArgoCD a
 * deny wins over any allow, including a broad `action/*` the platform may grant elsewhere. Scoped to
 * named projects: no grant covers every project. Undefined when no approver is configured.
 */
export function rolloutActionsPolicyCsv(rbac: Readonly<ArgoRbacConfig>): string | undefined {
    if (rbac.approverRole === undefined || rbac.projects.length === 0) {
        return undefined;
    }
    const lines = ["# Rollout promotion and abort: the approver only (ADR-056 D3). Managed by argo-rollouts-addon."];
    const grant = (subject: string, effect: "allow" | "deny") => {
        for (const project of rbac.projects) {
            for (const action of rbac.actions) {
                lines.push(`p, ${subject}, applications, action/argoproj.io/Rollout/${action}, ${project}/*, ${effect}`);
            }
        }
    };
    grant(rbac.approverRole, "allow");
    for (const deployer of rbac.deployerRoles) {
        grant(deployer, "deny");
    }
    return `${lines.join("\n")}\n`;
}
