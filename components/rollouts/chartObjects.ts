import { RELEASE_NAME } from "../argoRollouts";

/**
 * What the argo-rollouts chart renders for the program's values, by kind and name (ADR-056 D7: the
 * objects the controller Chart owns once a run applied it), for the preflight and adopt-check, which
 * need it without rendering the chart. Each follows its template's guard in argoproj/argo-helm
 * charts/argo-rollouts/templates/ at argo-rollouts-2.41.0 (the same in 2.40.7) for the values
 * `controllerValues` sets: the ServiceAccount, argo-rollouts-config, the controller, its metrics
 * Service and budget; no ClusterRole (the stage declares it), no notification objects, no aggregate roles.
 */
export interface ChartObject {
    kind: string;
    /** False for cluster-scoped kinds. */
    namespaced: boolean;
    name: string;
}

/** The apiVersion of each kind the chart renders. */
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
    if (!v) throw new Error(`the chart renders no ${kind}`);
    return v;
}

/** `serviceMonitor`: templates/controller/servicemonitor.yaml; `dashboard`: templates/dashboard/*, each `<fullname>-dashboard` (its Ingress and HTTPRoute off). */
export function chartObjects(opts: { serviceMonitor: boolean; dashboard: boolean }): ChartObject[] {
    const ns = (kind: string, name = RELEASE_NAME): ChartObject => ({ kind, namespaced: true, name });
    const dashboard = `${RELEASE_NAME}-dashboard`;
    return [
        ns("ServiceAccount"),
        ns("ConfigMap", "argo-rollouts-config"),
        ns("Deployment"),
        ns("Service", `${RELEASE_NAME}-metrics`),
        ns("PodDisruptionBudget"),
        ...(opts.serviceMonitor ? [ns("ServiceMonitor")] : []),
        ...(opts.dashboard
            ? [
                  ...["Deployment", "Service", "ServiceAccount", "PodDisruptionBudget"].map((kind) => ns(kind, dashboard)),
                  ...["ClusterRole", "ClusterRoleBinding"].map((kind) => ({ kind, namespaced: false, name: dashboard })),
              ]
            : []),
    ];
}

/**
 * The keys the chart writes into `argo-rollouts-config` (templates/controller/configmap.yaml: one per
 * non-empty plugin list). An older install's other key stays after adoption, and the controller keeps loading it.
 */
export function renderedConfigKeys(controllerValues: Record<string, unknown>): string[] {
    return ["metricProviderPlugins", "stepPlugins", "trafficRouterPlugins"].filter((k) => {
        const v = controllerValues[k];
        return Array.isArray(v) ? v.length > 0 : v !== undefined && v !== null && v !== "";
    });
}

/** The controller Deployment's selector (templates/controller/deployment.yaml, _helpers.tpl): immutable, so a live one with another cannot be adopted. */
export const CONTROLLER_SELECTOR: Readonly<Record<string, string>> = {
    "app.kubernetes.io/component": "rollouts-controller",
    "app.kubernetes.io/name": "argo-rollouts",
    "app.kubernetes.io/instance": RELEASE_NAME,
};

/**
 * The fields of the chart's objects the program's values decide, as the templates render them, so
 * adopt-check can show what the adopting run changes: the controller Deployment's selector, replicas,
 * service account and image, the budget's maxUnavailable, the metrics Service's selector.
 */
export function chartObjectFields(
    values: { controller: { replicas: number; image: { registry: string; repository: string; tag: string }; pdb: { maxUnavailable: number } } },
    namespace: string,
): { apiVersion: string; kind: string; metadata: { name: string; namespace: string }; [field: string]: unknown }[] {
    const c = values.controller;
    const selector = () => ({ ...CONTROLLER_SELECTOR });
    const image = `${c.image.registry}/${c.image.repository}:${c.image.tag}`;
    const pod = { spec: { serviceAccountName: RELEASE_NAME, containers: [{ name: "argo-rollouts", image }] } };
    return [
        {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name: RELEASE_NAME, namespace },
            spec: { selector: { matchLabels: selector() }, replicas: c.replicas, template: pod },
        },
        {
            apiVersion: "policy/v1",
            kind: "PodDisruptionBudget",
            metadata: { name: RELEASE_NAME, namespace },
            spec: { maxUnavailable: c.pdb.maxUnavailable, selector: { matchLabels: selector() } },
        },
        { apiVersion: "v1", kind: "Service", metadata: { name: `${RELEASE_NAME}-metrics`, namespace }, spec: { selector: selector() } },
    ];
}
