import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { controllerClusterRules, controllerNamespaceRules } from "../components/rollouts";
import { POLICY_NAMES } from "../components/policy";
import type { AddonConfig } from "../components/config";
import { ROLLOUT_PATH_CALLS, ruleAllows } from "../tools/verify/access";
import { ConnectionError, connect, kubeConfigFor, loadClient } from "../tools/verify/cluster";
import { defaultOptions, runVerify } from "../tools/verify/index";
import { CheckResult, README, exitCode, formatJson, formatText } from "../tools/verify/report";
import { parseVerifyArgs, verifyMain } from "../tools/verify";
import { FakeApiServer, startFakeApiServer } from "./verify/fakeApiServer";
import { HubWorld, NOW, fixture, healthyHub, replace, verifyConfig, withStatus } from "./verify/world";

type Results = Map<string, CheckResult>;

describe("npm run verify", () => {
    let server: FakeApiServer | undefined;

    afterEach(async () => {
        if (server) {
            const { violations } = server;
            await server.close();
            server = undefined;
            // The fake API server refuses and records every write: verify must never send one.
            assert.deepStrictEqual(violations, [], "verify sent a write to the API server");
        }
    });

    /** Runs every check against a fake API server holding `world`. */
    async function verify(config: AddonConfig, world: HubWorld, options: Parameters<typeof defaultOptions>[0] = {}): Promise<Results> {
        server = await startFakeApiServer(world);
        const cluster = await connect({ connection: config.cluster.connection, kubeconfig: server.kubeconfig, context: "fake" });
        const results = await runVerify(config, cluster, defaultOptions({ now: () => NOW, sleep: async () => undefined, ...options }));
        return new Map(results.map((r) => [r.id, r]));
    }

    const status = (results: Results, id: string): string => {
        const r = results.get(id);
        assert.ok(r, `no result for ${id}`);
        return r.status;
    };
    const found = (results: Results, id: string): string => (results.get(id)?.findings ?? []).map((f) => `${f.object}: ${f.found}`).join("\n");
    const expectFail = (results: Results, id: string, pattern: RegExp) => {
        assert.strictEqual(status(results, id), "FAIL", `${id} should fail`);
        assert.match(found(results, id), pattern);
    };

    describe("a healthy hub", () => {
        it("passes every check, reading only and asking only access reviews", async () => {
            const config = verifyConfig();
            const results = await verify(config, healthyHub(config));
            const notPassing = [...results.values()].filter((r) => r.status !== "PASS").map((r) => `${r.status} ${r.id}: ${found(results, r.id)} ${r.note ?? ""}`);
            assert.deepStrictEqual(notPassing, []);
            assert.strictEqual(results.size, 22);
            const methods = new Set(server!.requests.map((r) => r.split(" ")[0]));
            assert.deepStrictEqual([...methods].sort(), ["GET", "POST"]);
            assert.ok(server!.requests.filter((r) => r.startsWith("POST")).every((r) => /\/apis\/authorization\.k8s\.io\/v1\/(self)?subjectaccessreviews$/.test(r)));
        });
    });

    describe("CRDs and controller", () => {
        it("crds.established fails when a CRD is not established or missing", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "CustomResourceDefinition", "rollouts.argoproj.io", (o) => withStatus(o, fixture("crd-not-established.json")));
            world.objects = world.objects.filter((o) => o.metadata?.name !== "experiments.argoproj.io");
            const results = await verify(config, world);
            expectFail(results, "crds.established", /rollouts\.argoproj\.io: Established=False \(NotAccepted: not all names are accepted\)/);
            expectFail(results, "crds.established", /experiments\.argoproj\.io: not found/);
        });

        it("crds.protected fails for a CRD a Helm release deletes, passes with resource-policy keep", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            const helm = { "meta.helm.sh/release-name": "argo-rollouts", "meta.helm.sh/release-namespace": "argo-rollouts" };
            replace(world, "CustomResourceDefinition", "rollouts.argoproj.io", (o) => ({ ...o, metadata: { ...o.metadata, annotations: { ...o.metadata?.annotations, ...helm } } }));
            replace(world, "CustomResourceDefinition", "analysisruns.argoproj.io", (o) => ({ ...o, metadata: { ...o.metadata, annotations: { ...helm, "helm.sh/resource-policy": "keep" } } }));
            const results = await verify(config, world);
            expectFail(results, "crds.protected", /rollouts\.argoproj\.io: belongs to Helm release argo-rollouts without helm.sh\/resource-policy: keep/);
            assert.doesNotMatch(found(results, "crds.protected"), /analysisruns/);
        });

        it("controller.available fails when replicas differ or the Deployment is unavailable", async () => {
            const config = verifyConfig({ controller: { replicas: 3, pdbMaxUnavailable: 1 } });
            const world = healthyHub(config);
            replace(world, "Deployment", "argo-rollouts", (o) => withStatus(o, fixture("controller-unavailable-status.json")));
            const results = await verify(config, world);
            expectFail(results, "controller.available", /spec\.replicas is 2, the stack configures 3/);
            expectFail(results, "controller.available", /Available=False \(MinimumReplicasUnavailable/);
        });

        it("controller.leader fails when the Lease is expired or held by a pod that is gone", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "Lease", "argo-rollouts-controller-lock", (o) => ({ ...o, spec: { ...(o.spec as object), holderIdentity: "argo-rollouts-6b8c4d7f59-zz9qq_1f2e3d4c", renewTime: "2026-06-27T12:00:00.000000Z" } }));
            const results = await verify(config, world);
            expectFail(results, "controller.leader", /held by argo-rollouts-6b8c4d7f59-zz9qq_1f2e3d4c, which is not a running, ready pod/);
            expectFail(results, "controller.leader", /last renewed 2026-06-27T12:00:00\.000Z.*the leader is gone/);
        });

        it("controller.plugin fails when argo-rollouts-config pins another checksum", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "ConfigMap", "argo-rollouts-config", (o) => ({ ...o, data: { trafficRouterPlugins: String((o.data as Record<string, string>).trafficRouterPlugins).replace(/a{64}/, "f".repeat(64)) } }));
            const results = await verify(config, world);
            expectFail(results, "controller.plugin", /argoproj-labs\/gatewayAPI is .* sha256 f{64}, the stack pins .* sha256 a{64}/);
        });

        it("controller.image fails when a pod runs another image", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "Pod", "argo-rollouts-7c9d5f8b64-p7m4n", (o) => ({ ...o, spec: { ...(o.spec as object), containers: [{ name: "argo-rollouts", image: "quay.io/argoproj/argo-rollouts:v1.8.3" }] } }));
            const results = await verify(config, world);
            expectFail(results, "controller.image", /Pod argo-rollouts\/argo-rollouts-7c9d5f8b64-p7m4n: runs quay\.io\/argoproj\/argo-rollouts:v1\.8\.3, the stack pins registry\.test\.example\/mirror\/argoproj\/argo-rollouts:v1\.9\.0/);
        });
    });

    describe("RBAC (SubjectAccessReview)", () => {
        it("rbac.controller fails for a call of the Rollout path the controller may not make", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            world.grants[0] = { ...world.grants[0], rules: controllerClusterRules(config.plugin).map((r) => ({ ...r, resources: r.resources.filter((x) => x !== "rollouts/status") })) };
            const results = await verify(config, world);
            expectFail(results, "rbac.controller", /ServiceAccount argo-rollouts\/argo-rollouts: may not patch argoproj\.io\/rollouts\/status in every namespace \(argo-rollouts v1\.9\.0 rollout\/sync\.go/);
        });

        it("rbac.kyverno-reads-rollouts fails when the reports controller may not list Rollouts", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            world.grants = world.grants.filter((g) => g.user !== "system:serviceaccount:kyverno:kyverno-reports-controller");
            const results = await verify(config, world);
            expectFail(results, "rbac.kyverno-reads-rollouts", /ServiceAccount kyverno\/kyverno-reports-controller: may not list argoproj\.io\/rollouts in every namespace/);
        });

        it("rbac.kyverno-generates-pdbs fails without the aggregated PDB role", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            world.grants = world.grants.map((g) => (g.user === "system:serviceaccount:kyverno:kyverno-background-controller" ? { ...g, rules: g.rules.filter((r) => !r.resources.includes("poddisruptionbudgets")) } : g));
            const results = await verify(config, world);
            expectFail(results, "rbac.kyverno-generates-pdbs", /kyverno-background-controller: may not create policy\/poddisruptionbudgets/);
        });

        it("rbac.editor-cannot-promote fails when the chart's aggregate role reaches edit", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            const aggregate = fixture("clusterrole-chart-aggregate-to-edit.json");
            world.objects.push(aggregate);
            replace(world, "ClusterRole", "edit", (o) => ({ ...o, rules: [...(o.rules as unknown[]), ...(aggregate.rules as unknown[])] }));
            world.grants = world.grants.map((g) => (g.group === "alpha-team" ? { ...g, rules: [...g.rules, ...(aggregate.rules as never[])] } : g));
            const results = await verify(config, world);
            expectFail(results, "rbac.editor-cannot-promote", /ClusterRole edit: grants patch\/update on argoproj\.io rollouts\/status, aggregated from ClusterRole argo-rollouts-aggregate-to-edit/);
            expectFail(results, "rbac.editor-cannot-promote", /Group alpha-team \(RoleBinding alpha-shop-prod\/alpha-team-edit\): may patch rollouts\/status in alpha-shop-prod: RBAC: allowed by RoleBinding "alpha-team-edit\/alpha-shop-prod" of ClusterRole "edit"/);
        });

        it("rbac.deployer-cannot-resume fails when a deployer may write rollouts/status in its namespace", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            world.grants.unshift({
                user: "system:serviceaccount:argocd:argocd-application-controller",
                rules: [{ apiGroups: ["argoproj.io"], resources: ["rollouts", "rollouts/status"], verbs: ["get", "patch", "update"] }],
                reason: fixture<{ reason: string }>("sar-allowed-by-deployer-clusterrole.json").reason,
            });
            const results = await verify(config, world);
            expectFail(results, "rbac.deployer-cannot-resume", /ServiceAccount argocd\/argocd-application-controller \(deployer of Role payments-prod\/payments-api-rollout-deployer\): may patch rollouts\/status in payments-prod: RBAC: allowed by ClusterRoleBinding/);
        });

        it("rbac.deployer-cannot-resume is skipped where no regulated app runs", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            world.objects = world.objects.filter((o) => !(o.kind === "RoleBinding" && o.metadata?.namespace === "payments-prod"));
            const results = await verify(config, world);
            assert.strictEqual(status(results, "rbac.deployer-cannot-resume"), "SKIP");
        });
    });

    describe("Kyverno policies", () => {
        it("kyverno.policies-ready fails when Kyverno reports missing permissions or a policy is absent", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "ValidatingPolicy", POLICY_NAMES.replicaFloor, (o) => withStatus(o, fixture("cel-policy-status-rbac-missing.json")));
            world.objects = world.objects.filter((o) => !(o.kind === "GeneratingPolicy" && o.metadata?.name === POLICY_NAMES.pdb));
            const results = await verify(config, world);
            expectFail(results, "kyverno.policies-ready", /ValidatingPolicy require-prod-replica-floor: RBACPermissionsGranted=False \(Failed: Policy is not ready for reporting, missing permissions: get argoproj\.io/);
            expectFail(results, "kyverno.policies-ready", /GeneratingPolicy generate-workload-pdb: not found: Kyverno refuses a CEL policy it cannot compile/);
        });

        it("kyverno.policies-ready reads the ClusterPolicy Ready condition on the kyverno.io/v1 API", async () => {
            const config = verifyConfig({ policy: { kyvernoApi: "kyverno.io/v1" } });
            const world = healthyHub(config);
            replace(world, "ClusterPolicy", POLICY_NAMES.spread, (o) => withStatus(o, { conditions: [{ type: "Ready", status: "False", reason: "Failed", message: "policy not ready" }] }));
            const results = await verify(config, world);
            expectFail(results, "kyverno.policies-ready", /ClusterPolicy mutate-topology-spread: Ready=False \(Failed: policy not ready\)/);
            assert.strictEqual(status(results, "kyverno.policies-enforced"), "PASS");
        });

        it("kyverno.policies-enforced fails for an audit-only policy and one that no longer matches Rollout", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "ValidatingPolicy", POLICY_NAMES.defaultNamespace, (o) => ({ ...o, spec: { ...(o.spec as object), validationActions: ["Audit", "Warn"] } }));
            replace(world, "ValidatingPolicy", POLICY_NAMES.replicaFloor, (o) => {
                const spec = o.spec as { matchConstraints: { resourceRules: { resources: string[] }[] } };
                return { ...o, spec: { ...spec, matchConstraints: { ...spec.matchConstraints, resourceRules: spec.matchConstraints.resourceRules.filter((r) => !r.resources.includes("rollouts")) } } };
            });
            const results = await verify(config, world);
            expectFail(results, "kyverno.policies-enforced", /disallow-default-namespace: validationActions are \[Audit,Warn\], the stack configures \[Deny\]/);
            expectFail(results, "kyverno.policies-enforced", /require-prod-replica-floor: does not match argoproj\.io\/rollouts/);
        });

        it("kyverno.one-pdb-per-workload fails for a second generator and a workload with two budgets", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            world.objects.push(fixture("legacy-pdb-clusterpolicy.json"));
            const pdb = fixture("generated-pdb.json");
            world.objects.push({ ...pdb, metadata: { ...pdb.metadata, name: "alpha-shop", labels: { "generate.kyverno.io/policy-name": "generate-workload-pdb" } } });
            const results = await verify(config, world);
            expectFail(results, "kyverno.one-pdb-per-workload", /ClusterPolicy generate-workload-pdb: also generates PodDisruptionBudgets beside GeneratingPolicy generate-workload-pdb/);
            expectFail(results, "kyverno.one-pdb-per-workload", /Rollout alpha-shop-prod\/alpha-shop: its pods are selected by 2 PodDisruptionBudgets/);
        });
    });

    describe("ArgoCD", () => {
        it("argocd.projects fails when a project does not permit Rollout", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "AppProject", "tenants", (o) => ({ ...o, spec: { ...(o.spec as object), namespaceResourceWhitelist: [{ group: "", kind: "Service" }, { group: "apps", kind: "*" }, { group: "gateway.networking.k8s.io", kind: "HTTPRoute" }] } }));
            const results = await verify(config, world);
            expectFail(results, "argocd.projects", /AppProject argocd\/tenants: does not permit argoproj\.io\/Rollout, argoproj\.io\/AnalysisTemplate, argoproj\.io\/AnalysisRun/);
        });

        it("argocd.applicationsets fails for a generated Application without RespectIgnoreDifferences", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "Application", "alpha-shop-prod", (o) => ({ ...o, spec: { ...(o.spec as object), syncPolicy: { automated: { selfHeal: true }, syncOptions: ["ServerSideApply=true"] } } }));
            const results = await verify(config, world);
            expectFail(results, "argocd.applicationsets", /Application argocd\/alpha-shop-prod: syncOptions lack RespectIgnoreDifferences=true .*generated by ApplicationSet tenant-apps/);
        });

        it("argocd.argocd-cm fails for a missing key and for a global array rule that reaches Rollout", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "ConfigMap", "argocd-cm", (o) => {
                const data = { ...(o.data as Record<string, string>), ...fixture<Record<string, string>>("argocd-cm-global-array-rule.json") };
                delete data["resource.customizations.ignoreDifferences.gateway.networking.k8s.io_HTTPRoute"];
                return { ...o, data };
            });
            const results = await verify(config, world);
            expectFail(results, "argocd.argocd-cm", /no key resource\.customizations\.ignoreDifferences\.gateway\.networking\.k8s\.io_HTTPRoute/);
            expectFail(results, "argocd.argocd-cm", /ignoreDifferences\.all applies to Rollout too and jq path \.spec\.template\.spec\.containers\[\]\?\.resources/);
        });

        it("argocd.rbac fails without the approver policy key", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "ConfigMap", "argocd-rbac-cm", (o) => ({ ...o, data: fixture<{ data: object }>("argocd-rbac-cm.json").data }));
            const results = await verify(config, world);
            expectFail(results, "argocd.rbac", /no key policy\.argo-rollouts-addon\.csv/);
        });

        it("skips every ArgoCD check when another cluster's ArgoCD syncs this one", async () => {
            const config = verifyConfig({ argocd: { runsOn: "platform", projects: undefined, applicationSets: undefined, rbac: undefined } });
            const results = await verify(config, healthyHub(verifyConfig()));
            assert.deepStrictEqual(["argocd.projects", "argocd.applicationsets", "argocd.argocd-cm", "argocd.rbac"].map((id) => status(results, id)), ["SKIP", "SKIP", "SKIP", "SKIP"]);
        });
    });

    describe("metric path", () => {
        it("metrics.templates fails for a Job provider and another tenant", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "ClusterAnalysisTemplate", "latency-p99", (o) => ({ ...o, spec: { metrics: [fixture("job-provider-metric.json")] } }));
            replace(world, "ClusterAnalysisTemplate", "error-budget", (o) => ({ ...o, spec: JSON.parse(JSON.stringify(o.spec).replace('"value":"hub"', '"value":"preprod"')) }));
            const results = await verify(config, world);
            expectFail(results, "metrics.templates", /ClusterAnalysisTemplate latency-p99: metric success-rate uses the job provider, not prometheus/);
            expectFail(results, "metrics.templates", /ClusterAnalysisTemplate error-budget: .* sends X-Scope-OrgID: preprod, this cluster's tenant is hub/);
        });

        it("metrics.query fails when Mimir refuses the tenant through the service proxy", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            world.proxy = () => fixture<{ status: number; body: string }>("mimir-no-org-id.json");
            const results = await verify(config, world);
            expectFail(results, "metrics.query", /http:\/\/mimir-gateway\.observability\.svc:80\/prometheus \(tenant hub\): HTTP 401: no org id/);
            assert.ok(server!.requests.some((r) => r.startsWith("GET /api/v1/namespaces/observability/services/mimir-gateway:80/proxy/prometheus/api/v1/query?query=count")));
        });

        it("metrics.query is skipped with the in-cluster command when verify may not use the service proxy", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            world.authorizeSelf = (a) => ({ allowed: !(a.resource === "services" && a.subresource === "proxy") });
            const results = await verify(config, world);
            assert.strictEqual(status(results, "metrics.query"), "SKIP");
            assert.match(results.get("metrics.query")!.note!, /kubectl -n argo-rollouts debug .* --profile=restricted --image=registry\.test\.example\/mirror\/curlimages\/curl@sha256:d{64} -- curl -sS -H 'X-Scope-OrgID: hub'/);
        });

        it("metrics.query on a spoke calls its read endpoint directly and skips when it is out of reach", async () => {
            const raw = { cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" }, mimir: { readEndpoint: "https://mimir-preprod.hub.test.example/prometheus" }, spokes: undefined };
            const config = verifyConfig(raw);
            const world = healthyHub(config);
            const calls: { url: string; headers: Record<string, string> }[] = [];
            let results = await verify(config, world, {
                httpGet: async (url, headers) => {
                    calls.push({ url, headers });
                    return { status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) };
                },
            });
            assert.strictEqual(status(results, "metrics.query"), "PASS");
            assert.strictEqual(status(results, "metrics.spoke-routes"), "SKIP");
            assert.strictEqual(calls[0].url, "https://mimir-preprod.hub.test.example/prometheus/api/v1/query?query=count(http_server_request_duration_seconds_count)");
            assert.deepStrictEqual(calls[0].headers, { "X-Scope-OrgID": "preprod" });
            await server!.close();
            server = undefined;
            results = await verify(config, world, { httpGet: async () => Promise.reject(new Error("getaddrinfo ENOTFOUND mimir-preprod.hub.test.example")) });
            assert.strictEqual(status(results, "metrics.query"), "SKIP");
            assert.match(results.get("metrics.query")!.note!, /not reachable from here .*ENOTFOUND.*kubectl -n argo-rollouts debug/);
        });

        it("metrics.spoke-routes fails for a route that adds the tenant header or is not accepted", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "HTTPRoute", "mimir-spoke-preprod", (o) => {
                const text = JSON.stringify(o).replace(/"set":\[/g, '"add":[').replace('"status":"True","reason":"ResolvedRefs"', '"status":"False","reason":"BackendNotFound"');
                return JSON.parse(text) as typeof o;
            });
            const results = await verify(config, world);
            expectFail(results, "metrics.spoke-routes", /HTTPRoute observability\/mimir-spoke-preprod: rule 0 \(\/api\/v1\/push\) adds X-Scope-OrgID instead of setting it/);
            expectFail(results, "metrics.spoke-routes", /reaches Mimir setting X-Scope-OrgID to nothing, not preprod/);
            expectFail(results, "metrics.spoke-routes", /parent internal: ResolvedRefs=False \(BackendNotFound/);
        });
    });

    describe("smoke canary", () => {
        it("smoke.outcome fails when the canary is paused on an inconclusive gate", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            replace(world, "Rollout", "rollouts-smoke", (o) => withStatus(o, fixture("smoke-status-paused-inconclusive.json")));
            const results = await verify(config, world);
            expectFail(results, "smoke.outcome", /Rollout rollouts-smoke\/rollouts-smoke: is paused, expected promoted: phase Paused \(InconclusiveAnalysisRun\)/);
        });

        it("smoke.outcome passes for failGate when the gate aborted it and traffic is back on stable", async () => {
            const config = verifyConfig({ smokeTest: { failGate: true } });
            const world = healthyHub(config);
            replace(world, "Rollout", "rollouts-smoke", (o) => ({ ...withStatus(o, fixture("smoke-status-aborted.json")), metadata: { ...o.metadata, generation: 5 } }));
            world.objects.push(fixture("analysisrun-failed.json"));
            const results = await verify(config, world);
            assert.strictEqual(status(results, "smoke.outcome"), "PASS", found(results, "smoke.outcome"));
        });

        it("smoke.outcome fails for failGate when the run errored instead of failing, or the template is not the stack's", async () => {
            const config = verifyConfig({ smokeTest: { failGate: true } });
            const world = healthyHub(config);
            replace(world, "Rollout", "rollouts-smoke", (o) => ({ ...withStatus(o, fixture("smoke-status-aborted.json")), metadata: { ...o.metadata, generation: 5 } }));
            const run = fixture("analysisrun-failed.json");
            world.objects.push({ ...run, status: { ...(run.status as object), phase: "Error" } });
            let results = await verify(config, world);
            expectFail(results, "smoke.outcome", /no AnalysisRun of pod hash 7f6b8d9c55 Failed \(phases: Error\)/);
            await server!.close();
            server = undefined;
            // The Rollout still carries the healthy template: the last `up` with failGate did not land.
            results = await verify(config, healthyHub(verifyConfig()));
            expectFail(results, "smoke.outcome", /its pod template is not the stack's/);
        });

        it("smoke.outcome waits with --smoke-timeout until the canary settles", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            const progressing = { ...fixture<Record<string, unknown>>("smoke-status-promoted.json"), phase: "Progressing", stableRS: "4c8b9d7f6a" };
            replace(world, "Rollout", "rollouts-smoke", (o) => withStatus(o, progressing));
            let clock = NOW.getTime();
            let looks = 0;
            const results = await verify(config, world, {
                smokeTimeoutSeconds: 600,
                now: () => new Date(clock),
                sleep: async (ms) => {
                    clock += ms;
                    if (++looks === 3) {
                        replace(world, "Rollout", "rollouts-smoke", (o) => withStatus(o, fixture("smoke-status-promoted.json")));
                    }
                },
            });
            assert.strictEqual(status(results, "smoke.outcome"), "PASS");
            assert.strictEqual(looks, 3);
        });

        it("smoke.outcome is skipped when the smoke test is off", async () => {
            const config = verifyConfig({ smokeTest: { enabled: false, hostname: undefined, image: undefined, loadImage: undefined } });
            const results = await verify(config, healthyHub(verifyConfig()));
            assert.strictEqual(status(results, "smoke.outcome"), "SKIP");
        });
    });

    describe("reads the API server refuses", () => {
        it("fail the checks that needed them, pointing at verify's own permissions", async () => {
            const config = verifyConfig();
            const world = healthyHub(config);
            server = await startFakeApiServer(world);
            const cluster = await connect({ connection: config.cluster.connection, kubeconfig: server.kubeconfig, context: "fake" });
            const forbidden = { ...cluster, list: async (p: string, s?: string) => (p.includes("rolebindings") ? Promise.reject(new (await import("../tools/verify/cluster")).ReadError(p, 403, `GET ${p}: 403 forbidden`)) : cluster.list(p, s)) };
            const results = new Map((await runVerify(config, forbidden, defaultOptions({ now: () => NOW }))).map((r) => [r.id, r]));
            assert.strictEqual(status(results, "rbac.editor-cannot-promote"), "FAIL");
            assert.strictEqual(results.get("rbac.editor-cannot-promote")!.readme, README.permissions);
            assert.strictEqual(status(results, "crds.established"), "PASS");
        });
    });
});

describe("verify's client, arguments and output", () => {
    it("loads the ES-module client through a real dynamic import", async () => {
        const k8s = await loadClient();
        assert.strictEqual(typeof k8s.KubeConfig, "function");
    });

    it("connects to EKS like the program: describe-cluster's endpoint and CA, token from aws eks get-token", async () => {
        const k8s = await loadClient();
        const kc = await kubeConfigFor(k8s, {
            connection: { kind: "eks", clusterName: "platform-hub", region: "eu-west-1" },
            describeEks: async () => ({ endpoint: "https://ABC.gr7.eu-west-1.eks.amazonaws.com", certificateAuthority: Buffer.from("ca").toString("base64") }),
        });
        assert.strictEqual(kc.getCurrentCluster()?.server, "https://ABC.gr7.eu-west-1.eks.amazonaws.com");
        const exec = kc.getCurrentUser()?.exec as { command: string; args: string[] };
        assert.strictEqual(exec.command, "aws");
        assert.deepStrictEqual(exec.args.slice(0, 4), ["eks", "get-token", "--cluster-name", "platform-hub"]);
    });

    it("refuses an unknown kubeconfig context and an unreachable API server as connection errors", async () => {
        const server = await startFakeApiServer({ objects: [] });
        await assert.rejects(connect({ connection: { kind: "kubeconfig", context: "nope" }, kubeconfig: server.kubeconfig }), (e: Error) => e instanceof ConnectionError && /no context "nope"/.test(e.message));
        const url = server.url;
        const kubeconfig = fs.readFileSync(server.kubeconfig, "utf8");
        await server.close();
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verify-gone-"));
        fs.writeFileSync(path.join(dir, "config"), kubeconfig);
        await assert.rejects(connect({ connection: { kind: "kubeconfig", context: "fake", path: path.join(dir, "config") } }), (e: Error) => e instanceof ConnectionError && e.message.includes(url));
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it("parses its arguments and refuses bad ones", () => {
        assert.deepStrictEqual(
            { ...parseVerifyArgs(["--stack", "hub", "--json", "--context", "ctx", "--smoke-timeout", "900"]), configDir: "" },
            { stack: "hub", json: true, context: "ctx", kyvernoNamespace: "kyverno", smokeTimeoutSeconds: 900, configDir: "" },
        );
        assert.throws(() => parseVerifyArgs([]), /usage: npm run verify -- --stack <name>/);
        assert.throws(() => parseVerifyArgs(["--stack", "hub", "--smoke-timeout", "soon"]), /whole seconds/);
        assert.throws(() => parseVerifyArgs(["--stack", "hub", "--force"]), /unknown argument --force/);
    });

    describe("exit status", () => {
        let dir: string;
        let server: FakeApiServer;
        const writeStack = (cluster: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
            fs.writeFileSync(
                path.join(dir, "Pulumi.test.yaml"),
                YAML.stringify({
                    config: {
                        "argo-rollouts-addon:cluster": { name: "hub", role: "hub", mimirTenant: "hub", ...cluster },
                        "argo-rollouts-addon:gateway": { name: "internal", namespace: "gateway-system", listener: "https" },
                        "argo-rollouts-addon:imageRegistry": "registry.test.example/mirror",
                        "argo-rollouts-addon:plugin": { delivery: "download", sha256: "a".repeat(64) },
                        ...extra,
                    },
                }),
            );
        beforeEach(async () => {
            dir = fs.mkdtempSync(path.join(os.tmpdir(), "verify-stack-"));
            const config = verifyConfig();
            server = await startFakeApiServer(healthyHub(config));
        });
        afterEach(async () => {
            await server.close();
            fs.rmSync(dir, { recursive: true, force: true });
        });

        it("is 1 with a FAIL (the stack file's kubeconfig connection), with --json for pipelines", async () => {
            writeStack({ kubeconfigContext: "fake", kubeconfigPath: server.kubeconfig });
            const out: string[] = [];
            const code = await verifyMain(["--stack", "test", "--config-dir", dir, "--json"], (s) => out.push(s), () => undefined);
            assert.strictEqual(code, 1);
            const report = JSON.parse(out.join("\n")) as { stack: string; results: CheckResult[]; summary: Record<string, number> };
            assert.strictEqual(report.stack, "test");
            // This stack file has no spokes, ArgoCD objects or smoke test: what it lacks against the
            // healthy world shows up, and the rest passes.
            assert.ok(report.summary.PASS > 10);
            assert.ok(report.results.every((r) => ["PASS", "FAIL", "SKIP"].includes(r.status) && r.readme.startsWith("#verify")));
            assert.deepStrictEqual(server.violations, []);
        });

        it("is 2 for a bad stack file, failing the way the program fails", async () => {
            writeStack({ kubeconfigContext: "fake", role: "primary" });
            const errors: string[] = [];
            const code = await verifyMain(["--stack", "test", "--config-dir", dir], () => undefined, (s) => errors.push(s));
            assert.strictEqual(code, 2);
            assert.match(errors.join("\n"), /stack "test": invalid configuration[\s\S]*argo-rollouts-addon:cluster\.role = "primary": must be one of hub, spoke/);
        });

        it("is 2 when the cluster cannot be reached, and for bad arguments", async () => {
            writeStack({ kubeconfigContext: "missing-context", kubeconfigPath: server.kubeconfig });
            const errors: string[] = [];
            assert.strictEqual(await verifyMain(["--stack", "test", "--config-dir", dir], () => undefined, (s) => errors.push(s)), 2);
            assert.match(errors.join("\n"), /stack "test": cannot verify: kubeconfig .* has no context "missing-context"/);
            assert.strictEqual(await verifyMain(["--json"], () => undefined, () => undefined), 2);
        });
    });

    it("prints one line per check and, under a FAIL, the object, what was found and the README section", () => {
        const report = {
            stack: "hub",
            cluster: "hub",
            server: "https://k8s.test",
            results: [
                { id: "crds.established", status: "PASS" as const, what: "CRDs established", findings: [], readme: README.crds },
                { id: "smoke.outcome", status: "SKIP" as const, what: "smoke", findings: [], note: "smokeTest.enabled is false", readme: README.smoke },
                { id: "controller.leader", status: "FAIL" as const, what: "one leader", findings: [{ object: "Lease argo-rollouts/argo-rollouts-controller-lock", found: "no holder" }], readme: README.crds },
            ],
        };
        const lines = formatText(report).split("\n");
        assert.match(lines[1], /^PASS {2}crds\.established +CRDs established$/);
        assert.match(lines[2], /^SKIP {2}smoke\.outcome +smoke \(smokeTest\.enabled is false\)$/);
        assert.match(lines[3], /^FAIL {2}controller\.leader +one leader$/);
        assert.strictEqual(lines[4], "      Lease argo-rollouts/argo-rollouts-controller-lock: no holder");
        assert.strictEqual(lines[5], "      read: README.md#verify-crds-and-controller");
        assert.strictEqual(exitCode(report.results), 1);
        assert.strictEqual(exitCode(report.results.slice(0, 2)), 0);
        assert.deepStrictEqual(JSON.parse(formatJson(report)).summary, { PASS: 1, FAIL: 1, SKIP: 1 });
    });

    it("every README section a check points at exists", () => {
        const readme = fs.readFileSync(path.join(__dirname, "..", "README.md"), "utf8");
        // GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens.
        const anchors = new Set([...readme.matchAll(/^#+ (.+)$/gm)].map((m) => `#${m[1].trim().toLowerCase().replace(/[^a-z0-9 -]/g, "").replace(/ /g, "-")}`));
        for (const anchor of Object.values(README)) {
            assert.ok(anchors.has(anchor), `README has no heading for ${anchor}`);
        }
    });

    it("the program's controller RBAC grants every call of the Rollout path verify asks about", () => {
        const cluster = controllerClusterRules({ tcpRoutes: false, tlsRoutes: false });
        const namespaced = controllerNamespaceRules();
        const missing = ROLLOUT_PATH_CALLS.filter((c) => !(c.scope === "cluster" ? cluster : [...cluster, ...namespaced]).some((r) => ruleAllows(r, c)));
        assert.deepStrictEqual(missing, []);
    });

    it("matches RBAC rules like the RBAC authorizer (wildcards, subresources, resource names)", () => {
        const q = { verb: "patch", group: "argoproj.io", resource: "rollouts", subresource: "status" };
        assert.ok(ruleAllows({ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }, q));
        assert.ok(ruleAllows({ apiGroups: ["argoproj.io"], resources: ["*/status"], verbs: ["patch"] }, q));
        assert.ok(!ruleAllows({ apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: ["patch"] }, q));
        assert.ok(!ruleAllows({ apiGroups: ["argoproj.io"], resources: ["rollouts/status"], verbs: ["patch"], resourceNames: ["one"] }, q));
    });
});
