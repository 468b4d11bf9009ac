/**
 * The program's preflight against the live cluster (stacks/preflight.ts): the existing objects a
 * run without adoption refuses before anything reaches the engine, the release an adopting run
 * keeps, the downgrade and the pod-template-hash boundary. The cluster is a fake GET-only reader.
 */
import * as assert from "assert";
import * as pulumi from "@pulumi/pulumi";
import { loadAddonConfig } from "../stacks/config";
import { checkedStack, controllerPreflight } from "../stacks/preflight";
import { defineStack } from "../stacks/program";
import type { LiveObject, LiveReader } from "../components/cluster/live";
import { DeclarationGate } from "../components/cluster/existing";
import { CONTROLLER_LEASES } from "../components/cluster/oldInstall";
import { PlannedResource, runOffline } from "../tools/offline";
import { manifestResources } from "../tools/plan";
import { configFromStackFile, fromConfigMap, placeholderWorld } from "../tools/stackFile";
import { hubConfig, merged, withRegulatedArgoRbac } from "./harness";
import { ROLLOUTS_CRDS } from "../components/argoRollouts";

/** A cluster that holds `objects` by REST path and Rollouts to list; it records every request. */
function fakeCluster(
    objects: Record<string, LiveObject> = {},
    rollouts: LiveObject[] = [],
    deployments?: LiveObject[],
): Pick<LiveReader, "get" | "list"> & { gets: string[]; lists: string[] } {
    const gets: string[] = [];
    const lists: string[] = [];
    return {
        gets,
        lists,
        async get(path) {
            gets.push(path);
            return objects[path];
        },
        async list(path) {
            lists.push(path);
            if (path === "/apis/apps/v1/deployments") {
                // Every Deployment of the cluster: the ones given, else the controller's of `objects`.
                return (
                    deployments ??
                    Object.entries(objects)
                        .filter(([p]) => p.includes("/deployments/"))
                        .map(([, o]) => o)
                );
            }
            return path === "/apis/argoproj.io/v1alpha1/rollouts" ? rollouts : [];
        },
    };
}

const HELM = [{ manager: "helm", operation: "Update" }];
const PULUMI = [{ manager: "pulumi-kubernetes-3c1d9f2a", operation: "Apply" }];

function controllerDeployment(tag: string, managedFields = HELM): LiveObject {
    return {
        metadata: { name: "argo-rollouts", namespace: "argo-rollouts", managedFields },
        spec: { template: { spec: { containers: [{ name: "argo-rollouts", image: `quay.io/argoproj/argo-rollouts:${tag}` }] } } },
    };
}

const DEPLOYMENT = "/apis/apps/v1/namespaces/argo-rollouts/deployments/argo-rollouts";
const ROLLOUT_CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rollouts.argoproj.io";

async function runChecked(raw: Record<string, unknown>, cluster: ReturnType<typeof fakeCluster>, warnings: string[] = []) {
    const file = fromConfigMap("hub", withRegulatedArgoRbac(raw));
    return runOffline({
        stack: file.stack,
        config: file.config,
        secretKeys: file.secretKeys,
        world: placeholderWorld(file),
        // As the language host runs the entry: inside the root stack resource, whose transformations reach every resource.
        program: async () =>
            (await pulumi.runtime.runInPulumiStack(() =>
                checkedStack(loadAddonConfig(), defineStack, { reader: cluster, warn: (m) => warnings.push(m) }),
            )) as Record<string, unknown>,
    });
}

describe("the preflight against the live cluster", () => {
    describe("without adoption: the objects the stack creates", () => {
        it("reads every whole object the stack declares, the chart's and the CRDs, and goes on when none exists", async () => {
            const cluster = fakeCluster();
            const run = await runChecked(hubConfig(), cluster);
            const declared = manifestResources(run).map((r) => {
                const m = r.inputs.metadata as { name: string; namespace?: string };
                return `${m.namespace ?? ""}/${m.name}`;
            });
            assert.ok(declared.length > 10);
            for (const d of declared) {
                const [ns, name] = d.split("/");
                assert.ok(
                    cluster.gets.some((p) => p.endsWith(`/${name}`) && (ns === "" || p.includes(`/namespaces/${ns}/`))),
                    `${d} was not read`,
                );
            }
            for (const c of ROLLOUTS_CRDS) {
                assert.ok(cluster.gets.includes(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${c.name}`), c.name);
            }
            assert.ok(cluster.gets.includes(DEPLOYMENT));
            assert.ok(cluster.gets.includes("/api/v1/namespaces/argo-rollouts/configmaps/argo-rollouts-config"), "the chart's objects are read");
            assert.deepStrictEqual(
                cluster.lists,
                ["/apis/apps/v1/replicasets?labelSelector=rollouts-pod-template-hash&limit=1"],
                "no controller runs: only whether a Rollout ever ran here",
            );
        });

        it("refuses another tool's objects before any object reaches the engine, naming each with its managers", async () => {
            const cluster = fakeCluster({
                [DEPLOYMENT]: controllerDeployment("v1.9.0"),
                [ROLLOUT_CRD]: { metadata: { name: "rollouts.argoproj.io", managedFields: HELM } },
                "/apis/rbac.authorization.k8s.io/v1/clusterroles/argo-rollouts-addon:rollouts-view": {
                    metadata: { name: "argo-rollouts-addon:rollouts-view", managedFields: [{ manager: "kubectl-create", operation: "Update" }] },
                },
            });
            let error: unknown;
            await runChecked(hubConfig(), cluster).catch((e) => (error = e));
            assert.ok(error instanceof Error, "the run went on");
            assert.strictEqual(
                error.message,
                'stack "hub": 3 object(s) this stack creates already exist, made by another tool, and argo-rollouts-addon:cluster.adoptExisting is false:\n' +
                    "  ClusterRole argo-rollouts-addon:rollouts-view [stack], managers: kubectl-create (Update)\n" +
                    "  Deployment argo-rollouts/argo-rollouts [chart], managers: helm (Update)\n" +
                    "  CustomResourceDefinition rollouts.argoproj.io [crds], managers: helm (Update)\n" +
                    "pulumi up would stop on them half-way (AlreadyExists, kubernetes provider 4.29 and later) or take them over unasked (earlier providers). " +
                    "This cluster runs an install of its own: follow the adoption runbook (docs/operations/adopt.md): npm run adopt-check -- --stack hub, " +
                    "then cluster.adoptExisting: true for one run. Never delete the old CRDs to make room: deleting the Rollout CRD deletes every Rollout.",
            );
            const registered = (error as { registered?: PlannedResource[] }).registered ?? [];
            const k8sObjects = registered.filter((r) => r.type.startsWith("kubernetes:") && !r.read).map((r) => r.name);
            assert.deepStrictEqual(k8sObjects, [], "objects reached the engine before the refusal");
        });

        it("passes objects a Pulumi stack already manages (this stack's earlier runs, or an adopted install)", async () => {
            const cluster = fakeCluster({
                [DEPLOYMENT]: controllerDeployment("v1.9.0", PULUMI),
                [ROLLOUT_CRD]: { metadata: { name: "rollouts.argoproj.io", managedFields: [...HELM, ...PULUMI] } },
            });
            const run = await runChecked(hubConfig(), cluster);
            assert.ok(manifestResources(run).length > 10);
        });

        it("reads no object the stack creates on an adopting run", async () => {
            const cluster = fakeCluster({ [ROLLOUT_CRD]: { metadata: { name: "rollouts.argoproj.io", managedFields: HELM } } });
            await runChecked(merged(hubConfig(), { cluster: { adoptExisting: true } }), cluster);
            assert.deepStrictEqual(cluster.gets, [DEPLOYMENT, "/apis/policy/v1/namespaces/argo-rollouts/poddisruptionbudgets/argo-rollouts"]);
            assert.deepStrictEqual(cluster.lists, [
                "/apis/apps/v1/replicasets?labelSelector=rollouts-pod-template-hash&limit=1",
                "/apis/apps/v1/deployments",
                CONTROLLER_LEASES,
            ]);
        });

        it("holds back registrations only: a read or a reference to a component's child passes untouched and unrecorded", () => {
            const gate = new DeclarationGate();
            const type = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";
            // A ConfigGroup's CRDs come back from its outputs as references (opts.urn), with no inputs.
            for (const opts of [
                { urn: "urn:pulumi:hub::argo-rollouts-addon::kubernetes:yaml/v2:ConfigGroup$" + type + "::rollouts-crds:rollouts.argoproj.io" },
                { id: "rollouts.argoproj.io" },
            ]) {
                assert.strictEqual(gate.transformation({ resource: {} as pulumi.Resource, type, name: "x", props: {}, opts }), undefined);
            }
            assert.deepStrictEqual(gate.declared, []);
        });
    });

    describe("the controller's release", () => {
        const config = (patch: Record<string, unknown> = {}) => configFromStackFile(fromConfigMap("hub", withRegulatedArgoRbac(merged(hubConfig(), patch))));
        const rollout = (ns: string, name: string, status: Record<string, unknown> | undefined, spec: Record<string, unknown> = {}): LiveObject => ({
            metadata: { name, namespace: ns },
            spec,
            ...(status ? { status } : {}),
        });
        const healthy = (ns: string, name: string) => rollout(ns, name, { phase: "Healthy" });

        it("a stack file that names no release stops where the cluster runs another line: its digest pins another release's image", async () => {
            // Not on the adopting run, nor on any run after it: the stack file still names no release.
            for (const patch of [{ cluster: { adoptExisting: true } }, {}]) {
                await assert.rejects(
                    controllerPreflight(config(patch), fakeCluster({ [DEPLOYMENT]: controllerDeployment("v1.8.4", PULUMI) }, [healthy("tenant-a", "web")])),
                    new RegExp(
                        `stack "hub": the cluster runs Argo Rollouts v1\\.8\\.4 and the stack file names no release, so the run would keep chart 2\\.40\\.7 \\(v1\\.8\\.4\\), but argo-rollouts-addon:controller\\.imageDigest = "sha256:c{64}" pins the image of v1\\.9\\.0: ` +
                            "to keep the line set controller\\.chartVersion to 2\\.40\\.7 and controller\\.imageDigest to the digest \\(sha256:<64 hex>\\) of registry\\.platform\\.test/mirror/argoproj/argo-rollouts:v1\\.8\\.4",
                    ),
                );
            }
            const kept = await controllerPreflight(
                config({ controller: { chartVersion: "2.40.7" } }),
                fakeCluster({ [DEPLOYMENT]: controllerDeployment("v1.8.4", PULUMI) }),
            );
            assert.strictEqual(kept.controller.appVersion, "v1.8.4");
            // Named in the stack file: the stack's release, across the boundary only when acknowledged.
            await assert.rejects(
                controllerPreflight(
                    config({ cluster: { adoptExisting: true }, controller: { chartVersion: "2.41.0" } }),
                    fakeCluster({ [DEPLOYMENT]: controllerDeployment("v1.8.4") }, [healthy("tenant-a", "web")]),
                ),
                /controller\.acknowledgeNewRevisions = \(unset\): set it to "1\.9"/,
            );
            // No controller yet: the newest release.
            const fresh = await controllerPreflight(config(), fakeCluster());
            assert.strictEqual(fresh.controller.chartVersion, "2.41.0");
        });

        it("refuses an adopting downgrade unless allowed", async () => {
            await assert.rejects(
                controllerPreflight(
                    config({ cluster: { adoptExisting: true }, controller: { chartVersion: "2.41.0" } }),
                    fakeCluster({ [DEPLOYMENT]: controllerDeployment("v1.9.1") }),
                ),
                (e: Error) => {
                    assert.strictEqual(
                        e.message,
                        'stack "hub": the cluster runs Argo Rollouts v1.9.1 and argo-rollouts-addon:controller.appVersion = "v1.9.0": adopting would downgrade the controller and its CRDs. Set controller.chartVersion to a chart of v1.9.1 or later, or set cluster.allowDowngrade: true for the adopting run after reading the release notes',
                    );
                    return true;
                },
            );
            await controllerPreflight(
                config({ cluster: { adoptExisting: true, allowDowngrade: true }, controller: { chartVersion: "2.41.0" } }),
                fakeCluster({ [DEPLOYMENT]: controllerDeployment("v1.9.1") }),
            );
        });

        it("refuses the hash boundary while any Rollout is paused or progressing, naming each", async () => {
            const rollouts = [
                healthy("tenant-a", "web"),
                rollout("tenant-a", "api", { phase: "Paused", pauseConditions: [{ reason: "CanaryPauseStep" }] }),
                rollout("tenant-b", "shop", { phase: "Progressing", message: "more replicas need to be updated" }),
                rollout("tenant-b", "cart", { phase: "Healthy" }, { paused: true }),
            ];
            const cluster = fakeCluster({ [DEPLOYMENT]: controllerDeployment("v1.8.4", PULUMI) }, rollouts);
            await assert.rejects(
                controllerPreflight(config({ controller: { chartVersion: "2.41.0", acknowledgeNewRevisions: "1.9" } }), cluster),
                (e: Error) => {
                    assert.strictEqual(
                        e.message,
                        'stack "hub": Argo Rollouts v1.8.4 -> v1.9.0 changes how pod-template hashes are computed (argoproj/argo-rollouts #4696): a Rollout whose ReplicaSet template differs from its own (admission mutations) gets a new revision and its pods are replaced: up to 4 Rollout(s) in 2 namespace(s): tenant-a (2), tenant-b (2). ' +
                            "Refused while a Rollout is paused or progressing: a new revision would start over the rollout in flight:\n" +
                            "  Rollout tenant-a/api: paused mid-rollout (a pause step or an inconclusive analysis waits for a promote)\n" +
                            "  Rollout tenant-b/shop: Progressing (more replicas need to be updated)\n" +
                            "  Rollout tenant-b/cart: paused (spec.paused)\n" +
                            "Promote or abort each of them first, or name it in controller.acknowledgeInFlight, then run again (docs/operations/upgrade.md).",
                    );
                    return true;
                },
            );
            assert.deepStrictEqual(cluster.lists, ["/apis/argoproj.io/v1alpha1/rollouts"]);
            // Named in flight, each may start over; the notice names them.
            const warnings: string[] = [];
            const inFlight = ["tenant-a/api", "tenant-b/shop", "tenant-b/cart"];
            await controllerPreflight(
                config({ controller: { chartVersion: "2.41.0", acknowledgeNewRevisions: "1.9", acknowledgeInFlight: inFlight } }),
                cluster,
                (m) => warnings.push(m),
            );
            assert.match(
                warnings[0],
                /= "1\.9"\); in flight, starting over: tenant-a\/api, tenant-b\/shop, tenant-b\/cart \(controller\.acknowledgeInFlight\)$/,
            );
            await assert.rejects(
                controllerPreflight(
                    config({ controller: { chartVersion: "2.41.0", acknowledgeNewRevisions: "1.9", acknowledgeInFlight: inFlight.slice(1) } }),
                    cluster,
                ),
                (e: Error) => e.message.includes("  Rollout tenant-a/api: paused mid-rollout") && !e.message.includes("tenant-b/"),
            );
        });

        it("refuses what it cannot decide: no controller where Rollouts ran and no release named, a version no table knows", async () => {
            const ran = fakeCluster({}, [], []);
            ran.list = async (p) => (ran.lists.push(p), p.startsWith("/apis/apps/v1/replicasets?") ? [{ metadata: { name: "web-6d4f" } }] : []);
            await assert.rejects(
                controllerPreflight(config(), ran),
                /no Argo Rollouts controller runs, yet ReplicaSets labelled rollouts-pod-template-hash .* Name the chart of the line the cluster ran \(2\.40\.7 for 1\.8, 2\.41\.0 for 1\.9\) in argo-rollouts-addon:controller\.chartVersion/,
            );
            await controllerPreflight(config({ controller: { chartVersion: "2.40.7" } }), ran);
            for (const image of ["latest", "v1.7.2", "v1.10.0"]) {
                const cluster = () => fakeCluster({ [DEPLOYMENT]: controllerDeployment(image, PULUMI) });
                await assert.rejects(
                    controllerPreflight(config(), cluster()),
                    /whose hash scheme the program cannot tell .*controller\.acknowledgeNewRevisions to "1\.9"/,
                    image,
                );
                await controllerPreflight(config({ controller: { acknowledgeNewRevisions: "1.9" } }), cluster());
            }
            const digest = fakeCluster({ [DEPLOYMENT]: controllerDeployment("v1.8.4", PULUMI) });
            (digest as { get: unknown }).get = async () => ({
                spec: { template: { spec: { containers: [{ name: "argo-rollouts", image: `quay.io/argoproj/argo-rollouts@sha256:${"c".repeat(64)}` }] } } },
            });
            await assert.rejects(controllerPreflight(config(), digest), /runs quay\.io\/argoproj\/argo-rollouts@sha256:c+, whose hash scheme/);
        });

        it("needs the acknowledgement of the new line once every Rollout is settled, and then says how many re-revision where", async () => {
            const rollouts = [healthy("tenant-a", "web"), healthy("tenant-a", "api"), healthy("tenant-b", "shop")];
            const cluster = () => fakeCluster({ [DEPLOYMENT]: controllerDeployment("v1.8.4", PULUMI) }, rollouts);
            await assert.rejects(
                controllerPreflight(config({ controller: { chartVersion: "2.41.0" } }), cluster()),
                /argo-rollouts-addon:controller\.acknowledgeNewRevisions = \(unset\): set it to "1\.9" for this upgrade, after following docs\/operations\/upgrade\.md, or keep controller\.chartVersion at a chart of the 1\.8 line$/,
            );
            await assert.rejects(
                controllerPreflight(config({ controller: { chartVersion: "2.41.0", acknowledgeNewRevisions: "1.8" } }), cluster()),
                /acknowledgeNewRevisions = "1\.8": set it to "1\.9"/,
            );
            const warnings: string[] = [];
            await controllerPreflight(config({ controller: { chartVersion: "2.41.0", acknowledgeNewRevisions: "1.9" } }), cluster(), (m) => warnings.push(m));
            assert.deepStrictEqual(warnings, [
                'stack "hub": Argo Rollouts v1.8.4 -> v1.9.0 changes how pod-template hashes are computed (argoproj/argo-rollouts #4696): a Rollout whose ReplicaSet template differs from its own (admission mutations) gets a new revision and its pods are replaced: up to 3 Rollout(s) in 2 namespace(s): tenant-a (2), tenant-b (1) (acknowledged by controller.acknowledgeNewRevisions = "1.9")',
            ]);
        });

        it("lists no Rollout when the controller stays on its line", async () => {
            for (const running of ["v1.9.0", undefined]) {
                const cluster = fakeCluster(running ? { [DEPLOYMENT]: controllerDeployment(running, PULUMI) } : {});
                await controllerPreflight(config(), cluster);
                assert.deepStrictEqual(cluster.lists, running ? [] : ["/apis/apps/v1/replicasets?labelSelector=rollouts-pod-template-hash&limit=1"]);
            }
            const within = fakeCluster({ [DEPLOYMENT]: controllerDeployment("v1.8.3", PULUMI) });
            await controllerPreflight(config({ controller: { chartVersion: "2.40.7" } }), within);
            assert.deepStrictEqual(within.lists, []);
        });
    });

    describe("an adopting run: shapes of the old install it cannot take over", () => {
        const config = (patch: Record<string, unknown> = {}) =>
            configFromStackFile(fromConfigMap("hub", withRegulatedArgoRbac(merged(hubConfig(), merged({ cluster: { adoptExisting: true } }, patch)))));
        const deployment = (ns: string, name: string, matchLabels: Record<string, string>, args: string[] = []): LiveObject => ({
            // The chart and manifests/install.yaml both label the controller Deployment so (oldInstall.ts).
            metadata: { name, namespace: ns, labels: { "app.kubernetes.io/component": "rollouts-controller" }, managedFields: HELM },
            spec: {
                selector: { matchLabels },
                template: { spec: { containers: [{ name: "argo-rollouts", image: "registry.example/mirror/argoproj/argo-rollouts:v1.9.0", args }] } },
            },
        });
        const CHART = {
            "app.kubernetes.io/component": "rollouts-controller",
            "app.kubernetes.io/name": "argo-rollouts",
            "app.kubernetes.io/instance": "argo-rollouts",
        };

        it("refuses a plain-manifest controller (its selector is immutable), a controller of another release and a budget with minAvailable, each with what to do first", async () => {
            const plain = deployment("argo-rollouts", "argo-rollouts", { "app.kubernetes.io/name": "argo-rollouts" });
            const other = deployment("platform-tools", "rollouts", CHART);
            const dashboard: LiveObject = {
                metadata: { name: "argo-rollouts-dashboard", namespace: "argo-rollouts" },
                spec: { template: { spec: { containers: [{ image: "quay.io/argoproj/kubectl-argo-rollouts:v1.9.0" }] } } },
            };
            const cluster = fakeCluster(
                {
                    [DEPLOYMENT]: plain,
                    "/apis/policy/v1/namespaces/argo-rollouts/poddisruptionbudgets/argo-rollouts": {
                        metadata: { name: "argo-rollouts" },
                        spec: { minAvailable: 1 },
                    },
                },
                [],
                [plain, other, dashboard],
            );
            await assert.rejects(controllerPreflight(config(), cluster), (e: Error) => {
                assert.strictEqual(
                    e.message,
                    'stack "hub": argo-rollouts-addon:cluster.adoptExisting is true, and the old install has 3 thing(s) adopting would break (npm run adopt-check -- --stack hub lists them too):\n' +
                        "  Deployment platform-tools/rollouts: runs Argo Rollouts v1.9.0 outside this stack (the stack installs its controller as argo-rollouts/argo-rollouts): after adopting, it and the stack's would reconcile every Rollout of the cluster\n" +
                        "      first: keep the CRDs first (runbook: keep the CRDs), make its installer forget it (runbook: make the old tool let go), then kubectl delete deployment rollouts -n platform-tools right before the adopting run (Rollouts keep their pods; they resume once the stack's controller runs)\n" +
                        "  Deployment argo-rollouts/argo-rollouts: selects {app.kubernetes.io/name=argo-rollouts}, the chart {app.kubernetes.io/component=rollouts-controller, app.kubernetes.io/instance=argo-rollouts, app.kubernetes.io/name=argo-rollouts}: a Deployment's selector is immutable, so the adopting up would stop at it (a plain-manifest install, argoproj/argo-rollouts manifests/install.yaml, has this selector)\n" +
                        "      first: delete it right before the adopting run, as the runbook's adopting step does (kubectl delete deployment argo-rollouts -n argo-rollouts); its pods go, Rollouts keep theirs and resume once the stack's controller runs\n" +
                        "  PodDisruptionBudget argo-rollouts/argo-rollouts: sets minAvailable 1: the stack sets maxUnavailable, the adopting apply leaves the old minAvailable in place, and a budget with both is invalid\n" +
                        `      first: kubectl patch poddisruptionbudget argo-rollouts -n argo-rollouts --type=json -p '[{"op":"remove","path":"/spec/minAvailable"}]' before the adopting run`,
                );
                return true;
            });
        });

        it("lets the chart's own shape through, and a controller that watches other Rollouts (namespaced or another instance id)", async () => {
            const own = deployment("argo-rollouts", "argo-rollouts", CHART);
            const namespaced = deployment("team-a", "rollouts", CHART, ["--namespaced"]);
            const instance = deployment("team-b", "rollouts", CHART, ["--instance-id=team-b"]);
            await controllerPreflight(config(), fakeCluster({ [DEPLOYMENT]: own }, [], [own, namespaced, instance]));
        });
    });
});
