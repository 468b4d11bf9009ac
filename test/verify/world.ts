/**
 * A healthy cluster after `pulumi up` of a stack, for the fake API server: recorded shapes of real
 * objects (fixtures/) around the specs the program declares, stored as the API server stores them
 * (CRD defaults filled in), and an RBAC authorizer that grants what the cluster's roles grant.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { tenantViewRole } from "../../components/rollouts/tenants";
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
import { approvalRoleName, approvalRoleRules, approvalSides } from "../../components/policy/approvalBindings";
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
import { READ_CA_CONFIGMAP, controllerTrust } from "../../components/rollouts/trust";
import { SMOKE_APP, smokePodTemplate } from "../../components/smoke";
import { PART_OF } from "../../components/stage";
import { ruleAllows } from "../../tools/verify/access";
import type { KubeObject } from "../../tools/verify/cluster";
import { CONTROLLER_CONTAINER, expectedControllerImage } from "../../tools/verify/checks/controller";
import { gateRunTypes, smokePlan } from "../../tools/verify/checks/smoke";
import { configFromStackFile, readStackFile } from "../../tools/stackFile";
import { FIXTURE_STACKS, TEST_SMOKE, hubConfig, merged } from "../harness";
import type { FakeWorld } from "./fakeApiServer";
import { PolicyRule, ROLLOUTS_CRDS } from "../../components/argoRollouts";
import { clusterAnalysisTemplateSpec, errorBudgetTemplates, sharedTemplates } from "../../components/rollouts/analysis";
import { controllerClusterRules, controllerNamespaceRules } from "../../components/rollouts/rbac";
import { controllerValues } from "../../components/rollouts/values";
import { pluginImage } from "../../components/rollouts/plugin";
import { addonProject } from "../stackConfig";

export const NOW = new Date("2026-06-27T13:10:00Z");
/** Where a spoke's templates point when its stack names the hub stack (the hub's stack output). */
export const HUB_READ_ENDPOINT = "https://mimir-preprod.hub.platform.test/prometheus";
const REGULATED_APP = { name: "payments-api", namespace: "payments-prod" };

export const fixture = <T = KubeObject>(name: string): T => JSON.parse(fs.readFileSync(path.join(__dirname, "fixtures", name), "utf8")) as T;

/**
 * The test hub where the stack owns what it can: ADR-085's policies (`own`), the ArgoCD project and
 * ApplicationSet (`owner: addon`), an argocd-cm rule, the spoke's whole route, regulated prod, the smoke canary.
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
                projects: { tenants: addonProject("Service", "apps/Deployment", "gateway.networking.k8s.io/HTTPRoute") },
                applicationSets: { "tenant-apps": { owner: "addon", syncOptions: ["CreateNamespace=true"] } },
                ignoreDifferences: [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }],
                rbac: { approverRole: "role:approver", deployerRoles: ["role:deployer"], regulatedProjects: ["tenants"] },
            },
            smokeTest: TEST_SMOKE,
        }),
        patch,
    );
    const { "aws:region": region, ...rest } = raw;
    return parseAddonConfig("hub", rest, { awsRegion: String(region) });
}

/** verifyConfig() as the hub's spoke preprod, reading through the hub at a fixed https endpoint, with `patch` merged in. */
export function verifySpoke(patch: Record<string, unknown> = {}): AddonConfig {
    const spoke = {
        cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", eksClusterName: "platform-preprod" },
        mimir: { readEndpoint: "https://mimir-preprod.hub.test.example/prometheus" },
    };
    return verifyConfig({ ...merged(spoke, patch), spokes: undefined });
}

/** A fixture stack file's configuration, read and validated as `npm run verify` reads it. */
export const fixtureConfig = (stack: string): AddonConfig => configFromStackFile(readStackFile(stack, FIXTURE_STACKS));

/** A grant the fake authorizer evaluates with Kubernetes' rule matching: a subject, its rules, where (unset: everywhere), RBAC's reason. */
type Grant = { user?: string; group?: string; namespace?: string; rules: PolicyRule[]; reason: string };
export type ClusterWorld = FakeWorld & { grants: Grant[] };

export const withStatus = (o: KubeObject, status: unknown): KubeObject => ({ ...o, status });

/** `o` with `changes` merged one level into it, and into its metadata. */
const named = (o: KubeObject, metadata: Record<string, unknown>, changes: Record<string, unknown> = {}): KubeObject => ({
    ...o,
    ...changes,
    metadata: { ...o.metadata, ...metadata },
});

/** A Kyverno policy as the API server stores it: its CRD's schema defaults filled in (kyverno.io, policies.kyverno.io CRDs), status ready. */
export function storedPolicy(p: KyvernoPolicy): KubeObject {
    const o = JSON.parse(JSON.stringify(p)) as KubeObject & { spec: Record<string, Record<string, unknown>> };
    const defaults = (obj: Record<string, unknown> | undefined, values: Record<string, unknown>) => obj && Object.assign(obj, { ...values, ...obj });
    if (o.kind === "ClusterPolicy") {
        defaults(o.spec, { admission: true, emitWarning: false });
        for (const rule of o.spec.rules as unknown as Record<string, Record<string, unknown>>[]) {
            defaults(rule, { skipBackgroundRequests: true });
            defaults(rule.validate, { allowExistingViolations: true });
            for (const c of (rule.context as unknown as Record<string, Record<string, unknown>>[] | undefined) ?? []) {
                defaults(c.apiCall, { method: "GET" });
            }
        }
    } else {
        o.spec.evaluation = defaults(o.spec.evaluation ?? {}, {
            admission: { enabled: true },
            ...(o.kind === "GeneratingPolicy" ? { orphanDownstreamOnPolicyDelete: { enabled: false } } : {}),
        })!;
    }
    const status = fixture(p.kind === "ClusterPolicy" ? "cluster-policy-status-ready.json" : "cel-policy-status-ready.json");
    return named(o, { uid: `uid-${p.metadata.name}`, generation: 1, creationTimestamp: "2026-06-26T09:15:39Z" }, { status });
}

const clusterRole = (metadata: KubeObject["metadata"], rules: unknown[]): KubeObject => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata,
    rules,
});

/** The Kyverno ServiceAccount of a controller (the chart's `<release>-<component>`). */
export const kyvernoAccount = (component: string): string => `system:serviceaccount:kyverno:kyverno-${component}`;
const COMPONENT = { admission: "admission-controller", background: "background-controller", reports: "reports-controller" } as const;
const bindingReason = (kind: string, binding: string, role: string, subject: string) =>
    `RBAC: allowed by ${kind}Binding "${binding}" of ${kind} "${role}" to ${subject}`;
/** What a Kyverno controller's ServiceAccount may do through its aggregated ClusterRole. */
const kyvernoGrant = (c: string, rules: PolicyRule[]): Grant => ({
    user: kyvernoAccount(c),
    rules,
    reason: bindingReason("ClusterRole", `kyverno:${c}`, `kyverno:${c}`, `ServiceAccount "kyverno-${c}/kyverno"`),
});

/**
 * Sets the smoke Rollout's status and what the controller writes with it: the Services' selectors
 * (canary: stable and canary; blue/green: active and preview).
 */
export function setSmokeStatus(world: FakeWorld, config: AddonConfig, status: Record<string, unknown>, generation?: number): void {
    patch(world, "Rollout", SMOKE_APP, (o) => named(o, generation ? { generation } : {}, { status }));
    const { strategy } = smokePlan(config);
    const bg = (status.blueGreen ?? {}) as Record<string, string>;
    const selectors: Record<string, string | undefined> =
        "blueGreen" in strategy
            ? { [strategy.blueGreen.activeService]: bg.activeSelector, [strategy.blueGreen.previewService]: bg.previewSelector }
            : { [strategy.canary.stableService ?? ""]: status.stableRS as string, [strategy.canary.canaryService ?? ""]: status.currentPodHash as string };
    for (const s of world.objects.filter(
        (o) => o.kind === "Service" && o.metadata?.namespace === config.smokeTest.namespace && selectors[o.metadata.name ?? ""],
    )) {
        const spec = s.spec as { selector?: object };
        s.spec = { ...spec, selector: { ...spec.selector, "rollouts-pod-template-hash": selectors[s.metadata!.name!] } };
    }
}

/** The healthy cluster of a stack: everything its `pulumi up` declares, and what runs around it. */
export function healthyCluster(config: AddonConfig): ClusterWorld {
    const ns = config.controller.namespace;
    const objects: KubeObject[] = [...fixture<KubeObject[]>("namespaces.json"), ...ROLLOUTS_CRDS.map((c) => named(fixture("crd.json"), { name: c.name }))];

    // The controller, as the chart renders it from the program's values, with a spoke's read CA bundle (chart templates/controller/deployment.yaml).
    const values = controllerValues(config);
    const image = expectedControllerImage(values);
    const plugin = pluginImage(config.plugin, config.imageRegistry);
    const initContainers = plugin ? [{ name: "gatewayapi-plugin", image: plugin }] : undefined;
    const deployment = fixture("controller-deployment.json");
    const template = {
        ...(deployment.spec as { template: object }).template,
        spec: { serviceAccountName: "argo-rollouts", containers: [{ name: CONTROLLER_CONTAINER, image }], initContainers },
    };
    objects.push(named(deployment, {}, { spec: { ...(deployment.spec as object), replicas: config.controller.replicas, template } }));
    const controller = values.controller as { podAnnotations: Record<string, string>; trafficRouterPlugins: unknown };
    const trust = controllerTrust(config.mimir.readCaBundle);
    const pod = fixture("controller-pod.json");
    const mounts = trust ? { env: trust.extraEnv, volumeMounts: trust.volumeMounts } : {};
    for (const name of ["argo-rollouts-7c9d5f8b64-x2k8q", "argo-rollouts-7c9d5f8b64-p7m4n"]) {
        const containers = (pod.spec as { containers: object[] }).containers.map((c) => ({ ...c, image, ...mounts }));
        const spec = { ...(pod.spec as object), containers, initContainers, ...(trust ? { volumes: trust.volumes } : {}) };
        objects.push(named(pod, { name, annotations: { ...pod.metadata?.annotations, ...controller.podAnnotations } }, { spec }));
    }
    const caMetadata = { name: READ_CA_CONFIGMAP, namespace: ns, uid: "uid-read-ca" };
    objects.push(...(trust ? [{ apiVersion: "v1", kind: "ConfigMap", metadata: caMetadata, data: trust.configMapData }] : []));
    const lease = fixture("lease.json");
    objects.push(named(lease, {}, { spec: { ...(lease.spec as object), renewTime: new Date(NOW.getTime() - 4000).toISOString() } }));
    objects.push(named(fixture("argo-rollouts-config.json"), {}, { data: { trafficRouterPlugins: YAML.stringify(controller.trafficRouterPlugins) } }));
    // Kyverno's configuration as a platform with regulated namespaces sets it: without the chart's ReplicaSet filters.
    objects.push(...fixture<KubeObject[]>("kyverno-deployments.json"), fixture("kyverno-configmap.json"));

    // The policy stage for its mode, and in complement mode the platform's own ADR-085 policies.
    const policy = config.policy;
    objects.push(...kyvernoPolicies(policy, policyContext(config)).map(storedPolicy));
    const controllerGrant = (kind: string, binding: string, rules: PolicyRule[], namespace?: string): Grant => {
        const reason = bindingReason(kind, binding, "argo-rollouts", `ServiceAccount "argo-rollouts/argo-rollouts"`);
        return { user: `system:serviceaccount:${ns}:argo-rollouts`, namespace, rules, reason };
    };
    const grants = [
        controllerGrant("ClusterRole", "argo-rollouts", controllerClusterRules(config.plugin)),
        controllerGrant("Role", "argo-rollouts/argo-rollouts", controllerNamespaceRules(), ns),
    ];
    for (const role of kyvernoRoles(policy)) {
        const labels = { ...PART_OF, ...Object.fromEntries(role.controllers.map((c) => [KYVERNO_AGGREGATE_LABELS[c], "true"])) };
        const annotations = { "argo-rollouts-addon.platform/why": role.why };
        objects.push(clusterRole({ name: kyvernoRoleName(role), uid: `uid-${role.name}`, labels, annotations }, role.rules));
        // Kyverno's chart aggregates the labelled role into each controller's ClusterRole.
        grants.push(...role.controllers.map((c) => kyvernoGrant(COMPONENT[c], role.rules)));
    }
    if (policy.availabilityPolicies === "complement") {
        objects.push(...fixture<KubeObject[]>("platform-availability-clusterpolicies.json"));
        grants.push(kyvernoGrant(COMPONENT.background, pdbGenerationRules()));
    }

    // Tenants: `view` as the aggregation controller fills it from the stage's role, a canary Rollout with its budget, an editor, a regulated app.
    const view = tenantViewRole();
    objects.push(
        clusterRole({ ...view.metadata, uid: "uid-tenant-view" }, view.rules),
        clusterRole({ name: "view", uid: "uid-view" }, [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] }, ...view.rules]),
        fixture("tenant-rollout.json"),
        fixture("generated-pdb.json"),
        fixture("clusterrole-edit.json"),
        ...fixture<KubeObject[]>("rolebindings.json"),
    );
    grants.push({
        group: "alpha-team",
        namespace: "alpha-shop-prod",
        rules: fixture<{ rules: PolicyRule[] }>("clusterrole-edit.json").rules,
        reason: fixture<{ reason: string }>("sar-allowed-by-edit.json").reason,
    });
    // The platform's approval roles, bound in the regulated namespace as Kyverno generates them.
    const namespace = REGULATED_APP.namespace;
    for (const { side, groups } of policy.regulated ? approvalSides(policy.regulated) : []) {
        const name = approvalRoleName(side);
        const roleRef = { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name };
        const subjects = groups.map((g) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: g }));
        objects.push(clusterRole({ name, uid: `uid-${side}` }, approvalRoleRules(side)), {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
            metadata: { name, namespace },
            roleRef,
            subjects,
        });
        for (const g of groups) {
            grants.push({
                group: g,
                namespace,
                rules: approvalRoleRules(side),
                reason: `RBAC: allowed by RoleBinding "${name}/${namespace}" of ClusterRole "${name}" to Group "${g}"`,
            });
        }
    }
    // ArgoCD's application controller may do anything (its upstream ClusterRole): a GitOps identity.
    const reason = fixture<{ reason: string }>("sar-allowed-by-deployer-clusterrole.json").reason;
    grants.push({ user: "system:serviceaccount:argocd:argocd-application-controller", rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }], reason });

    // ArgoCD where it runs: the objects the stack owns as patched, the kept ones as their owner keeps them.
    const argo = config.argocd;
    if (argo.local) {
        const settings = tenantSyncSettings({ ignoreDifferences: [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }] });
        for (const p of argo.projects) {
            const project = fixture("appproject.json");
            const kept = [{ group: "", kind: "Service" }, { group: "apps", kind: "*" }, ...ROLLOUT_PROJECT_KINDS];
            const destinations = (project.spec as { destinations: { namespace: string; server: string }[] }).destinations;
            // A project that is not regulated keeps out of the regulated namespace ("!" refuses one).
            const keepOut = argo.rbac.regulatedProjects.includes(p.name) ? [] : [{ namespace: `!${REGULATED_APP.namespace}`, server: destinations[0].server }];
            const spec = {
                ...(project.spec as object),
                namespaceResourceWhitelist: p.owner === "addon" ? projectWhitelist(p.namespaceResources) : kept,
                destinations: [...destinations, ...keepOut],
            };
            objects.push(named(project, { name: p.name, namespace: argo.namespace }, { spec }));
        }
        objects.push(...fixture<KubeObject[]>("argocd-workloads.json").map((w) => named(w, { namespace: argo.namespace })));
        for (const set of argo.applicationSets) {
            const template =
                set.owner === "addon"
                    ? applicationSetPatch(set, argo.namespace, argo.allKinds).spec.template
                    : {
                          metadata: { annotations: settings.annotations },
                          spec: { syncPolicy: { syncOptions: settings.syncOptions }, ignoreDifferences: settings.ignoreDifferences },
                      };
            const sync = {
                syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: template.spec.syncPolicy.syncOptions },
                ignoreDifferences: template.spec.ignoreDifferences,
            };
            const appSet = fixture("applicationset.json");
            const setTemplate = (appSet.spec as { template: { metadata: object; spec: object } }).template;
            const setSpec = {
                ...(appSet.spec as object),
                template: { metadata: { ...setTemplate.metadata, annotations: template.metadata.annotations }, spec: { ...setTemplate.spec, ...sync } },
            };
            const app = fixture("application.json");
            const owners = (app.metadata?.ownerReferences ?? []).map((o) => ({ ...o, name: set.name }));
            objects.push(
                named(appSet, { name: set.name, namespace: argo.namespace }, { spec: setSpec }),
                named(
                    app,
                    { namespace: argo.namespace, annotations: template.metadata.annotations, ownerReferences: owners },
                    { spec: { ...(app.spec as object), ...sync } },
                ),
            );
        }
        // The ConfigMaps with the keys the stack patches into them.
        const patched = (file: string, data: object) =>
            named(fixture(file), { namespace: argo.namespace }, { data: { ...(fixture(file).data as object), ...data } });
        const csv = rolloutActionsPolicyCsv(argo.rbac);
        objects.push(
            patched("argocd-cm.json", argocdCmIgnoreData(expandAllKinds(argo.ignoreDifferences, argo.allKinds))),
            patched("argocd-rbac-cm.json", csv ? { [ROLLOUT_ACTIONS_POLICY_KEY]: csv } : {}),
        );
    }

    // The metric path: the shared templates at the stack's address (a spoke's from its hub stack), the spoke routes.
    const mimir = config.mimir;
    const endpoint = mimir.readEndpoint?.kind === "url" ? mimir.readEndpoint.url : HUB_READ_ENDPOINT;
    const address = config.cluster.role === "hub" ? inClusterMimirAddress(mimir) : endpoint;
    const cat = fixture("cluster-analysis-template.json");
    const tenant = config.cluster.mimirTenant;
    objects.push(
        ...sharedTemplates(config.analysis).map((t) =>
            named(cat, { name: t.name }, { spec: clusterAnalysisTemplateSpec(t, config.analysis, address, tenant) }),
        ),
        ...errorBudgetTemplates(config.errorBudget, config.analysis).map((t) => named(cat, { name: t.name }, { spec: t.spec(address, tenant) })),
    );
    if (config.cluster.role === "hub" && config.spokes.length > 0) {
        // The ingest Gateway, and the observability module's ingest route of each spoke whose push route it owns.
        const gw = mimir.ingestGateway;
        objects.push(named(fixture("gateway.json"), { name: gw.name, namespace: gw.namespace }));
        for (const spoke of config.spokes.filter((s) => s.pushRouteOwner === "observability")) {
            const text = JSON.stringify(fixture("observability-ingest-route.json"))
                .replaceAll("mimir-preprod.hub.test.example", spoke.hostname)
                .replaceAll('"preprod"', JSON.stringify(spoke.tenant))
                .replace('"sectionName":"https"', `"sectionName":${JSON.stringify(spoke.listener ?? gw.listener)}`)
                .replace('"name":"internal","namespace":"gateway-system"', `"name":${JSON.stringify(gw.name)},"namespace":${JSON.stringify(gw.namespace)}`);
            objects.push(named(JSON.parse(text) as KubeObject, { name: `mimir-ingest-${spoke.name}`, namespace: mimir.namespace }));
        }
    }
    for (const route of config.spokes.flatMap((s) => spokeRoutes(s, mimir))) {
        const metadata = { name: route.name, namespace: mimir.spokeRouteNamespace, generation: 1, labels: { ...PART_OF } };
        objects.push({ apiVersion: "gateway.networking.k8s.io/v1", kind: "HTTPRoute", metadata, spec: route.spec, status: fixture("spoke-route-status.json") });
    }

    const world: ClusterWorld = {
        objects,
        grants,
        authorize: (spec) => {
            const a = spec.resourceAttributes ?? {};
            const question = { verb: a.verb ?? "", group: a.group ?? "", resource: a.resource ?? "", subresource: a.subresource, name: a.name };
            const grant = world.grants.find(
                (g) =>
                    ((g.user !== undefined && g.user === spec.user) || (g.group !== undefined && (spec.groups ?? []).includes(g.group))) &&
                    (g.namespace === undefined || a.namespace === g.namespace) &&
                    g.rules.some((r) => ruleAllows(r, question)),
            );
            return { allowed: grant !== undefined, reason: grant?.reason ?? "" };
        },
        proxy: (req) =>
            req.namespace === mimir.namespace &&
            req.service === mimir.gatewayService &&
            req.port === String(mimir.gatewayServicePort) &&
            req.path === "/prometheus/api/v1/query" &&
            req.headers["x-scope-orgid"] === tenant
                ? { status: 200, body: JSON.stringify(fixture("prometheus-vector.json")) }
                : fixture<{ status: number; body: string }>("mimir-no-org-id.json"),
    };

    // The smoke canary, promoted, with the Services and the route the controller keeps, and one Successful run per gate.
    const smoke = config.smokeTest;
    if (smoke.enabled) {
        const plan = smokePlan(config);
        const labels = { "app.kubernetes.io/name": SMOKE_APP };
        const template = smokePodTemplate(smoke, "9f2c4e1a");
        const spec = { replicas: smoke.replicas, revisionHistoryLimit: 3, selector: { matchLabels: labels }, template, strategy: plan.strategy };
        const metadata = { name: SMOKE_APP, namespace: smoke.namespace, generation: 4, labels };
        objects.push({ apiVersion: "argoproj.io/v1alpha1", kind: "Rollout", metadata, spec, status: {} });
        const service = fixture("smoke-service.json");
        const selecting = (s: (typeof plan.services)[number]) =>
            named(
                service,
                { name: s.metadata.name, namespace: s.metadata.namespace },
                { spec: { ...(service.spec as object), selector: { ...s.spec.selector } } },
            );
        objects.push(...plan.services.map(selecting), { ...fixture("smoke-route.json"), spec: plan.httpRoute!.spec });
        const status = fixture<Record<string, unknown>>(smoke.strategy === "blueGreen" ? "smoke-status-bluegreen-promoted.json" : "smoke-status-promoted.json");
        setSmokeStatus(world, config, status);
        const run = fixture("analysisrun-failed.json");
        for (const type of gateRunTypes(plan)) {
            const hash = String(status.currentPodHash);
            const runLabels = { ...run.metadata?.labels, "rollouts-pod-template-hash": hash, "rollout-type": type };
            objects.push(named(run, { name: `${SMOKE_APP}-${hash}-${type.toLowerCase()}`, labels: runLabels }, { status: { phase: "Successful" } }));
        }
    }
    return world;
}

/** Replaces the object of `kind` and `name` in the world (throws when absent). */
export function patch(world: FakeWorld, kind: string, name: string, next: (o: KubeObject) => KubeObject): void {
    const i = world.objects.findIndex((x) => x.kind === kind && x.metadata?.name === name);
    if (i < 0) throw new Error(`no ${kind} ${name} in the test world`);
    world.objects[i] = next(world.objects[i]);
}
