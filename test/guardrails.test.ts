import * as assert from "assert";
import type { PolicyResource, ResourceValidationArgs } from "@pulumi/policy";
import { GuardedResource, RESOURCE_CHECKS, STACK_CHECKS, runGuardrails } from "../components/guardrails";
import { policies, resourcePolicies, stackPolicies } from "../policy-pack/policies";
import { guardedResources } from "../tools/guard";
import { OfflineRun } from "../tools/offline";
import { hubConfig, merged, planInline } from "./harness";

type Props = Record<string, unknown>;
const CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";

/** Runs one pack policy on one resource, as the engine would, and returns its violations. */
function violations(policy: string, type: string, props: Props, opts: { protect?: boolean; provider?: boolean } = {}): string[] {
    const p = resourcePolicies.find((x) => x.name === policy);
    assert.ok(p, `no policy ${policy}`);
    const out: string[] = [];
    const args = {
        type,
        props,
        urn: `urn:pulumi:test::argo-rollouts-addon::${type}::x`,
        name: "x",
        opts: {
            protect: opts.protect ?? false,
            ignoreChanges: [],
            aliases: [],
            customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 },
            additionalSecretOutputs: [],
        },
        ...(opts.provider === false ? {} : { provider: { type: "pulumi:providers:kubernetes", props: {}, urn: "p", name: "p" } }),
    } as unknown as ResourceValidationArgs;
    void p.validateResource;
    const validate = p.validateResource as (a: ResourceValidationArgs, report: (m: string) => void) => void;
    validate(args, (m) => out.push(m));
    return out;
}

const chart = (values: Props) => ({ chart: "argo-rollouts", values });

describe("guardrails", () => {
    it("the pack and the plan run the same checks", () => {
        assert.deepStrictEqual(
            policies.map((p) => p.name),
            [...RESOURCE_CHECKS, ...STACK_CHECKS].map((c) => c.name),
        );
        for (const p of policies) {
            assert.strictEqual(p.enforcementLevel, "mandatory");
            assert.match(p.description ?? "", /\S/);
        }
    });

    describe("resource policies, passing and failing", () => {
        it("no-rbac-wildcards", () => {
            const ok = { rules: [{ apiGroups: ["gateway.networking.k8s.io"], resources: ["httproutes"], verbs: ["get", "update"] }] };
            assert.deepStrictEqual(violations("no-rbac-wildcards", "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", ok), []);
            const bad = { rules: [{ apiGroups: ["gateway.networking.k8s.io"], resources: ["*"], verbs: ["*"] }] };
            const v = violations("no-rbac-wildcards", "kubernetes:rbac.authorization.k8s.io/v1:Role", bad);
            assert.strictEqual(v.length, 2);
            assert.match(v[0], /rule 0 grants resources "\*"/);
        });

        it("rollouts-crds-protected", () => {
            const props = { metadata: { name: "rollouts.argoproj.io" } };
            assert.deepStrictEqual(violations("rollouts-crds-protected", CRD, props, { protect: true }), []);
            assert.match(violations("rollouts-crds-protected", CRD, props, { protect: false })[0], /is not protected/);
            assert.deepStrictEqual(violations("rollouts-crds-protected", CRD, { metadata: { name: "widgets.example.com" } }), [], "other CRDs are not ours");
        });

        it("plugin-download-checksum", () => {
            const url = "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi/releases/download/v0.15.0/gatewayapi-plugin-linux-amd64";
            const plugin = (sha256?: string) => ({
                controller: { trafficRouterPlugins: [{ name: "argoproj-labs/gatewayAPI", location: url, ...(sha256 ? { sha256 } : {}) }] },
            });
            assert.deepStrictEqual(
                violations("plugin-download-checksum", "kubernetes:helm.sh/v4:Chart", chart(plugin("a".repeat(64))), { provider: false }),
                [],
            );
            assert.match(
                violations("plugin-download-checksum", "kubernetes:helm.sh/v4:Chart", chart(plugin()), { provider: false })[0],
                /without a 64-hex sha256/,
            );
            // The chart's rendered ConfigMap, as the pack sees it in a real preview.
            const cm = (sha: string) => ({
                metadata: { name: "argo-rollouts-config" },
                data: { trafficRouterPlugins: `- name: argoproj-labs/gatewayAPI\n  location: ${url}\n  sha256: ${sha}\n` },
            });
            assert.deepStrictEqual(violations("plugin-download-checksum", "kubernetes:core/v1:ConfigMap", cm("b".repeat(64))), []);
            assert.strictEqual(violations("plugin-download-checksum", "kubernetes:core/v1:ConfigMap", cm("abc")).length, 1);
            const file = { controller: { trafficRouterPlugins: [{ name: "argoproj-labs/gatewayAPI", location: "file:///plugin-source/gatewayapi-plugin" }] } };
            assert.deepStrictEqual(
                violations("plugin-download-checksum", "kubernetes:helm.sh/v4:Chart", chart(file), { provider: false }),
                [],
                "image mode is pinned by digest instead",
            );
        });

        it("analysis-prometheus-with-tenant", () => {
            const type = "kubernetes:argoproj.io/v1alpha1:ClusterAnalysisTemplate";
            const prom = (headers: unknown[]) => ({ spec: { metrics: [{ name: "m", provider: { prometheus: { address: "a", query: "q", headers } } }] } });
            assert.deepStrictEqual(violations("analysis-prometheus-with-tenant", type, prom([{ key: "X-Scope-OrgID", value: "hub" }])), []);
            assert.match(violations("analysis-prometheus-with-tenant", type, prom([]))[0], /without X-Scope-OrgID/);
            const job = { spec: { metrics: [{ name: "smoke", provider: { job: { spec: {} } } }] } };
            assert.match(violations("analysis-prometheus-with-tenant", "kubernetes:argoproj.io/v1alpha1:AnalysisTemplate", job)[0], /Job provider/);
        });

        it("mimir-routes-set-tenant", () => {
            const type = "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute";
            const route = (modifier: Props) => ({
                spec: {
                    rules: [
                        { filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: modifier }], backendRefs: [{ name: "mimir-gateway", port: 80 }] },
                    ],
                },
            });
            assert.deepStrictEqual(violations("mimir-routes-set-tenant", type, route({ set: [{ name: "X-Scope-OrgID", value: "preprod" }] })), []);
            assert.strictEqual(
                violations("mimir-routes-set-tenant", type, route({ add: [{ name: "X-Scope-OrgID", value: "preprod" }] })).length,
                2,
                "add, and no set",
            );
            const app = { spec: { rules: [{ backendRefs: [{ name: "checkout-stable" }] }] } };
            assert.deepStrictEqual(violations("mimir-routes-set-tenant", type, app), [], "routes to other backends are not Mimir's");
        });

        it("no-array-ignore-rules-on-rollout", () => {
            const cm = (key: string, body: string) => ({ metadata: { name: "argocd-cm", namespace: "argocd" }, data: { [key]: body } });
            const type = "kubernetes:core/v1:ConfigMapPatch";
            assert.deepStrictEqual(
                violations(
                    "no-array-ignore-rules-on-rollout",
                    type,
                    cm("resource.customizations.ignoreDifferences.argoproj.io_Rollout", "jsonPointers:\n- /spec/replicas\n"),
                ),
                [],
            );
            assert.match(
                violations(
                    "no-array-ignore-rules-on-rollout",
                    type,
                    cm("resource.customizations.ignoreDifferences.all", "jqPathExpressions:\n- .spec.template.spec.containers[].image\n"),
                )[0],
                /a rule for all kinds: jq path/,
            );
            assert.deepStrictEqual(
                violations(
                    "no-array-ignore-rules-on-rollout",
                    type,
                    cm("resource.customizations.ignoreDifferences.apps_Deployment", "jqPathExpressions:\n- .spec.template.spec.containers[].image\n"),
                ),
                [],
            );
            const appSet = (rules: unknown[]) => ({ spec: { template: { spec: { ignoreDifferences: rules } } } });
            const atype = "kubernetes:argoproj.io/v1alpha1:ApplicationSetPatch";
            assert.deepStrictEqual(
                violations("no-array-ignore-rules-on-rollout", atype, appSet([{ group: "", kind: "Service", jsonPointers: ["/spec/selector"] }])),
                [],
            );
            assert.strictEqual(
                violations(
                    "no-array-ignore-rules-on-rollout",
                    atype,
                    appSet([{ group: "argoproj.io", kind: "Rollout", jsonPointers: ["/spec/template/spec/containers/0/image"] }]),
                ).length,
                1,
            );
        });

        it("narrow-canary-ignore-rules", () => {
            const cm = (key: string, body: string) => ({ metadata: { name: "argocd-cm", namespace: "argocd" }, data: { [key]: body } });
            const type = "kubernetes:core/v1:ConfigMapPatch";
            const routeKey = "resource.customizations.ignoreDifferences.gateway.networking.k8s.io_HTTPRoute";
            assert.match(
                violations("narrow-canary-ignore-rules", type, cm(routeKey, "jqPathExpressions:\n- .spec.rules[]?.backendRefs[]?.weight\n"))[0],
                / x: gateway.networking.k8s.io\/HTTPRoute rule: .*every HTTPRoute of every Application/,
            );
            assert.match(
                violations("narrow-canary-ignore-rules", type, cm("resource.customizations.ignoreDifferences.Service", "jsonPointers:\n- /spec/selector\n"))[0],
                / x: Service rule: .*whole Service selector/,
            );
            assert.deepStrictEqual(
                violations(
                    "narrow-canary-ignore-rules",
                    type,
                    cm("resource.customizations.ignoreDifferences.apps_Deployment", "jsonPointers:\n- /spec/replicas\n"),
                ),
                [],
            );
            assert.match(
                violations("narrow-canary-ignore-rules", type, cm("resource.customizations.ignoreDifferences.all", "jsonPointers:\n- /spec/selector\n"))[0],
                / x: a rule for all kinds rule: .*whole Service selector/,
            );
            const appSet = (rules: unknown[]) => ({ spec: { template: { spec: { ignoreDifferences: rules } } } });
            const atype = "kubernetes:argoproj.io/v1alpha1:ApplicationSetPatch";
            assert.deepStrictEqual(
                violations(
                    "narrow-canary-ignore-rules",
                    atype,
                    appSet([
                        { kind: "Service", jsonPointers: ["/spec/selector/rollouts-pod-template-hash"] },
                        { group: "gateway.networking.k8s.io", kind: "HTTPRoute", jqPathExpressions: [".spec.rules[]?.backendRefs[]?.weight"] },
                    ]),
                ),
                [],
            );
            assert.match(
                violations(
                    "narrow-canary-ignore-rules",
                    atype,
                    appSet([{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", managedFieldsManagers: ["gatewayAPI"] }]),
                )[0],
                /atomic list/,
            );
        });

        it("integer-pdb-budgets", () => {
            assert.deepStrictEqual(violations("integer-pdb-budgets", "kubernetes:policy/v1:PodDisruptionBudget", { spec: { maxUnavailable: 1 } }), []);
            assert.match(violations("integer-pdb-budgets", "kubernetes:policy/v1:PodDisruptionBudget", { spec: { maxUnavailable: "25%" } })[0], /percentage/);
            assert.deepStrictEqual(
                violations("integer-pdb-budgets", "kubernetes:helm.sh/v4:Chart", chart({ controller: { pdb: { enabled: true, maxUnavailable: 1 } } })),
                [],
            );
            assert.match(
                violations("integer-pdb-budgets", "kubernetes:helm.sh/v4:Chart", chart({ controller: { pdb: { enabled: true } } }))[0],
                /minAvailable: 0/,
            );
        });

        it("dashboard-read-only", () => {
            assert.deepStrictEqual(
                violations("dashboard-read-only", "kubernetes:helm.sh/v4:Chart", chart({ dashboard: { enabled: true, readonly: true } })),
                [],
            );
            assert.deepStrictEqual(violations("dashboard-read-only", "kubernetes:helm.sh/v4:Chart", chart({ dashboard: { enabled: false } })), []);
            assert.strictEqual(violations("dashboard-read-only", "kubernetes:helm.sh/v4:Chart", chart({ dashboard: { enabled: true } })).length, 1);
        });
    });

    describe("stack policies", () => {
        let run: OfflineRun;
        let resources: GuardedResource[];
        before(async () => {
            run = await planInline(hubConfig(), { stack: "hub" });
            resources = await guardedResources(run);
        });

        const stackViolations = (name: string, rs: GuardedResource[]) => {
            const p = stackPolicies.find((x) => x.name === name)!;
            const out: string[] = [];
            // The engine's shape: parent and dependencies as resource objects.
            const byUrn = new Map<string, PolicyResource>();
            for (const r of rs) {
                byUrn.set(r.urn, {
                    urn: r.urn,
                    type: r.type,
                    name: r.name,
                    props: r.props,
                    opts: { protect: r.protect },
                    ...(r.component ? {} : { provider: {} }),
                } as unknown as PolicyResource);
            }
            for (const r of rs) {
                const pr = byUrn.get(r.urn)! as unknown as { parent?: PolicyResource; dependencies: PolicyResource[] };
                pr.parent = r.parent ? byUrn.get(r.parent) : undefined;
                pr.dependencies = r.dependencies.map((d) => byUrn.get(d)).filter((d): d is PolicyResource => d !== undefined);
            }
            const validate = p.validateStack as (a: { resources: PolicyResource[] }, report: (m: string) => void) => void;
            validate({ resources: [...byUrn.values()] }, (m) => out.push(m));
            return out;
        };

        it("pass for the program as it is", () => {
            assert.deepStrictEqual(runGuardrails(resources), []);
            assert.deepStrictEqual(stackViolations("admission-after-crds", resources), []);
            assert.deepStrictEqual(stackViolations("stages-in-order", resources), []);
        });

        it("see the CRDs the group renders, with the options its transform gives them", () => {
            const crds = resources.filter((r) => r.type === CRD);
            assert.deepStrictEqual(crds.map((c) => c.name).sort(), [
                "analysisruns.argoproj.io",
                "analysistemplates.argoproj.io",
                "clusteranalysistemplates.argoproj.io",
                "experiments.argoproj.io",
                "rollouts.argoproj.io",
            ]);
            assert.ok(crds.every((c) => c.protect && c.retainOnDelete));
        });

        it("catch a CRD group without the protecting transform", async () => {
            const unprotected = (
                await guardedResources({ ...run, resources: run.resources.map((r) => (r.name === "rollouts-crds" ? { ...r, transforms: [] } : r)) })
            ).filter((r) => r.type === CRD);
            const v = runGuardrails(unprotected);
            const found = v.filter((x) => x.check === "rollouts-crds-protected").map((x) => x.message);
            assert.strictEqual(found.filter((m) => m === "is not protected").length, 5);
            assert.strictEqual(found.filter((m) => m === "is not retained on delete").length, 5);
        });

        it("catch a policy that does not wait for the CRDs, and a stage out of order", () => {
            const policy = resources.find(
                (r) => r.type === "kubernetes:policies.kyverno.io/v1:ValidatingPolicy" && r.name.includes("restrict-rollout-route-namespace"),
            )!;
            const cut = resources.map((r) => (r.urn === policy.urn ? { ...r, dependencies: [] } : r));
            assert.match(
                stackViolations("admission-after-crds", cut)[0],
                /ValidatingPolicy restrict-rollout-route-namespace names Rollout but does not wait for the rollouts.argoproj.io CRD/,
            );
            assert.ok(
                stackViolations("stages-in-order", cut).some((m) =>
                    /policy\/kyverno-validatingpolicy-restrict-rollout-route-namespace does not wait for gateway\/shared-gateway/.test(m),
                ),
            );
        });
    });

    it("find nothing in either stack file's plan", async () => {
        for (const cfg of [
            hubConfig(),
            merged(hubConfig(), { controller: { dashboard: true }, plugin: { delivery: "image", sha256: undefined, digest: `sha256:${"b".repeat(64)}` } }),
        ]) {
            const run = await planInline(cfg);
            assert.deepStrictEqual(runGuardrails(await guardedResources(run)), []);
        }
    });
});
