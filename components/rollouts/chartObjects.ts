import { RELEASE_NAME } from "../argoRollouts";

/**
 * What the argo-rollouts chart renders for the program's values, by kind and name: the objects
 * the controller Chart resource owns once a run has applied it. `npm run adopt-check` needs the
 * list before that run (an object of the old release not in it is a leftover to retire), and the
 * offline plan cannot render the chart. Each entry follows the template's guard in argoproj/argo-helm
 * charts/argo-rollouts/templates/ at tag argo-rollouts-2.41.0, for the values `controllerValues`
 * sets: `serviceAccount.create: true`, `clusterInstall: true` with `controller.createClusterRole:
 * false` (the rollouts stage declares the controller's RBAC itself), `controller.metrics.enabled`,
 * `controller.pdb.enabled`, the notification ConfigMap and Secret not created, no aggregate roles,
 * `createConfigmap` at its default (true).
 */
export interface ChartObject {
    kind: string;
    /** Unset for cluster-scoped kinds. */
    namespaced: boolean;
    name: string;
}

export interface ChartObjectOptions {
    /** `controller.serviceMonitor` (templates/controller/servicemonitor.yaml). */
    serviceMonitor: boolean;
    /** `controller.dashboard` (templates/dashboard/*: all named `<fullname>-dashboard`). */
    dashboard: boolean;
}

/** The apiVersion of each kind the chart renders (chart 2.41.0 and 2.40.7 templates/). */
const CHART_KIND_VERSIONS: Readonly<Record<string, string>> = {
    ServiceAccount: "v1",
    ConfigMap: "v1",
    Service: "v1",
    Deployment: "apps/v1",
    PodDisruptionBudget: "policy/v1",
    ServiceMonitor: "monitoring.coreos.com/v1",
    ClusterRole: "rbac.authorization.k8s.io/v1",
    ClusterRoleBinding: "rbac.authorization.k8s.io/v1",
};

export function chartObjectApiVersion(kind: string): string {
    const v = CHART_KIND_VERSIONS[kind];
    if (!v) {
        throw new Error(`the chart renders no ${kind}`);
    }
    return v;
}

export function chartObjects(opts: ChartObjectOptions): ChartObject[] {
    const ns = (kind: string, name: string): ChartObject => ({ kind, namespaced: true, name });
    const cluster = (kind: string, name: string): ChartObject => ({ kind, namespaced: false, name });
    const out: ChartObject[] = [
        ns("ServiceAccount", RELEASE_NAME), // controller/serviceaccount.yaml
        ns("ConfigMap", "argo-rollouts-config"), // controller/configmap.yaml
        ns("Deployment", RELEASE_NAME), // controller/deployment.yaml
        ns("Service", `${RELEASE_NAME}-metrics`), // controller/metrics-service.yaml
        ns("PodDisruptionBudget", RELEASE_NAME), // controller/poddisruptionbudget.yaml
    ];
    if (opts.serviceMonitor) {
        out.push(ns("ServiceMonitor", RELEASE_NAME));
    }
    if (opts.dashboard) {
        // dashboard/{deployment,service,serviceaccount,poddisruptionbudget,clusterrole,clusterrolebinding}.yaml;
        // its Ingress and HTTPRoute stay off (dashboard.ingress/httproute.enabled default false).
        const name = `${RELEASE_NAME}-dashboard`;
        out.push(
            ns("Deployment", name),
            ns("Service", name),
            ns("ServiceAccount", name),
            ns("PodDisruptionBudget", name),
            cluster("ClusterRole", name),
            cluster("ClusterRoleBinding", name),
        );
    }
    return out;
}

/**
 * The keys the chart writes into `argo-rollouts-config` (templates/controller/configmap.yaml: one
 * key per non-empty `controller.metricProviderPlugins`, `controller.stepPlugins`,
 * `controller.trafficRouterPlugins`). A key of an older install outside this list stays in the
 * ConfigMap after adoption, owned by its old manager, and the controller keeps loading it.
 */
export function renderedConfigKeys(controllerValues: Record<string, unknown>): string[] {
    return ["metricProviderPlugins", "stepPlugins", "trafficRouterPlugins"].filter((k) => {
        const v = controllerValues[k];
        return Array.isArray(v) ? v.length > 0 : v !== undefined && v !== null && v !== "";
    });
}

/**
 * The controller Deployment's selector (templates/controller/deployment.yaml: the component plus
 * argo-rollouts.selectorLabels of _helpers.tpl, the same in 2.40.7 and 2.41.0). A Deployment's
 * selector is immutable, so a live controller Deployment with another one cannot be adopted.
 */
export const CONTROLLER_SELECTOR: Readonly<Record<string, string>> = {
    "app.kubernetes.io/component": "rollouts-controller",
    "app.kubernetes.io/name": "argo-rollouts",
    "app.kubernetes.io/instance": RELEASE_NAME,
};

/**
 * The fields of the chart's objects that the program's values decide, as the templates render them
 * (the rest is the chart's own and shows in `pulumi preview`), so adopt-check can show what the
 * adopting run changes on them: the controller Deployment's selector, replicas, service account and
 * image (templates/controller/deployment.yaml), the budget (poddisruptionbudget.yaml: maxUnavailable
 * when set) and the metrics Service's selector (metrics-service.yaml).
 */
export function chartObjectFields(
    values: { controller: { replicas: number; image: { registry: string; repository: string; tag: string }; pdb: { maxUnavailable: number } } },
    namespace: string,
): { apiVersion: string; kind: string; metadata: { name: string; namespace: string }; [field: string]: unknown }[] {
    const c = values.controller;
    const meta = (name: string) => ({ name, namespace });
    return [
        {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: meta(RELEASE_NAME),
            spec: {
                selector: { matchLabels: { ...CONTROLLER_SELECTOR } },
                replicas: c.replicas,
                template: {
                    spec: {
                        serviceAccountName: RELEASE_NAME,
                        containers: [{ name: "argo-rollouts", image: `${c.image.registry}/${c.image.repository}:${c.image.tag}` }],
                    },
                },
            },
        },
        {
            apiVersion: "policy/v1",
            kind: "PodDisruptionBudget",
            metadata: meta(RELEASE_NAME),
            spec: { maxUnavailable: c.pdb.maxUnavailable, selector: { matchLabels: { ...CONTROLLER_SELECTOR } } },
        },
        {
            apiVersion: "v1",
            kind: "Service",
            metadata: meta(`${RELEASE_NAME}-metrics`),
            spec: { selector: { ...CONTROLLER_SELECTOR } },
        },
    ];
}
