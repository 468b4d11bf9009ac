import { RELEASE_NAME } from "./values";

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
        out.push(ns("Deployment", name), ns("Service", name), ns("ServiceAccount", name), ns("PodDisruptionBudget", name), cluster("ClusterRole", name), cluster("ClusterRoleBinding", name));
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
