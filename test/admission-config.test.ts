import * as assert from "assert";
import { parseAddonConfig } from "../stacks/config";
import { APPROVER_ROLLOUT_ACTIONS, BUILTIN_KINDS } from "../components/argocd";
import { POLICY_DEFAULTS } from "../components/policy";
import { stackStrategies } from "../components/delivery";
import { TEST_POLICY, hubConfig, merged, planInline, spokeConfig, whole } from "./harness";
import { REGULATED, configError, hubProblems, parseHub, parseMap, problemFor } from "./stackConfig";

/** A managed project whose wildcard whitelist covers the stable and canary Services (ADR-056 D4). */
const tenants = { projects: { tenants: { owner: "addon", namespaceResources: [{ group: "*", kind: "*" }] } } };

type Row = [Record<string, unknown>, string, RegExp, string?];
const CONTROLLER_SA = "argocd/argocd-application-controller";
const ELSEWHERE = { runsOn: "mgmt", projects: undefined, applicationSets: undefined };
const CUT = { tenantNamespaceSelector: { matchLabels: { "platform.test/tier": "dev" } } };
const NO_PROD = { absentClasses: ["prod"], prodNamespaceLabels: undefined };
const ROUTE = { group: "gateway.networking.k8s.io", kind: "HTTPRoute" };
const ROLLOUT = { group: "argoproj.io", kind: "Rollout" };
/** argocd-cm's rules for every Application, and a managed tenant ApplicationSet's (APPSET_RULE is its first rule's key). */
const systemRules = (...ignoreDifferences: object[]) => ({ argocd: { ignoreDifferences } });
const appSet = (set: object) => ({ argocd: { applicationSets: { tenants: { owner: "addon", ...set } } } });
const APPSET_RULE = "argocd.applicationSets.tenants.ignoreDifferences[0]";
/** A regulated section with its namespace labels and approvers, and `patch` over them. */
const reg = (patch: Record<string, unknown>) => ({ policy: { regulated: { namespaceLabels: { a: "b" }, approverGroups: ["release"], ...patch } } });

describe("admission configuration (policy, argocd)", () => {
    describe("defaults", () => {
        it("fills the policy section from POLICY_DEFAULTS beside the labels the platform must set", () => {
            const cfg = parseHub();
            const { regulated: _none, ...defaults } = POLICY_DEFAULTS;
            assert.deepStrictEqual(cfg.policy, { ...defaults, ...TEST_POLICY });
        });

        it("manages argocd-cm only, with no project, ApplicationSet or RBAC, when the platform names none ({})", () => {
            const cfg = parseHub();
            const { runsOn, local, namespace, projects, applicationSets, allKinds } = cfg.argocd;
            assert.deepStrictEqual([runsOn, local, namespace, projects, applicationSets, allKinds], ["hub", true, "argocd", [], [], BUILTIN_KINDS]);
            assert.deepStrictEqual(cfg.argocd.rbac, {
                deployerRoles: [],
                projects: [],
                // Only actions ArgoCD has (argocd.rbac.actions refuses any other, below).
                actions: ["resume", "promote-full", "skip-current-step", "abort"],
                regulatedProjects: [],
                approverGroups: [],
                deployerGroups: [],
            });
        });
    });

    describe("reads", () => {
        it("projects, ApplicationSets, system rules and RBAC in the stack file's order", () => {
            const cfg = parseHub({
                argocd: {
                    namespace: "gitops",
                    ...tenants,
                    applicationSets: {
                        "tenant-apps": {
                            owner: "addon",
                            syncOptions: ["CreateNamespace=true", "ServerSideApply=false"],
                            ignoreDifferences: [{ group: "apps", kind: "Deployment", name: "web", jsonPointers: ["/spec/replicas"] }],
                        },
                    },
                    // An array rule for every kind (written per built-in kind, so it never reaches a Rollout) and the ADR's scalar HPA rule.
                    ignoreDifferences: [
                        { kind: "*", jqPathExpressions: [".spec.template.spec.containers[].securityContext"] },
                        { ...ROLLOUT, jsonPointers: ["/spec/replicas"] },
                    ],
                    rbac: { approverRole: "role:approver", deployerRoles: ["role:deployer", "role:deployer"] },
                },
            });
            assert.strictEqual(cfg.argocd.namespace, "gitops");
            assert.deepStrictEqual(cfg.argocd.projects, [{ name: "tenants", owner: "addon", namespaceResources: [{ group: "*", kind: "*" }] }]);
            assert.deepStrictEqual(cfg.argocd.applicationSets, [
                {
                    name: "tenant-apps",
                    owner: "addon",
                    // Client-side sync is the tenant's choice.
                    syncOptions: ["CreateNamespace=true", "ServerSideApply=false"],
                    ignoreDifferences: [
                        { group: "apps", kind: "Deployment", name: "web", jsonPointers: ["/spec/replicas"], jqPathExpressions: [], managedFieldsManagers: [] },
                    ],
                },
            ]);
            assert.deepStrictEqual(cfg.argocd.ignoreDifferences, [
                { group: "", kind: "*", jsonPointers: [], jqPathExpressions: [".spec.template.spec.containers[].securityContext"], managedFieldsManagers: [] },
                { ...ROLLOUT, jsonPointers: ["/spec/replicas"], jqPathExpressions: [], managedFieldsManagers: [] },
            ]);
            // Duplicates collapse; the grant's scope defaults to the managed projects.
            assert.deepStrictEqual(cfg.argocd.rbac, {
                approverRole: "role:approver",
                deployerRoles: ["role:deployer"],
                projects: ["tenants"],
                actions: [...APPROVER_ROLLOUT_ACTIONS],
                regulatedProjects: [],
                approverGroups: [],
                deployerGroups: [],
            });
        });

        it("the policy section's switches, the prod settings and the tenant selector", () => {
            const selector = { matchLabels: { "platform.test/tenant": "true" }, matchExpressions: [{ key: "platform.test/tier", operator: "Exists" }] };
            const switches = { kyvernoApi: "kyverno.io/v1", validationAction: "Audit", availabilityPolicies: "complement", mutationFailurePolicy: "Fail" };
            const prod = { tenantNamespaceSelector: selector, prodMinReplicas: 3, pdbMaxUnavailable: 2 };
            const cfg = parseHub({ policy: { ...switches, ...prod, prodNamespaceLabels: whole({ env: "prod" }) } }).policy;
            assert.deepStrictEqual(cfg, { ...parseHub().policy, ...switches, ...prod, prodNamespaceLabels: { env: "prod" } });
        });
        it("a staging spoke that declares no prod namespaces: no prod label, and no prod strategy offered", () => {
            const config = parseMap(spokeConfig({ policy: NO_PROD }), "preprod");
            assert.deepStrictEqual([config.policy.absentClasses, config.policy.prodNamespaceLabels], [["prod"], {}]);
            assert.ok(!stackStrategies(config).some((s) => s.tier === "prod"));
        });

        it("the regulated section, with ServiceAccounts as namespace/name", () => {
            assert.deepStrictEqual(parseHub({ policy: { regulated: REGULATED } }).policy.regulated, {
                namespaceLabels: { "platform.test/class": "regulated" },
                approverGroups: ["release-approvers"],
                deployerGroups: ["shop-deployers"],
                gitopsServiceAccounts: [{ namespace: "argocd", name: "argocd-application-controller" }],
                gitopsUsers: [],
                gitopsGroups: [],
                actionServiceAccounts: [{ namespace: "argocd", name: "argocd-server" }],
                allowReplaceOrForceSync: false,
            });
        });

        it("an object another owner keeps by default, and declares nothing on it", () => {
            const cfg = parseHub({ argocd: { projects: { tenants: {} }, applicationSets: { "tenant-apps": null } } });
            assert.deepStrictEqual(cfg.argocd.projects, [{ name: "tenants", owner: "external", namespaceResources: [] }]);
            assert.deepStrictEqual(cfg.argocd.applicationSets, [{ name: "tenant-apps", owner: "external", syncOptions: [], ignoreDifferences: [] }]);
        });
    });

    describe("where ArgoCD runs", () => {
        it("on another cluster when argocd.runsOn names it (this one by default: the defaults above), whose stack names the ArgoCD objects", () => {
            const elsewhere = parseHub({ argocd: ELSEWHERE }).argocd;
            assert.deepStrictEqual([elsewhere.runsOn, elsewhere.local, elsewhere.projects, elsewhere.applicationSets], ["mgmt", false, [], []]);
        });

        it("refuses ArgoCD objects in the stack of a cluster whose ArgoCD runs elsewhere, naming where they go", () => {
            const all = hubProblems({
                argocd: { runsOn: "mgmt", projects: { tenants: {} }, applicationSets: { apps: {} }, rbac: { approverRole: "role:approver" } },
            });
            assert.deepStrictEqual(
                all.map((p) => p.key),
                ["argocd.projects", "argocd.applicationSets", "argocd.rbac"],
            );
            assert.match(
                all[0].allowed,
                /only applies where ArgoCD runs: argocd.runsOn is mgmt, so list this cluster's ArgoCD objects in the stack of cluster mgmt/,
            );
        });
    });

    describe("rejects with the key, the value and what is allowed", () => {
        const REFUSED: Row[] = [
            [
                { argocd: { enabled: false } },
                "argocd.enabled",
                /replaced by argocd.runsOn: this cluster's name \(cluster.name\).*or the name of the cluster whose ArgoCD does/,
            ],
            [
                { argocd: { projects: { tenants: { namespaceResources: [{ group: "", kind: "Service" }] } } } },
                "argocd.projects.tenants.namespaceResources",
                /only applies with argocd.projects.tenants.owner: addon.*reads and checks it/,
            ],
            [
                { argocd: { applicationSets: { apps: { owner: "external", syncOptions: ["PruneLast=true"] } } } },
                "argocd.applicationSets.apps.syncOptions",
                /only applies with argocd.applicationSets.apps.owner: addon/,
            ],
            [{ argocd: { applicationSets: { apps: { owner: "gitops" } } } }, "argocd.applicationSets.apps.owner", /one of addon, external/],
            [{ argocd: { projects: { tenants: { whitelist: [] } } } }, "argocd.projects.tenants.whitelist", /unknown key/],
            [systemRules({ kind: "Service", jsonPointer: ["/spec"] }), "argocd.ignoreDifferences[0].jsonPointer", /unknown key/],
            [{ policy: { kyvernoApi: "kyverno.io/v2" } }, "policy.kyvernoApi", /one of policies.kyverno.io\/v1, kyverno.io\/v1/],
            [{ policy: { prodMinReplicas: 1 } }, "policy.prodMinReplicas", /from 2 to 100/],
            [{ policy: { topologyKeys: [] } }, "policy.topologyKeys", /list of 1 to 3 entries/],
            [{ policy: { prodNamespaceLabels: whole({}) } }, "policy.prodNamespaceLabels", /at least one label.*matches every namespace/],
            [{ policy: { tenantNamespaceSelector: whole({}) } }, "policy.tenantNamespaceSelector", /at least one label.*matches every namespace/],
            [
                { policy: { tenantNamespaceSelector: { matchExpressions: [{ key: "tier", operator: "In" }] } } },
                "policy.tenantNamespaceSelector.matchExpressions[0].values",
                /at least one value with In/,
            ],
            [
                { policy: { tenantNamespaceSelector: { matchExpressions: [{ key: "tier", operator: "Exists", values: ["x"] }] } } },
                "policy.tenantNamespaceSelector.matchExpressions[0].values",
                /empty with Exists/,
            ],
            [
                { policy: { tenantNamespaceSelector: { matchExpressions: [{ key: "tier", operator: "Equals", values: ["x"] }] } } },
                "policy.tenantNamespaceSelector.matchExpressions[0].operator",
                /one of In, NotIn, Exists, DoesNotExist/,
            ],
            [{ argocd: { ...tenants, rbac: { approverRole: 'role:"approver' } } }, "argocd.rbac.approverRole", /quotes/],
            [systemRules({ kind: "Service" }), "argocd.ignoreDifferences[0]", /at least one of jsonPointers/],
            [systemRules({ kind: "*", group: "apps", jsonPointers: ["/spec"] }), "argocd.ignoreDifferences[0].group", /unset with kind "\*"/],
            [systemRules({ kind: "Service", name: "web", jsonPointers: ["/spec"] }), "argocd.ignoreDifferences[0].name", /unknown key/],
            [{ argocd: { ...tenants, rbac: { approverRole: "role:a,role:b" } } }, "argocd.rbac.approverRole", /no spaces, commas/],
            [{ argocd: { projects: { Tenants: {} } } }, "argocd.projects.Tenants", /Kubernetes object name/],
            [{ policy: { pdbMaxUnavailable: 3, prodMinReplicas: 3 } }, "policy.pdbMaxUnavailable", /less than policy.prodMinReplicas \(3\).*ADR-056 D8/],
            [{ policy: { excludeNamespaces: ["kube-system", "default"] } }, "policy.excludeNamespaces", /must not list default.*ADR-056 D2/],
            [
                appSet({ ignoreDifferences: [{ ...ROLLOUT, jqPathExpressions: [".spec.template.spec.containers[].env"] }] }),
                APPSET_RULE,
                /array path.*JSON merge patch/,
            ],
            [
                {
                    argocd: {
                        allKinds: [{ group: "apps", kind: "Deployment" }, ROLLOUT],
                        ignoreDifferences: [{ kind: "*", jqPathExpressions: [".spec.template.spec.tolerations[]"] }],
                    },
                },
                "argocd.ignoreDifferences[0]",
                /because argocd.allKinds lists argoproj.io\/Rollout/,
            ],
            [
                systemRules({ ...ROUTE, jqPathExpressions: [".spec.rules[].backendRefs[].weight"] }),
                "argocd.ignoreDifferences[0]",
                /every HTTPRoute of every Application.*tenant ApplicationSets.*ADR-056 as-built #871/,
            ],
            [
                appSet({ ignoreDifferences: [{ ...ROUTE, managedFieldsManagers: ["gatewayAPI"] }] }),
                APPSET_RULE,
                /field manager gatewayAPI.*atomic list.*never applied while the Application reports Synced/,
            ],
            [systemRules({ kind: "*", jsonPointers: ["/spec/selector"] }), "argocd.ignoreDifferences[0]", /whole Service selector/],
            [
                appSet({ ignoreDifferences: [{ kind: "Service", jsonPointers: ["/spec/selector"] }] }),
                APPSET_RULE,
                /whole Service selector.*ignore only \/spec\/selector\/rollouts-pod-template-hash/,
            ],
            [
                { argocd: { projects: { tenants: { owner: "addon", namespaceResources: [{ group: "apps", kind: "Deployment" }] } } } },
                "argocd.projects.tenants.namespaceResources",
                /stable and canary Services \(ADR-056 D4\)/,
            ],
            [
                reg({ deployerGroups: ["release", "shop"], gitopsServiceAccounts: ["argocd/x"] }),
                "policy.regulated.deployerGroups",
                /must not include an approver group \(release\).*ADR-056 D3, ADR-049/,
            ],
            [{ argocd: { ...tenants, rbac: { approverRole: "role:release", deployerRoles: ["role:release"] } } }, "argocd.rbac.deployerRoles", /ADR-056 D3/],
            [{ argocd: { rbac: { approverRole: "role:approver" } } }, "argocd.rbac.projects", /never to every project/],

            // Regulated identities: a GitOps identity as a hub's ArgoCD arrives, never every user's, an approver's or a deployer's.
            ...["system:authenticated", "system:serviceaccounts", "system:serviceaccounts:argocd", "system:masters", "system:nodes"].map((g): Row => [
                reg({ deployerGroups: ["shop"], gitopsGroups: [g] }),
                "policy.regulated.gitopsGroups",
                /must not be a Kubernetes group of every user, ServiceAccount, node or cluster admin/,
            ]),
            [
                reg({ deployerGroups: ["shop"], gitopsGroups: ["release"] }),
                "policy.regulated.gitopsGroups",
                /must not be an approver group: its members would pass the guard as ArgoCD's sync/,
            ],
            [reg({ deployerGroups: ["shop"], gitopsGroups: ["shop"] }), "policy.regulated.gitopsGroups", /must not be a deployer group/],
            [
                reg({ deployerGroups: ["shop"], gitopsUsers: ["system:serviceaccount:argocd:argocd-application-controller"] }),
                "policy.regulated.gitopsUsers",
                /list it in policy\.regulated\.gitopsServiceAccounts as <namespace>\/<name>/,
            ],
            [
                reg({ deployerGroups: ["shop"], gitopsUsers: ["system:anonymous"] }),
                "policy.regulated.gitopsUsers",
                /every unauthenticated request would pass as ArgoCD's sync/,
            ],
            [
                { ...reg({ gitopsGroups: ["platform:argocd-hub"], actionServiceAccounts: ["argocd/argocd-server"] }), argocd: ELSEWHERE },
                "policy.regulated.actionServiceAccounts",
                /must be empty where another cluster's ArgoCD syncs this one \(argocd\.runsOn is mgmt\).*same cluster Secret identity/,
                '["argocd/argocd-server"]',
            ],
            [
                { policy: { regulated: { namespaceLabels: { a: "b" }, gitopsServiceAccounts: ["argocd/x"] } } },
                "policy.regulated.approverGroups",
                /is required: the groups whose members approve/,
                "(not set)",
            ],
            [
                reg({}),
                "policy.regulated.gitopsServiceAccounts",
                /is required \(or policy\.regulated\.gitopsUsers, gitopsGroups\): .*argocd\/argocd-application-controller/,
            ],
            [
                reg({ gitopsServiceAccounts: [CONTROLLER_SA, "argocd/argocd-server"] }),
                "policy.regulated.gitopsServiceAccounts",
                /must not name ArgoCD's API server.*actionServiceAccounts.*status, spec\.paused, spec\.restartAt/,
                '"argocd/argocd-server"',
            ],
            [
                reg({ gitopsServiceAccounts: [CONTROLLER_SA], actionServiceAccounts: [CONTROLLER_SA] }),
                "policy.regulated.actionServiceAccounts",
                /must not repeat a policy.regulated.gitopsServiceAccounts identity/,
            ],
            [
                reg({ gitopsServiceAccounts: [CONTROLLER_SA], actionServiceAccounts: ["argocd-server"] }),
                "policy.regulated.actionServiceAccounts[0]",
                /<namespace>\/<name>/,
            ],
            [
                { argocd: { ...tenants, rbac: { approverRole: "role:approver", actions: ["promote-full", "promote"] } } },
                "argocd.rbac.actions[1]",
                /one of ArgoCD's Rollout actions abort, pause, promote-full, restart, resume, retry, skip-current-step .*there is no "promote"/,
                '"promote"',
            ],
            // The ADR's traps, each with its ADR section.
            [{ policy: { pdbMaxUnavailable: "25%" } }, "policy.pdbMaxUnavailable", /whole number of pods, not a percentage.*\(ADR-056 D8\)/, '"25%"'],
            ...(
                [
                    [{ jqPathExpressions: [".spec.template.spec.containers[].image"] }, /jq path .* may run through an array/],
                    [{ jsonPointers: ["/spec/template/spec/containers/0/image"] }, /addresses an array element/],
                    [{ managedFieldsManagers: ["kyverno"] }, /ignore whatever those managers own/],
                ] as const
            ).map(([paths, reason]): Row => [
                systemRules({ ...ROLLOUT, ...paths }),
                "argocd.ignoreDifferences[0]",
                new RegExp(`reach argoproj.io/Rollout with an array path: .*${reason.source}.*ADR-056 as-built 2026-07-14`),
            ]),
            [
                appSet({ syncOptions: ["RespectIgnoreDifferences=false"] }),
                "argocd.applicationSets.tenants.syncOptions",
                /ignoreDifferences alone only hides drift.*ADR-056 as-built 2026-06-27/,
                '"RespectIgnoreDifferences=false"',
            ],
            [{ policy: CUT }, "policy.prodNamespaceLabels", /label platform.test\/tier cannot meet both.*replica floor would apply nowhere/],
            [{ policy: { absentClasses: ["prod"] } }, "policy.prodNamespaceLabels", /not be set with policy.absentClasses \[prod\]: .*no prod namespaces/],
            [{ policy: { ...NO_PROD, regulated: REGULATED } }, "policy.regulated", /not be set with policy.absentClasses \[prod\]/],
            [{ policy: NO_PROD, delivery: { prod: { standard: { autoPromotion: true } } } }, "delivery.prod", /not be set with policy.absentClasses \[prod\]/],
            [{ policy: { absentClasses: ["tenants"], prodNamespaceLabels: undefined } }, "policy.tenantNamespaceSelector", /no tenant namespaces/],
            [
                {
                    policy: {
                        ...CUT,
                        prodNamespaceLabels: { "platform.test/tier": "dev" },
                        regulated: { namespaceLabels: { "platform.test/tier": "prod" }, approverGroups: ["a"], gitopsServiceAccounts: ["argocd/x"] },
                    },
                },
                "policy.regulated.namespaceLabels",
                /approval guard would apply nowhere/,
            ],
        ];
        for (const [patch, key, allowed, given] of REFUSED) {
            it(`${key}: ${allowed.source.slice(0, 80)}`, () => {
                const p = problemFor(patch, key, allowed);
                if (given !== undefined) assert.strictEqual(p.given, given);
            });
        }

        it("a regulated section without approvers, GitOps identities or namespace labels", () => {
            const all = hubProblems({ policy: { regulated: { approverGroups: [], gitopsServiceAccounts: ["argocd"] } } });
            assert.deepStrictEqual(all.map((p) => p.key).sort(), [
                "policy.regulated.approverGroups",
                "policy.regulated.deployerGroups",
                "policy.regulated.gitopsServiceAccounts",
                "policy.regulated.gitopsServiceAccounts[0]",
                "policy.regulated.namespaceLabels",
            ]);
            problemFor(
                { policy: { regulated: { namespaceLabels: { a: "b" }, approverGroups: ["release"], gitopsServiceAccounts: [], gitopsUsers: [] } } },
                "policy.regulated.gitopsServiceAccounts",
                /must name at least one identity, here or in policy\.regulated\.gitopsUsers or gitopsGroups/,
            );
        });
        it("the GitOps identities as a hub's ArgoCD arrives: a user name or a group", () => {
            const user = "arn:aws:iam::123456789012:role/argocd-hub";
            const cfg = parseHub(reg({ deployerGroups: ["shop"], gitopsUsers: [user], gitopsGroups: ["platform:argocd-hub"], allowReplaceOrForceSync: true }));
            const { gitopsServiceAccounts, gitopsUsers, gitopsGroups, allowReplaceOrForceSync } = cfg.policy.regulated!;
            assert.deepStrictEqual([gitopsServiceAccounts, gitopsUsers, gitopsGroups, allowReplaceOrForceSync], [[], [user], ["platform:argocd-hub"], true]);
            // Where another cluster's ArgoCD syncs this one, no action identity is needed.
            const elsewhere = { ...reg({ deployerGroups: [], gitopsGroups: ["platform:argocd-hub"] }), argocd: ELSEWHERE };
            assert.strictEqual(parseHub(elsewhere).policy.regulated!.actionServiceAccounts.length, 0);
        });
        it("Kyverno's variable marker in a group name, which a ClusterPolicy would substitute", () => {
            for (const kyvernoApi of ["kyverno.io/v1", "policies.kyverno.io/v1"]) {
                const regulated = reg({
                    approverGroups: ["release", "{{ request.userInfo.groups[0] }}"],
                    deployerGroups: ["{{x}}"],
                    gitopsServiceAccounts: ["argocd/x"],
                });
                const all = hubProblems(merged(regulated, { policy: { kyvernoApi } }));
                assert.deepStrictEqual(all.map((p) => p.key).sort(), ["policy.regulated.approverGroups[1]", "policy.regulated.deployerGroups[0]"], kyvernoApi);
                assert.match(all[0].allowed, /must not contain \{\{.*substitutes/);
            }
        });
        it("a regulated cluster whose ArgoCD gets no RBAC for the regulated projects, or whose groups overlap across the sections", () => {
            const regulated = reg({ deployerGroups: ["shop"], gitopsServiceAccounts: [CONTROLLER_SA] });
            // Read past parseHub, which gives a regulated stack without argocd.rbac the harness's.
            const { "aws:region": _r, ...rest } = merged(hubConfig(), regulated);
            const none = configError(() => parseAddonConfig("hub", rest, { awsRegion: "eu-west-1" })).problems;
            assert.strictEqual(none.length, 1, JSON.stringify(none));
            assert.match(
                `${none[0].key}: ${none[0].allowed}`,
                /^argocd\.rbac\.regulatedProjects: is required with policy\.regulated where ArgoCD runs.*Replace syncs as its own identities/,
            );
            const partial = hubProblems(
                merged(regulated, { argocd: { projects: { "tenants-regulated": {} }, rbac: { regulatedProjects: ["tenants-regulated", "other"] } } }),
            );
            assert.deepStrictEqual(partial.map((p) => p.key).sort(), [
                "argocd.rbac.approverRole",
                "argocd.rbac.deployerRoles",
                "argocd.rbac.regulatedProjects",
            ]);
            assert.match(partial.find((p) => p.key === "argocd.rbac.regulatedProjects")!.allowed, /must be one of argocd.rbac.projects \(tenants-regulated\)/);
            const rbac = (groups: Record<string, unknown>) =>
                merged(regulated, {
                    argocd: { projects: { r: {} }, rbac: { approverRole: "role:a", deployerRoles: ["role:d"], regulatedProjects: ["r"], ...groups } },
                });
            // The groups verify asks about default to policy.regulated's, and never overlap.
            const { approverGroups, deployerGroups } = parseHub(rbac({})).argocd.rbac;
            assert.deepStrictEqual([approverGroups, deployerGroups], [["release"], ["shop"]]);
            const never = "the deployer is never the approver (ADR-056 D3, ADR-049)";
            const problems = (groups: Record<string, unknown>) => hubProblems(rbac(groups)).map((p) => `${p.key}: ${p.allowed}`);
            assert.deepStrictEqual(problems({ deployerGroups: ["release"] }), [`argocd.rbac.deployerGroups: must not include an approver group: ${never}`]);
            // Across the sections: ArgoCD allows what any one of a user's groups allows.
            assert.deepStrictEqual(problems({ approverGroups: ["shop"], deployerGroups: ["ops"] }), [
                `argocd.rbac.approverGroups: must not be a deployer group of policy.regulated.deployerGroups: ${never}`,
            ]);
            assert.deepStrictEqual(problems({ approverGroups: ["leads"], deployerGroups: ["release"] }), [
                `argocd.rbac.deployerGroups: must not be an approver group of policy.regulated.approverGroups: ${never}`,
            ]);
        });
    });

    it("stops the program before anything is declared", () =>
        assert.rejects(
            planInline(merged(hubConfig(), { policy: { pdbMaxUnavailable: "10%" } })),
            /argo-rollouts-addon:policy.pdbMaxUnavailable = "10%": must be a whole number of pods/,
        ));
});
