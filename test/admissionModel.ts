/**
 * The unit tests' admission samples and the restated engines that decide them: the CEL policies
 * evaluated by @bufbuild/cel (test/kyvernoCel.ts), the ClusterPolicies by the restated Kyverno
 * engine (test/kyvernoJmes.ts). Shared by test/policy.test.ts (both restated engines agree) and the
 * e2e scenario kyverno-admission (each restated engine agrees with the real Kyverno).
 */
import { AddonConfig, parseAddonConfig } from "../stacks/config";
import { CelPolicy, PolicyConfig, PolicyContext, celPolicies, clusterPolicies, policyContext, selects } from "../components/policy";
import { SUCCESS_RATE as SUCCESS_RATE_TEMPLATE } from "../components/argoRollouts";
import { hubConfig, merged, withRegulatedArgoRbac } from "./harness";
import { FakeCluster, Json, admit, evaluate, requestKind } from "./kyvernoCel";
import { applyClusterPolicy, ruleMatches } from "./kyvernoJmes";

// Samples: what a tenant applies, in namespaces labelled as the platform labels them.

export type Obj = {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: Record<string, Json>;
    status?: Json;
};

export const template = (labels: Record<string, string>) => ({
    metadata: { labels },
    spec: { containers: [{ name: "app", image: "registry.platform.test/app:1" }] },
});

export function sampleRollout(spec: Record<string, Json> = {}, namespace = "shop"): Obj {
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Rollout",
        metadata: { name: "checkout", namespace },
        spec: {
            replicas: 3,
            selector: { matchLabels: { app: "checkout" } },
            template: template({ app: "checkout", team: "shop" }),
            strategy: {
                canary: {
                    maxSurge: 1,
                    steps: [{ setWeight: 25 }, { pause: {} }, { setWeight: 100 }],
                    // The prod gate from the first weight, and the approval before 100%: the tier
                    // admission of both prod classes admits it (components/policy/tierAdmission.ts).
                    analysis: { templates: [{ templateName: SUCCESS_RATE_TEMPLATE, clusterScope: true }], startingStep: 1 },
                    trafficRouting: { plugins: { "argoproj-labs/gatewayAPI": { httpRoute: "checkout", namespace } } },
                },
            },
            ...spec,
        },
    };
}

export function sampleDeployment(spec: Record<string, Json> = {}, namespace = "shop"): Obj {
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace },
        spec: { replicas: 2, selector: { matchLabels: { app: "web", tier: "front" } }, template: template({ app: "web", tier: "front" }), ...spec },
    };
}

/** A regulated Rollout's ReplicaSet as Argo Rollouts creates it: the revision label on it and its template, the Rollout its controller. */
export function sampleReplicaSet(opts: { image?: string; owned?: boolean; labelled?: boolean; templateLabelled?: boolean } = {}, namespace = "shop"): Obj {
    const hash = { "rollouts-pod-template-hash": "6d4f8b7c9" };
    const { owned = true, labelled = true, templateLabelled = labelled } = opts;
    return {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        metadata: {
            name: "checkout-6d4f8b7c9",
            namespace,
            labels: { app: "checkout", ...(labelled ? hash : {}) },
            ...(owned
                ? {
                      ownerReferences: [
                          { apiVersion: "argoproj.io/v1alpha1", kind: "Rollout", name: "checkout", uid: "0f4e", controller: true, blockOwnerDeletion: true },
                      ],
                  }
                : {}),
        } as Obj["metadata"],
        spec: {
            replicas: 3,
            selector: { matchLabels: { app: "checkout", ...(labelled ? hash : {}) } },
            template: {
                metadata: { labels: { app: "checkout", ...(templateLabelled ? hash : {}) } },
                spec: { containers: [{ name: "app", image: opts.image ?? "registry.test.example/app:1" }] },
            },
        },
    };
}

/** A Pod, by default one of a regulated Rollout's (the revision label its ReplicaSet gives it). */
export function samplePod(opts: { labelled?: boolean; ephemeral?: string } = {}, namespace = "shop"): Obj {
    const { labelled = true } = opts;
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
            name: "checkout-6d4f8b7c9-x2k8q",
            namespace,
            labels: { app: "checkout", ...(labelled ? { "rollouts-pod-template-hash": "6d4f8b7c9" } : {}) },
        },
        spec: {
            containers: [{ name: "app", image: "registry.test.example/app:1" }],
            ...(opts.ephemeral ? { ephemeralContainers: [{ name: "debugger", image: opts.ephemeral }] } : {}),
        },
    };
}

/** The autoscaling/v1 Scale a `replicasets/scale` request carries. */
export const scaleOf = (rs: Obj, replicas: number): Obj => ({
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: { name: rs.metadata.name, namespace: rs.metadata.namespace },
    spec: { replicas },
});
export const REPLICASET_SCALE = { apiVersion: "apps/v1", kind: "ReplicaSet", resource: "replicasets" };

export const sampleStatefulSet = (): Obj => ({ ...sampleDeployment(), kind: "StatefulSet", metadata: { name: "db", namespace: "shop" } });

export const hpa = (target: { kind: string; name: string }, minReplicas?: number): Obj => ({
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: { name: `${target.name}-hpa`, namespace: "shop" },
    // The API server requires the target's apiVersion (the e2e scenario kyverno-admission sends these).
    spec: {
        scaleTargetRef: {
            apiVersion: target.kind === "Rollout" ? "argoproj.io/v1alpha1" : target.kind === "SomethingElse" ? "example.com/v1" : "apps/v1",
            ...target,
        },
        maxReplicas: 10,
        ...(minReplicas === undefined ? {} : { minReplicas }),
    },
});

export const pdbObject = (name: string, selector?: Json): Json => ({
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name, namespace: "shop" },
    spec: { maxUnavailable: 1, ...(selector === undefined ? {} : { selector }) },
});

export const TIER = "platform.test/tier";
export const DEV = { [TIER]: "dev" };
export const PROD = { [TIER]: "prod" };
export const REGULATED_PROD = { [TIER]: "prod", "platform.test/class": "regulated" };

export const REGULATED = {
    namespaceLabels: { "platform.test/class": "regulated" },
    approverGroups: ["release-approvers"],
    deployerGroups: ["shop-deployers"],
    gitopsServiceAccounts: ["argocd/argocd-application-controller"],
    actionServiceAccounts: ["argocd/argocd-server"],
};

/** The controller, and the tier admission of the harness's stack with regulated prod (both classes). */
export const CTX: PolicyContext = {
    ...policyContext(config({ policy: { regulated: REGULATED } })),
    rolloutsController: { namespace: "argo-rollouts", name: "argo-rollouts" },
};

export function config(patch: Record<string, unknown> = {}): AddonConfig {
    const { "aws:region": _region, ...rest } = merged(hubConfig(), patch);
    return parseAddonConfig("hub", withRegulatedArgoRbac(rest), { awsRegion: "eu-west-1" });
}
export const policyConfig = (patch: Record<string, unknown> = {}): PolicyConfig => config({ policy: patch }).policy;

// ---------------------------------------------------------------------------------------------
// One admission request through either engine: the CEL policies evaluated by @bufbuild/cel, the
// ClusterPolicies by the restated Kyverno engine (test/kyvernoJmes.ts).

export interface Request {
    object: Obj;
    oldObject?: Obj;
    operation?: "CREATE" | "UPDATE" | "DELETE";
    /** The namespace's status.phase (default Active). */
    namespacePhase?: string;
    subResource?: string;
    username?: string;
    groups?: string[];
    namespaceLabels: Record<string, string>;
    objects?: Record<string, Json[]>;
    /** The request's kind and resource where the object is of another kind (a ReplicaSet's Scale). */
    resourceKind?: { apiVersion: string; kind: string; resource: string };
}

export interface Outcome {
    /** Names of the policies that matched the request. */
    applied: string[];
    denied: string[];
    /** Messages of violations an Audit policy reports (and warns of) without refusing. */
    audited: string[];
    /** PodDisruptionBudgets generated. */
    generated: Json[];
    /** Topology spread constraints added. */
    spread: Json[];
}

export function celMatches(p: CelPolicy, r: Request): boolean {
    const { group, version, resource } = requestKind(r as { object: Json; resourceKind?: Request["resourceKind"] });
    const plural = `${resource}${r.subResource ? `/${r.subResource}` : ""}`;
    const mc = p.spec.matchConstraints;
    const labels = { ...r.namespaceLabels, "kubernetes.io/metadata.name": r.object.metadata.namespace };
    return (
        mc.resourceRules.some(
            (rr) =>
                rr.apiGroups.includes(group) &&
                rr.apiVersions.includes(version) &&
                rr.resources.includes(plural) &&
                rr.operations.includes(r.operation ?? "CREATE"),
        ) &&
        (mc.namespaceSelector === undefined || selects(mc.namespaceSelector, labels))
    );
}

export function viaCel(cfg: PolicyConfig, r: Request, ctx: PolicyContext = CTX): Outcome {
    const out: Outcome = { applied: [], denied: [], audited: [], generated: [], spread: [] };
    for (const p of celPolicies(cfg, ctx).filter((x) => celMatches(x, r))) {
        out.applied.push(p.metadata.name.replace(/-(deployment|statefulset|rollout)$/, ""));
        const res = admit(p, {
            ...r,
            object: r.object as unknown as Json,
            oldObject: r.oldObject as unknown as Json,
            operation: r.operation ?? "CREATE",
            cluster: new FakeCluster(r.objects ?? {}),
        });
        out.denied.push(...res.denied);
        out.audited.push(...res.audited);
        out.generated.push(...res.generated);
        out.spread.push(...res.patches.map((x) => (x as { value: Json }).value));
    }
    return normalise(out);
}

/** The spread constraints a mutation added to the pod template. */
export const addedSpread = (patched: Json): Json =>
    (patched as { spec: { template: { spec: Record<string, Json> } } }).spec.template.spec.topologySpreadConstraints;

export function viaClusterPolicy(cfg: PolicyConfig, r: Request, ctx: PolicyContext = CTX): Outcome {
    const out: Outcome = { applied: [], denied: [], audited: [], generated: [], spread: [] };
    const legacy = { ...cfg, kyvernoApi: "kyverno.io/v1" as const };
    for (const p of clusterPolicies(legacy, ctx)) {
        const a = {
            ...r,
            object: r.object as unknown as Json,
            oldObject: r.oldObject as unknown as Json,
            operation: r.operation ?? "CREATE",
            cluster: new FakeCluster(r.objects ?? {}),
        };
        if (!p.spec.rules.some((rule) => ruleMatches(rule, a))) {
            continue;
        }
        out.applied.push(p.metadata.name);
        // The webhook's match conditions are evaluated by the API server, before Kyverno.
        if ((p.spec.webhookConfiguration?.matchConditions ?? []).some((c) => evaluate(c.expression, a) !== true)) {
            continue;
        }
        const results = applyClusterPolicy(p, a);
        out.denied.push(...results.flatMap((x) => (x.denied ? [x.denied] : [])));
        out.audited.push(...results.flatMap((x) => (x.audited ? [x.audited] : [])));
        out.generated.push(...results.flatMap((x) => (x.generated ? [x.generated] : [])));
        out.spread.push(...results.flatMap((x) => (x.patch ? [addedSpread(x.patch)] : [])));
    }
    return normalise(out);
}

export const normalise = (o: Outcome): Outcome => ({
    applied: [...new Set(o.applied)].sort(),
    denied: [...new Set(o.denied)].sort(),
    audited: [...new Set(o.audited)].sort(),
    generated: o.generated,
    spread: o.spread,
});
