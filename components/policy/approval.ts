import type { PolicyConfig, RegulatedConfig } from "./config";
import { MESSAGES, POLICY_NAMES, PolicyContext, clusterRule, clusterValidating, denyRule, metadata, namespaceSelector, notTheController, serviceAccountUser, validationActions } from "./builders";
import type { ClusterPolicy, Condition, ValidatingPolicy } from "./shapes";
import { ROLLOUT } from "./workloads";

/**
 * Regulated prod's separation of duties (ADR-056 D3, ADR-049), enforced at admission, because
 * Kubernetes RBAC alone leaves two ways around the approval gate:
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
 * - ArgoCD's two identities are not alike. The application controller (`gitopsServiceAccounts`)
 *   syncs what git holds. The API server (`actionServiceAccounts`) writes for whichever user
 *   ArgoCD's RBAC lets through: a Rollout action, but also a resource patch of any spec field
 *   (`PatchResource`) and a resource delete (`DeleteResource`). So the server may write only what
 *   the Rollout actions write: status (abort, promote-full, resume, retry, skip-current-step),
 *   `spec.paused` (pause, resume) and `spec.restartAt` (restart) (argo-cd v3.5.1
 *   resource_customizations/argoproj.io/Rollout/actions/<action>/action.lua); never a create, a
 *   delete or another spec field.
 * - deleting it: GitOps recreates a deleted Rollout, and its first version is promoted fully (the
 *   same `shouldFullPromote`). So only the GitOps identities delete one, or the namespace's own
 *   deletion (the namespace is Terminating).
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
 * the e2e scenario kyverno-regulated saw refuse every spec change with that error instead of the
 * policy's message. Every optional field is read through `has()`.
 */

/** CEL: the requester is one of `users`. */
const celUserIn = (users: readonly string[]) => `(has(request.userInfo.username) && request.userInfo.username in ${JSON.stringify(users)})`;
/** CEL: the requester is in one of `groups`. */
const celGroupIn = (groups: readonly string[]) => `(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ${JSON.stringify(groups)}))`;
/** CEL: the request's subresource, "" for the object itself. */
const CEL_SUBRESOURCE = 'has(request.subResource) ? request.subResource : ""';

/** The spec fields ArgoCD's Rollout actions write (pause, resume: `paused`; restart: `restartAt`). */
export const ACTION_SPEC_FIELDS: readonly string[] = ["paused", "restartAt"];

/** CEL: a spec update changes a field outside `kept`, compared key by key (CEL map equality is deep). */
const celSpecChangedBesides = (kept: readonly string[]) => {
    const other = (k: string) => kept.map((f) => `${k} != "${f}"`).join(" && ");
    return (
        `variables.specUpdate && (object.spec.exists(k, ${other("k")} && (!(k in oldObject.spec) || object.spec[k] != oldObject.spec[k])) || ` +
        `oldObject.spec.exists(k, ${other("k")} && !(k in object.spec)))`
    );
};

export function approvalCelPolicy(cfg: PolicyConfig, r: RegulatedConfig, ctx: PolicyContext): ValidatingPolicy {
    const gitops = r.gitopsServiceAccounts.map(serviceAccountUser);
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
                resourceRules: [{ apiGroups: [ROLLOUT.group], apiVersions: [ROLLOUT.version], resources: [ROLLOUT.resource, `${ROLLOUT.resource}/${STATUS}`], operations: ["CREATE", "UPDATE", "DELETE"] }],
                namespaceSelector: namespaceSelector(cfg, "regulated"),
            },
            matchConditions: [notTheController(ctx)],
            variables: [
                { name: "gitops", expression: celUserIn(gitops) },
                { name: "action", expression: actions.length > 0 ? celUserIn(actions) : "false" },
                { name: "approver", expression: r.deployerGroups.length > 0 ? `${celGroupIn(r.approverGroups)} && !${celGroupIn(r.deployerGroups)}` : celGroupIn(r.approverGroups) },
                { name: "subResource", expression: CEL_SUBRESOURCE },
                { name: "status", expression: `variables.subResource == "${STATUS}"` },
                { name: "specUpdate", expression: `request.operation == "UPDATE" && variables.subResource == ""` },
                { name: "otherSpecChanged", expression: celSpecChangedBesides(["paused"]) },
                { name: "nonActionSpecChanged", expression: celSpecChangedBesides(ACTION_SPEC_FIELDS) },
                // The namespace is being deleted: its controller removes every Rollout in it.
                { name: "namespaceTerminating", expression: 'has(namespaceObject.status) && has(namespaceObject.status.phase) && namespaceObject.status.phase == "Terminating"' },
                {
                    name: "unpausing",
                    expression: "variables.specUpdate && has(oldObject.spec.paused) && oldObject.spec.paused && !(has(object.spec.paused) && object.spec.paused)",
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
            ],
        },
    };
}

export function approvalClusterPolicy(cfg: PolicyConfig, r: RegulatedConfig, ctx: PolicyContext): ClusterPolicy {
    const gitops = r.gitopsServiceAccounts.map(serviceAccountUser);
    const actions = r.actionServiceAccounts.map(serviceAccountUser);
    const controller = serviceAccountUser(ctx.rolloutsController);
    const user = "{{ request.userInfo.username }}";
    const owners = [...gitops, controller];
    const notOwner: Condition = { key: user, operator: "AnyNotIn", value: owners };
    // Status: ArgoCD's actions too (its RBAC decides who runs them). In this API the action identity
    // gets nothing more: a rule letting it change `paused` and `restartAt` alone refused ArgoCD's
    // resume and restart on Kyverno v1.17.2 though Kyverno logged both specs alike (e2e
    // kyverno-regulated), so here ArgoCD's restart and its resume of a `spec.paused` Rollout are
    // refused in a regulated namespace, a pause is not (docs/operations/troubleshooting.md); the
    // approval gate, a `pause: {}` step, is passed through status.
    const notOwnerOrAction: Condition = { key: user, operator: "AnyNotIn", value: [...owners, ...actions] };
    const groups = "{{ request.userInfo.groups || `[]` }}";
    // Not an approver: in no approver group, or in a deployer group.
    const notApprover: Condition[] = [
        { key: groups, operator: "AllNotIn", value: [...r.approverGroups] },
        ...(r.deployerGroups.length > 0 ? [{ key: groups, operator: "AnyIn", value: [...r.deployerGroups] } as Condition] : []),
    ];
    // `paused: null` on both sides: every spec field but `paused` is compared (Kyverno's own pattern,
    // kyverno/kyverno `pkg/validation/policy/on_update_policy_test.go`).
    const withoutPaused = (o: string) => `{{ request.${o}.spec | merge(@, \`{"paused": null}\`) }}`;
    const policy = clusterValidating(
        cfg,
        POLICY_NAMES.approval,
        MESSAGES.approvalSpec,
        [
            denyRule(cfg, clusterRule(cfg, "approve", ROLLOUT, { operations: ["UPDATE"], scope: "regulated", subresource: STATUS }), MESSAGES.approvalStatus, { all: [notOwnerOrAction], any: notApprover }),
            denyRule(cfg, clusterRule(cfg, "create", ROLLOUT, { operations: ["CREATE"], scope: "regulated" }), MESSAGES.approvalCreate, {
                all: [{ key: user, operator: "AnyNotIn", value: gitops }],
            }),
            denyRule(
                cfg,
                clusterRule(cfg, "delete", ROLLOUT, { operations: ["DELETE"], scope: "regulated" }),
                MESSAGES.approvalDelete,
                {
                    all: [
                        { key: user, operator: "AnyNotIn", value: gitops },
                        { key: "{{ namespacePhase }}", operator: "NotEquals", value: "Terminating" },
                    ],
                },
                [{ name: "namespacePhase", apiCall: { urlPath: "/api/v1/namespaces/{{ request.namespace }}", jmesPath: "status.phase || ''" } }],
            ),
            denyRule(cfg, clusterRule(cfg, "change", ROLLOUT, { operations: ["UPDATE"], scope: "regulated" }), MESSAGES.approvalSpec, {
                all: [notOwner, { key: withoutPaused("object"), operator: "NotEquals", value: withoutPaused("oldObject") }],
            }),
            denyRule(cfg, clusterRule(cfg, "unpause", ROLLOUT, { operations: ["UPDATE"], scope: "regulated" }), MESSAGES.approvalSpec, {
                all: [
                    notOwner,
                    { key: "{{ request.oldObject.spec.paused || `false` }}", operator: "Equals", value: true },
                    { key: "{{ request.object.spec.paused || `false` }}", operator: "Equals", value: false },
                ],
                any: notApprover,
            }),
        ],
        { background: false },
    );
    // Kyverno 1.12+ passes these to the webhook; older releases prune them and the rules still let the controller through.
    return { ...policy, spec: { ...policy.spec, webhookConfiguration: { matchConditions: [notTheController(ctx)] } } };
}
