import assert from "assert";
import { freezeMeasurements } from "../components/rollouts/analysis";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { READ_CA_CONFIGMAP, READ_CA_DIR, READ_CA_KEY, READ_CA_VOLUME, controllerTrust } from "../components/rollouts/trust";
import { configMapFiles, mapMountPaths, playContainer } from "../e2e/lib/kubelet";
import { differences, refKey, refOf } from "../e2e/lib/compare";
import { scenarioLine, summaryLine } from "../e2e/lib/report";
import { workerGroups } from "../e2e/lib/pool";
import { fixtureConfig, localConfig } from "../e2e/lib/stacks";
import { requiredVersion } from "../e2e/lib/engines";
import { localArgs, permissionErrors } from "../e2e/lib/controller";
import { FAST_FREEZE, FAST_GATES, SmokeSetting, backendWeight, collapse, deliveryPatch, inOrder } from "../e2e/lib/delivery";
import { addonConfig, labelsFor } from "../e2e/lib/platform";
import { kyvernoRelease } from "../e2e/lib/kyvernoRelease";
import { E2E_RELEASES } from "../e2e/lib/releases";
import { CONTROLLER_RELEASES } from "../components/rollouts/versions";
import { AdmissionCase, admissionSamples, holds, judge, mergePatch } from "../e2e/lib/admission";
import { gateRun, gateSamples } from "../e2e/lib/gates";

describe("e2e harness", () => {
    const ca = fs.readFileSync(path.join(__dirname, "fixtures", "tls", "ca.crt"), "utf8");
    const targets = { kubeconfig: "/tmp/k", context: "e2e", chartRepository: "https://127.0.0.1:1/charts", crdBaseUrl: "https://127.0.0.1:1/crds" };
    it("reads each engine's pin from its wrapper module; Kyverno's is CI's v1.17.2 unless ARGO_ROLLOUTS_ADDON_E2E_KYVERNO names 1.19 (optional), nothing else", () => {
        assert.deepStrictEqual([kyvernoRelease({}).engine, kyvernoRelease({ ARGO_ROLLOUTS_ADDON_E2E_KYVERNO: "1.17" }).engine], ["kyverno", "kyverno"]);
        const newer = kyvernoRelease({ ARGO_ROLLOUTS_ADDON_E2E_KYVERNO: "1.19" });
        assert.deepStrictEqual([newer.engine, newer.optional, newer.admission], ["kyverno-1.19", true, "kyverno-1.19"]);
        assert.strictEqual(requiredVersion(newer.engine, "github.com/kyverno/kyverno"), "v1.19.1");
        assert.strictEqual(requiredVersion("kyverno", "github.com/kyverno/kyverno"), "v1.17.2");
        assert.match(requiredVersion("kubernetes", "k8s.io/kubernetes"), /^v1\.3[345]\.\d+$/);
        assert.match(requiredVersion("etcd", "go.etcd.io/etcd/server/v3"), /^v3\.6\.\d+$/);
        assert.throws(() => requiredVersion("etcd", "example.com/absent"), /does not require example.com\/absent/);
        assert.throws(
            () => kyvernoRelease({ ARGO_ROLLOUTS_ADDON_E2E_KYVERNO: "1.18" }),
            /ARGO_ROLLOUTS_ADDON_E2E_KYVERNO=1\.18 names no Kyverno the run can build: use 1\.19/,
        );
    });

    describe("differences", () => {
        it("ignores what the server adds and reports what it dropped or changed", () => {
            const declared = { metadata: { name: "a", labels: { x: "1" } }, spec: { list: [{ k: 1 }], keep: true } };
            const live = {
                metadata: { name: "a", labels: { x: "1", added: "y" }, uid: "u" },
                spec: { list: [{ k: 1, defaulted: 0 }], keep: true },
                status: {},
            };
            assert.deepStrictEqual(differences(declared, live), []);
            assert.deepStrictEqual(differences(declared, { ...live, spec: { list: [{ k: 2 }] } }), [
                ".spec.list[0].k: declared 1, live 2",
                ".spec.keep: declared true, live undefined",
            ]);
            assert.deepStrictEqual(differences({ a: [1, 2] }, { a: [1] }), [".a: declared 2 items, live has 1"]);
        });
        it("names objects by kind, namespace and name", () => {
            assert.strictEqual(refKey(refOf({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "n" } })), "ConfigMap/n/c");
            assert.strictEqual(refKey(refOf({ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } })), "Namespace/n");
        });
    });

    describe("the engine tier's samples", () => {
        const refused = { name: "x", namespace: "dev", resource: "rollout", expect: "refused", policy: "require-canary-max-surge" } as AdmissionCase;
        const policies = ["require-canary-max-surge", "restrict-rollout-route-namespace", "require-prod-standard-delivery"];
        const answer = (status: number, stderr: string, stdout = "{}") => ({ status, stderr, stdout });

        it("reads which of the stack's policies refused or warned, as each Kyverno API words it", () => {
            const cel =
                'Error from server: admission webhook "vpol.validate.kyverno.svc-fail" denied the request: Policy require-canary-max-surge failed: a canary Rollout needs maxSurge';
            const clusterPolicy =
                "Error from server: admission webhook \"validate.kyverno.svc-fail\" denied the request: \n\nresource Rollout/dev/x was blocked due to the following policies \n\nrequire-canary-max-surge:\n  max-surge: 'a canary'\n";
            const [V, K] = ["policies.kyverno.io/v1", "kyverno.io/v1"];
            // Either of two refusing policies may answer first, never a third.
            const either = { ...refused, policy: ["require-canary-max-surge", "restrict-rollout-route-namespace"] } as AdmissionCase;
            // The API server's own refusal, by no policy: the text decides, and no policy may answer.
            const byServer = { ...refused, policy: undefined, says: "empty selector is invalid" } as AdmissionCase;
            const warned = { ...refused, expect: "warned", policy: "require-prod-standard-delivery" } as AdmissionCase;
            const admitted = { ...warned, expect: "admitted", policy: undefined } as AdmissionCase;
            const mutated = { ...admitted, object: { spec: { a: [{ b: 1 }] } }, absent: ["spec.c"] } as AdmissionCase;
            // Each case, the API's words, and the verdict: none (as expected) or what the mismatch says.
            const verdicts: [AdmissionCase, string, ReturnType<typeof answer>, RegExp?][] = [
                [refused, V, answer(1, cel)],
                [refused, K, answer(1, clusterPolicy)],
                [refused, K, answer(0, ""), /admitted, expected refused/],
                [refused, V, answer(1, cel.replace("max-surge", "other")), /expected refused by \[require-canary-max-surge\]/],
                [refused, V, answer(1, "Policy require-canary-max-surge error: no such key"), /refused/],
                [either, V, answer(1, cel)],
                [either, V, answer(1, "Policy require-prod-standard-delivery failed: x"), /expected refused/],
                [byServer, K, answer(1, 'The Deployment "web" is invalid: spec.selector: empty selector is invalid')],
                [byServer, K, answer(1, "Policy require-canary-max-surge failed: x"), /expected refused/],
                [warned, K, answer(0, "Warning: policy require-prod-standard-delivery.canary: add the component")],
                [admitted, K, answer(0, "Warning: policy require-prod-standard-delivery.canary: x"), /without a warning/],
                [mutated, "x", answer(0, "", '{"spec":{"a":[{"b":1,"z":2}]}}')],
                [mutated, "x", answer(0, "", '{"spec":{"a":[{"b":1},{"b":2}]}}'), /does not hold/],
                [mutated, "x", answer(0, "", '{"spec":{"a":[{"b":1}],"c":0}}'), /has spec.c/],
            ];
            for (const [c, api, said, why] of verdicts) {
                const verdict = judge(c, api, said, policies);
                assert.ok(why ? why.test(verdict ?? "(none)") : verdict === undefined, `verdict ${verdict} on ${said.stderr}`);
            }
        });

        it("patches as a JSON merge patch, and holds lists whole", () => {
            assert.deepStrictEqual(mergePatch({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { b: null, c: [3] }, e: { f: 1 } }), { a: { c: [3] }, d: 1, e: { f: 1 } });
            assert.ok(holds({ a: [{ b: 1, c: 2 }], d: 1 }, { a: [{ b: 1 }] }));
            assert.ok(!holds({ a: [{ b: 1 }, { b: 2 }] }, { a: [{ b: 1 }] }));
        });

        it("name only resources, identities' classes and policies the samples define", () => {
            const samples = admissionSamples();
            const kinds = ["dev", "prod", "regulated", "default", "outside", "excluded"];
            for (const c of [...samples.cases, ...samples.existing]) {
                assert.ok(samples.resources[c.resource] && kinds.includes(c.namespace), JSON.stringify(c));
            }
            assert.ok(samples.cases.length > 100);
        });

        it("give promtool and Argo Rollouts every shared template on every gate case", () => {
            const run = gateRun(gateSamples());
            assert.ok(run.gates.length >= 4 * gateSamples().cases.length + 2 * gateSamples().budgets.length);
            assert.ok(run.gates.every((g) => Object.keys(g.phases).length > 0));
        });
    });

    it("report: prints a line per scenario and the closing count", () => {
        const s = [
            { name: "a", result: "PASS" as const, seconds: 1.25, detail: "" },
            { name: "b", result: "FAIL" as const, seconds: 2, detail: "boom\nmore" },
            { name: "c", result: "SKIP" as const, seconds: 0, detail: "needs X" },
        ];
        assert.deepStrictEqual(s.map(scenarioLine), ["PASS a (1.3 s)", "FAIL b (2.0 s): boom", "SKIP c (0.0 s): needs X"]);
        assert.strictEqual(summaryLine(s), "1 passed, 1 failed, 1 skipped");
        assert.strictEqual(summaryLine(s.slice(0, 1)), "1 passed, 0 failed");
    });

    it("side by side: a file runs in the process of the file it runs after, the longest groups first, none with nothing selected", () => {
        const f = (file: string, selected: number, seconds?: number, runsAfter?: string) => ({ file, selected, total: 2, seconds, runsAfter });
        const files = [f("30-d", 2, 90, "10-g"), f("05-a", 2), f("10-g", 1, 100), f("27-k", 1, 200), f("15-e", 0, 900)];
        assert.deepStrictEqual(workerGroups(files), [["10-g", "30-d"], ["27-k"], ["05-a"]]);
    });

    // That each namespace's labels select it for its scope is the real Kyverno's to decide: engine-kyverno-cli's dev, prod and regulated samples.
    it("takes for a tenant namespace the values two In requirements on one key share, and refuses a selector nothing satisfies", () => {
        const t = (...values: string[]) => ({ key: "t", operator: "In" as const, values });
        assert.deepStrictEqual(labelsFor({ matchExpressions: [t("dev", "prod"), t("prod"), { key: "x", operator: "Exists" }] }), { t: "prod", x: "true" });
        assert.strictEqual(labelsFor({ matchExpressions: [t("dev"), t("prod")] }), undefined);
    });

    for (const stack of ["hub", "preprod"]) {
        it(`derived stack file ${stack}: only the connection, chart repository and CRD source differ from the fixture`, () => {
            // Each top-level key's fields, as JSON, by `key.field`.
            const fields = (config: Record<string, unknown>) =>
                new Map(Object.entries(config).flatMap(([k, v]) => Object.entries((v ?? {}) as object).map(([f, x]) => [`${k}.${f}`, JSON.stringify(x)])));
            const [shipped, local] = [fields(fixtureConfig(stack)), fields(localConfig(stack, targets))];
            const changed = [...new Set([...shipped.keys(), ...local.keys()])].filter((f) => shipped.get(f) !== local.get(f));
            assert.deepStrictEqual(changed.sort(), [
                "argo-rollouts-addon:cluster.eksClusterName",
                "argo-rollouts-addon:cluster.kubeconfigContext",
                "argo-rollouts-addon:cluster.kubeconfigPath",
                "argo-rollouts-addon:controller.chartRepository",
                "argo-rollouts-addon:controller.crdBaseUrl",
            ]);
        });
    }

    it("runs every release of the version table from a module pinned at that release, with a controller built from it", () => {
        assert.deepStrictEqual(Object.keys(E2E_RELEASES).sort(), CONTROLLER_RELEASES.map((r) => r.appVersion).sort());
        for (const r of CONTROLLER_RELEASES) {
            const e = E2E_RELEASES[r.appVersion];
            assert.strictEqual(
                requiredVersion(path.relative(path.join(__dirname, "..", "e2e", "engines"), e.pins), "github.com/argoproj/argo-rollouts"),
                r.appVersion,
                r.appVersion,
            );
            const engine = e.binary === "rollouts-controller" ? "argo-rollouts" : path.basename(e.pins);
            assert.match(
                fs.readFileSync(path.join(__dirname, "..", "e2e", "engines", engine, "build.sh"), "utf8"),
                new RegExp(`version=${r.appVersion.replace(/\./g, "\\.")}[\\s\\S]*-o "\\$\\{OUT\\}/${e.binary}"`),
            );
        }
    });

    describe("delivery scenarios", () => {
        const patch = (smoke: Partial<SmokeSetting> = {}, readEndpoint = "http://127.0.0.1:9/prometheus", readCaBundle?: string) =>
            deliveryPatch({
                readEndpoint,
                readCaBundle,
                pluginBaseUrl: "https://127.0.0.1:1/plugin-releases",
                pluginSha256: "f".repeat(64),
                smoke: { strategy: "canary", namespace: "rollouts-smoke", trigger: "1", failGate: false, ...smoke },
            });

        it("shortens the gates and sets the read endpoint's CA only through settings the program accepts", () => {
            // parseAddonConfig throws with every problem when a rule refuses a value.
            for (const strategy of ["canary", "blueGreen"] as const) {
                const cfg = addonConfig("preprod", localConfig("preprod", targets, patch({ strategy })));
                assert.strictEqual(cfg.analysis.rateWindow, FAST_GATES.rateWindow);
                assert.strictEqual(cfg.analysis.initialDelay, FAST_GATES.initialDelay);
                assert.strictEqual(cfg.errorBudget.maxFreeze, FAST_FREEZE.maxFreeze);
                assert.ok(freezeMeasurements(cfg.errorBudget) <= 10, "every measurement of the freeze stays in the run's history");
                assert.deepStrictEqual(cfg.mimir.readEndpoint, { kind: "url", url: "http://127.0.0.1:9/prometheus" });
                assert.strictEqual(cfg.plugin.delivery.mode, "download");
                assert.strictEqual(cfg.smokeTest.strategy, strategy);
                assert.strictEqual(cfg.mimir.readCaBundle, undefined);
            }
            // The CA goes through mimir.readCaBundle, which the program accepts for an https endpoint.
            const https = addonConfig("preprod", localConfig("preprod", targets, patch({}, "https://127.0.0.1:9/prometheus", ca)));
            assert.strictEqual(https.mimir.readCaBundle, ca);
        });

        it("moves the chart's listen ports and keeps every other argument", () => {
            const args = ["--healthzPort=8080", "--metricsPort=8090", "--loglevel=info", "--leader-elect"];
            assert.deepStrictEqual(localArgs(args, { healthz: 1, metrics: 2 }), ["--loglevel=info", "--leader-elect", "--healthzPort=1", "--metricsPort=2"]);
            // Chart 2.40.7 renders the v1.8.x spelling, the only one that controller knows.
            assert.deepStrictEqual(localArgs(["--healthzPort=8080", "--metricsport=8090"], { healthz: 1, metrics: 2 }), ["--healthzPort=1", "--metricsport=2"]);
            assert.deepStrictEqual(localArgs([], { healthz: 1, metrics: 2 }), ["--healthzPort=1", "--metricsport=2"], "install.yaml sets neither");
        });

        it("finds permission errors in a controller log, and only those: not a namespace being deleted", () => {
            const rbac =
                '{"level":"error","msg":"replicasets.apps is forbidden: User \\"system:serviceaccount:argo-rollouts:argo-rollouts\\" cannot create resource \\"replicasets\\" in API group \\"apps\\" in the namespace \\"shop\\""}';
            const terminating =
                '{"level":"error","msg":"rollout syncHandler error: replicasets.apps \\"rollouts-smoke-55f7d4c477\\" is forbidden: unable to create new content in namespace rollouts-smoke because it is being terminated"}';
            const lease = 'E1201 leases.coordination.k8s.io "x" is forbidden';
            const info = '{"level":"info","msg":"Reconciling TrafficRouting with type \'GatewayAPI\'"}';
            assert.deepStrictEqual(permissionErrors([rbac, info, terminating, lease].join("\n")), [rbac, lease]);
            assert.deepStrictEqual(permissionErrors('{"level":"info","msg":"Started 10 Rollout workers"}'), []);
        });

        it("reads weights off a route and checks their order", () => {
            const stable = { name: "a-stable", weight: 75 };
            const canary = { name: "a-canary", weight: 25 };
            const route = { metadata: { name: "r" }, spec: { rules: [{ backendRefs: [stable, canary] }] } };
            assert.strictEqual(backendWeight(route, "a-canary"), 25);
            assert.strictEqual(backendWeight(route, "other"), undefined);
            assert.deepStrictEqual(collapse([0, 0, 25, 25, 50, 100, 100, 0]), [0, 25, 50, 100, 0]);
            assert.ok(inOrder([0, 25, 50, 100, 0], [25, 50, 100]));
            assert.ok(!inOrder([0, 50, 25, 100], [25, 50, 100]));
        });
    });

    describe("the kubelet's part for the controller container", () => {
        let dir: string;
        beforeEach(() => {
            dir = fs.mkdtempSync(path.join(os.tmpdir(), "e2e-kubelet-"));
        });

        it("maps mount paths inside env values, whole paths only", () => {
            const mounts = [{ volume: "v", mountPath: READ_CA_DIR, local: "/run/v" }];
            assert.strictEqual(mapMountPaths(`/etc/ssl/certs:/etc/pki/tls/certs:${READ_CA_DIR}`, mounts), "/etc/ssl/certs:/etc/pki/tls/certs:/run/v");
            assert.strictEqual(mapMountPaths(`${READ_CA_DIR}/ca-bundle.crt`, mounts), "/run/v/ca-bundle.crt");
            assert.strictEqual(mapMountPaths(`${READ_CA_DIR}-other:/x${READ_CA_DIR}`, mounts), `${READ_CA_DIR}-other:/x${READ_CA_DIR}`);
        });

        it("plays the Deployment the program's values render: its ConfigMap volume and SSL_CERT_DIR, and refuses what it cannot play", () => {
            const trust = controllerTrust(ca)!;
            const container = {
                name: "argo-rollouts",
                env: trust.extraEnv,
                volumeMounts: [
                    { name: "plugin-bin", mountPath: "/home/argo-rollouts/plugin-bin" },
                    ...(trust.volumeMounts as { name: string; mountPath: string }[]),
                ],
            };
            const volumes = [{ name: "plugin-bin", emptyDir: {} }, ...(trust.volumes as { name: string }[])];
            const asked: string[] = [];
            const played = playContainer(container, volumes, (name) => (asked.push(name), name === READ_CA_CONFIGMAP ? trust.configMapData : undefined), dir);
            assert.deepStrictEqual(asked, [READ_CA_CONFIGMAP]);
            const local = path.join(dir, READ_CA_VOLUME);
            assert.deepStrictEqual(played.mounts, [{ volume: READ_CA_VOLUME, mountPath: READ_CA_DIR, local }]);
            assert.deepStrictEqual(played.env, { SSL_CERT_DIR: `/etc/ssl/certs:/etc/pki/tls/certs:${local}` });
            assert.strictEqual(fs.readFileSync(path.join(local, READ_CA_KEY), "utf8"), ca);
            const cm = [{ name: "v", configMap: { name: "cm" } }];
            const refused: [Parameters<typeof playContainer>[0], Parameters<typeof playContainer>[1], Record<string, string> | undefined, RegExp][] = [
                [{ name: "c", env: [{ name: "X", valueFrom: { secretKeyRef: {} } }] }, [], undefined, /env X is set from valueFrom/],
                [{ name: "c", volumeMounts: [{ name: "v", mountPath: "/m", subPath: "k" }] }, cm, { k: "x" }, /subPath/],
                [{ name: "c", volumeMounts: [{ name: "v", mountPath: "/m" }] }, cm, undefined, /ConfigMap cm does not exist, so the pod could not start/],
            ];
            refused.forEach(([c, volumes, data, why], i) => assert.throws(() => playContainer(c, volumes, () => data, path.join(dir, `r${i}`)), why));
            assert.deepStrictEqual(configMapFiles({ a: "1", b: "2" }, [{ key: "b", path: "sub/b.pem" }]), { "sub/b.pem": "2" });
        });
    });
});
