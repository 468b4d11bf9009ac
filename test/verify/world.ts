/**
 * A healthy hub cluster after `pulumi up`, for the fake API server: recorded shapes of real
 * objects (fixtures/) around the specs the program declares for the test configuration, and an
 * RBAC authorizer that grants what the cluster's roles grant.
 */
import * as fs from "fs";
import * as path from "path";
import { applicationSetPatch, argocdCmIgnoreData, expandAllKinds, HTTPROUTE_WEIGHTS_RULE, projectWhitelist, ROLLOUT_ACTIONS_POLICY_KEY, rolloutActionsPolicyCsv } from "../../components/argocd";
import { AddonConfig, parseAddonConfig } from "../../components/config";
import { approvalRoles } from "../../components/delivery/strategy";
import { spokeRouteName, spokeRouteSpec } from "../../components/gateway/spokeRoutes";
import { inClusterMimirAddress } from "../../components/mimir";
import { kyvernoPolicies, pdbGenerationRules, policyContext } from "../../components/policy";
import { clusterAnalysisTemplateSpec, controllerClusterRules, controllerNamespaceRules, controllerValues, errorBudgetTemplateSpec, PLUGINS_DIGEST_ANNOTATION, PolicyRule, ROLLOUTS_CRDS, sharedTemplates } from "../../components/rollouts";
import { SMOKE_APP, smokePodTemplate } from "../../components/smoke";
import type { KubeObject } from "../../tools/verify/cluster";
import { hubConfig, merged } from "../harness";
import type { FakeWorld, ReviewSpec } from "./fakeApiServer";

export const NOW = new Date("2026-06-27T13:10:00Z");
export const SMOKE_REVISION = "9f2c4e1a";
export const SMOKE_IMAGE = `registry.test.example/mirror/argoproj/rollouts-demo@sha256:${"c".repeat(64)}`;
export const LOAD_IMAGE = `registry.test.example/mirror/curlimages/curl@sha256:${"d".repeat(64)}`;

export function fixture<T = KubeObject>(name: string): T {
    return JSON.parse(fs.readFileSync(path.join(__dirname, "fixtures", name), "utf8")) as T;
}

/** The test hub: one spoke with the read path, ArgoCD projects, an ApplicationSet, RBAC, the smoke canary. */
export function verifyConfig(patch: Record<string, unknown> = {}): AddonConfig {
    const raw = merged(
        merged(hubConfig(), {
            spokes: [{ name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.test.example", query: true }],
            argocd: {
                projects: { tenants: { owner: "addon", namespaceResources: [{ group: "", kind: "Service" }, { group: "apps", kind: "Deployment" }, { group: "gateway.networking.k8s.io", kind: "HTTPRoute" }] } },
                applicationSets: { "tenant-apps": { owner: "addon", syncOptions: ["CreateNamespace=true"] } },
                rbac: { approverRole: "role:approver", deployerRoles: ["role:deployer"] },
            },
            smokeTest: { enabled: true, hostname: "smoke.hub.test.example", image: SMOKE_IMAGE, loadImage: LOAD_IMAGE },
        }),
        patch,
    );
    const { "aws:region": region, ...rest } = raw;
    return parseAddonConfig("hub", rest, { awsRegion: String(region) });
}

/** A grant the fake authorizer evaluates: a subject, its rules, where they apply, and RBAC's reason. */
export interface Grant {
    user?: string;
    group?: string;
    /** Unset: every namespace (a ClusterRoleBinding). */
    namespace?: string;
    rules: PolicyRule[];
    reason: string;
}

/** Kubernetes RBAC rule matching, restated for the fake authorizer (evaluation_helpers.go). */
function grants(rule: PolicyRule, a: NonNullable<ReviewSpec["resourceAttributes"]>): boolean {
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    return (
        (rule.verbs.includes("*") || rule.verbs.includes(a.verb ?? "")) &&
        (rule.apiGroups.includes("*") || rule.apiGroups.includes(a.group ?? "")) &&
        rule.resources.some((r) => r === "*" || r === resource) &&
        (!rule.resourceNames?.length || rule.resourceNames.includes(a.name ?? ""))
    );
}

export function authorizer(list: Grant[]): NonNullable<FakeWorld["authorize"]> {
    return (spec) => {
        const a = spec.resourceAttributes ?? {};
        for (const g of list) {
            const who = (g.user !== undefined && g.user === spec.user) || (g.group !== undefined && (spec.groups ?? []).includes(g.group));
            const where = g.namespace === undefined || (a.namespace !== undefined && a.namespace === g.namespace);
            if (who && where && g.rules.some((r) => grants(r, a))) {
                return { allowed: true, reason: g.reason };
            }
        }
        return { allowed: false, reason: "" };
    };
}

const READ_ROLLOUTS: PolicyRule = { apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: ["get", "list", "watch"] };

export interface HubWorld extends FakeWorld {
    grants: Grant[];
}

const withStatus = (o: KubeObject, status: unknown): KubeObject => ({ ...o, status });

export function healthyHub(config: AddonConfig): HubWorld {
    const ns = config.controller.namespace;
    const objects: KubeObject[] = [];
    const crd = fixture("crd.json");
    for (const c of ROLLOUTS_CRDS) {
        objects.push({ ...crd, metadata: { ...crd.metadata, name: c.name } });
    }
    objects.push(fixture("controller-deployment.json"));
    const digest = (controllerValues(config).controller as { podAnnotations: Record<string, string> }).podAnnotations[PLUGINS_DIGEST_ANNOTATION];
    const pod = fixture("controller-pod.json");
    for (const name of ["argo-rollouts-7c9d5f8b64-x2k8q", "argo-rollouts-7c9d5f8b64-p7m4n"]) {
        objects.push({ ...pod, metadata: { ...pod.metadata, name, annotations: { ...pod.metadata?.annotations, [PLUGINS_DIGEST_ANNOTATION]: digest } } });
    }
    const lease = fixture("lease.json");
    objects.push({ ...lease, spec: { ...(lease.spec as object), renewTime: new Date(NOW.getTime() - 4000).toISOString() } });
    objects.push(fixture("argo-rollouts-config.json"));
    objects.push(...fixture<KubeObject[]>("kyverno-deployments.json"));

    const celStatus = fixture("cel-policy-status-ready.json");
    const cpolStatus = fixture("cluster-policy-status-ready.json");
    for (const p of kyvernoPolicies(config.policy, policyContext(config))) {
        objects.push({ ...(p as unknown as KubeObject), metadata: { ...p.metadata, uid: `uid-${p.metadata.name}`, generation: 1 }, status: p.kind === "ClusterPolicy" ? cpolStatus : celStatus });
    }
    objects.push(fixture("tenant-rollout.json"), fixture("generated-pdb.json"), fixture("clusterrole-edit.json"), ...fixture<KubeObject[]>("rolebindings.json"));

    const argo = config.argocd;
    const project = fixture("appproject.json");
    objects.push({ ...project, spec: { ...(project.spec as object), namespaceResourceWhitelist: projectWhitelist(argo.projects[0].namespaceResources) } });
    const template = applicationSetPatch(argo.applicationSets[0], argo.namespace, argo.allKinds).spec.template;
    const appSet = fixture("applicationset.json");
    const setTemplate = (appSet.spec as { template: { metadata: Record<string, unknown>; spec: Record<string, unknown> } }).template;
    objects.push({
        ...appSet,
        spec: {
            ...(appSet.spec as object),
            template: {
                metadata: { ...setTemplate.metadata, annotations: template.metadata.annotations },
                spec: { ...setTemplate.spec, syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: template.spec.syncPolicy.syncOptions }, ignoreDifferences: template.spec.ignoreDifferences },
            },
        },
    });
    const app = fixture("application.json");
    objects.push({
        ...app,
        metadata: { ...app.metadata, annotations: template.metadata.annotations },
        spec: { ...(app.spec as object), syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: template.spec.syncPolicy.syncOptions }, ignoreDifferences: template.spec.ignoreDifferences },
    });
    const cm = fixture("argocd-cm.json");
    objects.push({ ...cm, data: { ...(cm.data as object), ...argocdCmIgnoreData([HTTPROUTE_WEIGHTS_RULE, ...expandAllKinds(argo.ignoreDifferences, argo.allKinds)]) } });
    const rbacCm = fixture("argocd-rbac-cm.json");
    objects.push({ ...rbacCm, data: { ...(rbacCm.data as object), [ROLLOUT_ACTIONS_POLICY_KEY]: rolloutActionsPolicyCsv(argo.rbac) } });

    const address = inClusterMimirAddress(config.metrics.mimir);
    const cat = fixture("cluster-analysis-template.json");
    for (const t of sharedTemplates(config.metrics.analysis)) {
        objects.push({ ...cat, metadata: { ...cat.metadata, name: t.name }, spec: clusterAnalysisTemplateSpec(t, config.metrics.analysis, address, config.cluster.mimirTenant) });
    }
    objects.push({ ...cat, metadata: { ...cat.metadata, name: "error-budget" }, spec: errorBudgetTemplateSpec(config.delivery.errorBudget, address, config.cluster.mimirTenant) });
    const mimir = config.metrics.mimir;
    for (const spoke of config.metrics.spokes) {
        objects.push({
            apiVersion: "gateway.networking.k8s.io/v1",
            kind: "HTTPRoute",
            metadata: { name: spokeRouteName(spoke), namespace: mimir.spokeRouteNamespace, generation: 1 },
            spec: spokeRouteSpec(spoke, mimir),
            status: fixture("spoke-route-status.json"),
        });
    }
    const smoke = config.delivery.smokeTest;
    objects.push({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Rollout",
        metadata: { name: SMOKE_APP, namespace: smoke.namespace, generation: 4, labels: { "app.kubernetes.io/name": SMOKE_APP } },
        spec: { replicas: smoke.replicas, template: smokePodTemplate(smoke, SMOKE_REVISION) },
        status: fixture("smoke-status-promoted.json"),
    });
    objects.push(fixture("smoke-route.json"));

    const deployer = approvalRoles({ name: "payments-api", namespace: "payments-prod" });
    const grantList: Grant[] = [
        { user: `system:serviceaccount:${ns}:argo-rollouts`, rules: controllerClusterRules(config.plugin), reason: 'RBAC: allowed by ClusterRoleBinding "argo-rollouts" of ClusterRole "argo-rollouts" to ServiceAccount "argo-rollouts/argo-rollouts"' },
        { user: `system:serviceaccount:${ns}:argo-rollouts`, namespace: ns, rules: controllerNamespaceRules(), reason: 'RBAC: allowed by RoleBinding "argo-rollouts/argo-rollouts" of Role "argo-rollouts" to ServiceAccount "argo-rollouts/argo-rollouts"' },
        { user: "system:serviceaccount:kyverno:kyverno-background-controller", rules: [READ_ROLLOUTS, ...pdbGenerationRules()], reason: 'RBAC: allowed by ClusterRoleBinding "kyverno:background-controller" of ClusterRole "kyverno:background-controller" to ServiceAccount "kyverno-background-controller/kyverno"' },
        { user: "system:serviceaccount:kyverno:kyverno-reports-controller", rules: [READ_ROLLOUTS], reason: 'RBAC: allowed by ClusterRoleBinding "kyverno:reports-controller:view" of ClusterRole "view" to ServiceAccount "kyverno-reports-controller/kyverno"' },
        { group: "alpha-team", namespace: "alpha-shop-prod", rules: fixture<{ rules: PolicyRule[] }>("clusterrole-edit.json").rules, reason: fixture<{ reason: string }>("sar-allowed-by-edit.json").reason },
        { group: "payments-deployers", namespace: "payments-prod", rules: deployer.deployer.rules, reason: 'RBAC: allowed by RoleBinding "payments-api-rollout-deployer/payments-prod" of Role "payments-api-rollout-deployer" to Group "payments-deployers"' },
        { user: "system:serviceaccount:argocd:argocd-application-controller", namespace: "payments-prod", rules: deployer.deployer.rules, reason: 'RBAC: allowed by RoleBinding "payments-api-rollout-deployer/payments-prod" of Role "payments-api-rollout-deployer" to ServiceAccount "argocd-application-controller/argocd"' },
        { group: "payments-approvers", namespace: "payments-prod", rules: deployer.approver.rules, reason: 'RBAC: allowed by RoleBinding "payments-api-rollout-approver/payments-prod" of Role "payments-api-rollout-approver" to Group "payments-approvers"' },
    ];
    const world: HubWorld = {
        objects,
        grants: grantList,
        authorize: (spec) => authorizer(world.grants)(spec),
        proxy: (req) => {
            const tenantOk = req.headers["x-scope-orgid"] === config.cluster.mimirTenant;
            if (req.namespace === mimir.namespace && req.service === mimir.gatewayService && req.port === String(mimir.gatewayServicePort) && req.path === "/prometheus/api/v1/query" && tenantOk) {
                return { status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) };
            }
            return fixture<{ status: number; body: string }>("mimir-no-org-id.json");
        },
    };
    return world;
}

/** The object of `kind` and `name` in the world (throws when absent). */
export function find(world: FakeWorld, kind: string, name: string): KubeObject {
    const o = world.objects.find((x) => x.kind === kind && x.metadata?.name === name);
    if (!o) {
        throw new Error(`no ${kind} ${name} in the test world`);
    }
    return o;
}

export function replace(world: FakeWorld, kind: string, name: string, next: (o: KubeObject) => KubeObject): void {
    const i = world.objects.findIndex((x) => x.kind === kind && x.metadata?.name === name);
    if (i < 0) {
        throw new Error(`no ${kind} ${name} in the test world`);
    }
    world.objects[i] = next(world.objects[i]);
}

export { withStatus };
