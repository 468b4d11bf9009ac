import * as assert from "assert";
import * as YAML from "yaml";
import {
    BUILTIN_KINDS,
    HTTPROUTE_WEIGHTS_RULE,
    IgnoreRule,
    SERVICE_SELECTOR_RULE,
    argocdCmIgnoreData,
    canaryRuleReasons,
    expandAllKinds,
    pointerCovers,
    rolloutArrayPathReasons,
} from "../components/argocd/ignoreRules";
import { KeptObjectRef, LiveAppProject, LiveApplicationSet, appProjectProblems, applicationSetProblems, globMatch } from "../components/argocd/keptObjects";
import { TAKE_OVER_LISTS } from "../components/argocd/ownership";
import { ROLLOUT_PROJECT_KINDS } from "../components/argocd/projects";
import { APPROVER_ROLLOUT_ACTIONS, ROLLOUT_ACTIONS_POLICY_KEY, rolloutActionsPolicyCsv } from "../components/argocd/rbac";
import { conflictingSyncOptions, tenantSyncSettings } from "../components/argocd/syncOptions";
import { loadArgoRbac } from "../tools/verify/argocdRbac";
import { OfflineRun, PlannedResource } from "../tools/offline";
import { fromConfigMap, placeholderKeptArgoObjects, placeholderWorld } from "../tools/stackFile";
import { byName, hubConfig, merged, planInline, transitiveDeps } from "./harness";
import { addonProject } from "./stackConfig";

const SERVICE = { group: "", kind: "Service" };
/** An argocd.rbac without regulated projects. */
const NO_REGULATED = { regulatedProjects: [], approverGroups: [], deployerGroups: [] };

const NO_PATHS = { group: "", jsonPointers: [], jqPathExpressions: [], managedFieldsManagers: [] };
const rule = (r: Partial<IgnoreRule> & Pick<IgnoreRule, "kind">): IgnoreRule => ({ ...NO_PATHS, ...r });
const rollout = (r: Partial<IgnoreRule>) => rule({ group: "argoproj.io", kind: "Rollout", ...r });
const REPLICAS = { group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] };

const tenantArgoCd = {
    projects: { tenants: addonProject("Service", "argoproj.io/Rollout", "apps/Deployment", "gateway.networking.k8s.io/HTTPRoute") },
    applicationSets: {
        "tenant-apps": {
            owner: "addon",
            syncOptions: ["CreateNamespace=true"],
            ignoreDifferences: [REPLICAS],
        },
    },
    ignoreDifferences: [{ kind: "*", jqPathExpressions: [".spec.template.spec.containers[].securityContext"] }],
    rbac: { approverRole: "role:approver", deployerRoles: ["role:deployer"] },
};

describe("argocd-apps stage", () => {
    describe("ignore rules (pure)", () => {
        it("refuses rules that would freeze route or selector edits, with the reason", () => {
            const route = (r: Partial<IgnoreRule>) => rule({ group: "gateway.networking.k8s.io", kind: "HTTPRoute", ...r });
            const weights = { jqPathExpressions: [".spec.rules[]?.backendRefs[]?.weight"] };
            const wholeSelector = /whole Service selector.*\/spec\/selector\/rollouts-pod-template-hash/;
            // The gatewayAPI field manager, weights in argocd-cm, a whole selector: test/admission-config.test.ts, through the preflight.
            const cases: [IgnoreRule, "application" | "system", RegExp | undefined][] = [
                // The program's own rules (pinned on the declared ApplicationSet patch below) pass.
                [HTTPROUTE_WEIGHTS_RULE, "application", undefined],
                [SERVICE_SELECTOR_RULE, "application", undefined],
                [route({ jsonPointers: ["/spec/rules/0/backendRefs/1/weight"] }), "system", /every HTTPRoute of every Application/],
                [route(weights), "application", undefined],
                [route({ jsonPointers: ["/metadata/annotations"] }), "system", undefined],
                [rule({ kind: "Service", jqPathExpressions: [" .spec.selector "] }), "application", wholeSelector],
                [rule({ kind: "Service", managedFieldsManagers: ["rollouts-controller"] }), "application", wholeSelector],
                [rule({ kind: "Service", jsonPointers: ["/spec/clusterIP"] }), "system", undefined],
            ];
            for (const [r, scope, reason] of cases) {
                const found = canaryRuleReasons(r, scope);
                assert.strictEqual(found.length, reason ? 1 : 0, JSON.stringify([r, found]));
                if (reason) assert.match(found[0], reason);
            }
        });

        it("knows which JSON pointers cover a field", () => {
            const key = "/spec/selector/rollouts-pod-template-hash";
            assert.deepStrictEqual(
                ["/spec/selector", key, "/spec/sel", "/spec/selector/app"].map((p) => pointerCovers(p, key)),
                [true, true, false, false],
            );
        });

        it("writes a rule for every kind once per built-in kind and keeps a per-kind rule as it is", () => {
            const expanded = expandAllKinds([rule({ kind: "*", jsonPointers: ["/metadata/annotations"] }), rule(REPLICAS)], BUILTIN_KINDS);
            assert.strictEqual(expanded.length, BUILTIN_KINDS.length + 1);
            assert.ok(expanded.every((r) => r.kind !== "*"));
            assert.ok(!expanded.some((r) => r.group === "argoproj.io"), "a rule for every kind reached a CRD");
        });

        it("merges rules of one kind into one argocd-cm key, <group>_<Kind> or <Kind> for the core group, and never writes .all", () => {
            const data = argocdCmIgnoreData([
                HTTPROUTE_WEIGHTS_RULE,
                SERVICE_SELECTOR_RULE,
                rule(REPLICAS),
                rule({ group: "apps", kind: "Deployment", jqPathExpressions: [".spec.template.spec.tolerations"], jsonPointers: ["/spec/replicas"] }),
            ]);
            assert.deepStrictEqual(Object.keys(data), [
                "resource.customizations.ignoreDifferences.apps_Deployment",
                "resource.customizations.ignoreDifferences.gateway.networking.k8s.io_HTTPRoute",
                "resource.customizations.ignoreDifferences.Service",
            ]);
            assert.deepStrictEqual(YAML.parse(data["resource.customizations.ignoreDifferences.apps_Deployment"]), {
                jsonPointers: ["/spec/replicas"],
                jqPathExpressions: [".spec.template.spec.tolerations"],
            });
            assert.throws(() => argocdCmIgnoreData([rule({ kind: "*", jsonPointers: ["/x"] })]), /expanded per kind/);
        });

        it("flags array paths that reach a Rollout and lets scalar ones and other kinds through", () => {
            // One jq array path, a field manager: test/admission-config.test.ts, through the preflight, with their reasons.
            const cases: [IgnoreRule, number][] = [
                [rollout({ jsonPointers: ["/spec/replicas"], jqPathExpressions: [".spec.paused"] }), 0],
                [rollout({ jsonPointers: ["/spec/template/spec/containers/0/image", "/spec/template/spec/volumes/-"] }), 2],
                // The HTTPRoute weight rule is an array path on a CRD, but not on a Rollout (ADR-056 as-built).
                [HTTPROUTE_WEIGHTS_RULE, 0],
                [rule({ group: "apps", kind: "Deployment", jqPathExpressions: [".spec.template.spec.containers[].image"] }), 0],
            ];
            for (const [r, reasons] of cases) {
                assert.strictEqual(rolloutArrayPathReasons(r).length, reasons, JSON.stringify(r));
            }
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
            assert.ok(globMatch("Ro?lout", "Rollout") && globMatch("[RA]*", "Rollout") && globMatch("argoproj.io", "argoproj.io"));
            assert.ok(!globMatch("argoproj.io", "argoproj-io"), "a dot is not a wildcard");
        });

        it("passes a project that permits the Rollout kinds: no whitelist (every kind), a glob, or each kind", () => {
            assert.deepStrictEqual(appProjectProblems(projectRef, project({})), []);
            assert.deepStrictEqual(appProjectProblems(projectRef, project({ namespaceResourceWhitelist: [{ group: "argoproj.io", kind: "*" }] })), []);
            assert.deepStrictEqual(appProjectProblems(projectRef, project({ namespaceResourceWhitelist: ROLLOUT_PROJECT_KINDS.map((gk) => ({ ...gk })) })), []);
        });

        it("names the project, the missing kinds, the entries to add and ADR-056 D2", () => {
            const [p] = appProjectProblems(projectRef, project({ namespaceResourceWhitelist: [SERVICE, ROLLOUT_PROJECT_KINDS[0]] }));
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
            const rules = [REPLICAS, ...compliantRules()];
            assert.deepStrictEqual(applicationSetProblems(appSetRef, appSet(["CreateNamespace=true", "RespectIgnoreDifferences=true"], rules)), []);
            const asBuilt = [
                { kind: "Service", jqPathExpressions: ['.spec.selector["rollouts-pod-template-hash"]'] },
                { group: "gateway.networking.k8s.io", kind: "HTTPRoute", jqPathExpressions: [".spec.rules[]?.backendRefs[]?.weight"] },
            ];
            assert.deepStrictEqual(applicationSetProblems(appSetRef, appSet(["RespectIgnoreDifferences=true"], asBuilt)), []);
        });

        it("names every missing requirement with its ADR section and the rule to add", () => {
            const problems = applicationSetProblems(appSetRef, appSet(["ServerSideApply=true"], [REPLICAS]));
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
            assert.match(problems[3], /ignoreDifferences\[5\] \(Service\) \/spec\/selector ignores the whole Service selector.*ADR-056 as-built #871\)$/);
        });

        it("the offline plan's placeholders are marked as such", () => {
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
            // They pass every check: the offline plan of kept objects below reads them and goes on.
        });
    });

    describe("tenant sync settings (exported helper)", () => {
        // Its own options, rules and annotation: 'patches the named AppProject, ApplicationSet and argocd-rbac-cm' below, on the declared patch.
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
            const traps: [Parameters<typeof tenantSyncSettings>[0], RegExp][] = [
                [{ syncOptions: ["RespectIgnoreDifferences=false"] }, /overrides RespectIgnoreDifferences=true.*as-built 2026-06-27/],
                [
                    { ignoreDifferences: [{ group: "argoproj.io", kind: "Rollout", jqPathExpressions: [".spec.template.spec.containers[].image"] }] },
                    /argoproj.io\/Rollout reaches a Rollout with an array path.*as-built 2026-07-14/,
                ],
            ];
            for (const [extra, refused] of traps) {
                assert.throws(() => tenantSyncSettings(extra), refused);
            }
            assert.deepStrictEqual(conflictingSyncOptions(["ServerSideApply=false", "RespectIgnoreDifferences=false", "Prune=false"]), [
                "RespectIgnoreDifferences=false",
            ]);
        });
    });

    describe("Rollout action RBAC (pure)", () => {
        const ROLES = { approverRole: "role:approver", deployerRoles: ["role:deployer"] };
        const REGULATED_RBAC = {
            ...ROLES,
            projects: ["tenants", "regulated"],
            actions: [...APPROVER_ROLLOUT_ACTIONS],
            regulatedProjects: ["regulated"],
            approverGroups: ["approvers"],
            deployerGroups: ["deployers"],
        };

        it("allows the approver and denies each deployer every promote/abort action, per named project", () => {
            const csv = rolloutActionsPolicyCsv({ ...NO_REGULATED, ...ROLES, projects: ["tenants", "payments"], actions: ["promote-full", "abort"] })!;
            // Every grant names its action and its project, projects outermost: no wildcard of either.
            const grants = (role: string, effect: string) =>
                ["tenants", "payments"].flatMap((p) =>
                    ["promote-full", "abort"].map((a) => `p, ${role}, applications, action/argoproj.io/Rollout/${a}, ${p}/*, ${effect}`),
                );
            assert.deepStrictEqual(
                csv.split("\n").filter((l) => l.startsWith("p, ")),
                [...grants("role:approver", "allow"), ...grants("role:deployer", "deny")],
            );
        });

        it("writes nothing without an approver or without a project", () => {
            for (const rbac of [
                { deployerRoles: ["role:deployer"], projects: ["tenants"] },
                { approverRole: "role:approver", deployerRoles: [], projects: [] },
            ]) {
                assert.strictEqual(rolloutActionsPolicyCsv({ ...NO_REGULATED, actions: ["abort"], ...rbac }), undefined);
            }
        });

        it("denies the deployer roles every ArgoCD path that creates, changes, replaces or deletes a Rollout in a regulated project", () => {
            const csv = rolloutActionsPolicyCsv(REGULATED_RBAC)!;
            const lines = csv.split("\n").filter((l) => l.startsWith("p, role:deployer") && l.includes("regulated/*") && !l.includes("action/"));
            assert.deepStrictEqual(lines, [
                ...["create", "update", "update/*", "delete", "delete/*", "sync", "override"].map(
                    (a) => `p, role:deployer, applications, ${a}, regulated/*, deny`,
                ),
                ...["create", "update", "delete"].map((a) => `p, role:deployer, applicationsets, ${a}, regulated/*, deny`),
            ]);
            assert.ok(!csv.includes("update, tenants/*"), "a project that is not regulated keeps its deployers' update and sync");
            // What ArgoCD decides on this policy is argo-cd's own enforcer's: argocd-rbac-enforcer-agrees, "the program's policy" cases.
        });

        it("binds the configured groups: approvers to the approver role, deployers to a role that only denies, quoted as ArgoCD's CSV reader needs", async () => {
            const csv = rolloutActionsPolicyCsv({ ...REGULATED_RBAC, approverGroups: ["Release Approvers"], deployerGroups: ['ship, "fast"'] })!;
            assert.match(csv, /^g, "Release Approvers", role:approver$/m);
            assert.match(csv, /^g, "ship, ""fast""", role:argo-rollouts-addon-deployer$/m);
            assert.ok(!/^p, role:argo-rollouts-addon-deployer, .*, allow$/m.test(csv), "the deployers' role grants nothing");
            // The quoting loads (quoted fields are read as ArgoCD reads them: argocd-rbac-enforcer-agrees).
            const enforcer = await loadArgoRbac({ [ROLLOUT_ACTIONS_POLICY_KEY]: csv });
            const resume = { resource: "applications", action: "action/argoproj.io/Rollout/resume", object: "regulated/web" };
            assert.ok(enforcer.error === undefined && enforcer.enforce({ groups: ["Release Approvers"] }, resume));
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
        const inputs = (p: PlannedResource) => p.inputs as { metadata: object; spec: object };

        it("with the defaults, declares nothing: no argocd-cm key, the program's rules are Application-level", () => {
            assert.deepStrictEqual(stageResources(hub), []);
            assert.ok(!hub.resources.some((r) => (r.inputs as { metadata?: { name?: string } }).metadata?.name === "argocd-cm"));
        });

        it("writes config rules for every kind per built-in kind, and only them: the weight rule is written for every Application", () => {
            const everyKind = rule({ kind: "*", jqPathExpressions: [".spec.template.spec.containers[].securityContext"] });
            assert.deepStrictEqual(data(byName(full, "argocd-cm-diff-customizations")), argocdCmIgnoreData(expandAllKinds([everyKind], BUILTIN_KINDS)));
        });

        it("patches the named AppProject, ApplicationSet and argocd-rbac-cm", () => {
            // The project's atomic list taken over: its own kinds (a Rollout among them) first, then each Rollout kind of ADR-056 D2 it lacks.
            const project = byName(full, "appproject-tenants");
            assert.strictEqual(project.type, "kubernetes:argoproj.io/v1alpha1:AppProjectPatch");
            assert.deepStrictEqual(inputs(project).metadata, { name: "tenants", namespace: "argocd", annotations: { "pulumi.com/patchForce": "true" } });
            const whitelist = [...tenantArgoCd.projects.tenants.namespaceResources, ...ROLLOUT_PROJECT_KINDS.slice(1)];
            assert.deepStrictEqual(inputs(project).spec, { namespaceResourceWhitelist: whitelist });
            // The program's options and rules (RespectIgnoreDifferences only, the selector key, the weights), the tenant's after them,
            // diffing server-side with webhooks, and the atomic lists taken over.
            const appSet = byName(full, "applicationset-tenant-apps");
            assert.strictEqual(appSet.type, "kubernetes:argoproj.io/v1alpha1:ApplicationSetPatch");
            assert.deepStrictEqual(inputs(appSet).metadata, { name: "tenant-apps", namespace: "argocd", annotations: { ...TAKE_OVER_LISTS } });
            const weights = [".spec.rules[]? | select((.backendRefs // []) | length > 1) | .backendRefs[]?.weight"];
            assert.deepStrictEqual(inputs(appSet).spec, {
                template: {
                    metadata: { annotations: { "argocd.argoproj.io/compare-options": "ServerSideDiff=true,IncludeMutationWebhook=true" } },
                    spec: {
                        syncPolicy: { syncOptions: ["RespectIgnoreDifferences=true", "CreateNamespace=true"] },
                        ignoreDifferences: [
                            { kind: "Service", jsonPointers: ["/spec/selector/rollouts-pod-template-hash"] },
                            { group: "gateway.networking.k8s.io", kind: "HTTPRoute", jqPathExpressions: weights },
                            REPLICAS,
                        ],
                    },
                },
            });
            const rbac = byName(full, "argocd-rbac-rollout-actions");
            assert.strictEqual(rbac.type, "kubernetes:core/v1:ConfigMapPatch");
            assert.deepStrictEqual(Object.keys(data(rbac)), [ROLLOUT_ACTIONS_POLICY_KEY]);
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
                    reads.map((r) => `${r.name} ${r.type}`),
                    [
                        "kept-appproject-tenants kubernetes:argoproj.io/v1alpha1:AppProject",
                        "kept-applicationset-tenant-apps kubernetes:argoproj.io/v1alpha1:ApplicationSet",
                    ],
                );
                assert.ok(stageResources(run).every((r) => r.read));
                assert.deepStrictEqual([run.outputs.argocdVerified, run.outputs.argocdPatched], [["AppProject/tenants", "ApplicationSet/tenant-apps"], []]);
                for (const r of reads) {
                    assert.ok(transitiveDeps(run, r.urn).has(byName(run, "rollouts-crds").urn), `${r.name} is read before the CRDs exist`);
                }
            });

            it("fails the preview with every problem of every object, each naming the object and what ADR-056 requires", async () => {
                const world = placeholderWorld(fromConfigMap("hub", config()));
                world.objects!["argoproj.io/v1alpha1/AppProject/argocd/tenants"].spec = { namespaceResourceWhitelist: [{ group: "", kind: "Service" }] };
                const selectorKey = { kind: "Service", jsonPointers: ["/spec/selector/rollouts-pod-template-hash"] };
                world.objects!["argoproj.io/v1alpha1/ApplicationSet/argocd/tenant-apps"].spec = {
                    template: { spec: { syncPolicy: { syncOptions: ["ServerSideApply=true"] }, ignoreDifferences: [selectorKey] } },
                };
                await assert.rejects(planInline(config(), { stack: "hub", world }), (err: Error) => {
                    assert.match(err.message, /stack "hub": ArgoCD objects kept by another owner miss what ADR-056 requires \(3\)/);
                    // Each problem's own text: 'names the project, the missing kinds, ...' and 'names every missing requirement ...' above.
                    assert.match(err.message, /AppProject argocd\/tenants \(argocd.projects.tenants\): .*does not permit argoproj.io\/Rollout, /);
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
            assert.deepStrictEqual([stageResources(off), off.outputs.argocdRunsOn, hub.outputs.argocdRunsOn], [[], "mgmt", "hub"]);
        });
    });
});
