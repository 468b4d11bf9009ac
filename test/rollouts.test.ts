import * as assert from "assert";
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { OfflineRun, PlannedResource } from "../tools/offline";
import { TEST_DIGEST, TEST_SHA256, byName, hubConfig, merged, planInline } from "./harness";
import { parseHub, parseMap } from "./stackConfig";
import { CRD_TYPE, GATEWAY_API_PLUGIN, ROLLOUTS_CRD_FILES, findWildcards } from "../components/argoRollouts";
import { PLUGINS_DIGEST_ANNOTATION, controllerValues } from "../components/rollouts/values";
import { PLUGIN_SOURCE_FILE, pluginListDigest, trafficRouterPlugin } from "../components/rollouts/plugin";
import { GO_CERT_DIRECTORIES, READ_CA_CONFIGMAP, READ_CA_DIGEST_ANNOTATION, READ_CA_DIR, READ_CA_KEY, READ_CA_VOLUME } from "../components/rollouts/trust";
import { controllerClusterRules } from "../components/rollouts/rbac";

/* eslint-disable @typescript-eslint/no-explicit-any -- the chart values are untyped JSON, read deep */
type Values = {
    controller: Record<string, any>;
    dashboard: Record<string, any>;
    [k: string]: any;
};
/* eslint-enable @typescript-eslint/no-explicit-any */
const values = (patch: Record<string, unknown> = {}) => controllerValues(parseHub(patch)) as Values;

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
            assert.strictEqual(crds.type, "kubernetes:yaml/v2:ConfigGroup");
            assert.strictEqual(crds.stage, "rollouts");
            const files = crds.inputs.files as string[];
            assert.deepStrictEqual(
                files,
                ROLLOUTS_CRD_FILES.map((f) => `https://raw.githubusercontent.com/argoproj/argo-rollouts/v1.9.0/manifests/crds/${f}`),
            );
            const chart = byName(run, "rollouts-controller");
            assert.ok(chart.dependsOn.includes(crds.urn), "the controller chart does not wait for the CRDs");
            const image = (chart.inputs.values as Values).controller.image;
            assert.strictEqual(image.tag, "v1.9.0", "CRDs and controller image must share one version");
        });

        it("follow an explicit appVersion together with the image", async () => {
            const r = await planInline(merged(hubConfig(), { controller: { chartVersion: "2.42.0", appVersion: "v1.9.1" } }));
            assert.ok((byName(r, "rollouts-crds").inputs.files as string[]).every((u) => u.includes("/v1.9.1/manifests/crds/")));
            assert.strictEqual((byName(r, "rollouts-controller").inputs.values as Values).controller.image.tag, "v1.9.1");
            assert.strictEqual(byName(r, "rollouts-controller").inputs.version, "2.42.0");
        });

        it("are protected and retained on delete, on the group and on every CRD in it", async () => {
            const crds = byName(run, "rollouts-crds");
            assert.strictEqual(crds.protect, true);
            assert.strictEqual(crds.retainOnDelete, true);
            assert.strictEqual(crds.transforms.length, 1);
            const opts = await applyTransform(crds.transforms[0], CRD_TYPE);
            assert.strictEqual(opts?.protect, true);
            assert.strictEqual(opts?.retainOnDelete, true);
        });

        it("protect only CRDs: the transform leaves other kinds alone", async () => {
            const crds = byName(run, "rollouts-crds");
            assert.strictEqual(await applyTransform(crds.transforms[0], "kubernetes:core/v1:ConfigMap"), undefined);
        });
    });

    describe("controller chart", () => {
        it("is the argo-rollouts chart pinned to the configured version from the Argo Helm repository", () => {
            const chart = byName(run, "rollouts-controller");
            assert.strictEqual(chart.type, "kubernetes:helm.sh/v4:Chart");
            assert.strictEqual(chart.inputs.chart, "argo-rollouts");
            assert.strictEqual(chart.inputs.version, "2.41.0");
            assert.deepStrictEqual(chart.inputs.repositoryOpts, { repo: "https://argoproj.github.io/argo-helm" });
            assert.strictEqual(chart.inputs.namespace, "argo-rollouts");
        });

        it("takes an OCI repository as the chart reference", async () => {
            const r = await planInline(merged(hubConfig(), { controller: { chartRepository: "oci://registry.platform.test/charts" } }));
            const chart = byName(r, "rollouts-controller");
            assert.strictEqual(chart.inputs.chart, "oci://registry.platform.test/charts/argo-rollouts");
            assert.strictEqual(chart.inputs.repositoryOpts, undefined);
        });

        it("keeps CRDs out of the chart and its aggregate roles off", () => {
            const v = values();
            assert.strictEqual(v.installCRDs, false);
            assert.strictEqual(v.createClusterAggregateRoles, false);
            assert.strictEqual(v.controller.createClusterRole, false);
            assert.strictEqual(v.providerRBAC.enabled, false);
            // gatewayAPI's provider RBAC adds ConfigMap write even with providerRBAC off.
            assert.strictEqual(v.providerRBAC.providers.gatewayAPI, false);
            assert.ok(Object.values(v.providerRBAC.providers).every((on) => on === false));
        });

        it("runs at least two replicas with an integer PDB budget", () => {
            const v = values({ controller: { replicas: 3, pdbMaxUnavailable: 2 } });
            assert.strictEqual(v.controller.replicas, 3);
            // Exactly these keys: no minAvailable beside the integer budget.
            assert.deepStrictEqual(v.controller.pdb, { enabled: true, maxUnavailable: 2 });
            assert.strictEqual(Number.isInteger(v.controller.pdb.maxUnavailable), true);
        });

        it("sets requests and limits, a metrics Service, and a ServiceMonitor only when asked", () => {
            const v = values();
            assert.deepStrictEqual(v.controller.resources, { requests: { cpu: "100m", memory: "256Mi" }, limits: { cpu: "1", memory: "512Mi" } });
            assert.deepStrictEqual(v.controller.metrics, { enabled: true, serviceMonitor: { enabled: false } });
            assert.strictEqual(values({ controller: { serviceMonitor: true } }).controller.metrics.serviceMonitor.enabled, true);
        });

        it("runs every container restricted", () => {
            const v = values({ plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST }, controller: { dashboard: true } });
            const restricted = (sc: Values) => {
                assert.strictEqual(sc.allowPrivilegeEscalation, false);
                assert.strictEqual(sc.readOnlyRootFilesystem, true);
                assert.strictEqual(sc.runAsNonRoot, true);
                assert.deepStrictEqual(sc.capabilities, { drop: ["ALL"] });
                assert.deepStrictEqual(sc.seccompProfile, { type: "RuntimeDefault" });
            };
            restricted(v.containerSecurityContext);
            restricted(v.dashboard.containerSecurityContext);
            restricted(v.controller.initContainers[0].securityContext);
            assert.deepStrictEqual(v.podSecurityContext, { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
            assert.deepStrictEqual(v.dashboard.podSecurityContext, v.podSecurityContext);
        });

        it("pulls every image from the mirror", () => {
            const v = values({ plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST }, controller: { dashboard: true } });
            assert.strictEqual(v.controller.image.registry, "registry.platform.test/mirror");
            assert.strictEqual(v.dashboard.image.registry, "registry.platform.test/mirror");
            assert.strictEqual(
                v.controller.initContainers[0].image,
                `registry.platform.test/mirror/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi@${TEST_DIGEST}`,
            );
        });

        it("uses the upstream registries when no mirror is configured", () => {
            const v = values({ imageRegistry: undefined, plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST } });
            assert.strictEqual(v.controller.image.registry, "quay.io");
            assert.ok(v.controller.initContainers[0].image.startsWith("ghcr.io/argoproj-labs/"));
        });

        it("keeps the dashboard off by default and read-only when on", () => {
            assert.strictEqual(values().dashboard.enabled, false);
            const on = values({ controller: { dashboard: true } });
            assert.strictEqual(on.dashboard.enabled, true);
            assert.strictEqual(on.dashboard.readonly, true);
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
            const v = values({ plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST } });
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
            const img = annotation({ plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST } });
            assert.notStrictEqual(annotation({ plugin: { delivery: "image", sha256: undefined, digest: `sha256:${"d".repeat(64)}` } }), img);
            assert.strictEqual(pluginListDigest([trafficRouterPlugin(parseHub().plugin)]), pluginListDigest([trafficRouterPlugin(parseHub().plugin)]));
        });
    });

    describe("the hub read endpoint's private CA (mimir.readCaBundle)", () => {
        const tls = (f: string) => fs.readFileSync(path.join(__dirname, "fixtures", "tls", f), "utf8");
        /** A spoke that reads through the hub at a fixed https URL. */
        const spoke = (patch: Record<string, unknown> = {}) =>
            merged(
                merged(hubConfig(), {
                    cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
                    mimir: { readEndpoint: "https://mimir-preprod.hub.platform.test/prometheus" },
                }),
                patch,
            );
        const spokeValues = (patch: Record<string, unknown> = {}) => controllerValues(parseMap(spoke(patch), "preprod")) as Values;

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
            const image = { plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST } };
            const v = spokeValues({ ...image, mimir: { readCaBundle: tls("ca.crt") } });
            assert.deepStrictEqual(
                v.controller.volumes.map((x: { name: string }) => x.name),
                ["gatewayapi-plugin", READ_CA_VOLUME],
            );
            assert.deepStrictEqual(
                v.controller.volumeMounts.map((x: { mountPath: string }) => x.mountPath),
                ["/plugin-source", READ_CA_DIR],
            );
            for (const without of [spokeValues(), values(), spokeValues(image)]) {
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
            const r = await planInline(spoke({ mimir: { readCaBundle: `${tls("ca.crt")}\n${tls("other-ca.crt")}` } }), { stack: "preprod" });
            const cm = byName(r, "mimir-read-ca");
            assert.strictEqual(cm.type, "kubernetes:core/v1:ConfigMap");
            assert.strictEqual(cm.stage, "rollouts");
            const meta = cm.inputs.metadata as { name: string; namespace: string; labels: Record<string, string> };
            assert.deepStrictEqual([meta.name, meta.namespace], [READ_CA_CONFIGMAP, "argo-rollouts"]);
            assert.strictEqual(meta.labels["app.kubernetes.io/part-of"], "argo-rollouts-addon");
            const data = cm.inputs.data as Record<string, string>;
            assert.deepStrictEqual(Object.keys(data), [READ_CA_KEY]);
            assert.strictEqual(data[READ_CA_KEY], `${tls("ca.crt").trim()}\n${tls("other-ca.crt").trim()}\n`);
            const chart = byName(r, "rollouts-controller");
            assert.ok(chart.dependsOn.includes(cm.urn), "the chart does not wait for the ConfigMap its pods mount");
            assert.ok(cm.dependsOn.includes(byName(r, "controller-namespace").urn));
            const chartValues = chart.inputs.values as Values;
            assert.deepStrictEqual(chartValues.controller.volumes, [{ name: READ_CA_VOLUME, configMap: { name: READ_CA_CONFIGMAP } }]);
            const without = await planInline(spoke(), { stack: "preprod" });
            assert.strictEqual(without.resources.filter((x) => x.name === "mimir-read-ca").length, 0);
            assert.strictEqual(run.resources.filter((x) => x.name === "mimir-read-ca").length, 0);
        });
    });

    describe("RBAC", () => {
        const rbacResources = (r: OfflineRun): PlannedResource[] => r.resources.filter((x) => /:(Cluster)?Role$/.test(x.type));

        it("has no wildcard in any role the stack declares", async () => {
            const withAll = await planInline(merged(hubConfig(), { plugin: { tcpRoutes: true, tlsRoutes: true } }));
            const roles = rbacResources(withAll);
            assert.ok(roles.length >= 3);
            for (const role of roles) {
                assert.deepStrictEqual(findWildcards(role.inputs.rules as never), [], `${role.name} has a wildcard`);
            }
        });

        it("finds a wildcard when there is one", () => {
            assert.deepStrictEqual(findWildcards([{ apiGroups: ["gateway.networking.k8s.io"], resources: ["*"], verbs: ["get"] }]), ["rule 0: resources"]);
            assert.deepStrictEqual(findWildcards([{ apiGroups: [""], resources: ["pods"], verbs: ["*"] }]), ["rule 0: verbs"]);
        });

        it("grants the plugin get/list/watch/update on HTTP and gRPC routes and nothing more by default", () => {
            const routes = controllerClusterRules({ tcpRoutes: false, tlsRoutes: false }).filter((r) => r.apiGroups.includes("gateway.networking.k8s.io"));
            assert.deepStrictEqual(routes, [
                { apiGroups: ["gateway.networking.k8s.io"], resources: ["httproutes", "grpcroutes"], verbs: ["get", "list", "watch", "update"] },
            ]);
            const withTcp = controllerClusterRules({ tcpRoutes: true, tlsRoutes: false }).find((r) => r.apiGroups.includes("gateway.networking.k8s.io"))!;
            assert.deepStrictEqual(withTcp.resources, ["httproutes", "grpcroutes", "tcproutes"]);
        });

        it("lets the plugin read Services and never write ConfigMaps", () => {
            const rules = controllerClusterRules({ tcpRoutes: false, tlsRoutes: false });
            assert.ok(rules.some((r) => r.apiGroups.includes("") && r.resources.includes("services") && r.verbs.includes("get")));
            assert.ok(!rules.some((r) => r.resources.includes("configmaps")), "no cluster-wide ConfigMap access");
        });

        it("never lets the controller create Jobs or touch Ingresses beyond reading", () => {
            const rules = controllerClusterRules({ tcpRoutes: false, tlsRoutes: false });
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
        it("carries restricted Pod Security and the platform's labels", () => {
            const ns = byName(run, "controller-namespace");
            const labels = (ns.inputs.metadata as { labels: Record<string, string> }).labels;
            assert.strictEqual(labels["pod-security.kubernetes.io/enforce"], "restricted");
            assert.strictEqual(labels["app.kubernetes.io/part-of"], "argo-rollouts-addon");
        });

        it("adds labels from config", async () => {
            const r = await planInline(merged(hubConfig(), { controller: { namespaceLabels: { "platform.test/tier": "platform" } } }));
            const labels = (byName(r, "controller-namespace").inputs.metadata as { labels: Record<string, string> }).labels;
            assert.strictEqual(labels["platform.test/tier"], "platform");
        });
    });
});
