/**
 * The end-to-end harness's pure parts: the declared-versus-live comparison, the report lines, and
 * the derived stack files (only what points at the local platform may differ from the shipped file).
 */
import assert from "assert";
import { freezeMeasurements } from "../components/rollouts/analysis";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { READ_CA_CONFIGMAP, READ_CA_DIR, READ_CA_KEY, READ_CA_VOLUME, controllerTrust } from "../components/rollouts/trust";
import { configMapFiles, mapMountPaths, playContainer, writeAtomically } from "../e2e/lib/kubelet";
import { differences, refKey, refOf } from "../e2e/lib/compare";
import { scenarioLine, summaryLine } from "../e2e/lib/report";
import { fixtureConfig, localConfig } from "../e2e/lib/stacks";
import { requiredVersion } from "../e2e/lib/engines";
import { localArgs, permissionErrors } from "../e2e/lib/controller";
import { FAST_FREEZE, FAST_GATES, SmokeSetting, backendWeight, collapse, deliveryPatch, inOrder } from "../e2e/lib/delivery";
import { addonConfig, labelsFor, tenantNamespaces } from "../e2e/lib/platform";
import { selects } from "../components/policy/selectors";
import { namespaceSelector } from "../components/policy/builders";
import { kyvernoRelease } from "../e2e/lib/kyvernoRelease";
import { E2E_RELEASES } from "../e2e/lib/releases";
import { CONTROLLER_RELEASES } from "../components/rollouts/versions";
import { AdmissionCase, admissionSamples, holds, judge, mergePatch } from "../e2e/lib/admission";
import { gateRun, gateSamples } from "../e2e/lib/gates";

describe("e2e harness", () => {
    describe("the Kyverno release of the run", () => {
        it("is CI's v1.17.2 unless ARGO_ROLLOUTS_ADDON_E2E_KYVERNO names 1.19, whose engine is optional; anything else is refused", () => {
            assert.deepStrictEqual([kyvernoRelease({}).engine, kyvernoRelease({ ARGO_ROLLOUTS_ADDON_E2E_KYVERNO: "1.17" }).engine], ["kyverno", "kyverno"]);
            const newer = kyvernoRelease({ ARGO_ROLLOUTS_ADDON_E2E_KYVERNO: "1.19" });
            assert.deepStrictEqual([newer.engine, newer.optional, newer.admission], ["kyverno-1.19", true, "kyverno-1.19"]);
            assert.strictEqual(requiredVersion(newer.engine, "github.com/kyverno/kyverno"), "v1.19.1");
            assert.strictEqual(requiredVersion("kyverno", "github.com/kyverno/kyverno"), "v1.17.2");
            assert.throws(
                () => kyvernoRelease({ ARGO_ROLLOUTS_ADDON_E2E_KYVERNO: "1.18" }),
                /ARGO_ROLLOUTS_ADDON_E2E_KYVERNO=1\.18 names no Kyverno the run can build: use 1\.19/,
            );
        });
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
            assert.strictEqual(judge(refused, "policies.kyverno.io/v1", answer(1, cel), policies), undefined);
            assert.strictEqual(judge(refused, "kyverno.io/v1", answer(1, clusterPolicy), policies), undefined);
            assert.match(judge(refused, "kyverno.io/v1", answer(0, ""), policies)!, /admitted, expected refused/);
            assert.match(
                judge(refused, "policies.kyverno.io/v1", answer(1, cel.replace("max-surge", "other")), policies)!,
                /expected refused by \[require-canary-max-surge\]/,
            );
            assert.match(judge(refused, "policies.kyverno.io/v1", answer(1, "Policy require-canary-max-surge error: no such key"), policies)!, /refused/);
            // Either of two refusing policies may answer first, never a third.
            const either = { ...refused, policy: ["require-canary-max-surge", "restrict-rollout-route-namespace"] } as AdmissionCase;
            assert.strictEqual(judge(either, "policies.kyverno.io/v1", answer(1, cel), policies), undefined);
            assert.match(judge(either, "policies.kyverno.io/v1", answer(1, "Policy require-prod-standard-delivery failed: x"), policies)!, /expected refused/);
            // The API server's own refusal, by no policy: the text decides, and no policy may answer.
            const byServer = { ...refused, policy: undefined, says: "empty selector is invalid" } as AdmissionCase;
            assert.strictEqual(
                judge(byServer, "kyverno.io/v1", answer(1, 'The Deployment "web" is invalid: spec.selector: empty selector is invalid'), policies),
                undefined,
            );
            assert.match(judge(byServer, "kyverno.io/v1", answer(1, "Policy require-canary-max-surge failed: x"), policies)!, /expected refused/);
            const warned = { ...refused, expect: "warned", policy: "require-prod-standard-delivery" } as AdmissionCase;
            assert.strictEqual(
                judge(warned, "kyverno.io/v1", answer(0, "Warning: policy require-prod-standard-delivery.canary: add the component"), policies),
                undefined,
            );
            assert.match(
                judge(
                    { ...warned, expect: "admitted", policy: undefined },
                    "kyverno.io/v1",
                    answer(0, "Warning: policy require-prod-standard-delivery.canary: x"),
                    policies,
                )!,
                /without a warning/,
            );
            const mutated = { ...warned, expect: "admitted", policy: undefined, object: { spec: { a: [{ b: 1 }] } }, absent: ["spec.c"] } as AdmissionCase;
            assert.strictEqual(judge(mutated, "x", answer(0, "", '{"spec":{"a":[{"b":1,"z":2}]}}'), policies), undefined);
            assert.match(judge(mutated, "x", answer(0, "", '{"spec":{"a":[{"b":1},{"b":2}]}}'), policies)!, /does not hold/);
            assert.match(judge(mutated, "x", answer(0, "", '{"spec":{"a":[{"b":1}],"c":0}}'), policies)!, /has spec.c/);
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

    describe("the platform's tenant namespaces", () => {
        it("are labelled so that each scope's selector, as the policies apply it, selects its namespace", () => {
            for (const stack of ["hub", "preprod"]) {
                const cfg = addonConfig(stack, fixtureConfig(stack));
                const ns = tenantNamespaces(cfg);
                assert.deepStrictEqual(
                    ns.map((n) => n.name),
                    ["e2e-tenant-dev", "e2e-tenant-prod", "e2e-tenant-regulated"],
                );
                const selected = (scope: "tenant" | "prod" | "regulated") =>
                    ns.filter((n) => selects(namespaceSelector(cfg.policy, scope), { ...n.labels, "kubernetes.io/metadata.name": n.name })).map((n) => n.name);
                assert.deepStrictEqual(selected("tenant"), ["e2e-tenant-dev", "e2e-tenant-prod", "e2e-tenant-regulated"]);
                assert.deepStrictEqual(selected("prod"), ["e2e-tenant-prod", "e2e-tenant-regulated"]);
                assert.deepStrictEqual(selected("regulated"), ["e2e-tenant-regulated"]);
            }
        });

        it("take the values two In requirements on one key share, and refuse a selector nothing satisfies", () => {
            assert.deepStrictEqual(
                labelsFor({
                    matchExpressions: [
                        { key: "t", operator: "In", values: ["dev", "prod"] },
                        { key: "t", operator: "In", values: ["prod"] },
                        { key: "x", operator: "Exists" },
                    ],
                }),
                { t: "prod", x: "true" },
            );
            assert.strictEqual(
                labelsFor({
                    matchExpressions: [
                        { key: "t", operator: "In", values: ["dev"] },
                        { key: "t", operator: "In", values: ["prod"] },
                    ],
                }),
                undefined,
            );
        });
    });

    describe("derived stack files", () => {
        const targets = { kubeconfig: "/tmp/k", context: "e2e", chartRepository: "https://127.0.0.1:1/charts", crdBaseUrl: "https://127.0.0.1:1/crds" };
        for (const stack of ["hub", "preprod"]) {
            it(`${stack}: only the connection, chart repository and CRD source differ from the fixture`, () => {
                const shipped = fixtureConfig(stack);
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
                ]);
            });
        }
    });

    it("reads each engine's pin from its wrapper module", () => {
        assert.match(requiredVersion("kubernetes", "k8s.io/kubernetes"), /^v1\.3[345]\.\d+$/);
        assert.match(requiredVersion("etcd", "go.etcd.io/etcd/server/v3"), /^v3\.6\.\d+$/);
        assert.throws(() => requiredVersion("etcd", "example.com/absent"), /does not require example.com\/absent/);
    });

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
        const targets = { kubeconfig: "/tmp/k", context: "e2e", chartRepository: "https://127.0.0.1:1/charts", crdBaseUrl: "https://127.0.0.1:1/crds" };
        const patch = (smoke: Partial<SmokeSetting> = {}) =>
            deliveryPatch({
                readEndpoint: "http://127.0.0.1:9/prometheus",
                pluginBaseUrl: "https://127.0.0.1:1/plugin-releases",
                pluginSha256: "f".repeat(64),
                smoke: { strategy: "canary", namespace: "rollouts-smoke", trigger: "1", failGate: false, ...smoke },
            });

        it("shortens the gates only through settings the program accepts", () => {
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
            }
        });

        it("sets the read endpoint's CA through mimir.readCaBundle, which the program accepts for an https endpoint", () => {
            const ca = fs.readFileSync(path.join(__dirname, "fixtures", "tls", "ca.crt"), "utf8");
            const withCa = deliveryPatch({
                readEndpoint: "https://127.0.0.1:9/prometheus",
                readCaBundle: ca,
                pluginBaseUrl: "https://127.0.0.1:1/plugin-releases",
                pluginSha256: "f".repeat(64),
                smoke: { strategy: "canary", namespace: "rollouts-smoke", trigger: "1", failGate: false },
            });
            const cfg = addonConfig("preprod", localConfig("preprod", targets, withCa));
            assert.strictEqual(cfg.mimir.readCaBundle, ca);
            assert.strictEqual(addonConfig("preprod", localConfig("preprod", targets, patch())).mimir.readCaBundle, undefined);
        });

        it("moves the chart's listen ports and keeps every other argument", () => {
            assert.deepStrictEqual(localArgs(["--healthzPort=8080", "--metricsPort=8090", "--loglevel=info", "--leader-elect"], { healthz: 1, metrics: 2 }), [
                "--loglevel=info",
                "--leader-elect",
                "--healthzPort=1",
                "--metricsPort=2",
            ]);
            // Chart 2.40.7 renders the v1.8.x spelling, the only one that controller knows.
            assert.deepStrictEqual(localArgs(["--healthzPort=8080", "--metricsport=8090"], { healthz: 1, metrics: 2 }), ["--healthzPort=1", "--metricsport=2"]);
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
            const route = {
                metadata: { name: "r" },
                spec: {
                    rules: [
                        {
                            backendRefs: [
                                { name: "a-stable", weight: 75 },
                                { name: "a-canary", weight: 25 },
                            ],
                        },
                    ],
                },
            };
            assert.strictEqual(backendWeight(route, "a-canary"), 25);
            assert.strictEqual(backendWeight(route, "other"), undefined);
            assert.deepStrictEqual(collapse([0, 0, 25, 25, 50, 100, 100, 0]), [0, 25, 50, 100, 0]);
            assert.ok(inOrder([0, 25, 50, 100, 0], [25, 50, 100]));
            assert.ok(!inOrder([0, 50, 25, 100], [25, 50, 100]));
        });
    });

    describe("the kubelet's part for the controller container", () => {
        const ca = fs.readFileSync(path.join(__dirname, "fixtures", "tls", "ca.crt"), "utf8");
        let dir: string;
        beforeEach(() => {
            dir = fs.mkdtempSync(path.join(os.tmpdir(), "e2e-kubelet-"));
        });
        afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

        it("writes a ConfigMap volume in the atomic writer's layout, which Go's certificate directory reader reads once per key", () => {
            writeAtomically(dir, { "ca-bundle.crt": ca, "nested/other.crt": "x" });
            const data = fs.readlinkSync(path.join(dir, "..data"));
            assert.match(data, /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.\w+$/);
            assert.strictEqual(fs.readlinkSync(path.join(dir, "ca-bundle.crt")), "..data/ca-bundle.crt");
            assert.strictEqual(fs.readlinkSync(path.join(dir, "nested")), "..data/nested");
            assert.ok(fs.statSync(path.join(dir, data)).isDirectory());
            assert.strictEqual(fs.readFileSync(path.join(dir, "ca-bundle.crt"), "utf8"), ca);
            // Go's readUniqueDirectoryEntries drops a symlink whose target has no slash (..data); the
            // timestamped directory is not a file; so only the keys' links are read as certificates.
            const read = fs
                .readdirSync(dir, { withFileTypes: true })
                .filter((e) => !(e.isSymbolicLink() && !fs.readlinkSync(path.join(dir, e.name)).includes("/")))
                .filter((e) => fs.statSync(path.join(dir, e.name)).isFile());
            assert.deepStrictEqual(
                read.map((e) => e.name),
                ["ca-bundle.crt"],
            );
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
            assert.throws(
                () => playContainer({ name: "c", env: [{ name: "X", valueFrom: { secretKeyRef: {} } }] }, [], () => undefined, dir),
                /env X is set from valueFrom/,
            );
            assert.throws(
                () =>
                    playContainer(
                        { name: "c", volumeMounts: [{ name: "v", mountPath: "/m", subPath: "k" }] },
                        [{ name: "v", configMap: { name: "cm" } }],
                        () => ({ k: "x" }),
                        dir,
                    ),
                /subPath/,
            );
            assert.throws(
                () =>
                    playContainer(
                        { name: "c", volumeMounts: [{ name: "v", mountPath: "/m" }] },
                        [{ name: "v", configMap: { name: "cm" } }],
                        () => undefined,
                        path.join(dir, "b"),
                    ),
                /ConfigMap cm does not exist, so the pod could not start/,
            );
            assert.deepStrictEqual(configMapFiles({ a: "1", b: "2" }, [{ key: "b", path: "sub/b.pem" }]), { "sub/b.pem": "2" });
        });
    });
});
