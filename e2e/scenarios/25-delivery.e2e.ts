/**
 * ADR-056's live proof, decided by the real controller: the spoke stack with the smoke canary, the
 * real Argo Rollouts controller (its chart's ServiceAccount token, its chart-rendered arguments and
 * ConfigMap), the traffic-router plugin it downloads from the stack's plugin location, and the
 * gates' PromQL answered by a real Prometheus behind a Mimir stand-in that insists on the tenant.
 * The read endpoint is HTTPS with a certificate of the run's private CA, which the controller
 * trusts only through the stack's `mimir.readCaBundle` (the ConfigMap and env the program declares,
 * played by the harness as a kubelet would). Canary promote, abort and no-data pause; blue/green
 * promote, pre- and post-promotion abort; then verify with the controller running, and the
 * controller's and plugin's log free of permission errors. docs/operations/e2e.md says what this proves and what it does not.
 */
import assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as YAML from "yaml";
import * as path from "path";
import { context, world } from "../lib/context";
import { approvalBinding, approvalSides } from "../../components/policy/approvalBindings";
import { ControllerProc, controllerLog, permissionErrors, startController } from "../lib/controller";
import {
    AnalysisRunView,
    POD_HASH,
    PublishedPlugin,
    ReplicaSetView,
    RolloutView,
    RouteView,
    ServiceView,
    SmokeSetting,
    analysisRuns,
    backendWeight,
    collapse,
    deliveryPatch,
    getReplicaSet,
    getRollout,
    getService,
    inOrder,
    publishPlugin,
} from "../lib/delivery";
import { Watch, apiGet, watch } from "../lib/kube";
import { Built, IDIOMS, Idiom, buildOverlay, unresolved } from "../lib/overlays";
import { BeylaSeries, MimirStandIn, PromServer, SlothBudgets, Traffic, startMimirStandIn, startPrometheus } from "../lib/metrics";
import { addonConfig } from "../lib/platform";
import { run, stopProc, waitFor } from "../lib/procs";
import { PulumiEnv, failure } from "../lib/pulumi";
import { fixtureConfig } from "../lib/stacks";
import { StackTarget, World, npmRunAsync } from "../lib/world";
import { AppSpec, DeliveryPlan, StrategyOptions, appLabels, checkOptions, deliveryPlan } from "../../components/delivery";
import { stackStrategies } from "../../components/delivery/config";
import { componentPlan, renderComponents } from "../../components/delivery/kustomize";
import { freezeMeasurements } from "../../components/rollouts/analysis";
import { GO_CERT_DIRECTORIES, READ_CA_DIR, READ_CA_KEY } from "../../components/rollouts/trust";
import { SMOKE_APP, smokePodTemplate } from "../../components/smoke";
import { SmokeTestConfig } from "../../components/smoke/config";
import { CheckResult } from "../../tools/verify/report";
import { smokeState } from "../../tools/verify/checks/smoke";
import type { KubeObject } from "../../tools/verify/cluster";

const STACK = "preprod";
const CANARY_NS = "rollouts-smoke";
const BLUE_GREEN_NS = "rollouts-smoke-bg";
const HEALTHY: Traffic = { requestsPerSecond: 10, errorRatio: 0, latencySeconds: 0.02 };
/** What the demo app serves with `smokeTest.failGate` (ERROR_RATE 50: half the requests 5xx). */
const FAILING: Traffic = { requestsPerSecond: 10, errorRatio: 0.5, latencySeconds: 0.02 };
/** Below `analysis.minRequests` (50) per 20 s window. */
const TRICKLE: Traffic = { requestsPerSecond: 1, errorRatio: 0, latencySeconds: 0.02 };
/** The kubelet's probes of a pod: far above the floor, on a route of `analysis.excludeRoutes`. */
const PROBES: Traffic = { requestsPerSecond: 5, errorRatio: 0, latencySeconds: 0.001, route: "/healthz" };
const SCENARIO_MS = 5 * 60_000;

/** The smoke section as the stage reads it, for the demo pod template a tenant app borrows. */
const smokeConfig = (cfg: ReturnType<typeof addonConfig>): SmokeTestConfig => cfg.smokeTest;

/** About how long this file runs beside another on 2 cores: orders the side-by-side run (e2e/lib/pool.ts). */
export const SECONDS = 800;

describe("delivery", function () {
    this.timeout(SCENARIO_MS);
    let w: World;
    let env: PulumiEnv;
    let target: StackTarget;
    let prom: PromServer;
    let mimir: MimirStandIn;
    let series: BeylaSeries;
    let budgets: SlothBudgets;
    let plugin: PublishedPlugin;
    let controller: ControllerProc;
    let tenant: string;
    let controllerNs: string;
    let smoke: SmokeSetting = { strategy: "canary", namespace: CANARY_NS, trigger: "1", failGate: false };

    let readCaBundle: string;
    const patch = () => deliveryPatch({ readEndpoint: mimir.readEndpoint, readCaBundle, pluginBaseUrl: plugin.baseUrl, pluginSha256: plugin.sha256, smoke });
    const cluster = () => target.cluster;

    /** Rewrites the stack file for `next` and runs `pulumi up` as the deploy pipeline does. */
    async function up(next: Partial<SmokeSetting>): Promise<void> {
        smoke = { ...smoke, ...next };
        target = { ...target, config: w.stackConfig(STACK, target.cluster, patch()) };
        await w.initStack(env, target);
        const r = await env.pulumi(["up", "--yes", "--skip-preview", "--policy-pack", "policy-pack"], { stack: STACK });
        assert.strictEqual(r.status, 0, `pulumi up (smokeTest ${JSON.stringify(smoke)}) failed:\n${failure(r)}`);
    }

    const rollout = () => getRollout(cluster(), smoke.namespace, SMOKE_APP);
    const describeRollout = async () => {
        try {
            const r = await rollout();
            return `rollout status: ${JSON.stringify(r.status)}\nmimir: ${JSON.stringify(mimir.requests.slice(-3))}\nseries: ${series.pushes} pushes, last error ${series.lastError ?? "none"}\ncontroller log:\n${controllerLog(controller).split("\n").slice(-25).join("\n")}`;
        } catch (err) {
            return String(err);
        }
    };

    /** Waits until the Rollout's status describes its current spec and `done` holds. */
    async function until(what: string, done: (r: RolloutView) => boolean, timeoutMs = SCENARIO_MS - 30_000): Promise<RolloutView> {
        let last: RolloutView | undefined;
        await waitFor(
            what,
            timeoutMs,
            async () => {
                last = await rollout();
                return smokeState(last as unknown as KubeObject).kind !== "stale" && done(last);
            },
            () => `last status: ${JSON.stringify(last?.status)}\ncontroller log:\n${controllerLog(controller).split("\n").slice(-25).join("\n")}`,
        );
        return last!;
    }

    /** The pod hash of the revision just applied, once the controller has created its ReplicaSet. */
    async function newRevision(previous: string): Promise<string> {
        const r = await until("the new revision's ReplicaSet", (r) => !!r.status?.currentPodHash && r.status.currentPodHash !== previous, 120_000);
        return r.status!.currentPodHash!;
    }

    const rsName = (hash: string) => `${SMOKE_APP}-${hash}`;
    const traffic = (hash: string, t: Traffic | undefined) => series.set(smoke.namespace, rsName(hash), t);
    const runs = (hash: string) => analysisRuns(cluster(), smoke.namespace, hash);
    /**
     * The runs of a revision once each has ended: a background run is terminated by the controller
     * after the promotion it gated, in a later reconcile (argo-rollouts rollout/analysis.go).
     */
    const TERMINAL = ["Successful", "Failed", "Error", "Inconclusive"];
    async function settledRuns(hash: string): Promise<AnalysisRunView[]> {
        let list: AnalysisRunView[] = [];
        await waitFor(
            `the AnalysisRuns of ${rsName(hash)} to end`,
            60_000,
            async () => {
                list = await runs(hash);
                return list.length > 0 && list.every((a) => TERMINAL.includes(a.status?.phase ?? ""));
            },
            () => runSummary(list),
        );
        return list;
    }
    /** As settledRuns, for a tenant app's namespace. */
    async function settledRunsIn(ns: string, hash: string): Promise<AnalysisRunView[]> {
        let list: AnalysisRunView[] = [];
        await waitFor(
            `the AnalysisRuns of ${hash} in ${ns} to end`,
            60_000,
            async () => {
                list = await analysisRuns(cluster(), ns, hash);
                return list.length > 0 && list.every((a) => TERMINAL.includes(a.status?.phase ?? ""));
            },
            () => runSummary(list),
        );
        return list;
    }
    const runSummary = (list: AnalysisRunView[]) =>
        list
            .map(
                (a) =>
                    `${a.metadata.name}: ${a.status?.phase} ${a.status?.message ?? ""} ${JSON.stringify(a.status?.metricResults?.map((m) => [m.name, m.phase, m.measurements?.map((x) => `${x.phase}:${x.value ?? ""}`)]))}`,
            )
            .join("\n");

    before(async function () {
        this.timeout(12 * 60_000);
        w = await world();
        env = w.pulumi("delivery");
        prom = await startPrometheus(w.bin, w.dir);
        plugin = publishPlugin(w.bin, w.files);
        context.plugin = plugin.kind;
        // The stack's own tenant: the stand-in refuses any other, so the gates prove they send it.
        tenant = String((fixtureConfig(STACK)["argo-rollouts-addon:cluster"] as { mimirTenant?: string }).mimirTenant);
        // The read endpoint has a certificate of the run's private CA, which the stack names in
        // mimir.readCaBundle: the controller trusts it only through the ConfigMap the program
        // declares and the Deployment mounts (startController plays the kubelet's part).
        mimir = await startMimirStandIn(prom, tenant, w.files);
        readCaBundle = fs.readFileSync(w.files.caFile, "utf8");
        series = new BeylaSeries(prom);
        series.start();
        budgets = new SlothBudgets(prom);
        budgets.start();
        target = await w.cluster("delivery", STACK, patch());
        await w.initStack(env, target);
        const r = await env.pulumi(["up", "--yes", "--skip-preview", "--policy-pack", "policy-pack"], { stack: STACK });
        assert.strictEqual(r.status, 0, `pulumi up of ${STACK} with the smoke canary failed:\n${failure(r)}`);
        const cfg = addonConfig(STACK, target.config);
        controllerNs = cfg.controller.namespace;
        // The controller process plays one of the Deployment's pods (kwok runs them without
        // containers): it gets that pod's name as its hostname, as a kubelet gives it, so the
        // leader Lease it takes names a pod of the Deployment.
        const pods = JSON.parse(
            cluster().kubectl(["get", "pods", "-n", controllerNs, "-l", "app.kubernetes.io/component=rollouts-controller", "-o", "json"]),
        ) as { items: { metadata: { name: string } }[] };
        controller = await startController(cluster(), { bin: w.bin, dir: w.dir, namespace: controllerNs, hostname: pods.items[0]?.metadata.name });
    });

    after(async function () {
        series?.stop();
        budgets?.stop();
        if (controller) {
            await controller.stop();
        }
        await mimir?.close();
        if (prom) {
            await stopProc(prom.proc);
        }
    });

    /**
     * A tenant's prod app delivered with the program's own strategy library, applied as the GitOps
     * identity applies it: its namespace, Services, HTTPRoute and the Rollout of `revision` with
     * the demo pod template. `spec` adds Rollout fields a team sets (progressDeadlineSeconds).
     */
    function tenantApp(app: AppSpec, opts: StrategyOptions, spec: Record<string, unknown> = {}) {
        const cfg = addonConfig(STACK, target.config);
        assert.deepStrictEqual(checkOptions(app, opts), []);
        const plan: DeliveryPlan = deliveryPlan(app, opts);
        const apply = (docs: unknown[]) =>
            cluster().kubectl(["apply", "--server-side", "--field-manager=argocd-controller", "-f", "-"], docs.map((d) => JSON.stringify(d)).join("\n---\n"));
        const rolloutDoc = (revision: string) => ({
            apiVersion: "argoproj.io/v1alpha1",
            kind: "Rollout",
            metadata: { name: app.name, namespace: app.namespace, labels: appLabels(app) },
            spec: {
                replicas: 2,
                selector: { matchLabels: appLabels(app) },
                template: {
                    ...smokePodTemplate({ ...smokeConfig(cfg), failGate: false }, revision),
                    metadata: { labels: appLabels(app), annotations: { "e2e.platform.test/revision": revision } },
                },
                strategy: plan.strategy,
                ...spec,
            },
        });
        const get = () => getRollout(cluster(), app.namespace, app.name);
        const describe = async () => {
            const r = await get().catch(() => undefined);
            const hash = r?.status?.currentPodHash;
            return `rollout status: ${JSON.stringify(r?.status)}\n${hash ? runSummary(await analysisRuns(cluster(), app.namespace, hash)) : ""}\nbudgets: ${budgets.lastError ?? "pushed"}\ncontroller log:\n${controllerLog(controller).split("\n").slice(-20).join("\n")}`;
        };
        return {
            plan,
            get,
            describe,
            runs: (hash: string) => analysisRuns(cluster(), app.namespace, hash),
            /** The namespace, the plan's objects and the first version, until it is fully deployed. */
            async install(): Promise<string> {
                apply([
                    {
                        apiVersion: "v1",
                        kind: "Namespace",
                        metadata: { name: app.namespace, labels: { "platform.test/tier": "prod", "pod-security.kubernetes.io/enforce": "restricted" } },
                    },
                ]);
                apply([...plan.services, ...(plan.httpRoute ? [plan.httpRoute] : []), rolloutDoc("v1")]);
                await waitFor(
                    `${app.name}'s first version`,
                    120_000,
                    async () => smokeState((await get()) as unknown as KubeObject).kind === "promoted",
                    describe,
                );
                const stable = (await get()).status!.stableRS!;
                series.set(app.namespace, `${app.name}-${stable}`, HEALTHY);
                return stable;
            },
            /** Applies `revision`; the new ReplicaSet's hash once the controller made it, with healthy traffic. */
            async deploy(revision: string, previous: string): Promise<string> {
                apply([rolloutDoc(revision)]);
                let hash = "";
                await waitFor(
                    `${app.name} ${revision}'s ReplicaSet`,
                    60_000,
                    async () => {
                        hash = (await get()).status?.currentPodHash ?? "";
                        return hash !== "" && hash !== previous;
                    },
                    describe,
                );
                series.set(app.namespace, `${app.name}-${hash}`, HEALTHY);
                return hash;
            },
        };
    }
    /** `kubectl argo rollouts promote` on a paused rollout: it clears the pause conditions through the status subresource (pkg/kubectl-argo-rollouts/cmd/promote/promote.go at v1.9.0). */
    const clearPause = (ns: string, name: string) =>
        run(path.join(w.bin, "kubectl"), [
            `--kubeconfig=${cluster().kubeconfig}`,
            "patch",
            "rollout",
            name,
            "-n",
            ns,
            "--type=merge",
            "--subresource=status",
            "-p",
            '{"status":{"pauseConditions":null}}',
        ]);
    const freezeRun = (list: AnalysisRunView[]) => list.filter((a) => a.metadata.labels?.["step-index"] === "0");
    const measurements = (a: AnalysisRunView | undefined, metric: string) => a?.status?.metricResults?.find((m) => m.name === metric)?.measurements ?? [];

    it("controller-trusts-read-ca", function () {
        // The read endpoint's CA reaches the controller only as the program declares it: the
        // ConfigMap mounted into the chart's Deployment and SSL_CERT_DIR keeping Go's own
        // directories; the harness passes no trust of its own (no SSL_CERT_FILE).
        assert.ok(!("SSL_CERT_FILE" in controller.env), `the controller was given SSL_CERT_FILE: ${JSON.stringify(controller.env)}`);
        const mount = controller.mounts.find((m) => m.mountPath === READ_CA_DIR);
        assert.ok(mount, `the Deployment mounts nothing at ${READ_CA_DIR}: ${JSON.stringify(controller.mounts)}`);
        assert.strictEqual(controller.env.SSL_CERT_DIR, [...GO_CERT_DIRECTORIES, mount.local].join(":"));
        assert.strictEqual(fs.readFileSync(path.join(mount.local, READ_CA_KEY), "utf8"), readCaBundle);
        assert.ok(mimir.readEndpoint.startsWith("https://"), mimir.readEndpoint);
    });

    it("canary-promote", async function () {
        const initial = await until("the first revision to be fully deployed", (r) => smokeState(r as unknown as KubeObject).kind === "promoted");
        const stable = initial.status!.stableRS!;
        traffic(stable, HEALTHY);
        const routes: Watch<RouteView> = watch(cluster(), `/apis/gateway.networking.k8s.io/v1/namespaces/${CANARY_NS}/httproutes`);
        try {
            await up({ trigger: "2" });
            const canary = await newRevision(stable);
            traffic(canary, HEALTHY);
            const done = await until(
                "the canary to be promoted",
                (r) =>
                    (smokeState(r as unknown as KubeObject).kind !== "progressing" && smokeState(r as unknown as KubeObject).kind !== "paused") ||
                    r.status?.abort === true,
            );
            const state = smokeState(done as unknown as KubeObject);
            assert.strictEqual(state.kind, "promoted", `the healthy canary was not promoted: ${JSON.stringify(state)}\n${runSummary(await runs(canary))}`);
            assert.strictEqual(done.status?.stableRS, canary, "the stable ReplicaSet is not the new revision");
            const list = await settledRuns(canary);
            assert.ok(
                list.every((a) => a.status?.phase === "Successful"),
                `a gate of the healthy canary did not succeed:\n${runSummary(list)}`,
            );
            // Every write of the route, in order, as the API server recorded it.
            const weights = collapse(
                routes.events
                    .filter((e) => e.type === "MODIFIED" && e.object.metadata.name === SMOKE_APP)
                    .map((e) => backendWeight(e.object, `${SMOKE_APP}-canary`)),
            );
            // The stack's prod / standard weights (delivery.prod.standard.steps), which the smoke canary takes.
            const steps = addonConfig(STACK, target.config).delivery.prod.standard.steps;
            assert.ok(
                inOrder(weights, steps),
                `the canary weights written on the HTTPRoute were ${JSON.stringify(weights)}, not ${steps.join(" -> ")} in order`,
            );
            assert.ok(
                weights.every((x) => x !== undefined && [0, ...steps].includes(x)),
                `the HTTPRoute carried a weight the strategy does not name: ${JSON.stringify(weights)}`,
            );
            // The gate read this cluster's tenant through the /prometheus prefix, about the canary.
            const queries = mimir.requests.filter((q) => q.query?.includes(`${SMOKE_APP}-${canary}`));
            assert.ok(queries.length > 0, `no gate query about ${SMOKE_APP}-${canary} reached Mimir: ${JSON.stringify(mimir.requests.slice(-5))}`);
            assert.ok(
                queries.every((q) => q.tenant === tenant && q.status === 200),
                `a gate query did not carry X-Scope-OrgID ${tenant}: ${JSON.stringify(queries.filter((q) => q.tenant !== tenant || q.status !== 200).slice(0, 3))}`,
            );
            traffic(stable, undefined);
        } finally {
            routes.stop();
        }
    });

    it("canary-abort", async function () {
        const before = await rollout();
        const stable = before.status!.stableRS!;
        const stableRs = await getReplicaSet(cluster(), CANARY_NS, rsName(stable));
        const stableRsWatch: Watch<ReplicaSetView> = watch(
            cluster(),
            `/apis/apps/v1/namespaces/${CANARY_NS}/replicasets?fieldSelector=${encodeURIComponent(`metadata.name=${rsName(stable)}`)}`,
        );
        traffic(stable, HEALTHY);
        try {
            await up({ trigger: "3", failGate: true });
            const canary = await newRevision(stable);
            traffic(canary, FAILING);
            const done = await until("the failing canary to be aborted", (r) => r.status?.abort === true && r.status.phase === "Degraded");
            assert.strictEqual(done.status?.stableRS, stable, "the abort moved the stable ReplicaSet");
            const list = await runs(canary);
            assert.ok(
                list.some((a) => a.status?.phase === "Failed"),
                `no AnalysisRun of the failing canary Failed:\n${runSummary(list)}`,
            );
            const route = await apiGet<RouteView>(cluster(), `/apis/gateway.networking.k8s.io/v1/namespaces/${CANARY_NS}/httproutes/${SMOKE_APP}`);
            await waitFor(
                "the canary weight back to 0",
                30_000,
                async () =>
                    backendWeight(
                        await apiGet<RouteView>(cluster(), `/apis/gateway.networking.k8s.io/v1/namespaces/${CANARY_NS}/httproutes/${SMOKE_APP}`),
                        `${SMOKE_APP}-canary`,
                    ) === 0,
                () => JSON.stringify(route.spec),
            );
            const stableService = await getService(cluster(), CANARY_NS, `${SMOKE_APP}-stable`);
            assert.strictEqual(stableService.spec.selector?.[POD_HASH], stable, "the stable Service no longer selects the stable ReplicaSet");
            const replicas = stableRsWatch.events.map((e) => e.object.spec.replicas);
            assert.ok(
                replicas.every((n) => n === stableRs.spec.replicas),
                `the stable ReplicaSet was scaled during the abort: ${JSON.stringify(replicas)} (was ${stableRs.spec.replicas})`,
            );
        } finally {
            stableRsWatch.stop();
        }
        series.clear();
    });

    it("canary-no-data-pauses", async function () {
        const before = await rollout();
        const stable = before.status!.stableRS!;
        traffic(stable, HEALTHY);
        await up({ trigger: "4", failGate: false });
        const canary = await newRevision(stable);
        // The kubelet probes the canary's pods from the start: 100 requests per window, twice the
        // floor, which would pass the gate if they counted (analysis.excludeRoutes).
        series.set(smoke.namespace, rsName(canary), PROBES);
        // No app request at all for the first measurement, then a trickle below analysis.minRequests.
        await waitFor(
            "the first measurement of the canary",
            120_000,
            async () => (await runs(canary)).some((a) => (a.status?.metricResults ?? []).some((m) => (m.measurements ?? []).length > 0)),
            async () => runSummary(await runs(canary)),
        );
        traffic(canary, TRICKLE);
        const done = await until(
            "the starved canary to pause",
            (r) => (r.status?.pauseConditions ?? []).some((p) => p.reason === "InconclusiveAnalysisRun") || r.status?.abort === true,
        );
        assert.notStrictEqual(done.status?.abort, true, `the canary without data was aborted instead of paused: ${JSON.stringify(done.status)}`);
        assert.strictEqual(done.status?.phase, "Paused", "the Rollout is not Paused");
        assert.strictEqual(done.status?.stableRS, stable, "the pause moved the stable ReplicaSet");
        const list = await runs(canary);
        assert.ok(
            list.some((a) => a.status?.phase === "Inconclusive"),
            `no AnalysisRun of the starved canary is Inconclusive:\n${runSummary(list)}`,
        );
        assert.ok(!list.some((a) => a.status?.phase === "Failed"), `a gate failed the canary for lack of data:\n${runSummary(list)}`);
        series.clear();
    });

    it("bluegreen-promote", async function () {
        // A fresh smoke namespace for the other strategy: the canary's paused Rollout goes with its namespace.
        await up({ strategy: "blueGreen", namespace: BLUE_GREEN_NS, trigger: "bg1", failGate: false });
        const initial = await until("the first blue/green revision to be fully deployed", (r) => smokeState(r as unknown as KubeObject).kind === "promoted");
        const old = initial.status!.stableRS!;
        traffic(old, HEALTHY);
        const services: Watch<ServiceView> = watch(cluster(), `/api/v1/namespaces/${BLUE_GREEN_NS}/services`);
        try {
            await up({ trigger: "bg2" });
            const next = await newRevision(old);
            traffic(next, HEALTHY);
            const done = await until(
                "the new blue/green revision to be promoted",
                (r) => ["promoted", "aborted", "degraded"].includes(smokeState(r as unknown as KubeObject).kind) || r.status?.phase === "Paused",
            );
            assert.strictEqual(
                smokeState(done as unknown as KubeObject).kind,
                "promoted",
                `the healthy blue/green revision was not promoted: ${JSON.stringify(done.status)}\n${runSummary(await runs(next))}`,
            );
            const selectors = services.events.map((e) => [e.object.metadata.name, e.object.spec.selector?.[POD_HASH]] as const);
            const previewAt = selectors.findIndex(([n, h]) => n === `${SMOKE_APP}-preview` && h === next);
            const activeAt = selectors.findIndex(([n, h]) => n === `${SMOKE_APP}-active` && h === next);
            assert.ok(previewAt >= 0, `the preview Service never selected the new revision: ${JSON.stringify(selectors)}`);
            assert.ok(activeAt > previewAt, `the active Service switched before the preview selected the new revision: ${JSON.stringify(selectors)}`);
            const list = await settledRuns(next);
            const phases = (type: string) => list.filter((a) => a.metadata.labels?.["rollout-type"] === type).map((a) => a.status?.phase);
            assert.deepStrictEqual(phases("PrePromotion"), ["Successful"], `the pre-promotion gate:\n${runSummary(list)}`);
            assert.deepStrictEqual(phases("PostPromotion"), ["Successful"], `the post-promotion gate:\n${runSummary(list)}`);
        } finally {
            services.stop();
        }
        series.clear();
    });

    it("bluegreen-abort", async function () {
        const before = await rollout();
        const stable = before.status!.stableRS!;
        traffic(stable, HEALTHY);
        const activeName = `${SMOKE_APP}-active`;
        const services: Watch<ServiceView> = watch(cluster(), `/api/v1/namespaces/${BLUE_GREEN_NS}/services`);
        try {
            // A failing pre-promotion gate aborts before the switch: the active Service never moves.
            await up({ trigger: "bg3", failGate: true });
            const bad = await newRevision(stable);
            traffic(bad, FAILING);
            const aborted = await until("the failing preview to be aborted", (r) => r.status?.abort === true && r.status.phase === "Degraded");
            assert.strictEqual(aborted.status?.stableRS, stable);
            const pre = (await runs(bad)).filter((a) => a.metadata.labels?.["rollout-type"] === "PrePromotion");
            assert.ok(
                pre.some((a) => a.status?.phase === "Failed"),
                `the pre-promotion gate did not fail:\n${runSummary(pre)}`,
            );
            const activeHashes = services.events.filter((e) => e.object.metadata.name === activeName).map((e) => e.object.spec.selector?.[POD_HASH]);
            assert.ok(!activeHashes.includes(bad), `the active Service selected the version the pre-promotion gate failed: ${JSON.stringify(activeHashes)}`);
            assert.strictEqual((await getService(cluster(), BLUE_GREEN_NS, activeName)).spec.selector?.[POD_HASH], stable);
            traffic(bad, undefined);

            // Healthy on the preview, failing once it is active: the post-promotion gate switches back.
            await up({ trigger: "bg5", failGate: false });
            const late = await newRevision(bad);
            traffic(late, HEALTHY);
            await waitFor(
                "the switch to the new revision",
                150_000,
                async () => (await getService(cluster(), BLUE_GREEN_NS, activeName)).spec.selector?.[POD_HASH] === late,
                describeRollout,
            );
            const switchedAt = Date.now();
            traffic(late, FAILING);
            const back = await until("the post-promotion gate to abort", (r) => r.status?.abort === true && r.status.phase === "Degraded");
            await waitFor(
                "the active Service back on the stable revision",
                60_000,
                async () => (await getService(cluster(), BLUE_GREEN_NS, activeName)).spec.selector?.[POD_HASH] === stable,
                describeRollout,
            );
            const seconds = (Date.now() - switchedAt) / 1000;
            assert.strictEqual(back.status?.stableRS, stable);
            const post = (await runs(late)).filter((a) => a.metadata.labels?.["rollout-type"] === "PostPromotion");
            assert.ok(
                post.some((a) => a.status?.phase === "Failed"),
                `the post-promotion gate did not fail:\n${runSummary(post)}`,
            );
            // The old version was still scaled up to take the traffic back (scaleDownDelaySeconds).
            const oldRs = await getReplicaSet(cluster(), BLUE_GREEN_NS, rsName(stable));
            assert.ok(
                (oldRs.spec.replicas ?? 0) > 0,
                `the stable ReplicaSet was scaled down before the switch back (${seconds.toFixed(0)} s after the switch)`,
            );
        } finally {
            services.stop();
        }
        series.clear();
    });

    it("regulated-approval", async function () {
        // A tenant's regulated prod app, delivered with the program's own plan (the strategy
        // library, the platform's approver and deployer roles bound to the stack's groups), applied as the
        // GitOps identity applies it.
        const cfg = addonConfig(STACK, target.config);
        const regulated = cfg.policy.regulated;
        assert.ok(regulated, "the shipped preprod stack configures no policy.regulated");
        const ns = "payments";
        const app: AppSpec = {
            name: "payments-api",
            namespace: ns,
            port: 8080,
            route: { name: "payments-api", gateway: cfg.gateway, hostnames: ["payments.preprod.platform.test"] },
            critical: true,
        };
        const opts = {
            tier: "prod" as const,
            prodClass: "regulated" as const,
            shape: "canary" as const,
            gate: cfg.analysis,
        };
        assert.deepStrictEqual(checkOptions(app, opts), []);
        const plan = deliveryPlan(app, opts);
        // The platform's approval roles are the stack's (pulumi up declared them); Kyverno binds them in
        // each regulated namespace (kyverno-generates-approval-bindings proves it), here bound as it binds them.
        const bindings = approvalSides(regulated).map(({ side, groups }) => approvalBinding(side, groups, ns));
        const labels = { ...regulated.namespaceLabels, "platform.test/tier": "prod", "pod-security.kubernetes.io/enforce": "restricted" };
        const rolloutDoc = (revision: string) => ({
            apiVersion: "argoproj.io/v1alpha1",
            kind: "Rollout",
            metadata: { name: app.name, namespace: ns, labels: appLabels(app) },
            spec: {
                replicas: 2,
                selector: { matchLabels: appLabels(app) },
                template: {
                    ...smokePodTemplate({ ...smokeConfig(cfg), failGate: false }, revision),
                    metadata: { labels: appLabels(app), annotations: { "e2e.platform.test/revision": revision } },
                },
                strategy: plan.strategy,
            },
        });
        const apply = (docs: unknown[]) =>
            cluster().kubectl(["apply", "--server-side", "--field-manager=argocd-controller", "-f", "-"], docs.map((d) => JSON.stringify(d)).join("\n---\n"));
        apply([{ apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels } }]);
        apply([...plan.services, plan.httpRoute, ...bindings, rolloutDoc("v1")]);
        const get = () => getRollout(cluster(), ns, app.name);
        const state = async () => smokeState((await get()) as unknown as KubeObject);
        await waitFor("the regulated app's first version", 120_000, async () => (await state()).kind === "promoted", describeRollout);
        const stable = (await get()).status!.stableRS!;
        series.set(ns, `${app.name}-${stable}`, HEALTHY);
        apply([rolloutDoc("v2")]);
        let canary = "";
        await waitFor("the new version's ReplicaSet", 60_000, async () => {
            canary = (await get()).status?.currentPodHash ?? "";
            return canary !== "" && canary !== stable;
        });
        series.set(ns, `${app.name}-${canary}`, HEALTHY);
        const approvalStep = (plan.strategy as { canary: { steps: object[] } }).canary.steps.findIndex(
            (st) => "pause" in st && Object.keys((st as { pause: object }).pause).length === 0,
        );
        await waitFor(
            "the approval pause before 100 %",
            200_000,
            async () => {
                const r = await get();
                return r.status?.phase === "Paused" && r.status.currentStepIndex === approvalStep;
            },
            describeRollout,
        );

        // `kubectl argo rollouts promote` clears the pause conditions through the status
        // subresource, and unpauses the spec when it is paused (argo-rollouts
        // pkg/kubectl-argo-rollouts/cmd/promote/promote.go at v1.9.0).
        const promote = (user: string, group: string, subresource: boolean) =>
            run(path.join(w.bin, "kubectl"), [
                `--kubeconfig=${cluster().kubeconfig}`,
                `--as=${user}`,
                `--as-group=${group}`,
                "patch",
                "rollout",
                app.name,
                "-n",
                ns,
                "--type=merge",
                ...(subresource ? ["--subresource=status", "-p", '{"status":{"pauseConditions":null}}'] : ["-p", '{"spec":{"paused":false}}']),
            ]);
        for (const group of regulated.deployerGroups) {
            for (const subresource of [true, false]) {
                const r = promote("deployer@platform.test", group, subresource);
                assert.notStrictEqual(r.status, 0, `a deployer (${group}) could ${subresource ? "clear the approval pause" : "unpause the Rollout"}`);
                assert.match(r.stderr, /forbidden/i, `the deployer's attempt failed for another reason: ${r.stderr}`);
            }
        }
        assert.strictEqual((await get()).status?.phase, "Paused", "the Rollout left the approval pause after the deployer's attempts");
        const approve = promote("approver@platform.test", regulated.approverGroups[0], true);
        assert.strictEqual(approve.status, 0, `an approver (${regulated.approverGroups[0]}) could not approve: ${approve.stderr}`);
        await waitFor(
            "the approved version to be promoted",
            120_000,
            async () => (await state()).kind === "promoted" && (await get()).status?.stableRS === canary,
            describeRollout,
        );
        series.clear();
    });

    /**
     * The tier components run (ADR-056 D3, `npm run delivery`): an app's base (a Rollout, an
     * HTTPRoute) with an overlay per prod component (standard canary, regulated canary,
     * standard blue/green), built by kustomize v5.8.1 (the one ArgoCD v3.5.1 builds with) from the
     * files the stack renders, applied as the GitOps identity applies them. The real controller runs each:
     * a healthy second version is promoted, the regulated one stops at the approval pause, which a
     * deployer cannot pass and an approver (bound by the platform's approval role) does.
     */
    it("tier-components-run", async function () {
        this.timeout(12 * 60_000);
        const cfg = addonConfig(STACK, target.config);
        const regulated = cfg.policy.regulated;
        assert.ok(regulated, "the shipped preprod stack configures no policy.regulated");
        const strategies = stackStrategies(cfg);
        const kubectl = path.join(w.bin, "kubectl");
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tier-components-run-"));
        // The folder as `npm run delivery` writes it.
        for (const [file, text] of Object.entries(renderComponents(STACK, strategies))) {
            fs.mkdirSync(path.dirname(path.join(dir, "components", file)), { recursive: true });
            fs.writeFileSync(path.join(dir, "components", file), text);
        }
        const apply = (docs: unknown[]) =>
            cluster().kubectl(["apply", "--server-side", "--field-manager=argocd-controller", "-f", "-"], docs.map((d) => JSON.stringify(d)).join("\n---\n"));
        const runApp = async (id: string, name: string) => {
            const s = strategies.find((x) => x.id === id);
            assert.ok(s, `the stack renders no ${id}`);
            const ns = `tier-run-${name}`;
            const labels = appLabels({ name });
            const gw = cfg.gateway;
            const base = (revision: string) => [
                {
                    apiVersion: "argoproj.io/v1alpha1",
                    kind: "Rollout",
                    metadata: { name, namespace: ns, labels },
                    spec: {
                        replicas: 2,
                        selector: { matchLabels: labels },
                        template: {
                            ...smokePodTemplate({ ...smokeConfig(cfg), failGate: false }, revision),
                            metadata: { labels, annotations: { "e2e.platform.test/revision": revision } },
                        },
                        strategy: { canary: { steps: [{ setWeight: 100 }] } },
                    },
                },
                {
                    apiVersion: "gateway.networking.k8s.io/v1",
                    kind: "HTTPRoute",
                    metadata: { name, namespace: ns, labels },
                    spec: {
                        parentRefs: [{ name: gw.name, namespace: gw.namespace, sectionName: gw.listener }],
                        hostnames: [`${name}.preprod.platform.test`],
                        rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [{ name, port: 80 }] }],
                    },
                },
            ];
            // The tenant's overlay: its base, the component and its namespace (the base names one too).
            const build = (revision: string): unknown[] => {
                const at = path.join(dir, name);
                fs.mkdirSync(path.join(at, "base"), { recursive: true });
                fs.mkdirSync(path.join(at, "overlay"), { recursive: true });
                fs.writeFileSync(
                    path.join(at, "base", "app.yaml"),
                    base(revision)
                        .map((o) => JSON.stringify(o))
                        .join("\n---\n"),
                );
                fs.writeFileSync(
                    path.join(at, "base", "kustomization.yaml"),
                    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - app.yaml\n",
                );
                fs.writeFileSync(
                    path.join(at, "overlay", "kustomization.yaml"),
                    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../base\ncomponents:\n  - ../../components/${id}\nnamespace: ${ns}\n`,
                );
                const r = run(path.join(w.bin, "kustomize"), ["build", path.join(at, "overlay")]);
                assert.strictEqual(r.status, 0, `kustomize build of ${id} failed: ${r.stderr}`);
                return YAML.parseAllDocuments(r.stdout).map((d) => d.toJS() as unknown);
            };
            const get = () => getRollout(cluster(), ns, name);
            const describe = async () => {
                const r = await get().catch(() => undefined);
                const hash = r?.status?.currentPodHash;
                return `${id}: rollout status: ${JSON.stringify(r?.status)}\n${hash ? runSummary(await analysisRuns(cluster(), ns, hash)) : ""}\ncontroller log:\n${controllerLog(controller).split("\n").slice(-20).join("\n")}`;
            };
            const state = async () => smokeState((await get()) as unknown as KubeObject);
            apply([
                {
                    apiVersion: "v1",
                    kind: "Namespace",
                    metadata: {
                        name: ns,
                        labels: {
                            "platform.test/tier": "prod",
                            "pod-security.kubernetes.io/enforce": "restricted",
                            ...(s.prodClass === "regulated" ? regulated.namespaceLabels : {}),
                        },
                    },
                },
            ]);
            if (s.prodClass === "regulated") {
                // The platform's approval roles, bound as Kyverno binds them (kyverno-generates-approval-bindings).
                apply(approvalSides(regulated).map(({ side, groups }) => approvalBinding(side, groups, ns)));
            }
            const v1 = build("v1");
            const built = (v1.find((o) => (o as { kind: string }).kind === "Rollout") as { spec: { strategy: Record<string, unknown> } }).spec.strategy;
            assert.deepStrictEqual(Object.keys(built), [s.shape], `${id}: the overlay's Rollout is no ${s.shape}`);
            apply(v1);
            await waitFor(`${id}: the first version`, 180_000, async () => (await state()).kind === "promoted", describe);
            const stable = (await get()).status!.stableRS!;
            series.set(ns, `${name}-${stable}`, HEALTHY);
            // The second version changes the Rollout alone; the Services' selectors are the
            // controller's from the first version on (it adds the pod-template hash).
            apply(build("v2").filter((o) => (o as { kind: string }).kind === "Rollout"));
            let next = "";
            await waitFor(
                `${id}: the second version's ReplicaSet`,
                60_000,
                async () => {
                    next = (await get()).status?.currentPodHash ?? "";
                    return next !== "" && next !== stable;
                },
                describe,
            );
            series.set(ns, `${name}-${next}`, HEALTHY);
            if (s.prodClass === "regulated") {
                const steps = (componentPlan(s).strategy as { canary: { steps: object[] } }).canary.steps;
                const approvalStep = steps.findIndex((st) => "pause" in st && Object.keys((st as { pause: object }).pause).length === 0);
                await waitFor(
                    `${id}: the approval pause before 100 %`,
                    300_000,
                    async () => {
                        const r = await get();
                        return r.status?.phase === "Paused" && r.status.currentStepIndex === approvalStep;
                    },
                    describe,
                );
                // Give the paused Rollout a moment: it must stay at the approval.
                await new Promise((r) => setTimeout(r, 5_000));
                assert.strictEqual((await get()).status?.currentStepIndex, approvalStep, `${id} left the approval pause by itself`);
                const promote = (user: string, group: string) =>
                    run(kubectl, [
                        `--kubeconfig=${cluster().kubeconfig}`,
                        `--as=${user}`,
                        `--as-group=${group}`,
                        "patch",
                        "rollout",
                        name,
                        "-n",
                        ns,
                        "--type=merge",
                        "--subresource=status",
                        "-p",
                        '{"status":{"pauseConditions":null}}',
                    ]);
                for (const group of regulated.deployerGroups) {
                    const r = promote("deployer@platform.test", group);
                    assert.notStrictEqual(r.status, 0, `a deployer (${group}) could clear the approval pause of ${id}`);
                }
                const approve = promote("approver@platform.test", regulated.approverGroups[0]);
                assert.strictEqual(
                    approve.status,
                    0,
                    `an approver (${regulated.approverGroups[0]}) could not approve ${id} with the platform's approval role: ${approve.stderr}`,
                );
            }
            await waitFor(
                `${id}: the second version promoted`,
                420_000,
                async () => (await state()).kind === "promoted" && (await get()).status?.stableRS === next,
                describe,
            );
        };
        try {
            await Promise.all([
                runApp("prod-standard-canary", "std-canary"),
                runApp("prod-regulated-canary", "reg-canary"),
                runApp("prod-standard-blueGreen", "std-bluegreen"),
            ]);
        } finally {
            series.clear();
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("error-budget-freeze-waits", async function () {
        // ADR-056 D6: an exhausted budget freezes a non-critical canary before any traffic moves,
        // and the canary goes on by itself once the budget recovers; nothing aborts.
        const cfg = addonConfig(STACK, target.config);
        const app: AppSpec = {
            name: "orders-api",
            namespace: "orders",
            port: 8080,
            route: { name: "orders-api", gateway: cfg.gateway, hostnames: ["orders.preprod.platform.test"] },
            slo: { service: "orders-api", name: "availability" },
        };
        const t = tenantApp(app, { tier: "prod", prodClass: "standard", shape: "canary", gate: cfg.analysis });
        await budgets.set("orders-api", "availability", 0);
        const stable = await t.install();
        const canary = await t.deploy("v2", stable);
        // Frozen: three exhausted measurements, the rollout neither paused nor aborted, no weight.
        await waitFor(
            "three measurements of the exhausted budget",
            90_000,
            async () => measurements(freezeRun(await t.runs(canary))[0], "error-budget-remaining").length >= 3,
            t.describe,
        );
        const frozen = await t.get();
        assert.strictEqual(frozen.status?.currentStepIndex, 0, "the canary moved past the freeze while the budget was exhausted");
        assert.notStrictEqual(frozen.status?.abort, true, "the freeze aborted the rollout");
        assert.deepStrictEqual(frozen.status?.pauseConditions ?? [], [], "the freeze paused for a human before maxFreeze");
        const [during] = freezeRun(await t.runs(canary));
        assert.strictEqual(during.status?.phase, "Running", runSummary([during]));
        assert.ok(
            measurements(during, "error-budget-remaining").every((m) => m.phase === "Inconclusive"),
            runSummary([during]),
        );
        const route = await apiGet<RouteView>(cluster(), `/apis/gateway.networking.k8s.io/v1/namespaces/${app.namespace}/httproutes/${app.route!.name}`);
        assert.strictEqual(backendWeight(route, `${app.name}-canary`), 0, "traffic moved to the frozen canary");
        // The budget recovers: the canary goes on without anyone touching it.
        await budgets.set("orders-api", "availability", 0.6);
        await waitFor(
            "the canary to be promoted once the budget recovered",
            200_000,
            async () => {
                const r = await t.get();
                return smokeState(r as unknown as KubeObject).kind === "promoted" && r.status?.stableRS === canary;
            },
            t.describe,
        );
        const list = await settledRunsIn(app.namespace, canary);
        const [freeze] = freezeRun(list);
        assert.strictEqual(freeze?.status?.phase, "Successful", runSummary(list));
        assert.ok(!list.some((a) => ["Failed", "Error"].includes(a.status?.phase ?? "")), runSummary(list));
        series.clear();
    });

    it("error-budget-freeze-pauses", async function () {
        // A budget that does not recover within errorBudget.maxFreeze pauses the canary for a human
        // (Inconclusive), never aborts it; clearing the pause alone runs the freeze again.
        const app = { name: "orders-api", namespace: "orders" };
        const t = tenantApp(
            {
                ...app,
                port: 8080,
                route: { name: "orders-api", gateway: addonConfig(STACK, target.config).gateway, hostnames: ["orders.preprod.platform.test"] },
                slo: { service: "orders-api", name: "availability" },
            },
            {
                tier: "prod",
                prodClass: "standard",
                shape: "canary",
                gate: addonConfig(STACK, target.config).analysis,
            },
        );
        const stable = (await t.get()).status!.stableRS!;
        series.set(app.namespace, `${app.name}-${stable}`, HEALTHY);
        await budgets.set("orders-api", "availability", 0);
        const canary = await t.deploy("v3", stable);
        const paused = await (async () => {
            let r: RolloutView | undefined;
            await waitFor(
                "the freeze to pause for a human after maxFreeze",
                90_000,
                async () => {
                    r = await t.get();
                    return (r.status?.pauseConditions ?? []).some((p) => p.reason === "InconclusiveAnalysisRun") || r.status?.abort === true;
                },
                t.describe,
            );
            return r!;
        })();
        assert.notStrictEqual(paused.status?.abort, true, `the exhausted budget aborted the rollout: ${JSON.stringify(paused.status)}`);
        assert.strictEqual(paused.status?.phase, "Paused");
        assert.strictEqual(paused.status?.currentStepIndex, 0);
        const first = freezeRun(await t.runs(canary));
        assert.deepStrictEqual(
            first.map((a) => a.status?.phase),
            ["Inconclusive"],
            runSummary(first),
        );
        assert.strictEqual(
            measurements(first[0], "error-budget-remaining").length,
            freezeMeasurements(addonConfig(STACK, target.config).errorBudget),
            runSummary(first),
        );
        // Wait again: the budget has recovered; clearing the pause conditions starts a new freeze
        // run at the same step (rollout/analysis.go needsNewAnalysisRun), which lets it through.
        await budgets.set("orders-api", "availability", 0.6);
        const cleared = clearPause(app.namespace, app.name);
        assert.strictEqual(cleared.status, 0, cleared.stderr);
        await waitFor(
            "a second freeze run to let the canary through",
            90_000,
            async () => {
                const r = await t.get();
                return (r.status?.currentStepIndex ?? 0) > 0;
            },
            t.describe,
        );
        const runs = freezeRun(await t.runs(canary));
        assert.strictEqual(runs.length, 2, runSummary(runs));
        assert.ok(
            runs.some((a) => a.status?.phase === "Successful"),
            runSummary(runs),
        );
        assert.notStrictEqual((await t.get()).status?.abort, true);
        series.clear();
    });

    it("error-budget-bluegreen-pauses", async function () {
        // Blue/green checks the budget once before the switch; exhausted, it pauses (a paused
        // rollout is spared the progress deadline, set short here), and promote checks again.
        const cfg = addonConfig(STACK, target.config);
        const app: AppSpec = {
            name: "ledger-api",
            namespace: "ledger",
            port: 8080,
            route: { name: "ledger-api", gateway: cfg.gateway, hostnames: ["ledger.preprod.platform.test"] },
            slo: { service: "ledger-api", name: "availability" },
        };
        const t = tenantApp(app, { tier: "prod", prodClass: "standard", shape: "blueGreen", gate: cfg.analysis }, { progressDeadlineSeconds: 15 });
        await budgets.set("ledger-api", "availability", 0);
        const stable = await t.install();
        const next = await t.deploy("v2", stable);
        const active = `${app.name}-active`;
        await waitFor(
            "the exhausted budget to pause before the switch",
            120_000,
            async () => {
                const r = await t.get();
                return (r.status?.pauseConditions ?? []).some((p) => p.reason === "InconclusiveAnalysisRun") || r.status?.abort === true;
            },
            t.describe,
        );
        // Past the progress deadline, still paused, not Degraded, and the active Service unmoved.
        await new Promise((resolve) => setTimeout(resolve, 25_000));
        const held = await t.get();
        assert.notStrictEqual(held.status?.abort, true, `the exhausted budget aborted: ${JSON.stringify(held.status)}`);
        assert.strictEqual(held.status?.phase, "Paused", `a paused blue/green rollout timed out: ${JSON.stringify(held.status)}`);
        assert.strictEqual((await getService(cluster(), app.namespace, active)).spec.selector?.[POD_HASH], stable);
        const pre = (await t.runs(next)).filter((a) => a.metadata.labels?.["rollout-type"] === "PrePromotion");
        assert.deepStrictEqual(
            pre.map((a) => a.status?.phase),
            ["Inconclusive"],
            runSummary(pre),
        );
        // The budget recovers; promote runs the check again, which lets the new version through.
        await budgets.set("ledger-api", "availability", 0.6);
        const cleared = clearPause(app.namespace, app.name);
        assert.strictEqual(cleared.status, 0, cleared.stderr);
        await waitFor(
            "the switch once the budget recovered",
            120_000,
            async () => (await getService(cluster(), app.namespace, active)).spec.selector?.[POD_HASH] === next,
            t.describe,
        );
        const after = (await t.runs(next)).filter((a) => a.metadata.labels?.["rollout-type"] === "PrePromotion");
        assert.deepStrictEqual(after.map((a) => a.status?.phase).sort(), ["Inconclusive", "Successful"], runSummary(after));
        series.clear();
    });

    /**
     * Overlays as tenants write them (docs/tenants/delivery-strategies.md): every component the
     * fixture hub renders, on a base that names no namespace, in a prefixed, a suffixed and a
     * namespace-set overlay, each built by kustomize v5.8.1, every name its objects give each other
     * an object of the build, and applied into a namespace of its own as ArgoCD applies to its
     * destination: the real controller brings each to a healthy first version and takes over the
     * Services the build renamed.
     */
    it("tenant-overlay-idioms", async function () {
        this.timeout(8 * 60_000);
        const cfg = addonConfig(STACK, target.config);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tenant-overlay-idioms-"));
        for (const [file, text] of Object.entries(renderComponents("hub", stackStrategies(addonConfig("hub", fixtureConfig("hub")))))) {
            fs.mkdirSync(path.dirname(path.join(dir, "components", file)), { recursive: true });
            fs.writeFileSync(path.join(dir, "components", file), text);
        }
        const labels = appLabels({ name: "orders" });
        const gw = cfg.gateway;
        const base = [
            {
                apiVersion: "argoproj.io/v1alpha1",
                kind: "Rollout",
                metadata: { name: "orders", labels },
                spec: {
                    replicas: 1,
                    selector: { matchLabels: labels },
                    template: { ...smokePodTemplate({ ...smokeConfig(cfg), failGate: false }, "v1"), metadata: { labels } },
                    strategy: { canary: { steps: [{ setWeight: 100 }] } },
                },
            },
            {
                apiVersion: "gateway.networking.k8s.io/v1",
                kind: "HTTPRoute",
                metadata: { name: "orders", labels },
                spec: {
                    parentRefs: [{ name: gw.name, namespace: gw.namespace, sectionName: gw.listener }],
                    hostnames: ["orders.preprod.platform.test"],
                    rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [{ name: "orders", port: 80 }] }],
                },
            },
        ];
        fs.mkdirSync(path.join(dir, "base"));
        fs.writeFileSync(path.join(dir, "base", "app.yaml"), base.map((o) => JSON.stringify(o)).join("\n---\n"));
        fs.writeFileSync(path.join(dir, "base", "kustomization.yaml"), "resources:\n  - app.yaml\n");
        const apps: { ns: string; objects: Built[]; rollout: string }[] = [];
        try {
            const problems: string[] = [];
            for (const s of stackStrategies(addonConfig("hub", fixtureConfig("hub")))) {
                for (const idiom of Object.keys(IDIOMS) as Idiom[]) {
                    const ns = `${idiom}-${s.id.toLowerCase()}`;
                    const objects = buildOverlay(path.join(w.bin, "kustomize"), dir, s.id, idiom, ns);
                    const rollout = objects.find((o) => o.kind === "Rollout");
                    problems.push(
                        ...unresolved(objects).map((p) => `${s.id} ${idiom}: ${p}`),
                        ...objects
                            .filter((o) => !IDIOMS[idiom].holds(o, ns))
                            .map((o) => `${s.id} ${idiom}: ${o.kind} ${o.metadata.namespace}/${o.metadata.name} is not ${idiom}`),
                        ...(Object.keys(rollout?.spec?.strategy ?? {})[0] === s.shape ? [] : [`${s.id} ${idiom}: the Rollout is no ${s.shape}`]),
                    );
                    apps.push({ ns, objects, rollout: rollout?.metadata.name ?? "" });
                }
            }
            assert.deepStrictEqual(problems, [], problems.join("\n"));
            for (const app of apps) {
                cluster().kubectl(["create", "namespace", app.ns]);
                cluster().kubectl(
                    ["apply", "--server-side", "--field-manager=argocd-controller", "-n", app.ns, "-f", "-"],
                    app.objects.map((d) => JSON.stringify(d)).join("\n---\n"),
                );
            }
            const states = () =>
                Promise.all(apps.map(async (a) => [a, smokeState((await getRollout(cluster(), a.ns, a.rollout)) as unknown as KubeObject)] as const));
            await waitFor(
                "every overlay's first version",
                240_000,
                async () => (await states()).every(([, st]) => st.kind === "promoted"),
                async () =>
                    (await states())
                        .filter(([, st]) => st.kind !== "promoted")
                        .map(([a, st]) => `${a.ns}/${a.rollout}: ${st.kind} ${"message" in st ? st.message : ""}`)
                        .join("\n") + `\ncontroller log:\n${controllerLog(controller).split("\n").slice(-20).join("\n")}`,
            );
            // The controller found each renamed Service: it selects the first version's pods by their hash.
            for (const a of apps) {
                const stable = (await getRollout(cluster(), a.ns, a.rollout)).status!.stableRS!;
                for (const svc of a.objects.filter((o) => o.kind === "Service")) {
                    const selector = (await getService(cluster(), a.ns, svc.metadata.name)).spec.selector ?? {};
                    assert.strictEqual(
                        selector[POD_HASH],
                        stable,
                        `${a.ns}: Service ${svc.metadata.name} selects ${JSON.stringify(selector)}, not ${a.rollout}'s first version`,
                    );
                }
            }
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
            for (const a of apps) {
                cluster().kubectl(["delete", "namespace", a.ns, "--ignore-not-found", "--wait=false"]);
            }
        }
    });

    it("verify-live-controller", async function () {
        // verify's smoke check holds the outcome to the stack's smokeTest: bring the last revision
        // (aborted above) to the outcome the healthy configuration asks for first.
        const before = await rollout();
        await up({ trigger: "bg6", failGate: false });
        const next = await newRevision(before.status!.currentPodHash!);
        traffic(next, HEALTHY);
        await until("the healthy blue/green revision to be promoted", (r) => smokeState(r as unknown as KubeObject).kind === "promoted");
        // The controller runs: only what this cluster really lacks is declared absent. The read
        // endpoint answers (the stand-in), over HTTPS: verify queries it trusting the stack's
        // mimir.readCaBundle, as the controller does.
        const absent = ["kyverno", "argocd", "gateway-controller"];
        // Without blocking this process: the Mimir stand-in in it answers verify's query.
        const r = await npmRunAsync("verify", [
            "--stack",
            STACK,
            "--json",
            "--kubeconfig",
            cluster().kubeconfig,
            "--context",
            "e2e",
            "--config-dir",
            env.projectDir,
            ...absent.flatMap((c) => ["--without", c]),
        ]);
        let report: { results?: CheckResult[] };
        try {
            report = JSON.parse(r.stdout);
        } catch {
            assert.fail(`verify printed no JSON (exit ${r.status}):\n${failure(r)}`);
        }
        const results = report.results ?? [];
        const byId = new Map(results.map((c) => [c.id, c]));
        for (const id of ["controller.available", "controller.leader", "controller.plugin", "controller.read-ca", "smoke.outcome", "metrics.query"]) {
            const c = byId.get(id);
            assert.ok(c, `verify ran no ${id}`);
            assert.strictEqual(c.status, "PASS", `${id}: ${c.status} ${c.note ?? ""}\n  ${c.findings.map((f) => `${f.object}: ${f.found}`).join("\n  ")}`);
        }
        const failed = results.filter((c) => c.status === "FAIL");
        assert.deepStrictEqual(
            failed.map((c) => c.id),
            [],
            `verify failed checks:\n${failed.map((c) => `${c.id}: ${c.findings.map((f) => `${f.object}: ${f.found}`).join("; ")}`).join("\n")}`,
        );
    });

    it("controller-rbac-token", function () {
        const log = controllerLog(controller);
        assert.ok(controller.identity.startsWith(`system:serviceaccount:${controllerNs}:`), controller.identity);
        assert.ok(
            /Started .*controller|Starting .*[Cc]ontroller|Download complete|Copied plugin|plugin/i.test(log),
            `the controller log shows no start:\n${log.slice(0, 2000)}`,
        );
        const denied = permissionErrors(log);
        assert.deepStrictEqual(denied, [], `the controller or the plugin was refused by RBAC (${controller.identity}):\n${denied.slice(0, 20).join("\n")}`);
        assert.ok(
            !mimir.requests.some((q) => q.status === 401 || q.status === 403),
            `a gate reached Mimir without this cluster's tenant: ${JSON.stringify(mimir.requests.filter((q) => q.status === 401 || q.status === 403).slice(0, 3))}`,
        );
    });
});
