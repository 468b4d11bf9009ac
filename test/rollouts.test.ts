import * as assert from "assert";
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { OfflineRun } from "../tools/offline";
import { TEST_CONTROLLER_DIGEST, TEST_DIGEST, TEST_SHA256, byName, hubConfig, merged, planInline, spokeConfig } from "./harness";
import { parseHub, parseMap } from "./stackConfig";
import { CRD_TYPE, GATEWAY_API_PLUGIN, ROLLOUTS_CRD_FILES, findWildcards } from "../components/argoRollouts";
import { PLUGINS_DIGEST_ANNOTATION, controllerValues } from "../components/rollouts/values";
import { PLUGIN_SOURCE_FILE } from "../components/rollouts/plugin";
import { GO_CERT_DIRECTORIES, READ_CA_CONFIGMAP, READ_CA_DIGEST_ANNOTATION, READ_CA_DIR, READ_CA_KEY, READ_CA_VOLUME } from "../components/rollouts/trust";
import { controllerClusterRules } from "../components/rollouts/rbac";

/* eslint-disable @typescript-eslint/no-explicit-any -- the chart values are untyped JSON, read deep */
type Values = { controller: Record<string, any>; dashboard: Record<string, any>; [k: string]: any };
/* eslint-enable @typescript-eslint/no-explicit-any */
const values = (patch: Record<string, unknown> = {}) => controllerValues(parseHub(patch)) as Values;
const IMAGE_MODE = { plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST } };

async function applyTransform(t: pulumi.ResourceTransform, type: string): Promise<pulumi.ResourceOptions | undefined> {
    const result = await t({ custom: true, type, name: "child", props: { kind: "x" }, opts: {} });
    return result?.opts;
}

describe("rollouts stage", () => {
    let run: OfflineRun;
    before(async () => {
        run = await planInline(hubConfig(), { stack: "hub" });
    });

    describe("CRDs", () => {
        it("are their own step, at the controller's version, before the controller", () => {
            const crds = byName(run, "rollouts-crds");
            assert.deepStrictEqual([crds.type, crds.stage], ["kubernetes:yaml/v2:ConfigGroup", "rollouts"]);
            assert.deepStrictEqual(
                crds.inputs.files,
                ROLLOUTS_CRD_FILES.map((f) => `https://raw.githubusercontent.com/argoproj/argo-rollouts/v1.9.0/manifests/crds/${f}`),
            );
            const chart = byName(run, "rollouts-controller");
            assert.ok(chart.dependsOn.includes(crds.urn), "the controller chart does not wait for the CRDs");
            assert.strictEqual((chart.inputs.values as Values).controller.image.tag, `v1.9.0@${TEST_CONTROLLER_DIGEST}`, "one version, pinned by digest");
        });

        it("follow an explicit appVersion together with the image", async () => {
            const r = await planInline(merged(hubConfig(), { controller: { chartVersion: "2.42.0", appVersion: "v1.9.1" } }));
            assert.ok((byName(r, "rollouts-crds").inputs.files as string[]).every((u) => u.includes("/v1.9.1/manifests/crds/")));
            const chart = byName(r, "rollouts-controller").inputs;
            assert.deepStrictEqual([chart.version, (chart.values as Values).controller.image.tag], ["2.42.0", `v1.9.1@${TEST_CONTROLLER_DIGEST}`]);
        });

        it("are protected and retained on delete, on the group and on every CRD in it, and the transform leaves other kinds alone", async () => {
            const crds = byName(run, "rollouts-crds");
            assert.deepStrictEqual([crds.protect, crds.retainOnDelete, crds.transforms.length], [true, true, 1]);
            const opts = await applyTransform(crds.transforms[0], CRD_TYPE);
            assert.deepStrictEqual([opts?.protect, opts?.retainOnDelete], [true, true]);
            assert.strictEqual(await applyTransform(crds.transforms[0], "kubernetes:core/v1:ConfigMap"), undefined);
        });
    });

    describe("controller chart", () => {
        it("is the argo-rollouts chart pinned to the configured version from the Argo Helm repository", () => {
            const { type, inputs } = byName(run, "rollouts-controller");
            assert.deepStrictEqual(
                [type, inputs.chart, inputs.version, inputs.repositoryOpts, inputs.namespace],
                ["kubernetes:helm.sh/v4:Chart", "argo-rollouts", "2.41.0", { repo: "https://argoproj.github.io/argo-helm" }, "argo-rollouts"],
            );
        });

        it("awaits its Deployment, not its Services: the provider holds a Service ten seconds past its last Endpoints change", async () => {
            const [t] = byName(run, "rollouts-controller").transforms;
            const svc = await t({ custom: true, type: "kubernetes:core/v1:Service", name: "m", props: { metadata: { annotations: { a: "b" } } }, opts: {} });
            assert.deepStrictEqual(svc?.props.metadata, { annotations: { a: "b", "pulumi.com/skipAwait": "true" } });
            assert.strictEqual(await applyTransform(t, "kubernetes:apps/v1:Deployment"), undefined);
        });

        it("takes an OCI repository as the chart reference", async () => {
            const r = await planInline(merged(hubConfig(), { controller: { chartRepository: "oci://registry.platform.test/charts" } }));
            const chart = byName(r, "rollouts-controller").inputs;
            assert.deepStrictEqual([chart.chart, chart.repositoryOpts], ["oci://registry.platform.test/charts/argo-rollouts", undefined]);
        });

        it("keeps CRDs out of the chart and its aggregate roles off", () => {
            const v = values();
            assert.deepStrictEqual(
                [v.installCRDs, v.createClusterAggregateRoles, v.controller.createClusterRole, v.providerRBAC.enabled],
                [false, false, false, false],
            );
            // gatewayAPI's provider RBAC adds ConfigMap write even with providerRBAC off: every provider off.
            assert.ok(Object.values(v.providerRBAC.providers).every((on) => on === false));
        });

        it("runs at least two replicas with an integer PDB budget", () => {
            const v = values({ controller: { replicas: 3, pdbMaxUnavailable: 2 } });
            // The budget's exact keys: no minAvailable beside the integer budget.
            assert.deepStrictEqual([v.controller.replicas, v.controller.pdb], [3, { enabled: true, maxUnavailable: 2 }]);
        });

        it("sets requests and limits, a metrics Service, and a ServiceMonitor only when asked", () => {
            const v = values();
            assert.deepStrictEqual(v.controller.resources, { requests: { cpu: "100m", memory: "256Mi" }, limits: { cpu: "1", memory: "512Mi" } });
            assert.deepStrictEqual(v.controller.metrics, { enabled: true, serviceMonitor: { enabled: false } });
            assert.strictEqual(values({ controller: { serviceMonitor: true } }).controller.metrics.serviceMonitor.enabled, true);
        });

        it("runs every container restricted, the dashboard read-only and off by default", () => {
            const v = values({ ...IMAGE_MODE, controller: { dashboard: true } });
            for (const sc of [v.containerSecurityContext, v.dashboard.containerSecurityContext, v.controller.initContainers[0].securityContext]) {
                const { allowPrivilegeEscalation, readOnlyRootFilesystem, runAsNonRoot, capabilities, seccompProfile } = sc;
                assert.deepStrictEqual(
                    { allowPrivilegeEscalation, readOnlyRootFilesystem, runAsNonRoot, capabilities, seccompProfile },
                    {
                        allowPrivilegeEscalation: false,
                        readOnlyRootFilesystem: true,
                        runAsNonRoot: true,
                        capabilities: { drop: ["ALL"] },
                        seccompProfile: { type: "RuntimeDefault" },
                    },
                );
            }
            assert.deepStrictEqual(v.podSecurityContext, { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
            assert.deepStrictEqual(v.dashboard.podSecurityContext, v.podSecurityContext);
            assert.deepStrictEqual([v.dashboard.enabled, v.dashboard.readonly, values().dashboard.enabled], [true, true, false]);
        });

        it("pulls every image from the mirror, else from the upstream registries", () => {
            const v = values({ ...IMAGE_MODE, controller: { dashboard: true } });
            assert.deepStrictEqual(
                [v.controller.image.registry, v.dashboard.image.registry],
                ["registry.platform.test/mirror", "registry.platform.test/mirror"],
            );
            assert.strictEqual(
                v.controller.initContainers[0].image,
                `registry.platform.test/mirror/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi@${TEST_DIGEST}`,
            );
            const upstream = values({ ...IMAGE_MODE, imageRegistry: undefined });
            assert.strictEqual(upstream.controller.image.registry, "quay.io");
            assert.ok(upstream.controller.initContainers[0].image.startsWith("ghcr.io/argoproj-labs/"));
        });
    });

    describe("Gateway API plugin", () => {
        it("downloads the release asset for the node architecture with the configured sha256", () => {
            const v = values({ plugin: { arch: "arm64" } });
            assert.deepStrictEqual(v.controller.trafficRouterPlugins, [
                {
                    name: "argoproj-labs/gatewayAPI",
                    location:
                        "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi/releases/download/v0.15.0/gatewayapi-plugin-linux-arm64",
                    sha256: TEST_SHA256,
                },
            ]);
            assert.strictEqual(v.controller.initContainers, undefined);
        });

        it("copies the binary from the digest-pinned image into a volume the controller loads from", () => {
            const v = values(IMAGE_MODE);
            assert.deepStrictEqual(v.controller.trafficRouterPlugins, [{ name: GATEWAY_API_PLUGIN, location: `file://${PLUGIN_SOURCE_FILE}` }]);
            const init = v.controller.initContainers[0];
            assert.deepStrictEqual(init.command, ["cp", "/bin/rollouts-plugin-trafficrouter-gatewayapi", PLUGIN_SOURCE_FILE]);
            const vol = v.controller.volumes[0].name;
            assert.deepStrictEqual(init.volumeMounts, [{ name: vol, mountPath: "/plugin-source" }]);
            assert.deepStrictEqual(v.controller.volumeMounts, [{ name: vol, mountPath: "/plugin-source", readOnly: true }]);
            // Not the chart's plugin-bin volume: the controller would truncate its own source.
            assert.notStrictEqual(vol, "plugin-bin");
        });

        it("restarts the controller when the plugin list changes", () => {
            const annotation = (patch: Record<string, unknown>) => values(patch).controller.podAnnotations[PLUGINS_DIGEST_ANNOTATION];
            const base = annotation({});
            assert.match(base, /^[a-f0-9]{64}$/);
            assert.strictEqual(annotation({}), base, "the digest must be stable");
            assert.notStrictEqual(annotation({ plugin: { version: "v0.16.0" } }), base);
            assert.notStrictEqual(annotation({ plugin: { sha256: "c".repeat(64) } }), base);
            assert.notStrictEqual(annotation({ plugin: { ...IMAGE_MODE.plugin, digest: `sha256:${"d".repeat(64)}` } }), annotation(IMAGE_MODE));
        });
    });

    describe("the hub read endpoint's private CA (mimir.readCaBundle)", () => {
        const tls = (f: string) => fs.readFileSync(path.join(__dirname, "fixtures", "tls", f), "utf8");
        const spokeValues = (patch: Record<string, unknown> = {}) => controllerValues(parseMap(spokeConfig(patch), "preprod")) as Values;

        it("mounts the bundle into the controller and adds its folder to Go's certificate directories, keeping the system roots", () => {
            const v = spokeValues({ mimir: { readCaBundle: tls("ca.crt") } });
            // SSL_CERT_FILE stays unset: Go still reads /etc/ssl/certs/ca-certificates.crt first.
            assert.deepStrictEqual(v.controller.extraEnv, [{ name: "SSL_CERT_DIR", value: `/etc/ssl/certs:/etc/pki/tls/certs:${READ_CA_DIR}` }]);
            assert.deepStrictEqual(GO_CERT_DIRECTORIES, ["/etc/ssl/certs", "/etc/pki/tls/certs"]);
            assert.deepStrictEqual(v.controller.volumes, [{ name: READ_CA_VOLUME, configMap: { name: READ_CA_CONFIGMAP } }]);
            assert.deepStrictEqual(v.controller.volumeMounts, [{ name: READ_CA_VOLUME, mountPath: READ_CA_DIR, readOnly: true }]);
            assert.ok(!GO_CERT_DIRECTORIES.some((d) => READ_CA_DIR.startsWith(d)), "the bundle's folder must be its own: Go reads every file of it");
        });

        it("keeps the plugin image's volume beside it, and sets nothing without a bundle", () => {
            const v = spokeValues({ ...IMAGE_MODE, mimir: { readCaBundle: tls("ca.crt") } });
            assert.deepStrictEqual(
                v.controller.volumes.map((x: { name: string }) => x.name),
                ["gatewayapi-plugin", READ_CA_VOLUME],
            );
            assert.deepStrictEqual(
                v.controller.volumeMounts.map((x: { mountPath: string }) => x.mountPath),
                ["/plugin-source", READ_CA_DIR],
            );
            for (const without of [spokeValues(), values(), spokeValues(IMAGE_MODE)]) {
                assert.strictEqual(without.controller.extraEnv, undefined);
                assert.ok(!(without.controller.volumes ?? []).some((x: { name: string }) => x.name === READ_CA_VOLUME));
                assert.strictEqual(without.controller.podAnnotations[READ_CA_DIGEST_ANNOTATION], undefined);
            }
        });

        it("restarts the controller when the bundle changes: Go reads its roots once per process", () => {
            const digest = (pem: string) => spokeValues({ mimir: { readCaBundle: pem } }).controller.podAnnotations[READ_CA_DIGEST_ANNOTATION];
            const one = digest(tls("ca.crt"));
            assert.strictEqual(one, createHash("sha256").update(tls("ca.crt")).digest("hex"));
            assert.strictEqual(digest(tls("ca.crt").trimEnd()), one, "a YAML block scalar's trailing newline changes nothing");
            assert.notStrictEqual(digest(`${tls("ca.crt")}${tls("other-ca.crt")}`), one);
            assert.match(spokeValues({ mimir: { readCaBundle: tls("ca.crt") } }).controller.podAnnotations[PLUGINS_DIGEST_ANNOTATION], /^[a-f0-9]{64}$/);
        });

        it("declares the ConfigMap in the controller namespace before the chart, holding the stack's certificates only", async () => {
            const r = await planInline(spokeConfig({ mimir: { readCaBundle: `${tls("ca.crt")}\n${tls("other-ca.crt")}` } }), { stack: "preprod" });
            const cm = byName(r, "mimir-read-ca");
            const meta = cm.inputs.metadata as { name: string; namespace: string; labels: Record<string, string> };
            assert.deepStrictEqual(
                [cm.type, cm.stage, meta.name, meta.namespace, meta.labels["app.kubernetes.io/part-of"]],
                ["kubernetes:core/v1:ConfigMap", "rollouts", READ_CA_CONFIGMAP, "argo-rollouts", "argo-rollouts-addon"],
            );
            assert.deepStrictEqual(cm.inputs.data, { [READ_CA_KEY]: `${tls("ca.crt").trim()}\n${tls("other-ca.crt").trim()}\n` });
            assert.ok(byName(r, "rollouts-controller").dependsOn.includes(cm.urn), "the chart does not wait for the ConfigMap its pods mount");
            assert.ok(cm.dependsOn.includes(byName(r, "controller-namespace").urn));
            const without = await planInline(spokeConfig(), { stack: "preprod" });
            assert.deepStrictEqual(
                [without, run].map((x) => x.resources.filter((y) => y.name === "mimir-read-ca").length),
                [0, 0],
            );
        });
    });

    describe("RBAC", () => {
        it("has no wildcard in any role the stack declares", async () => {
            const withAll = await planInline(merged(hubConfig(), { plugin: { tcpRoutes: true, tlsRoutes: true } }));
            const roles = withAll.resources.filter((x) => /:(Cluster)?Role$/.test(x.type));
            assert.ok(roles.length >= 3);
            for (const role of roles) {
                assert.deepStrictEqual(findWildcards(role.inputs.rules as never), [], `${role.name} has a wildcard`);
            }
        });

        it("grants the plugin get/list/watch/update on HTTP and gRPC routes and nothing more by default", () => {
            const routes = controllerClusterRules({ tcpRoutes: false, tlsRoutes: false }).filter((r) => r.apiGroups.includes("gateway.networking.k8s.io"));
            assert.deepStrictEqual(routes, [
                { apiGroups: ["gateway.networking.k8s.io"], resources: ["httproutes", "grpcroutes"], verbs: ["get", "list", "watch", "update"] },
            ]);
            const withTcp = controllerClusterRules({ tcpRoutes: true, tlsRoutes: false }).find((r) => r.apiGroups.includes("gateway.networking.k8s.io"))!;
            assert.deepStrictEqual(withTcp.resources, ["httproutes", "grpcroutes", "tcproutes"]);
        });

        it("never lets the controller write ConfigMaps cluster-wide, create Jobs or touch Ingresses beyond reading", () => {
            const rules = controllerClusterRules({ tcpRoutes: false, tlsRoutes: false });
            assert.ok(!rules.some((r) => r.resources.includes("configmaps")), "no cluster-wide ConfigMap access");
            for (const kind of ["jobs", "ingresses"]) {
                const rule = rules.find((r) => r.resources.includes(kind))!;
                assert.deepStrictEqual(rule.verbs, ["get", "list", "watch"]);
            }
        });

        it("binds the roles to the chart's ServiceAccount", () => {
            for (const name of ["controller-clusterrolebinding", "controller-rolebinding"]) {
                const b = byName(run, name);
                assert.deepStrictEqual(b.inputs.subjects, [{ kind: "ServiceAccount", name: "argo-rollouts", namespace: "argo-rollouts" }]);
            }
            assert.strictEqual(values().serviceAccount.name, "argo-rollouts");
        });

        it("confines leader election and the controller's own config to its namespace", () => {
            const role = byName(run, "controller-role");
            assert.strictEqual((role.inputs.metadata as { namespace: string }).namespace, "argo-rollouts");
            const resources = (role.inputs.rules as { resources: string[] }[]).flatMap((r) => r.resources);
            assert.deepStrictEqual(resources.sort(), ["configmaps", "leases", "secrets"]);
        });
    });

    describe("namespace", () => {
        it("carries restricted Pod Security, the platform's labels and those of the config", async () => {
            const labels = (r: OfflineRun) => (byName(r, "controller-namespace").inputs.metadata as { labels: Record<string, string> }).labels;
            const { "pod-security.kubernetes.io/enforce": podSecurity, "app.kubernetes.io/part-of": partOf } = labels(run);
            assert.deepStrictEqual([podSecurity, partOf], ["restricted", "argo-rollouts-addon"]);
            const r = await planInline(merged(hubConfig(), { controller: { namespaceLabels: { "platform.test/tier": "platform" } } }));
            assert.strictEqual(labels(r)["platform.test/tier"], "platform");
        });
    });
});
