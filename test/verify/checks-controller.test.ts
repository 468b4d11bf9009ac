import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import type { KubeObject } from "../../tools/verify/cluster";
import { caBundleDigest } from "../../components/gateway/caBundle";
import { READ_CA_CONFIGMAP, READ_CA_DIGEST_ANNOTATION, READ_CA_KEY } from "../../components/rollouts/trust";
import { fixture, healthyCluster, patch, fixtureConfig, verifyConfig, verifySpoke, withStatus } from "./world";
import { expectFail, expectPass, found, useFakeCluster } from "./run";

describe("verify: CRDs and controller", () => {
    const { verify } = useFakeCluster();
    const annotate =
        (annotations: Record<string, string>, more: Partial<NonNullable<KubeObject["metadata"]>> = {}) =>
        (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, annotations, ...more } });
    const helm = { "meta.helm.sh/release-name": "argo-rollouts", "meta.helm.sh/release-namespace": "argo-rollouts" };

    it("fails each check for what breaks it, and a CRD kept from Helm's uninstall or a stranger's manager passes", async () => {
        const config = verifyConfig({ controller: { replicas: 3, pdbMaxUnavailable: 1 } });
        const world = healthyCluster(verifyConfig());
        patch(world, "CustomResourceDefinition", "rollouts.argoproj.io", (o) => annotate(helm)(withStatus(o, fixture("crd-not-established.json"))));
        patch(world, "CustomResourceDefinition", "analysisruns.argoproj.io", annotate({ ...helm, "helm.sh/resource-policy": "keep" }));
        const managers = [
            { manager: "Terraform", operation: "Apply" },
            { manager: "kube-apiserver", operation: "Update" },
        ];
        patch(world, "CustomResourceDefinition", "analysistemplates.argoproj.io", annotate({ "helm.sh/resource-policy": "keep" }, { managedFields: managers }));
        world.objects = world.objects.filter((o) => o.metadata?.name !== "experiments.argoproj.io");
        patch(world, "Deployment", "argo-rollouts", (o) => withStatus(o, fixture("controller-unavailable-status.json")));
        patch(world, "Lease", "argo-rollouts-controller-lock", (o) => ({
            ...o,
            spec: { ...(o.spec as object), holderIdentity: "argo-rollouts-6b8c4d7f59-zz9qq_1f2e3d4c", renewTime: "2026-06-27T12:00:00.000000Z" },
        }));
        patch(world, "ConfigMap", "argo-rollouts-config", (o) => ({
            ...o,
            data: { trafficRouterPlugins: String((o.data as Record<string, string>).trafficRouterPlugins).replace(/a{64}/, "f".repeat(64)) },
        }));
        patch(world, "Pod", "argo-rollouts-7c9d5f8b64-p7m4n", (o) => ({
            ...o,
            spec: { ...(o.spec as object), containers: [{ name: "argo-rollouts", image: "quay.io/argoproj/argo-rollouts:v1.8.3" }] },
        }));
        const results = await verify(config, world);
        const cases: [string, RegExp][] = [
            ["crds.established", /rollouts\.argoproj\.io: Established=False \(NotAccepted: not all names are accepted\)/],
            ["crds.established", /experiments\.argoproj\.io: not found/],
            ["crds.protected", /rollouts\.argoproj\.io: belongs to Helm release argo-rollouts without helm.sh\/resource-policy: keep/],
            [
                "crds.protected",
                /analysistemplates\.argoproj\.io: managed by Terraform \(Apply\): a destroy of that Terraform state deletes it, and every Rollout/,
            ],
            ["controller.available", /spec\.replicas is 2, the stack configures 3/],
            ["controller.available", /Available=False \(MinimumReplicasUnavailable/],
            ["controller.leader", /held by argo-rollouts-6b8c4d7f59-zz9qq_1f2e3d4c, which is not a running, ready pod/],
            ["controller.leader", /last renewed 2026-06-27T12:00:00\.000Z.*the leader is gone/],
            ["controller.plugin", /argoproj-labs\/gatewayAPI is .* sha256 f{64}, the stack pins .* sha256 a{64}/],
            [
                "controller.image",
                /p7m4n: runs quay\.io\/argoproj\/argo-rollouts:v1\.8\.3, the stack pins registry\.platform\.test\/mirror\/argoproj\/argo-rollouts:v1\.9\.0/,
            ],
        ];
        for (const [id, pattern] of cases) {
            expectFail(results, id, pattern);
        }
        assert.doesNotMatch(found(results, "crds.protected"), /analysisruns|kube-apiserver/);
        const hub = fixtureConfig("hub");
        const imageWorld = healthyCluster(hub);
        patch(imageWorld, "Pod", "argo-rollouts-7c9d5f8b64-x2k8q", (o) => ({ ...o, spec: { ...(o.spec as object), initContainers: [] } }));
        expectFail(
            await verify(hub, imageWorld),
            "controller.image",
            /x2k8q: has no init container with the pinned plugin image registry\.platform\.test\/mirror\/argoproj-labs\/rollouts-plugin-trafficrouter-gatewayapi@sha256:7e57/,
        );
    });

    describe("controller.read-ca", () => {
        const pem = (f: string) => fs.readFileSync(path.join(__dirname, "..", "fixtures", "tls", f), "utf8");
        const spoke = (readCaBundle?: string) => verifySpoke({ mimir: { readCaBundle } });
        const answer = { httpGet: async () => ({ status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) }) };
        const POD = "argo-rollouts-7c9d5f8b64-p7m4n";
        const withDigest = (value: string | undefined) => (o: KubeObject) => {
            const { [READ_CA_DIGEST_ANNOTATION]: _, ...rest } = o.metadata?.annotations ?? {};
            return annotate(value ? { ...rest, [READ_CA_DIGEST_ANNOTATION]: value } : rest)(o);
        };

        it("passes when the ConfigMap holds the stack's bundle and every pod started with it, and fails for whatever differs", async () => {
            const config = spoke(pem("ca.crt"));
            const want = caBundleDigest(config.mimir.readCaBundle!);
            const other = caBundleDigest(pem("other-ca.crt"));
            let world = healthyCluster(config);
            let results = await verify(config, world, answer);
            expectPass(results, "controller.read-ca");
            assert.strictEqual(results.get("controller.read-ca")!.note, `mimir.readCaBundle sha256 ${want}, 2 running pod(s)`);
            patch(world, "Pod", POD, withDigest(other));
            patch(world, "Pod", "argo-rollouts-7c9d5f8b64-x2k8q", (o) => {
                const spec = o.spec as { containers: Record<string, unknown>[] };
                const containers = spec.containers.map((c) => ({
                    ...c,
                    env: [{ name: "SSL_CERT_DIR", value: "/etc/argo-rollouts-addon/mimir-read-ca" }],
                    volumeMounts: [],
                }));
                return withDigest(undefined)({ ...o, spec: { ...spec, volumes: [], containers } });
            });
            patch(world, "ConfigMap", READ_CA_CONFIGMAP, (o) => ({ ...o, data: { [READ_CA_KEY]: pem("other-ca.crt") } }));
            results = await verify(config, world, answer);
            const cases = [
                `Pod argo-rollouts/${POD}: started with another CA bundle \\(sha256 ${other}\\), the stack's is sha256 ${want}: Go reads its roots once, at start`,
                "x2k8q: started with no CA bundle, the stack's is sha256",
                'x2k8q: argo-rollouts has SSL_CERT_DIR "/etc/argo-rollouts-addon/mimir-read-ca", not /etc/ssl/certs:/etc/pki/tls/certs:/etc/argo-rollouts-addon/mimir-read-ca',
                `x2k8q: does not mount ConfigMap ${READ_CA_CONFIGMAP} at /etc/argo-rollouts-addon/mimir-read-ca`,
                `ConfigMap argo-rollouts/${READ_CA_CONFIGMAP}: ca-bundle\\.crt is another bundle \\(sha256 ${other}\\); the stack's mimir\\.readCaBundle is sha256 ${want}`,
            ];
            for (const pattern of cases) {
                expectFail(results, "controller.read-ca", new RegExp(pattern));
            }
            world = healthyCluster(config);
            world.objects = world.objects.filter((o) => !(o.kind === "ConfigMap" && o.metadata?.name === READ_CA_CONFIGMAP));
            results = await verify(config, world, answer);
            expectFail(results, "controller.read-ca", new RegExp(`ConfigMap argo-rollouts/${READ_CA_CONFIGMAP}: not found`));
            assert.strictEqual(results.get("controller.read-ca")!.findings.length, 1, found(results, "controller.read-ca"));
        });

        it("without a bundle, passes on public roots and fails for a pod still started with a removed bundle", async () => {
            const config = spoke();
            const world = healthyCluster(config);
            expectPass(await verify(config, world, answer), "controller.read-ca");
            patch(world, "Pod", POD, withDigest(caBundleDigest(pem("ca.crt"))));
            expectFail(
                await verify(config, world, answer),
                "controller.read-ca",
                new RegExp(`${POD}: started with a read-endpoint CA bundle \\(sha256 ${caBundleDigest(pem("ca.crt"))}\\) the stack no longer sets`),
            );
        });
    });
});
