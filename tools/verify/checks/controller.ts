/**
 * The CRDs and the controller (ADR-056 D7): CRDs served and not deletable as a side effect, the
 * controller Deployment available at the configured size with one leader, the plugin listed in
 * `argo-rollouts-config`, and the controller pods on the pinned image and plugin list and, on a
 * spoke with a private CA for the hub's read endpoint, started with the stack's CA bundle.
 */
import * as YAML from "yaml";
import { yamlErrorText } from "../../../components/config/yamlErrors";
import { caBundleDigest } from "../../../components/gateway/caBundle";
import { TrafficRouterPlugin, pluginImage } from "../../../components/rollouts/plugin";
import { READ_CA_CONFIGMAP, READ_CA_DIGEST_ANNOTATION, READ_CA_KEY, controllerTrust } from "../../../components/rollouts/trust";
import { PLUGINS_DIGEST_ANNOTATION, controllerValues } from "../../../components/rollouts/values";
import { terraformManagers } from "../../adopt/inventory";
import type { KubeObject } from "../cluster";
import { CheckGroup, asArray, asRecord, condition, conditions, describeCondition, field, nameOf, ref } from "../context";
import { Finding, DOCS, outcome } from "../report";
import { ROLLOUTS_CRDS, RELEASE_NAME } from "../../../components/argoRollouts";

export const crdPath = (name: string): string => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;

/**
 * The controller's leader-election Lease: argo-rollouts v1.9.0 controller/controller.go
 * (`defaultLeaderElectionLeaseLockName`, in the namespace from utils/defaults `Namespace()`, i.e.
 * the pod's). The chart passes `--leader-elect` whenever replicas > 1 (templates/controller/
 * deployment.yaml), which the config always has.
 */
export const LEADER_LEASE = "argo-rollouts-controller-lock";
/** The chart's ConfigMap the controller reads its plugins from (chart >= 2.38, templates/controller/configmap.yaml). */
export const ROLLOUTS_CONFIGMAP = "argo-rollouts-config";
/** The controller's container name in the chart's Deployment. */
export const CONTROLLER_CONTAINER = "argo-rollouts";
/** Seconds of clock difference between this machine and the API server tolerated on a Lease. */
const CLOCK_SKEW_SECONDS = 30;

/** Helm's ownership marks and its opt-out (helm pkg/action: resource-policy "keep" survives uninstall). */
const HELM_RELEASE_ANNOTATION = "meta.helm.sh/release-name";
const HELM_RESOURCE_POLICY = "helm.sh/resource-policy";

export function isReadyPod(pod: KubeObject): boolean {
    return field(pod, "status", "phase") === "Running" && condition(conditions(pod), "Ready")?.status === "True";
}

/** `matchLabels` of a selector as a label-selector query string (equality only, as the chart sets). */
export function selectorQuery(matchLabels: Record<string, string>): string {
    return Object.entries(matchLabels)
        .map(([k, v]) => `${k}=${v}`)
        .join(",");
}

export function established(crd: KubeObject | undefined, name: string): Finding[] {
    const object = ref("CustomResourceDefinition", undefined, name);
    if (!crd) {
        return [{ object, found: "not found: the rollouts stage installs it; run pulumi up" }];
    }
    const out: Finding[] = [];
    // apiextensions.k8s.io/v1 CustomResourceDefinitionConditionType: Established (the API server
    // serves the resource) and NamesAccepted (its names do not clash).
    for (const type of ["Established", "NamesAccepted"]) {
        const c = condition(conditions(crd), type);
        if (c?.status !== "True") {
            out.push({ object, found: describeCondition(c, type) });
        }
    }
    if (crd.metadata?.deletionTimestamp) {
        out.push({ object, found: `being deleted since ${crd.metadata.deletionTimestamp}: every custom resource of it goes with it` });
    }
    return out;
}

/**
 * What verify can see of "protected from deletion" on the live object: Pulumi's protect and
 * retainOnDelete live in the stack's state, not in the cluster. In the cluster a CRD is deleted
 * with its owner by the garbage collector (ownerReferences), by `helm uninstall` of a release
 * that owns it unless it carries `helm.sh/resource-policy: keep`, and by a destroy of a Terraform
 * state that holds it (seen as a Terraform field manager), whatever its annotations.
 */
export function protectedFromDeletion(crd: KubeObject | undefined, name: string): Finding[] {
    if (!crd) {
        return [];
    }
    const object = ref("CustomResourceDefinition", undefined, name);
    const out: Finding[] = [];
    for (const owner of crd.metadata?.ownerReferences ?? []) {
        out.push({ object, found: `owned by ${owner.kind ?? "?"} ${owner.name ?? "?"}: the garbage collector deletes it, and every Rollout, with its owner` });
    }
    const annotations = crd.metadata?.annotations ?? {};
    const labels = crd.metadata?.labels ?? {};
    const release = annotations[HELM_RELEASE_ANNOTATION];
    if ((release || labels["app.kubernetes.io/managed-by"] === "Helm") && annotations[HELM_RESOURCE_POLICY] !== "keep") {
        out.push({
            object,
            found: `belongs to Helm release ${release ?? "(unnamed)"} without ${HELM_RESOURCE_POLICY}: keep: uninstalling that release deletes it`,
        });
    }
    for (const m of terraformManagers(crd)) {
        out.push({ object, found: `managed by ${m}: a destroy of that Terraform state deletes it, and every Rollout, whatever its annotations say` });
    }
    if (crd.metadata?.deletionTimestamp) {
        out.push({ object, found: `being deleted since ${crd.metadata.deletionTimestamp}` });
    }
    return out;
}

/**
 * Whether the controller trusts what the stack says for the hub's read endpoint (`mimir.readCaBundle`,
 * components/rollouts/trust.ts): the ConfigMap holds the stack's bundle and every running pod
 * started with it, that is with its digest, `SSL_CERT_DIR` and the ConfigMap mounted. Go reads its
 * roots once per process, so a pod that started with another bundle, or none, trusts what it
 * started with until it restarts. Without a bundle, no running pod may still trust one.
 */
export function readCaFindings(bundle: string | undefined, ns: string, configMap: KubeObject | undefined, running: readonly KubeObject[]): Finding[] {
    const trust = controllerTrust(bundle);
    const out: Finding[] = [];
    const containerOf = (p: KubeObject) =>
        asArray<{ name?: string; env?: { name?: string; value?: string }[]; volumeMounts?: { name?: string; mountPath?: string }[] }>(
            field(p, "spec", "containers"),
        ).find((c) => c.name === CONTROLLER_CONTAINER);
    const certDir = (p: KubeObject) => containerOf(p)?.env?.find((e) => e.name === "SSL_CERT_DIR")?.value;
    if (!trust) {
        for (const p of running) {
            const digest = p.metadata?.annotations?.[READ_CA_DIGEST_ANNOTATION];
            if (digest) {
                out.push({
                    object: ref("Pod", ns, nameOf(p)),
                    found: `started with a read-endpoint CA bundle (sha256 ${digest}) the stack no longer sets: it trusts that CA until it restarts`,
                });
            }
        }
        return out;
    }
    const cmRef = ref("ConfigMap", ns, READ_CA_CONFIGMAP);
    const want = trust.configMapData[READ_CA_KEY];
    const wantDigest = trust.podAnnotations[READ_CA_DIGEST_ANNOTATION];
    const wantDir = trust.extraEnv[0].value;
    if (!configMap) {
        out.push({
            object: cmRef,
            found: "not found: the rollouts stage declares it from mimir.readCaBundle; a new pod would not start (its volume is missing)",
        });
    } else {
        const have = asRecord(configMap.data)[READ_CA_KEY];
        if (have !== want) {
            out.push({
                object: cmRef,
                found: `${READ_CA_KEY} is ${typeof have === "string" ? `another bundle (sha256 ${caBundleDigest(have)})` : "missing"}; the stack's mimir.readCaBundle is sha256 ${wantDigest}`,
            });
        }
    }
    for (const p of running) {
        const podRef = ref("Pod", ns, nameOf(p));
        const digest = p.metadata?.annotations?.[READ_CA_DIGEST_ANNOTATION];
        if (digest !== wantDigest) {
            out.push({
                object: podRef,
                found: `started with ${digest ? `another CA bundle (sha256 ${digest})` : "no CA bundle"}, the stack's is sha256 ${wantDigest}: Go reads its roots once, at start, and the Deployment's rollout has not replaced it`,
            });
        }
        if (certDir(p) !== wantDir) {
            out.push({
                object: podRef,
                found: `${CONTROLLER_CONTAINER} has SSL_CERT_DIR ${JSON.stringify(certDir(p) ?? null)}, not ${wantDir}: it does not read the bundle, or no longer reads the image's roots`,
            });
        }
        const mountPath = String(asRecord(trust.volumeMounts[0]).mountPath);
        const mount = containerOf(p)?.volumeMounts?.find((m) => m.mountPath === mountPath);
        const volume = asArray<{ name?: string; configMap?: { name?: string } }>(field(p, "spec", "volumes")).find((v) => v.name === mount?.name);
        if (volume?.configMap?.name !== READ_CA_CONFIGMAP) {
            out.push({ object: podRef, found: `does not mount ConfigMap ${READ_CA_CONFIGMAP} at ${mountPath}` });
        }
    }
    return out;
}

/** The image reference the chart renders for the controller from the program's values. */
export function expectedControllerImage(values: Record<string, unknown>): string {
    const image = asRecord(field(values, "controller", "image"));
    return `${image.registry}/${image.repository}:${image.tag}`;
}

export const crdAndControllerChecks: CheckGroup = async ({ config, cluster, options }) => {
    const ns = config.controller.namespace;
    const values = controllerValues(config);

    const crds = await Promise.all(ROLLOUTS_CRDS.map(async (c) => ({ name: c.name, crd: await cluster.get(crdPath(c.name)) })));
    const results = [
        outcome(
            "crds.established",
            `the ${crds.length} Argo Rollouts CRDs are established`,
            DOCS.crds,
            crds.flatMap((c) => established(c.crd, c.name)),
        ),
        outcome(
            "crds.protected",
            "no CRD is deleted with an owner or a Helm release",
            DOCS.crds,
            crds.flatMap((c) => protectedFromDeletion(c.crd, c.name)),
            "Pulumi's protect lives in the stack's state; see docs/operations/verify.md#verify-crds-and-controller for the state check",
        ),
    ];

    const deploymentRef = ref("Deployment", ns, RELEASE_NAME);
    const deployment = await cluster.get(`/apis/apps/v1/namespaces/${ns}/deployments/${RELEASE_NAME}`);
    const wanted = config.controller.replicas;
    const available: Finding[] = [];
    if (!deployment) {
        available.push({ object: deploymentRef, found: "not found: the rollouts stage installs it with the argo-rollouts chart" });
    } else {
        const replicas = field(deployment, "spec", "replicas");
        if (replicas !== wanted) {
            available.push({ object: deploymentRef, found: `spec.replicas is ${String(replicas)}, the stack configures ${wanted} (controller.replicas)` });
        }
        const generation = deployment.metadata?.generation ?? 0;
        const observed = Number(field(deployment, "status", "observedGeneration") ?? 0);
        if (observed < generation) {
            available.push({ object: deploymentRef, found: `the Deployment controller has not observed generation ${generation} yet (observed ${observed})` });
        }
        const cond = condition(conditions(deployment), "Available");
        if (cond?.status !== "True") {
            available.push({ object: deploymentRef, found: describeCondition(cond, "Available") });
        }
        for (const counter of ["availableReplicas", "updatedReplicas", "readyReplicas"]) {
            const n = Number(field(deployment, "status", counter) ?? 0);
            if (n < wanted) {
                available.push({ object: deploymentRef, found: `status.${counter} is ${n} of ${wanted}` });
            }
        }
    }
    results.push(outcome("controller.available", `the controller Deployment is available with ${wanted} replicas`, DOCS.crds, available));

    const matchLabels = asRecord(field(deployment, "spec", "selector", "matchLabels"));
    const pods =
        deployment && Object.keys(matchLabels).length > 0 ? ((await cluster.list(`/api/v1/namespaces/${ns}/pods`, selectorQuery(matchLabels))) ?? []) : [];
    const running = pods.filter((p) => isReadyPod(p) && !p.metadata?.deletionTimestamp);

    // Leader election (client-go tools/leaderelection): the holder renews the Lease every retry
    // period; a Lease not renewed within leaseDurationSeconds has no live leader. The identity is
    // `<hostname>_<uuid>` and the hostname is the pod's name (controller/controller.go).
    const leaseRef = ref("Lease", ns, LEADER_LEASE);
    const lease = await cluster.get(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${LEADER_LEASE}`);
    const leader: Finding[] = [];
    let leaderNote: string | undefined;
    if (!lease) {
        leader.push({ object: leaseRef, found: "not found: no controller has ever led (is --leader-elect on and the controller running?)" });
    } else {
        const holder = String(field(lease, "spec", "holderIdentity") ?? "");
        const pod = holder.split("_")[0];
        const renewed = Date.parse(String(field(lease, "spec", "renewTime") ?? ""));
        const duration = Number(field(lease, "spec", "leaseDurationSeconds") ?? 15);
        if (!holder) {
            leader.push({ object: leaseRef, found: "no holder: no controller is leading" });
        } else if (!running.some((p) => nameOf(p) === pod)) {
            leader.push({ object: leaseRef, found: `held by ${holder}, which is not a running, ready pod of ${deploymentRef}` });
        }
        if (Number.isNaN(renewed)) {
            leader.push({ object: leaseRef, found: "no renewTime: the holder never renewed it" });
        } else if (renewed + (duration + CLOCK_SKEW_SECONDS) * 1000 < options.now().getTime()) {
            leader.push({ object: leaseRef, found: `last renewed ${new Date(renewed).toISOString()}, more than ${duration} s ago: the leader is gone` });
        }
        leaderNote = `leader ${pod}`;
    }
    results.push(outcome("controller.leader", "one running controller pod holds the leader Lease", DOCS.crds, leader, leaderNote));

    // The plugin list: the chart renders controller.trafficRouterPlugins as YAML under the
    // ConfigMap's `trafficRouterPlugins` key; the controller reads it only at start, so every
    // running pod must carry the digest of the list it started with (values.ts).
    const expectedPlugins = asArray<TrafficRouterPlugin>(field(values, "controller", "trafficRouterPlugins"));
    const expectedDigest = asRecord(field(values, "controller", "podAnnotations"))[PLUGINS_DIGEST_ANNOTATION];
    const cmRef = ref("ConfigMap", ns, ROLLOUTS_CONFIGMAP);
    const configMap = await cluster.get(`/api/v1/namespaces/${ns}/configmaps/${ROLLOUTS_CONFIGMAP}`);
    const plugin: Finding[] = [];
    if (!configMap) {
        plugin.push({ object: cmRef, found: "not found: the controller starts without plugins and no canary can move traffic" });
    } else {
        const text = asRecord(configMap.data).trafficRouterPlugins;
        let live: TrafficRouterPlugin[] = [];
        try {
            live = text ? asArray<TrafficRouterPlugin>(YAML.parse(text)) : [];
        } catch (e) {
            plugin.push({ object: cmRef, found: `trafficRouterPlugins is not YAML (${yamlErrorText(e)})` });
        }
        for (const want of expectedPlugins) {
            const have = live.find((p) => p.name === want.name);
            if (!have) {
                plugin.push({
                    object: cmRef,
                    found: `trafficRouterPlugins does not list ${want.name} (it lists: ${live.map((p) => p.name).join(", ") || "nothing"})`,
                });
            } else if (have.location !== want.location || (have.sha256 ?? "") !== (want.sha256 ?? "")) {
                plugin.push({
                    object: cmRef,
                    found: `${want.name} is ${have.location} sha256 ${have.sha256 ?? "-"}, the stack pins ${want.location} sha256 ${want.sha256 ?? "-"}`,
                });
            }
        }
    }
    for (const p of running) {
        const digest = p.metadata?.annotations?.[PLUGINS_DIGEST_ANNOTATION];
        if (expectedDigest && digest !== expectedDigest) {
            plugin.push({
                object: ref("Pod", ns, nameOf(p)),
                found: "started with another plugin list (annotation differs): the controller loads plugins only at start",
            });
        }
    }
    results.push(outcome("controller.plugin", `${ROLLOUTS_CONFIGMAP} lists the pinned Gateway API plugin and the pods run it`, DOCS.crds, plugin));

    const bundle = config.mimir.readCaBundle;
    const caMap = bundle ? await cluster.get(`/api/v1/namespaces/${ns}/configmaps/${READ_CA_CONFIGMAP}`) : undefined;
    results.push(
        outcome(
            "controller.read-ca",
            "every controller pod trusts the stack's CA bundle for the hub's read endpoint, and no other",
            DOCS.crds,
            readCaFindings(bundle, ns, caMap, running),
            bundle
                ? `mimir.readCaBundle sha256 ${caBundleDigest(bundle)}, ${running.length} running pod(s)`
                : "no mimir.readCaBundle: the image's public roots only",
        ),
    );

    const image = expectedControllerImage(values);
    const initImage = pluginImage(config.plugin, config.imageRegistry);
    const images: Finding[] = [];
    if (deployment && pods.length === 0) {
        images.push({ object: deploymentRef, found: `no pods match its selector ${selectorQuery(matchLabels)}` });
    }
    for (const p of pods) {
        const containers = asArray<{ name?: string; image?: string }>(field(p, "spec", "containers"));
        const controller = containers.find((c) => c.name === CONTROLLER_CONTAINER);
        if (controller?.image !== image) {
            images.push({ object: ref("Pod", ns, nameOf(p)), found: `runs ${controller?.image ?? "no argo-rollouts container"}, the stack pins ${image}` });
        }
        if (initImage) {
            const inits = asArray<{ image?: string }>(field(p, "spec", "initContainers")).map((c) => c.image);
            if (!inits.includes(initImage)) {
                images.push({ object: ref("Pod", ns, nameOf(p)), found: `has no init container with the pinned plugin image ${initImage}` });
            }
        }
    }
    results.push(outcome("controller.image", "every controller pod runs the pinned image", DOCS.crds, images, `${image}`));
    return results;
};
