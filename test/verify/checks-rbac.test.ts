import * as assert from "assert";
import { TENANT_VIEW_ROLE, tenantOperatorBinding } from "../../components/rollouts/tenants";
import type { KubeObject } from "../../tools/verify/cluster";
import { KYVERNO_AGGREGATE_LABELS, KYVERNO_ROLES, kyvernoRoleName } from "../../components/policy";
import { fixture, healthyCluster, kyvernoAccount, patch, verifyConfig } from "./world";
import { expectFail, expectFails, expectPass, found, status, useFakeCluster } from "./run";
import { PolicyRule } from "../../components/argoRollouts";
import { controllerClusterRules } from "../../components/rollouts/rbac";
import { approvalRoleName } from "../../components/policy/approvalBindings";

describe("verify: RBAC (SubjectAccessReview)", () => {
    const { verify, server } = useFakeCluster();
    const operatorBinding = (namespace: string) => ({
        ...(tenantOperatorBinding({ namespace, groups: ["payments-devs"] }) as unknown as KubeObject),
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
    });
    const grant = (who: { group?: string; user?: string }, rules: PolicyRule[], reason: string, namespace?: string) => ({ ...who, rules, reason, namespace });

    it("asks the API server for what each identity may do: each check fails for the grant that breaks it, names it, and spares GitOps and other namespaces", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        let results = await verify(config, world);
        const reviews = server().requests.filter((r) => r.startsWith("POST /apis/authorization.k8s.io/v1/subjectaccessreviews"));
        assert.ok(reviews.length > 0);
        assert.match(
            results.get("rbac.deployer-cannot-resume")!.note!,
            /RBAC refuses 1 deployer subject\(s\) in payments-prod; spec changes and unpausing are refused by admission/,
        );
        expectPass(results, "rbac.approval-bindings");
        assert.strictEqual(results.get("rbac.approval-bindings")!.note, "2 binding(s) in 1 regulated namespace(s): payments-prod");
        // The controller without rollouts/status and pod gets; Kyverno's reports controller without Rollouts and its role unlabelled.
        world.grants[0].rules = controllerClusterRules(config.plugin).map((r) => ({
            ...r,
            resources: r.resources.filter((x) => x !== "rollouts/status"),
            verbs: r.resources.includes("pods") ? r.verbs.filter((v) => v !== "get") : r.verbs,
        }));
        const without = (user: string, drop: (r: PolicyRule) => boolean) =>
            (world.grants = world.grants.map((g) => (g.user === kyvernoAccount(user) ? { ...g, rules: g.rules.filter((r) => !drop(r)) } : g)));
        without("reports-controller", (r) => r.resources.includes("rollouts"));
        without("background-controller", (r) => r.resources.includes("poddisruptionbudgets") && r.verbs.includes("create"));
        world.grants = world.grants.filter((g) => g.user !== kyvernoAccount("admission-controller"));
        patch(world, "ClusterRole", kyvernoRoleName({ name: KYVERNO_ROLES.readRollouts }), (o) => ({
            ...o,
            metadata: { ...o.metadata, labels: { [KYVERNO_AGGREGATE_LABELS.background]: "true" } },
        }));
        // The chart's aggregate role reaching edit; view without the Rollout kinds and the stage's role gone.
        const aggregate = fixture("clusterrole-chart-aggregate-to-edit.json");
        world.objects.push(aggregate, operatorBinding("alpha-shop-prod"), operatorBinding("payments-prod"));
        patch(world, "ClusterRole", "edit", (o) => ({ ...o, rules: [...(o.rules as unknown[]), ...(aggregate.rules as unknown[])] }));
        world.grants = world.grants.map((g) => (g.group === "alpha-team" ? { ...g, rules: [...g.rules, ...(aggregate.rules as never[])] } : g));
        patch(world, "ClusterRole", "view", (o) => ({ ...o, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] }] }));
        world.objects = world.objects.filter((o) => o.metadata?.name !== TENANT_VIEW_ROLE);
        // Deployers: a cluster-wide tenant admin role, a team Role that deletes, the edit role, a person bound to the deployer Role beside ArgoCD.
        const deployers = { group: "payments-deployers" };
        const argo = (resources: string[], verbs: string[]): PolicyRule[] => [{ apiGroups: ["argoproj.io"], resources, verbs }];
        world.grants.unshift(
            grant(deployers, argo(["rollouts", "rollouts/status"], ["get", "patch", "update"]), 'RBAC: allowed by ClusterRoleBinding "tenant-admins"'),
        );
        world.grants.push(
            grant(deployers, argo(["rollouts"], ["delete"]), 'RBAC: allowed by RoleBinding "payments-team"', "payments-prod"),
            grant(deployers, fixture<{ rules: PolicyRule[] }>("clusterrole-edit.json").rules, 'RBAC: allowed by RoleBinding "payments-edit"', "payments-prod"),
            grant({ user: "dana@platform.test" }, argo(["rollouts/status"], ["patch"]), 'RBAC: allowed by RoleBinding "dana-status"', "payments-prod"),
        );
        world.objects.push({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
            metadata: { name: "payments-api-rollout-deployer-extra", namespace: "payments-prod" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "argo-rollouts-addon:rollout-deployer" },
            subjects: [
                { kind: "ServiceAccount", name: "argocd-application-controller", namespace: "argocd" },
                { kind: "User", name: "dana@platform.test" },
            ],
        });
        // Kyverno's approver binding written for other groups, the deployers' gone.
        patch(world, "RoleBinding", approvalRoleName("approver"), () => fixture("approval-binding-other-groups.json"));
        world.objects = world.objects.filter((o) => !(o.kind === "RoleBinding" && o.metadata?.name === approvalRoleName("deployer")));
        results = await verify(config, world);
        const cases: Record<string, RegExp[]> = {
            "rbac.controller": [
                /ServiceAccount argo-rollouts\/argo-rollouts: may not patch argoproj\.io\/rollouts\/status in every namespace \(argo-rollouts v1\.9\.0 rollout\/sync\.go/,
                /may not get pods in every namespace \(argo-rollouts v1\.9\.0 rollout\/ephemeralmetadata\.go/,
            ],
            "rbac.kyverno-reads-rollouts": [
                /ServiceAccount kyverno\/kyverno-reports-controller: may not list argoproj\.io\/rollouts in every namespace/,
                /ClusterRole kyverno:argo-rollouts-addon:read-rollouts: lacks the label rbac\.kyverno\.io\/aggregate-to-reports-controller: "true"/,
            ],
            "rbac.kyverno-generates-pdbs": [/kyverno-background-controller: may not create policy\/poddisruptionbudgets/],
            "rbac.kyverno-policy-lookups": [/kyverno-admission-controller: may not list autoscaling\/horizontalpodautoscalers/],
            "rbac.editor-cannot-promote": [
                /ClusterRole edit: grants patch\/update on argoproj\.io rollouts\/status, aggregated from ClusterRole argo-rollouts-aggregate-to-edit/,
                /Group alpha-team \(RoleBinding alpha-shop-prod\/alpha-team-edit\): may patch rollouts\/status in alpha-shop-prod: RBAC: allowed by RoleBinding "alpha-team-edit\/alpha-shop-prod" of ClusterRole "edit"/,
            ],
            "rbac.tenants-read-rollouts": [
                /ClusterRole view: does not grant get rollouts, list rollouts, watch rollouts, .* and ClusterRole argo-rollouts-addon:rollouts-view does not exist/,
            ],
            "rbac.operators-outside-regulated": [
                /RoleBinding payments-prod\/argo-rollouts-addon-rollouts-operator: binds argo-rollouts-addon:rollouts-operator in regulated namespace payments-prod/,
            ],
            "rbac.deployer-cannot-resume": [
                /Group payments-deployers \(policy\.regulated\.deployerGroups\): may patch rollouts\/status in payments-prod \(RBAC: allowed by ClusterRoleBinding "tenant-admins"/,
                /User dana@platform\.test \(RoleBinding payments-prod\/payments-api-rollout-deployer-extra to ClusterRole argo-rollouts-addon:rollout-deployer\): may patch rollouts\/status/,
                /Group payments-deployers .*: may delete rollouts in payments-prod: GitOps would recreate it and its first version is promoted without a gate/,
            ],
            "rbac.deployer-cannot-edit-replicasets": [
                /Group payments-deployers .*: may patch replicasets in payments-prod: a ReplicaSet edited beside a Rollout runs a version nobody approved/,
                /may update replicasets\/scale in payments-prod: a ReplicaSet scaled beside a Rollout/,
            ],
            "rbac.deployer-cannot-edit-deployments": [
                /Group payments-deployers .*: may patch deployments in payments-prod: a Deployment's pod template is outside/,
            ],
            "rbac.approval-bindings": [
                /RoleBinding payments-prod\/argo-rollouts-addon:rollout-approver: binds Group payments-approvers, Group payments-release-managers, not exactly policy\.regulated\.approverGroups \(Group payments-approvers\); the GeneratingPolicy/,
                /RoleBinding payments-prod\/argo-rollouts-addon:rollout-deployer: missing in payments-prod: the deployers \(Group payments-deployers\) get no ClusterRole/,
            ],
        };
        Object.entries(cases).forEach(([id, patterns]) => expectFails(results, id, ...patterns));
        assert.doesNotMatch(found(results, "rbac.operators-outside-regulated"), /alpha-shop-prod/);
        assert.doesNotMatch(found(results, "rbac.deployer-cannot-resume"), /argocd-application-controller/);
    });

    it("in complement mode asks Kyverno's PDB writes of whoever grants them and skips the lookups; skips the deployers without regulated namespaces", async () => {
        const complement = verifyConfig({ policy: { availabilityPolicies: "complement" } });
        const platform = healthyCluster(complement);
        let results = await verify(complement, platform);
        expectPass(results, "rbac.kyverno-generates-pdbs");
        assert.match(results.get("rbac.kyverno-generates-pdbs")!.note!, /granted by the platform/);
        assert.strictEqual(status(results, "rbac.kyverno-policy-lookups"), "SKIP");
        platform.grants = platform.grants.filter(
            (g) => !(g.user === kyvernoAccount("background-controller") && g.rules.some((r) => r.verbs.includes("create"))),
        );
        expectFail(await verify(complement, platform), "rbac.kyverno-generates-pdbs", /may not create policy\/poddisruptionbudgets/);
        const plain = verifyConfig({ policy: { regulated: undefined }, argocd: { rbac: { regulatedProjects: [] } } });
        results = await verify(plain, healthyCluster(plain));
        for (const id of ["rbac.deployer-cannot-resume", "rbac.approval-bindings"])
            assert.match(`${status(results, id)} ${results.get(id)!.note}`, /^SKIP no policy\.regulated/);
        const config = verifyConfig();
        const world = healthyCluster(config);
        patch(world, "Namespace", "payments-prod", (o) => ({
            ...o,
            metadata: { ...o.metadata, labels: { "kubernetes.io/metadata.name": "payments-prod", "platform.test/tier": "prod" } },
        }));
        results = await verify(config, world);
        assert.deepStrictEqual([status(results, "rbac.deployer-cannot-edit-replicasets"), status(results, "rbac.approval-bindings")], ["SKIP", "SKIP"]);
        assert.match(results.get("rbac.deployer-cannot-resume")!.note!, /no namespace matches policy\.regulated\.namespaceLabels/);
    });
});
