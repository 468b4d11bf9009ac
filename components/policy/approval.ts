import type { PolicyConfig, RegulatedConfig } from "./config";
import {
    MESSAGES,
    POLICY_NAMES,
    PolicyContext,
    clusterRule,
    clusterValidating,
    denyRule,
    metadata,
    namespaceSelector,
    notTheController,
    serviceAccountUser,
    validationActions,
} from "./builders";
import type { ClusterPolicy, Condition, NamedExpression, ValidatingPolicy } from "./shapes";
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
 * matcher (kyverno/kyverno `pkg/cel/matching/matcher.go`, `resources: [rollouts/status]`), and
 * ClusterPolicies through the kind `argoproj.io/v1alpha1/Rollout/status` (`pkg/utils/match/kind.go`
 * `CheckKind`). The rules read the request's user, so they run at admission only (background
 * evaluation has no user: `pkg/validation/policy/background.go`).
 */

const STATUS = "status";

/*
 * Kyverno hands a CEL policy the admission request as JSON (kyverno/kyverno
 * pkg/cel/policies/vpol/compiler/eval.go `prepareK8sData` at v1.17.2, ConvertObjectToUnstructured),
 * and AdmissionRequest omits empty fields (k8s.io/api admission/v1 types.go: `subResource`,
 * `userInfo.username` and `userInfo.groups` are `omitempty`). So a request without a subresource
 * has no `subResource` key at all, and reading it is an error ("no such key: subResource"), which
 * the end-to-end run's regulated samples (engine-kyverno-cli) saw refuse every spec change with that
 * error instead of the policy's message. Every optional field is read through `has()`.
 */

/** CEL: the requester is one of `users`. */
const celUserIn = (users: readonly string[]) => `(has(request.userInfo.username) && request.userInfo.username in ${JSON.stringify(users)})`;
/** CEL: the requester is in one of `groups`. */
const celGroupIn = (groups: readonly string[]) => `(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ${JSON.stringify(groups)}))`;
/** CEL: the request's subresource, "" for the object itself. */
const CEL_SUBRESOURCE = 'has(request.subResource) ? request.subResource : ""';

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

/** CEL: a spec update changes a field outside `kept`, compared key by key (CEL map equality is deep). */
const celSpecChangedBesides = (kept: readonly string[]) => {
    const other = (k: string) => kept.map((f) => `${k} != "${f}"`).join(" && ");
    return (
        `variables.specUpdate && (object.spec.exists(k, ${other("k")} && (!(k in oldObject.spec) || object.spec[k] != oldObject.spec[k])) || ` +
        `oldObject.spec.exists(k, ${other("k")} && !(k in object.spec)))`
    );
};

/** CEL: the requester is one of `users` or in one of `groups`; false for neither. */
const celIdentityIn = (id: { users: readonly string[]; groups: readonly string[] }): string =>
    [...(id.users.length > 0 ? [celUserIn(id.users)] : []), ...(id.groups.length > 0 ? [celGroupIn(id.groups)] : [])].join(" || ") || "false";

/** CEL: the value of the annotation `key` (a CEL expression) of `o` (object or oldObject), "" when unset. */
const celAnnotation = (o: string, key: string) =>
    `(has(${o}.metadata.annotations) && ${key} in ${o}.metadata.annotations ? string(${o}.metadata.annotations[${key}]) : "")`;

export function approvalCelPolicy(cfg: PolicyConfig, r: RegulatedConfig, ctx: PolicyContext): ValidatingPolicy {
    const gitops = gitopsIdentities(r);
    const actions = r.actionServiceAccounts.map(serviceAccountUser);
    return {
        apiVersion: "policies.kyverno.io/v1",
        kind: "ValidatingPolicy",
        metadata: metadata(POLICY_NAMES.approval, MESSAGES.approvalSpec),
        spec: {
            validationActions: validationActions(cfg),
            failurePolicy: "Fail",
            evaluation: { background: { enabled: false } },
            matchConstraints: {
                resourceRules: [
                    {
                        apiGroups: [ROLLOUT.group],
                        apiVersions: [ROLLOUT.version],
                        resources: [ROLLOUT.resource, `${ROLLOUT.resource}/${STATUS}`],
                        operations: ["CREATE", "UPDATE", "DELETE"],
                    },
                ],
                namespaceSelector: namespaceSelector(cfg, "regulated"),
            },
            matchConditions: [notTheController(ctx)],
            variables: [
                { name: "gitops", expression: celIdentityIn(gitops) },
                { name: "action", expression: actions.length > 0 ? celUserIn(actions) : "false" },
                {
                    name: "approver",
                    expression:
                        r.deployerGroups.length > 0 ? `${celGroupIn(r.approverGroups)} && !${celGroupIn(r.deployerGroups)}` : celGroupIn(r.approverGroups),
                },
                { name: "subResource", expression: CEL_SUBRESOURCE },
                { name: "status", expression: `variables.subResource == "${STATUS}"` },
                { name: "specUpdate", expression: `request.operation == "UPDATE" && variables.subResource == ""` },
                { name: "otherSpecChanged", expression: celSpecChangedBesides(["paused"]) },
                { name: "nonActionSpecChanged", expression: celSpecChangedBesides(ACTION_SPEC_FIELDS) },
                // The namespace is being deleted: its controller removes every Rollout in it.
                {
                    name: "namespaceTerminating",
                    expression: 'has(namespaceObject.status) && has(namespaceObject.status.phase) && namespaceObject.status.phase == "Terminating"',
                },
                {
                    name: "unpausing",
                    expression:
                        "variables.specUpdate && has(oldObject.spec.paused) && oldObject.spec.paused && !(has(object.spec.paused) && object.spec.paused)",
                },
                {
                    name: "liveSyncAnnotationsChanged",
                    expression: `variables.specUpdate && ${JSON.stringify(LIVE_SYNC_ANNOTATIONS)}.exists(k, ${celAnnotation("object", "k")} != ${celAnnotation("oldObject", "k")})`,
                },
                {
                    name: "replaceOrForce",
                    expression: `request.operation != "DELETE" && variables.subResource == "" && ${celAnnotation("object", JSON.stringify(SYNC_OPTIONS_ANNOTATION))}.matches(${JSON.stringify(REPLACE_OR_FORCE)})`,
                },
            ],
            validations: [
                { expression: "!variables.status || variables.gitops || variables.action || variables.approver", message: MESSAGES.approvalStatus },
                { expression: 'request.operation != "CREATE" || variables.gitops', message: MESSAGES.approvalCreate },
                { expression: 'request.operation != "DELETE" || variables.gitops || variables.namespaceTerminating', message: MESSAGES.approvalDelete },
                {
                    expression:
                        "!variables.specUpdate || variables.gitops || (variables.action && !variables.nonActionSpecChanged) || (!variables.action && !variables.otherSpecChanged && (!variables.unpausing || variables.approver))",
                    message: MESSAGES.approvalSpec,
                },
                { expression: "!variables.liveSyncAnnotationsChanged || variables.gitops", message: MESSAGES.approvalSyncAnnotations },
                ...(r.allowReplaceOrForceSync ? [] : [{ expression: "!variables.replaceOrForce", message: MESSAGES.approvalReplaceSync }]),
            ],
        },
    };
}

/** ClusterPolicy conditions: the requester is none of `users` and in none of `groups`. */
function notIdentity(users: readonly string[], groups: readonly string[]): Condition[] {
    return [
        ...(users.length > 0 ? [{ key: "{{ request.userInfo.username }}", operator: "AnyNotIn", value: [...users] } as Condition] : []),
        ...(groups.length > 0 ? [{ key: GROUPS, operator: "AllNotIn", value: [...groups] } as Condition] : []),
    ];
}

/** JMESPath: the requester's groups; `[]` without any (the field is omitted when empty). */
const GROUPS = "{{ request.userInfo.groups || `[]` }}";

/** JMESPath: the value of the annotation `key` of `request.<o>` (object or oldObject), '' when unset. */
const jmesAnnotation = (o: string, key: string) => `{{ request.${o}.metadata.annotations.${JSON.stringify(key)} || '' }}`;

export function approvalClusterPolicy(cfg: PolicyConfig, r: RegulatedConfig, ctx: PolicyContext): ClusterPolicy {
    const gitops = gitopsIdentities(r);
    const actions = r.actionServiceAccounts.map(serviceAccountUser);
    const controller = serviceAccountUser(ctx.rolloutsController);
    const notGitops = notIdentity(gitops.users, gitops.groups);
    const notOwner = notIdentity([...gitops.users, controller], gitops.groups);
    // Status: ArgoCD's actions too (its RBAC decides who runs them). In this API the action identity
    // gets nothing more: a rule letting it change `paused` and `restartAt` alone refused ArgoCD's
    // resume and restart on Kyverno v1.17.2 though Kyverno logged both specs alike (e2e
    // engine-kyverno-cli), so here ArgoCD's restart and its resume of a `spec.paused` Rollout are
    // refused in a regulated namespace, a pause is not (docs/operations/troubleshooting.md); the
    // approval gate, a `pause: {}` step, is passed through status.
    const notOwnerOrAction = notIdentity([...gitops.users, controller, ...actions], gitops.groups);
    // Not an approver: in no approver group, or in a deployer group.
    const notApprover: Condition[] = [
        { key: GROUPS, operator: "AllNotIn", value: [...r.approverGroups] },
        ...(r.deployerGroups.length > 0 ? [{ key: GROUPS, operator: "AnyIn", value: [...r.deployerGroups] } as Condition] : []),
    ];
    // `paused: null` on both sides: every spec field but `paused` is compared (Kyverno's own pattern,
    // kyverno/kyverno `pkg/validation/policy/on_update_policy_test.go`).
    const withoutPaused = (o: string) => `{{ request.${o}.spec | merge(@, \`{"paused": null}\`) }}`;
    const liveAnnotationChanged: Condition[] = LIVE_SYNC_ANNOTATIONS.map((key) => ({
        key: jmesAnnotation("object", key),
        operator: "NotEquals",
        value: jmesAnnotation("oldObject", key),
    }));
    const replaceOrForce: Condition = {
        key: `{{ regex_match('${REPLACE_OR_FORCE}', request.object.metadata.annotations.${JSON.stringify(SYNC_OPTIONS_ANNOTATION)} || '') }}`,
        operator: "Equals",
        value: true,
    };
    const policy = clusterValidating(
        cfg,
        POLICY_NAMES.approval,
        MESSAGES.approvalSpec,
        [
            denyRule(cfg, clusterRule(cfg, "approve", ROLLOUT, { operations: ["UPDATE"], scope: "regulated", subresource: STATUS }), MESSAGES.approvalStatus, {
                all: notOwnerOrAction,
                any: notApprover,
            }),
            denyRule(cfg, clusterRule(cfg, "create", ROLLOUT, { operations: ["CREATE"], scope: "regulated" }), MESSAGES.approvalCreate, { all: notGitops }),
            denyRule(
                cfg,
                clusterRule(cfg, "delete", ROLLOUT, { operations: ["DELETE"], scope: "regulated" }),
                MESSAGES.approvalDelete,
                { all: [...notGitops, { key: "{{ namespacePhase }}", operator: "NotEquals", value: "Terminating" }] },
                [{ name: "namespacePhase", apiCall: { urlPath: "/api/v1/namespaces/{{ request.namespace }}", jmesPath: "status.phase || ''" } }],
            ),
            denyRule(cfg, clusterRule(cfg, "change", ROLLOUT, { operations: ["UPDATE"], scope: "regulated" }), MESSAGES.approvalSpec, {
                all: [...notOwner, { key: withoutPaused("object"), operator: "NotEquals", value: withoutPaused("oldObject") }],
            }),
            denyRule(cfg, clusterRule(cfg, "unpause", ROLLOUT, { operations: ["UPDATE"], scope: "regulated" }), MESSAGES.approvalSpec, {
                all: [
                    ...notOwner,
                    { key: "{{ request.oldObject.spec.paused || `false` }}", operator: "Equals", value: true },
                    { key: "{{ request.object.spec.paused || `false` }}", operator: "Equals", value: false },
                ],
                any: notApprover,
            }),
            denyRule(cfg, clusterRule(cfg, "sync-annotations", ROLLOUT, { operations: ["UPDATE"], scope: "regulated" }), MESSAGES.approvalSyncAnnotations, {
                all: notOwner,
                any: liveAnnotationChanged,
            }),
            ...(r.allowReplaceOrForceSync
                ? []
                : [
                      denyRule(
                          cfg,
                          clusterRule(cfg, "replace-sync", ROLLOUT, { operations: ["CREATE", "UPDATE"], scope: "regulated" }),
                          MESSAGES.approvalReplaceSync,
                          { all: [...notIdentity([controller], []), replaceOrForce] },
                          undefined,
                          { judgeRequest: true },
                      ),
                  ]),
        ],
        { background: false },
    );
    // Kyverno 1.12+ passes these to the webhook; older releases prune them and the rules still let the controller through.
    return { ...policy, spec: { ...policy.spec, webhookConfiguration: { matchConditions: [notTheController(ctx)] } } };
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
 * Both tests are match conditions too, so the API server calls Kyverno only for a write it refuses:
 * never for the workload controllers (a Kyverno outage does not stop a ReplicaSet from making its
 * Pods) and never for a Deployment's ReplicaSets and Pods. A ClusterPolicy's webhook covers every
 * namespace Kyverno's own configuration lets it see (kyverno/kyverno v1.17.2
 * pkg/controllers/webhook/controller.go, `webhookCfg.NamespaceSelector`), so without these
 * conditions every ReplicaSet write of the cluster would wait on Kyverno.
 */
function workloadWriters(ctx: PolicyContext): string[] {
    return [serviceAccountUser(ctx.rolloutsController), ...WORKLOAD_CONTROLLER_USERS];
}

/** CEL: `o` (object or oldObject) is a Rollout's ReplicaSet or Pod, or wears a Rollout revision's label. */
function celOfRollout(o: string): string {
    const labelled = (path: string) => `(has(${o}.${path}.labels) && ${JSON.stringify(REVISION_LABEL)} in ${o}.${path}.labels)`;
    const owned = `(has(${o}.metadata.ownerReferences) && ${o}.metadata.ownerReferences.exists(ref, ref.kind == ${JSON.stringify(ROLLOUT.kind)} && ref.apiVersion == ${JSON.stringify(apiVersion(ROLLOUT))}))`;
    const template = `(has(${o}.spec) && has(${o}.spec.template) && has(${o}.spec.template.metadata) && ${labelled("spec.template.metadata")})`;
    return `(${labelled("metadata")} || ${owned} || ${template})`;
}

/** The match conditions of the ReplicaSet and Pod guard, in both APIs (the API server evaluates them). */
function approvalPodsMatchConditions(ctx: PolicyContext): NamedExpression[] {
    return [
        {
            name: "not-a-workload-controller",
            expression: `!has(request.userInfo.username) || !(request.userInfo.username in ${JSON.stringify(workloadWriters(ctx))})`,
        },
        {
            name: "a-rollouts-replicaset-or-pod",
            expression: `(has(request.subResource) && request.subResource == "scale") || ${celOfRollout("object")} || (request.operation == "UPDATE" && ${celOfRollout("oldObject")})`,
        },
    ];
}

export function approvalPodsCelPolicy(cfg: PolicyConfig, ctx: PolicyContext): ValidatingPolicy {
    return {
        apiVersion: "policies.kyverno.io/v1",
        kind: "ValidatingPolicy",
        metadata: metadata(POLICY_NAMES.approvalPods, MESSAGES.approvalPods),
        spec: {
            validationActions: validationActions(cfg),
            failurePolicy: "Fail",
            evaluation: { background: { enabled: false } },
            matchConstraints: {
                resourceRules: [
                    {
                        apiGroups: [REPLICASET.group],
                        apiVersions: [REPLICASET.version],
                        resources: [REPLICASET.resource, `${REPLICASET.resource}/scale`],
                        operations: ["CREATE", "UPDATE"],
                    },
                    {
                        apiGroups: [POD.group],
                        apiVersions: [POD.version],
                        resources: [POD.resource, `${POD.resource}/ephemeralcontainers`],
                        operations: ["CREATE", "UPDATE"],
                    },
                ],
                namespaceSelector: namespaceSelector(cfg, "regulated"),
            },
            // Everything that reaches the validation is refused: the match conditions hold the rule.
            matchConditions: approvalPodsMatchConditions(ctx),
            validations: [{ expression: "false", message: MESSAGES.approvalPods }],
        },
    };
}

export function approvalPodsClusterPolicy(cfg: PolicyConfig, ctx: PolicyContext): ClusterPolicy {
    // The rules repeat the match conditions: a Kyverno before 1.12 prunes them and calls the rules
    // for every ReplicaSet and Pod write.
    const notWriter = notIdentity(workloadWriters(ctx), []);
    const label = (o: string, path = "metadata") =>
        ({ key: `{{ request.${o}.${path}.labels.${JSON.stringify(REVISION_LABEL)} || '' }}`, operator: "NotEquals", value: "" }) as Condition;
    const owned = (o: string) =>
        ({
            key: `{{ length(request.${o}.metadata.ownerReferences[?kind=='${ROLLOUT.kind}' && apiVersion=='${apiVersion(ROLLOUT)}'] || \`[]\`) }}`,
            operator: "GreaterThan",
            value: 0,
        }) as Condition;
    const both = (f: (o: string) => Condition[]) => [...f("object"), ...f("oldObject")];
    const policy = clusterValidating(
        cfg,
        POLICY_NAMES.approvalPods,
        MESSAGES.approvalPods,
        [
            denyRule(
                cfg,
                clusterRule(cfg, "change", REPLICASET, { operations: ["CREATE", "UPDATE"], scope: "regulated" }),
                MESSAGES.approvalPods,
                { all: notWriter, any: both((o) => [label(o), owned(o), label(o, "spec.template.metadata")]) },
                undefined,
                { judgeRequest: true },
            ),
            denyRule(
                cfg,
                clusterRule(cfg, "scale", REPLICASET, { operations: ["UPDATE"], scope: "regulated", subresource: "scale" }),
                MESSAGES.approvalPods,
                { all: notWriter },
                undefined,
                { judgeRequest: true },
            ),
            // Kyverno matches a Pod rule for pods/ephemeralcontainers too, and its webhook asks for
            // them (kyverno/kyverno v1.17.2 pkg/utils/match/kind.go `CheckKind`,
            // pkg/controllers/webhook/utils_webhook.go).
            denyRule(
                cfg,
                clusterRule(cfg, "change", POD, { operations: ["CREATE", "UPDATE"], scope: "regulated" }),
                MESSAGES.approvalPods,
                { all: notWriter, any: both((o) => [label(o)]) },
                undefined,
                { judgeRequest: true },
            ),
        ],
        { background: false },
    );
    return { ...policy, spec: { ...policy.spec, webhookConfiguration: { matchConditions: approvalPodsMatchConditions(ctx) } } };
}
