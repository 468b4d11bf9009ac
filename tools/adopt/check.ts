/**
 * `npm run adopt-check`: before the adopting run (`cluster.adoptExisting`), what it takes over
 * and what it would break, read from the cluster with GETs and LISTs only. With
 * `upsertExistingObjects` every adopted object previews as a plain create, so this is where the
 * live object about to be rewritten is shown.
 */
import type { AddonConfig } from "../../stacks/config";
import { CONTROLLER_SELECTOR, chartObjectApiVersion, chartObjectFields, chartObjects, renderedConfigKeys } from "../../components/rollouts/chartObjects";
import { oldInstallProblems } from "../../components/cluster/oldInstall";
import { HELM_OWNERSHIP_ANNOTATIONS, RELEASE_SELECTOR } from "../../components/cluster/adoption";
import { NOTIFICATION_CONFIGMAP } from "../../components/rollouts/notifications";
import { controllerValues } from "../../components/rollouts/values";
import { protectedFromDeletion } from "../verify/checks/controller";
import type { KubeObject, ReadOnlyCluster } from "../verify/cluster";
import {
    Argument,
    apiPath,
    fieldChanges,
    fieldManagers,
    imageTag,
    isDowngrade,
    objectName,
    removeKeysCommand,
    staleKeys,
    templateReferences,
    unresolvedArgs,
} from "./inventory";
import { TEMPLATE_NAME_PREFIX, rolloutsCrdUrls, ROLLOUTS_CRDS, RELEASE_NAME } from "../../components/argoRollouts";

/** One object the stack declares, as the cluster has it now. */
export interface DeclaredObject {
    object: string;
    /** Who declares it: the program itself, the controller chart, or the CRD group. */
    declaredBy: "stack" | "chart" | "crds";
    present: boolean;
    managers: string[];
    /** Why the fields were not compared, where `changes` is null. */
    notCompared?: string;
    /**
     * Fields the adopting run sets to another value: of the program's own objects every field it
     * sets; of the chart's those its values decide (chartObjectFields); of the CRDs every field of
     * the manifest at controller.appVersion. Null where nothing could be compared.
     */
    changes: string[] | null;
}

/** Something of the old install the stack will not manage, and the command that retires it. */
export interface Leftover {
    object: string;
    what: string;
    retire: string;
}

/** Something adopting would break, and what to do first. */
export interface Breakage {
    object: string;
    found: string;
    fix: string;
}

/** A tenant's use of a cluster template the stack does not declare. */
export interface TemplateUse {
    template: string;
    rollouts: { rollout: string; where: string; resolves: boolean; unresolved: string[] }[];
}

export interface AdoptReport {
    stack: string;
    cluster: string;
    server: string;
    controller: { running: string | null; configured: string };
    crds: { name: string; present: boolean; managers: string[]; version: string | null }[];
    objects: DeclaredObject[];
    leftovers: Leftover[];
    tenantTemplates: TemplateUse[];
    breaks: Breakage[];
}

export interface PlannedObject {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string };
    [field: string]: unknown;
}

/** Kinds an old release may have beside what the stack declares, listed by the release's label. */
const RELEASE_KINDS: { apiVersion: string; kind: string; namespaced: boolean }[] = [
    { apiVersion: "apps/v1", kind: "Deployment", namespaced: true },
    { apiVersion: "v1", kind: "Service", namespaced: true },
    { apiVersion: "v1", kind: "ServiceAccount", namespaced: true },
    { apiVersion: "v1", kind: "ConfigMap", namespaced: true },
    { apiVersion: "v1", kind: "Secret", namespaced: true },
    { apiVersion: "policy/v1", kind: "PodDisruptionBudget", namespaced: true },
    { apiVersion: "networking.k8s.io/v1", kind: "Ingress", namespaced: true },
    { apiVersion: "gateway.networking.k8s.io/v1", kind: "HTTPRoute", namespaced: true },
    { apiVersion: "monitoring.coreos.com/v1", kind: "ServiceMonitor", namespaced: true },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", namespaced: true },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", namespaced: true },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", namespaced: false },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", namespaced: false },
];

/** Reads the CRD manifests the stack applies (controller.crdBaseUrl at controller.appVersion), or says why it could not. */
export type CrdSource = (urls: string[]) => Promise<Record<string, unknown>[] | { error: string }>;

export async function adoptCheck(config: AddonConfig, planned: PlannedObject[], cluster: ReadOnlyCluster, crdSource?: CrdSource): Promise<AdoptReport> {
    const ns = config.controller.namespace;
    const breaks: Breakage[] = [];
    const leftovers: Leftover[] = [];

    // The CRDs: present, who manages them, and whether the old tool can still delete them.
    const crds = [];
    const liveCrds = new Map<string, KubeObject | undefined>();
    for (const c of ROLLOUTS_CRDS) {
        const live = await cluster.get(apiPath("apiextensions.k8s.io/v1", "CustomResourceDefinition", undefined, c.name));
        liveCrds.set(c.name, live);
        crds.push({
            name: c.name,
            present: Boolean(live),
            managers: live ? fieldManagers(live) : [],
            version: live?.metadata?.labels?.["app.kubernetes.io/version"] ?? null,
        });
        if (!live) {
            continue;
        }
        for (const f of protectedFromDeletion(live, c.name)) {
            const fix = /Terraform/i.test(f.found)
                ? "terraform state rm the CRD's resource first (runbook: stop whatever re-applies the old install)"
                : `kubectl annotate crd ${c.name} helm.sh/resource-policy=keep --overwrite, and remove any owner (runbook: keep the CRDs)`;
            breaks.push({ object: f.object, found: f.found, fix });
        }
    }

    // The old release's record: while it exists, a `helm upgrade` from a registry takes everything back.
    const records = (await cluster.list(`/api/v1/namespaces/${ns}/secrets`, `owner=helm,name=${RELEASE_NAME}`)) ?? [];
    if (records.length > 0) {
        breaks.push({
            object: `Helm release ${ns}/${RELEASE_NAME}`,
            found: `${records.length} release record(s) (${records.map((r) => r.metadata?.name).join(", ")}): a helm upgrade of the old unit re-adopts every object with the old values and recreates what was retired`,
            fix: `remove the unit from what re-applies it, then kubectl delete secret -n ${ns} -l owner=helm,name=${RELEASE_NAME} (never helm uninstall)`,
        });
    }

    // The controller's version: never a silent downgrade.
    const deployment = await cluster.get(apiPath("apps/v1", "Deployment", ns, RELEASE_NAME));
    const containers =
        (deployment?.spec as { template?: { spec?: { containers?: { name?: string; image?: string }[] } } } | undefined)?.template?.spec?.containers ?? [];
    const image = containers.find((c) => c.name === "argo-rollouts")?.image ?? containers[0]?.image;
    const running = image ? (imageTag(image) ?? null) : null;
    const configured = config.controller.appVersion;
    if (running && isDowngrade(running, configured) && !config.cluster.allowDowngrade) {
        breaks.push({
            object: objectName("Deployment", ns, RELEASE_NAME),
            found: `runs ${running}; the stack configures controller.appVersion ${configured}: adopting downgrades the controller and the CRDs`,
            fix: `set controller.chartVersion (and controller.appVersion) to ${running} or later, or cluster.allowDowngrade: true for the adopting run after reading the release notes (the adopting run refuses it too)`,
        });
    }

    // What the stack declares: the program's own objects, the chart's, the CRDs. Each that still
    // carries the old release's ownership annotations can be taken back by a `helm install` of it.
    const objects: DeclaredObject[] = [];
    const declared = new Set<string>();
    const claimable = (live: KubeObject | undefined, kind: string, namespace: string | undefined, name: string) => {
        if (live?.metadata?.annotations?.[HELM_OWNERSHIP_ANNOTATIONS[0]] === RELEASE_NAME) {
            leftovers.push({
                object: objectName(kind, namespace, name),
                what: `carries ${HELM_OWNERSHIP_ANNOTATIONS[0]}: ${RELEASE_NAME}: a helm install of the old release takes it back (after the adopting run: runbook, make the objects unclaimable)`,
                retire: `kubectl annotate ${kind.toLowerCase()} ${namespace ? `-n ${namespace} ` : ""}${name} ${HELM_OWNERSHIP_ANNOTATIONS.map((a) => `${a}-`).join(" ")}`,
            });
        }
    };
    for (const p of planned) {
        const live = await cluster.get(apiPath(p.apiVersion, p.kind, p.metadata.namespace, p.metadata.name));
        const object = objectName(p.kind, p.metadata.namespace, p.metadata.name);
        declared.add(object);
        objects.push({
            object,
            declaredBy: "stack",
            present: Boolean(live),
            managers: live ? fieldManagers(live) : [],
            changes: live ? fieldChanges(p, live) : [],
        });
        claimable(live, p.kind, p.metadata.namespace, p.metadata.name);
    }
    const values = controllerValues(config);
    const chartFields = chartObjectFields(values as Parameters<typeof chartObjectFields>[0], ns);
    for (const c of chartObjects({ serviceMonitor: config.controller.serviceMonitor, dashboard: config.controller.dashboard })) {
        const live = await cluster.get(apiPath(chartObjectApiVersion(c.kind), c.kind, c.namespaced ? ns : undefined, c.name));
        const object = objectName(c.kind, c.namespaced ? ns : undefined, c.name);
        declared.add(object);
        const expected = chartFields.find((f) => f.kind === c.kind && f.metadata.name === c.name);
        objects.push({
            object,
            declaredBy: "chart",
            present: Boolean(live),
            managers: live ? fieldManagers(live) : [],
            changes: live ? (expected ? fieldChanges(expected, live) : []) : [],
        });
        claimable(live, c.kind, c.namespaced ? ns : undefined, c.name);
    }
    const source = crdSource ? await crdSource(rolloutsCrdUrls(config.controller.crdBaseUrl, config.controller.appVersion)) : { error: "no CRD source" };
    const manifests = Array.isArray(source) ? source : undefined;
    const crdSourceError = Array.isArray(source) ? undefined : source.error;
    for (const c of crds) {
        const manifest = manifests?.find((m) => (m.metadata as { name?: string } | undefined)?.name === c.name);
        const live = liveCrds.get(c.name);
        objects.push({
            object: objectName("CustomResourceDefinition", undefined, c.name),
            declaredBy: "crds",
            present: c.present,
            managers: c.managers,
            changes: live ? (manifest ? fieldChanges(manifest, live) : null) : [],
            ...(live && !manifest ? { notCompared: crdSourceError ?? `no manifest of ${c.name} at ${config.controller.crdBaseUrl}` } : {}),
        });
        claimable(live, "CustomResourceDefinition", undefined, c.name);
    }

    // Shapes of the old install adopting cannot take over (components/cluster/oldInstall.ts).
    const deployments = (await cluster.list("/apis/apps/v1/deployments")) ?? [];
    const pdb = await cluster.get(apiPath("policy/v1", "PodDisruptionBudget", ns, RELEASE_NAME));
    for (const p of oldInstallProblems({ namespace: ns, name: RELEASE_NAME, deployments, chartSelector: CONTROLLER_SELECTOR, pdb })) {
        breaks.push(p);
    }

    // What stays behind: stale keys the stack no longer writes, and release objects it does not declare.
    const rolloutsConfig = await cluster.get(apiPath("v1", "ConfigMap", ns, "argo-rollouts-config"));
    const stale = staleKeys(rolloutsConfig, renderedConfigKeys(values.controller as Record<string, unknown>));
    if (stale.length > 0) {
        leftovers.push({
            object: objectName("ConfigMap", ns, "argo-rollouts-config"),
            what: `keys ${stale.join(", ")} stay, owned by the old manager, and the controller keeps loading them`,
            retire: removeKeysCommand(ns, "argo-rollouts-config", stale),
        });
    }
    const notifications = planned.find((p) => p.kind === "ConfigMap" && p.metadata.name === NOTIFICATION_CONFIGMAP);
    if (notifications) {
        const live = await cluster.get(apiPath("v1", "ConfigMap", ns, NOTIFICATION_CONFIGMAP));
        const old = staleKeys(live, Object.keys((notifications.data ?? {}) as Record<string, unknown>));
        if (old.length > 0) {
            leftovers.push({
                object: objectName("ConfigMap", ns, NOTIFICATION_CONFIGMAP),
                what: `old notification keys ${old.join(", ")} stay, owned by the old manager`,
                retire: removeKeysCommand(ns, NOTIFICATION_CONFIGMAP, old),
            });
        }
    }
    for (const k of RELEASE_KINDS) {
        const items = (await cluster.list(apiPath(k.apiVersion, k.kind, k.namespaced ? ns : undefined), RELEASE_SELECTOR)) ?? [];
        for (const item of items) {
            const name = item.metadata?.name ?? "";
            if (k.kind === "Secret" && /^sh\.helm\.release\.v1\./.test(name)) {
                continue; // the release record, above
            }
            const object = objectName(k.kind, k.namespaced ? ns : undefined, name);
            if (!declared.has(object)) {
                leftovers.push({
                    object,
                    what: "of the old release; the stack does not declare it",
                    retire: `kubectl delete ${k.kind.toLowerCase()} ${k.namespaced ? `-n ${ns} ` : ""}${name}`,
                });
            }
        }
    }

    // Templates: the stack's own must resolve for every Rollout that already uses their names;
    // a tenant's template is never taken over, and its users are listed for their migration.
    const rollouts = (await cluster.list("/apis/argoproj.io/v1alpha1/rollouts")) ?? [];
    const references = rollouts.flatMap(templateReferences);
    const plannedTemplates = new Map(
        planned
            .filter((p) => p.kind === "ClusterAnalysisTemplate")
            .map((p) => [p.metadata.name, ((p.spec as { args?: Argument[] } | undefined)?.args ?? []) as Argument[]]),
    );
    const liveTemplates = (await cluster.list("/apis/argoproj.io/v1alpha1/clusteranalysistemplates")) ?? [];
    for (const ref of references.filter((r) => plannedTemplates.has(r.template))) {
        const missing = unresolvedArgs(plannedTemplates.get(ref.template)!, ref.args);
        if (missing.length > 0) {
            breaks.push({
                object: `Rollout ${ref.rollout}`,
                found: `${ref.where} references ClusterAnalysisTemplate ${ref.template} and passes no ${missing.map((m) => `args.${m}`).join(", ")}: after adoption every analysis fails ("args.${missing[0]} was not resolved") and the Rollout goes InvalidSpec`,
                fix: `the Rollout passes ${missing.join(", ")} as the metric gates show (docs/tenants/metric-gates.md), before the adopting run`,
            });
        }
    }
    const tenantTemplates: TemplateUse[] = liveTemplates
        .filter((t) => !plannedTemplates.has(t.metadata?.name ?? ""))
        .map((t) => {
            const name = t.metadata?.name ?? "";
            const args = ((t.spec as { args?: Argument[] } | undefined)?.args ?? []) as Argument[];
            return {
                template: name,
                rollouts: references
                    .filter((r) => r.template === name)
                    .map((r) => {
                        const unresolved = unresolvedArgs(args, r.args);
                        return { rollout: r.rollout, where: r.where, resolves: unresolved.length === 0, unresolved };
                    }),
            };
        });
    for (const t of tenantTemplates.filter((x) => x.rollouts.length === 0 && !x.template.startsWith(TEMPLATE_NAME_PREFIX))) {
        leftovers.push({
            object: objectName("ClusterAnalysisTemplate", undefined, t.template),
            what: "not the stack's and no Rollout references it",
            retire: `kubectl delete clusteranalysistemplate ${t.template}`,
        });
    }

    return {
        stack: config.stack,
        cluster: config.cluster.name,
        server: cluster.server,
        controller: { running, configured },
        crds,
        objects,
        leftovers,
        tenantTemplates,
        breaks,
    };
}
