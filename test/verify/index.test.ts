import * as assert from "assert";
import { ReadError, connect } from "../../tools/verify/cluster";
import { COMPONENTS, defaultOptions, runVerify, withoutComponents } from "../../tools/verify/index";
import { CheckResult, DOCS } from "../../tools/verify/report";
import { HUB_READ_ENDPOINT, NOW, fixture, healthyCluster, fixtureConfig, verifyConfig } from "./world";

import { ALL_IDS, expectRequestsAllowed, notPassing, status, useFakeCluster } from "./run";

describe("verify: every check against a cluster", () => {
    const { verify, start, server } = useFakeCluster();

    it("passes every check of a stack that owns what it can, with requests its ClusterRole allows", async () => {
        const config = verifyConfig();
        const results = await verify(config, healthyCluster(config));
        assert.deepStrictEqual(notPassing(results), []);
        assert.deepStrictEqual([...results.keys()], ALL_IDS);
        expectRequestsAllowed(server(), config);
        // The tenant, prod and regulated selectors each match a namespace.
        assert.match(
            results.get("kyverno.selectors-match")!.note!,
            /^policy\.tenantNamespaceSelector: \d+ namespace\(s\); policy\.prodNamespaceLabels: \d+ namespace\(s\); policy\.regulated\.namespaceLabels: [1-9]\d* namespace\(s\)$/,
        );
    });

    it("passes the fixture hub stack as declared: complement, kept ArgoCD objects, the observability module's ingest routes", async () => {
        const config = fixtureConfig("hub");
        const results = await verify(config, healthyCluster(config));
        assert.deepStrictEqual(
            notPassing(results).map((l) => l.split(":")[0]),
            ["SKIP rbac.kyverno-policy-lookups", "SKIP smoke.outcome"],
        );
        assert.match(
            results.get("metrics.spoke-routes")!.note!,
            /^mimir-spoke-preprod-read \(read\); other routes on the spokes' hostnames: observability\/mimir-ingest-preprod$/,
        );
        assert.match(results.get("argocd.projects")!.note!, /tenants \(external\)/);
        expectRequestsAllowed(server(), config);
    });

    it("passes the fixture preprod spoke: templates at the hub's endpoint, queried from here", async () => {
        const config = fixtureConfig("preprod");
        const results = await verify(config, healthyCluster(config), {
            httpGet: async () => ({ status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) }),
        });
        assert.deepStrictEqual(
            notPassing(results).map((l) => l.split(":")[0]),
            ["SKIP rbac.kyverno-policy-lookups", "SKIP metrics.spoke-routes", "SKIP smoke.outcome"],
        );
        assert.match(results.get("metrics.templates")!.note!, new RegExp(`${HUB_READ_ENDPOINT.replace(/[./]/g, "\\$&")} \\(from the hub stack\\)`));
        expectRequestsAllowed(server(), config);
    });
    it("fail the checks that needed them, pointing at verify's own permissions", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        await start(world);
        const cluster = await connect({ connection: config.cluster.connection, kubeconfig: server().kubeconfig, context: "fake" });
        const forbidden = {
            ...cluster,
            list: async (p: string, s?: string) =>
                p.includes("rolebindings") ? Promise.reject(new ReadError(p, 403, `GET ${p}: 403 forbidden`)) : cluster.list(p, s),
        };
        const results = new Map((await runVerify(config, forbidden, defaultOptions({ now: () => NOW }))).map((r) => [r.id, r]));
        assert.strictEqual(status(results, "rbac.editor-cannot-promote"), "FAIL");
        assert.strictEqual(results.get("rbac.editor-cannot-promote")!.readme, DOCS.permissions);
        assert.strictEqual(status(results, "crds.established"), "PASS");
    });
});

describe("verify --without: checks that need an absent component", () => {
    const result = (id: string, status: CheckResult["status"], note?: string): CheckResult => ({
        id,
        status,
        what: `requirement ${id}`,
        findings: status === "FAIL" ? [{ object: "Lease a/b", found: "not found" }] : [],
        note,
        readme: "#x",
    });
    it("SKIPs only the checks of the components named, says which component and what it saw, and skips nothing by default", () => {
        const results = [
            result("controller.leader", "FAIL"),
            result("crds.established", "PASS"),
            result("kyverno.policies-ready", "FAIL"),
            result("rbac.controller", "FAIL"),
            result("metrics.query", "SKIP", "not reachable from here"),
        ];
        const out = withoutComponents(results, ["rollouts-controller", "mimir"]);
        assert.deepStrictEqual(
            out.map((r) => r.status),
            ["SKIP", "PASS", "FAIL", "FAIL", "SKIP"],
        );
        assert.match(
            out[0].note ?? "",
            /^not checked: the Argo Rollouts controller process \(--without rollouts-controller\) does not run on this cluster; without it: Lease a\/b: not found$/,
        );
        // A check that skipped for its own reason names the absent component too.
        assert.strictEqual(out[4].note, "not checked: Mimir's gateway pods (--without mimir) does not run on this cluster; not reachable from here");
        assert.deepStrictEqual(withoutComponents(results, []), results);
    });
    it("names only checks that exist", () => {
        for (const [name, c] of Object.entries(COMPONENTS)) {
            for (const id of c.checks) {
                assert.ok(ALL_IDS.includes(id), `${name} names ${id}, which is no check`);
            }
        }
    });
});
