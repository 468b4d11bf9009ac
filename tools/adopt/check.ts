/** `npm run adopt-check`: an adopted object previews as a plain create, so this shows the live objects an adopting run rewrites or breaks. */
import type { AddonConfig } from "../../stacks/config";
import { CONTROLLER_SELECTOR, chartObjectApiVersion, chartObjectFields, chartObjects, renderedConfigKeys } from "../../components/rollouts/chartObjects";
import { CONTROLLER_LEASES, oldInstallProblems } from "../../components/cluster/oldInstall";
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
    isDowngrade,
    objectName,
    removeKeysCommand,
    staleKeys,
    templateReferences,
    unresolvedArgs,
} from "./inventory";
import { runningControllerVersion } from "../../stacks/preflight";
import { releaseOfLine } from "../../components/rollouts/versions";
import { TEMPLATE_NAME_PREFIX, rolloutsCrdUrls, ROLLOUTS_CRDS, RELEASE_NAME } from "../../components/argoRollouts";

export interface DeclaredObject {
    object: string;
    /** Who declares it: the program itself, the controller chart, or the CRD group. */
    declaredBy: "stack" | "chart" | "crds";
    present: boolean;
    managers: string[];
    /** Why the fields were not compared, where `changes` is null. */
    notCompared?: string;
    /** Fields the adopting run sets to another value (of the chart's objects, those its values decide); null where nothing could be compared. */
    changes: string[] | null;
}

/** Something of the old install the stack will not manage, and the command that retires it. */
export type Leftover = { object: string; what: string; retire: string };

/** Something adopting would break, and what to do first. */
export type Breakage = { object: string; found: string; fix: string };

/** A tenant's use of a cluster template the stack does not declare. */
export type TemplateUse = { template: string; rollouts: { rollout: string; where: string; resolves: boolean; unresolved: string[] }[] };

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

export type PlannedObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [field: string]: unknown };

/** Kinds an old release may have beside what the stack declares, listed by the release's label (`<apiVersion> <Kind>`, cluster-scoped last). */
const RELEASE_KINDS: [apiVersion: string, kind: string, namespaced: boolean][] = [
    ..."apps/v1 Deployment,v1 Service,v1 ServiceAccount,v1 ConfigMap,v1 Secret,policy/v1 PodDisruptionBudget,networking.k8s.io/v1 Ingress,gateway.networking.k8s.io/v1 HTTPRoute,monitoring.coreos.com/v1 ServiceMonitor,rbac.authorization.k8s.io/v1 Role,rbac.authorization.k8s.io/v1 RoleBinding"
        .split(",")
        .map((k): [string, string, boolean] => [k.split(" ")[0], k.split(" ")[1], true]),
    ["rbac.authorization.k8s.io/v1", "ClusterRole", false],
    ["rbac.authorization.k8s.io/v1", "ClusterRoleBinding", false],
];

/** Reads the CRD manifests the stack applies (controller.crdBaseUrl at controller.appVersion), or says why it could not. */
export type CrdSource = (urls: string[]) => Promise<Record<string, unknown>[] | { error: string }>;

const spec = (o: KubeObject) => (o.spec ?? {}) as { args?: Argument[]; template?: { spec?: { containers?: { name?: string; image?: string }[] } } };

export async function adoptCheck(config: AddonConfig, planned: PlannedObject[], cluster: ReadOnlyCluster, crdSource?: CrdSource): Promise<AdoptReport> {
    const ns = config.controller.namespace;
    const breaks: Breakage[] = [];
    const leftovers: Leftover[] = [];
    const objects: DeclaredObject[] = [];
    // Each declared object that still carries the old release's ownership can be taken back by a `helm install` of it.
    const declare = (
        kind: string,
        namespace: string | undefined,
        name: string,
        live: KubeObject | undefined,
        entry: Omit<DeclaredObject, "object" | "present" | "managers">,
    ) => {
        const object = objectName(kind, namespace, name);
        objects.push({ object, present: Boolean(live), managers: live ? fieldManagers(live) : [], ...entry });
        if (live?.metadata?.annotations?.[HELM_OWNERSHIP_ANNOTATIONS[0]] === RELEASE_NAME) {
            leftovers.push({
                object,
                what: `carries ${HELM_OWNERSHIP_ANNOTATIONS[0]}: ${RELEASE_NAME}: a helm install of the old release takes it back (after the adopting run: runbook, make the objects unclaimable)`,
                retire: `kubectl annotate ${kind.toLowerCase()} ${namespace ? `-n ${namespace} ` : ""}${name} ${HELM_OWNERSHIP_ANNOTATIONS.map((a) => `${a}-`).join(" ")}`,
            });
        }
    };

    // The CRDs: present, who manages them, and whether the old tool can still delete them.
    const liveCrds = new Map<string, KubeObject | undefined>();
    for (const c of ROLLOUTS_CRDS) {
        const live = await cluster.get(apiPath("apiextensions.k8s.io/v1", "CustomResourceDefinition", undefined, c.name));
        liveCrds.set(c.name, live);
        for (const f of protectedFromDeletion(live, c.name)) {
            const fix = /Terraform/i.test(f.found)
                ? "terraform state rm the CRD's resource first (runbook: stop whatever re-applies the old install)"
                : `kubectl annotate crd ${c.name} helm.sh/resource-policy=keep --overwrite, and remove any owner (runbook: keep the CRDs)`;
            breaks.push({ ...f, fix });
        }
    }
    const crds = [...liveCrds].map(([name, live]) => ({
        name,
        present: Boolean(live),
        managers: live ? fieldManagers(live) : [],
        version: live?.metadata?.labels?.["app.kubernetes.io/version"] ?? null,
    }));

    // While the old release's record exists, a `helm upgrade` from a registry takes everything back.
    const records = (await cluster.list(`/api/v1/namespaces/${ns}/secrets`, `owner=helm,name=${RELEASE_NAME}`)) ?? [];
    if (records.length > 0) {
        breaks.push({
            object: `Helm release ${ns}/${RELEASE_NAME}`,
            found: `${records.length} release record(s) (${records.map((r) => r.metadata?.name).join(", ")}): a helm upgrade of the old unit re-adopts every object with the old values and recreates what was retired`,
            fix: `remove the unit from what re-applies it, then kubectl delete secret -n ${ns} -l owner=helm,name=${RELEASE_NAME} (never helm uninstall)`,
        });
    }

    // The controller's version: never a silent downgrade.
    const running = (await runningControllerVersion(config, cluster)) ?? null;
    const configured = config.controller.appVersion;
    if (running && !config.controller.releaseFromStackFile) {
        // Decided before the runbook deletes a controller the chart cannot take (docs/operations/adopt.md step 5): with none running, the preview cannot tell.
        const kept = releaseOfLine(running);
        breaks.push({
            object: `Pulumi.${config.stack}.yaml`,
            found: `names no controller.chartVersion while the cluster runs ${running}: once the runbook deletes the old controller, the adopting run could not tell which line to keep`,
            fix: kept
                ? `pulumi config set --path controller.chartVersion ${kept.chartVersion} -s ${config.stack} (the chart of the ${kept.line} line it runs)`
                : `no chart of the program runs ${running}'s line: follow docs/operations/upgrade.md, then set controller.chartVersion and controller.acknowledgeNewRevisions`,
        });
    }
    if (running && isDowngrade(running, configured) && !config.cluster.allowDowngrade) {
        breaks.push({
            object: objectName("Deployment", ns, RELEASE_NAME),
            found: `runs ${running}; the stack configures controller.appVersion ${configured}: adopting downgrades the controller and the CRDs`,
            fix: `set controller.chartVersion (and controller.appVersion) to ${running} or later, or cluster.allowDowngrade: true for the adopting run after reading the release notes (the adopting run refuses it too)`,
        });
    }

    // What the stack declares: the program's own objects, the chart's (the fields its values decide), the CRDs.
    for (const p of planned) {
        const live = await cluster.get(apiPath(p.apiVersion, p.kind, p.metadata.namespace, p.metadata.name));
        declare(p.kind, p.metadata.namespace, p.metadata.name, live, { declaredBy: "stack", changes: live ? fieldChanges(p, live) : [] });
    }
    const values = controllerValues(config);
    const chartFields = chartObjectFields(values as Parameters<typeof chartObjectFields>[0], ns);
    for (const c of chartObjects({ serviceMonitor: config.controller.serviceMonitor, dashboard: config.controller.dashboard })) {
        const namespace = c.namespaced ? ns : undefined;
        const live = await cluster.get(apiPath(chartObjectApiVersion(c.kind), c.kind, namespace, c.name));
        const expected = chartFields.find((f) => f.kind === c.kind && f.metadata.name === c.name);
        declare(c.kind, namespace, c.name, live, { declaredBy: "chart", changes: live && expected ? fieldChanges(expected, live) : [] });
    }
    const source = crdSource ? await crdSource(rolloutsCrdUrls(config.controller.crdBaseUrl, config.controller.appVersion)) : { error: "no CRD source" };
    for (const [name, live] of liveCrds) {
        const manifest = Array.isArray(source) ? source.find((m) => (m.metadata as { name?: string } | undefined)?.name === name) : undefined;
        const notCompared = Array.isArray(source) ? `no manifest of ${name} at ${config.controller.crdBaseUrl}` : source.error;
        declare("CustomResourceDefinition", undefined, name, live, {
            declaredBy: "crds",
            changes: live ? (manifest ? fieldChanges(manifest, live) : null) : [],
            ...(live && !manifest ? { notCompared } : {}),
        });
    }

    // Shapes of the old install adopting cannot take over (components/cluster/oldInstall.ts).
    const pdb = await cluster.get(apiPath("policy/v1", "PodDisruptionBudget", ns, RELEASE_NAME));
    breaks.push(
        ...oldInstallProblems({
            namespace: ns,
            name: RELEASE_NAME,
            deployments: (await cluster.list("/apis/apps/v1/deployments")) ?? [],
            leases: (await cluster.list(CONTROLLER_LEASES)) ?? [],
            chartSelector: CONTROLLER_SELECTOR,
            pdb,
        }),
    );

    // What stays behind: keys the stack no longer writes, and release objects it does not declare.
    const notifications = planned.find((p) => p.kind === "ConfigMap" && p.metadata.name === NOTIFICATION_CONFIGMAP);
    const configKeys = renderedConfigKeys(values.controller as Record<string, unknown>);
    const written: [string, string[], string][] = [
        ["argo-rollouts-config", configKeys, "keys {} stay, owned by the old manager, and the controller keeps loading them"],
    ];
    if (notifications) {
        written.push([NOTIFICATION_CONFIGMAP, Object.keys(notifications.data ?? {}), "old notification keys {} stay, owned by the old manager"]);
    }
    for (const [name, keys, what] of written) {
        const stale = staleKeys(await cluster.get(apiPath("v1", "ConfigMap", ns, name)), keys);
        if (stale.length > 0) {
            leftovers.push({
                object: objectName("ConfigMap", ns, name),
                what: what.replace("{}", stale.join(", ")),
                retire: removeKeysCommand(ns, name, stale),
            });
        }
    }
    const declared = new Set(objects.map((o) => o.object));
    for (const [apiVersion, kind, namespaced] of RELEASE_KINDS) {
        for (const item of (await cluster.list(apiPath(apiVersion, kind, namespaced ? ns : undefined), RELEASE_SELECTOR)) ?? []) {
            const name = item.metadata?.name ?? "";
            const object = objectName(kind, namespaced ? ns : undefined, name);
            // The release record is a break, above.
            if (!declared.has(object) && !(kind === "Secret" && name.startsWith("sh.helm.release.v1."))) {
                leftovers.push({
                    object,
                    what: "of the old release; the stack does not declare it",
                    retire: `kubectl delete ${kind.toLowerCase()} ${namespaced ? `-n ${ns} ` : ""}${name}`,
                });
            }
        }
    }

    // The stack's templates must resolve for every Rollout that already uses their names; a tenant's is never taken over.
    const references = ((await cluster.list("/apis/argoproj.io/v1alpha1/rollouts")) ?? []).flatMap(templateReferences);
    const plannedTemplates = new Map(
        planned.filter((p) => p.kind === "ClusterAnalysisTemplate").map((p) => [p.metadata.name, spec(p as KubeObject).args ?? []]),
    );
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
    const liveTemplates = (await cluster.list("/apis/argoproj.io/v1alpha1/clusteranalysistemplates")) ?? [];
    const tenantTemplates: TemplateUse[] = liveTemplates
        .filter((t) => !plannedTemplates.has(t.metadata?.name ?? ""))
        .map((t) => ({
            template: t.metadata?.name ?? "",
            rollouts: references
                .filter((r) => r.template === t.metadata?.name)
                .map((r) => {
                    const unresolved = unresolvedArgs(spec(t).args ?? [], r.args);
                    return { rollout: r.rollout, where: r.where, resolves: unresolved.length === 0, unresolved };
                }),
        }));
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
