import * as assert from "assert";
import { POLICY_NAMES } from "../../components/policy";
import { fixture, healthyCluster, patch, verifyConfig, verifySpoke, withStatus } from "./world";

import { expectFail, expectFails, expectPass, found, useFakeCluster } from "./run";

describe("verify: Kyverno policies", () => {
    const { verify } = useFakeCluster();

    it("fails each check for what breaks it: readiness, what a policy carries, a second budget, a filter hiding a regulated request", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        let results = await verify(config, world);
        assert.match(results.get("kyverno.resource-filters")!.note!, /regulated namespaces: payments-prod/);
        patch(world, "ValidatingPolicy", POLICY_NAMES.replicaFloor, (o) => {
            const spec = o.spec as { matchConstraints: { resourceRules: { resources: string[] }[] } };
            const resourceRules = spec.matchConstraints.resourceRules.filter((r) => !r.resources.includes("rollouts"));
            return withStatus(
                { ...o, spec: { ...spec, matchConstraints: { ...spec.matchConstraints, resourceRules } } },
                fixture("cel-policy-status-rbac-missing.json"),
            );
        });
        world.objects = world.objects.filter((o) => !(o.kind === "GeneratingPolicy" && o.metadata?.name === POLICY_NAMES.pdb));
        patch(world, "ValidatingPolicy", POLICY_NAMES.defaultNamespace, (o) => ({
            ...o,
            spec: { ...(o.spec as object), validationActions: ["Audit", "Warn"] },
        }));
        patch(
            world,
            "ValidatingPolicy",
            POLICY_NAMES.approval,
            (o) => JSON.parse(JSON.stringify(o).replace(/payments-approvers/g, "payments-deployers")) as typeof o,
        );
        const pdb = fixture("generated-pdb.json");
        world.objects.push(fixture("legacy-pdb-clusterpolicy.json"), {
            ...pdb,
            metadata: { ...pdb.metadata, name: "alpha-shop", labels: { "generate.kyverno.io/policy-name": "generate-workload-pdb" } },
        });
        // The chart's defaults (charts/kyverno values.yaml at v1.17.2) and a platform's own filters.
        patch(world, "ConfigMap", "kyverno", (o) => {
            const filters = `${(o.data as { resourceFilters: string }).resourceFilters}[ReplicaSet,*,*][ReplicaSet/?*,*,*][Pod,payments-*,*][Rollout/status,*,*][Pod/binding,*,*]`;
            return { ...o, data: { ...(o.data as object), resourceFilters: filters } };
        });
        results = await verify(config, world);
        const cases: [string, RegExp][] = [
            [
                "kyverno.policies-ready",
                /ValidatingPolicy require-prod-replica-floor: RBACPermissionsGranted=False \(Failed: Policy is not ready for reporting, missing permissions: get argoproj\.io/,
            ],
            ["kyverno.policies-ready", /GeneratingPolicy generate-workload-pdb: not found: Kyverno refuses a CEL policy it cannot compile/],
            ["kyverno.policies-enforced", /disallow-default-namespace: validationActions are \[Audit,Warn\], the stack configures \[Deny\]/],
            ["kyverno.policies-enforced", /require-prod-replica-floor: does not match argoproj\.io\/rollouts/],
            [
                "kyverno.policies-enforced",
                /restrict-regulated-rollout-changes: spec\.variables\[2\]\.expression is .*payments-deployers.*, the stack declares .*payments-approvers/,
            ],
            [
                "kyverno.one-pdb-per-workload",
                /ClusterPolicy generate-workload-pdb: also generates PodDisruptionBudgets beside GeneratingPolicy generate-workload-pdb/,
            ],
            ["kyverno.one-pdb-per-workload", /Rollout alpha-shop-prod\/alpha-shop: its pods are selected by 2 PodDisruptionBudgets/],
            [
                "kyverno.resource-filters",
                /ConfigMap kyverno\/kyverno resourceFilters \[ReplicaSet,\*,\*\]: Kyverno admits ReplicaSet in payments-prod without asking a policy.*config\.resourceFiltersExclude: \["\[ReplicaSet,\*,\*\]"\]/,
            ],
            ["kyverno.resource-filters", /resourceFilters \[ReplicaSet\/\?\*,\*,\*\]: Kyverno admits ReplicaSet\/scale in payments-prod/],
            ["kyverno.resource-filters", /resourceFilters \[Pod,payments-\*,\*\]: Kyverno admits Pod in payments-prod/],
            ["kyverno.resource-filters", /resourceFilters \[Rollout\/status,\*,\*\]: Kyverno admits Rollout\/status in payments-prod/],
        ];
        for (const [id, pattern] of cases) {
            expectFail(results, id, pattern);
        }
        assert.doesNotMatch(found(results, "kyverno.policies-enforced"), /validationActions\[/, "a difference named in its own words is not repeated");
        assert.doesNotMatch(
            found(results, "kyverno.resource-filters"),
            /Pod\/binding|kube-system|Pod\/ephemeralcontainers/,
            "a filter that hides nothing guarded is no finding",
        );
        world.objects = world.objects.filter((o) => !(o.kind === "ConfigMap" && o.metadata?.name === "kyverno"));
        expectFail(await verify(config, world), "kyverno.resource-filters", /ConfigMap kyverno\/kyverno: not found/);
    });

    it("kyverno.selectors-match FAILs (never SKIPs) a selector that matches no namespace, naming it and the labels the namespaces carry", async () => {
        // Someone else's labels, as a copied stack file has them: every guard would select nothing.
        const config = verifyConfig({
            policy: {
                tenantNamespaceSelector: { matchExpressions: [{ key: "acme.io/env", operator: "In", values: ["dev", "prod"] }] },
                prodNamespaceLabels: { "acme.io/env": "prod" },
                regulated: { namespaceLabels: { "acme.io/compliance": "pci" } },
            },
        });
        const results = await verify(config, healthyCluster(config));
        const r = results.get("kyverno.selectors-match")!;
        assert.strictEqual(r.status, "FAIL");
        assert.deepStrictEqual(
            r.findings.map((f) => f.object),
            ["policy.tenantNamespaceSelector", "policy.prodNamespaceLabels", "policy.regulated.namespaceLabels"],
        );
        assert.match(
            r.findings[0].found,
            /^\{"matchExpressions":\[\{"key":"acme\.io\/env".*\}\]\} matches none of the cluster's \d+ namespaces \(among the tenant namespaces, minus policy\.excludeNamespaces\); the namespaces carry .*platform\.test\/tier=prod \(\d+\)/,
        );
        // Only the regulated labels wrong: only that selector fails.
        const regulatedOnly = verifyConfig({ policy: { regulated: { namespaceLabels: { "platform.test/compliance": "sox" } } } });
        const again = (await verify(regulatedOnly, healthyCluster(regulatedOnly))).get("kyverno.selectors-match")!;
        assert.deepStrictEqual(
            again.findings.map((f) => f.object),
            ["policy.regulated.namespaceLabels"],
        );
    });

    it("reports a class of namespaces the stack declares absent as declared, never as a failure, and expects none of its policies", async () => {
        const absent = (policy: Record<string, unknown>) =>
            verifySpoke({ policy: { prodNamespaceLabels: undefined, regulated: undefined, ...policy }, argocd: { rbac: undefined } });
        const staging = absent({ absentClasses: ["prod"] });
        let results = await verify(staging, healthyCluster(staging));
        for (const id of ["kyverno.selectors-match", "kyverno.policies-ready", "kyverno.availability-rollout-aware"]) expectPass(results, id);
        assert.match(results.get("kyverno.selectors-match")!.note!, /; SKIP prod: the stack declares no prod namespaces on this cluster/);
        const bindings = results.get("rbac.approval-bindings")!;
        assert.match(`${bindings.status} ${bindings.note}`, /^SKIP declared absent: .*absentClasses/);
        const hub = absent({ absentClasses: ["tenants"], tenantNamespaceSelector: undefined });
        results = await verify(hub, healthyCluster(hub));
        const r = results.get("kyverno.selectors-match")!;
        assert.deepStrictEqual([r.status, r.note], ["SKIP", "the stack declares no tenant namespaces on this cluster (policy.absentClasses)"]);
        expectPass(results, "kyverno.availability-rollout-aware");
    });

    it("in complement mode expects only the guards, the approval guard and the tier rules, and the platform's Rollout-aware availability policies", async () => {
        const config = verifyConfig({ policy: { availabilityPolicies: "complement" } });
        let world = healthyCluster(config);
        let results = await verify(config, world);
        for (const id of ["kyverno.policies-ready", "kyverno.availability-rollout-aware", "kyverno.one-pdb-per-workload"]) {
            expectPass(results, id);
        }
        assert.strictEqual(
            results.get("kyverno.policies-ready")!.note,
            "policies.kyverno.io/v1, availabilityPolicies complement: generate-regulated-approval-bindings, restrict-rollout-route-namespace, require-canary-max-surge, restrict-regulated-rollout-changes, restrict-regulated-rollout-pods, require-prod-standard-delivery, require-prod-regulated-delivery",
        );
        assert.match(results.get("kyverno.one-pdb-per-workload")!.note!, /^ClusterPolicy generate-workload-pdb;/);
        world.objects = world.objects.filter((o) => o.metadata?.name !== POLICY_NAMES.approval && o.metadata?.name !== POLICY_NAMES.pdb);
        results = await verify(config, world);
        expectFail(results, "kyverno.policies-ready", /ValidatingPolicy restrict-regulated-rollout-changes: not found/);
        expectFail(
            results,
            "kyverno.one-pdb-per-workload",
            /none generates PodDisruptionBudgets: policy\.availabilityPolicies is complement, so the platform's own generate-workload-pdb must/,
        );
        world = healthyCluster(config);
        patch(world, "ClusterPolicy", POLICY_NAMES.pdb, () => fixture("legacy-pdb-clusterpolicy.json"));
        world.objects = world.objects.filter((o) => o.metadata?.name !== POLICY_NAMES.replicaFloor);
        expectFails(
            await verify(config, world),
            "kyverno.availability-rollout-aware",
            /ClusterPolicy generate-workload-pdb: does not match argoproj\.io\/v1alpha1 Rollout: it silently does nothing for a Rollout/,
            /policy require-prod-replica-floor: not found in either Kyverno API: policy\.availabilityPolicies is complement/,
        );
    });

    it("on the kyverno.io/v1 API reads the ClusterPolicy Ready condition, takes the CRD's defaults as no drift, and catches a changed namespace selector", async () => {
        const config = verifyConfig({ policy: { kyvernoApi: "kyverno.io/v1" } });
        const world = healthyCluster(config);
        assert.strictEqual((world.objects.find((o) => o.metadata?.name === POLICY_NAMES.approval)!.spec as { admission: boolean }).admission, true);
        patch(world, "ClusterPolicy", POLICY_NAMES.spread, (o) =>
            withStatus(o, { conditions: [{ type: "Ready", status: "False", reason: "Failed", message: "policy not ready" }] }),
        );
        const results = await verify(config, world);
        expectFail(results, "kyverno.policies-ready", /ClusterPolicy mutate-topology-spread: Ready=False \(Failed: policy not ready\)/);
        expectPass(results, "kyverno.policies-enforced");
        patch(
            world,
            "ClusterPolicy",
            POLICY_NAMES.approval,
            (o) => JSON.parse(JSON.stringify(o).replace(/platform\.test\/compliance/g, "platform.test/other")) as typeof o,
        );
        expectFail(
            await verify(config, world),
            "kyverno.policies-enforced",
            /ClusterPolicy restrict-regulated-rollout-changes: spec\.rules\[0\]\.match\.any\[0\]\.resources\.namespaceSelector\.matchExpressions\[1\]\.key is "platform\.test\/other", the stack declares "platform\.test\/compliance"/,
        );
    });

    it("reads Kyverno's kind selectors as Kyverno does", async () => {
        const { kindSelectsRollout } = await import("../../tools/verify/checks/kyvernoScope");
        for (const yes of ["Rollout", "argoproj.io/v1alpha1/Rollout", "v1alpha1/Rollout", "argoproj.io/*/Rollout"]) {
            assert.ok(kindSelectsRollout(yes), yes);
        }
        // `*/*/Rollout` is version/kind/subresource to Kyverno: a subresource named Rollout.
        for (const no of ["Deployment", "argoproj.io/v1alpha1/Rollout/status", "Rollout/status", "Rollout.status", "apps/v1/Rollout", "*/*/Rollout"]) {
            assert.ok(!kindSelectsRollout(no), no);
        }
    });
});
