/**
 * Brownfield: a cluster where the old install exists (the chart installed by the Helm CLI as release
 * argo-rollouts with its five CRDs, a stale plugin key in its config, a tenant ClusterAnalysisTemplate
 * `success-rate` with args of its own and a tenant Rollout using it, a Rollout that moved to the
 * addon's template without its args, and a same-named route created by kubectl). adopt-check, read
 * only, reports each and exits 1; without adoption `pulumi up` refuses and changes nothing; the
 * documented runbook (docs/operations/adopt.md), step by step as written, adopts it without losing
 * a Rollout or breaking a tenant's analysis; a `helm upgrade` of the old release afterwards takes
 * nothing back.
 *
 * The refusal is the program's own (stacks/preflight.ts): before any object reaches the engine it
 * reads every object the stack creates and stops with the adoption guidance when another tool's is
 * there, so `pulumi preview` fails where `up` would, on every kubernetes provider. That matters
 * here: the provider the run builds is v4.25.0, whose create under server-side apply is an apply
 * PATCH that never meets AlreadyExists (pulumi/pulumi-kubernetes #4278), while 4.29 and later
 * refuse in the middle of `up`. Adoption (upsertExistingObjects, and `pulumi.com/patchForce` per
 * object, which v4.25.0 reads as later releases do: provider/pkg/await/await.go, patchForce) works
 * alike on both, so every scenario runs with the run's provider.
 */
import assert from "assert";
import * as path from "path";
import type { AdoptReport } from "../../tools/adopt/check";
import { Argument, templateReferences, unresolvedArgs } from "../../tools/adopt/inventory";
import { Cluster } from "../lib/cluster";
import { world } from "../lib/context";
import { run, runAsync } from "../lib/procs";
import { PulumiEnv, failure } from "../lib/pulumi";
import { StackTarget, World, npmRunAsync } from "../lib/world";
import { addonConfig, waitEstablished } from "../lib/platform";
import { readmeRunbook } from "../lib/readme";
import { ROLLOUTS_CRDS, SUCCESS_RATE } from "../../components/argoRollouts";

const CRD_NAMES = ROLLOUTS_CRDS.map((c) => c.name);
/** Every kind the hub stack declares, to prove a refused up created or changed none of them. */
const SNAPSHOT_KINDS = [
    "namespaces",
    "configmaps",
    "serviceaccounts",
    "deployments.apps",
    "poddisruptionbudgets.policy",
    "roles.rbac.authorization.k8s.io",
    "rolebindings.rbac.authorization.k8s.io",
    "clusterroles.rbac.authorization.k8s.io",
    "clusterrolebindings.rbac.authorization.k8s.io",
    "customresourcedefinitions.apiextensions.k8s.io",
    "clusteranalysistemplates.argoproj.io",
    "httproutes.gateway.networking.k8s.io",
    "ciliumnetworkpolicies.cilium.io",
    "validatingpolicies.policies.kyverno.io",
].join(",");
const TENANT_NS = "tenant-a";

/** The tenant's own template: the old install's name, with args of its own. */
const TENANT_TEMPLATE = "success-rate";

/**
 * A tenant Rollout (the controller never runs here: no kubelet, no controller process). `web`
 * gates on the tenant's own `success-rate` with its own arg; `api` moved to the addon's template
 * but passes only `namespace`.
 */
function tenantRollout(name: string, analysis: Record<string, unknown>): string {
    return JSON.stringify({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Rollout",
        metadata: { name, namespace: TENANT_NS },
        spec: {
            replicas: 2,
            selector: { matchLabels: { app: name } },
            template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: `registry.platform.test/mirror/${name}:1` }] } },
            strategy: { canary: { analysis, steps: [{ setWeight: 25 }, { pause: { duration: "1m" } }] } },
        },
    });
}

const WEB_ANALYSIS = { templates: [{ templateName: TENANT_TEMPLATE, clusterScope: true }], args: [{ name: "service-name", value: "web" }] };
const API_ANALYSIS = {
    templates: [{ templateName: SUCCESS_RATE, clusterScope: true }],
    args: [{ name: "namespace", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } }],
};
/** The args the documented metric gates pass (docs/tenants/metric-gates.md). */
const FULL_ARGS = [
    { name: "namespace", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
    { name: "rollout", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    { name: "canary-hash", valueFrom: { podTemplateHashValue: "Latest" } },
];

/** What adopt-check prints with --json (tools/adopt/check.ts AdoptReport). */
type AdoptJson = AdoptReport & { exitCode: number };

export function uids(cluster: Cluster): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of CRD_NAMES) {
        out[`crd/${name}`] = cluster.kubectl(["get", "crd", name, "-o", "jsonpath={.metadata.uid}"]);
    }
    out["rollout/web"] = cluster.kubectl(["get", "rollouts.argoproj.io", "web", "-n", TENANT_NS, "-o", "jsonpath={.metadata.uid}"]);
    return out;
}

/** About how long this file runs beside another on 2 cores: orders the side-by-side run (e2e/lib/pool.ts). */
export const SECONDS = 240;

describe("brownfield", function () {
    let w: World;
    let env: PulumiEnv;
    let target: StackTarget;
    let uidsBefore: Record<string, string>;
    // Without blocking: the run's own file server answers adopt-check's CRD source.
    const adoptCheck = async (): Promise<{ status: number | null; report: AdoptJson; stderr: string }> => {
        const r = await npmRunAsync(
            "adopt-check",
            ["--stack", "hub", "--json", "--kubeconfig", target.cluster.kubeconfig, "--context", "e2e", "--config-dir", env.projectDir],
            { ...process.env, NODE_EXTRA_CA_CERTS: w.files.caFile },
        );
        let report: AdoptJson;
        try {
            report = JSON.parse(r.stdout) as AdoptJson;
        } catch {
            throw new Error(`adopt-check printed no JSON (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
        }
        return { status: r.status, report, stderr: r.stderr };
    };
    const snapshot = () =>
        target.cluster.kubectl([
            "get",
            SNAPSHOT_KINDS + ",rollouts.argoproj.io",
            "-A",
            "-o",
            'jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}={.metadata.resourceVersion}{"\\n"}{end}',
        ]);

    before(async function () {
        w = await world();
        env = w.pulumi("brownfield");
        target = await w.cluster("brownfield", "hub");
        const c = target.cluster;
        // The old install: the chart by the Helm CLI (its defaults: CRDs, cluster roles, aggregate roles).
        const helm = run(
            path.join(w.bin, "helm"),
            ["install", "argo-rollouts", w.chartArchive, "-n", "argo-rollouts", "--create-namespace", "--kubeconfig", c.kubeconfig],
            {
                env: {
                    ...process.env,
                    HELM_CACHE_HOME: path.join(w.dir, "helm", "cache"),
                    HELM_CONFIG_HOME: path.join(w.dir, "helm", "config"),
                    HELM_DATA_HOME: path.join(w.dir, "helm", "data"),
                },
            },
        );
        assert.strictEqual(helm.status, 0, `helm install of the old release failed:\n${helm.stderr}`);
        await waitEstablished(c);
        c.kubectl(["create", "namespace", TENANT_NS]);
        c.kubectl(["create", "-f", "-"], tenantRollout("web", WEB_ANALYSIS));
        c.kubectl(["create", "-f", "-"], tenantRollout("api", API_ANALYSIS));
        // A key an older release wrote and the stack's values do not render.
        c.kubectl([
            "patch",
            "configmap",
            "argo-rollouts-config",
            "-n",
            "argo-rollouts",
            "--type=merge",
            "-p",
            JSON.stringify({ data: { metricProviderPlugins: "- name: argoproj-labs/old-metrics\n  location: file:///old" } }),
        ]);
        // The tenant's template, and a same-named route of the stack another tool created.
        const cfg = addonConfig("hub", target.config);
        c.kubectl(
            ["create", "-f", "-"],
            JSON.stringify({
                apiVersion: "argoproj.io/v1alpha1",
                kind: "ClusterAnalysisTemplate",
                metadata: { name: TENANT_TEMPLATE },
                spec: {
                    args: [{ name: "service-name" }],
                    metrics: [
                        {
                            name: "old",
                            provider: { prometheus: { address: "http://old-prometheus:9090", query: "vector(1)" } },
                            successCondition: "result[0] >= 0.9",
                        },
                    ],
                },
            }),
        );
        const spoke = cfg.spokes[0];
        if (spoke) {
            c.kubectl(
                ["create", "-f", "-"],
                JSON.stringify({
                    apiVersion: "gateway.networking.k8s.io/v1",
                    kind: "HTTPRoute",
                    metadata: { name: `mimir-spoke-${spoke.name}-read`, namespace: cfg.mimir.namespace },
                    spec: {
                        parentRefs: [{ name: cfg.gateway.name, namespace: cfg.gateway.namespace }],
                        hostnames: [spoke.hostname],
                        rules: [{ backendRefs: [{ name: cfg.mimir.gatewayService, port: cfg.mimir.gatewayServicePort }] }],
                    },
                }),
            );
        }
        uidsBefore = uids(c);
        await w.initStack(env, target);
    });

    it("brownfield-adopt-check", async function () {
        const before = snapshot();
        const { status, report, stderr } = await adoptCheck();
        assert.strictEqual(snapshot(), before, "adopt-check changed the cluster");
        assert.strictEqual(status, 1, `adopt-check must exit 1 before the runbook:\n${stderr}`);
        assert.strictEqual(report.exitCode, 1);
        const breaks = report.breaks.map((b) => `${b.object}: ${b.found}`);
        const has = (re: RegExp, list: string[], what: string) =>
            assert.ok(
                list.some((x) => re.test(x)),
                `${what}, in:\n${list.join("\n")}`,
            );
        has(/^Helm release argo-rollouts\/argo-rollouts: 1 release record/, breaks, "the old release's record");
        // The chart keeps its CRDs (`keepCRDs`, on by default, writes helm.sh/resource-policy: keep), so none breaks.
        assert.ok(!breaks.some((b) => b.startsWith("CustomResourceDefinition ")), breaks.join("\n"));
        assert.ok(
            report.crds.every((c) => c.present && c.managers.some((m) => m.startsWith("helm"))),
            JSON.stringify(report.crds),
        );
        has(
            new RegExp(
                `^Rollout ${TENANT_NS}/api: canary\\.analysis references ClusterAnalysisTemplate ${SUCCESS_RATE} and passes no args\\.rollout, args\\.canary-hash`,
            ),
            breaks,
            "the Rollout whose args do not resolve",
        );
        assert.deepStrictEqual(
            report.tenantTemplates.find((t) => t.template === TENANT_TEMPLATE),
            { template: TENANT_TEMPLATE, rollouts: [{ rollout: `${TENANT_NS}/web`, where: "canary.analysis", resolves: true, unresolved: [] }] },
        );
        const left = report.leftovers.map((l) => `${l.object}: ${l.retire}`);
        has(
            /^ConfigMap argo-rollouts\/argo-rollouts-config: kubectl patch configmap argo-rollouts-config -n argo-rollouts --type=json -p '\[\{"op":"remove","path":"\/data\/metricProviderPlugins"\}\]'$/,
            left,
            "the stale plugin key",
        );
        has(/^ClusterRole argo-rollouts-aggregate-to-edit: kubectl delete clusterrole argo-rollouts-aggregate-to-edit$/, left, "the old aggregate roles");
        const deployment = report.objects.find((o) => o.object === "Deployment argo-rollouts/argo-rollouts");
        assert.ok(deployment?.present && deployment.managers.some((m) => m.startsWith("helm")), JSON.stringify(deployment));
        // The chart's objects and the CRDs show their field changes too: the image moves to the
        // stack's registry, and the CRDs are compared with the manifests the stack applies.
        assert.ok(deployment.changes?.includes("spec.template.spec.containers[argo-rollouts].image"), JSON.stringify(deployment));
        const crdObjects = report.objects.filter((o) => o.declaredBy === "crds");
        assert.ok(crdObjects.length === CRD_NAMES.length && crdObjects.every((o) => Array.isArray(o.changes)), JSON.stringify(crdObjects));
        assert.strictEqual(report.controller.configured, addonConfig("hub", target.config).controller.appVersion);
        assert.ok(report.controller.running, "the running controller's version is reported");
        assert.strictEqual(report.crds.length, CRD_NAMES.length);
        // A newer controller than the stack's: adopt-check and the adopting preview both refuse,
        // before anything is declared (stacks/preflight.ts), whatever the provider's version.
        const image = target.cluster.kubectl([
            "get",
            "deployment",
            "argo-rollouts",
            "-n",
            "argo-rollouts",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ]);
        const newer = image.replace(/:v?\d+\.\d+\.\d+$/, ":v99.0.0");
        target.cluster.kubectl(["set", "image", "deployment/argo-rollouts", "-n", "argo-rollouts", `argo-rollouts=${newer}`]);
        try {
            const downgrade = (await adoptCheck()).report.breaks.find((b) => b.object === "Deployment argo-rollouts/argo-rollouts");
            assert.match(
                downgrade?.found ?? "",
                /runs v99\.0\.0; the stack configures controller\.appVersion .*: adopting downgrades the controller and the CRDs/,
            );
            const set = await env.pulumi(["config", "set", "--path", "cluster.adoptExisting", "true"], { stack: "hub" });
            assert.strictEqual(set.status, 0, failure(set));
            const preview = await env.pulumi(["preview", "--policy-pack", "policy-pack"], { stack: "hub" });
            assert.notStrictEqual(preview.status, 0, "the adopting preview accepted a downgrade");
            assert.match(
                preview.stdout + preview.stderr,
                /stack "hub": the cluster runs Argo Rollouts v99\.0\.0 and argo-rollouts-addon:controller\.appVersion = "v\d+\.\d+\.\d+": adopting would downgrade the controller and its CRDs/,
                failure(preview),
            );
            assert.doesNotMatch(preview.stdout, /\+\s+create/, "the refused preview planned resources");
        } finally {
            await env.pulumi(["config", "set", "--path", "cluster.adoptExisting", "false"], { stack: "hub" });
            target.cluster.kubectl(["set", "image", "deployment/argo-rollouts", "-n", "argo-rollouts", `argo-rollouts=${image}`]);
        }

        // The fix adopt-check names: the Rollout passes the args; the runbook does the rest.
        target.cluster.kubectl([
            "patch",
            "rollouts.argoproj.io",
            "api",
            "-n",
            TENANT_NS,
            "--type=json",
            "-p",
            JSON.stringify([{ op: "replace", path: "/spec/strategy/canary/analysis/args", value: FULL_ARGS }]),
        ]);
        const again = (await adoptCheck()).report;
        assert.ok(!again.breaks.some((b) => b.object.startsWith("Rollout ")), again.breaks.map((b) => b.found).join("\n"));
    });

    it("brownfield-refused", async function () {
        const before = target.cluster.kubectl([
            "get",
            SNAPSHOT_KINDS,
            "-A",
            "-o",
            'jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion}{"\\n"}{end}',
        ]);
        // The pull request's preview fails where the up would, and the up refuses before any object is applied.
        for (const args of [
            ["preview", "--policy-pack", "policy-pack"],
            ["up", "--yes", "--skip-preview", "--policy-pack", "policy-pack"],
        ]) {
            const r = await env.pulumi(args, { stack: "hub" });
            const out = r.stdout + r.stderr;
            assert.notStrictEqual(r.status, 0, `pulumi ${args[0]} without adoption succeeded on a cluster with the old install`);
            assert.match(
                out,
                /stack "hub": \d+ object\(s\) this stack creates already exist, made by another tool, and argo-rollouts-addon:cluster\.adoptExisting is false/,
                `pulumi ${args[0]} did not give the adoption guidance:\n${failure(r)}`,
            );
            // Every object of the old install is named, with the manager that made it.
            for (const named of [
                "Namespace argo-rollouts [stack]",
                "Deployment argo-rollouts/argo-rollouts [chart], managers: helm",
                "ConfigMap argo-rollouts/argo-rollouts-config [chart], managers: helm",
                ...CRD_NAMES.map((c) => `CustomResourceDefinition ${c} [crds], managers: helm`),
            ]) {
                assert.ok(out.includes(named), `pulumi ${args[0]}: ${named} is not named:\n${failure(r)}`);
            }
            assert.match(out, /follow the adoption runbook \(docs\/operations\/adopt\.md\): npm run adopt-check -- --stack hub/);
            assert.doesNotMatch(
                out,
                /kubernetes:(core|apps|rbac|apiextensions)[^\n]*\b(created|creating|updated|updating)\b/i,
                `pulumi ${args[0]} applied an object:\n${failure(r)}`,
            );
        }
        const after = target.cluster.kubectl([
            "get",
            SNAPSHOT_KINDS,
            "-A",
            "-o",
            'jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion}{"\\n"}{end}',
        ]);
        assert.strictEqual(after, before, "the refused preview or up changed pre-existing objects");
        assert.deepStrictEqual(uids(target.cluster), uidsBefore);
    });

    it("brownfield-adopted", async function () {
        const steps = readmeRunbook();
        const shellEnv = { ...env.env, KUBECONFIG: target.cluster.kubeconfig, PATH: `${w.bin}${path.delimiter}${env.env.PATH}` };
        for (const step of steps) {
            for (const command of step.commands) {
                if (command.startsWith("#") || /^(terraform|argocd) /.test(command)) {
                    continue; // comments, and the runbook's lines for other installers
                }
                const r = await runAsync("bash", ["-o", "pipefail", "-c", command], { cwd: env.projectDir, env: shellEnv });
                assert.strictEqual(r.status, 0, `runbook step "${step.title}": ${command} failed:\n${failure(r)}`);
                if (step.title.startsWith("Adopt in one run") && command.startsWith("pulumi up")) {
                    // The adopting run forced the chart's objects (children of a packaged component) one by one...
                    const annotation = "jsonpath={.metadata.annotations.pulumi\\.com/patchForce}";
                    assert.strictEqual(
                        target.cluster.kubectl(["get", "deployment", "argo-rollouts", "-n", "argo-rollouts", "-o", annotation]),
                        "true",
                        "the adopted controller Deployment was not forced",
                    );
                    assert.strictEqual(
                        target.cluster.kubectl(["get", "crd", "rollouts.argoproj.io", "-o", annotation]),
                        "true",
                        "the adopted Rollout CRD was not forced",
                    );
                    // ...and never a patch of an object another manager owns.
                    const patched = target.cluster.kubectl([
                        "get",
                        "configmaps",
                        "-A",
                        "-l",
                        "app.kubernetes.io/part-of=argocd",
                        "-o",
                        'jsonpath={range .items[*]}{.metadata.name}={.metadata.annotations.pulumi\\.com/patchForce}{"\\n"}{end}',
                    ]);
                    assert.deepStrictEqual(
                        patched.split("\n").filter((l) => /=.+$/.test(l)),
                        [],
                        "an ArgoCD ConfigMap patch was forced",
                    );
                }
            }
        }
        assert.deepStrictEqual(uids(target.cluster), uidsBefore, "a CRD or the tenant Rollout was replaced");
        // The force was the adopting run's only: once adoption is off, no object carries it.
        const forced = target.cluster.kubectl([
            "get",
            "deployments.apps,configmaps,clusteranalysistemplates.argoproj.io,customresourcedefinitions.apiextensions.k8s.io",
            "-A",
            "-o",
            'jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.annotations.pulumi\\.com/patchForce}{"\\n"}{end}',
        ]);
        assert.deepStrictEqual(
            forced.split("\n").filter((l) => /=.+$/.test(l)),
            [],
            "objects still forced after adoption was switched off",
        );
        const again = await env.pulumi(["up", "--yes", "--skip-preview", "--expect-no-changes", "--policy-pack", "policy-pack"], { stack: "hub" });
        assert.strictEqual(again.status, 0, `the up after adoption changed something:\n${failure(again)}`);
    });
    it("brownfield-tenant-templates", async function () {
        const c = target.cluster;
        // The tenant's template is never taken over: same object, same args, no new manager.
        const template = JSON.parse(c.kubectl(["get", "clusteranalysistemplates.argoproj.io", TENANT_TEMPLATE, "-o", "json"])) as {
            metadata: { uid: string; managedFields?: { manager?: string }[] };
            spec: { args: Argument[] };
        };
        assert.deepStrictEqual(template.spec.args, [{ name: "service-name" }]);
        assert.ok(!(template.metadata.managedFields ?? []).some((m) => /pulumi/.test(m.manager ?? "")), "a Pulumi manager took the tenant's template");
        // Every tenant Rollout's analysis resolves against the templates now live (MergeArgs/ResolveArgs).
        const live = JSON.parse(c.kubectl(["get", "clusteranalysistemplates.argoproj.io", "-o", "json"])) as {
            items: { metadata: { name: string }; spec: { args?: Argument[] } }[];
        };
        const argsOf = new Map(live.items.map((t) => [t.metadata.name, t.spec.args ?? []]));
        const rollouts = JSON.parse(c.kubectl(["get", "rollouts.argoproj.io", "-n", TENANT_NS, "-o", "json"])) as {
            items: Parameters<typeof templateReferences>[0][];
        };
        const refs = rollouts.items.flatMap(templateReferences);
        assert.deepStrictEqual(refs.map((r) => `${r.rollout}->${r.template}`).sort(), [
            `${TENANT_NS}/api->${SUCCESS_RATE}`,
            `${TENANT_NS}/web->${TENANT_TEMPLATE}`,
        ]);
        for (const r of refs) {
            assert.ok(argsOf.has(r.template), `${r.rollout} references ${r.template}, which does not exist`);
            assert.deepStrictEqual(unresolvedArgs(argsOf.get(r.template)!, r.args), [], `${r.rollout}: args of ${r.template} do not resolve`);
        }
        assert.deepStrictEqual(uids(c), uidsBefore);
    });

    it("brownfield-old-installer-gone", async function () {
        const c = target.cluster;
        // What a registry's reconcile of the old unit runs: an upgrade of the release it knows.
        const before = snapshot();
        const helm = run(path.join(w.bin, "helm"), ["upgrade", "argo-rollouts", w.chartArchive, "-n", "argo-rollouts", "--kubeconfig", c.kubeconfig], {
            env: {
                ...process.env,
                HELM_CACHE_HOME: path.join(w.dir, "helm", "cache"),
                HELM_CONFIG_HOME: path.join(w.dir, "helm", "config"),
                HELM_DATA_HOME: path.join(w.dir, "helm", "data"),
            },
        });
        assert.notStrictEqual(helm.status, 0, "helm upgrade found a release to take back");
        assert.match(helm.stderr, /has no deployed releases/, helm.stderr);
        // And a reconcile that installs when the release is missing: the objects are no longer the release's.
        const install = run(
            path.join(w.bin, "helm"),
            ["upgrade", "--install", "argo-rollouts", w.chartArchive, "-n", "argo-rollouts", "--kubeconfig", c.kubeconfig],
            {
                env: {
                    ...process.env,
                    HELM_CACHE_HOME: path.join(w.dir, "helm", "cache"),
                    HELM_CONFIG_HOME: path.join(w.dir, "helm", "config"),
                    HELM_DATA_HOME: path.join(w.dir, "helm", "data"),
                },
            },
        );
        assert.notStrictEqual(install.status, 0, "helm upgrade --install took the objects back");
        assert.match(install.stderr, /exists and cannot be imported into the current release: invalid ownership metadata/, install.stderr);
        // Helm checks ownership before it records a release (pkg/action/install.go): no record either.
        assert.strictEqual(
            c.kubectl(["get", "secret", "-n", "argo-rollouts", "-l", "owner=helm,name=argo-rollouts", "-o", "name"]),
            "",
            "the refused install left a release record",
        );
        assert.strictEqual(snapshot(), before, "the old installer's upgrade changed something");
        assert.deepStrictEqual(uids(c), uidsBefore, "a CRD or the tenant Rollout was replaced");
        assert.strictEqual(
            c.kubectl(["get", "clusterrole", "argo-rollouts-aggregate-to-edit", "--ignore-not-found", "-o", "name"]),
            "",
            "a retired aggregate role came back",
        );
    });
});
