import * as assert from "assert";
import * as YAML from "yaml";
import {
    BUILTIN_KINDS,
    HTTPROUTE_WEIGHTS_RULE,
    IgnoreRule,
    SERVICE_SELECTOR_RULE,
    argocdCmIgnoreData,
    argocdCmKey,
    canaryRuleReasons,
    expandAllKinds,
    labelConditionalRouteRule,
    pointerCovers,
    rolloutArrayPathReasons,
} from "../components/argocd/ignoreRules";
import { KeptObjectRef, LiveAppProject, LiveApplicationSet, appProjectProblems, applicationSetProblems, globMatch } from "../components/argocd/keptObjects";
import { TAKE_OVER_LISTS } from "../components/argocd/ownership";
import { ROLLOUT_PROJECT_KINDS, appProjectPatch, projectWhitelist } from "../components/argocd/projects";
import { APPROVER_ROLLOUT_ACTIONS, ROLLOUT_ACTIONS_POLICY_KEY, rolloutActionsPolicyCsv } from "../components/argocd/rbac";
import {
    COMPARE_OPTIONS_ANNOTATION,
    TENANT_COMPARE_OPTIONS,
    TENANT_SYNC_OPTIONS,
    applicationSetPatch,
    conflictingSyncOptions,
    tenantSyncSettings,
} from "../components/argocd/syncOptions";
import { loadArgoRbac } from "../tools/verify/argocdRbac";
import { OfflineRun, PlannedResource } from "../tools/offline";
import { fromConfigMap, placeholderKeptArgoObjects, placeholderWorld } from "../tools/stackFile";
import { byName, hubConfig, merged, planInline, transitiveDeps } from "./harness";

/** An argocd.rbac without regulated projects. */
const NO_REGULATED = { regulatedProjects: [], approverGroups: [], deployerGroups: [] };

const rule = (r: Partial<IgnoreRule> & Pick<IgnoreRule, "kind">): IgnoreRule => ({
    group: "",
    jsonPointers: [],
    jqPathExpressions: [],
    managedFieldsManagers: [],
    ...r,
});
const rollout = (r: Partial<IgnoreRule>) => rule({ group: "argoproj.io", kind: "Rollout", ...r });

const tenantArgoCd = {
    projects: {
        tenants: {
            owner: "addon",
            namespaceResources: [
                { group: "", kind: "Service" },
                { group: "apps", kind: "Deployment" },
                { group: "gateway.networking.k8s.io", kind: "HTTPRoute" },
            ],
        },
    },
    applicationSets: {
        "tenant-apps": {
            owner: "addon",
            syncOptions: ["CreateNamespace=true"],
            ignoreDifferences: [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }],
        },
    },
    ignoreDifferences: [{ kind: "*", jqPathExpressions: [".spec.template.spec.containers[].securityContext"] }],
    rbac: { approverRole: "role:approver", deployerRoles: ["role:deployer"] },
};

describe("argocd-apps stage", () => {
    describe("ignore rules (pure)", () => {
        it("keys argocd-cm rules by <group>_<Kind>, and by <Kind> alone for the core group", () => {
            assert.strictEqual(
                argocdCmKey({ group: "gateway.networking.k8s.io", kind: "HTTPRoute" }),
                "resource.customizations.ignoreDifferences.gateway.networking.k8s.io_HTTPRoute",
            );
            assert.strictEqual(argocdCmKey({ group: "", kind: "Service" }), "resource.customizations.ignoreDifferences.Service");
        });

        it("ignores only the weights of rules that can carry a canary, and only the controller's selector key", () => {
            // The rules themselves are pinned where the tenant sync settings are tested below.
            assert.strictEqual(labelConditionalRouteRule(HTTPROUTE_WEIGHTS_RULE), undefined);
            assert.deepStrictEqual(canaryRuleReasons(HTTPROUTE_WEIGHTS_RULE, "application"), []);
            assert.deepStrictEqual(canaryRuleReasons(SERVICE_SELECTOR_RULE, "application"), []);
        });

        it("refuses rules that would freeze route or selector edits, with the reason", () => {
            const route = (r: Partial<IgnoreRule>) => rule({ group: "gateway.networking.k8s.io", kind: "HTTPRoute", ...r });
            const weights = { jqPathExpressions: [".spec.rules[]?.backendRefs[]?.weight"] };
            const wholeSelector = /whole Service selector.*\/spec\/selector\/rollouts-pod-template-hash/;
            const cases: [IgnoreRule, "application" | "system", RegExp | undefined][] = [
                [route({ managedFieldsManagers: ["gatewayAPI"] }), "application", /spec.rules is an atomic list.*reports Synced/],
                [route(weights), "system", /every HTTPRoute of every Application/],
                [route({ jsonPointers: ["/spec/rules/0/backendRefs/1/weight"] }), "system", /every HTTPRoute of every Application/],
                [route(weights), "application", undefined],
                [route({ jsonPointers: ["/metadata/annotations"] }), "system", undefined],
                [rule({ kind: "Service", jsonPointers: ["/spec/selector"] }), "application", wholeSelector],
                [rule({ kind: "Service", jqPathExpressions: [" .spec.selector "] }), "application", wholeSelector],
                [rule({ kind: "Service", managedFieldsManagers: ["rollouts-controller"] }), "application", wholeSelector],
                [rule({ kind: "Service", jsonPointers: ["/spec/clusterIP"] }), "system", undefined],
            ];
            for (const [r, scope, reason] of cases) {
                const found = canaryRuleReasons(r, scope);
                assert.strictEqual(found.length, reason ? 1 : 0, JSON.stringify([r, found]));
                if (reason) {
                    assert.match(found[0], reason);
                }
            }
        });

        it("knows which JSON pointers cover a field", () => {
            assert.ok(pointerCovers("/spec/selector", "/spec/selector/rollouts-pod-template-hash"));
            assert.ok(pointerCovers("/spec/selector/rollouts-pod-template-hash", "/spec/selector/rollouts-pod-template-hash"));
            assert.ok(!pointerCovers("/spec/sel", "/spec/selector/rollouts-pod-template-hash"));
            assert.ok(!pointerCovers("/spec/selector/app", "/spec/selector/rollouts-pod-template-hash"));
        });

        it("writes a rule for every kind once per built-in kind and keeps a per-kind rule as it is", () => {
            const expanded = expandAllKinds(
                [rule({ kind: "*", jsonPointers: ["/metadata/annotations"] }), rule({ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] })],
                BUILTIN_KINDS,
            );
            assert.strictEqual(expanded.length, BUILTIN_KINDS.length + 1);
            assert.ok(expanded.every((r) => r.kind !== "*"));
            assert.ok(!expanded.some((r) => r.group === "argoproj.io"), "a rule for every kind reached a CRD");
        });

        it("merges rules of one kind into one argocd-cm key and never writes .all", () => {
            const data = argocdCmIgnoreData([
                HTTPROUTE_WEIGHTS_RULE,
                rule({ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }),
                rule({ group: "apps", kind: "Deployment", jqPathExpressions: [".spec.template.spec.tolerations"], jsonPointers: ["/spec/replicas"] }),
            ]);
            assert.deepStrictEqual(Object.keys(data), [
                "resource.customizations.ignoreDifferences.apps_Deployment",
                "resource.customizations.ignoreDifferences.gateway.networking.k8s.io_HTTPRoute",
            ]);
            assert.deepStrictEqual(YAML.parse(data["resource.customizations.ignoreDifferences.apps_Deployment"]), {
                jsonPointers: ["/spec/replicas"],
                jqPathExpressions: [".spec.template.spec.tolerations"],
            });
            assert.throws(() => argocdCmIgnoreData([rule({ kind: "*", jsonPointers: ["/x"] })]), /expanded per kind/);
        });

        it("flags array paths that reach a Rollout and lets scalar ones and other kinds through", () => {
            assert.deepStrictEqual(rolloutArrayPathReasons(rollout({ jsonPointers: ["/spec/replicas"], jqPathExpressions: [".spec.paused"] })), []);
            assert.strictEqual(rolloutArrayPathReasons(rollout({ jqPathExpressions: [".spec.template.spec.containers[] | .image"] })).length, 1);
            assert.strictEqual(
                rolloutArrayPathReasons(rollout({ jsonPointers: ["/spec/template/spec/containers/0/image", "/spec/template/spec/volumes/-"] })).length,
                2,
            );
            assert.strictEqual(rolloutArrayPathReasons(rollout({ managedFieldsManagers: ["kyverno"] })).length, 1);
            // The HTTPRoute weight rule is an array path on a CRD, but not on a Rollout (ADR-056 as-built).
            assert.deepStrictEqual(rolloutArrayPathReasons(HTTPROUTE_WEIGHTS_RULE), []);
            assert.deepStrictEqual(
                rolloutArrayPathReasons(rule({ group: "apps", kind: "Deployment", jqPathExpressions: [".spec.template.spec.containers[].image"] })),
                [],
            );
        });
    });

    describe("AppProject whitelist (pure)", () => {
        it("keeps the project's own kinds first and adds each Rollout kind once", () => {
            const list = projectWhitelist([
                { group: "", kind: "Service" },
                { group: "argoproj.io", kind: "Rollout" },
            ]);
            assert.deepStrictEqual(list.slice(0, 2), [
                { group: "", kind: "Service" },
                { group: "argoproj.io", kind: "Rollout" },
            ]);
            assert.strictEqual(list.filter((gk) => gk.kind === "Rollout").length, 1);
            for (const gk of ROLLOUT_PROJECT_KINDS) {
                assert.ok(
                    list.some((x) => x.group === gk.group && x.kind === gk.kind),
                    `${gk.kind} missing`,
                );
            }
            // ADR-056 D2's kinds, and no kind a controller creates and ArgoCD never syncs.
            assert.deepStrictEqual(
                ROLLOUT_PROJECT_KINDS.map((gk) => `${gk.group}/${gk.kind}`),
                ["argoproj.io/Rollout", "argoproj.io/AnalysisTemplate", "argoproj.io/AnalysisRun"],
            );
        });

        it("patches the existing project and takes the atomic list over", () => {
            const body = appProjectPatch({ name: "tenants", owner: "addon", namespaceResources: [{ group: "", kind: "Service" }] }, "argocd");
            assert.deepStrictEqual(body.metadata, { name: "tenants", namespace: "argocd", annotations: { "pulumi.com/patchForce": "true" } });
            assert.strictEqual(body.spec.namespaceResourceWhitelist.length, 1 + ROLLOUT_PROJECT_KINDS.length);
        });
    });

    describe("objects another owner keeps (pure checks)", () => {
        const projectRef: KeptObjectRef = { namespace: "argocd", name: "tenants", key: "argocd.projects.tenants" };
        const appSetRef: KeptObjectRef = { namespace: "argocd", name: "tenant-apps", key: "argocd.applicationSets.tenant-apps" };
        const project = (spec: LiveAppProject["spec"]): LiveAppProject => ({ spec });
        const appSet = (syncOptions: string[] | undefined, ignoreDifferences: unknown, extra: Record<string, unknown> = {}): LiveApplicationSet =>
            ({ spec: { ...extra, template: { spec: { syncPolicy: { syncOptions }, ignoreDifferences } } } }) as LiveApplicationSet;
        const compliantRules = () => tenantSyncSettings().ignoreDifferences;

        it("matches whitelist entries as ArgoCD does (filepath.Match globs)", () => {
            assert.ok(globMatch("*", "argoproj.io"));
            assert.ok(globMatch("argoproj.io", "argoproj.io"));
            assert.ok(globMatch("Analysis*", "AnalysisRun"));
            assert.ok(globMatch("Ro?lout", "Rollout"));
            assert.ok(globMatch("[RA]*", "Rollout"));
            assert.ok(!globMatch("argoproj.io", "argoproj-io"), "a dot is not a wildcard");
            assert.ok(!globMatch("Analysis*", "Rollout"));
        });

        it("passes a project that permits the Rollout kinds: no whitelist (every kind), a glob, or each kind", () => {
            assert.deepStrictEqual(appProjectProblems(projectRef, project({})), []);
            assert.deepStrictEqual(appProjectProblems(projectRef, project({ namespaceResourceWhitelist: [{ group: "argoproj.io", kind: "*" }] })), []);
            assert.deepStrictEqual(appProjectProblems(projectRef, project({ namespaceResourceWhitelist: ROLLOUT_PROJECT_KINDS.map((gk) => ({ ...gk })) })), []);
        });

        it("names the project, the missing kinds, the entries to add and ADR-056 D2", () => {
            const [p] = appProjectProblems(
                projectRef,
                project({
                    namespaceResourceWhitelist: [
                        { group: "", kind: "Service" },
                        { group: "argoproj.io", kind: "Rollout" },
                    ],
                }),
            );
            assert.match(
                p,
                /^AppProject argocd\/tenants \(argocd.projects.tenants\): spec.namespaceResourceWhitelist does not permit argoproj.io\/AnalysisTemplate, argoproj.io\/AnalysisRun/,
            );
            assert.match(p, /ADR-056 D2/);
            assert.match(p, /add \{group: argoproj.io, kind: AnalysisTemplate\}, \{group: argoproj.io, kind: AnalysisRun\} in the project's source$/);
            // An empty list permits nothing (IsGroupKindNamePermitted), unlike an absent one.
            assert.match(
                appProjectProblems(projectRef, project({ namespaceResourceWhitelist: [] }))[0],
                /does not permit argoproj.io\/Rollout, argoproj.io\/AnalysisTemplate, argoproj.io\/AnalysisRun/,
            );
            const black = appProjectProblems(projectRef, project({ namespaceResourceBlacklist: [{ group: "argoproj.io", kind: "Analysis*" }] }));
            assert.deepStrictEqual(black.length, 2);
            assert.match(black[0], /namespaceResourceBlacklist entry \{group: argoproj.io, kind: Analysis\*\} refuses argoproj.io\/AnalysisTemplate/);
        });

        it("passes an ApplicationSet that syncs with RespectIgnoreDifferences and carries both rules, the program's or the ADR's own", () => {
            assert.deepStrictEqual(
                applicationSetProblems(
                    appSetRef,
                    appSet(
                        ["CreateNamespace=true", "RespectIgnoreDifferences=true"],
                        [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }, ...compliantRules()],
                    ),
                ),
                [],
            );
            const asBuilt = [
                { kind: "Service", jqPathExpressions: ['.spec.selector["rollouts-pod-template-hash"]'] },
                { group: "gateway.networking.k8s.io", kind: "HTTPRoute", jqPathExpressions: [".spec.rules[]?.backendRefs[]?.weight"] },
            ];
            assert.deepStrictEqual(applicationSetProblems(appSetRef, appSet(["RespectIgnoreDifferences=true"], asBuilt)), []);
        });

        it("names every missing requirement with its ADR section and the rule to add", () => {
            const problems = applicationSetProblems(
                appSetRef,
                appSet(["ServerSideApply=true"], [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }]),
            );
            assert.strictEqual(problems.length, 3);
            assert.match(
                problems[0],
                /^ApplicationSet argocd\/tenant-apps \(argocd.applicationSets.tenant-apps\): spec.template.spec.syncPolicy.syncOptions lack RespectIgnoreDifferences=true: .*ADR-056 as-built 2026-06-27/,
            );
            assert.match(
                problems[1],
                /no rule for the Service selector key rollouts-pod-template-hash: .*ADR-056 as-built #871\); add \{"kind":"Service","jsonPointers":\["\/spec\/selector\/rollouts-pod-template-hash"\]\}/,
            );
            assert.match(
                problems[2],
                /no rule for the canary weights of HTTPRoutes: .*ADR-056 as-built 2026-06-26\); add \{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"/,
            );
            assert.match(
                applicationSetProblems(appSetRef, appSet(["RespectIgnoreDifferences=false"], compliantRules()))[0],
                /syncOptions sets RespectIgnoreDifferences=false/,
            );
            assert.match(applicationSetProblems(appSetRef, appSet(undefined, undefined, { templatePatch: "spec: {}" }))[0], /spec.templatePatch is not read/);
        });

        it("names the template rules that break a canary or a Rollout", () => {
            const rules = [
                ...compliantRules(),
                { group: "argoproj.io", kind: "Rollout", jqPathExpressions: [".spec.template.spec.containers[]?.image"] },
                {
                    group: "gateway.networking.k8s.io",
                    kind: "HTTPRoute",
                    jqPathExpressions: ['select(.metadata.labels["rollouts.argoproj.io/gatewayapi-canary"] == "in-progress") | .spec.rules'],
                },
                { group: "gateway.networking.k8s.io", kind: "HTTPRoute", managedFieldsManagers: ["gatewayAPI"] },
                { kind: "Service", jsonPointers: ["/spec/selector"] },
            ];
            const problems = applicationSetProblems(appSetRef, appSet(["RespectIgnoreDifferences=true"], rules));
            assert.strictEqual(problems.length, 4);
            assert.match(problems[0], /ignoreDifferences\[2\] \(argoproj.io\/Rollout\) reaches a Rollout with an array path.*ADR-056 as-built 2026-07-14/);
            assert.match(problems[1], /ignoreDifferences\[3\] .*conditional on a label only live carries.*#208/);
            assert.match(problems[2], /ignoreDifferences\[4\] .*field manager gatewayAPI/);
            assert.match(problems[3], /ignoreDifferences\[5\] \(Service\) \/spec\/selector ignores the whole Service selector/);
        });

        it("the offline plan's placeholders are marked as such and pass every check", () => {
            const objects = placeholderKeptArgoObjects({
                namespace: "argocd",
                projects: [
                    { name: "tenants", owner: "external", namespaceResources: [] },
                    { name: "mine", owner: "addon", namespaceResources: [] },
                ],
                applicationSets: [{ name: "tenant-apps", owner: "external", syncOptions: [], ignoreDifferences: [] }],
            });
            assert.deepStrictEqual(Object.keys(objects), [
                "argoproj.io/v1alpha1/AppProject/argocd/tenants",
                "argoproj.io/v1alpha1/ApplicationSet/argocd/tenant-apps",
            ]);
            for (const o of Object.values(objects)) {
                assert.deepStrictEqual((o.metadata as { annotations: object }).annotations, { "argo-rollouts-addon.platform/offline": "placeholder" });
            }
            assert.deepStrictEqual(appProjectProblems(projectRef, objects["argoproj.io/v1alpha1/AppProject/argocd/tenants"] as LiveAppProject), []);
            assert.deepStrictEqual(
                applicationSetProblems(appSetRef, objects["argoproj.io/v1alpha1/ApplicationSet/argocd/tenant-apps"] as LiveApplicationSet),
                [],
            );
        });
    });

    describe("tenant sync settings (exported helper)", () => {
        it("syncs with RespectIgnoreDifferences only, ignoring the selector key and the weights, diffing server-side with webhooks", () => {
            const s = tenantSyncSettings();
            assert.deepStrictEqual(s.syncOptions, ["RespectIgnoreDifferences=true"]);
            assert.deepStrictEqual(s.ignoreDifferences, [
                { kind: "Service", jsonPointers: ["/spec/selector/rollouts-pod-template-hash"] },
                {
                    group: "gateway.networking.k8s.io",
                    kind: "HTTPRoute",
                    jqPathExpressions: [".spec.rules[]? | select((.backendRefs // []) | length > 1) | .backendRefs[]?.weight"],
                },
            ]);
            assert.deepStrictEqual(s.annotations, { "argocd.argoproj.io/compare-options": "ServerSideDiff=true,IncludeMutationWebhook=true" });
        });

        it("keeps extra options and rules after its own, without duplicates, expanding rules for every kind", () => {
            const s = tenantSyncSettings({
                syncOptions: ["CreateNamespace=true", "ServerSideApply=true"],
                ignoreDifferences: [
                    { kind: "Service", jsonPointers: ["/spec/selector/rollouts-pod-template-hash"] },
                    { kind: "*", jsonPointers: ["/metadata/labels"] },
                ],
                allKinds: [{ group: "apps", kind: "Deployment" }],
            });
            assert.deepStrictEqual(s.syncOptions, ["RespectIgnoreDifferences=true", "CreateNamespace=true", "ServerSideApply=true"]);
            assert.deepStrictEqual(s.ignoreDifferences.slice(2), [{ group: "apps", kind: "Deployment", jsonPointers: ["/metadata/labels"] }]);
        });

        it("refuses the traps the preflight refuses, with the same ADR reference", () => {
            assert.throws(
                () => tenantSyncSettings({ syncOptions: ["RespectIgnoreDifferences=false"] }),
                /overrides RespectIgnoreDifferences=true.*as-built 2026-06-27/,
            );
            assert.throws(
                () =>
                    tenantSyncSettings({
                        ignoreDifferences: [{ group: "argoproj.io", kind: "Rollout", jqPathExpressions: [".spec.template.spec.containers[].image"] }],
                    }),
                /argoproj.io\/Rollout reaches a Rollout with an array path.*as-built 2026-07-14/,
            );
            assert.deepStrictEqual(conflictingSyncOptions(["ServerSideApply=false", "RespectIgnoreDifferences=false", "Prune=false"]), [
                "RespectIgnoreDifferences=false",
            ]);
            assert.throws(
                () => tenantSyncSettings({ ignoreDifferences: [{ kind: "Service", jsonPointers: ["/spec/selector"] }] }),
                /whole Service selector.*as-built #871/,
            );
            assert.throws(
                () =>
                    tenantSyncSettings({
                        ignoreDifferences: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", managedFieldsManagers: ["gatewayAPI"] }],
                    }),
                /atomic list/,
            );
        });

        it("patches a tenant ApplicationSet's template with them", () => {
            const body = applicationSetPatch(
                { name: "tenant-apps", owner: "addon", syncOptions: ["PruneLast=true"], ignoreDifferences: [] },
                "argocd",
                BUILTIN_KINDS,
            );
            assert.deepStrictEqual(body.metadata, { name: "tenant-apps", namespace: "argocd", annotations: { ...TAKE_OVER_LISTS } });
            assert.deepStrictEqual(body.spec.template.metadata.annotations, { [COMPARE_OPTIONS_ANNOTATION]: TENANT_COMPARE_OPTIONS });
            assert.deepStrictEqual(body.spec.template.spec.syncPolicy.syncOptions, [...TENANT_SYNC_OPTIONS, "PruneLast=true"]);
            assert.strictEqual(body.spec.template.spec.ignoreDifferences.length, 2);
        });
    });

    describe("Rollout action RBAC (pure)", () => {
        it("allows the approver and denies each deployer every promote/abort action, per named project", () => {
            const csv = rolloutActionsPolicyCsv({
                ...NO_REGULATED,
                approverRole: "role:approver",
                deployerRoles: ["role:deployer"],
                projects: ["tenants", "payments"],
                actions: ["promote-full", "abort"],
            })!;
            const lines = csv.split("\n").filter((l) => l.startsWith("p, "));
            assert.deepStrictEqual(lines, [
                "p, role:approver, applications, action/argoproj.io/Rollout/promote-full, tenants/*, allow",
                "p, role:approver, applications, action/argoproj.io/Rollout/abort, tenants/*, allow",
                "p, role:approver, applications, action/argoproj.io/Rollout/promote-full, payments/*, allow",
                "p, role:approver, applications, action/argoproj.io/Rollout/abort, payments/*, allow",
                "p, role:deployer, applications, action/argoproj.io/Rollout/promote-full, tenants/*, deny",
                "p, role:deployer, applications, action/argoproj.io/Rollout/abort, tenants/*, deny",
                "p, role:deployer, applications, action/argoproj.io/Rollout/promote-full, payments/*, deny",
                "p, role:deployer, applications, action/argoproj.io/Rollout/abort, payments/*, deny",
            ]);
            // No wildcard action and no wildcard project: every grant names both.
            assert.ok(lines.every((l) => !l.includes("action/*") && !/, \*\/\*,/.test(l)));
        });

        it("writes nothing without an approver or without a project", () => {
            assert.strictEqual(
                rolloutActionsPolicyCsv({ ...NO_REGULATED, deployerRoles: ["role:deployer"], projects: ["tenants"], actions: ["abort"] }),
                undefined,
            );
            assert.strictEqual(
                rolloutActionsPolicyCsv({ ...NO_REGULATED, approverRole: "role:approver", deployerRoles: [], projects: [], actions: ["abort"] }),
                undefined,
            );
        });

        it("denies the deployer roles every ArgoCD path that creates, changes, replaces or deletes a Rollout in a regulated project", async () => {
            const rbac = {
                approverRole: "role:approver",
                deployerRoles: ["role:deployer"],
                projects: ["tenants", "regulated"],
                actions: [...APPROVER_ROLLOUT_ACTIONS],
                regulatedProjects: ["regulated"],
                approverGroups: ["approvers"],
                deployerGroups: ["deployers"],
            };
            const csv = rolloutActionsPolicyCsv(rbac)!;
            const lines = csv.split("\n").filter((l) => l.startsWith("p, role:deployer") && l.includes("regulated/*") && !l.includes("action/"));
            assert.deepStrictEqual(lines, [
                ...["create", "update", "update/*", "delete", "delete/*", "sync", "override"].map(
                    (a) => `p, role:deployer, applications, ${a}, regulated/*, deny`,
                ),
                ...["create", "update", "delete"].map((a) => `p, role:deployer, applicationsets, ${a}, regulated/*, deny`),
            ]);
            assert.ok(!csv.includes("update, tenants/*"), "a project that is not regulated keeps its deployers' update and sync");
            // ArgoCD's own decision, restated: a deployer bound to the role through a group, even one the
            // platform made role:admin of every project, cannot sync, patch or delete a regulated Rollout.
            const enforcer = await loadArgoRbac({
                "policy.csv": "g, deployers, role:deployer\np, role:deployer, applications, *, */*, allow\ng, approvers, role:approver",
                [ROLLOUT_ACTIONS_POLICY_KEY]: csv,
            });
            assert.strictEqual(enforcer.error, undefined);
            const can = (group: string, action: string, object = "regulated/checkout") =>
                enforcer.enforce({ groups: [group] }, { resource: "applications", action, object });
            for (const action of [
                "create",
                "sync",
                "update",
                "delete",
                "override",
                "update/argoproj.io/Rollout/shop/checkout",
                "delete/argoproj.io/Rollout/shop/checkout",
                "action/argoproj.io/Rollout/resume",
            ]) {
                assert.ok(!can("deployers", action), action);
            }
            // A common tenant grant, `applications, *, <project>/*`, creates an Application with an
            // automated sync; an ApplicationSet's generated Applications are its controller's writes.
            const appsets = await loadArgoRbac({
                "policy.csv": "g, deployers, role:deployer\np, role:deployer, applicationsets, *, */*, allow",
                [ROLLOUT_ACTIONS_POLICY_KEY]: csv,
            });
            for (const action of ["create", "update", "delete"]) {
                assert.ok(
                    !appsets.enforce({ groups: ["deployers"] }, { resource: "applicationsets", action, object: "regulated/payments" }),
                    `applicationsets ${action}`,
                );
                assert.ok(
                    appsets.enforce({ groups: ["deployers"] }, { resource: "applicationsets", action, object: "tenants/web" }),
                    `applicationsets ${action} outside`,
                );
            }
            assert.ok(can("deployers", "sync", "tenants/web"), "outside regulated projects the platform's grant stands");
            assert.ok(can("deployers", "action/argoproj.io/Rollout/restart"), "restart passes no gate");
            assert.ok(can("approvers", "action/argoproj.io/Rollout/resume"));
        });

        it("binds the configured groups: approvers to the approver role, deployers to a role that only denies, quoted as ArgoCD's CSV reader needs", async () => {
            const rbac = {
                approverRole: "role:approver",
                deployerRoles: [],
                projects: ["regulated"],
                actions: ["resume"],
                regulatedProjects: ["regulated"],
                approverGroups: ["Release Approvers"],
                deployerGroups: ['ship, "fast"'],
            };
            const csv = rolloutActionsPolicyCsv(rbac)!;
            assert.match(csv, /^g, "Release Approvers", role:approver$/m);
            assert.match(csv, /^g, "ship, ""fast""", role:argo-rollouts-addon-deployer$/m);
            assert.ok(!/^p, role:argo-rollouts-addon-deployer, .*, allow$/m.test(csv), "the deployers' role grants nothing");
            const enforcer = await loadArgoRbac({ [ROLLOUT_ACTIONS_POLICY_KEY]: csv });
            assert.strictEqual(enforcer.error, undefined);
            assert.ok(
                enforcer.enforce(
                    { groups: ["Release Approvers"] },
                    { resource: "applications", action: "action/argoproj.io/Rollout/resume", object: "regulated/web" },
                ),
            );
            assert.ok(
                !enforcer.enforce({ groups: ['ship, "fast"'] }, { resource: "applications", action: "get", object: "regulated/web" }),
                "binding the deployers grants them nothing",
            );
        });
    });

    describe("declared resources", () => {
        let hub: OfflineRun;
        let full: OfflineRun;
        before(async () => {
            hub = await planInline(hubConfig(), { stack: "hub" });
            full = await planInline(merged(hubConfig(), { argocd: tenantArgoCd }), { stack: "hub" });
        });

        const stageResources = (r: OfflineRun) => r.resources.filter((x) => x.stage === "argocd-apps" && x.custom);
        const data = (p: PlannedResource) => (p.inputs as { data: Record<string, string> }).data;

        it("with the defaults, declares nothing: no argocd-cm key, the program's rules are Application-level", () => {
            assert.deepStrictEqual(stageResources(hub), []);
            assert.ok(!hub.resources.some((r) => (r.inputs as { metadata?: { name?: string } }).metadata?.name === "argocd-cm"));
        });

        it("writes config rules for every kind per built-in kind, and nothing under .all", () => {
            const keys = Object.keys(data(byName(full, "argocd-cm-diff-customizations")));
            assert.ok(!keys.some((k) => k.endsWith(".all")));
            assert.strictEqual(keys.length, BUILTIN_KINDS.length);
            assert.ok(keys.includes("resource.customizations.ignoreDifferences.apps_Deployment"));
            assert.ok(
                !keys.includes("resource.customizations.ignoreDifferences.gateway.networking.k8s.io_HTTPRoute"),
                "the weight rule is written for every Application",
            );
            assert.ok(!keys.includes("resource.customizations.ignoreDifferences.argoproj.io_Rollout"));
        });

        it("patches the named AppProject, ApplicationSet and argocd-rbac-cm", () => {
            const project = byName(full, "appproject-tenants");
            assert.strictEqual(project.type, "kubernetes:argoproj.io/v1alpha1:AppProjectPatch");
            const whitelist = (project.inputs as { spec: { namespaceResourceWhitelist: { group: string; kind: string }[] } }).spec.namespaceResourceWhitelist;
            assert.deepStrictEqual(
                whitelist.slice(0, 3).map((gk) => gk.kind),
                ["Service", "Deployment", "HTTPRoute"],
            );
            assert.ok(whitelist.some((gk) => gk.group === "argoproj.io" && gk.kind === "Rollout"));

            const appSet = byName(full, "applicationset-tenant-apps");
            assert.strictEqual(appSet.type, "kubernetes:argoproj.io/v1alpha1:ApplicationSetPatch");
            const tmpl = (appSet.inputs as { spec: { template: { spec: { syncPolicy: { syncOptions: string[] }; ignoreDifferences: { kind: string }[] } } } })
                .spec.template.spec;
            assert.deepStrictEqual(tmpl.syncPolicy.syncOptions, ["RespectIgnoreDifferences=true", "CreateNamespace=true"]);
            assert.deepStrictEqual(
                tmpl.ignoreDifferences.map((r) => r.kind),
                ["Service", "HTTPRoute", "Deployment"],
            );

            const rbac = byName(full, "argocd-rbac-rollout-actions");
            assert.strictEqual(rbac.type, "kubernetes:core/v1:ConfigMapPatch");
            assert.deepStrictEqual(Object.keys(data(rbac)), [ROLLOUT_ACTIONS_POLICY_KEY]);
            assert.match(
                data(rbac)[ROLLOUT_ACTIONS_POLICY_KEY],
                /^p, role:approver, applications, action\/argoproj.io\/Rollout\/promote-full, tenants\/\*, allow$/m,
            );
            assert.match(
                data(rbac)[ROLLOUT_ACTIONS_POLICY_KEY],
                /^p, role:deployer, applications, action\/argoproj.io\/Rollout\/promote-full, tenants\/\*, deny$/m,
            );
        });

        it("names every patched object explicitly and waits for the policy stage and the CRDs", () => {
            const policies = full.resources.filter((r) => r.stage === "policy" && r.custom);
            assert.ok(policies.length > 0);
            for (const r of stageResources(full)) {
                assert.ok((r.inputs as { metadata?: { name?: string } }).metadata?.name, `${r.name} has no metadata.name`);
                const deps = transitiveDeps(full, r.urn);
                assert.ok(deps.has(byName(full, "rollouts-crds").urn), `${r.name} does not wait for the CRDs`);
                for (const p of policies) {
                    assert.ok(deps.has(p.urn), `${r.name} does not wait for ${p.name}`);
                }
            }
        });

        describe("objects another owner keeps", () => {
            const kept = { projects: { tenants: {} }, applicationSets: { "tenant-apps": {} } };
            const config = () => merged(hubConfig(), { argocd: kept });

            it("reads them, declares nothing on them, and reports them verified", async () => {
                const run = await planInline(config(), { stack: "hub" });
                const reads = run.resources.filter((r) => r.stage === "argocd-apps" && r.read);
                assert.deepStrictEqual(
                    reads.map((r) => [r.name, r.type]),
                    [
                        ["kept-appproject-tenants", "kubernetes:argoproj.io/v1alpha1:AppProject"],
                        ["kept-applicationset-tenant-apps", "kubernetes:argoproj.io/v1alpha1:ApplicationSet"],
                    ],
                );
                assert.deepStrictEqual(
                    stageResources(run).filter((r) => !r.read),
                    [],
                );
                assert.deepStrictEqual(run.outputs.argocdVerified, ["AppProject/tenants", "ApplicationSet/tenant-apps"]);
                assert.deepStrictEqual(run.outputs.argocdPatched, []);
                for (const r of reads) {
                    assert.ok(transitiveDeps(run, r.urn).has(byName(run, "rollouts-crds").urn), `${r.name} is read before the CRDs exist`);
                }
            });

            it("fails the preview with every problem of every object, each naming the object and what ADR-056 requires", async () => {
                const world = placeholderWorld(fromConfigMap("hub", config()));
                world.objects!["argoproj.io/v1alpha1/AppProject/argocd/tenants"] = {
                    apiVersion: "argoproj.io/v1alpha1",
                    kind: "AppProject",
                    metadata: { name: "tenants", namespace: "argocd" },
                    spec: { namespaceResourceWhitelist: [{ group: "", kind: "Service" }] },
                };
                world.objects!["argoproj.io/v1alpha1/ApplicationSet/argocd/tenant-apps"] = {
                    apiVersion: "argoproj.io/v1alpha1",
                    kind: "ApplicationSet",
                    metadata: { name: "tenant-apps", namespace: "argocd" },
                    spec: {
                        template: {
                            spec: {
                                syncPolicy: { syncOptions: ["ServerSideApply=true"] },
                                ignoreDifferences: [{ kind: "Service", jsonPointers: ["/spec/selector/rollouts-pod-template-hash"] }],
                            },
                        },
                    },
                };
                await assert.rejects(planInline(config(), { stack: "hub", world }), (err: Error) => {
                    assert.match(err.message, /stack "hub": ArgoCD objects kept by another owner miss what ADR-056 requires \(3\)/);
                    assert.match(
                        err.message,
                        /AppProject argocd\/tenants \(argocd.projects.tenants\): spec.namespaceResourceWhitelist does not permit argoproj.io\/Rollout, argoproj.io\/AnalysisTemplate, argoproj.io\/AnalysisRun.*ADR-056 D2/,
                    );
                    assert.match(err.message, /ApplicationSet argocd\/tenant-apps .*lack RespectIgnoreDifferences=true.*as-built 2026-06-27/);
                    assert.match(err.message, /ApplicationSet argocd\/tenant-apps .*no rule for the canary weights of HTTPRoutes/);
                    assert.doesNotMatch(err.message, /Service selector key/);
                    return true;
                });
            });

            it("fails when a kept object does not exist, naming it", async () => {
                const world = placeholderWorld(fromConfigMap("hub", merged(hubConfig(), {})));
                await assert.rejects(planInline(config(), { stack: "hub", world }), /argoproj.io\/v1alpha1:AppProject argocd\/tenants does not exist/);
            });
        });

        it("declares and reads nothing when this cluster's ArgoCD runs elsewhere, and says where", async () => {
            const off = await planInline(merged(hubConfig(), { argocd: { runsOn: "mgmt", projects: undefined, applicationSets: undefined } }));
            assert.deepStrictEqual(
                off.resources.filter((x) => x.stage === "argocd-apps" && x.custom),
                [],
            );
            assert.strictEqual(off.outputs.argocdRunsOn, "mgmt");
            assert.strictEqual(hub.outputs.argocdRunsOn, "hub");
        });
    });
});
