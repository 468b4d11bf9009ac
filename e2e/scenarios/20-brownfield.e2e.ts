/**
 * Brownfield: a cluster where the old install exists (the chart installed by the Helm CLI as release
 * argo-rollouts with its five CRDs, a tenant Rollout, and same-named templates, policies and routes
 * created by kubectl). Without adoption `pulumi up` refuses and changes nothing; the README's
 * runbook, step by step as written, adopts it without losing a Rollout; and `pulumi destroy` keeps
 * the CRDs and the Rollout.
 *
 * Refusal and adoption are the kubernetes provider's create semantics since v4.29.0
 * (pulumi/pulumi-kubernetes #4278: a client-side create fails with AlreadyExists;
 * upsertExistingObjects/enablePatchForce turn it into a forced server-side apply). An older
 * provider upserts every create under server-side apply, so these two scenarios need v4.29.0 or
 * later and say so when the run has an older one.
 */
import assert from "assert";
import * as path from "path";
import { ROLLOUTS_CRDS } from "../../components/rollouts/crds";
import { adoptionRunbook } from "../../components/cluster/adoption";
import { Cluster } from "../lib/cluster";
import { context, world } from "../lib/context";
import { providerTag } from "../lib/engines";
import { run, runAsync } from "../lib/procs";
import { PulumiEnv, failure } from "../lib/pulumi";
import { StackTarget, World } from "../lib/world";
import { addonConfig, waitEstablished } from "../lib/platform";
import { readmeRunbook } from "../lib/readme";

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

/** Whether a kubernetes provider release refuses and adopts existing objects (v4.29.0 and later). */
export function providerAdopts(tag: string): boolean {
    const m = /^v4\.(\d+)\.\d+$/.exec(tag);
    return m !== null && Number(m[1]) >= 29;
}

/** A minimal valid tenant Rollout (the controller never runs here: no kubelet, no controller process). */
function tenantRollout(): string {
    return JSON.stringify({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Rollout",
        metadata: { name: "web", namespace: TENANT_NS },
        spec: {
            replicas: 2,
            selector: { matchLabels: { app: "web" } },
            template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "registry.platform.example/mirror/web:1" }] } },
            strategy: { canary: { steps: [{ setWeight: 25 }, { pause: { duration: "1m" } }] } },
        },
    });
}

export function uids(cluster: Cluster): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of CRD_NAMES) {
        out[`crd/${name}`] = cluster.kubectl(["get", "crd", name, "-o", "jsonpath={.metadata.uid}"]);
    }
    out["rollout/web"] = cluster.kubectl(["get", "rollouts.argoproj.io", "web", "-n", TENANT_NS, "-o", "jsonpath={.metadata.uid}"]);
    return out;
}

describe("brownfield", function () {
    let w: World;
    let env: PulumiEnv;
    let target: StackTarget;
    let uidsBefore: Record<string, string>;
    // A directory of the user's own binaries may hold a newer provider: its tag is given then.
    const tag = process.env.ARGO_ROLLOUTS_ADDON_E2E_PROVIDER_TAG ?? providerTag();

    before(async function () {
        if (!providerAdopts(tag)) {
            for (const title of ["brownfield-refused", "brownfield-adopted"]) {
                context.skipReasons.set(title, `needs pulumi-resource-kubernetes v4.29.0 or later (a create of an existing object fails with AlreadyExists, and upsertExistingObjects/enablePatchForce adopt it: pulumi-kubernetes #4278); this run has ${tag}, the newest release the Go module proxy serves (set ARGO_ROLLOUTS_ADDON_E2E_BIN and ARGO_ROLLOUTS_ADDON_E2E_PROVIDER_TAG to run them with your own provider)`);
            }
            this.skip();
        }
        w = await world();
        env = w.pulumi("brownfield");
        target = await w.cluster("brownfield", "hub");
        const c = target.cluster;
        // The old install: the chart by the Helm CLI (its defaults: CRDs, cluster roles, aggregate roles).
        const helm = run(path.join(w.bin, "helm"), ["install", "argo-rollouts", w.chartArchive, "-n", "argo-rollouts", "--create-namespace", "--kubeconfig", c.kubeconfig], { env: { ...process.env, HELM_CACHE_HOME: path.join(w.dir, "helm", "cache"), HELM_CONFIG_HOME: path.join(w.dir, "helm", "config"), HELM_DATA_HOME: path.join(w.dir, "helm", "data") } });
        assert.strictEqual(helm.status, 0, `helm install of the old release failed:\n${helm.stderr}`);
        await waitEstablished(c);
        c.kubectl(["create", "namespace", TENANT_NS]);
        c.kubectl(["create", "-f", "-"], tenantRollout());
        // Same-named objects another tool created: a template, a policy and a route of the stack.
        const cfg = addonConfig("hub", target.config);
        c.kubectl(["create", "-f", "-"], JSON.stringify({
            apiVersion: "argoproj.io/v1alpha1",
            kind: "ClusterAnalysisTemplate",
            metadata: { name: "success-rate" },
            spec: { metrics: [{ name: "old", provider: { prometheus: { address: "http://old-prometheus:9090", query: "vector(1)" } }, successCondition: "result[0] >= 0.9" }] },
        }));
        const spoke = cfg.metrics.spokes[0];
        if (spoke) {
            c.kubectl(["create", "-f", "-"], JSON.stringify({
                apiVersion: "gateway.networking.k8s.io/v1",
                kind: "HTTPRoute",
                metadata: { name: `mimir-spoke-${spoke.name}-read`, namespace: cfg.metrics.mimir.namespace },
                spec: { parentRefs: [{ name: cfg.gateway.name, namespace: cfg.gateway.namespace }], hostnames: [spoke.hostname], rules: [{ backendRefs: [{ name: cfg.metrics.mimir.gatewayService, port: cfg.metrics.mimir.gatewayServicePort }] }] },
            }));
        }
        uidsBefore = uids(c);
        await w.initStack(env, target);
    });

    it("brownfield-refused", async function () {
        const snapshot = target.cluster.kubectl(["get", SNAPSHOT_KINDS, "-A", "-o", "jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion}{\"\\n\"}{end}"]);
        const up = await env.pulumi(["up", "--yes", "--skip-preview", "--policy-pack", "policy"], { stack: "hub" });
        assert.notStrictEqual(up.status, 0, "pulumi up without adoption succeeded on a cluster with the old install");
        assert.match(up.stdout + up.stderr, /already exists/, `the refusal does not say "already exists":\n${failure(up)}`);
        const after = target.cluster.kubectl(["get", SNAPSHOT_KINDS, "-A", "-o", "jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion}{\"\\n\"}{end}"]);
        assert.strictEqual(after, snapshot, "the refused up changed pre-existing objects");
        assert.deepStrictEqual(uids(target.cluster), uidsBefore);
    });

    it("brownfield-adopted", async function () {
        const cfg = addonConfig("hub", target.config);
        const steps = readmeRunbook();
        assert.deepStrictEqual(steps.map((s) => s.commands), adoptionRunbook({ stack: "hub", controller: cfg.controller }).map((s) => s.commands), "the README's runbook is not the program's");
        const shellEnv = { ...env.env, KUBECONFIG: target.cluster.kubeconfig, PATH: `${w.bin}${path.delimiter}${env.env.PATH}` };
        for (const step of steps) {
            for (const command of step.commands) {
                if (command.startsWith("#") || /^(terraform|argocd) /.test(command)) {
                    continue; // comments, and the runbook's lines for other installers
                }
                const r = await runAsync("bash", ["-o", "pipefail", "-c", command], { cwd: env.projectDir, env: shellEnv });
                assert.strictEqual(r.status, 0, `runbook step "${step.title}": ${command} failed:\n${failure(r)}`);
            }
        }
        assert.deepStrictEqual(uids(target.cluster), uidsBefore, "a CRD or the tenant Rollout was replaced");
        const again = await env.pulumi(["up", "--yes", "--skip-preview", "--expect-no-changes", "--policy-pack", "policy"], { stack: "hub" });
        assert.strictEqual(again.status, 0, `the up after adoption changed something:\n${failure(again)}`);
    });
});
