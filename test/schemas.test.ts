import * as assert from "assert";
import { manifestResources } from "../tools/plan";
import { loadModel, validateObject, PACKAGE_MODELS } from "../tools/schemas";
import { TEST_DIGEST, TEST_SMOKE, hubConfig, merged, planInline } from "./harness";
import { addonProject } from "./stackConfig";

const everything = () =>
    merged(hubConfig(), {
        spokes: [{ name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.platform.test", query: true }],
        mimir: { spokeRouteNamespace: "gateway-system" },
        network: { controllerDefaultDeny: true, canaryTargets: [{ namespace: "shop", port: 8080 }], metricsScrapeNamespaces: ["observability"] },
        controller: { dashboard: true, serviceMonitor: true },
        plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST },
        notifications: { service: "webhook", webhookUrl: "https://events.platform.test/rollouts" },
        notificationsToken: { secure: "v1:encrypted" },
        smokeTest: TEST_SMOKE,
        argocd: {
            projects: { tenants: addonProject("Service", "ConfigMap") },
            applicationSets: { tenants: {} },
            rbac: { approverRole: "role:release-approver", deployerRoles: ["role:deployer"] },
        },
    });

/** The kinds whose schema only their CRD holds: the API server validates them at up. */
const CRD_ONLY = /^(cilium\.io\/v2\/CiliumNetworkPolicy|policies\.kyverno\.io\/v1\/(Validating|Mutating|Generating)Policy)$/;

describe("schema validation", () => {
    const cases: [string, () => Record<string, unknown>][] = [
        ["hub defaults", hubConfig],
        ["every feature on", everything],
        ["ClusterPolicy mode", () => merged(everything(), { policy: { kyvernoApi: "kyverno.io/v1" } })],
    ];
    for (const [label, cfg] of cases) {
        it(`every object the program declares is valid (${label})`, async () => {
            const run = await planInline(cfg());
            const objects = manifestResources(run);
            assert.ok(objects.length > 15);
            for (const r of objects) {
                const res = validateObject(r.inputs);
                // Only the kinds no CommonJS model package covers are left to the API server.
                assert.ok(res.via === "package" || CRD_ONLY.test(`${String(r.inputs.apiVersion)}/${String(r.inputs.kind)}`), `${res.object} has no schema`);
                assert.deepStrictEqual(res.problems, [], `${res.object} (${res.via})`);
            }
        });
    }

    it("rejects a field of the wrong type with the package model: a Rollout's replicas, an HTTPRoute backend's port", () => {
        const route = { rules: [{ backendRefs: [{ name: "svc", port: "http" }] }] };
        for (const [object, problem] of [
            [{ apiVersion: "argoproj.io/v1alpha1", kind: "Rollout", metadata: { name: "x" }, spec: { replicas: "two" } }, /replicas must be integer/],
            [{ apiVersion: "gateway.networking.k8s.io/v1", kind: "HTTPRoute", metadata: { name: "x" }, spec: route }, /port must be integer/],
        ] as const) {
            const res = validateObject(object);
            assert.deepStrictEqual([res.via, res.problems.length], ["package", 1], res.problems.join());
            assert.match(res.problems[0], problem);
        }
    });

    it("loads each package model from its own module, the model of the kind it is listed for", () => {
        assert.ok(Object.keys(PACKAGE_MODELS).length >= 16);
        for (const [key, file] of Object.entries(PACKAGE_MODELS)) {
            const Model = loadModel(key);
            assert.ok(Model, `${file} exports no ${key}`);
            assert.strictEqual(`${Model.apiVersion}/${Model.kind}`, key, file);
            assert.strictEqual(typeof new Model({ metadata: { name: "x" } } as never).validate, "function");
            // One kind's module, not its group's index (which loads every kind of the group).
            assert.ok(!/\/v[0-9a-z]+$/.test(file), `${file} is a group's index`);
        }
        assert.strictEqual(loadModel("example.com/v1/Widget"), undefined);
        assert.strictEqual(loadModel("constructor"), undefined);
    });

    it("leaves a kind no package covers to the API server, without a problem", () => {
        assert.deepStrictEqual(validateObject({ apiVersion: "cilium.io/v2", kind: "CiliumNetworkPolicy", metadata: { name: "x" }, spec: {} }), {
            object: "CiliumNetworkPolicy x",
            via: "none",
            problems: [],
        });
    });
});
