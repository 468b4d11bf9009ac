import { TENANT_VIEW_ROLE, tenantOperatorBinding } from "../components/rollouts/tenants";
import type { KubeObject } from "../tools/verify/cluster";
import * as assert from "assert";
import { execFile } from "child_process";
import * as fs from "fs";
import * as https from "https";
import * as os from "os";
import * as path from "path";
import * as tls from "tls";
import * as YAML from "yaml";
import { HTTPROUTE_WEIGHTS_RULE, ROLLOUT_ACTIONS_POLICY_KEY, argocdCmIgnoreData } from "../components/argocd";
import { KYVERNO_AGGREGATE_LABELS, KYVERNO_ROLES, POLICY_NAMES, kyvernoRoleName } from "../components/policy";
import type { AddonConfig } from "../stacks/config";
import { ROLLOUT_PATH_CALLS, requestQuestion, ruleAllows, verifyRules } from "../tools/verify/access";
import { ConnectionError, ReadError, connect, kubeConfigFor, loadClient } from "../tools/verify/cluster";
import { COMPONENTS, GROUPS, defaultOptions, runVerify, trustedCas, withoutComponents } from "../tools/verify/index";
import { certificateAdvice, certificateProblem } from "../tools/verify/checks/metrics";
import { FOLDED_ROUTE_QUERY } from "../tools/verify/probeRoutes";
import { caBundleDigest } from "../components/gateway/caBundle";
import { READ_CA_CONFIGMAP, READ_CA_DIGEST_ANNOTATION, READ_CA_KEY } from "../components/rollouts/trust";
import { CheckResult, DOCS, VERIFY_PAGE, exitCode, formatJson, formatText } from "../tools/verify/report";
import { headingAnchors, readDoc } from "./markdown";
import { parseVerifyArgs, verifyMain } from "../tools/verify";
import { FakeApiServer, startFakeApiServer } from "./verify/fakeApiServer";
import { TEST_POLICY } from "./harness";
import {
    ClusterWorld,
    HUB_READ_ENDPOINT,
    NOW,
    fixture,
    healthyCluster,
    kyvernoAccount,
    replace,
    setSmokeStatus,
    fixtureConfig,
    verifyConfig,
    withStatus,
} from "./verify/world";
import { PolicyRule } from "../components/argoRollouts";
import { controllerClusterRules, controllerNamespaceRules } from "../components/rollouts/rbac";

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
    async function verify(config: AddonConfig, world: ClusterWorld, options: Parameters<typeof defaultOptions>[0] = {}): Promise<Results> {
        if (server) {
            await server.close();
        }
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
    const expectPass = (results: Results, id: string) =>
        assert.strictEqual(status(results, id), "PASS", `${id}: ${found(results, id)} ${results.get(id)?.note ?? ""}`);
    const notPassing = (results: Results) =>
        [...results.values()].filter((r) => r.status !== "PASS").map((r) => `${r.status} ${r.id}: ${found(results, r.id)} ${r.note ?? ""}`.trim());
    const ALL_IDS = GROUPS.flatMap((g) => g.ids);
    const results0 = (results: Results): string => results.get("argocd.regulated-projects")?.note ?? "";

    describe("a healthy cluster", () => {
        it("passes every check of a stack that owns what it can, reading only and asking only access reviews", async () => {
            const config = verifyConfig();
            const results = await verify(config, healthyCluster(config));
            assert.deepStrictEqual(notPassing(results), []);
            assert.deepStrictEqual([...results.keys()], ALL_IDS);
            const methods = new Set(server!.requests.map((r) => r.split(" ")[0]));
            assert.deepStrictEqual([...methods].sort(), ["GET", "POST"]);
            assert.ok(
                server!.requests.filter((r) => r.startsWith("POST")).every((r) => /\/apis\/authorization\.k8s\.io\/v1\/(self)?subjectaccessreviews$/.test(r)),
            );
        });

        it("passes the fixture hub stack as declared: complement, kept ArgoCD objects, the observability module's ingest routes", async () => {
            const config = fixtureConfig("hub");
            const results = await verify(config, healthyCluster(config));
            assert.deepStrictEqual(
                notPassing(results).map((l) => l.split(":")[0]),
                ["SKIP rbac.kyverno-policy-lookups", "SKIP smoke.outcome"],
            );
            assert.match(
                results.get("metrics.spoke-routes")!.note!,
                /^mimir-spoke-preprod-read \(read\); other routes on the spokes' hostnames: observability\/mimir-ingest-preprod$/,
            );
            assert.match(results.get("argocd.projects")!.note!, /tenants \(external\)/);
        });

        it("passes the fixture preprod spoke: templates at the hub's endpoint, queried from here", async () => {
            const config = fixtureConfig("preprod");
            const results = await verify(config, healthyCluster(config), {
                httpGet: async () => ({ status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) }),
            });
            assert.deepStrictEqual(
                notPassing(results).map((l) => l.split(":")[0]),
                ["SKIP rbac.kyverno-policy-lookups", "SKIP metrics.spoke-routes", "SKIP smoke.outcome"],
            );
            assert.match(results.get("metrics.templates")!.note!, new RegExp(`${HUB_READ_ENDPOINT.replace(/[./]/g, "\\$&")} \\(from the hub stack\\)`));
        });
    });

    describe("verify's own permissions", () => {
        for (const stack of ["verifyConfig", "hub", "preprod"]) {
            it(`cover every request verify makes (${stack}), and nothing more than reads and access reviews`, async () => {
                const config = stack === "verifyConfig" ? verifyConfig() : fixtureConfig(stack);
                await verify(config, healthyCluster(config), {
                    httpGet: async () => ({ status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) }),
                });
                const rules = verifyRules(config);
                const asked = server!.requests
                    .map((r) => ({ r, q: requestQuestion(r.split(" ")[0], r.split(" ")[1]) }))
                    .filter((x) => x.q !== undefined && x.q.resource !== "selfsubjectaccessreviews");
                assert.ok(asked.length > 40);
                assert.deepStrictEqual(
                    asked.filter((x) => !rules.some((rule) => ruleAllows(rule, x.q!))).map((x) => x.r),
                    [],
                );
                for (const rule of rules) {
                    assert.ok(
                        rule.verbs.every((v) => ["get", "list"].includes(v) || (v === "create" && rule.resources.join() === "subjectaccessreviews")),
                        JSON.stringify(rule),
                    );
                    assert.ok(!rule.resources.includes("secrets"));
                }
                assert.strictEqual(
                    rules.some((r) => r.resources.includes("services/proxy")),
                    config.cluster.role === "hub",
                );
            });
        }

        it("--print-role prints them as a ClusterRole, the proxy pinned to the stack's Mimir gateway", async () => {
            const out: string[] = [];
            assert.strictEqual(
                await verifyMain(
                    ["--print-role", "--stack", "hub"],
                    (x) => out.push(x),
                    () => undefined,
                ),
                0,
            );
            const role = YAML.parse(out.join("\n")) as { kind: string; metadata: { name: string }; rules: { resources: string[]; resourceNames?: string[] }[] };
            assert.strictEqual(role.kind, "ClusterRole");
            assert.deepStrictEqual(role.rules, verifyRules(fixtureConfig("hub")));
            assert.deepStrictEqual(role.rules.find((r) => r.resources.includes("services/proxy"))?.resourceNames, ["mimir-gateway"]);
        });
    });

    describe("CRDs and controller", () => {
        it("crds.established fails when a CRD is not established or missing", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "CustomResourceDefinition", "rollouts.argoproj.io", (o) => withStatus(o, fixture("crd-not-established.json")));
            world.objects = world.objects.filter((o) => o.metadata?.name !== "experiments.argoproj.io");
            const results = await verify(config, world);
            expectFail(results, "crds.established", /rollouts\.argoproj\.io: Established=False \(NotAccepted: not all names are accepted\)/);
            expectFail(results, "crds.established", /experiments\.argoproj\.io: not found/);
        });

        it("crds.protected fails for a CRD a Helm release deletes, passes with resource-policy keep", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            const helm = { "meta.helm.sh/release-name": "argo-rollouts", "meta.helm.sh/release-namespace": "argo-rollouts" };
            replace(world, "CustomResourceDefinition", "rollouts.argoproj.io", (o) => ({
                ...o,
                metadata: { ...o.metadata, annotations: { ...o.metadata?.annotations, ...helm } },
            }));
            replace(world, "CustomResourceDefinition", "analysisruns.argoproj.io", (o) => ({
                ...o,
                metadata: { ...o.metadata, annotations: { ...helm, "helm.sh/resource-policy": "keep" } },
            }));
            const results = await verify(config, world);
            expectFail(results, "crds.protected", /rollouts\.argoproj\.io: belongs to Helm release argo-rollouts without helm.sh\/resource-policy: keep/);
            assert.doesNotMatch(found(results, "crds.protected"), /analysisruns/);
        });

        it("crds.protected fails for a CRD in a Terraform state, whatever its keep annotation", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "CustomResourceDefinition", "experiments.argoproj.io", (o) => ({
                ...o,
                metadata: {
                    ...o.metadata,
                    annotations: { "helm.sh/resource-policy": "keep" },
                    managedFields: [
                        { manager: "Terraform", operation: "Apply" },
                        { manager: "kube-apiserver", operation: "Update" },
                    ],
                },
            }));
            const results = await verify(config, world);
            expectFail(
                results,
                "crds.protected",
                /experiments\.argoproj\.io: managed by Terraform \(Apply\): a destroy of that Terraform state deletes it, and every Rollout/,
            );
            assert.doesNotMatch(found(results, "crds.protected"), /kube-apiserver/);
        });

        it("controller.available fails when replicas differ or the Deployment is unavailable", async () => {
            const config = verifyConfig({ controller: { replicas: 3, pdbMaxUnavailable: 1 } });
            const world = healthyCluster(verifyConfig());
            replace(world, "Deployment", "argo-rollouts", (o) => withStatus(o, fixture("controller-unavailable-status.json")));
            const results = await verify(config, world);
            expectFail(results, "controller.available", /spec\.replicas is 2, the stack configures 3/);
            expectFail(results, "controller.available", /Available=False \(MinimumReplicasUnavailable/);
        });

        it("controller.leader fails when the Lease is expired or held by a pod that is gone", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "Lease", "argo-rollouts-controller-lock", (o) => ({
                ...o,
                spec: { ...(o.spec as object), holderIdentity: "argo-rollouts-6b8c4d7f59-zz9qq_1f2e3d4c", renewTime: "2026-06-27T12:00:00.000000Z" },
            }));
            const results = await verify(config, world);
            expectFail(results, "controller.leader", /held by argo-rollouts-6b8c4d7f59-zz9qq_1f2e3d4c, which is not a running, ready pod/);
            expectFail(results, "controller.leader", /last renewed 2026-06-27T12:00:00\.000Z.*the leader is gone/);
        });

        it("controller.plugin fails when argo-rollouts-config pins another checksum", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "ConfigMap", "argo-rollouts-config", (o) => ({
                ...o,
                data: { trafficRouterPlugins: String((o.data as Record<string, string>).trafficRouterPlugins).replace(/a{64}/, "f".repeat(64)) },
            }));
            const results = await verify(config, world);
            expectFail(results, "controller.plugin", /argoproj-labs\/gatewayAPI is .* sha256 f{64}, the stack pins .* sha256 a{64}/);
        });

        describe("controller.read-ca", () => {
            const pem = (f: string) => fs.readFileSync(path.join(__dirname, "fixtures", "tls", f), "utf8");
            // A spoke whose hub serves its read endpoint under a private CA; the GET is answered here.
            const spoke = (readCaBundle?: string) =>
                verifyConfig({
                    cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
                    mimir: { readEndpoint: "https://mimir.hub.example/prometheus", readCaBundle },
                    spokes: undefined,
                });
            const answer = { httpGet: async () => ({ status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) }) };
            const POD = "argo-rollouts-7c9d5f8b64-p7m4n";
            const withAnnotation = (o: KubeObject, value: string | undefined): KubeObject => {
                const annotations = { ...o.metadata?.annotations };
                delete annotations[READ_CA_DIGEST_ANNOTATION];
                return { ...o, metadata: { ...o.metadata, annotations: value ? { ...annotations, [READ_CA_DIGEST_ANNOTATION]: value } : annotations } };
            };

            it("passes when the ConfigMap holds the stack's bundle and every pod started with it", async () => {
                const config = spoke(pem("ca.crt"));
                const results = await verify(config, healthyCluster(config), answer);
                expectPass(results, "controller.read-ca");
                assert.match(
                    results.get("controller.read-ca")!.note!,
                    new RegExp(`^mimir\\.readCaBundle sha256 ${caBundleDigest(config.mimir.readCaBundle!)}, 2 running pod\\(s\\)$`),
                );
            });

            it("fails for a pod that started with another bundle or none, and for a ConfigMap that holds another or is gone", async () => {
                const config = spoke(pem("ca.crt"));
                const want = caBundleDigest(config.mimir.readCaBundle!);
                const other = caBundleDigest(pem("other-ca.crt"));
                let world = healthyCluster(config);
                replace(world, "Pod", POD, (o) => withAnnotation(o, other));
                replace(world, "Pod", "argo-rollouts-7c9d5f8b64-x2k8q", (o) => withAnnotation(o, undefined));
                replace(world, "ConfigMap", READ_CA_CONFIGMAP, (o) => ({ ...o, data: { [READ_CA_KEY]: pem("other-ca.crt") } }));
                let results = await verify(config, world, answer);
                expectFail(
                    results,
                    "controller.read-ca",
                    new RegExp(
                        `Pod argo-rollouts/${POD}: started with another CA bundle \\(sha256 ${other}\\), the stack's is sha256 ${want}: Go reads its roots once, at start, and the Deployment's rollout has not replaced it`,
                    ),
                );
                expectFail(results, "controller.read-ca", /x2k8q: started with no CA bundle, the stack's is sha256/);
                expectFail(
                    results,
                    "controller.read-ca",
                    new RegExp(
                        `ConfigMap argo-rollouts/${READ_CA_CONFIGMAP}: ca-bundle\\.crt is another bundle \\(sha256 ${other}\\); the stack's mimir\\.readCaBundle is sha256 ${want}`,
                    ),
                );
                world = healthyCluster(config);
                world.objects = world.objects.filter((o) => !(o.kind === "ConfigMap" && o.metadata?.name === READ_CA_CONFIGMAP));
                results = await verify(config, world, answer);
                expectFail(results, "controller.read-ca", new RegExp(`ConfigMap argo-rollouts/${READ_CA_CONFIGMAP}: not found`));
                assert.strictEqual(results.get("controller.read-ca")!.findings.length, 1, found(results, "controller.read-ca"));
            });

            it("fails for a pod without SSL_CERT_DIR or the ConfigMap's mount: it reads only the image's roots", async () => {
                const config = spoke(pem("ca.crt"));
                const world = healthyCluster(config);
                replace(world, "Pod", POD, (o) => {
                    const spec = o.spec as { containers: Record<string, unknown>[] };
                    return {
                        ...o,
                        spec: {
                            ...spec,
                            volumes: [],
                            containers: spec.containers.map((c) => ({
                                ...c,
                                env: [{ name: "SSL_CERT_DIR", value: "/etc/argo-rollouts-addon/mimir-read-ca" }],
                                volumeMounts: [],
                            })),
                        },
                    };
                });
                const results = await verify(config, world, answer);
                expectFail(
                    results,
                    "controller.read-ca",
                    new RegExp(
                        `${POD}: argo-rollouts has SSL_CERT_DIR "/etc/argo-rollouts-addon/mimir-read-ca", not /etc/ssl/certs:/etc/pki/tls/certs:/etc/argo-rollouts-addon/mimir-read-ca`,
                    ),
                );
                expectFail(
                    results,
                    "controller.read-ca",
                    new RegExp(`${POD}: does not mount ConfigMap ${READ_CA_CONFIGMAP} at /etc/argo-rollouts-addon/mimir-read-ca`),
                );
                assert.doesNotMatch(found(results, "controller.read-ca"), /x2k8q/);
            });

            it("without a bundle, passes on public roots and fails for a pod still started with a removed bundle", async () => {
                const config = spoke();
                const world = healthyCluster(config);
                assert.ok(!world.objects.some((o) => o.metadata?.name === READ_CA_CONFIGMAP));
                expectPass(await verify(config, world, answer), "controller.read-ca");
                replace(world, "Pod", POD, (o) => withAnnotation(o, caBundleDigest(pem("ca.crt"))));
                const results = await verify(config, world, answer);
                expectFail(
                    results,
                    "controller.read-ca",
                    new RegExp(`${POD}: started with a read-endpoint CA bundle \\(sha256 ${caBundleDigest(pem("ca.crt"))}\\) the stack no longer sets`),
                );
            });
        });

        it("controller.image fails when a pod runs another image, or lacks the plugin image in image mode", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "Pod", "argo-rollouts-7c9d5f8b64-p7m4n", (o) => ({
                ...o,
                spec: { ...(o.spec as object), containers: [{ name: "argo-rollouts", image: "quay.io/argoproj/argo-rollouts:v1.8.3" }] },
            }));
            const results = await verify(config, world);
            expectFail(
                results,
                "controller.image",
                /Pod argo-rollouts\/argo-rollouts-7c9d5f8b64-p7m4n: runs quay\.io\/argoproj\/argo-rollouts:v1\.8\.3, the stack pins registry\.platform\.test\/mirror\/argoproj\/argo-rollouts:v1\.9\.0/,
            );
            const fixture = fixtureConfig("hub");
            const imageWorld = healthyCluster(fixture);
            replace(imageWorld, "Pod", "argo-rollouts-7c9d5f8b64-x2k8q", (o) => ({ ...o, spec: { ...(o.spec as object), initContainers: [] } }));
            expectFail(
                await verify(fixture, imageWorld),
                "controller.image",
                /x2k8q: has no init container with the pinned plugin image registry\.platform\.test\/mirror\/argoproj-labs\/rollouts-plugin-trafficrouter-gatewayapi@sha256:7e57/,
            );
        });
    });

    describe("RBAC (SubjectAccessReview)", () => {
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
            world.grants = world.grants.filter(
                (g) => !(g.user === kyvernoAccount("reports-controller") && g.rules.some((r) => r.resources.includes("rollouts"))),
            );
            const name = kyvernoRoleName({ name: KYVERNO_ROLES.readRollouts });
            replace(world, "ClusterRole", name, (o) => ({ ...o, metadata: { ...o.metadata, labels: { [KYVERNO_AGGREGATE_LABELS.background]: "true" } } }));
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
            expectFail(
                await verify(config, world),
                "rbac.kyverno-generates-pdbs",
                /kyverno-background-controller: may not create policy\/poddisruptionbudgets/,
            );

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
            replace(world, "ClusterRole", "edit", (o) => ({ ...o, rules: [...(o.rules as unknown[]), ...(aggregate.rules as unknown[])] }));
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
            const reviews = server!.requests.filter((r) => r.startsWith("POST /apis/authorization.k8s.io/v1/subjectaccessreviews"));
            assert.ok(reviews.length > 0);
        });

        it("rbac.tenants-read-rollouts fails when view does not aggregate the Rollout kinds, and says whether the stage's role exists", async () => {
            const config = verifyConfig();
            expectPass(await verify(config, healthyCluster(config)), "rbac.tenants-read-rollouts");
            const world = healthyCluster(config);
            replace(world, "ClusterRole", "view", (o) => ({ ...o, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] }] }));
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
            replace(world, "Namespace", "payments-prod", (o) => ({
                ...o,
                metadata: { ...o.metadata, labels: { "kubernetes.io/metadata.name": "payments-prod", "platform.test/tier": "prod" } },
            }));
            results = await verify(config, world);
            assert.strictEqual(status(results, "rbac.deployer-cannot-resume"), "SKIP");
            assert.match(results.get("rbac.deployer-cannot-resume")!.note!, /no namespace matches policy\.regulated\.namespaceLabels/);
        });
    });

    describe("regulated ReplicaSets", () => {
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
            expectFail(
                results,
                "rbac.deployer-cannot-edit-replicasets",
                /may update replicasets\/scale in payments-prod: a ReplicaSet scaled beside a Rollout/,
            );
        });

        it("kyverno.resource-filters fails for Kyverno's default ReplicaSet filters and any filter that hides a regulated Rollout or Pod", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            let results = await verify(config, world);
            expectPass(results, "kyverno.resource-filters");
            assert.match(results.get("kyverno.resource-filters")!.note!, /regulated namespaces: payments-prod/);
            // The chart's defaults (charts/kyverno values.yaml at v1.17.2) and a platform's own filter.
            replace(world, "ConfigMap", "kyverno", (o) => ({
                ...o,
                data: {
                    ...(o.data as object),
                    resourceFilters: `${(o.data as { resourceFilters: string }).resourceFilters}[ReplicaSet,*,*][ReplicaSet/?*,*,*][Pod,payments-*,*][Rollout/status,*,*][Pod/binding,*,*]`,
                },
            }));
            results = await verify(config, world);
            expectFail(
                results,
                "kyverno.resource-filters",
                /ConfigMap kyverno\/kyverno resourceFilters \[ReplicaSet,\*,\*\]: Kyverno admits ReplicaSet in payments-prod without asking a policy.*config\.resourceFiltersExclude: \["\[ReplicaSet,\*,\*\]"\]/,
            );
            expectFail(results, "kyverno.resource-filters", /resourceFilters \[ReplicaSet\/\?\*,\*,\*\]: Kyverno admits ReplicaSet\/scale in payments-prod/);
            expectFail(results, "kyverno.resource-filters", /resourceFilters \[Pod,payments-\*,\*\]: Kyverno admits Pod in payments-prod/);
            expectFail(results, "kyverno.resource-filters", /resourceFilters \[Rollout\/status,\*,\*\]: Kyverno admits Rollout\/status in payments-prod/);
            assert.doesNotMatch(
                found(results, "kyverno.resource-filters"),
                /Pod\/binding|kube-system|Pod\/ephemeralcontainers/,
                "a filter that hides nothing guarded is no finding",
            );
            world.objects = world.objects.filter((o) => !(o.kind === "ConfigMap" && o.metadata?.name === "kyverno"));
            expectFail(await verify(config, world), "kyverno.resource-filters", /ConfigMap kyverno\/kyverno: not found/);
        });
    });

    describe("Kyverno policies", () => {
        it("kyverno.selectors-match passes when the tenant, prod and regulated selectors each match a namespace", async () => {
            const config = verifyConfig();
            const results = await verify(config, healthyCluster(config));
            expectPass(results, "kyverno.selectors-match");
            assert.match(
                results.get("kyverno.selectors-match")!.note!,
                /^policy\.tenantNamespaceSelector: \d+ namespace\(s\); policy\.prodNamespaceLabels: \d+ namespace\(s\); policy\.regulated\.namespaceLabels: [1-9]\d* namespace\(s\)$/,
            );
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

        it("kyverno.policies-ready fails when Kyverno reports missing permissions or a policy is absent", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "ValidatingPolicy", POLICY_NAMES.replicaFloor, (o) => withStatus(o, fixture("cel-policy-status-rbac-missing.json")));
            world.objects = world.objects.filter((o) => !(o.kind === "GeneratingPolicy" && o.metadata?.name === POLICY_NAMES.pdb));
            const results = await verify(config, world);
            expectFail(
                results,
                "kyverno.policies-ready",
                /ValidatingPolicy require-prod-replica-floor: RBACPermissionsGranted=False \(Failed: Policy is not ready for reporting, missing permissions: get argoproj\.io/,
            );
            expectFail(results, "kyverno.policies-ready", /GeneratingPolicy generate-workload-pdb: not found: Kyverno refuses a CEL policy it cannot compile/);
        });

        it("kyverno.policies-ready expects only the guards, the approval guard and the tier rules in complement mode", async () => {
            const config = verifyConfig({ policy: { availabilityPolicies: "complement" } });
            const world = healthyCluster(config);
            let results = await verify(config, world);
            expectPass(results, "kyverno.policies-ready");
            assert.strictEqual(
                results.get("kyverno.policies-ready")!.note,
                "restrict-rollout-route-namespace, require-canary-max-surge, restrict-regulated-rollout-changes, restrict-regulated-rollout-pods, require-prod-standard-delivery, require-prod-regulated-delivery",
            );
            world.objects = world.objects.filter((o) => o.metadata?.name !== POLICY_NAMES.approval);
            results = await verify(config, world);
            expectFail(results, "kyverno.policies-ready", /ValidatingPolicy restrict-regulated-rollout-changes: not found/);
        });

        it("kyverno.policies-ready reads the ClusterPolicy Ready condition on the kyverno.io/v1 API", async () => {
            const config = verifyConfig({ policy: { kyvernoApi: "kyverno.io/v1" } });
            const world = healthyCluster(config);
            replace(world, "ClusterPolicy", POLICY_NAMES.spread, (o) =>
                withStatus(o, { conditions: [{ type: "Ready", status: "False", reason: "Failed", message: "policy not ready" }] }),
            );
            const results = await verify(config, world);
            expectFail(results, "kyverno.policies-ready", /ClusterPolicy mutate-topology-spread: Ready=False \(Failed: policy not ready\)/);
            expectPass(results, "kyverno.policies-enforced");
        });

        it("kyverno.policies-enforced fails for an audit-only policy, one that no longer matches Rollout, and an approval guard with other approvers", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "ValidatingPolicy", POLICY_NAMES.defaultNamespace, (o) => ({
                ...o,
                spec: { ...(o.spec as object), validationActions: ["Audit", "Warn"] },
            }));
            replace(world, "ValidatingPolicy", POLICY_NAMES.replicaFloor, (o) => {
                const spec = o.spec as { matchConstraints: { resourceRules: { resources: string[] }[] } };
                return {
                    ...o,
                    spec: {
                        ...spec,
                        matchConstraints: {
                            ...spec.matchConstraints,
                            resourceRules: spec.matchConstraints.resourceRules.filter((r) => !r.resources.includes("rollouts")),
                        },
                    },
                };
            });
            replace(
                world,
                "ValidatingPolicy",
                POLICY_NAMES.approval,
                (o) => JSON.parse(JSON.stringify(o).replace(/payments-approvers/g, "payments-deployers")) as typeof o,
            );
            const results = await verify(config, world);
            expectFail(results, "kyverno.policies-enforced", /disallow-default-namespace: validationActions are \[Audit,Warn\], the stack configures \[Deny\]/);
            expectFail(results, "kyverno.policies-enforced", /require-prod-replica-floor: does not match argoproj\.io\/rollouts/);
            expectFail(
                results,
                "kyverno.policies-enforced",
                /restrict-regulated-rollout-changes: spec\.variables\[2\]\.expression is .*payments-deployers.*, the stack declares .*payments-approvers/,
            );
            assert.doesNotMatch(found(results, "kyverno.policies-enforced"), /validationActions\[/, "a difference named in its own words is not repeated");
        });

        it("kyverno.policies-enforced takes the CRD's defaults on stored ClusterPolicies as no drift, and catches a changed namespace selector", async () => {
            const config = verifyConfig({ policy: { kyvernoApi: "kyverno.io/v1" } });
            const world = healthyCluster(config);
            assert.strictEqual((world.objects.find((o) => o.metadata?.name === POLICY_NAMES.approval)!.spec as { admission: boolean }).admission, true);
            expectPass(await verify(config, world), "kyverno.policies-enforced");
            replace(
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

        it("kyverno.availability-rollout-aware fails in complement mode when the platform's policies miss Rollout or are absent", async () => {
            const config = verifyConfig({ policy: { availabilityPolicies: "complement" } });
            const world = healthyCluster(config);
            expectPass(await verify(config, world), "kyverno.availability-rollout-aware");
            replace(world, "ClusterPolicy", POLICY_NAMES.pdb, () => fixture("legacy-pdb-clusterpolicy.json"));
            world.objects = world.objects.filter((o) => o.metadata?.name !== POLICY_NAMES.replicaFloor);
            const results = await verify(config, world);
            expectFail(
                results,
                "kyverno.availability-rollout-aware",
                /ClusterPolicy generate-workload-pdb: does not match argoproj\.io\/v1alpha1 Rollout: it silently does nothing for a Rollout/,
            );
            expectFail(
                results,
                "kyverno.availability-rollout-aware",
                /policy require-prod-replica-floor: not found in either Kyverno API: policy\.availabilityPolicies is complement/,
            );
        });

        it("reads Kyverno's kind selectors as Kyverno does", async () => {
            const { kindSelectsRollout } = await import("../tools/verify/checks/kyverno");
            for (const yes of ["Rollout", "argoproj.io/v1alpha1/Rollout", "v1alpha1/Rollout", "argoproj.io/*/Rollout"]) {
                assert.ok(kindSelectsRollout(yes), yes);
            }
            // `*/*/Rollout` is version/kind/subresource to Kyverno: a subresource named Rollout.
            for (const no of ["Deployment", "argoproj.io/v1alpha1/Rollout/status", "Rollout/status", "Rollout.status", "apps/v1/Rollout", "*/*/Rollout"]) {
                assert.ok(!kindSelectsRollout(no), no);
            }
        });

        it("kyverno.one-pdb-per-workload fails for a second generator and a workload with two budgets (own mode)", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            world.objects.push(fixture("legacy-pdb-clusterpolicy.json"));
            const pdb = fixture("generated-pdb.json");
            world.objects.push({
                ...pdb,
                metadata: { ...pdb.metadata, name: "alpha-shop", labels: { "generate.kyverno.io/policy-name": "generate-workload-pdb" } },
            });
            const results = await verify(config, world);
            expectFail(
                results,
                "kyverno.one-pdb-per-workload",
                /ClusterPolicy generate-workload-pdb: also generates PodDisruptionBudgets beside GeneratingPolicy generate-workload-pdb/,
            );
            expectFail(results, "kyverno.one-pdb-per-workload", /Rollout alpha-shop-prod\/alpha-shop: its pods are selected by 2 PodDisruptionBudgets/);
        });

        it("kyverno.one-pdb-per-workload expects exactly the platform's generator in complement mode", async () => {
            const config = verifyConfig({ policy: { availabilityPolicies: "complement" } });
            const world = healthyCluster(config);
            let results = await verify(config, world);
            expectPass(results, "kyverno.one-pdb-per-workload");
            assert.match(results.get("kyverno.one-pdb-per-workload")!.note!, /^ClusterPolicy generate-workload-pdb;/);
            world.objects = world.objects.filter((o) => o.metadata?.name !== POLICY_NAMES.pdb);
            results = await verify(config, world);
            expectFail(
                results,
                "kyverno.one-pdb-per-workload",
                /none generates PodDisruptionBudgets: policy\.availabilityPolicies is complement, so the platform's own generate-workload-pdb must/,
            );
        });
    });

    describe("ArgoCD", () => {
        it("argocd.projects fails when a project this stack owns does not permit Rollout or is not the stack's whitelist", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "AppProject", "tenants", (o) => ({
                ...o,
                spec: {
                    ...(o.spec as object),
                    namespaceResourceWhitelist: [
                        { group: "", kind: "Service" },
                        { group: "apps", kind: "*" },
                        { group: "gateway.networking.k8s.io", kind: "HTTPRoute" },
                    ],
                },
            }));
            const results = await verify(config, world);
            expectFail(
                results,
                "argocd.projects",
                /AppProject argocd\/tenants: AppProject argocd\/tenants \(argocd\.projects\.tenants\): spec\.namespaceResourceWhitelist does not permit argoproj\.io\/Rollout, argoproj\.io\/AnalysisTemplate, argoproj\.io\/AnalysisRun/,
            );
            expectFail(results, "argocd.projects", /spec\.namespaceResourceWhitelist is not the stack's \(owner: addon\)/);
        });

        it("argocd.projects judges a kept project by the program's own check (blacklist included)", async () => {
            const config = fixtureConfig("hub");
            const world = healthyCluster(config);
            replace(world, "AppProject", "tenants", (o) => ({
                ...o,
                spec: { ...(o.spec as object), namespaceResourceBlacklist: [{ group: "argoproj.io", kind: "AnalysisRun" }] },
            }));
            const results = await verify(config, world);
            expectFail(
                results,
                "argocd.projects",
                /spec\.namespaceResourceBlacklist entry \{group: argoproj\.io, kind: AnalysisRun\} refuses argoproj\.io\/AnalysisRun/,
            );
            assert.doesNotMatch(found(results, "argocd.projects"), /not the stack's/, "nothing is expected of a kept project's other entries");
        });

        it("argocd.applicationsets fails for a generated Application without RespectIgnoreDifferences", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "Application", "alpha-shop-prod", (o) => ({
                ...o,
                spec: { ...(o.spec as object), syncPolicy: { automated: { selfHeal: true }, syncOptions: ["ServerSideApply=true"] } },
            }));
            const results = await verify(config, world);
            expectFail(
                results,
                "argocd.applicationsets",
                /Application argocd\/alpha-shop-prod: spec\.syncPolicy\.syncOptions lack RespectIgnoreDifferences=true.*\(generated by ApplicationSet tenant-apps\)/,
            );
        });

        it("argocd.applicationsets judges a kept ApplicationSet by the program's own check: no weight rule, an array rule on Rollout", async () => {
            const config = fixtureConfig("hub");
            const world = healthyCluster(config);
            replace(world, "ApplicationSet", "tenant-apps", (o) => {
                const spec = o.spec as { template: { spec: { ignoreDifferences: { kind: string }[] } } };
                const rules = [
                    ...spec.template.spec.ignoreDifferences.filter((r) => r.kind !== "HTTPRoute"),
                    { group: "argoproj.io", kind: "Rollout", jqPathExpressions: [".spec.template.spec.containers[]?.resources"] },
                ];
                return { ...o, spec: { ...spec, template: { ...spec.template, spec: { ...spec.template.spec, ignoreDifferences: rules } } } };
            });
            const results = await verify(config, world);
            expectFail(
                results,
                "argocd.applicationsets",
                /ApplicationSet argocd\/tenant-apps \(argocd\.applicationSets\.tenant-apps\): spec\.template\.spec\.ignoreDifferences has no rule for the canary weights of HTTPRoutes/,
            );
            expectFail(results, "argocd.applicationsets", /ignoreDifferences\[\d\] \(argoproj\.io\/Rollout\) reaches a Rollout with an array path/);
        });

        it("argocd.argocd-cm fails for a missing system key, a global array rule reaching Rollout, and the old global HTTPRoute weight rule", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "ConfigMap", "argocd-cm", (o) => {
                const data = { ...(o.data as Record<string, string>), ...fixture<Record<string, string>>("argocd-cm-global-array-rule.json") };
                delete data["resource.customizations.ignoreDifferences.apps_Deployment"];
                // What an earlier version of the program wrote to argocd-cm for every Application.
                Object.assign(data, argocdCmIgnoreData([{ ...HTTPROUTE_WEIGHTS_RULE, jqPathExpressions: [".spec.rules[]?.backendRefs[]?.weight"] }]));
                return { ...o, data };
            });
            const results = await verify(config, world);
            expectFail(results, "argocd.argocd-cm", /no key resource\.customizations\.ignoreDifferences\.apps_Deployment \(argocd\.ignoreDifferences\)/);
            expectFail(
                results,
                "argocd.argocd-cm",
                /ignoreDifferences\.all reaches argoproj\.io\/Rollout and jq path \.spec\.template\.spec\.containers\[\]\?\.resources is not a plain field path/,
            );
            expectFail(
                results,
                "argocd.argocd-cm",
                /ignoreDifferences\.gateway\.networking\.k8s\.io_HTTPRoute applies to gateway\.networking\.k8s\.io\/HTTPRoute: \.spec\.rules\[\]\?\.backendRefs\[\]\?\.weight in argocd-cm applies to every HTTPRoute of every Application/,
            );
        });

        it("argocd.rbac fails without the approver policy key", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "ConfigMap", "argocd-rbac-cm", (o) => ({ ...o, data: fixture<{ data: object }>("argocd-rbac-cm.json").data }));
            const results = await verify(config, world);
            expectFail(results, "argocd.rbac", /no key policy\.argo-rollouts-addon\.csv/);
        });

        it("argocd.regulated-rbac asks ArgoCD's enforcer: a default role, inheritance on, a broken line, an unbound approver fail; a broad grant to the group does not", async () => {
            const config = verifyConfig();
            const broken = async (change: {
                rbac?: (data: Record<string, string>) => Record<string, string>;
                cm?: (data: Record<string, string>) => Record<string, string>;
            }) => {
                const world = healthyCluster(config);
                if (change.rbac) {
                    replace(world, "ConfigMap", "argocd-rbac-cm", (o) => ({ ...o, data: change.rbac!((o.data ?? {}) as Record<string, string>) }));
                }
                if (change.cm) {
                    replace(world, "ConfigMap", "argocd-cm", (o) => ({ ...o, data: change.cm!((o.data ?? {}) as Record<string, string>) }));
                }
                return verify(config, world);
            };
            expectFail(
                await broken({ rbac: (d) => ({ ...d, "policy.default": "role:admin" }) }),
                "argocd.regulated-rbac",
                /deployer group payments-deployers may action\/argoproj.io\/Rollout\/resume applications on tenants\/any-application.*policy\.default/,
            );
            // A platform grant to the group itself is taken back: the group's own subject carries the program's deny role.
            assert.strictEqual(
                status(
                    await broken({
                        rbac: (d) => ({ ...d, "policy.csv": "p, payments-deployers, applications, *, tenants/*, allow\ng, payments-deployers, role:admin" }),
                    }),
                    "argocd.regulated-rbac",
                ),
                "PASS",
            );
            expectFail(
                await broken({ cm: (d) => ({ ...d, "server.rbac.disableApplicationFineGrainedRBACInheritance": "false" }) }),
                "argocd.regulated-rbac",
                /disableApplicationFineGrainedRBACInheritance is "false": an update or delete grant on an Application then patches or deletes its Rollouts/,
            );
            expectFail(
                await broken({ rbac: (d) => ({ ...d, "policy.csv": 'p, role:x, applications, get, "*/*, allow' }) }),
                "argocd.regulated-rbac",
                /argocd-rbac-cm does not load in ArgoCD \(error loading RBAC policy: error parsing policy line/,
            );
            const unbound = await broken({
                rbac: (d) => ({ ...d, [ROLLOUT_ACTIONS_POLICY_KEY]: d[ROLLOUT_ACTIONS_POLICY_KEY].replace(/^g, payments-approvers, .*$/m, "") }),
            });
            expectFail(
                unbound,
                "argocd.regulated-rbac",
                /approver group payments-approvers cannot action\/argoproj.io\/Rollout\/resume.*bind it to the approver role \(g, payments-approvers, role:approver\)/,
            );
            // The platform may say the same in its own words: inheritance explicitly off passes.
            assert.strictEqual(
                status(await broken({ cm: (d) => ({ ...d, "server.rbac.disableApplicationFineGrainedRBACInheritance": "True" }) }), "argocd.regulated-rbac"),
                "PASS",
            );
        });

        it("skips every ArgoCD check when another cluster's ArgoCD syncs this one, naming that cluster, and looks up only the guard's ServiceAccounts here", async () => {
            const config = verifyConfig({
                policy: { regulated: { actionServiceAccounts: [] } },
                argocd: { runsOn: "platform", projects: undefined, applicationSets: undefined, ignoreDifferences: undefined, rbac: undefined },
            });
            const world = healthyCluster(verifyConfig());
            const results = await verify(config, world);
            assert.deepStrictEqual(
                ["argocd.projects", "argocd.applicationsets", "argocd.argocd-cm", "argocd.rbac", "argocd.regulated-rbac", "argocd.regulated-projects"].map(
                    (id) => status(results, id),
                ),
                ["SKIP", "SKIP", "SKIP", "SKIP", "SKIP", "SKIP"],
            );
            assert.match(
                results.get("argocd.projects")!.note!,
                /argocd\.runsOn is platform: the ArgoCD of cluster platform syncs this cluster's Applications; run verify for the stack of platform/,
            );
            assert.ok(
                !server!.requests.some((r) => r.includes("/namespaces/argocd/") && !r.includes("/serviceaccounts/")),
                "nothing of ArgoCD is read on this cluster",
            );
            // The hub's ArgoCD arrives with its cluster Secret's identity: no argocd ServiceAccount here.
            expectFail(
                results,
                "argocd.regulated-identities",
                /ServiceAccount argocd\/argocd-application-controller: not found, yet policy\.regulated names it: the ArgoCD of cluster platform reaches this cluster with its cluster Secret's identity \(argocd cluster add: kube-system\/argocd-manager/,
            );
            world.objects.push({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "argocd-application-controller", namespace: "argocd" } });
            expectPass(await verify(config, world), "argocd.regulated-identities");
        });

        it("argocd.regulated-projects fails for another project reaching a regulated namespace, a regulated project's role or token that syncs or approves, source namespaces and a Replace sync", async () => {
            const config = verifyConfig({ argocd: { projects: { team: { owner: "external" } }, rbac: { projects: ["tenants", "team"] } } });
            const world = healthyCluster(config);
            expectPass(await verify(config, world), "argocd.regulated-projects");
            assert.match(results0(await verify(config, world)), /2 AppProject\(s\) read; regulated namespaces of this cluster: payments-prod/);
            // `team` keeps out of payments-prod with a "!" entry; without it, its `*-prod` reaches it.
            replace(world, "AppProject", "team", (o) => ({
                ...o,
                spec: { ...(o.spec as object), destinations: [{ namespace: "*", server: "https://kubernetes.default.svc" }] },
            }));
            // The regulated project: a pipeline's role with a token, Applications from a tenant namespace.
            replace(world, "AppProject", "tenants", (o) => ({
                ...o,
                spec: {
                    ...(o.spec as object),
                    sourceNamespaces: ["payments-ci"],
                    roles: [
                        {
                            name: "ci",
                            policies: [
                                "p, proj:tenants:ci, applications, sync, tenants/*, allow",
                                "p, proj:tenants:ci, applications, action/*, tenants/*, allow",
                            ],
                            jwtTokens: [{ iat: 1767225600, id: "ci-2026" }],
                        },
                        { name: "viewer", policies: ["p, proj:tenants:viewer, applications, get, tenants/*, allow"], groups: ["payments-viewers"] },
                    ],
                },
            }));
            const app = world.objects.find((o) => o.kind === "Application")!;
            world.objects.push({
                ...app,
                metadata: { ...app.metadata, name: "payments-api-prod", ownerReferences: [] },
                spec: { ...(app.spec as object), project: "tenants", syncPolicy: { syncOptions: ["Replace=true", "Force=true"] } },
            });
            const results = await verify(config, world);
            expectFail(
                results,
                "argocd.regulated-projects",
                /AppProject argocd\/team: is not among argocd\.rbac\.regulatedProjects, yet its destinations reach namespace payments-prod on https:\/\/kubernetes\.default\.svc \(a regulated namespace of this cluster/,
            );
            expectFail(
                results,
                "argocd.regulated-projects",
                /AppProject argocd\/tenants role ci: \(tokens ci-2026, no group\) may action\/argoproj\.io\/Rollout\/resume applications, .*sync applications/,
            );
            expectFail(
                results,
                "argocd.regulated-projects",
                /AppProject argocd\/tenants: takes Applications from namespaces payments-ci \(spec\.sourceNamespaces\)/,
            );
            expectFail(
                results,
                "argocd.regulated-projects",
                /Application argocd\/payments-api-prod: of regulated project tenants syncs with Replace=true, Force=true/,
            );
            assert.doesNotMatch(found(results, "argocd.regulated-projects"), /role viewer/, "a role that only reads is no path");
            // The stack may allow Replace and Force; the rest still fails.
            const allowing = verifyConfig({
                policy: { regulated: { allowReplaceOrForceSync: true } },
                argocd: { projects: { team: { owner: "external" } }, rbac: { projects: ["tenants", "team"] } },
            });
            assert.doesNotMatch(found(await verify(allowing, world), "argocd.regulated-projects"), /Replace=true/);
        });

        it("argocd.regulated-identities says what to set when sync impersonation is on and the guard names ArgoCD's own ServiceAccounts", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            let results = await verify(config, world);
            expectPass(results, "argocd.regulated-identities");
            assert.match(
                results.get("argocd.regulated-identities")!.note!,
                /payments-prod: sync as system:serviceaccount:argocd:argocd-application-controller, API server as system:serviceaccount:argocd:argocd-server/,
            );
            replace(world, "ConfigMap", "argocd-cm", (o) => ({ ...o, data: { ...(o.data as object), "application.sync.impersonation.enabled": "true" } }));
            replace(world, "AppProject", "tenants", (o) => ({
                ...o,
                spec: {
                    ...(o.spec as object),
                    destinationServiceAccounts: [{ server: "https://kubernetes.default.svc", namespace: "*-prod", defaultServiceAccount: "argocd-sync" }],
                },
            }));
            results = await verify(config, world);
            expectFail(
                results,
                "argocd.regulated-identities",
                /ArgoCD syncs as system:serviceaccount:payments-prod:argocd-sync .*: the approval guard refuses every sync of a regulated Rollout there; add payments-prod\/argocd-sync to policy\.regulated\.gitopsServiceAccounts/,
            );
            expectFail(
                results,
                "argocd.regulated-identities",
                /API server acts as system:serviceaccount:payments-prod:argocd-sync, its sync identity.*set it to \[\]/,
            );
            expectFail(
                results,
                "argocd.regulated-identities",
                /gitopsServiceAccounts names argocd\/argocd-application-controller, which ArgoCD does not sync any regulated namespace as/,
            );
            // As it says: the impersonated ServiceAccount, and no action identity.
            const fixed = verifyConfig({ policy: { regulated: { gitopsServiceAccounts: ["payments-prod/argocd-sync"], actionServiceAccounts: [] } } });
            expectPass(await verify(fixed, world), "argocd.regulated-identities");
            // Enforced impersonation without a matching entry: ArgoCD refuses to sync there.
            replace(world, "AppProject", "tenants", (o) => ({
                ...o,
                spec: {
                    ...(o.spec as object),
                    destinationServiceAccounts: [{ server: "https://kubernetes.default.svc", namespace: "alpha-*", defaultServiceAccount: "argocd-sync" }],
                },
            }));
            expectFail(
                await verify(fixed, world),
                "argocd.regulated-identities",
                /no destinationServiceAccounts entry of project tenants matches payments-prod: ArgoCD refuses to sync there/,
            );
        });
    });

    describe("metric path", () => {
        it("metrics.templates expects the four metric templates and the two error-budget ones, and fails for a Job provider and another tenant", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            let results = await verify(config, world);
            assert.match(
                results.get("metrics.templates")!.note!,
                /^argo-rollouts-addon-success-rate, argo-rollouts-addon-success-rate-finite, argo-rollouts-addon-latency-p99, argo-rollouts-addon-latency-p99-finite, argo-rollouts-addon-error-budget, argo-rollouts-addon-error-budget-wait at http:\/\/mimir-gateway\.observability\.svc:80\/prometheus$/,
            );
            replace(world, "ClusterAnalysisTemplate", "argo-rollouts-addon-latency-p99", (o) => ({
                ...o,
                spec: { ...(o.spec as object), metrics: [fixture("job-provider-metric.json")] },
            }));
            replace(world, "ClusterAnalysisTemplate", "argo-rollouts-addon-error-budget", (o) => ({
                ...o,
                spec: JSON.parse(JSON.stringify(o.spec).replace('"value":"hub"', '"value":"preprod"')),
            }));
            results = await verify(config, world);
            expectFail(
                results,
                "metrics.templates",
                /ClusterAnalysisTemplate argo-rollouts-addon-latency-p99: metric success-rate uses the job provider, not prometheus/,
            );
            expectFail(
                results,
                "metrics.templates",
                /ClusterAnalysisTemplate argo-rollouts-addon-error-budget: .* sends X-Scope-OrgID: preprod, this cluster's tenant is hub/,
            );
        });

        it("metrics.templates fails for a finite template that never ends and a query without the stack's minRequests floor", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "ClusterAnalysisTemplate", "argo-rollouts-addon-success-rate-finite", (o) => {
                const spec = o.spec as { metrics: Record<string, unknown>[] };
                const { count: _count, ...metric } = spec.metrics[0];
                return { ...o, spec: { ...spec, metrics: [metric] } };
            });
            replace(world, "ClusterAnalysisTemplate", "argo-rollouts-addon-latency-p99", (o) => ({
                ...o,
                spec: JSON.parse(JSON.stringify(o.spec).replace(/>= 50/g, ">= 5")),
            }));
            const results = await verify(config, world);
            expectFail(
                results,
                "metrics.templates",
                /argo-rollouts-addon-success-rate-finite: metric success-rate has an interval and no count, so it runs indefinitely: a Rollout referencing argo-rollouts-addon-success-rate-finite in a step or pre\/post-promotion analysis is refused \(InvalidSpec\)/,
            );
            expectFail(
                results,
                "metrics.templates",
                /argo-rollouts-addon-latency-p99: spec\.metrics\[0\]\.provider\.prometheus\.query is .*>= 5\).*, the stack declares .*>= 50\)/,
            );
            assert.doesNotMatch(found(results, "metrics.templates"), /\.count is/, "the endless template is named once, in its own words");
        });

        it("metrics.query fails when Mimir refuses the tenant through the service proxy", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            world.proxy = () => fixture<{ status: number; body: string }>("mimir-no-org-id.json");
            const results = await verify(config, world);
            expectFail(results, "metrics.query", /http:\/\/mimir-gateway\.observability\.svc:80\/prometheus \(tenant hub\): HTTP 401: no org id/);
            assert.ok(
                server!.requests.some((r) =>
                    r.startsWith("GET /api/v1/namespaces/observability/services/mimir-gateway:80/proxy/prometheus/api/v1/query?query=count"),
                ),
            );
        });

        it("metrics.query is skipped with the in-cluster command when verify may not use the service proxy", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            world.authorizeSelf = (a) => ({ allowed: !(a.resource === "services" && a.subresource === "proxy") });
            const results = await verify(config, world);
            assert.strictEqual(status(results, "metrics.query"), "SKIP");
            assert.match(
                results.get("metrics.query")!.note!,
                /kubectl -n argo-rollouts debug .* --profile=restricted --image=registry\.platform\.test\/mirror\/curlimages\/curl@sha256:d{64} -- curl -sS -H 'X-Scope-OrgID: hub'/,
            );
        });

        it("metrics.query on a spoke calls its read endpoint directly and skips when it is out of reach", async () => {
            const raw = {
                cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
                mimir: { readEndpoint: "https://mimir-preprod.hub.test.example/prometheus" },
                spokes: undefined,
            };
            const config = verifyConfig(raw);
            const world = healthyCluster(config);
            const calls: { url: string; headers: Record<string, string> }[] = [];
            let results = await verify(config, world, {
                httpGet: async (url, headers) => {
                    calls.push({ url, headers });
                    return { status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) };
                },
            });
            expectPass(results, "metrics.query");
            assert.strictEqual(status(results, "metrics.spoke-routes"), "SKIP");
            assert.strictEqual(
                calls[0].url,
                `https://mimir-preprod.hub.test.example/prometheus/api/v1/query?query=${encodeURIComponent('count(http_server_request_duration_seconds_count{k8s_namespace_name!="",k8s_replicaset_name!=""})')}`,
            );
            assert.match(
                results.get("metrics.query")!.note!,
                /= 37 series, 37 with http_route; 1 Rollout with a request gate, none with a probe route folded into a counted route$/,
            );
            assert.strictEqual(calls[2].url, `https://mimir-preprod.hub.test.example/prometheus/api/v1/query?query=${encodeURIComponent(FOLDED_ROUTE_QUERY)}`);
            assert.strictEqual(
                calls[1].url,
                `https://mimir-preprod.hub.test.example/prometheus/api/v1/query?query=${encodeURIComponent('count(http_server_request_duration_seconds_count{k8s_namespace_name!="",k8s_replicaset_name!="",http_route!=""})')}`,
            );
            assert.deepStrictEqual(calls[0].headers, { "X-Scope-OrgID": "preprod" });
            results = await verify(config, world, { httpGet: async () => Promise.reject(new Error("getaddrinfo ENOTFOUND mimir-preprod.hub.test.example")) });
            assert.strictEqual(status(results, "metrics.query"), "SKIP");
            assert.match(results.get("metrics.query")!.note!, /not reachable from here .*ENOTFOUND.*kubectl -n argo-rollouts debug/);
        });

        it("metrics.query fails when no series carries the labels the gates select on, and on an untrusted certificate", async () => {
            const raw = {
                cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
                mimir: { readEndpoint: "https://mimir-preprod.hub.test.example/prometheus" },
                spokes: undefined,
            };
            const config = verifyConfig(raw);
            const world = healthyCluster(config);
            const empty = { status: "success", data: { resultType: "vector", result: [] } };
            let results = await verify(config, world, { httpGet: async () => ({ status: 200, body: JSON.stringify(empty) }) });
            expectFail(
                results,
                "metrics.query",
                /answered, but no http_server_request_duration_seconds_count series with k8s_namespace_name and k8s_replicaset_name in tenant preprod: every gate of this cluster would be Inconclusive/,
            );
            results = await verify(config, world, { httpGet: async () => Promise.reject(new Error("unable to verify the first certificate")) });
            expectFail(
                results,
                "metrics.query",
                /unable to verify the first certificate: no CA verify trusts issued the endpoint's certificate \(the public roots; the stack sets no mimir\.readCaBundle\); the controller's gates query it with the same trust and fail the same way\. Set argo-rollouts-addon:mimir\.readCaBundle in the spoke's stack file/,
            );
            assert.doesNotMatch(found(results, "metrics.query"), /NODE_EXTRA_CA_CERTS/);
        });

        it("metrics.query fails when no series carries http_route while analysis.excludeRoutes leaves probes out, and not when it is empty", async () => {
            const raw = {
                cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
                mimir: { readEndpoint: "https://mimir-preprod.hub.test.example/prometheus" },
                spokes: undefined,
            };
            const vector = (n: number) => ({
                status: 200,
                body: JSON.stringify({ status: "success", data: { resultType: "vector", result: n === 0 ? [] : [{ metric: {}, value: [1, String(n)] }] } }),
            });
            // Beyla without routes: every series has the Kubernetes labels, none has http_route.
            const noRoutes = async (url: string) => vector(decodeURIComponent(url).includes('http_route!=""') ? 0 : 12);
            const config = verifyConfig(raw);
            let results = await verify(config, healthyCluster(config), { httpGet: noRoutes });
            expectFail(
                results,
                "metrics.query",
                /12 series carry k8s_namespace_name and k8s_replicaset_name, none carries http_route: the gates cannot leave out the kubelet's probes \(analysis\.excludeRoutes\)/,
            );
            const countAll = verifyConfig({ ...raw, analysis: { excludeRoutes: [] } });
            results = await verify(countAll, healthyCluster(countAll), { httpGet: noRoutes });
            expectPass(results, "metrics.query");
            assert.match(results.get("metrics.query")!.note!, /= 12 series \(analysis\.excludeRoutes is empty: every request counts, probes included\)$/);
        });

        it("metrics.query fails when a gated Rollout's series carry a route Beyla folded a probe into, and only then", async () => {
            const raw = {
                cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
                mimir: { readEndpoint: "https://mimir-preprod.hub.test.example/prometheus" },
                spokes: undefined,
            };
            const vector = (result: unknown[]) => ({ status: 200, body: JSON.stringify({ status: "success", data: { resultType: "vector", result } }) });
            const series = (ns: string, rs: string, route: string) => ({
                metric: { k8s_namespace_name: ns, k8s_replicaset_name: rs, http_route: route },
                value: [1, "1"],
            });
            // Mimir's answers: 37 series with the gate labels and routes; the wildcard routes as listed.
            const mimir = (folded: unknown[]) => async (url: string) =>
                decodeURIComponent(url).includes("count by") ? vector(folded) : vector([{ metric: {}, value: [1, "37"] }]);
            const gated = (world: ClusterWorld) =>
                replace(world, "Rollout", "alpha-shop", (o) => ({
                    ...o,
                    spec: {
                        ...(o.spec as object),
                        strategy: {
                            canary: {
                                analysis: { templates: [{ templateName: "argo-rollouts-addon-latency-p99", clusterScope: true }] },
                                steps: [
                                    { setWeight: 20 },
                                    { analysis: { templates: [{ templateName: "argo-rollouts-addon-success-rate-finite", clusterScope: true }] } },
                                ],
                            },
                        },
                    },
                }));
            const answer = [
                series("alpha-shop-prod", "alpha-shop-6d9f7c8b5", "/*"),
                // Not a probe's fold with the default probe routes.
                series("alpha-shop-prod", "alpha-shop-6d9f7c8b5", "/api/*"),
                // Another Rollout's ReplicaSet (alpha-shop-canary), and a workload no gate reads.
                series("alpha-shop-prod", "alpha-shop-canary-5f6d7c8b9", "/*"),
                series("web", "web-7c9d5f8b64", "/*"),
            ];
            let config = verifyConfig(raw);
            let world = healthyCluster(config);
            gated(world);
            let results = await verify(config, world, { httpGet: mimir(answer) });
            expectFail(
                results,
                "metrics.query",
                /^Rollout alpha-shop-prod\/alpha-shop: its series \(ReplicaSet alpha-shop-6d9f7c8b5\) carry http_route="\/\*", a route Beyla folded that can hold the probe routes \/healthz, \/livez, \/readyz, \/health, \/ready, \/live; argo-rollouts-addon-latency-p99, argo-rollouts-addon-success-rate-finite count it .*routes\.ignored_patterns .*ignore_mode metrics/,
            );
            assert.strictEqual(results.get("metrics.query")!.findings.length, 1, found(results, "metrics.query"));
            // The same series, the Rollout without a request gate: nothing to report.
            world = healthyCluster(config);
            results = await verify(config, world, { httpGet: mimir(answer) });
            expectPass(results, "metrics.query");
            // Multi-segment probes fold at any level; a route listed in excludeRoutes is not counted.
            config = verifyConfig({ ...raw, analysis: { excludeRoutes: ["/actuator/health/liveness", "/*"] } });
            world = healthyCluster(config);
            gated(world);
            results = await verify(config, world, { httpGet: mimir([...answer, series("alpha-shop-prod", "alpha-shop-6d9f7c8b5", "/actuator/*/liveness")]) });
            expectFail(
                results,
                "metrics.query",
                /^Rollout alpha-shop-prod\/alpha-shop: its series \(ReplicaSet alpha-shop-6d9f7c8b5\) carry http_route="\/actuator\/\*\/liveness", a route Beyla folded that can hold the probe route \/actuator\/health\/liveness;/,
            );
            assert.strictEqual(results.get("metrics.query")!.findings.length, 1, found(results, "metrics.query"));
        });

        describe("metrics.query against a read endpoint with a private CA", () => {
            const tlsFile = (f: string) => fs.readFileSync(path.join(__dirname, "fixtures", "tls", f), "utf8");
            let endpoint: https.Server;
            let port = 0;
            const asked: { tenant: unknown; path: string }[] = [];
            before(async () => {
                // Mimir's read endpoint behind a certificate of the test CA (fixtures/tls), answering the probe.
                endpoint = https.createServer({ cert: tlsFile("server.crt"), key: tlsFile("server.key") }, (req, res) => {
                    asked.push({ tenant: req.headers["x-scope-orgid"], path: (req.url ?? "").split("?")[0] });
                    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(fixture("prometheus-vector.json")));
                });
                await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
                port = (endpoint.address() as { port: number }).port;
            });
            after(() => new Promise<void>((resolve) => endpoint.close(() => resolve())));
            const spoke = (readCaBundle?: string) =>
                verifyConfig({
                    cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
                    mimir: { readEndpoint: `https://127.0.0.1:${port}/prometheus`, readCaBundle },
                    spokes: undefined,
                });

            it("trusts the stack's mimir.readCaBundle as the controller does, and fails naming the key when it is missing or another CA", async () => {
                let config = spoke(tlsFile("ca.crt"));
                let results = await verify(config, healthyCluster(config));
                expectPass(results, "metrics.query");
                assert.deepStrictEqual(asked.at(-1), { tenant: "preprod", path: "/prometheus/api/v1/query" });
                config = spoke();
                results = await verify(config, healthyCluster(config));
                expectFail(
                    results,
                    "metrics.query",
                    new RegExp(
                        `https://127\\.0\\.0\\.1:${port}/prometheus \\(tenant preprod\\): unable to verify the first certificate: no CA verify trusts .*Set argo-rollouts-addon:mimir\\.readCaBundle`,
                    ),
                );
                config = spoke(tlsFile("other-ca.crt"));
                results = await verify(config, healthyCluster(config));
                expectFail(
                    results,
                    "metrics.query",
                    /neither the public roots nor the 1 CA certificate of argo-rollouts-addon:mimir\.readCaBundle issued the endpoint's certificate/,
                );
            });

            it("hands the bundle to the GET, adds it to the public roots, and ignores NODE_EXTRA_CA_CERTS", async () => {
                const config = spoke(tlsFile("ca.crt"));
                let given: { extraCa?: string } | undefined;
                await verify(config, healthyCluster(config), {
                    httpGet: async (_url, _headers, trust) => ((given = trust), { status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) }),
                });
                assert.strictEqual(given?.extraCa, tlsFile("ca.crt"));
                assert.deepStrictEqual(trustedCas(undefined), [...tls.rootCertificates]);
                assert.deepStrictEqual(trustedCas("X"), [...tls.rootCertificates, "X"]);
                assert.ok(tls.rootCertificates.length > 100);
                // A process whose default store trusts the test CA through NODE_EXTRA_CA_CERTS: a plain
                // https.get passes, verify's GET without the bundle does not.
                const script = `
                    const https = require("https");
                    const { directGet } = require("./tools/verify/index");
                    const url = "https://127.0.0.1:${port}/prometheus/api/v1/query";
                    new Promise((ok, no) => https.get(url, (r) => { r.resume(); r.on("end", () => ok(r.statusCode)); }).on("error", no))
                        .then((plain) => directGet(url, {}, {}).then(() => [plain, "trusted"], (e) => [plain, e.code]))
                        .then((r) => console.log(JSON.stringify(r)), (e) => console.log(JSON.stringify(["plain failed", e.code])));`;
                const out = await new Promise<string>((resolve, reject) =>
                    execFile(
                        process.execPath,
                        ["-r", "ts-node/register/transpile-only", "-e", script],
                        { cwd: path.join(__dirname, ".."), env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(__dirname, "fixtures", "tls", "ca.crt") } },
                        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout.trim())),
                    ),
                );
                assert.deepStrictEqual(JSON.parse(out), [200, "UNABLE_TO_VERIFY_LEAF_SIGNATURE"]);
            });

            it("names what a bundle cannot fix: an expired certificate, another hostname", () => {
                assert.strictEqual(
                    certificateProblem({ code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE", message: "unable to verify the first certificate" }),
                    "untrusted",
                );
                assert.strictEqual(
                    certificateProblem({ code: "SELF_SIGNED_CERT_IN_CHAIN", message: "self-signed certificate in certificate chain" }),
                    "untrusted",
                );
                assert.strictEqual(certificateProblem({ code: "CERT_HAS_EXPIRED", message: "certificate has expired" }), "validity");
                assert.strictEqual(
                    certificateProblem({ code: "ERR_TLS_CERT_ALTNAME_INVALID", message: "Hostname/IP does not match certificate's altnames" }),
                    "hostname",
                );
                assert.strictEqual(certificateProblem({ code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:443" }), undefined);
                assert.match(
                    certificateAdvice("hostname", undefined, "https://mimir-preprod.hub.example/prometheus"),
                    /does not name mimir-preprod\.hub\.example/,
                );
                assert.doesNotMatch(certificateAdvice("validity", "x", "https://a.example/prometheus"), /readCaBundle/);
            });
        });

        it("metrics.spoke-routes fails for a route that adds the tenant header or is not accepted (pushRouteOwner addon)", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            replace(world, "HTTPRoute", "mimir-spoke-preprod", (o) => {
                const text = JSON.stringify(o)
                    .replace(/"set":\[/g, '"add":[')
                    .replace('"status":"True","reason":"ResolvedRefs"', '"status":"False","reason":"BackendNotFound"');
                return JSON.parse(text) as typeof o;
            });
            const results = await verify(config, world);
            expectFail(
                results,
                "metrics.spoke-routes",
                /HTTPRoute observability\/mimir-spoke-preprod: rule 0 \(PathPrefix \/api\/v1\/push\) adds X-Scope-OrgID instead of setting it/,
            );
            expectFail(results, "metrics.spoke-routes", /reaches Mimir setting X-Scope-OrgID to nothing, not preprod/);
            expectFail(results, "metrics.spoke-routes", /parent internal: ResolvedRefs=False \(BackendNotFound/);
        });

        it("metrics.spoke-routes checks only the read route beside the observability module's ingest route, and refuses a path Mimir's read rule does not name", async () => {
            const config = verifyConfig({ mimir: { pushRouteOwner: "observability" } });
            const world = healthyCluster(config);
            let results = await verify(config, world);
            expectPass(results, "metrics.spoke-routes");
            assert.strictEqual(
                results.get("metrics.spoke-routes")!.note,
                "mimir-spoke-preprod-read (read); other routes on the spokes' hostnames: observability/mimir-ingest-preprod",
            );
            assert.ok(
                !server!.requests.some((r) => r.endsWith("/httproutes/mimir-spoke-preprod")),
                "the observability module's route is not the hub stack's to check",
            );
            replace(world, "HTTPRoute", "mimir-spoke-preprod-read", (o) => {
                const spec = o.spec as { rules: { matches: { path: { type: string; value: string } }[] }[] };
                const rules = spec.rules.map((r) => ({ ...r, matches: [...r.matches, { path: { type: "PathPrefix", value: "/prometheus" } }] }));
                return { ...o, spec: { ...spec, rules } };
            });
            results = await verify(config, world);
            expectFail(
                results,
                "metrics.spoke-routes",
                /HTTPRoute observability\/mimir-spoke-preprod-read: routes PathPrefix \/prometheus, which the hub does not declare/,
            );
            // The hub's own route is held to its declaration, once: the audit of other routes skips it.
            assert.strictEqual(results.get("metrics.spoke-routes")!.findings.length, 1);
        });

        it("metrics.spoke-routes fails when the read route is missing, and audits the spoke's hostname even where the hub declares no route", async () => {
            const config = verifyConfig({ mimir: { pushRouteOwner: "observability" } });
            const world = healthyCluster(config);
            world.objects = world.objects.filter((o) => o.metadata?.name !== "mimir-spoke-preprod-read");
            expectFail(await verify(config, world), "metrics.spoke-routes", /mimir-spoke-preprod-read: not found/);
            const quiet = verifyConfig({
                mimir: { pushRouteOwner: "observability" },
                spokes: [{ name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.test.example", query: false }],
            });
            const quietWorld = healthyCluster(quiet);
            let results = await verify(quiet, quietWorld);
            expectPass(results, "metrics.spoke-routes");
            assert.match(
                results.get("metrics.spoke-routes")!.note!,
                /^the hub declares no spoke route .*; other routes on the spokes' hostnames: observability\/mimir-ingest-preprod$/,
            );
            replace(quietWorld, "HTTPRoute", "mimir-ingest-preprod", (o) => JSON.parse(JSON.stringify(o).replace('"/api/v1/push"', '"/"')) as typeof o);
            results = await verify(quiet, quietWorld);
            expectFail(
                results,
                "metrics.spoke-routes",
                /HTTPRoute observability\/mimir-ingest-preprod: rule 0 \(PathPrefix \/\) serves mimir-preprod\.hub\.test\.example/,
            );
        });

        describe("metrics.spoke-routes audits every route on a spoke's hostname and listener", () => {
            const observability = () => verifyConfig({ mimir: { pushRouteOwner: "observability" } });
            const mimirBackend = (namespace?: string) => ({
                group: "",
                kind: "Service",
                name: "mimir-gateway",
                ...(namespace ? { namespace } : {}),
                port: 80,
                weight: 1,
            });
            const setTenant = (tenant: string) => ({
                type: "RequestHeaderModifier",
                requestHeaderModifier: { set: [{ name: "X-Scope-OrgID", value: tenant }] },
            });
            const route = (namespace: string, name: string, spec: Record<string, unknown>): KubeObject => ({
                apiVersion: "gateway.networking.k8s.io/v1",
                kind: "HTTPRoute",
                metadata: { name, namespace, generation: 1 },
                spec,
            });
            const internal = (sectionName?: string) => ({
                group: "gateway.networking.k8s.io",
                kind: "Gateway",
                name: "internal",
                namespace: "gateway-system",
                ...(sectionName ? { sectionName } : {}),
            });

            it("fails for the observability module's ingest route with a /prometheus prefix: it reaches the ruler beside the hub's read route", async () => {
                const config = observability();
                const world = healthyCluster(config);
                replace(world, "HTTPRoute", "mimir-ingest-preprod", (o) => {
                    const spec = o.spec as { rules: unknown[] };
                    return {
                        ...o,
                        spec: {
                            ...spec,
                            rules: [
                                ...spec.rules,
                                {
                                    matches: [{ path: { type: "PathPrefix", value: "/prometheus" } }],
                                    filters: [setTenant("preprod")],
                                    backendRefs: [mimirBackend()],
                                },
                            ],
                        },
                    };
                });
                const results = await verify(config, world);
                expectFail(
                    results,
                    "metrics.spoke-routes",
                    /^HTTPRoute observability\/mimir-ingest-preprod: rule 1 \(PathPrefix \/prometheus\) serves mimir-preprod\.hub\.test\.example \(spoke preprod\) on gateway-system\/internal\/https and reaches Mimir's gateway Service beyond remote write and Mimir's read endpoints: PathPrefix \/prometheus also reaches \/prometheus\/config\/v1\/rules \(the ruler's rule API, which writes and deletes rule groups\)\. Narrow it to remote write \(PathPrefix \/api\/v1\/push\), or remove it/,
                );
                assert.strictEqual(results.get("metrics.spoke-routes")!.findings.length, 1, "the tenant is set: only the paths are wrong");
            });

            it("fails for a wildcard route of another namespace on every listener that sets another tenant, and for a mirror to Mimir", async () => {
                const config = observability();
                const world = healthyCluster(config);
                world.objects.push(
                    route("team-x", "catch-all", {
                        parentRefs: [internal()],
                        hostnames: ["*.hub.test.example"],
                        rules: [
                            {
                                matches: [{ path: { type: "PathPrefix", value: "/api/v1/push" } }],
                                filters: [setTenant("team-x")],
                                backendRefs: [mimirBackend("observability")],
                            },
                        ],
                    }),
                    route("team-y", "mirror", {
                        parentRefs: [internal("https")],
                        rules: [
                            {
                                filters: [
                                    { type: "RequestMirror", requestMirror: { backendRef: { name: "mimir-gateway", namespace: "observability", port: 80 } } },
                                ],
                                backendRefs: [{ name: "team-y-app", port: 8080 }],
                            },
                        ],
                    }),
                );
                const text = found(await verify(config, world), "metrics.spoke-routes");
                assert.match(
                    text,
                    /HTTPRoute team-x\/catch-all: rule 0 \(PathPrefix \/api\/v1\/push\) serves mimir-preprod\.hub\.test\.example \(spoke preprod\) on gateway-system\/internal\/https and reaches Mimir through backendRefs\[0\] but sets X-Scope-OrgID to team-x: every rule to Mimir on a spoke's hostname must set X-Scope-OrgID: preprod/,
                );
                assert.match(
                    text,
                    /HTTPRoute team-y\/mirror: rule 0 \(PathPrefix \/\) serves .* beyond remote write and Mimir's read endpoints: PathPrefix \/ also reaches \/prometheus\/config\/v1\/rules/,
                );
                assert.match(
                    text,
                    /HTTPRoute team-y\/mirror: rule 0 \(PathPrefix \/\) .* reaches Mimir through filters\[0\] \(RequestMirror\) but sets no X-Scope-OrgID/,
                );
            });

            it("leaves alone routes that do not serve the spoke's hostname on its listener, or do not reach Mimir", async () => {
                const config = observability();
                const world = healthyCluster(config);
                const wide = { matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [mimirBackend("observability")] };
                world.objects.push(
                    route("team-a", "other-host", {
                        parentRefs: [internal("https")],
                        hostnames: ["grafana.hub.test.example", "*.other.example"],
                        rules: [wide],
                    }),
                    route("team-b", "other-listener", { parentRefs: [internal("http")], hostnames: ["mimir-preprod.hub.test.example"], rules: [wide] }),
                    route("team-c", "other-gateway", {
                        parentRefs: [{ ...internal("https"), name: "public" }],
                        hostnames: ["mimir-preprod.hub.test.example"],
                        rules: [wide],
                    }),
                    route("team-d", "other-backend", {
                        parentRefs: [internal("https")],
                        hostnames: ["mimir-preprod.hub.test.example"],
                        rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [{ name: "mimir-gateway", port: 80 }] }],
                    }),
                    route("team-e", "apex", { parentRefs: [internal("https")], hostnames: ["*.mimir-preprod.hub.test.example"], rules: [wide] }),
                );
                const results = await verify(config, world);
                expectPass(results, "metrics.spoke-routes");
                // team-d's route reaches its own mimir-gateway Service, not the one in observability.
                assert.match(
                    results.get("metrics.spoke-routes")!.note!,
                    /other routes on the spokes' hostnames: observability\/mimir-ingest-preprod, team-d\/other-backend$/,
                );
            });

            it("is skipped, saying why, when verify may not list HTTPRoutes, and still fails the hub's own broken route", async () => {
                const config = observability();
                const world = healthyCluster(config);
                world.authorizeSelf = (a) => ({ allowed: !(a.resource === "httproutes" && a.verb === "list") });
                let results = await verify(config, world);
                assert.strictEqual(status(results, "metrics.spoke-routes"), "SKIP");
                assert.strictEqual(
                    results.get("metrics.spoke-routes")!.note,
                    "mimir-spoke-preprod-read (read): as declared; but verify may not list gateway.networking.k8s.io/httproutes in every namespace, so the other routes on the spokes' hostnames were not audited (see Verify's own permissions)",
                );
                assert.ok(!server!.requests.some((r) => r.startsWith("GET /apis/gateway.networking.k8s.io/v1/httproutes")), "verify listed what it may not");
                world.objects = world.objects.filter((o) => o.metadata?.name !== "mimir-spoke-preprod-read");
                world.authorizeSelf = (a) => ({ allowed: a.resource !== "gateways" });
                results = await verify(config, world);
                expectFail(results, "metrics.spoke-routes", /mimir-spoke-preprod-read: not found/);
                assert.match(
                    results.get("metrics.spoke-routes")!.note!,
                    /^other routes not audited: verify may not get gateway\.networking\.k8s\.io\/gateways in gateway-system \(internal\)/,
                );
            });

            it("fails when the ingest Gateway or a spoke's listener is missing", async () => {
                const config = verifyConfig({
                    spokes: [{ name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.test.example", query: true, listener: "spoke-preprod" }],
                });
                const world = healthyCluster(config);
                expectFail(
                    await verify(config, world),
                    "metrics.spoke-routes",
                    /Gateway gateway-system\/internal: has no listener spoke-preprod, which spoke preprod's routes attach to/,
                );
                world.objects = world.objects.filter((o) => o.kind !== "Gateway");
                expectFail(await verify(config, world), "metrics.spoke-routes", /Gateway gateway-system\/internal: not found/);
            });
        });
    });

    describe("smoke canary", () => {
        it("smoke.outcome fails when the canary is paused on an inconclusive gate", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            setSmokeStatus(world, config, fixture("smoke-status-paused-inconclusive.json"));
            const results = await verify(config, world);
            expectFail(
                results,
                "smoke.outcome",
                /Rollout rollouts-smoke\/rollouts-smoke: is paused, expected promoted: phase Paused \(InconclusiveAnalysisRun\)/,
            );
        });

        it("smoke.outcome passes for failGate when the gate aborted the canary and traffic is back on stable", async () => {
            const config = verifyConfig({ smokeTest: { failGate: true } });
            const world = healthyCluster(config);
            setSmokeStatus(world, config, fixture("smoke-status-aborted.json"), 5);
            world.objects.push(fixture("analysisrun-failed.json"));
            const results = await verify(config, world);
            expectPass(results, "smoke.outcome");
            assert.match(results.get("smoke.outcome")!.note!, /pod hash 7f6b8d9c55, gate runs: Background Failed/);
        });

        it("smoke.outcome fails for failGate when the run errored instead of failing, traffic stayed on the canary, or the template is not the stack's", async () => {
            const config = verifyConfig({ smokeTest: { failGate: true } });
            const world = healthyCluster(config);
            setSmokeStatus(world, config, fixture("smoke-status-aborted.json"), 5);
            const run = fixture("analysisrun-failed.json");
            world.objects.push({ ...run, status: { ...(run.status as object), phase: "Error" } });
            replace(world, "HTTPRoute", "rollouts-smoke", (o) => JSON.parse(JSON.stringify(o).replace('"weight":0', '"weight":25')) as typeof o);
            let results = await verify(config, world);
            expectFail(results, "smoke.outcome", /no Background AnalysisRun of pod hash 7f6b8d9c55 Failed \(Background Error\)/);
            expectFail(results, "smoke.outcome", /HTTPRoute rollouts-smoke\/rollouts-smoke: rollouts-smoke-canary still has weight 25 after the abort/);
            // The Rollout still carries the healthy template: the last `up` with failGate did not land.
            results = await verify(config, healthyCluster(verifyConfig()));
            expectFail(results, "smoke.outcome", /its pod template is not the stack's/);
        });

        it("smoke.outcome SKIPs a promotion no gate judged (a first deploy, a fast-tracked rollback): nothing proven", async () => {
            for (const strategy of ["canary", "blueGreen"] as const) {
                const config = verifyConfig({ smokeTest: { strategy } });
                const world = healthyCluster(config);
                world.objects = world.objects.filter((o) => o.kind !== "AnalysisRun");
                const result = (await verify(config, world)).get("smoke.outcome")!;
                assert.strictEqual(result.status, "SKIP", `${strategy}: ${JSON.stringify(result)}`);
                assert.match(result.note ?? "", /^promoted, but no gate ran for revision \S+ \(pod hash 58d4c7f9b6\): nothing proven/);
            }
        });

        it("smoke.outcome (blue/green) passes when promoted: stableRS is the current hash and the active Service selects it", async () => {
            const config = verifyConfig({ smokeTest: { strategy: "blueGreen" } });
            const world = healthyCluster(config);
            const run = fixture("analysisrun-failed-prepromotion.json");
            for (const [type, infix] of [
                ["PrePromotion", "pre"],
                ["PostPromotion", "post"],
            ]) {
                world.objects.push({
                    ...run,
                    metadata: {
                        ...run.metadata,
                        name: `rollouts-smoke-58d4c7f9b6-4-${infix}`,
                        labels: { ...run.metadata?.labels, "rollouts-pod-template-hash": "58d4c7f9b6", "rollout-type": type },
                    },
                    status: { phase: "Successful" },
                });
            }
            const results = await verify(config, world);
            expectPass(results, "smoke.outcome");
            assert.match(results.get("smoke.outcome")!.what, /the smoke Rollout \(blueGreen\) is promoted/);
            assert.match(results.get("smoke.outcome")!.note!, /gate runs: PrePromotion Successful, PostPromotion Successful/);
        });

        it("smoke.outcome (blue/green) fails when the active Service is not on the promoted hash, or the Rollout still runs the canary strategy", async () => {
            const config = verifyConfig({ smokeTest: { strategy: "blueGreen" } });
            const world = healthyCluster(config);
            replace(
                world,
                "Service",
                "rollouts-smoke-active",
                (o) =>
                    JSON.parse(JSON.stringify(o).replace('"rollouts-pod-template-hash":"58d4c7f9b6"', '"rollouts-pod-template-hash":"4c8b9d7f6a"')) as typeof o,
            );
            expectFail(
                await verify(config, world),
                "smoke.outcome",
                /Service rollouts-smoke\/rollouts-smoke-active: selects rollouts-pod-template-hash=4c8b9d7f6a, the promoted version is 58d4c7f9b6/,
            );
            expectFail(await verify(config, healthyCluster(verifyConfig())), "smoke.outcome", /its strategy is not the stack's blueGreen/);
        });

        it("smoke.outcome (blue/green) passes for failGate when the preview gate aborted it before the switch: the active Service never left stable", async () => {
            const config = verifyConfig({ smokeTest: { strategy: "blueGreen", failGate: true } });
            const world = healthyCluster(config);
            setSmokeStatus(world, config, fixture("smoke-status-bluegreen-aborted.json"), 5);
            world.objects.push(fixture("analysisrun-failed-prepromotion.json"));
            const results = await verify(config, world);
            expectPass(results, "smoke.outcome");
            assert.match(results.get("smoke.outcome")!.note!, /gate runs: PrePromotion Failed/);
        });

        it("smoke.outcome (blue/green) fails for failGate when the active Service selects the aborted version, or only another kind of run failed", async () => {
            const config = verifyConfig({ smokeTest: { strategy: "blueGreen", failGate: true } });
            const world = healthyCluster(config);
            setSmokeStatus(world, config, fixture("smoke-status-bluegreen-aborted.json"), 5);
            world.objects.push(fixture("analysisrun-failed.json"));
            replace(
                world,
                "Service",
                "rollouts-smoke-active",
                (o) =>
                    JSON.parse(JSON.stringify(o).replace('"rollouts-pod-template-hash":"58d4c7f9b6"', '"rollouts-pod-template-hash":"7f6b8d9c55"')) as typeof o,
            );
            const results = await verify(config, world);
            expectFail(
                results,
                "smoke.outcome",
                /Service rollouts-smoke\/rollouts-smoke-active: selects rollouts-pod-template-hash=7f6b8d9c55, after the abort it must be back on the stable ReplicaSet 58d4c7f9b6/,
            );
            expectFail(results, "smoke.outcome", /no PrePromotion or PostPromotion AnalysisRun of pod hash 7f6b8d9c55 Failed \(no gate runs\)/);
        });

        it("smoke.outcome expects the plan the smoke stage builds: this cluster's gate timing, and blue/green's preview gate", async () => {
            const slow = verifyConfig({ analysis: { initialDelay: "8m" } });
            expectPass(await verify(slow, healthyCluster(slow)), "smoke.outcome");
            // The smoke Rollout as the default timing would pause it: each weight ends before this cluster's gate measures.
            expectFail(
                await verify(slow, healthyCluster(verifyConfig())),
                "smoke.outcome",
                /its strategy is not the stack's canary \(spec\.strategy\.canary\.steps\[1\]\.pause\.duration is "6m", the stack declares "9m"/,
            );
            const blueGreen = verifyConfig({ smokeTest: { strategy: "blueGreen" } });
            const world = healthyCluster(blueGreen);
            replace(world, "Rollout", "rollouts-smoke", (o) => {
                const spec = o.spec as { strategy: { blueGreen: Record<string, unknown> } };
                const { prePromotionAnalysis: _gate, ...rest } = spec.strategy.blueGreen;
                return { ...o, spec: { ...spec, strategy: { blueGreen: rest } } };
            });
            expectFail(await verify(blueGreen, world), "smoke.outcome", /spec\.strategy\.blueGreen\.prePromotionAnalysis is nothing/);
        });

        it("smoke.outcome waits with --smoke-timeout until the canary settles", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            const progressing = { ...fixture<Record<string, unknown>>("smoke-status-promoted.json"), phase: "Progressing", stableRS: "4c8b9d7f6a" };
            setSmokeStatus(world, config, progressing);
            let clock = NOW.getTime();
            let looks = 0;
            const results = await verify(config, world, {
                smokeTimeoutSeconds: 600,
                now: () => new Date(clock),
                sleep: async (ms) => {
                    clock += ms;
                    if (++looks === 3) {
                        setSmokeStatus(world, config, fixture("smoke-status-promoted.json"));
                    }
                },
            });
            expectPass(results, "smoke.outcome");
            assert.strictEqual(looks, 3);
        });

        it("smoke.outcome is skipped when the smoke test is off", async () => {
            const config = verifyConfig({ smokeTest: { enabled: false, hostname: undefined, image: undefined, loadImage: undefined } });
            const results = await verify(config, healthyCluster(verifyConfig()));
            assert.strictEqual(status(results, "smoke.outcome"), "SKIP");
        });
    });

    describe("reads the API server refuses", () => {
        it("fail the checks that needed them, pointing at verify's own permissions", async () => {
            const config = verifyConfig();
            const world = healthyCluster(config);
            server = await startFakeApiServer(world);
            const cluster = await connect({ connection: config.cluster.connection, kubeconfig: server.kubeconfig, context: "fake" });
            const forbidden = {
                ...cluster,
                list: async (p: string, s?: string) =>
                    p.includes("rolebindings") ? Promise.reject(new ReadError(p, 403, `GET ${p}: 403 forbidden`)) : cluster.list(p, s),
            };
            const results = new Map((await runVerify(config, forbidden, defaultOptions({ now: () => NOW }))).map((r) => [r.id, r]));
            assert.strictEqual(status(results, "rbac.editor-cannot-promote"), "FAIL");
            assert.strictEqual(results.get("rbac.editor-cannot-promote")!.readme, DOCS.permissions);
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

    it("says there is no kubeconfig at all, instead of reaching http://localhost:8080 under a made-up context", async () => {
        const saved = { KUBECONFIG: process.env.KUBECONFIG, HOME: process.env.HOME };
        const home = fs.mkdtempSync(path.join(os.tmpdir(), "verify-home-"));
        try {
            delete process.env.KUBECONFIG;
            process.env.HOME = home;
            const k8s = await loadClient();
            await assert.rejects(kubeConfigFor(k8s, { connection: { kind: "kubeconfig", context: "hub" } }), (e: Error) => {
                assert.ok(e instanceof ConnectionError, String(e));
                assert.match(
                    e.message,
                    /^no kubeconfig: KUBECONFIG is not set and .*\/\.kube\/config does not exist; give --kubeconfig, or set cluster\.kubeconfigPath/,
                );
                assert.doesNotMatch(e.message, /loaded-context/);
                return true;
            });
        } finally {
            for (const [k, v] of Object.entries(saved)) {
                if (v === undefined) {
                    delete process.env[k];
                } else {
                    process.env[k] = v;
                }
            }
        }
    });

    it("refuses an unknown kubeconfig context and an unreachable API server as connection errors", async () => {
        const server = await startFakeApiServer({ objects: [] });
        await assert.rejects(
            connect({ connection: { kind: "kubeconfig", context: "nope" }, kubeconfig: server.kubeconfig }),
            (e: Error) => e instanceof ConnectionError && /no context "nope"/.test(e.message),
        );
        const url = server.url;
        const kubeconfig = fs.readFileSync(server.kubeconfig, "utf8");
        await server.close();
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verify-gone-"));
        fs.writeFileSync(path.join(dir, "config"), kubeconfig);
        await assert.rejects(
            connect({ connection: { kind: "kubeconfig", context: "fake", path: path.join(dir, "config") } }),
            (e: Error) => e instanceof ConnectionError && e.message.includes(url),
        );
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it("prints its usage with the defaults for --help and exits 0", async () => {
        const out: string[] = [];
        assert.strictEqual(
            await verifyMain(
                ["--help"],
                (x) => out.push(x),
                () => undefined,
            ),
            0,
        );
        assert.match(out.join("\n"), /^usage: npm run verify -- --stack <name>[\s\S]*--kyverno-namespace <ns> +where Kyverno runs \(default: kyverno\)/);
    });

    it("parses its arguments and refuses bad ones", () => {
        assert.deepStrictEqual(
            { ...parseVerifyArgs(["--stack", "hub", "--json", "--context", "ctx", "--smoke-timeout", "900"]), configDir: "" },
            { stack: "hub", json: true, context: "ctx", kyvernoNamespace: "kyverno", smokeTimeoutSeconds: 900, configDir: "", printRole: false, without: [] },
        );
        assert.deepStrictEqual(parseVerifyArgs(["--stack", "hub", "--without", "kyverno", "--without", "mimir"]).without, ["kyverno", "mimir"]);
        assert.deepStrictEqual(parseVerifyArgs(["--stack=hub", "--without=kyverno", "--smoke-timeout=60"]), {
            ...parseVerifyArgs(["--stack", "hub", "--without", "kyverno", "--smoke-timeout", "60"]),
        });
        assert.throws(
            () => parseVerifyArgs(["--stack", "hub", "--without", "cilium"]),
            /--without takes one of rollouts-controller, kyverno, argocd, gateway-controller, mimir, got cilium/,
        );
        assert.throws(() => parseVerifyArgs([]), /usage: npm run verify -- --stack <name>/);
        assert.strictEqual(parseVerifyArgs(["--print-role"]).printRole, true);
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
                        "argo-rollouts-addon:imageRegistry": "registry.platform.test/mirror",
                        "argo-rollouts-addon:plugin": { delivery: "download", sha256: "a".repeat(64) },
                        "argo-rollouts-addon:policy": TEST_POLICY,
                        "argo-rollouts-addon:argocd": { projects: {}, applicationSets: {} },
                        ...extra,
                    },
                }),
            );
        beforeEach(async () => {
            dir = fs.mkdtempSync(path.join(os.tmpdir(), "verify-stack-"));
            const config = verifyConfig();
            server = await startFakeApiServer(healthyCluster(config));
        });
        afterEach(async () => {
            await server.close();
            fs.rmSync(dir, { recursive: true, force: true });
        });

        it("is 1 with a FAIL (the stack file's kubeconfig connection), with --json for pipelines", async () => {
            writeStack({ kubeconfigContext: "fake", kubeconfigPath: server.kubeconfig });
            const out: string[] = [];
            const code = await verifyMain(
                ["--stack", "test", "--config-dir", dir, "--json"],
                (s) => out.push(s),
                () => undefined,
            );
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
            const code = await verifyMain(
                ["--stack", "test", "--config-dir", dir],
                () => undefined,
                (s) => errors.push(s),
            );
            assert.strictEqual(code, 2);
            assert.match(
                errors.join("\n"),
                /stack "test": invalid configuration[\s\S]*argo-rollouts-addon:cluster\.role = "primary": must be one of hub, spoke/,
            );
        });

        it("is 2 when the cluster cannot be reached, and for bad arguments", async () => {
            writeStack({ kubeconfigContext: "missing-context", kubeconfigPath: server.kubeconfig });
            const errors: string[] = [];
            assert.strictEqual(
                await verifyMain(
                    ["--stack", "test", "--config-dir", dir],
                    () => undefined,
                    (s) => errors.push(s),
                ),
                2,
            );
            assert.match(errors.join("\n"), /stack "test": cannot verify: kubeconfig .* has no context "missing-context"/);
            assert.strictEqual(
                await verifyMain(
                    ["--json"],
                    () => undefined,
                    () => undefined,
                ),
                2,
            );
        });

        it("with --json, prints a JSON error document on stdout when it exits 2, so the pipeline's report is never empty", async () => {
            writeStack({ kubeconfigContext: "missing-context", kubeconfigPath: server.kubeconfig });
            for (const argv of [
                ["--stack", "test", "--config-dir", dir, "--json"],
                ["--json", "--smoke-timeout"],
            ]) {
                const printed: string[] = [];
                const errors: string[] = [];
                assert.strictEqual(
                    await verifyMain(
                        argv,
                        (s) => printed.push(s),
                        (s) => errors.push(s),
                    ),
                    2,
                );
                assert.strictEqual(printed.length, 1, argv.join(" "));
                const doc = JSON.parse(printed[0]) as { error: string; exitCode: number; results: unknown[]; stack?: string };
                assert.strictEqual(doc.exitCode, 2);
                assert.deepStrictEqual(doc.results, []);
                assert.strictEqual(doc.error, errors[0]);
            }
        });

        it("honours --kubeconfig and --context over an EKS stack's connection, and never reads KUBECONFIG for EKS", async () => {
            const eks = { kind: "eks" as const, clusterName: "platform-hub", region: "eu-west-1" };
            const k8s = await loadClient();
            const described: string[] = [];
            const describeEks = async (name: string) => {
                described.push(name);
                return { endpoint: "https://eks.test.example", certificateAuthority: Buffer.from("ca").toString("base64") };
            };
            const saved = process.env.KUBECONFIG;
            process.env.KUBECONFIG = server.kubeconfig;
            try {
                const viaStack = await kubeConfigFor(k8s, { connection: eks, describeEks });
                assert.strictEqual(viaStack.getCurrentCluster()?.server, "https://eks.test.example");
                assert.deepStrictEqual(described, ["platform-hub"]);
                const viaFlag = await kubeConfigFor(k8s, { connection: eks, kubeconfig: server.kubeconfig, describeEks });
                assert.notStrictEqual(viaFlag.getCurrentCluster()?.server, "https://eks.test.example");
                assert.deepStrictEqual(described, ["platform-hub"], "an explicit --kubeconfig is honoured: EKS is not asked");
            } finally {
                if (saved === undefined) {
                    delete process.env.KUBECONFIG;
                } else {
                    process.env.KUBECONFIG = saved;
                }
            }
        });
    });

    it("prints one line per check and, under a FAIL, the object, what was found and the section to read", () => {
        const report = {
            stack: "hub",
            cluster: "hub",
            server: "https://k8s.test",
            results: [
                { id: "crds.established", status: "PASS" as const, what: "CRDs established", findings: [], readme: DOCS.crds },
                { id: "smoke.outcome", status: "SKIP" as const, what: "smoke", findings: [], note: "smokeTest.enabled is false", readme: DOCS.smoke },
                {
                    id: "controller.leader",
                    status: "FAIL" as const,
                    what: "one leader",
                    findings: [{ object: "Lease argo-rollouts/argo-rollouts-controller-lock", found: "no holder" }],
                    readme: DOCS.crds,
                },
            ],
        };
        const lines = formatText(report).split("\n");
        assert.match(lines[1], /^PASS {2}crds\.established +CRDs established$/);
        assert.match(lines[2], /^SKIP {2}smoke\.outcome +smoke \(smokeTest\.enabled is false\)$/);
        assert.match(lines[3], /^FAIL {2}controller\.leader +one leader$/);
        assert.strictEqual(lines[4], "      Lease argo-rollouts/argo-rollouts-controller-lock: no holder");
        assert.strictEqual(lines[5], "      read: docs/operations/verify.md#verify-crds-and-controller");
        assert.strictEqual(exitCode(report.results), 1);
        assert.strictEqual(exitCode(report.results.slice(0, 2)), 0);
        assert.deepStrictEqual(JSON.parse(formatJson(report)).summary, { PASS: 1, FAIL: 1, SKIP: 1 });
    });

    it("every section of the verify page a check points at exists", () => {
        // GitHub's heading anchors of the page formatText names; the links between pages, the
        // verify tables' included, are checked in test/docs.test.ts.
        const anchors = headingAnchors(readDoc(VERIFY_PAGE));
        for (const anchor of Object.values(DOCS)) {
            assert.ok(anchors.has(anchor), `${VERIFY_PAGE} has no heading for ${anchor}`);
        }
        assert.ok(anchors.size > Object.keys(DOCS).length, `${VERIFY_PAGE} has only ${[...anchors].join(", ")}`);
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

describe("verify --without: checks that need an absent component", () => {
    const fail = (id: string): CheckResult => ({
        id,
        status: "FAIL",
        what: `requirement ${id}`,
        findings: [{ object: "Lease a/b", found: "not found" }],
        readme: "#x",
    });
    const pass = (id: string): CheckResult => ({ id, status: "PASS", what: `requirement ${id}`, findings: [], readme: "#x" });
    it("SKIPs only the checks of the components named, and says which component and what it saw", () => {
        const out = withoutComponents(
            [fail("controller.leader"), pass("crds.established"), fail("kyverno.policies-ready"), fail("rbac.controller")],
            ["rollouts-controller"],
        );
        assert.deepStrictEqual(
            out.map((r) => r.status),
            ["SKIP", "PASS", "FAIL", "FAIL"],
        );
        assert.match(
            out[0].note ?? "",
            /^not checked: the Argo Rollouts controller process \(--without rollouts-controller\) does not run on this cluster; without it: Lease a\/b: not found$/,
        );
    });
    it("names the absent component on a check that skipped for its own reason too", () => {
        const skipped: CheckResult = { id: "metrics.query", status: "SKIP", what: "q", findings: [], note: "not reachable from here", readme: "#x" };
        assert.strictEqual(
            withoutComponents([skipped], ["mimir"])[0].note,
            "not checked: Mimir's gateway pods (--without mimir) does not run on this cluster; not reachable from here",
        );
    });
    it("skips nothing by default", () => {
        const results = [fail("controller.leader"), fail("kyverno.policies-ready")];
        assert.deepStrictEqual(withoutComponents(results, []), results);
    });
    it("names only checks that exist", () => {
        const ids = GROUPS.flatMap((g) => g.ids);
        for (const [name, c] of Object.entries(COMPONENTS)) {
            for (const id of c.checks) {
                assert.ok(ids.includes(id), `${name} names ${id}, which is no check`);
            }
        }
    });
});
