import * as assert from "assert";
import type { PolicyResource, ResourceValidationArgs } from "@pulumi/policy";
import { GuardedResource, RESOURCE_CHECKS, STACK_CHECKS, runGuardrails } from "../components/guardrails";
import { policies, resourcePolicies, stackPolicies } from "../policy-pack/policies";
import { guardedResources } from "../tools/guard";
import { OfflineRun } from "../tools/offline";
import { TEST_DIGEST, hubConfig, merged, planInline } from "./harness";

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
        // fromArgs (policy-pack/policies.ts) reads opts.protect and opts.parent alone.
        opts: { protect: opts.protect ?? false },
        ...(opts.provider === false ? {} : { provider: { type: "pulumi:providers:kubernetes", props: {}, urn: "p", name: "p" } }),
    } as unknown as ResourceValidationArgs;
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
        const [containersJq, selector] = ["jqPathExpressions:\n- .spec.template.spec.containers[].image\n", "jsonPointers:\n- /spec/selector\n"];
        const ROLLOUT_GK = { group: "argoproj.io", kind: "Rollout" };
        const ROUTE_GK = { group: "gateway.networking.k8s.io", kind: "HTTPRoute" };
        // [policy, type, props, what each violation says (none: it passes), options]; what the program plans passes ('stack policies' below).
        const CASES: [string, string, Props, RegExp[], { protect?: boolean; provider?: boolean }?][] = [
            [
                "no-rbac-wildcards",
                ROLE,
                { rules: [{ apiGroups: [""], resources: ["*"], verbs: ["*"] }] },
                [/rule 0 grants resources "\*"/, /rule 0 grants verbs "\*"/],
            ],
            ["rollouts-crds-protected", CRD, { metadata: { name: "rollouts.argoproj.io" } }, [/is not protected/], { protect: false }],
            ["rollouts-crds-protected", CRD, { metadata: { name: "widgets.example.com" } }, []],
            ["plugin-download-checksum", CHART, plugin({}), [/without a 64-hex sha256/], { provider: false }],
            ["plugin-download-checksum", CM, pluginCm("b".repeat(64)), []],
            ["plugin-download-checksum", CM, pluginCm("abc"), [/sha256/]],
            ["analysis-prometheus-with-tenant", TEMPLATE, prom([]), [/without X-Scope-OrgID/]],
            [
                "analysis-prometheus-with-tenant",
                "kubernetes:argoproj.io/v1alpha1:AnalysisTemplate",
                { spec: { metrics: [{ name: "s", provider: { job: { spec: {} } } }] } },
                [/Job provider/],
            ],
            ["mimir-routes-set-tenant", ROUTE, route({ add: [{ name: "X-Scope-OrgID", value: "preprod" }] }), [/./, /./]],
            ["mimir-routes-set-tenant", ROUTE, { spec: { rules: [{ backendRefs: [{ name: "checkout-stable" }] }] } }, []],
            ["no-array-ignore-rules-on-rollout", CM_PATCH, argocdCm("argoproj.io_Rollout", "jsonPointers:\n- /spec/replicas\n"), []],
            ["no-array-ignore-rules-on-rollout", CM_PATCH, argocdCm("all", containersJq), [/a rule for all kinds: jq path/]],
            ["no-array-ignore-rules-on-rollout", CM_PATCH, argocdCm("apps_Deployment", containersJq), []],
            ["no-array-ignore-rules-on-rollout", APPSET, appSet({ group: "", kind: "Service", jsonPointers: ["/spec/selector"] }), []],
            ["no-array-ignore-rules-on-rollout", APPSET, appSet({ ...ROLLOUT_GK, jsonPointers: ["/spec/template/spec/containers/0/image"] }), [/./]],
            [
                "narrow-canary-ignore-rules",
                CM_PATCH,
                argocdCm("gateway.networking.k8s.io_HTTPRoute", "jqPathExpressions:\n- .spec.rules[]?.backendRefs[]?.weight\n"),
                [/ x: gateway.networking.k8s.io\/HTTPRoute rule: .*every HTTPRoute of every Application/],
            ],
            ["narrow-canary-ignore-rules", CM_PATCH, argocdCm("Service", selector), [/ x: Service rule: .*whole Service selector/]],
            ["narrow-canary-ignore-rules", CM_PATCH, argocdCm("apps_Deployment", "jsonPointers:\n- /spec/replicas\n"), []],
            ["narrow-canary-ignore-rules", CM_PATCH, argocdCm("all", selector), [/ x: a rule for all kinds rule: .*whole Service selector/]],
            [
                "narrow-canary-ignore-rules",
                APPSET,
                appSet(
                    { kind: "Service", jsonPointers: ["/spec/selector/rollouts-pod-template-hash"] },
                    { ...ROUTE_GK, jqPathExpressions: [".spec.rules[]?.backendRefs[]?.weight"] },
                ),
                [],
            ],
            ["narrow-canary-ignore-rules", APPSET, appSet({ ...ROUTE_GK, managedFieldsManagers: ["gatewayAPI"] }), [/atomic list/]],
            ["integer-pdb-budgets", PDB, { spec: { maxUnavailable: 1 } }, []],
            ["integer-pdb-budgets", PDB, { spec: { maxUnavailable: "25%" } }, [/percentage/]],
            ["integer-pdb-budgets", CHART, chart({ controller: { pdb: { enabled: true } } }), [/minAvailable: 0/]],
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
            // The engine's shape, as fromPolicyResource (policy-pack/policies.ts) reads it: parent and dependencies as resource objects.
            const byUrn = new Map<string, PolicyResource>(
                rs.map((r) => [r.urn, { ...r, opts: { protect: r.protect }, provider: r.component ? undefined : {} } as unknown as PolicyResource]),
            );
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

        // With it, each passes 'rollouts-crds-protected' above.
        it("see the CRDs the group renders, and catch a group without the protecting transform", async () => {
            const unprotected = (
                await guardedResources({ ...run, resources: run.resources.map((r) => (r.name === "rollouts-crds" ? { ...r, transforms: [] } : r)) })
            ).filter((r) => r.type === CRD);
            const names = ["analysisruns", "analysistemplates", "clusteranalysistemplates", "experiments", "rollouts"].map((n) => `${n}.argoproj.io`);
            assert.deepStrictEqual(unprotected.map((c) => c.name).sort(), names);
            const found = runGuardrails(unprotected).filter((x) => x.check === "rollouts-crds-protected");
            assert.deepStrictEqual(found.map((x) => x.message).sort(), [...Array(5).fill("is not protected"), ...Array(5).fill("is not retained on delete")]);
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

    it("find nothing in the plan with the dashboard and the plugin's image (the hub's defaults: 'pass for the program as it is')", async () => {
        const cfg = merged(hubConfig(), { controller: { dashboard: true }, plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST } });
        assert.deepStrictEqual(runGuardrails(await guardedResources(await planInline(cfg))), []);
    });
});
