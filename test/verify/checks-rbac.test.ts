import { TENANT_VIEW_ROLE, tenantOperatorBinding } from "../../components/rollouts/tenants";
import type { KubeObject } from "../../tools/verify/cluster";
import * as assert from "assert";
import { PolicyRule, controllerClusterRules } from "../../components/rollouts";
import { KYVERNO_AGGREGATE_LABELS, KYVERNO_ROLES, kyvernoRoleName } from "../../components/policy";
import { fixture, healthyCluster, kyvernoAccount, patch, verifyConfig } from "./world";

import { expectFail, expectPass, found, status, useFakeCluster } from "./run";

describe("verify: RBAC (SubjectAccessReview)", () => {
    const { verify, server } = useFakeCluster();

    it("rbac.controller fails for a call of the Rollout path the controller may not make, pods get included", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        world.grants[0] = {
            ...world.grants[0],
            rules: controllerClusterRules(config.plugin).map((r) => ({
                ...r,
                resources: r.resources.filter((x) => x !== "rollouts/status"),
                verbs: r.resources.includes("pods") ? r.verbs.filter((v) => v !== "get") : r.verbs,
            })),
        };
        const results = await verify(config, world);
        expectFail(
            results,
            "rbac.controller",
            /ServiceAccount argo-rollouts\/argo-rollouts: may not patch argoproj\.io\/rollouts\/status in every namespace \(argo-rollouts v1\.9\.0 rollout\/sync\.go/,
        );
        expectFail(results, "rbac.controller", /may not get pods in every namespace \(argo-rollouts v1\.9\.0 rollout\/ephemeralmetadata\.go/);
    });

    it("rbac.kyverno-reads-rollouts fails when the reports controller may not list Rollouts or the role lost its aggregation label", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        world.grants = world.grants.filter((g) => !(g.user === kyvernoAccount("reports-controller") && g.rules.some((r) => r.resources.includes("rollouts"))));
        const name = kyvernoRoleName({ name: KYVERNO_ROLES.readRollouts });
        patch(world, "ClusterRole", name, (o) => ({ ...o, metadata: { ...o.metadata, labels: { [KYVERNO_AGGREGATE_LABELS.background]: "true" } } }));
        const results = await verify(config, world);
        expectFail(
            results,
            "rbac.kyverno-reads-rollouts",
            /ServiceAccount kyverno\/kyverno-reports-controller: may not list argoproj\.io\/rollouts in every namespace/,
        );
        expectFail(
            results,
            "rbac.kyverno-reads-rollouts",
            /ClusterRole kyverno:argo-rollouts-addon:read-rollouts: lacks the label rbac\.kyverno\.io\/aggregate-to-reports-controller: "true"/,
        );
    });

    it("rbac.kyverno-generates-pdbs fails without the PDB rules; in complement mode it asks whoever grants them", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        world.grants = world.grants.map((g) =>
            g.user === kyvernoAccount("background-controller")
                ? { ...g, rules: g.rules.filter((r) => !(r.resources.includes("poddisruptionbudgets") && r.verbs.includes("create"))) }
                : g,
        );
        expectFail(await verify(config, world), "rbac.kyverno-generates-pdbs", /kyverno-background-controller: may not create policy\/poddisruptionbudgets/);

        const complement = verifyConfig({ policy: { availabilityPolicies: "complement" } });
        const platform = healthyCluster(complement);
        let results = await verify(complement, platform);
        expectPass(results, "rbac.kyverno-generates-pdbs");
        assert.match(results.get("rbac.kyverno-generates-pdbs")!.note!, /granted by the platform/);
        platform.grants = platform.grants.filter(
            (g) => !(g.user === kyvernoAccount("background-controller") && g.rules.some((r) => r.verbs.includes("create"))),
        );
        results = await verify(complement, platform);
        expectFail(results, "rbac.kyverno-generates-pdbs", /may not create policy\/poddisruptionbudgets/);
    });

    it("rbac.kyverno-policy-lookups fails when the admission controller may not list HPAs, and is skipped in complement mode", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        world.grants = world.grants.filter((g) => g.user !== kyvernoAccount("admission-controller"));
        expectFail(
            await verify(config, world),
            "rbac.kyverno-policy-lookups",
            /kyverno-admission-controller: may not list autoscaling\/horizontalpodautoscalers/,
        );
        const complement = verifyConfig({ policy: { availabilityPolicies: "complement" } });
        assert.strictEqual(status(await verify(complement, healthyCluster(complement)), "rbac.kyverno-policy-lookups"), "SKIP");
    });

    it("rbac.editor-cannot-promote fails when the chart's aggregate role reaches edit", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        const aggregate = fixture("clusterrole-chart-aggregate-to-edit.json");
        world.objects.push(aggregate);
        patch(world, "ClusterRole", "edit", (o) => ({ ...o, rules: [...(o.rules as unknown[]), ...(aggregate.rules as unknown[])] }));
        world.grants = world.grants.map((g) => (g.group === "alpha-team" ? { ...g, rules: [...g.rules, ...(aggregate.rules as never[])] } : g));
        const results = await verify(config, world);
        expectFail(
            results,
            "rbac.editor-cannot-promote",
            /ClusterRole edit: grants patch\/update on argoproj\.io rollouts\/status, aggregated from ClusterRole argo-rollouts-aggregate-to-edit/,
        );
        expectFail(
            results,
            "rbac.editor-cannot-promote",
            /Group alpha-team \(RoleBinding alpha-shop-prod\/alpha-team-edit\): may patch rollouts\/status in alpha-shop-prod: RBAC: allowed by RoleBinding "alpha-team-edit\/alpha-shop-prod" of ClusterRole "edit"/,
        );
    });

    it("rbac.deployer-cannot-resume asks policy.regulated's deployer groups in the regulated namespaces, and says what admission adds", async () => {
        const config = verifyConfig();
        const results = await verify(config, healthyCluster(config));
        expectPass(results, "rbac.deployer-cannot-resume");
        assert.match(
            results.get("rbac.deployer-cannot-resume")!.note!,
            /RBAC refuses 1 deployer subject\(s\) in payments-prod; spec changes and unpausing are refused by admission \(restrict-regulated-rollout-changes/,
        );
        const reviews = server().requests.filter((r) => r.startsWith("POST /apis/authorization.k8s.io/v1/subjectaccessreviews"));
        assert.ok(reviews.length > 0);
    });

    it("rbac.tenants-read-rollouts fails when view does not aggregate the Rollout kinds, and says whether the stage's role exists", async () => {
        const config = verifyConfig();
        expectPass(await verify(config, healthyCluster(config)), "rbac.tenants-read-rollouts");
        const world = healthyCluster(config);
        patch(world, "ClusterRole", "view", (o) => ({ ...o, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] }] }));
        world.objects = world.objects.filter((o) => o.metadata?.name !== TENANT_VIEW_ROLE);
        const results = await verify(config, world);
        expectFail(
            results,
            "rbac.tenants-read-rollouts",
            /ClusterRole view: does not grant get rollouts, list rollouts, watch rollouts, .* and ClusterRole argo-rollouts-addon:rollouts-view does not exist/,
        );
    });

    it("rbac.operators-outside-regulated fails for an operator binding in a regulated namespace, and passes one elsewhere", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        const binding = (namespace: string) => ({
            ...(tenantOperatorBinding({ namespace, groups: ["payments-devs"] }) as unknown as KubeObject),
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
        });
        world.objects.push(binding("alpha-shop-prod"));
        expectPass(await verify(config, world), "rbac.operators-outside-regulated");
        world.objects.push(binding("payments-prod"));
        const results = await verify(config, world);
        expectFail(
            results,
            "rbac.operators-outside-regulated",
            /RoleBinding payments-prod\/argo-rollouts-addon-rollouts-operator: binds argo-rollouts-addon:rollouts-operator in regulated namespace payments-prod/,
        );
        assert.doesNotMatch(found(results, "rbac.operators-outside-regulated"), /alpha-shop-prod/);
    });

    it("rbac.deployer-cannot-resume fails when a deployer group or a subject bound to the deployer Role may write rollouts/status; GitOps identities are not deployers", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        world.grants.unshift({
            group: "payments-deployers",
            rules: [{ apiGroups: ["argoproj.io"], resources: ["rollouts", "rollouts/status"], verbs: ["get", "patch", "update"] }],
            reason: 'RBAC: allowed by ClusterRoleBinding "tenant-admins" of ClusterRole "tenant-admin" to Group "payments-deployers"',
        });
        // A team Role that still lets deployers delete their Rollout (the approval Role does not).
        world.grants.push({
            group: "payments-deployers",
            namespace: "payments-prod",
            rules: [{ apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: ["delete"] }],
            reason: 'RBAC: allowed by RoleBinding "payments-team/payments-prod" of Role "payments-team" to Group "payments-deployers"',
        });
        world.objects.push({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
            metadata: { name: "payments-api-rollout-deployer-extra", namespace: "payments-prod" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "payments-api-rollout-deployer" },
            subjects: [
                { kind: "ServiceAccount", name: "argocd-application-controller", namespace: "argocd" },
                { kind: "User", name: "dana@platform.test" },
            ],
        });
        world.grants.push({
            user: "dana@platform.test",
            namespace: "payments-prod",
            rules: [{ apiGroups: ["argoproj.io"], resources: ["rollouts/status"], verbs: ["patch"] }],
            reason: 'RBAC: allowed by RoleBinding "dana-status/payments-prod" of Role "status-writer" to User "dana@platform.test"',
        });
        const results = await verify(config, world);
        expectFail(
            results,
            "rbac.deployer-cannot-resume",
            /Group payments-deployers \(policy\.regulated\.deployerGroups\): may patch rollouts\/status in payments-prod \(RBAC: allowed by ClusterRoleBinding "tenant-admins"/,
        );
        expectFail(
            results,
            "rbac.deployer-cannot-resume",
            /User dana@platform\.test \(RoleBinding payments-prod\/payments-api-rollout-deployer-extra to Role payments-api-rollout-deployer\): may patch rollouts\/status/,
        );
        expectFail(
            results,
            "rbac.deployer-cannot-resume",
            /Group payments-deployers \(policy\.regulated\.deployerGroups\): may delete rollouts in payments-prod: GitOps would recreate it and its first version is promoted without a gate/,
        );
        assert.doesNotMatch(found(results, "rbac.deployer-cannot-resume"), /argocd-application-controller/);
    });

    it("rbac.deployer-cannot-resume is skipped without policy.regulated, or where no namespace is regulated", async () => {
        const plain = verifyConfig({ policy: { regulated: undefined }, argocd: { rbac: { regulatedProjects: [] } } });
        let results = await verify(plain, healthyCluster(plain));
        assert.strictEqual(status(results, "rbac.deployer-cannot-resume"), "SKIP");
        assert.match(results.get("rbac.deployer-cannot-resume")!.note!, /no policy\.regulated/);
        const config = verifyConfig();
        const world = healthyCluster(config);
        patch(world, "Namespace", "payments-prod", (o) => ({
            ...o,
            metadata: { ...o.metadata, labels: { "kubernetes.io/metadata.name": "payments-prod", "platform.test/tier": "prod" } },
        }));
        results = await verify(config, world);
        assert.strictEqual(status(results, "rbac.deployer-cannot-resume"), "SKIP");
        assert.match(results.get("rbac.deployer-cannot-resume")!.note!, /no namespace matches policy\.regulated\.namespaceLabels/);
    });
    it("rbac.deployer-cannot-edit-replicasets fails for a deployer group that may edit, create or scale ReplicaSets in a regulated namespace", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        expectPass(await verify(config, world), "rbac.deployer-cannot-edit-replicasets");
        // The built-in edit role, bound to the deployers in their regulated namespace.
        world.grants.push({
            group: "payments-deployers",
            namespace: "payments-prod",
            rules: fixture<{ rules: PolicyRule[] }>("clusterrole-edit.json").rules,
            reason: 'RBAC: allowed by RoleBinding "payments-edit/payments-prod" of ClusterRole "edit" to Group "payments-deployers"',
        });
        const results = await verify(config, world);
        expectFail(
            results,
            "rbac.deployer-cannot-edit-replicasets",
            /Group payments-deployers \(policy\.regulated\.deployerGroups\): may patch replicasets in payments-prod: a ReplicaSet edited beside a Rollout runs a version nobody approved/,
        );
        expectFail(results, "rbac.deployer-cannot-edit-replicasets", /may update replicasets\/scale in payments-prod: a ReplicaSet scaled beside a Rollout/);
    });
});
