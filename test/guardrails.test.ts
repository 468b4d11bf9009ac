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
        const CHART = "kubernetes:helm.sh/v4:Chart";
        const url = "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi/releases/download/v0.15.0/gatewayapi-plugin-linux-amd64";
        const plugin = (extra: Props) => chart({ controller: { trafficRouterPlugins: [{ name: "argoproj-labs/gatewayAPI", location: url, ...extra }] } });
        // The chart's rendered ConfigMap, as the pack sees it in a real preview.
        const pluginCm = (sha: string) => ({
            metadata: { name: "argo-rollouts-config" },
            data: { trafficRouterPlugins: `- name: argoproj-labs/gatewayAPI\n  location: ${url}\n  sha256: ${sha}\n` },
        });
        const prom = (headers: unknown[]) => ({ spec: { metrics: [{ name: "m", provider: { prometheus: { address: "a", query: "q", headers } } }] } });
        const route = (modifier: Props) => ({
            spec: {
                rules: [{ filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: modifier }], backendRefs: [{ name: "mimir-gateway", port: 80 }] }],
            },
        });
        const argocdCm = (kind: string, body: string) => ({
            metadata: { name: "argocd-cm", namespace: "argocd" },
            data: { [`resource.customizations.ignoreDifferences.${kind}`]: body },
        });
        const appSet = (...rules: unknown[]) => ({ spec: { template: { spec: { ignoreDifferences: rules } } } });
        const [ROLE, CM, CM_PATCH, APPSET, TEMPLATE, ROUTE, PDB] = [
            "kubernetes:rbac.authorization.k8s.io/v1:Role",
            "kubernetes:core/v1:ConfigMap",
            "kubernetes:core/v1:ConfigMapPatch",
            "kubernetes:argoproj.io/v1alpha1:ApplicationSetPatch",
            "kubernetes:argoproj.io/v1alpha1:ClusterAnalysisTemplate",
            "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute",
            "kubernetes:policy/v1:PodDisruptionBudget",
        ];
        const containersJq = "jqPathExpressions:\n- .spec.template.spec.containers[].image\n";
        // [policy, type, props, what each violation says (none: it passes), options]
        const CASES: [string, string, Props, RegExp[], { protect?: boolean; provider?: boolean }?][] = [
            ["no-rbac-wildcards", ROLE, { rules: [{ apiGroups: ["gateway.networking.k8s.io"], resources: ["httproutes"], verbs: ["get", "update"] }] }, []],
            [
                "no-rbac-wildcards",
                ROLE,
                { rules: [{ apiGroups: ["gateway.networking.k8s.io"], resources: ["*"], verbs: ["*"] }] },
                [/rule 0 grants resources "\*"/, /rule 0 grants verbs "\*"/],
            ],
            ["rollouts-crds-protected", CRD, { metadata: { name: "rollouts.argoproj.io" } }, [], { protect: true }],
            ["rollouts-crds-protected", CRD, { metadata: { name: "rollouts.argoproj.io" } }, [/is not protected/], { protect: false }],
            ["rollouts-crds-protected", CRD, { metadata: { name: "widgets.example.com" } }, []],
            ["plugin-download-checksum", CHART, plugin({ sha256: "a".repeat(64) }), [], { provider: false }],
            ["plugin-download-checksum", CHART, plugin({}), [/without a 64-hex sha256/], { provider: false }],
            ["plugin-download-checksum", CHART, plugin({ location: "file:///plugin-source/gatewayapi-plugin" }), [], { provider: false }],
            ["plugin-download-checksum", CM, pluginCm("b".repeat(64)), []],
            ["plugin-download-checksum", CM, pluginCm("abc"), [/sha256/]],
            ["analysis-prometheus-with-tenant", TEMPLATE, prom([{ key: "X-Scope-OrgID", value: "hub" }]), []],
            ["analysis-prometheus-with-tenant", TEMPLATE, prom([]), [/without X-Scope-OrgID/]],
            [
                "analysis-prometheus-with-tenant",
                "kubernetes:argoproj.io/v1alpha1:AnalysisTemplate",
                { spec: { metrics: [{ name: "s", provider: { job: { spec: {} } } }] } },
                [/Job provider/],
            ],
            ["mimir-routes-set-tenant", ROUTE, route({ set: [{ name: "X-Scope-OrgID", value: "preprod" }] }), []],
            ["mimir-routes-set-tenant", ROUTE, route({ add: [{ name: "X-Scope-OrgID", value: "preprod" }] }), [/./, /./]],
            ["mimir-routes-set-tenant", ROUTE, { spec: { rules: [{ backendRefs: [{ name: "checkout-stable" }] }] } }, []],
            ["no-array-ignore-rules-on-rollout", CM_PATCH, argocdCm("argoproj.io_Rollout", "jsonPointers:\n- /spec/replicas\n"), []],
            ["no-array-ignore-rules-on-rollout", CM_PATCH, argocdCm("all", containersJq), [/a rule for all kinds: jq path/]],
            ["no-array-ignore-rules-on-rollout", CM_PATCH, argocdCm("apps_Deployment", containersJq), []],
            ["no-array-ignore-rules-on-rollout", APPSET, appSet({ group: "", kind: "Service", jsonPointers: ["/spec/selector"] }), []],
            [
                "no-array-ignore-rules-on-rollout",
                APPSET,
                appSet({ group: "argoproj.io", kind: "Rollout", jsonPointers: ["/spec/template/spec/containers/0/image"] }),
                [/./],
            ],
            [
                "narrow-canary-ignore-rules",
                CM_PATCH,
                argocdCm("gateway.networking.k8s.io_HTTPRoute", "jqPathExpressions:\n- .spec.rules[]?.backendRefs[]?.weight\n"),
                [/ x: gateway.networking.k8s.io\/HTTPRoute rule: .*every HTTPRoute of every Application/],
            ],
            ["narrow-canary-ignore-rules", CM_PATCH, argocdCm("Service", "jsonPointers:\n- /spec/selector\n"), [/ x: Service rule: .*whole Service selector/]],
            ["narrow-canary-ignore-rules", CM_PATCH, argocdCm("apps_Deployment", "jsonPointers:\n- /spec/replicas\n"), []],
            [
                "narrow-canary-ignore-rules",
                CM_PATCH,
                argocdCm("all", "jsonPointers:\n- /spec/selector\n"),
                [/ x: a rule for all kinds rule: .*whole Service selector/],
            ],
            [
                "narrow-canary-ignore-rules",
                APPSET,
                appSet(
                    { kind: "Service", jsonPointers: ["/spec/selector/rollouts-pod-template-hash"] },
                    { group: "gateway.networking.k8s.io", kind: "HTTPRoute", jqPathExpressions: [".spec.rules[]?.backendRefs[]?.weight"] },
                ),
                [],
            ],
            [
                "narrow-canary-ignore-rules",
                APPSET,
                appSet({ group: "gateway.networking.k8s.io", kind: "HTTPRoute", managedFieldsManagers: ["gatewayAPI"] }),
                [/atomic list/],
            ],
            ["integer-pdb-budgets", PDB, { spec: { maxUnavailable: 1 } }, []],
            ["integer-pdb-budgets", PDB, { spec: { maxUnavailable: "25%" } }, [/percentage/]],
            ["integer-pdb-budgets", CHART, chart({ controller: { pdb: { enabled: true, maxUnavailable: 1 } } }), []],
            ["integer-pdb-budgets", CHART, chart({ controller: { pdb: { enabled: true } } }), [/minAvailable: 0/]],
            ["dashboard-read-only", CHART, chart({ dashboard: { enabled: true, readonly: true } }), []],
            ["dashboard-read-only", CHART, chart({ dashboard: { enabled: false } }), []],
            ["dashboard-read-only", CHART, chart({ dashboard: { enabled: true } }), [/./]],
        ];
        CASES.forEach(([policy, type, props, want, opts], n) => {
            it(`${policy} ${want.length ? "fails" : "passes"} (case ${n})`, () => {
                const found = violations(policy, type, props, opts);
                assert.strictEqual(found.length, want.length, found.join("\n"));
                want.forEach((w, i) => assert.match(found[i], w));
            });
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
