/**
 * The end-to-end harness's pure parts: the declared-versus-live comparison, the report lines, and
 * the derived stack files (only what points at the local platform may differ from the shipped file).
 */
import assert from "assert";
import { differences, refKey, refOf } from "../e2e/lib/compare";
import { scenarioLine, summaryLine } from "../e2e/lib/report";
import { E2E_PLUGIN_DIGEST, localConfig, shippedConfig } from "../e2e/lib/stacks";
import { requiredVersion } from "../e2e/lib/engines";

describe("e2e harness", () => {
    describe("differences", () => {
        it("ignores what the server adds and reports what it dropped or changed", () => {
            const declared = { metadata: { name: "a", labels: { x: "1" } }, spec: { list: [{ k: 1 }], keep: true } };
            const live = { metadata: { name: "a", labels: { x: "1", added: "y" }, uid: "u" }, spec: { list: [{ k: 1, defaulted: 0 }], keep: true }, status: {} };
            assert.deepStrictEqual(differences(declared, live), []);
            assert.deepStrictEqual(differences(declared, { ...live, spec: { list: [{ k: 2 }] } }), [".spec.list[0].k: declared 1, live 2", ".spec.keep: declared true, live undefined"]);
            assert.deepStrictEqual(differences({ a: [1, 2] }, { a: [1] }), [".a: declared 2 items, live has 1"]);
        });
        it("names objects by kind, namespace and name", () => {
            assert.strictEqual(refKey(refOf({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "n" } })), "ConfigMap/n/c");
            assert.strictEqual(refKey(refOf({ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } })), "Namespace/n");
        });
    });

    describe("report", () => {
        it("prints a line per scenario and the closing count", () => {
            const s = [
                { name: "a", result: "PASS" as const, seconds: 1.25, detail: "" },
                { name: "b", result: "FAIL" as const, seconds: 2, detail: "boom\nmore" },
                { name: "c", result: "SKIP" as const, seconds: 0, detail: "needs X" },
            ];
            assert.deepStrictEqual(s.map(scenarioLine), ["PASS a (1.3 s)", "FAIL b (2.0 s): boom", "SKIP c (0.0 s): needs X"]);
            assert.strictEqual(summaryLine(s), "1 passed, 1 failed, 1 skipped");
            assert.strictEqual(summaryLine(s.slice(0, 1)), "1 passed, 0 failed");
        });
    });

    describe("derived stack files", () => {
        const targets = { kubeconfig: "/tmp/k", context: "e2e", chartRepository: "https://127.0.0.1:1/charts", crdBaseUrl: "https://127.0.0.1:1/crds" };
        for (const stack of ["hub", "preprod"]) {
            it(`${stack}: only the connection, chart repository, CRD source and example digest differ`, () => {
                const shipped = shippedConfig(stack);
                const local = localConfig(stack, targets);
                const changed: string[] = [];
                for (const key of new Set([...Object.keys(shipped), ...Object.keys(local)])) {
                    const a = shipped[key] as Record<string, unknown>;
                    const b = local[key] as Record<string, unknown>;
                    if (JSON.stringify(a) === JSON.stringify(b)) {
                        continue;
                    }
                    for (const sub of new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})])) {
                        if (JSON.stringify(a?.[sub]) !== JSON.stringify(b?.[sub])) {
                            changed.push(`${key}.${sub}`);
                        }
                    }
                }
                assert.deepStrictEqual(changed.sort(), [
                    "argo-rollouts-addon:cluster.eksClusterName",
                    "argo-rollouts-addon:cluster.kubeconfigContext",
                    "argo-rollouts-addon:cluster.kubeconfigPath",
                    "argo-rollouts-addon:controller.chartRepository",
                    "argo-rollouts-addon:controller.crdBaseUrl",
                    "argo-rollouts-addon:plugin.digest",
                ]);
                assert.strictEqual((local["argo-rollouts-addon:plugin"] as { digest: string }).digest, E2E_PLUGIN_DIGEST);
            });
        }
    });

    it("reads each engine's pin from its wrapper module", () => {
        assert.match(requiredVersion("kubernetes", "k8s.io/kubernetes"), /^v1\.3[345]\.\d+$/);
        assert.match(requiredVersion("etcd", "go.etcd.io/etcd/server/v3"), /^v3\.6\.\d+$/);
        assert.throws(() => requiredVersion("etcd", "example.com/absent"), /does not require example.com\/absent/);
    });
});
