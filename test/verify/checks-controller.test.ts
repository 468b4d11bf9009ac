import type { KubeObject } from "../../tools/verify/cluster";
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { caBundleDigest } from "../../components/gateway/caBundle";
import { READ_CA_CONFIGMAP, READ_CA_DIGEST_ANNOTATION, READ_CA_KEY } from "../../components/rollouts/trust";
import { fixture, healthyCluster, replace, fixtureConfig, verifyConfig, withStatus } from "./world";

import { expectFail, expectPass, found, useFakeCluster } from "./run";

describe("verify: CRDs and controller", () => {
    const { verify } = useFakeCluster();

    it("crds.established fails when a CRD is not established or missing", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        replace(world, "CustomResourceDefinition", "rollouts.argoproj.io", (o) => withStatus(o, fixture("crd-not-established.json")));
        world.objects = world.objects.filter((o) => o.metadata?.name !== "experiments.argoproj.io");
        const results = await verify(config, world);
        expectFail(results, "crds.established", /rollouts\.argoproj\.io: Established=False \(NotAccepted: not all names are accepted\)/);
        expectFail(results, "crds.established", /experiments\.argoproj\.io: not found/);
    });

    it("crds.protected fails for a CRD a Helm release deletes, passes with resource-policy keep", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        const helm = { "meta.helm.sh/release-name": "argo-rollouts", "meta.helm.sh/release-namespace": "argo-rollouts" };
        replace(world, "CustomResourceDefinition", "rollouts.argoproj.io", (o) => ({
            ...o,
            metadata: { ...o.metadata, annotations: { ...o.metadata?.annotations, ...helm } },
        }));
        replace(world, "CustomResourceDefinition", "analysisruns.argoproj.io", (o) => ({
            ...o,
            metadata: { ...o.metadata, annotations: { ...helm, "helm.sh/resource-policy": "keep" } },
        }));
        const results = await verify(config, world);
        expectFail(results, "crds.protected", /rollouts\.argoproj\.io: belongs to Helm release argo-rollouts without helm.sh\/resource-policy: keep/);
        assert.doesNotMatch(found(results, "crds.protected"), /analysisruns/);
    });

    it("crds.protected fails for a CRD in a Terraform state, whatever its keep annotation", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        replace(world, "CustomResourceDefinition", "experiments.argoproj.io", (o) => ({
            ...o,
            metadata: {
                ...o.metadata,
                annotations: { "helm.sh/resource-policy": "keep" },
                managedFields: [
                    { manager: "Terraform", operation: "Apply" },
                    { manager: "kube-apiserver", operation: "Update" },
                ],
            },
        }));
        const results = await verify(config, world);
        expectFail(
            results,
            "crds.protected",
            /experiments\.argoproj\.io: managed by Terraform \(Apply\): a destroy of that Terraform state deletes it, and every Rollout/,
        );
        assert.doesNotMatch(found(results, "crds.protected"), /kube-apiserver/);
    });

    it("controller.available fails when replicas differ or the Deployment is unavailable", async () => {
        const config = verifyConfig({ controller: { replicas: 3, pdbMaxUnavailable: 1 } });
        const world = healthyCluster(verifyConfig());
        replace(world, "Deployment", "argo-rollouts", (o) => withStatus(o, fixture("controller-unavailable-status.json")));
        const results = await verify(config, world);
        expectFail(results, "controller.available", /spec\.replicas is 2, the stack configures 3/);
        expectFail(results, "controller.available", /Available=False \(MinimumReplicasUnavailable/);
    });

    it("controller.leader fails when the Lease is expired or held by a pod that is gone", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        replace(world, "Lease", "argo-rollouts-controller-lock", (o) => ({
            ...o,
            spec: { ...(o.spec as object), holderIdentity: "argo-rollouts-6b8c4d7f59-zz9qq_1f2e3d4c", renewTime: "2026-06-27T12:00:00.000000Z" },
        }));
        const results = await verify(config, world);
        expectFail(results, "controller.leader", /held by argo-rollouts-6b8c4d7f59-zz9qq_1f2e3d4c, which is not a running, ready pod/);
        expectFail(results, "controller.leader", /last renewed 2026-06-27T12:00:00\.000Z.*the leader is gone/);
    });

    it("controller.plugin fails when argo-rollouts-config pins another checksum", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        replace(world, "ConfigMap", "argo-rollouts-config", (o) => ({
            ...o,
            data: { trafficRouterPlugins: String((o.data as Record<string, string>).trafficRouterPlugins).replace(/a{64}/, "f".repeat(64)) },
        }));
        const results = await verify(config, world);
        expectFail(results, "controller.plugin", /argoproj-labs\/gatewayAPI is .* sha256 f{64}, the stack pins .* sha256 a{64}/);
    });

    describe("controller.read-ca", () => {
        const pem = (f: string) => fs.readFileSync(path.join(__dirname, "..", "fixtures", "tls", f), "utf8");
        // A spoke whose hub serves its read endpoint under a private CA; the GET is answered here.
        const spoke = (readCaBundle?: string) =>
            verifyConfig({
                cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
                mimir: { readEndpoint: "https://mimir.hub.example/prometheus", readCaBundle },
                spokes: undefined,
            });
        const answer = { httpGet: async () => ({ status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) }) };
        const POD = "argo-rollouts-7c9d5f8b64-p7m4n";
        const withAnnotation = (o: KubeObject, value: string | undefined): KubeObject => {
            const annotations = { ...o.metadata?.annotations };
            delete annotations[READ_CA_DIGEST_ANNOTATION];
            return { ...o, metadata: { ...o.metadata, annotations: value ? { ...annotations, [READ_CA_DIGEST_ANNOTATION]: value } : annotations } };
        };

        it("passes when the ConfigMap holds the stack's bundle and every pod started with it", async () => {
            const config = spoke(pem("ca.crt"));
            const results = await verify(config, healthyCluster(config), answer);
            expectPass(results, "controller.read-ca");
            assert.match(
                results.get("controller.read-ca")!.note!,
                new RegExp(`^mimir\\.readCaBundle sha256 ${caBundleDigest(config.mimir.readCaBundle!)}, 2 running pod\\(s\\)$`),
            );
        });

        it("fails for a pod that started with another bundle or none, and for a ConfigMap that holds another or is gone", async () => {
            const config = spoke(pem("ca.crt"));
            const want = caBundleDigest(config.mimir.readCaBundle!);
            const other = caBundleDigest(pem("other-ca.crt"));
            let world = healthyCluster(config);
            replace(world, "Pod", POD, (o) => withAnnotation(o, other));
            replace(world, "Pod", "argo-rollouts-7c9d5f8b64-x2k8q", (o) => withAnnotation(o, undefined));
            replace(world, "ConfigMap", READ_CA_CONFIGMAP, (o) => ({ ...o, data: { [READ_CA_KEY]: pem("other-ca.crt") } }));
            let results = await verify(config, world, answer);
            expectFail(
                results,
                "controller.read-ca",
                new RegExp(
                    `Pod argo-rollouts/${POD}: started with another CA bundle \\(sha256 ${other}\\), the stack's is sha256 ${want}: Go reads its roots once, at start, and the Deployment's rollout has not replaced it`,
                ),
            );
            expectFail(results, "controller.read-ca", /x2k8q: started with no CA bundle, the stack's is sha256/);
            expectFail(
                results,
                "controller.read-ca",
                new RegExp(
                    `ConfigMap argo-rollouts/${READ_CA_CONFIGMAP}: ca-bundle\\.crt is another bundle \\(sha256 ${other}\\); the stack's mimir\\.readCaBundle is sha256 ${want}`,
                ),
            );
            world = healthyCluster(config);
            world.objects = world.objects.filter((o) => !(o.kind === "ConfigMap" && o.metadata?.name === READ_CA_CONFIGMAP));
            results = await verify(config, world, answer);
            expectFail(results, "controller.read-ca", new RegExp(`ConfigMap argo-rollouts/${READ_CA_CONFIGMAP}: not found`));
            assert.strictEqual(results.get("controller.read-ca")!.findings.length, 1, found(results, "controller.read-ca"));
        });

        it("fails for a pod without SSL_CERT_DIR or the ConfigMap's mount: it reads only the image's roots", async () => {
            const config = spoke(pem("ca.crt"));
            const world = healthyCluster(config);
            replace(world, "Pod", POD, (o) => {
                const spec = o.spec as { containers: Record<string, unknown>[] };
                return {
                    ...o,
                    spec: {
                        ...spec,
                        volumes: [],
                        containers: spec.containers.map((c) => ({
                            ...c,
                            env: [{ name: "SSL_CERT_DIR", value: "/etc/argo-rollouts-addon/mimir-read-ca" }],
                            volumeMounts: [],
                        })),
                    },
                };
            });
            const results = await verify(config, world, answer);
            expectFail(
                results,
                "controller.read-ca",
                new RegExp(
                    `${POD}: argo-rollouts has SSL_CERT_DIR "/etc/argo-rollouts-addon/mimir-read-ca", not /etc/ssl/certs:/etc/pki/tls/certs:/etc/argo-rollouts-addon/mimir-read-ca`,
                ),
            );
            expectFail(
                results,
                "controller.read-ca",
                new RegExp(`${POD}: does not mount ConfigMap ${READ_CA_CONFIGMAP} at /etc/argo-rollouts-addon/mimir-read-ca`),
            );
            assert.doesNotMatch(found(results, "controller.read-ca"), /x2k8q/);
        });

        it("without a bundle, passes on public roots and fails for a pod still started with a removed bundle", async () => {
            const config = spoke();
            const world = healthyCluster(config);
            assert.ok(!world.objects.some((o) => o.metadata?.name === READ_CA_CONFIGMAP));
            expectPass(await verify(config, world, answer), "controller.read-ca");
            replace(world, "Pod", POD, (o) => withAnnotation(o, caBundleDigest(pem("ca.crt"))));
            const results = await verify(config, world, answer);
            expectFail(
                results,
                "controller.read-ca",
                new RegExp(`${POD}: started with a read-endpoint CA bundle \\(sha256 ${caBundleDigest(pem("ca.crt"))}\\) the stack no longer sets`),
            );
        });
    });

    it("controller.image fails when a pod runs another image, or lacks the plugin image in image mode", async () => {
        const config = verifyConfig();
        const world = healthyCluster(config);
        replace(world, "Pod", "argo-rollouts-7c9d5f8b64-p7m4n", (o) => ({
            ...o,
            spec: { ...(o.spec as object), containers: [{ name: "argo-rollouts", image: "quay.io/argoproj/argo-rollouts:v1.8.3" }] },
        }));
        const results = await verify(config, world);
        expectFail(
            results,
            "controller.image",
            /Pod argo-rollouts\/argo-rollouts-7c9d5f8b64-p7m4n: runs quay\.io\/argoproj\/argo-rollouts:v1\.8\.3, the stack pins registry\.platform\.test\/mirror\/argoproj\/argo-rollouts:v1\.9\.0/,
        );
        const fixture = fixtureConfig("hub");
        const imageWorld = healthyCluster(fixture);
        replace(imageWorld, "Pod", "argo-rollouts-7c9d5f8b64-x2k8q", (o) => ({ ...o, spec: { ...(o.spec as object), initContainers: [] } }));
        expectFail(
            await verify(fixture, imageWorld),
            "controller.image",
            /x2k8q: has no init container with the pinned plugin image registry\.platform\.test\/mirror\/argoproj-labs\/rollouts-plugin-trafficrouter-gatewayapi@sha256:7e57/,
        );
    });
});
