/** The CRDs and the controller (ADR-056 D7): served, not deletable as a side effect, one leader, the pinned plugin, image and read CA. */
import * as YAML from "yaml";
import { yamlErrorText } from "../../../components/config/yamlErrors";
import { caBundleDigest } from "../../../components/gateway/caBundle";
import { TrafficRouterPlugin, pluginImage } from "../../../components/rollouts/plugin";
import { READ_CA_CONFIGMAP, READ_CA_DIGEST_ANNOTATION, READ_CA_KEY, controllerTrust } from "../../../components/rollouts/trust";
import { PLUGINS_DIGEST_ANNOTATION, controllerValues } from "../../../components/rollouts/values";
import type { KubeObject } from "../cluster";
import { CheckGroup, asArray, asRecord, condition, conditions, field, nameOf, notTrue, ref } from "../context";
import { DOCS, Finding, checks } from "../report";
import { ROLLOUTS_CRDS, RELEASE_NAME } from "../../../components/argoRollouts";

const C = checks(DOCS.crds, {
    "crds.established": "the five Argo Rollouts CRDs are established",
    "crds.protected": "no CRD is deleted with an owner or a Helm release",
    "controller.available": "the controller Deployment is available with controller.replicas replicas",
    "controller.leader": "one running controller pod holds the leader Lease",
    "controller.plugin": "argo-rollouts-config lists the pinned Gateway API plugin and the pods run it",
    "controller.read-ca": "every controller pod trusts the stack's CA bundle for the hub's read endpoint, and no other",
    "controller.image": "every controller pod runs the pinned image",
});

/** The leader-election Lease (argo-rollouts v1.9.0 controller/controller.go `defaultLeaderElectionLeaseLockName`). */
export const LEADER_LEASE = "argo-rollouts-controller-lock";
/** The chart's ConfigMap the controller reads its plugins from (chart >= 2.38). */
export const ROLLOUTS_CONFIGMAP = "argo-rollouts-config";
export const CONTROLLER_CONTAINER = "argo-rollouts";
/** Seconds of clock difference between this machine and the API server tolerated on a Lease. */
const CLOCK_SKEW_SECONDS = 30;

export function fieldManagers(live: KubeObject): string[] {
    return [...new Set((live.metadata?.managedFields ?? []).map((e) => `${e.manager ?? "?"} (${e.operation ?? "?"})`))];
}

export const isReadyPod = (pod: KubeObject): boolean => field(pod, "status", "phase") === "Running" && condition(conditions(pod), "Ready")?.status === "True";

/** `matchLabels` as a label-selector query (equality only, as the chart sets). */
export const selectorQuery = (matchLabels: Record<string, string>): string =>
    Object.entries(matchLabels)
        .map(([k, v]) => `${k}=${v}`)
        .join(",");

export function established(crd: KubeObject | undefined, name: string): Finding[] {
    const object = ref("CustomResourceDefinition", undefined, name);
    if (!crd) return [{ object, found: "not found: the rollouts stage installs it; run pulumi up" }];
    const deleting = crd.metadata?.deletionTimestamp ? [`being deleted since ${crd.metadata.deletionTimestamp}: every custom resource of it goes with it`] : [];
    return [...notTrue(crd, ["Established", "NamesAccepted"]), ...deleting].map((found) => ({ object, found }));
}

/** A CRD's deletion as a side effect: an owner, a Helm release without `resource-policy: keep`, a Terraform manager (protect is in the state). */
export function protectedFromDeletion(crd: KubeObject | undefined, name: string): Finding[] {
    if (!crd) return [];
    const annotations = crd.metadata?.annotations ?? {};
    const release = annotations["meta.helm.sh/release-name"];
    const helm = (release || crd.metadata?.labels?.["app.kubernetes.io/managed-by"] === "Helm") && annotations["helm.sh/resource-policy"] !== "keep";
    const found = [
        ...(crd.metadata?.ownerReferences ?? []).map(
            (o) => `owned by ${o.kind ?? "?"} ${o.name ?? "?"}: the garbage collector deletes it, and every Rollout, with its owner`,
        ),
        ...(helm ? [`belongs to Helm release ${release ?? "(unnamed)"} without helm.sh/resource-policy: keep: uninstalling that release deletes it`] : []),
        // Terraform's kubernetes_manifest applies as field manager "Terraform" unless set (terraform-provider-kubernetes).
        ...fieldManagers(crd)
            .filter((m) => /terraform/i.test(m))
            .map((m) => `managed by ${m}: a destroy of that Terraform state deletes it, and every Rollout, whatever its annotations say`),
        ...(crd.metadata?.deletionTimestamp ? [`being deleted since ${crd.metadata.deletionTimestamp}`] : []),
    ];
    return found.map((f) => ({ object: ref("CustomResourceDefinition", undefined, name), found: f }));
}

type Container = { name?: string; image?: string; env?: { name?: string; value?: string }[]; volumeMounts?: { name?: string; mountPath?: string }[] };
const controllerContainer = (p: KubeObject) => asArray<Container>(field(p, "spec", "containers")).find((c) => c.name === CONTROLLER_CONTAINER);

/** Whether the ConfigMap holds `mimir.readCaBundle` and every running pod started with it (Go reads its roots once per process). */
export function readCaFindings(bundle: string | undefined, ns: string, configMap: KubeObject | undefined, running: readonly KubeObject[]): Finding[] {
    const trust = controllerTrust(bundle);
    const pod = (p: KubeObject, found: string) => ({ object: ref("Pod", ns, nameOf(p)), found });
    const digestOf = (p: KubeObject) => p.metadata?.annotations?.[READ_CA_DIGEST_ANNOTATION];
    if (!trust) {
        return running
            .filter(digestOf)
            .map((p) => pod(p, `started with a read-endpoint CA bundle (sha256 ${digestOf(p)}) the stack no longer sets: it trusts that CA until it restarts`));
    }
    const out: Finding[] = [];
    const cmRef = ref("ConfigMap", ns, READ_CA_CONFIGMAP);
    const wantDigest = trust.podAnnotations[READ_CA_DIGEST_ANNOTATION];
    const wantDir = trust.extraEnv[0].value;
    const have = asRecord(configMap?.data)[READ_CA_KEY];
    if (!configMap) {
        out.push({
            object: cmRef,
            found: "not found: the rollouts stage declares it from mimir.readCaBundle; a new pod would not start (its volume is missing)",
        });
    } else if (have !== trust.configMapData[READ_CA_KEY]) {
        const what = typeof have === "string" ? `another bundle (sha256 ${caBundleDigest(have)})` : "missing";
        out.push({ object: cmRef, found: `${READ_CA_KEY} is ${what}; the stack's mimir.readCaBundle is sha256 ${wantDigest}` });
    }
    const mountPath = String(asRecord(trust.volumeMounts[0]).mountPath);
    for (const p of running) {
        const digest = digestOf(p);
        if (digest !== wantDigest) {
            const what = digest ? `another CA bundle (sha256 ${digest})` : "no CA bundle";
            out.push(
                pod(
                    p,
                    `started with ${what}, the stack's is sha256 ${wantDigest}: Go reads its roots once, at start, and the Deployment's rollout has not replaced it`,
                ),
            );
        }
        const container = controllerContainer(p);
        const certDir = container?.env?.find((e) => e.name === "SSL_CERT_DIR")?.value;
        if (certDir !== wantDir) {
            const found = `${CONTROLLER_CONTAINER} has SSL_CERT_DIR ${JSON.stringify(certDir ?? null)}, not ${wantDir}: it does not read the bundle, or no longer reads the image's roots`;
            out.push(pod(p, found));
        }
        const mount = container?.volumeMounts?.find((m) => m.mountPath === mountPath);
        const volume = asArray<{ name?: string; configMap?: { name?: string } }>(field(p, "spec", "volumes")).find((v) => v.name === mount?.name);
        if (volume?.configMap?.name !== READ_CA_CONFIGMAP) out.push(pod(p, `does not mount ConfigMap ${READ_CA_CONFIGMAP} at ${mountPath}`));
    }
    return out;
}

/** The image reference the chart renders for the controller from the program's values. */
export function expectedControllerImage(values: Record<string, unknown>): string {
    const image = asRecord(field(values, "controller", "image"));
    return `${image.registry}/${image.repository}:${image.tag}`;
}

/** Why the controller Deployment is not available at `wanted` replicas. */
function availability(deployment: KubeObject | undefined, wanted: number): string[] {
    if (!deployment) return ["not found: the rollouts stage installs it with the argo-rollouts chart"];
    const replicas = field(deployment, "spec", "replicas");
    const generation = deployment.metadata?.generation ?? 0;
    const observed = Number(field(deployment, "status", "observedGeneration") ?? 0);
    return [
        ...(replicas !== wanted ? [`spec.replicas is ${String(replicas)}, the stack configures ${wanted} (controller.replicas)`] : []),
        ...(observed < generation ? [`the Deployment controller has not observed generation ${generation} yet (observed ${observed})`] : []),
        ...notTrue(deployment, ["Available"]),
        ...["availableReplicas", "updatedReplicas", "readyReplicas"]
            .map((counter) => [counter, Number(field(deployment, "status", counter) ?? 0)] as const)
            .filter(([, n]) => n < wanted)
            .map(([counter, n]) => `status.${counter} is ${n} of ${wanted}`),
    ];
}

/** Why no live leader holds the Lease (client-go tools/leaderelection): no running holder, or no renewal within its duration. */
function leadership(lease: KubeObject | undefined, running: readonly KubeObject[], deployment: string, now: Date): string[] {
    if (!lease) return ["not found: no controller has ever led (is --leader-elect on and the controller running?)"];
    const holder = String(field(lease, "spec", "holderIdentity") ?? "");
    const renewed = Date.parse(String(field(lease, "spec", "renewTime") ?? ""));
    const duration = Number(field(lease, "spec", "leaseDurationSeconds") ?? 15);
    const out = !holder
        ? ["no holder: no controller is leading"]
        : running.some((p) => nameOf(p) === holder.split("_")[0])
          ? []
          : [`held by ${holder}, which is not a running, ready pod of ${deployment}`];
    if (Number.isNaN(renewed)) {
        out.push("no renewTime: the holder never renewed it");
    } else if (renewed + (duration + CLOCK_SKEW_SECONDS) * 1000 < now.getTime()) {
        out.push(`last renewed ${new Date(renewed).toISOString()}, more than ${duration} s ago: the leader is gone`);
    }
    return out;
}

/** Why argo-rollouts-config does not list the pinned plugins (the chart renders them as YAML under `trafficRouterPlugins`). */
function pluginList(configMap: KubeObject | undefined, expected: readonly TrafficRouterPlugin[]): string[] {
    if (!configMap) return ["not found: the controller starts without plugins and no canary can move traffic"];
    let live: TrafficRouterPlugin[] = [];
    try {
        live = asArray<TrafficRouterPlugin>(YAML.parse(asRecord(configMap.data).trafficRouterPlugins ?? "[]"));
    } catch (e) {
        return [`trafficRouterPlugins is not YAML (${yamlErrorText(e)})`];
    }
    return expected.flatMap((want) => {
        const have = live.find((p) => p.name === want.name);
        if (!have) return [`trafficRouterPlugins does not list ${want.name} (it lists: ${live.map((p) => p.name).join(", ") || "nothing"})`];
        const same = have.location === want.location && (have.sha256 ?? "") === (want.sha256 ?? "");
        return same ? [] : [`${want.name} is ${have.location} sha256 ${have.sha256 ?? "-"}, the stack pins ${want.location} sha256 ${want.sha256 ?? "-"}`];
    });
}

export const crdAndControllerChecks: CheckGroup = {
    ...C,
    run: async ({ config, cluster, options }) => {
        const ns = config.controller.namespace;
        const values = controllerValues(config);
        const crds = await Promise.all(
            ROLLOUTS_CRDS.map(async (c) => ({ name: c.name, crd: await cluster.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${c.name}`) })),
        );
        const deploymentRef = ref("Deployment", ns, RELEASE_NAME);
        const deployment = await cluster.get(`/apis/apps/v1/namespaces/${ns}/deployments/${RELEASE_NAME}`);
        const matchLabels = asRecord(field(deployment, "spec", "selector", "matchLabels"));
        const pods =
            deployment && Object.keys(matchLabels).length > 0 ? ((await cluster.list(`/api/v1/namespaces/${ns}/pods`, selectorQuery(matchLabels))) ?? []) : [];
        const running = pods.filter((p) => isReadyPod(p) && !p.metadata?.deletionTimestamp);
        const lease = await cluster.get(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${LEADER_LEASE}`);
        const at = (object: string) => (found: string) => ({ object, found });

        // The controller loads its plugins only at start: every running pod carries the digest of the list it started with.
        const wantDigest = asRecord(field(values, "controller", "podAnnotations"))[PLUGINS_DIGEST_ANNOTATION];
        const plugin = [
            ...pluginList(
                await cluster.get(`/api/v1/namespaces/${ns}/configmaps/${ROLLOUTS_CONFIGMAP}`),
                asArray<TrafficRouterPlugin>(field(values, "controller", "trafficRouterPlugins")),
            ).map(at(ref("ConfigMap", ns, ROLLOUTS_CONFIGMAP))),
            ...running
                .filter((p) => wantDigest && p.metadata?.annotations?.[PLUGINS_DIGEST_ANNOTATION] !== wantDigest)
                .map((p) => ({
                    object: ref("Pod", ns, nameOf(p)),
                    found: "started with another plugin list (annotation differs): the controller loads plugins only at start",
                })),
        ];

        const bundle = config.mimir.readCaBundle;
        const caMap = bundle ? await cluster.get(`/api/v1/namespaces/${ns}/configmaps/${READ_CA_CONFIGMAP}`) : undefined;
        const image = expectedControllerImage(values);
        const initImage = pluginImage(config.plugin, config.imageRegistry);
        const images: Finding[] =
            deployment && pods.length === 0 ? [{ object: deploymentRef, found: `no pods match its selector ${selectorQuery(matchLabels)}` }] : [];
        for (const p of pods) {
            const has = controllerContainer(p)?.image;
            if (has !== image) {
                images.push({ object: ref("Pod", ns, nameOf(p)), found: `runs ${has ?? "no argo-rollouts container"}, the stack pins ${image}` });
            }
            if (initImage && !asArray<{ image?: string }>(field(p, "spec", "initContainers")).some((c) => c.image === initImage)) {
                images.push({ object: ref("Pod", ns, nameOf(p)), found: `has no init container with the pinned plugin image ${initImage}` });
            }
        }
        return [
            C.done(
                "crds.established",
                crds.flatMap((c) => established(c.crd, c.name)),
            ),
            C.done(
                "crds.protected",
                crds.flatMap((c) => protectedFromDeletion(c.crd, c.name)),
                "Pulumi's protect lives in the stack's state; see docs/operations/verify.md#verify-crds-and-controller for the state check",
            ),
            C.done("controller.available", availability(deployment, config.controller.replicas).map(at(deploymentRef))),
            C.done(
                "controller.leader",
                leadership(lease, running, deploymentRef, options.now()).map(at(ref("Lease", ns, LEADER_LEASE))),
                lease ? `leader ${String(field(lease, "spec", "holderIdentity") ?? "").split("_")[0]}` : undefined,
            ),
            C.done("controller.plugin", plugin),
            C.done(
                "controller.read-ca",
                readCaFindings(bundle, ns, caMap, running),
                bundle
                    ? `mimir.readCaBundle sha256 ${caBundleDigest(bundle)}, ${running.length} running pod(s)`
                    : "no mimir.readCaBundle: the image's public roots only",
            ),
            C.done("controller.image", images, image),
        ];
    },
};
