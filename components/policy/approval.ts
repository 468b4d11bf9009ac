import type { RegulatedConfig } from "./config";
import { MESSAGES, POLICY_NAMES, PolicyContext, notTheController, serviceAccountUser } from "./builders";
import { Cond, Field, Rule, and, eq, field, groupIn, has, not, or, userIn } from "./rule";
import { POD, REPLICASET, ROLLOUT, apiVersion } from "./workloads";

/**
 * Regulated prod's separation of duties (ADR-056 D3, ADR-049), enforced at admission, because
 * Kubernetes RBAC alone leaves these ways around the approval gate (a Rollout's ReplicaSets and
 * Pods: restrict-regulated-rollout-pods, below):
 * - changing a Rollout's spec: changing `spec.strategy.canary.steps` (or the pod template) resets
 *   the status and clears the pause conditions, the approval pause included (argo-rollouts v1.9.0
 *   `rollout/canary.go` `syncRolloutStatusCanary`, `rollout/sync.go` `resetRolloutStatus`); and a
 *   newly created Rollout is promoted fully without steps (`rollout/sync.go` `shouldFullPromote`,
 *   "Initial deploy"). So in a regulated namespace only the GitOps controller creates a Rollout or
 *   changes its spec; an approver may only unpause it (`spec.paused`).
 * - writing status: `kubectl argo rollouts promote` clears `status.pauseConditions` (or sets
 *   `promoteFull`, or moves `currentStepIndex`) through the `rollouts/status` subresource, and
 *   unpauses with a spec patch `{"spec":{"paused":false}}`; abort and retry patch `status.abort`
 *   (argo-rollouts v1.9.0 `pkg/kubectl-argo-rollouts/cmd/promote`, `abort`, `retry`). ArgoCD's
 *   Rollout actions do the same as the ArgoCD server's identity, status first through the
 *   subresource (argo-cd v3.5.1 `server/application/application.go` `patchResource`,
 *   `resource_customizations/argoproj.io/Rollout/actions`). So status is written only by the
 *   controller, by approvers who are no deployers, and by ArgoCD (ArgoCD's RBAC decides who may
 *   run an action there: `argocd.rbac`).
 * - ArgoCD's two identities are not alike. The application controller (`gitopsServiceAccounts`,
 *   or as a hub's ArgoCD arrives, `gitopsUsers`, `gitopsGroups`) syncs what git holds. The API server (`actionServiceAccounts`) writes for whichever user
 *   ArgoCD's RBAC lets through: a Rollout action, but also a resource patch of any spec field
 *   (`PatchResource`) and a resource delete (`DeleteResource`). So the server may write only what
 *   the Rollout actions write: status (abort, promote-full, resume, retry, skip-current-step),
 *   `spec.paused` (pause, resume) and `spec.restartAt` (restart) (argo-cd v3.5.1
 *   resource_customizations/argoproj.io/Rollout/actions/<action>/action.lua); never a create, a
 *   delete or another spec field.
 * - deleting it: GitOps recreates a deleted Rollout, and its first version is promoted fully (the
 *   same `shouldFullPromote`). So only the GitOps identities delete one, or the namespace's own
 *   deletion (the namespace is Terminating).
 * - ArgoCD's sync reads options from the live object, not only from git: `Replace=true` and
 *   `Force=true` in `argocd.argoproj.io/sync-options` make the next sync replace the Rollout, with
 *   force a delete and a create (argo-cd v3.5.1 gitops-engine/pkg/sync/sync_context.go
 *   `applyObject`: `shouldReplace`, `force`, each also `t.liveObj`'s), and a recreated Rollout is
 *   promoted fully (`shouldFullPromote`). So only the GitOps identities change the annotations a
 *   sync reads from the live object (LIVE_SYNC_ANNOTATIONS), and no identity gives a regulated
 *   Rollout `Replace=true` or `Force=true` unless the stack allows it (`allowReplaceOrForceSync`).
 * Both APIs match the `rollouts/status` subresource: CEL policies through the API server's rule
 * matcher (kyverno/kyverno `pkg/cel/matching/matcher.go`), ClusterPolicies through the kind
 * `argoproj.io/v1alpha1/Rollout/status` (`pkg/utils/match/kind.go` `CheckKind`). The rules read the
 * request's user, so they run at admission only (`pkg/validation/policy/background.go`).
 *
 * Where the APIs differ: ArgoCD's API server may write `spec.paused` and `spec.restartAt` (its pause,
 * resume and restart actions) in the CEL form only. A ClusterPolicy rule letting it change those
 * alone refused ArgoCD's resume and restart on Kyverno v1.17.2 though Kyverno logged both specs alike
 * (e2e engine-kyverno-cli), so there ArgoCD's restart and its resume of a `spec.paused` Rollout are
 * refused in a regulated namespace, a pause is not (docs/operations/troubleshooting.md); the
 * approval gate, a `pause: {}` step, is passed through status.
 */

/** The spec fields ArgoCD's Rollout actions write (pause, resume: `paused`; restart: `restartAt`). */
export const ACTION_SPEC_FIELDS: readonly string[] = ["paused", "restartAt"];

/** The annotation ArgoCD's sync options live in (argo-cd v3.5.1 gitops-engine/pkg/sync/common/types.go `AnnotationSyncOptions`). */
export const SYNC_OPTIONS_ANNOTATION = "argocd.argoproj.io/sync-options";

/**
 * The annotations an ArgoCD sync reads from the live object, not only from git (argo-cd v3.5.1
 * gitops-engine/pkg/sync): `sync-options` for Replace, Force, Prune and PruneLast
 * (sync_context.go `applyObject`, `isPruningDisabled`, `objRequiresPruneConfirmation`, the
 * prune-last tasks) and Delete (controller/state.go); the wave and hook annotations, Argo's and
 * Helm's, of a task that prunes the live object (sync_task.go `wave`, `isHook`,
 * `hasHookDeletePolicy` read `obj()`, the live object when git has none; hook/hook.go,
 * hook/helm/*.go, syncwaves/waves.go).
 */
export const LIVE_SYNC_ANNOTATIONS: readonly string[] = [
    SYNC_OPTIONS_ANNOTATION,
    "argocd.argoproj.io/sync-wave",
    "argocd.argoproj.io/hook",
    "argocd.argoproj.io/hook-delete-policy",
    "helm.sh/hook",
    "helm.sh/hook-weight",
    "helm.sh/hook-delete-policy",
];

/**
 * A sync option list that asks for a replace or a forced apply, as gitops-engine reads it: the
 * annotation split at commas, each item trimmed, `Replace=true` or `Force=true` exactly
 * (gitops-engine/pkg/sync/resource/annotations.go `GetAnnotationCSVs`, `HasAnnotationOption`).
 * RE2 and JavaScript read it alike; `\s` stands for Go's TrimSpace.
 */
export const REPLACE_OR_FORCE = "(^|,)\\s*(Replace|Force)=true\\s*(,|$)";

/** The user names and groups the GitOps sync arrives as (policy.regulated). */
export function gitopsIdentities(r: RegulatedConfig): { users: string[]; groups: string[] } {
    return { users: [...r.gitopsServiceAccounts.map(serviceAccountUser), ...r.gitopsUsers], groups: [...r.gitopsGroups] };
}

/**
 * The writers of a Rollout's ReplicaSets and Pods besides Argo Rollouts: Kubernetes' ReplicaSet
 * controller creates the Pods and adopts or releases them by a patch of their owner references,
 * the garbage collector patches owner references and deletes dependents (kubernetes v1.35.4
 * pkg/controller/controller_ref_manager.go `AdoptPod`, `ReleasePod`;
 * pkg/controller/garbagecollector/operations.go `patchObject`). kube-controller-manager gives
 * each its own ServiceAccount with `--use-service-account-credentials`
 * (cmd/kube-controller-manager/app/apps.go `NewClient("replicaset-controller")`, core.go
 * `"generic-garbage-collector"`), and its own identity otherwise. Both write ReplicaSet status only
 * through the `replicasets/status` subresource (pkg/controller/replicaset/replica_set_utils.go
 * `UpdateStatus`), which no guard matches. Kubernetes' fixed names, not the platform's.
 */
export const WORKLOAD_CONTROLLER_USERS: readonly string[] = [
    "system:serviceaccount:kube-system:replicaset-controller",
    "system:serviceaccount:kube-system:generic-garbage-collector",
    "system:kube-controller-manager",
];

/** The label Argo Rollouts gives every ReplicaSet it creates, their pod template and so their Pods (argo-rollouts v1.9.0 rollout/sync.go `getNewReplicaSet`). */
const REVISION_LABEL = ROLLOUT.revisionLabel!;

const annotation = (from: "object" | "oldObject", key: string): Field => field(from, ["metadata", "annotations", key], "");

export function approvalRule(r: RegulatedConfig, ctx: PolicyContext): Rule {
    const gitops = gitopsIdentities(r);
    const on = (operations: ("CREATE" | "UPDATE" | "DELETE")[], subresource?: string) => [
        { kind: ROLLOUT, operations, ...(subresource ? { subresource } : {}) },
    ];
    const action: Cond = { var: "action" };
    // ArgoCD's API server writes the actions' spec fields in the CEL form only (above).
    const specAction: Cond = { celOnly: action };
    const notGitops = not({ var: "gitops" });
    const notApprover = not({ var: "approver" });
    const unpausing = and(eq(field("oldObject", "spec.paused"), true), not(eq(field("object", "spec.paused"), true)));
    return {
        name: POLICY_NAMES.approval,
        description: MESSAGES.approvalSpec,
        scope: "regulated",
        background: false,
        when: [notTheController(ctx)],
        vars: {
            gitops: or(userIn(gitops.users), groupIn(gitops.groups)),
            action: userIn(r.actionServiceAccounts.map(serviceAccountUser)),
            approver: and(groupIn(r.approverGroups), not(groupIn(r.deployerGroups))),
        },
        checks: [
            // Status: ArgoCD's actions too (its RBAC decides who runs them).
            { id: "approve", on: on(["UPDATE"], "status"), deny: and(notGitops, not(action), notApprover), message: MESSAGES.approvalStatus },
            { id: "create", on: on(["CREATE"]), deny: notGitops, message: MESSAGES.approvalCreate },
            // The namespace is being deleted: its controller removes every Rollout in it.
            {
                id: "delete",
                on: on(["DELETE"]),
                deny: and(notGitops, not(eq(field("namespace", "status.phase"), "Terminating"))),
                message: MESSAGES.approvalDelete,
            },
            {
                id: "change",
                on: on(["UPDATE"]),
                deny: and(notGitops, or(and(specAction, { specChangedBesides: ACTION_SPEC_FIELDS }), and(not(specAction), { specChangedBesides: ["paused"] }))),
                message: MESSAGES.approvalSpec,
            },
            { id: "unpause", on: on(["UPDATE"]), deny: and(notGitops, not(specAction), unpausing, notApprover), message: MESSAGES.approvalSpec },
            {
                id: "sync-annotations",
                on: on(["UPDATE"]),
                deny: and(notGitops, or(...LIVE_SYNC_ANNOTATIONS.map((k) => not(eq(annotation("object", k), annotation("oldObject", k)))))),
                message: MESSAGES.approvalSyncAnnotations,
            },
            ...(r.allowReplaceOrForceSync
                ? []
                : [
                      {
                          id: "replace-sync",
                          on: on(["CREATE", "UPDATE"]),
                          deny: { matches: annotation("object", SYNC_OPTIONS_ANNOTATION), re: REPLACE_OR_FORCE },
                          message: MESSAGES.approvalReplaceSync,
                          judgeRequest: true,
                      },
                  ]),
        ],
    };
}

/**
 * A regulated Rollout's ReplicaSets and Pods (ADR-056 D3): Argo Rollouts does not revert an
 * edited ReplicaSet, and it adopts an orphan ReplicaSet that matches a Rollout's selector, taking
 * one whose `rollouts-pod-template-hash` is the desired revision's as that revision's (argo-rollouts
 * v1.9.0 rollout/replicaset.go `getReplicaSetsForRollouts`, `ClaimReplicaSets`; utils/replicaset
 * `FindNewReplicaSet`). So a ReplicaSet edited, created or scaled beside the Rollout runs a version
 * nobody approved, and Pods wearing the revision label join the revision's Services. In a regulated
 * namespace only Argo Rollouts and Kubernetes' workload controllers (WORKLOAD_CONTROLLER_USERS)
 * create or change a ReplicaSet owned by a Rollout or carrying the revision label (in its metadata
 * or its pod template: a Deployment's controller would otherwise make one), or a Pod carrying it
 * (ephemeral containers included), or scale any ReplicaSet: a scale request carries only a Scale
 * object, and every ReplicaSet is a controller's to scale (a Deployment's through the ReplicaSet
 * itself, kubernetes v1.35.4 pkg/controller/deployment/sync.go `scaleReplicaSet`).
 *
 * Both tests are match conditions, so the API server calls Kyverno only for a write it refuses:
 * never for the workload controllers (a Kyverno outage does not stop a ReplicaSet from making its
 * Pods) and never for a Deployment's ReplicaSets and Pods. A ClusterPolicy's webhook covers every
 * namespace Kyverno's own configuration lets it see (kyverno/kyverno v1.17.2
 * pkg/controllers/webhook/controller.go, `webhookCfg.NamespaceSelector`), so without these
 * conditions every ReplicaSet write of the cluster would wait on Kyverno.
 */
export function approvalPodsRule(ctx: PolicyContext): Rule {
    const labelled = (from: "object" | "oldObject", at: string) => has(field(from, [...at.split("."), "labels", REVISION_LABEL]));
    const ownedBy = (from: "object" | "oldObject") =>
        or(
            labelled(from, "metadata"),
            {
                some: field(from, "metadata.ownerReferences"),
                where: and(eq(field("item", "kind"), ROLLOUT.kind), eq(field("item", "apiVersion"), apiVersion(ROLLOUT))),
            },
            labelled(from, "spec.template.metadata"),
        );
    return {
        name: POLICY_NAMES.approvalPods,
        scope: "regulated",
        background: false,
        when: [
            { name: "not-a-workload-controller", cond: not(userIn([serviceAccountUser(ctx.rolloutsController), ...WORKLOAD_CONTROLLER_USERS])) },
            {
                name: "a-rollouts-replicaset-or-pod",
                cond: or(
                    eq(field("request", "subResource", ""), "scale"),
                    ownedBy("object"),
                    and(eq(field("request", "operation"), "UPDATE"), ownedBy("oldObject")),
                ),
            },
        ],
        // Everything the match conditions let through is refused.
        checks: [
            {
                id: "change",
                on: [{ kind: REPLICASET }, { kind: REPLICASET, operations: ["UPDATE"], subresource: "scale" }, { kind: POD }],
                deny: true,
                message: MESSAGES.approvalPods,
                judgeRequest: true,
            },
        ],
    };
}
