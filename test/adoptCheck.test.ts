import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { chartObjects, renderedConfigKeys } from "../components/rollouts/chartObjects";
import { controllerValues } from "../components/rollouts/values";
import { PlannedObject, adoptCheck } from "../tools/adopt/check";
import { apiPath, fieldChanges, imageTag, isDowngrade, plural, removeKeysCommand, staleKeys, unresolvedArgs } from "../tools/adopt/inventory";
import { adoptCheckMain, adoptExitCode, formatAdoptText, plannedObjects } from "../tools/adopt-check";
import { configFromStackFile, readStackFile } from "../tools/stackFile";
import { KubeObject, ReadOnlyCluster, connect } from "../tools/verify/cluster";
import { FakeApiServer, startFakeApiServer } from "./verify/fakeApiServer";
import { FIXTURE_STACKS } from "./harness";
import { SUCCESS_RATE, TEMPLATE_NAME_PREFIX, ROLLOUTS_CRDS } from "../components/argoRollouts";

const HELM = { "app.kubernetes.io/instance": "argo-rollouts", "app.kubernetes.io/managed-by": "Helm" };
const helmManaged = [{ manager: "helm", operation: "Update" }];

const obj = (apiVersion: string, kind: string, metadata: KubeObject["metadata"], rest = {}): KubeObject => ({ apiVersion, kind, metadata, ...rest });
const rollout = (namespace: string, name: string, analysis: Record<string, unknown>) =>
    obj("argoproj.io/v1alpha1", "Rollout", { name, namespace }, { spec: { strategy: { canary: { analysis } } } });

/** The old install: Helm release, its CRDs without keep, one owned by Terraform, a newer controller, a stale key, the dashboard's Ingress, a tenant template. */
function brownfield(ns: string): KubeObject[] {
    const helmed = (name: string) => ({ name, namespace: ns, labels: HELM, managedFields: helmManaged });
    const containers = [{ name: "argo-rollouts", image: "quay.io/argoproj/argo-rollouts:v1.9.1" }];
    return [
        ...ROLLOUTS_CRDS.map((c, i) =>
            obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", {
                name: c.name,
                labels: { ...HELM },
                annotations: i === 0 ? { "meta.helm.sh/release-name": "argo-rollouts" } : {},
                managedFields: i === 1 ? [{ manager: "Terraform", operation: "Apply" }] : helmManaged,
            }),
        ),
        obj("v1", "Secret", { name: "sh.helm.release.v1.argo-rollouts.v1", namespace: ns, labels: { owner: "helm", name: "argo-rollouts" } }),
        obj("apps/v1", "Deployment", helmed("argo-rollouts"), { spec: { template: { spec: { containers } } } }),
        obj("v1", "ConfigMap", helmed("argo-rollouts-config"), { data: { trafficRouterPlugins: "- name: old", metricProviderPlugins: "- name: old-metrics" } }),
        obj("networking.k8s.io/v1", "Ingress", { name: "argo-rollouts-dashboard", namespace: ns, labels: HELM }),
        obj("argoproj.io/v1alpha1", "ClusterAnalysisTemplate", { name: "success-rate" }, { spec: { args: [{ name: "service-name" }], metrics: [] } }),
        rollout("tenant-a", "web", { templates: [{ templateName: "success-rate", clusterScope: true }], args: [{ name: "service-name", value: "web" }] }),
        rollout("tenant-b", "api", { templates: [{ templateName: SUCCESS_RATE, clusterScope: true }], args: [{ name: "namespace", value: "tenant-b" }] }),
    ];
}

describe("adopt-check", () => {
    describe("inventory rules", () => {
        it("derives REST paths of the kinds the stack declares", () => {
            assert.deepStrictEqual(["CiliumNetworkPolicy", "Ingress", "Namespace"].map(plural), ["ciliumnetworkpolicies", "ingresses", "namespaces"]);
            assert.strictEqual(apiPath("v1", "ConfigMap", "argo-rollouts", "x"), "/api/v1/namespaces/argo-rollouts/configmaps/x");
            assert.strictEqual(apiPath("rbac.authorization.k8s.io/v1", "ClusterRole", undefined, "x"), "/apis/rbac.authorization.k8s.io/v1/clusterroles/x");
        });

        it("lists the fields the stack sets to another value, never a Secret's data or the provider's annotations", () => {
            const planned = {
                apiVersion: "v1",
                kind: "ConfigMap",
                metadata: { name: "c", labels: { a: "1", b: "2" }, annotations: { "pulumi.com/patchForce": "true" } },
                data: { k: "new", same: "v" },
            };
            const live: KubeObject = { metadata: { name: "c", labels: { a: "1" } }, data: { k: "old", same: "v", extra: "x" } };
            assert.deepStrictEqual(fieldChanges(planned, live), ["metadata.labels.b", "data.k"]);
            assert.deepStrictEqual(
                fieldChanges(
                    { kind: "Secret", metadata: { name: "s" }, stringData: { token: "plaintext" } },
                    { metadata: { name: "s" }, data: { token: "b2xk" } },
                ),
                [],
            );
            assert.deepStrictEqual(fieldChanges({ kind: "Deployment", spec: { replicas: 2 } }, { spec: { replicas: 2 } }), []);
        });

        it("finds stale keys and retires them with a JSON patch that removes only them", () => {
            assert.deepStrictEqual(staleKeys({ data: { a: "1", b: "2" } }, ["a"]), ["b"]);
            assert.deepStrictEqual(staleKeys(undefined, ["a"]), []);
            assert.strictEqual(
                removeKeysCommand("ns", "cm", ["a/b"]),
                `kubectl patch configmap cm -n ns --type=json -p '[{"op":"remove","path":"/data/a~1b"}]'`,
            );
        });

        it("resolves args as MergeArgs and ResolveArgs do", () => {
            const template = [{ name: "namespace" }, { name: "rollout" }, { name: "window", value: "5m" }];
            assert.deepStrictEqual(
                unresolvedArgs(template, [
                    { name: "namespace", value: "t" },
                    { name: "rollout", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                ]),
                [],
            );
            // An undeclared incoming arg is ignored; a declared one without a value is not resolved.
            assert.deepStrictEqual(unresolvedArgs(template, [{ name: "service-name", value: "web" }]), ["namespace", "rollout"]);
            // A template default is kept when nothing is passed.
            assert.deepStrictEqual(unresolvedArgs([{ name: "window", value: "5m" }], []), []);
        });

        it("compares versions and image tags", () => {
            assert.strictEqual(isDowngrade("v1.9.1", "v1.9.0"), true);
            assert.strictEqual(isDowngrade("v1.9.0", "v1.9.0"), false);
            assert.strictEqual(isDowngrade("v1.8.3", "v1.9.0"), false);
            assert.strictEqual(isDowngrade("latest", "v1.9.0"), undefined);
            assert.strictEqual(imageTag("registry:5000/argoproj/argo-rollouts:v1.9.1"), "v1.9.1");
            assert.strictEqual(imageTag("registry:5000/argoproj/argo-rollouts@sha256:abc"), undefined);
        });

        it("knows what the chart renders for the program's values", () => {
            const config = configFromStackFile(readStackFile("hub", FIXTURE_STACKS));
            const names = chartObjects({ serviceMonitor: false, dashboard: false }).map((o) => `${o.kind}/${o.name}`);
            assert.deepStrictEqual(names, [
                "ServiceAccount/argo-rollouts",
                "ConfigMap/argo-rollouts-config",
                "Deployment/argo-rollouts",
                "Service/argo-rollouts-metrics",
                "PodDisruptionBudget/argo-rollouts",
            ]);
            assert.ok(chartObjects({ serviceMonitor: false, dashboard: true }).some((o) => o.kind === "ClusterRole" && o.name === "argo-rollouts-dashboard"));
            assert.deepStrictEqual(renderedConfigKeys(controllerValues(config).controller as Record<string, unknown>), ["trafficRouterPlugins"]);
        });
    });

    describe("against a cluster", () => {
        // adopt-check's own client against the fake API server: every test fails if it sent a write.
        let server: FakeApiServer | undefined;
        afterEach(async () => {
            await server?.close();
            assert.deepStrictEqual(server?.violations, []);
        });
        const fakeCluster = async (objects: KubeObject[]): Promise<ReadOnlyCluster> => {
            server = await startFakeApiServer({ objects });
            return connect({ connection: { kind: "kubeconfig", context: "fake" }, kubeconfig: server.kubeconfig });
        };
        const config = configFromStackFile(readStackFile("hub", FIXTURE_STACKS));
        const ns = config.controller.namespace;
        let planned: PlannedObject[];
        before(async () => {
            planned = await plannedObjects("hub", FIXTURE_STACKS);
        });

        it("on the old install: reports what it takes over, leaves behind and would break, and exits 1", async () => {
            const report = await adoptCheck(config, planned, await fakeCluster(brownfield(ns)));
            const text = formatAdoptText(report);
            assert.strictEqual(adoptExitCode(report), 1);
            assert.deepStrictEqual(report.controller, { running: "v1.9.1", configured: config.controller.appVersion });
            const found = report.breaks.map((b) => `${b.object}: ${b.found}`).join("\n");
            for (const pattern of [
                /^Deployment argo-rollouts\/argo-rollouts: runs v1\.9\.1; .*downgrades/m,
                /^Helm release argo-rollouts\/argo-rollouts: 1 release record/m,
                /rollouts\.argoproj\.io.*Helm release argo-rollouts without helm\.sh\/resource-policy: keep/,
                /^CustomResourceDefinition analysistemplates\.argoproj\.io: managed by Terraform \(Apply\): a destroy of that Terraform state deletes it/m,
                /^Rollout tenant-b\/api: canary\.analysis references ClusterAnalysisTemplate argo-rollouts-addon-success-rate and passes no args\.rollout, args\.canary-hash/m,
            ]) {
                assert.match(found, pattern, text);
            }
            // The tenant's own success-rate is never adopted: it stays, its user resolves.
            assert.deepStrictEqual(report.tenantTemplates, [
                { template: "success-rate", rollouts: [{ rollout: "tenant-a/web", where: "canary.analysis", resolves: true, unresolved: [] }] },
            ]);
            assert.ok(!report.objects.some((o) => o.object === "ClusterAnalysisTemplate success-rate"));
            const left = report.leftovers.map((l) => `${l.object}: ${l.retire}`);
            for (const line of [
                `ConfigMap ${ns}/argo-rollouts-config: kubectl patch configmap argo-rollouts-config -n ${ns} --type=json -p '[{"op":"remove","path":"/data/metricProviderPlugins"}]'`,
                `Ingress ${ns}/argo-rollouts-dashboard: kubectl delete ingress -n ${ns} argo-rollouts-dashboard`,
                // The CRD that still carries the release's annotation can be taken back by a helm install.
                `CustomResourceDefinition ${ROLLOUTS_CRDS[0].name}: kubectl annotate customresourcedefinition ${ROLLOUTS_CRDS[0].name} meta.helm.sh/release-name- meta.helm.sh/release-namespace-`,
            ]) {
                assert.ok(left.includes(line), text);
            }
            assert.ok(!left.some((l) => l.startsWith(`CustomResourceDefinition ${ROLLOUTS_CRDS[1].name}:`)), "a CRD without the annotation is not claimable");
            const deployment = report.objects.find((o) => o.object === `Deployment ${ns}/argo-rollouts`)!;
            assert.deepStrictEqual([deployment.present, deployment.declaredBy, deployment.managers], [true, "chart", ["helm (Update)"]]);
            assert.ok(report.objects.filter((o) => o.declaredBy === "stack").length === planned.length);
        });

        it("shows the field changes on the chart's objects and the CRDs, and the old install's shapes it cannot take over", async () => {
            const objects = brownfield(ns);
            // A plain-manifest controller's selector and a budget with minAvailable.
            const deployment = objects.find((o) => o.kind === "Deployment")!;
            (deployment.spec as Record<string, unknown>).selector = { matchLabels: { "app.kubernetes.io/name": "argo-rollouts" } };
            objects.push({
                apiVersion: "policy/v1",
                kind: "PodDisruptionBudget",
                metadata: { name: "argo-rollouts", namespace: ns, labels: HELM, managedFields: helmManaged },
                spec: { minAvailable: 1 },
            });
            const urls: string[][] = [];
            const report = await adoptCheck(config, planned, await fakeCluster(objects), async (u) => {
                urls.push(u);
                return ROLLOUTS_CRDS.map((c) => ({
                    apiVersion: "apiextensions.k8s.io/v1",
                    kind: "CustomResourceDefinition",
                    metadata: { name: c.name, labels: { ...HELM, "app.kubernetes.io/version": "v1.9.0" } },
                    spec: { group: "argoproj.io" },
                }));
            });
            assert.deepStrictEqual(urls, [
                ROLLOUTS_CRDS.map((c) => `${config.controller.crdBaseUrl}/${config.controller.appVersion}/manifests/crds/${c.file}`),
            ]);
            const changes = (name: string) => report.objects.find((o) => o.object === name)?.changes;
            assert.deepStrictEqual(changes(`Deployment ${ns}/argo-rollouts`), [
                "spec.selector.matchLabels.app.kubernetes.io/component",
                "spec.selector.matchLabels.app.kubernetes.io/instance",
                "spec.replicas",
                "spec.template.spec.serviceAccountName",
                "spec.template.spec.containers[argo-rollouts].image",
            ]);
            assert.deepStrictEqual(changes(`PodDisruptionBudget ${ns}/argo-rollouts`), [
                "spec.maxUnavailable",
                "spec.selector.matchLabels.app.kubernetes.io/component",
                "spec.selector.matchLabels.app.kubernetes.io/name",
                "spec.selector.matchLabels.app.kubernetes.io/instance",
            ]);
            assert.deepStrictEqual(changes(`CustomResourceDefinition ${ROLLOUTS_CRDS[0].name}`), ["metadata.labels.app.kubernetes.io/version", "spec.group"]);
            const found = report.breaks.map((b) => `${b.object}: ${b.found}`).join("\n");
            assert.ok(found.includes(`Deployment ${ns}/argo-rollouts: selects {app.kubernetes.io/name=argo-rollouts}, the chart {`), found);
            assert.ok(found.includes(`PodDisruptionBudget ${ns}/argo-rollouts: sets minAvailable 1`), found);
            // Without the CRD source, their fields are not compared, and the text says so.
            const unread = await adoptCheck(config, planned, await fakeCluster(brownfield(ns)), async () => ({ error: "connect ECONNREFUSED" }));
            assert.strictEqual(unread.objects.find((o) => o.object === `CustomResourceDefinition ${ROLLOUTS_CRDS[0].name}`)?.changes, null);
            assert.match(
                formatAdoptText(unread),
                /CustomResourceDefinition rollouts\.argoproj\.io \[crds\] managers helm \(Update\); fields: not compared \(connect ECONNREFUSED\)/,
            );
        });

        it("accepts a downgrade only when the stack allows it for the adopting run", async () => {
            const allowing = { ...config, cluster: { ...config.cluster, adoptExisting: true, allowDowngrade: true } };
            const report = await adoptCheck(allowing, planned, await fakeCluster(brownfield(ns)));
            assert.ok(!report.breaks.some((b) => b.found.includes("downgrades")));
        });

        it("breaks until the stack file names the release of the line the cluster runs, naming the command", async () => {
            const report = await adoptCheck(config, planned, await fakeCluster(brownfield(ns)));
            const named = report.breaks.find((b) => b.object === "Pulumi.hub.yaml");
            assert.match(named?.found ?? "", /names no controller\.chartVersion while the cluster runs v1\.9\.1/);
            assert.strictEqual(named?.fix, "pulumi config set --path controller.chartVersion 2.41.0 -s hub (the chart of the 1.9 line it runs)");
            const naming = { ...config, controller: { ...config.controller, releaseFromStackFile: true } };
            assert.ok(!(await adoptCheck(naming, planned, await fakeCluster(brownfield(ns)))).breaks.some((b) => b.object === "Pulumi.hub.yaml"));
        });

        it("on an empty cluster: everything absent, nothing left behind, exit 0", async () => {
            const report = await adoptCheck(config, planned, await fakeCluster([]));
            assert.strictEqual(adoptExitCode(report), 0, formatAdoptText(report));
            assert.ok(report.objects.every((o) => !o.present));
            assert.deepStrictEqual(report.leftovers, []);
            assert.ok(planned.some((p) => p.kind === "ClusterAnalysisTemplate" && p.metadata.name.startsWith(TEMPLATE_NAME_PREFIX)));
        });

        it("is a CLI with the exit status of its usage: --help 0 and says what each status means, a usage error 2", async () => {
            const out: string[] = [];
            const main = (argv: string[]) =>
                adoptCheckMain(
                    argv,
                    (s) => out.push(s),
                    (s) => out.push(s),
                );
            assert.strictEqual(await main(["--help"]), 0);
            assert.match(out.join("\n"), /Exit status: 0 adopting breaks nothing/);
            assert.strictEqual(await main(["--bogus"]), 2);
            assert.match(out.at(-1)!, /unknown argument --bogus; usage: npm run adopt-check/);
            const kubeconfig = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "kc-")), "config");
            fs.writeFileSync(kubeconfig, "users:\n- name: u\n  user:\n    token: s3cret\n  bad: [open\nclusters: []\n");
            assert.strictEqual(await main(["--stack", "hub", "--config-dir", FIXTURE_STACKS, "--kubeconfig", kubeconfig]), 2);
            assert.match(out.at(-1)!, /^stack "hub": cannot check adoption: .*\(\d+:\d+\)$/);
            assert.ok(!out.join("\n").includes("s3cret"));
        });
    });
});
