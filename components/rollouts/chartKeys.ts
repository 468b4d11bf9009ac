/**
 * The keys that exist in the argo-rollouts chart's values file, version 2.41.0
 * (argoproj/argo-helm charts/argo-rollouts/values.yaml). Helm ignores an unknown key without a
 * word, so a misspelt value would silently fall back to the chart default: every key the program
 * sets is checked against this list (see `unknownChartValueKeys`).
 *
 * "value": a scalar setting. "any": a map, list or empty setting whose contents are free-form
 * (annotations, resources, extra volumes...), so anything below it is accepted.
 */
export const CHART_VERSION_OF_KEYS = "2.41.0";

export const CHART_VALUE_KEYS: Readonly<Record<string, "value" | "any">> = {
    // Maps the chart renders whole with toYaml: any Kubernetes field is valid below them.
    podSecurityContext: "any",
    containerSecurityContext: "any",
    "dashboard.podSecurityContext": "any",
    "controller.livenessProbe": "any",
    "controller.readinessProbe": "any",
    "apiVersionOverrides.ingress": "value",
    clusterInstall: "value",
    "controller.affinity": "any",
    "controller.albTagKeyResourceID": "value",
    "controller.awsTargetGroupBindingAPIVersion": "value",
    "controller.awsVerifyTargetGroup": "value",
    "controller.component": "value",
    "controller.containerPorts.healthz": "value",
    "controller.containerPorts.metrics": "value",
    "controller.createClusterRole": "value",
    "controller.createConfigmap": "value",
    "controller.deploymentAnnotations": "any",
    "controller.deploymentLabels": "any",
    "controller.extraArgs": "any",
    "controller.extraContainers": "any",
    "controller.extraEnv": "any",
    "controller.image.pullPolicy": "value",
    "controller.image.registry": "value",
    "controller.image.repository": "value",
    "controller.image.tag": "value",
    "controller.initContainers": "any",
    "controller.lifecycle": "any",
    "controller.logging.format": "value",
    "controller.logging.kloglevel": "value",
    "controller.logging.level": "value",
    "controller.metricProviderPlugins": "any",
    "controller.metrics.enabled": "value",
    "controller.metrics.service.annotations": "any",
    "controller.metrics.service.port": "value",
    "controller.metrics.service.portName": "value",
    "controller.metrics.serviceMonitor.additionalAnnotations": "any",
    "controller.metrics.serviceMonitor.additionalLabels": "any",
    "controller.metrics.serviceMonitor.enabled": "value",
    "controller.metrics.serviceMonitor.metricRelabelings": "any",
    "controller.metrics.serviceMonitor.namespace": "value",
    "controller.metrics.serviceMonitor.relabelings": "any",
    "controller.metrics.serviceMonitor.tlsConfig": "any",
    "controller.nodeSelector": "any",
    "controller.pdb.annotations": "any",
    "controller.pdb.enabled": "value",
    "controller.pdb.labels": "any",
    "controller.pdb.maxUnavailable": "any",
    "controller.pdb.minAvailable": "any",
    "controller.podAnnotations": "any",
    "controller.podLabels": "any",
    "controller.pprofAddress": "value",
    "controller.priorityClassName": "value",
    "controller.replicas": "value",
    "controller.resources": "any",
    "controller.selfServiceNotification": "value",
    "controller.stepPlugins": "any",
    "controller.terminationGracePeriodSeconds": "value",
    "controller.tolerations": "any",
    "controller.topologySpreadConstraints": "any",
    "controller.trafficRouterPlugins": "any",
    "controller.volumeMounts": "any",
    "controller.volumes": "any",
    crdAnnotations: "any",
    createClusterAggregateRoles: "value",
    "dashboard.affinity": "any",
    "dashboard.component": "value",
    "dashboard.containerSecurityContext": "any",
    "dashboard.createClusterRole": "value",
    "dashboard.deploymentAnnotations": "any",
    "dashboard.deploymentLabels": "any",
    "dashboard.enabled": "value",
    "dashboard.extraArgs": "any",
    "dashboard.extraEnv": "any",
    "dashboard.httproute.annotations": "any",
    "dashboard.httproute.enabled": "value",
    "dashboard.httproute.hostnames": "any",
    "dashboard.httproute.labels": "any",
    "dashboard.httproute.parentRefs": "any",
    "dashboard.httproute.rules": "any",
    "dashboard.image.pullPolicy": "value",
    "dashboard.image.registry": "value",
    "dashboard.image.repository": "value",
    "dashboard.image.tag": "value",
    "dashboard.ingress.annotations": "any",
    "dashboard.ingress.enabled": "value",
    "dashboard.ingress.extraPaths": "any",
    "dashboard.ingress.hosts": "any",
    "dashboard.ingress.ingressClassName": "value",
    "dashboard.ingress.labels": "any",
    "dashboard.ingress.pathType": "value",
    "dashboard.ingress.paths": "any",
    "dashboard.ingress.tls": "any",
    "dashboard.logging.kloglevel": "value",
    "dashboard.logging.level": "value",
    "dashboard.nodeSelector": "any",
    "dashboard.pdb.annotations": "any",
    "dashboard.pdb.enabled": "value",
    "dashboard.pdb.labels": "any",
    "dashboard.pdb.maxUnavailable": "any",
    "dashboard.pdb.minAvailable": "any",
    "dashboard.podAnnotations": "any",
    "dashboard.podLabels": "any",
    "dashboard.priorityClassName": "value",
    "dashboard.readonly": "value",
    "dashboard.replicas": "value",
    "dashboard.resources": "any",
    "dashboard.rootPath": "value",
    "dashboard.service.annotations": "any",
    "dashboard.service.externalIPs": "any",
    "dashboard.service.labels": "any",
    "dashboard.service.loadBalancerClass": "value",
    "dashboard.service.loadBalancerIP": "value",
    "dashboard.service.loadBalancerSourceRanges": "any",
    "dashboard.service.nodePort": "any",
    "dashboard.service.port": "value",
    "dashboard.service.portName": "value",
    "dashboard.service.targetPort": "value",
    "dashboard.service.type": "value",
    "dashboard.serviceAccount.annotations": "any",
    "dashboard.serviceAccount.create": "value",
    "dashboard.serviceAccount.name": "value",
    "dashboard.tolerations": "any",
    "dashboard.topologySpreadConstraints": "any",
    "dashboard.volumeMounts": "any",
    "dashboard.volumes": "any",
    extraObjects: "any",
    fullnameOverride: "any",
    "global.deploymentAnnotations": "any",
    "global.deploymentLabels": "any",
    "global.dnsConfig": "any",
    "global.revisionHistoryLimit": "value",
    imagePullSecrets: "any",
    installCRDs: "value",
    keepCRDs: "value",
    kubeVersionOverride: "value",
    nameOverride: "any",
    namespaceOverride: "value",
    "notifications.configmap.create": "value",
    "notifications.notifiers": "any",
    "notifications.secret.annotations": "any",
    "notifications.secret.create": "value",
    "notifications.secret.items": "any",
    "notifications.subscriptions": "any",
    "notifications.templates": "any",
    "notifications.triggers": "any",
    podAnnotations: "any",
    podLabels: "any",
    "providerRBAC.additionalRules": "any",
    "providerRBAC.enabled": "value",
    "providerRBAC.providers.ambassador": "value",
    "providerRBAC.providers.apisix": "value",
    "providerRBAC.providers.awsAppMesh": "value",
    "providerRBAC.providers.awsLoadBalancerController": "value",
    "providerRBAC.providers.contour": "value",
    "providerRBAC.providers.gatewayAPI": "value",
    "providerRBAC.providers.glooPlatform": "value",
    "providerRBAC.providers.istio": "value",
    "providerRBAC.providers.smi": "value",
    "providerRBAC.providers.traefik": "value",
    "serviceAccount.annotations": "any",
    "serviceAccount.create": "value",
    "serviceAccount.name": "value",
    serviceAnnotations: "any",
};

/** Paths (dotted) of every key in `values` that the chart does not define. */
export function unknownChartValueKeys(values: Record<string, unknown>, known: Readonly<Record<string, "value" | "any">> = CHART_VALUE_KEYS): string[] {
    const branches = new Set<string>();
    for (const key of Object.keys(known)) {
        const parts = key.split(".");
        for (let i = 1; i < parts.length; i++) {
            branches.add(parts.slice(0, i).join("."));
        }
    }
    const unknown: string[] = [];
    const walk = (obj: Record<string, unknown>, prefix: string) => {
        for (const [k, v] of Object.entries(obj)) {
            const path = prefix ? `${prefix}.${k}` : k;
            if (known[path] !== undefined) {
                continue;
            }
            if (branches.has(path) && v !== null && typeof v === "object" && !Array.isArray(v)) {
                walk(v as Record<string, unknown>, path);
                continue;
            }
            unknown.push(path);
        }
    };
    walk(values, "");
    return unknown;
}
