/**
 * A healthy cluster after `pulumi up` of a stack, for the fake API server: recorded shapes of real
 * objects (fixtures/) around the specs the program declares for the configuration, stored as the
 * API server stores them (CRD defaults filled in, server fields set), and an RBAC authorizer that
 * grants what the cluster's roles grant.
 */
import { tenantViewRole } from "../../components/rollouts/tenants";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import {
    applicationSetPatch,
    argocdCmIgnoreData,
    expandAllKinds,
    projectWhitelist,
    ROLLOUT_ACTIONS_POLICY_KEY,
    ROLLOUT_PROJECT_KINDS,
    rolloutActionsPolicyCsv,
    tenantSyncSettings,
} from "../../components/argocd";
import { AddonConfig, parseAddonConfig } from "../../stacks/config";
import { approvalRoles } from "../../components/delivery/approval";
import { DeliveryPlan, deliveryPlan } from "../../components/delivery/strategy";
import { spokeRoutes } from "../../components/gateway/spokeRoutes";
import { inClusterMimirAddress } from "../../components/mimir";
import {
    KYVERNO_AGGREGATE_LABELS,
    KyvernoPolicy,
    kyvernoPolicies,
    kyvernoRoleName,
    kyvernoRoles,
    pdbGenerationRules,
    policyContext,
} from "../../components/policy";
import {
    clusterAnalysisTemplateSpec,
    controllerClusterRules,
    controllerNamespaceRules,
    controllerValues,
    errorBudgetTemplates,
    pluginImage,
    PolicyRule,
    ROLLOUTS_CRDS,
    sharedTemplates,
} from "../../components/rollouts";
import { READ_CA_CONFIGMAP, controllerTrust } from "../../components/rollouts/trust";
import { SMOKE_APP, smokeApp, smokePodTemplate, smokeStrategyOptions } from "../../components/smoke";
import { gateRunTypes } from "../../tools/verify/checks/smoke";
import { PART_OF } from "../../components/stage";
import type { KubeObject } from "../../tools/verify/cluster";
import { CONTROLLER_CONTAINER, expectedControllerImage } from "../../tools/verify/checks/controller";
import { configFromStackFile, readStackFile } from "../../tools/stackFile";
import { FIXTURE_STACKS, hubConfig, merged } from "../harness";
import type { FakeWorld, ReviewSpec } from "./fakeApiServer";

export const NOW = new Date("2026-06-27T13:10:00Z");
export const SMOKE_REVISION = "9f2c4e1a";
export const SMOKE_IMAGE = `registry.platform.test/mirror/argoproj/rollouts-demo@sha256:${"c".repeat(64)}`;
export const LOAD_IMAGE = `registry.platform.test/mirror/curlimages/curl@sha256:${"d".repeat(64)}`;
/** A regulated app of the test cluster (namespace payments-prod carries the regulated label). */
export const REGULATED_APP = { name: "payments-api", namespace: "payments-prod" };

export function fixture<T = KubeObject>(name: string): T {
    return JSON.parse(fs.readFileSync(path.join(__dirname, "fixtures", name), "utf8")) as T;
}

/**
 * The test hub where this stack owns what it can: ADR-085's policies (`own`), the ArgoCD project
 * and ApplicationSet (`owner: addon`), an argocd-cm system rule, the spoke's whole route
 * (`pushRouteOwner: addon`), regulated prod, and the smoke canary.
 */
export function verifyConfig(patch: Record<string, unknown> = {}): AddonConfig {
    const raw = merged(
        merged(hubConfig(), {
            spokes: [{ name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.test.example", query: true }],
            policy: {
                availabilityPolicies: "own",
                regulated: {
                    namespaceLabels: { "platform.test/compliance": "regulated" },
                    approverGroups: ["payments-approvers"],
                    deployerGroups: ["payments-deployers"],
                    gitopsServiceAccounts: ["argocd/argocd-application-controller"],
                    actionServiceAccounts: ["argocd/argocd-server"],
                },
            },
            argocd: {
                projects: {
                    tenants: {
                        owner: "addon",
                        namespaceResources: [
                            { group: "", kind: "Service" },
                            { group: "apps", kind: "Deployment" },
                            { group: "gateway.networking.k8s.io", kind: "HTTPRoute" },
                        ],
                    },
                },
                applicationSets: { "tenant-apps": { owner: "addon", syncOptions: ["CreateNamespace=true"] } },
                ignoreDifferences: [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }],
                rbac: { approverRole: "role:approver", deployerRoles: ["role:deployer"], regulatedProjects: ["tenants"] },
            },
            smokeTest: { enabled: true, hostname: "smoke.hub.test.example", image: SMOKE_IMAGE, loadImage: LOAD_IMAGE },
        }),
        patch,
    );
    const { "aws:region": region, ...rest } = raw;
    return parseAddonConfig("hub", rest, { awsRegion: String(region) });
}

/** A fixture stack file's configuration (test/fixtures/stacks), read and validated as `npm run verify` reads it. */
export function fixtureConfig(stack: string): AddonConfig {
    return configFromStackFile(readStackFile(stack, FIXTURE_STACKS));
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

export interface ClusterWorld extends FakeWorld {
    grants: Grant[];
}

export const withStatus = (o: KubeObject, status: unknown): KubeObject => ({ ...o, status });

const setIfAbsent = (obj: Record<string, unknown>, key: string, value: unknown) => {
    if (obj[key] === undefined) {
        obj[key] = value;
    }
};

/**
 * A Kyverno policy as the API server stores it: the defaults of its CRD's schema filled in where
 * the program sets nothing (shared/schemas policies.kyverno.io/*_v1.json, kyverno.io/clusterpolicy_v1.json:
 * `evaluation.admission.enabled`, `evaluation.orphanDownstreamOnPolicyDelete.enabled`,
 * `spec.admission`, `spec.emitWarning`, `rules[].skipBackgroundRequests`,
 * `validate.allowExistingViolations`, `context[].apiCall.method`), and server metadata.
 */
export function storedPolicy(p: KyvernoPolicy): KubeObject {
    const o = JSON.parse(JSON.stringify(p)) as KubeObject & { spec: Record<string, unknown> };
    if (o.kind === "ClusterPolicy") {
        setIfAbsent(o.spec, "admission", true);
        setIfAbsent(o.spec, "emitWarning", false);
        for (const rule of o.spec.rules as Record<string, unknown>[]) {
            setIfAbsent(rule, "skipBackgroundRequests", true);
            if (rule.validate) {
                setIfAbsent(rule.validate as Record<string, unknown>, "allowExistingViolations", true);
            }
            for (const c of (rule.context as Record<string, unknown>[] | undefined) ?? []) {
                if (c.apiCall) {
                    setIfAbsent(c.apiCall as Record<string, unknown>, "method", "GET");
                }
            }
        }
    } else {
        const evaluation = (o.spec.evaluation ?? {}) as Record<string, unknown>;
        o.spec.evaluation = evaluation;
        setIfAbsent(evaluation, "admission", { enabled: true });
        if (o.kind === "GeneratingPolicy") {
            setIfAbsent(evaluation, "orphanDownstreamOnPolicyDelete", { enabled: false });
        }
    }
    o.metadata = { ...o.metadata, uid: `uid-${p.metadata.name}`, generation: 1, creationTimestamp: "2026-06-26T09:15:39Z" };
    o.status = p.kind === "ClusterPolicy" ? fixture("cluster-policy-status-ready.json") : fixture("cel-policy-status-ready.json");
    return o;
}

/** The Kyverno ServiceAccount of a controller (the chart's `<release>-<component>`). */
export const kyvernoAccount = (component: string): string => `system:serviceaccount:kyverno:kyverno-${component}`;
const COMPONENT = { admission: "admission-controller", background: "background-controller", reports: "reports-controller" } as const;

/** The smoke app's delivery plan, as stacks/program.ts has the smoke stage build it (gate timing = `analysis`). */
export const smokePlan = (config: AddonConfig): DeliveryPlan =>
    deliveryPlan(smokeApp(config.smokeTest, config.gateway), smokeStrategyOptions(config.smokeTest, config.analysis, config.delivery.prod.standard));

/**
 * Sets the smoke Rollout's status and what the controller writes with it: the Services' selectors
 * (canary: stable on stableRS, canary on the current hash; blue/green: active on
 * `status.blueGreen.activeSelector`, preview on `previewSelector`) and, for a canary, the route's
 * weights back at 100/0 once promoted or aborted.
 */
export function setSmokeStatus(world: FakeWorld, config: AddonConfig, status: Record<string, unknown>, generation?: number): void {
    const ns = config.smokeTest.namespace;
    patch(world, "Rollout", SMOKE_APP, (o) => ({ ...o, metadata: { ...o.metadata, ...(generation ? { generation } : {}) }, status }));
    const plan = smokePlan(config);
    const bg = (status.blueGreen ?? {}) as Record<string, string>;
    const selectors: Record<string, string | undefined> =
        "blueGreen" in plan.strategy
            ? { [plan.strategy.blueGreen.activeService]: bg.activeSelector, [plan.strategy.blueGreen.previewService]: bg.previewSelector }
            : {
                  [plan.strategy.canary.stableService ?? ""]: status.stableRS as string,
                  [plan.strategy.canary.canaryService ?? ""]: status.currentPodHash as string,
              };
    for (const [name, hash] of Object.entries(selectors)) {
        const i = world.objects.findIndex((o) => o.kind === "Service" && o.metadata?.namespace === ns && o.metadata?.name === name);
        if (i >= 0 && hash) {
            const s = world.objects[i];
            world.objects[i] = {
                ...s,
                spec: { ...(s.spec as object), selector: { ...((s.spec as { selector: object }).selector ?? {}), "rollouts-pod-template-hash": hash } },
            };
        }
    }
}

/** The healthy cluster of a stack: everything its `pulumi up` declares, and what runs around it. */
export function healthyCluster(config: AddonConfig): ClusterWorld {
    const ns = config.controller.namespace;
    const objects: KubeObject[] = [...fixture<KubeObject[]>("namespaces.json")];
    const crd = fixture("crd.json");
    for (const c of ROLLOUTS_CRDS) {
        objects.push({ ...crd, metadata: { ...crd.metadata, name: c.name } });
    }

    // The controller, as the chart renders it from the program's values.
    const values = controllerValues(config);
    const image = expectedControllerImage(values);
    const initImage = pluginImage(config.plugin, config.imageRegistry);
    const deployment = fixture("controller-deployment.json");
    const podSpec = {
        serviceAccountName: "argo-rollouts",
        containers: [{ name: CONTROLLER_CONTAINER, image }],
        ...(initImage ? { initContainers: [{ name: "gatewayapi-plugin", image: initImage }] } : {}),
    };
    objects.push({
        ...deployment,
        spec: {
            ...(deployment.spec as object),
            replicas: config.controller.replicas,
            template: { ...(deployment.spec as { template: object }).template, spec: podSpec },
        },
    });
    const podAnnotations = (values.controller as { podAnnotations: Record<string, string> }).podAnnotations;
    // A spoke's read-endpoint CA bundle, as the chart renders controller.extraEnv, volumeMounts
    // and volumes into the pod (argo-helm charts/argo-rollouts templates/controller/deployment.yaml).
    const trust = controllerTrust(config.mimir.readCaBundle);
    const pod = fixture("controller-pod.json");
    for (const name of ["argo-rollouts-7c9d5f8b64-x2k8q", "argo-rollouts-7c9d5f8b64-p7m4n"]) {
        const containers = (pod.spec as { containers: Record<string, unknown>[] }).containers.map((c) => ({
            ...c,
            image,
            ...(trust ? { env: trust.extraEnv, volumeMounts: trust.volumeMounts } : {}),
        }));
        objects.push({
            ...pod,
            metadata: { ...pod.metadata, name, annotations: { ...pod.metadata?.annotations, ...podAnnotations } },
            spec: {
                ...(pod.spec as object),
                containers,
                ...(initImage ? { initContainers: [{ name: "gatewayapi-plugin", image: initImage }] } : {}),
                ...(trust ? { volumes: trust.volumes } : {}),
            },
        });
    }
    if (trust) {
        objects.push({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: READ_CA_CONFIGMAP, namespace: ns, uid: "uid-read-ca" },
            data: trust.configMapData,
        });
    }
    const lease = fixture("lease.json");
    objects.push({ ...lease, spec: { ...(lease.spec as object), renewTime: new Date(NOW.getTime() - 4000).toISOString() } });
    const pluginsConfig = fixture("argo-rollouts-config.json");
    objects.push({
        ...pluginsConfig,
        data: { trafficRouterPlugins: YAML.stringify((values.controller as { trafficRouterPlugins: unknown }).trafficRouterPlugins) },
    });
    objects.push(...fixture<KubeObject[]>("kyverno-deployments.json"));
    // Kyverno's configuration as a platform with regulated namespaces sets it: the chart's
    // resourceFilters without its ReplicaSet entries, so the approval guards see ReplicaSets.
    objects.push(fixture("kyverno-configmap.json"));

    // The policy stage for its mode, and in complement mode the platform's own ADR-085 policies.
    const policy = config.policy;
    for (const p of kyvernoPolicies(policy, policyContext(config))) {
        objects.push(storedPolicy(p));
    }
    if (policy.availabilityPolicies === "complement") {
        objects.push(...fixture<KubeObject[]>("platform-availability-clusterpolicies.json"));
    }
    const grantList: Grant[] = [
        {
            user: `system:serviceaccount:${ns}:argo-rollouts`,
            rules: controllerClusterRules(config.plugin),
            reason: 'RBAC: allowed by ClusterRoleBinding "argo-rollouts" of ClusterRole "argo-rollouts" to ServiceAccount "argo-rollouts/argo-rollouts"',
        },
        {
            user: `system:serviceaccount:${ns}:argo-rollouts`,
            namespace: ns,
            rules: controllerNamespaceRules(),
            reason: 'RBAC: allowed by RoleBinding "argo-rollouts/argo-rollouts" of Role "argo-rollouts" to ServiceAccount "argo-rollouts/argo-rollouts"',
        },
    ];
    for (const role of kyvernoRoles(policy)) {
        const name = kyvernoRoleName(role);
        objects.push({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: {
                name,
                uid: `uid-${role.name}`,
                labels: { ...PART_OF, ...Object.fromEntries(role.controllers.map((c) => [KYVERNO_AGGREGATE_LABELS[c], "true"])) },
                annotations: { "argo-rollouts-addon.platform/why": role.why },
            },
            rules: role.rules,
        });
        // Kyverno's chart aggregates the labelled role into each controller's ClusterRole.
        for (const c of role.controllers) {
            grantList.push({
                user: kyvernoAccount(COMPONENT[c]),
                rules: role.rules,
                reason: `RBAC: allowed by ClusterRoleBinding "kyverno:${COMPONENT[c]}" of ClusterRole "kyverno:${COMPONENT[c]}" to ServiceAccount "kyverno-${COMPONENT[c]}/kyverno"`,
            });
        }
    }
    if (policy.availabilityPolicies === "complement") {
        grantList.push({
            user: kyvernoAccount(COMPONENT.background),
            rules: pdbGenerationRules(),
            reason: 'RBAC: allowed by ClusterRoleBinding "kyverno:background-controller" of ClusterRole "kyverno:background-controller" to ServiceAccount "kyverno-background-controller/kyverno"',
        });
    }

    // Tenant read: the stage's view role, and `view` as the aggregation controller fills it from it.
    const tenantView = tenantViewRole();
    objects.push({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { ...tenantView.metadata, uid: "uid-tenant-view" },
        rules: tenantView.rules,
    });
    objects.push({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "view", uid: "uid-view" },
        rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] }, ...tenantView.rules],
    });

    // Tenants: a canary Rollout with its generated budget, an editor binding, a regulated app.
    objects.push(
        fixture("tenant-rollout.json"),
        fixture("generated-pdb.json"),
        fixture("clusterrole-edit.json"),
        ...fixture<KubeObject[]>("rolebindings.json"),
    );
    grantList.push({
        group: "alpha-team",
        namespace: "alpha-shop-prod",
        rules: fixture<{ rules: PolicyRule[] }>("clusterrole-edit.json").rules,
        reason: fixture<{ reason: string }>("sar-allowed-by-edit.json").reason,
    });
    const groups = policy.regulated ?? { approverGroups: [], deployerGroups: [] };
    const approval = approvalRoles(REGULATED_APP, groups);
    objects.push(approval.approver as unknown as KubeObject, approval.deployer as unknown as KubeObject, ...(approval.bindings as unknown as KubeObject[]));
    for (const b of approval.bindings) {
        const role = b.roleRef.name === approval.approver.metadata.name ? approval.approver : approval.deployer;
        for (const s of b.subjects) {
            grantList.push({
                group: s.name,
                namespace: REGULATED_APP.namespace,
                rules: role.rules,
                reason: `RBAC: allowed by RoleBinding "${b.metadata.name}/${REGULATED_APP.namespace}" of Role "${role.metadata.name}" to Group "${s.name}"`,
            });
        }
    }
    // ArgoCD's application controller may do anything (its upstream ClusterRole): a GitOps identity.
    grantList.push({
        user: "system:serviceaccount:argocd:argocd-application-controller",
        rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
        reason: fixture<{ reason: string }>("sar-allowed-by-deployer-clusterrole.json").reason,
    });

    // ArgoCD, on the cluster where it runs: owned objects as patched, kept ones as their owner keeps them.
    const argo = config.argocd;
    if (argo.local) {
        const settings = tenantSyncSettings({ ignoreDifferences: [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }] });
        for (const p of argo.projects) {
            const project = fixture("appproject.json");
            const whitelist =
                p.owner === "addon"
                    ? projectWhitelist(p.namespaceResources)
                    : [{ group: "", kind: "Service" }, { group: "apps", kind: "*" }, ...ROLLOUT_PROJECT_KINDS];
            // A project that is not regulated keeps out of the regulated namespace ("!" refuses one).
            const destinations = (project.spec as { destinations: { namespace: string; server: string }[] }).destinations;
            const keepOut = argo.rbac.regulatedProjects.includes(p.name) ? [] : [{ namespace: `!${REGULATED_APP.namespace}`, server: destinations[0].server }];
            objects.push({
                ...project,
                metadata: { ...project.metadata, name: p.name, namespace: argo.namespace },
                spec: { ...(project.spec as object), namespaceResourceWhitelist: whitelist, destinations: [...destinations, ...keepOut] },
            });
        }
        // ArgoCD's application controller and API server, each as its own ServiceAccount.
        objects.push(...fixture<KubeObject[]>("argocd-workloads.json").map((w) => ({ ...w, metadata: { ...w.metadata, namespace: argo.namespace } })));
        const app = fixture("application.json");
        for (const set of argo.applicationSets) {
            const template =
                set.owner === "addon"
                    ? applicationSetPatch(set, argo.namespace, argo.allKinds).spec.template
                    : {
                          metadata: { annotations: settings.annotations },
                          spec: { syncPolicy: { syncOptions: settings.syncOptions }, ignoreDifferences: settings.ignoreDifferences },
                      };
            const appSet = fixture("applicationset.json");
            const setTemplate = (appSet.spec as { template: { metadata: Record<string, unknown>; spec: Record<string, unknown> } }).template;
            objects.push({
                ...appSet,
                metadata: { ...appSet.metadata, name: set.name, namespace: argo.namespace },
                spec: {
                    ...(appSet.spec as object),
                    template: {
                        metadata: { ...setTemplate.metadata, annotations: template.metadata.annotations },
                        spec: {
                            ...setTemplate.spec,
                            syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: template.spec.syncPolicy.syncOptions },
                            ignoreDifferences: template.spec.ignoreDifferences,
                        },
                    },
                },
            });
            objects.push({
                ...app,
                metadata: {
                    ...app.metadata,
                    namespace: argo.namespace,
                    annotations: template.metadata.annotations,
                    ownerReferences: (app.metadata?.ownerReferences ?? []).map((o) => ({ ...o, name: set.name })),
                },
                spec: {
                    ...(app.spec as object),
                    syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: template.spec.syncPolicy.syncOptions },
                    ignoreDifferences: template.spec.ignoreDifferences,
                },
            });
        }
        const cm = fixture("argocd-cm.json");
        objects.push({
            ...cm,
            metadata: { ...cm.metadata, namespace: argo.namespace },
            data: { ...(cm.data as object), ...argocdCmIgnoreData(expandAllKinds(argo.ignoreDifferences, argo.allKinds)) },
        });
        const rbacCm = fixture("argocd-rbac-cm.json");
        const csv = rolloutActionsPolicyCsv(argo.rbac);
        objects.push({
            ...rbacCm,
            metadata: { ...rbacCm.metadata, namespace: argo.namespace },
            data: { ...(rbacCm.data as object), ...(csv ? { [ROLLOUT_ACTIONS_POLICY_KEY]: csv } : {}) },
        });
    }

    // The metric path: the shared templates at the stack's address (a spoke's from its hub stack).
    const address =
        config.cluster.role === "hub"
            ? inClusterMimirAddress(config.mimir)
            : config.mimir.readEndpoint?.kind === "url"
              ? config.mimir.readEndpoint.url
              : HUB_READ_ENDPOINT;
    const cat = fixture("cluster-analysis-template.json");
    for (const t of sharedTemplates(config.analysis)) {
        objects.push({
            ...cat,
            metadata: { ...cat.metadata, name: t.name },
            spec: clusterAnalysisTemplateSpec(t, config.analysis, address, config.cluster.mimirTenant),
        });
    }
    for (const t of errorBudgetTemplates(config.errorBudget, config.analysis)) {
        objects.push({ ...cat, metadata: { ...cat.metadata, name: t.name }, spec: t.spec(address, config.cluster.mimirTenant) });
    }
    const mimir = config.mimir;
    if (config.cluster.role === "hub" && config.spokes.length > 0) {
        // The ingest Gateway the spoke routes attach to, and the observability module's ingest route
        // of each spoke whose push route it owns: remote write only, the spoke's tenant set.
        const gateway = fixture("gateway.json");
        objects.push({ ...gateway, metadata: { ...gateway.metadata, name: mimir.ingestGateway.name, namespace: mimir.ingestGateway.namespace } });
        for (const spoke of config.spokes.filter((s) => s.pushRouteOwner === "observability")) {
            objects.push(observabilityIngestRoute(config, spoke.name));
        }
    }
    for (const spoke of config.spokes) {
        for (const route of spokeRoutes(spoke, mimir)) {
            objects.push({
                apiVersion: "gateway.networking.k8s.io/v1",
                kind: "HTTPRoute",
                metadata: { name: route.name, namespace: mimir.spokeRouteNamespace, generation: 1, labels: { ...PART_OF } },
                spec: route.spec,
                status: fixture("spoke-route-status.json"),
            });
        }
    }

    // The smoke canary, promoted, with the Services and the route the controller keeps.
    const smoke = config.smokeTest;
    if (smoke.enabled) {
        const plan = smokePlan(config);
        objects.push({
            apiVersion: "argoproj.io/v1alpha1",
            kind: "Rollout",
            metadata: { name: SMOKE_APP, namespace: smoke.namespace, generation: 4, labels: { "app.kubernetes.io/name": SMOKE_APP } },
            spec: {
                replicas: smoke.replicas,
                revisionHistoryLimit: 3,
                selector: { matchLabels: { "app.kubernetes.io/name": SMOKE_APP } },
                template: smokePodTemplate(smoke, SMOKE_REVISION),
                strategy: plan.strategy,
            },
            status: {},
        });
        const service = fixture("smoke-service.json");
        for (const s of plan.services) {
            objects.push({
                ...service,
                metadata: { ...service.metadata, name: s.metadata.name, namespace: s.metadata.namespace },
                spec: { ...(service.spec as object), selector: { ...s.spec.selector } },
            });
        }
        objects.push({ ...fixture("smoke-route.json"), spec: plan.httpRoute!.spec });
    }

    const world: ClusterWorld = {
        objects,
        grants: grantList,
        authorize: (spec) => authorizer(world.grants)(spec),
        proxy: (req) => {
            const tenantOk = req.headers["x-scope-orgid"] === config.cluster.mimirTenant;
            if (
                req.namespace === mimir.namespace &&
                req.service === mimir.gatewayService &&
                req.port === String(mimir.gatewayServicePort) &&
                req.path === "/prometheus/api/v1/query" &&
                tenantOk
            ) {
                return { status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) };
            }
            return fixture<{ status: number; body: string }>("mimir-no-org-id.json");
        },
    };
    if (smoke.enabled) {
        const status = fixture<Record<string, unknown>>(smoke.strategy === "blueGreen" ? "smoke-status-bluegreen-promoted.json" : "smoke-status-promoted.json");
        setSmokeStatus(world, config, status);
        // The gates judged the promoted version: one Successful run of each gate type.
        const run = fixture<KubeObject>("analysisrun-failed.json");
        for (const type of gateRunTypes(smokePlan(config))) {
            world.objects.push({
                ...run,
                metadata: {
                    ...run.metadata,
                    name: `${SMOKE_APP}-${String(status.currentPodHash)}-${type.toLowerCase()}`,
                    labels: { ...run.metadata?.labels, "rollouts-pod-template-hash": String(status.currentPodHash), "rollout-type": type },
                },
                status: { phase: "Successful" },
            });
        }
    }
    return world;
}

/** The observability module's ingest route for a spoke of `config` (fixture), on the spoke's hostname, listener and tenant. */
export function observabilityIngestRoute(config: AddonConfig, spokeName: string): KubeObject {
    const spoke = config.spokes.find((s) => s.name === spokeName);
    if (!spoke) {
        throw new Error(`no spoke ${spokeName} in the test configuration`);
    }
    const route = fixture("observability-ingest-route.json");
    const gw = config.mimir.ingestGateway;
    const text = JSON.stringify(route)
        .replaceAll("mimir-preprod.hub.test.example", spoke.hostname)
        .replaceAll('"preprod"', JSON.stringify(spoke.tenant))
        .replace('"sectionName":"https"', `"sectionName":${JSON.stringify(spoke.listener ?? gw.listener)}`)
        .replace('"name":"internal","namespace":"gateway-system"', `"name":${JSON.stringify(gw.name)},"namespace":${JSON.stringify(gw.namespace)}`);
    const o = JSON.parse(text) as KubeObject;
    return { ...o, metadata: { ...o.metadata, name: `mimir-ingest-${spoke.name}`, namespace: config.mimir.namespace } };
}

/** Where a spoke's templates point when its stack names the hub stack (the hub's stack output). */
export const HUB_READ_ENDPOINT = "https://mimir-preprod.hub.platform.test/prometheus";

/** The object of `kind` and `name` in the world (throws when absent). */
export function find(world: FakeWorld, kind: string, name: string): KubeObject {
    const o = world.objects.find((x) => x.kind === kind && x.metadata?.name === name);
    if (!o) {
        throw new Error(`no ${kind} ${name} in the test world`);
    }
    return o;
}

export function patch(world: FakeWorld, kind: string, name: string, next: (o: KubeObject) => KubeObject): void {
    const i = world.objects.findIndex((x) => x.kind === kind && x.metadata?.name === name);
    if (i < 0) {
        throw new Error(`no ${kind} ${name} in the test world`);
    }
    world.objects[i] = next(world.objects[i]);
}
