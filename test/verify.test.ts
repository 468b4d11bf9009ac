import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { ConnectionError, connect, kubeConfigFor, loadClient } from "../tools/verify/cluster";
import { CheckResult, DOCS, VERIFY_PAGE, exitCode, formatJson, formatText } from "../tools/verify/report";
import { headingAnchors, readDoc } from "./markdown";
import { verifyMain } from "../tools/verify";
import { FakeApiServer, startFakeApiServer } from "./verify/fakeApiServer";
import { hubConfig, merged, withEnv } from "./harness";
import { healthyCluster, verifyConfig } from "./verify/world";

/** Runs verify's command line, collecting what it prints. */
async function main(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await verifyMain(
        argv,
        (s) => out.push(s),
        (s) => err.push(s),
    );
    return { code, out, err };
}

describe("verify's client, arguments and output", () => {
    it("says there is no kubeconfig at all, instead of reaching http://localhost:8080 under a made-up context; quotes no line of one it cannot parse", async () => {
        const home = fs.mkdtempSync(path.join(os.tmpdir(), "verify-home-"));
        await withEnv({ KUBECONFIG: undefined, HOME: home }, async () => {
            const k8s = await loadClient();
            const broken = path.join(home, "config");
            fs.writeFileSync(broken, "users:\n- name: u\n  user:\n    token: s3cret\n  bad: [open\nclusters: []\n");
            const parse = (e: Error) =>
                e instanceof ConnectionError && /^kubeconfig .*config cannot be read: .*\(\d+:\d+\)$/.test(e.message) && !e.message.includes("s3cret");
            await assert.rejects(kubeConfigFor(k8s, { connection: { kind: "kubeconfig", context: "hub" }, kubeconfig: broken }), parse);
            await assert.rejects(kubeConfigFor(k8s, { connection: { kind: "kubeconfig", context: "hub" } }), (e: Error) => {
                assert.ok(e instanceof ConnectionError, String(e));
                assert.match(
                    e.message,
                    /^no kubeconfig: KUBECONFIG is not set and .*\/\.kube\/config does not exist; give --kubeconfig, or set cluster\.kubeconfigPath/,
                );
                assert.doesNotMatch(e.message, /loaded-context/);
                return true;
            });
        });
    });

    // An unknown context: the exit status tests below ("has no context").
    it("refuses an unreachable API server as a connection error", async () => {
        const server = await startFakeApiServer({ objects: [] });
        const kubeconfig = fs.readFileSync(server.kubeconfig, "utf8");
        const url = (JSON.parse(kubeconfig) as { clusters: { cluster: { server: string } }[] }).clusters[0].cluster.server;
        await server.close();
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verify-gone-"));
        fs.writeFileSync(path.join(dir, "config"), kubeconfig);
        await assert.rejects(
            connect({ connection: { kind: "kubeconfig", context: "fake", path: path.join(dir, "config") } }),
            (e: Error) => e instanceof ConnectionError && e.message.includes(url),
        );
        fs.rmSync(dir, { recursive: true, force: true });
    });

    describe("exit status", () => {
        let dir: string;
        let server: FakeApiServer;
        /** hubConfig() as the stack file test, connecting through a kubeconfig with `cluster` merged in. */
        const writeStack = (cluster: Record<string, unknown>) => {
            const config = merged(hubConfig(), { cluster: { eksClusterName: undefined, ...cluster } });
            const keys = Object.entries(config).map(([k, v]) => [k.includes(":") ? k : `argo-rollouts-addon:${k}`, v]);
            fs.writeFileSync(path.join(dir, "Pulumi.test.yaml"), YAML.stringify({ config: Object.fromEntries(keys) }));
        };
        beforeEach(async () => {
            dir = fs.mkdtempSync(path.join(os.tmpdir(), "verify-stack-"));
            const config = verifyConfig();
            server = await startFakeApiServer(healthyCluster(config));
        });
        afterEach(async () => {
            await server.close();
            fs.rmSync(dir, { recursive: true, force: true });
        });

        it("is 1 with a FAIL (the stack file's kubeconfig connection), with --json for pipelines", async () => {
            writeStack({ kubeconfigContext: "fake", kubeconfigPath: server.kubeconfig });
            const { code, out } = await main(["--stack", "test", "--config-dir", dir, "--json"]);
            assert.strictEqual(code, 1);
            const report = JSON.parse(out.join("\n")) as { stack: string; results: CheckResult[]; summary: Record<string, number> };
            assert.strictEqual(report.stack, "test");
            // This stack file has no spokes, ArgoCD objects or smoke test: what it lacks against the
            // healthy world shows up, and the rest passes.
            assert.ok(report.summary.PASS > 10);
            assert.ok(report.results.every((r) => ["PASS", "FAIL", "SKIP"].includes(r.status) && r.readme.startsWith("#verify")));
            assert.deepStrictEqual(server.violations, []);
        });

        it("is 2 for a bad stack file, failing the way the program fails", async () => {
            writeStack({ kubeconfigContext: "fake", role: "primary" });
            const { code, err } = await main(["--stack", "test", "--config-dir", dir]);
            assert.strictEqual(code, 2);
            assert.match(err.join("\n"), /stack "test": invalid configuration[\s\S]*argo-rollouts-addon:cluster\.role = "primary": must be one of hub, spoke/);
        });

        it("is 2 when the cluster cannot be reached, and for bad arguments; with --json, with a JSON error document on stdout, so the pipeline's report is never empty", async () => {
            writeStack({ kubeconfigContext: "missing-context", kubeconfigPath: server.kubeconfig });
            const { code, err } = await main(["--stack", "test", "--config-dir", dir]);
            assert.strictEqual(code, 2);
            assert.match(err.join("\n"), /stack "test": cannot verify: kubeconfig .* has no context "missing-context"/);
            for (const argv of [
                ["--stack", "test", "--config-dir", dir, "--json"],
                ["--json", "--smoke-timeout"],
            ]) {
                const { code, out, err } = await main(argv);
                assert.strictEqual(out.length, 1, argv.join(" "));
                const doc = JSON.parse(out[0]) as { error: string; exitCode: number; results: unknown[] };
                assert.deepStrictEqual([code, doc.exitCode, doc.results, doc.error], [2, 2, [], err[0]]);
            }
            // A bad argument's message never prints a URL's user-info or query string.
            const bad = await main(["--stack", "hub", "--without", "https://ci:t0ken@hooks.platform.test/x?sig=abc", "--json"]);
            assert.strictEqual(bad.code, 2);
            assert.match([...bad.out, ...bad.err].join("\n"), /got https:\/\/hooks\.platform\.test\/x\?\[not shown\]/);
            assert.doesNotMatch([...bad.out, ...bad.err].join("\n"), /t0ken|sig=abc|ci:/);
        });

        it("connects to EKS like the program (describe-cluster's endpoint and CA, token from aws eks get-token) unless given --kubeconfig, never reading KUBECONFIG", async () => {
            const eks = { kind: "eks" as const, clusterName: "platform-hub", region: "eu-west-1" };
            const k8s = await loadClient();
            const described: string[] = [];
            const describeEks = async (name: string) => {
                described.push(name);
                return { endpoint: "https://eks.test.example", certificateAuthority: Buffer.from("ca").toString("base64") };
            };
            await withEnv({ KUBECONFIG: server.kubeconfig }, async () => {
                const viaStack = await kubeConfigFor(k8s, { connection: eks, describeEks });
                assert.strictEqual(viaStack.getCurrentCluster()?.server, "https://eks.test.example");
                const exec = viaStack.getCurrentUser()?.exec as { command: string; args: string[] };
                assert.deepStrictEqual([exec.command, ...exec.args.slice(0, 4)], ["aws", "eks", "get-token", "--cluster-name", "platform-hub"]);
                assert.deepStrictEqual(described, ["platform-hub"]);
                const viaFlag = await kubeConfigFor(k8s, { connection: eks, kubeconfig: server.kubeconfig, describeEks });
                assert.notStrictEqual(viaFlag.getCurrentCluster()?.server, "https://eks.test.example");
                assert.deepStrictEqual(described, ["platform-hub"], "an explicit --kubeconfig is honoured: EKS is not asked");
            });
        });
    });

    it("prints one line per check and, under a FAIL, the object, what was found and the section to read", () => {
        const report = {
            stack: "hub",
            cluster: "hub",
            server: "https://k8s.test",
            results: [
                { id: "crds.established", status: "PASS" as const, what: "CRDs established", findings: [], readme: DOCS.crds },
                { id: "smoke.outcome", status: "SKIP" as const, what: "smoke", findings: [], note: "smokeTest.enabled is false", readme: DOCS.smoke },
                {
                    id: "controller.leader",
                    status: "FAIL" as const,
                    what: "one leader",
                    findings: [{ object: "Lease argo-rollouts/argo-rollouts-controller-lock", found: "no holder" }],
                    readme: DOCS.crds,
                },
            ],
        };
        const lines = formatText(report).split("\n");
        assert.match(lines[1], /^PASS {2}crds\.established +CRDs established$/);
        assert.match(lines[2], /^SKIP {2}smoke\.outcome +smoke \(smokeTest\.enabled is false\)$/);
        assert.match(lines[3], /^FAIL {2}controller\.leader +one leader$/);
        assert.strictEqual(lines[4], "      Lease argo-rollouts/argo-rollouts-controller-lock: no holder");
        assert.strictEqual(lines[5], "      read: docs/operations/verify.md#verify-crds-and-controller");
        assert.strictEqual(exitCode(report.results), 1);
        assert.strictEqual(exitCode(report.results.slice(0, 2)), 0);
        assert.deepStrictEqual(JSON.parse(formatJson(report)).summary, { PASS: 1, FAIL: 1, SKIP: 1 });
    });

    it("every section of the verify page a check points at exists", () => {
        // GitHub's heading anchors of the page formatText names; the links between pages, the
        // verify tables' included, are checked in test/docs.test.ts.
        const anchors = headingAnchors(readDoc(VERIFY_PAGE));
        for (const anchor of Object.values(DOCS)) {
            assert.ok(anchors.has(anchor), `${VERIFY_PAGE} has no heading for ${anchor}`);
        }
        assert.ok(anchors.size > Object.keys(DOCS).length, `${VERIFY_PAGE} has only ${[...anchors].join(", ")}`);
    });
});
