/**
 * The admission samples (e2e/samples/admission.yaml) sent to a cluster where the real Kyverno
 * decides them (engine-kyverno-cli, kyverno-generates-pdb): the namespaces of each class with the
 * stack's labels, the objects the cases start from, each case as a server-side dry run as its
 * identity, and its outcome read from the API server's answer. Nothing here decides admission: it
 * only compares what Kyverno (or the API server) answered with what the samples expect.
 */
import * as fs from "fs";
import * as path from "path";
import { isDeepStrictEqual } from "util";
import * as YAML from "yaml";
import type { AddonConfig } from "../../stacks/config";
import { PROJECT } from "../../components/config/reader";
import { PROD_CLASSES, PreviewGate, SHAPES, TIERS, deliveryPlan } from "../../components/delivery";
import { spokeRoutes } from "../../components/gateway";
import { Cluster } from "./cluster";
import { addonConfig, tenantNamespaces } from "./platform";
import { RunResult, run, runAsync } from "./procs";
import { fixtureConfig } from "./stacks";

export const ADMISSION_SAMPLES = path.resolve(__dirname, "..", "samples", "admission.yaml");

type Obj = Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; [k: string]: unknown } };
type Outcome = "admitted" | "refused" | "warned";

interface Expectation {
    expect: Outcome;
    policy?: string | string[];
    says?: string;
}

export interface AdmissionCase extends Expectation {
    name: string;
    namespace: string;
    as?: string;
    op?: "create" | "update" | "delete";
    subresource?: string;
    resource: string;
    with?: Record<string, unknown>;
    component?: string;
    ownedBy?: string;
    setting?: "variant";
    object?: unknown;
    absent?: string[];
    "kyverno.io/v1"?: Expectation;
}

/** A shape a prod Rollout or route may take (tier-admission-holes): `shape` puts the strategy of the namespace class's own component in it. */
export interface TierSample {
    name: string;
    resource: string;
    shape?: "canary" | "blueGreen";
    with?: Record<string, unknown>;
    says?: string;
    regulatedOnly?: boolean;
}

export interface AdmissionSamples {
    variant: Record<string, unknown>;
    resources: Record<string, Obj>;
    existing: { namespace: string; as?: string; resource: string; with?: Record<string, unknown>; ownedBy?: string }[];
    cases: AdmissionCase[];
    holes: TierSample[];
    conforming: TierSample[];
    generation: {
        namespace: string;
        budgets: { name: string; selector?: unknown }[];
        workloads: { resource: string; with?: Record<string, unknown>; labels?: Record<string, string>; expect?: string }[];
    }[];
}

export function admissionSamples(): AdmissionSamples {
    return YAML.parse(fs.readFileSync(ADMISSION_SAMPLES, "utf8")) as AdmissionSamples;
}

/** A JSON merge patch (RFC 7386), as the API server applies `kubectl patch --type=merge`. */
export function mergePatch<T>(target: T, patch: unknown): T {
    if (patch === null || typeof patch !== "object" || Array.isArray(patch)) {
        return patch as T;
    }
    const out: Record<string, unknown> =
        target !== null && typeof target === "object" && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
    for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
        if (v === null) {
            delete out[k];
        } else {
            out[k] = mergePatch(out[k], v);
        }
    }
    return out as T;
}

/** Whether `actual` holds `expected`: objects by their keys, lists element by element and of the same length. */
export function holds(actual: unknown, expected: unknown): boolean {
    if (Array.isArray(expected)) {
        return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => holds(actual[i], e));
    }
    if (expected !== null && typeof expected === "object") {
        return actual !== null && typeof actual === "object" && Object.entries(expected).every(([k, v]) => holds((actual as Record<string, unknown>)[k], v));
    }
    return isDeepStrictEqual(actual, expected);
}

const at = (o: unknown, dotted: string): unknown =>
    dotted.split(".").reduce<unknown>((x, k) => (x === null || typeof x !== "object" ? undefined : (x as Record<string, unknown>)[k]), o);

/** The stack's identities the samples name, as the API server sees each (impersonated). */
export function identities(cfg: AddonConfig): Record<string, { user: string; groups: string[] }> {
    const regulated = cfg.policy.regulated;
    if (!regulated) {
        throw new Error("the admission samples need a stack with policy.regulated");
    }
    const sa = (ns: string, name: string) => ({
        user: `system:serviceaccount:${ns}:${name}`,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"],
    });
    const gitops = regulated.gitopsServiceAccounts[0];
    const server = regulated.actionServiceAccounts[0];
    return {
        deployer: { user: "deployer@platform.test", groups: [regulated.deployerGroups[0], "system:authenticated"] },
        approver: { user: "approver@platform.test", groups: [regulated.approverGroups[0], "system:authenticated"] },
        "approver-deployer": { user: "both@platform.test", groups: [regulated.approverGroups[0], regulated.deployerGroups[0], "system:authenticated"] },
        gitops: sa(gitops.namespace, gitops.name),
        "argocd-server": sa(server.namespace, server.name),
        controller: sa(cfg.controller.namespace, "argo-rollouts"),
        "replicaset-controller": sa("kube-system", "replicaset-controller"),
        "deployment-controller": sa("kube-system", "deployment-controller"),
        "garbage-collector": sa("kube-system", "generic-garbage-collector"),
        "kube-controller-manager": { user: "system:kube-controller-manager", groups: ["system:authenticated"] },
    };
}

/** The namespace of each class, with the stack's labels: a name of its own per run (`tag`), or an existing one. */
export function namespaceClasses(cfg: AddonConfig, tag: string): Record<string, { name: string; labels: Record<string, string>; own: boolean }> {
    const [dev, prod, regulated] = tenantNamespaces(cfg);
    if (!regulated) {
        throw new Error("the admission samples need a stack with policy.regulated");
    }
    return {
        dev: { name: `adm-dev-${tag}`, labels: dev.labels, own: true },
        prod: { name: `adm-prod-${tag}`, labels: prod.labels, own: true },
        regulated: { name: `adm-regulated-${tag}`, labels: regulated.labels, own: true },
        outside: { name: `adm-outside-${tag}`, labels: {}, own: true },
        default: { name: "default", labels: {}, own: false },
        excluded: { name: "kube-public", labels: prod.labels, own: false },
    };
}

/** RBAC that lets every identity of the samples write what they send, so that admission is what decides. */
export const SAMPLE_WRITER = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "e2e-admission-samples" },
    rules: [
        { apiGroups: ["argoproj.io"], resources: ["rollouts", "rollouts/status"], verbs: ["get", "list", "watch", "create", "update", "patch", "delete"] },
        {
            apiGroups: ["apps"],
            resources: ["deployments", "statefulsets", "replicasets", "replicasets/scale"],
            verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
        },
        { apiGroups: [""], resources: ["pods", "pods/ephemeralcontainers"], verbs: ["get", "list", "watch", "create", "update", "patch", "delete"] },
        { apiGroups: ["autoscaling"], resources: ["horizontalpodautoscalers"], verbs: ["get", "list", "watch", "create", "update", "patch", "delete"] },
        { apiGroups: ["gateway.networking.k8s.io"], resources: ["httproutes"], verbs: ["get", "list", "watch", "create", "update", "patch", "delete"] },
    ],
};

export function sampleWriterBinding(namespace: string, who: { user: string; groups: string[] }[]): unknown {
    const users = [...new Set(who.map((w) => w.user))].map((name) => ({ kind: "User", name, apiGroup: "rbac.authorization.k8s.io" }));
    const groups = [...new Set(who.flatMap((w) => w.groups).filter((g) => !g.startsWith("system:")))].map((name) => ({
        kind: "Group",
        name,
        apiGroup: "rbac.authorization.k8s.io",
    }));
    return {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "e2e-admission-samples", namespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: SAMPLE_WRITER.metadata.name },
        subjects: [...users, ...groups],
    };
}

/** Creates the namespaces of each class the run owns, with the stack's labels and the samples' writer binding, and labels the excluded one; returns what undoes it. */
export function openNamespaces(ctx: SampleContext): () => void {
    const apply = (o: unknown) => ctx.cluster.kubectl(["apply", "--server-side", "--field-manager=platform-e2e", "-f", "-"], JSON.stringify(o));
    const own = Object.values(ctx.namespaces).filter((n) => n.own);
    const excluded = ctx.namespaces.excluded;
    apply(SAMPLE_WRITER);
    ctx.cluster.kubectl(["label", "namespace", excluded.name, "--overwrite", ...Object.entries(excluded.labels).map(([k, v]) => `${k}=${v}`)]);
    for (const ns of own) {
        apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns.name, labels: ns.labels } });
        apply(sampleWriterBinding(ns.name, Object.values(ctx.identities)));
    }
    return () => {
        for (const ns of own) {
            ctx.cluster.kubectl(["delete", "namespace", ns.name, "--ignore-not-found", "--wait=false"]);
        }
        ctx.cluster.kubectl(["label", "namespace", excluded.name, ...Object.keys(excluded.labels).map((k) => `${k}-`)]);
    };
}

export interface SampleContext {
    kubectl: string;
    cluster: Cluster;
    samples: AdmissionSamples;
    namespaces: ReturnType<typeof namespaceClasses>;
    identities: ReturnType<typeof identities>;
    /** The strategy of a tier component, by id, as `npm run delivery` renders it. */
    component: (id: string) => unknown;
}

/** A case's or an existing object's object: the resource, its component's strategy, its patch, its namespace and owner. */
export function sampleObject(
    ctx: SampleContext,
    s: { resource: string; with?: Record<string, unknown>; component?: string; ownedBy?: string; namespace: string },
): Obj {
    const base = ctx.samples.resources[s.resource];
    if (!base) {
        throw new Error(`no resource ${s.resource} in ${ADMISSION_SAMPLES}`);
    }
    let o = structuredClone(base);
    if (s.component) {
        o = mergePatch(o, { spec: { strategy: null } });
        (o.spec as Record<string, unknown>).strategy = ctx.component(s.component);
    }
    o = mergePatch(o, s.with ?? {});
    o.metadata.namespace = ctx.namespaces[s.namespace].name;
    if (s.ownedBy) {
        const owner = JSON.parse(ctx.cluster.kubectl(["get", "rollout", s.ownedBy, "-n", o.metadata.namespace, "-o", "json"])) as Obj & {
            metadata: { uid: string };
        };
        o.metadata.ownerReferences = [
            { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true },
        ];
    }
    return o;
}

function kubectlAs(ctx: SampleContext, as: string | undefined): string[] {
    if (as === undefined || as === "admin") {
        return [`--kubeconfig=${ctx.cluster.kubeconfig}`];
    }
    const who = ctx.identities[as];
    if (!who) {
        throw new Error(`no identity ${as} (${Object.keys(ctx.identities).join(", ")})`);
    }
    return [`--kubeconfig=${ctx.cluster.kubeconfig}`, `--as=${who.user}`, ...who.groups.map((g) => `--as-group=${g}`)];
}

/** Creates the samples' existing objects for real, each as its identity. */
export function createExisting(ctx: SampleContext): void {
    for (const e of ctx.samples.existing) {
        const o = sampleObject(ctx, e);
        const r = run(ctx.kubectl, [...kubectlAs(ctx, e.as), "create", "-f", "-"], { input: JSON.stringify(o) });
        if (r.status !== 0) {
            throw new Error(`the existing ${o.kind} ${o.metadata.namespace}/${o.metadata.name} (as ${e.as ?? "admin"}) was refused:\n${r.stderr}`);
        }
    }
}

/** Sends one case as a server-side dry run; a create with `dryRun: false` for real. */
export function sendCase(ctx: SampleContext, c: AdmissionCase, { dryRun = true } = {}): Promise<RunResult> {
    const o = sampleObject(ctx, c);
    const who = kubectlAs(ctx, c.as);
    const ns = o.metadata.namespace!;
    switch (c.op ?? "create") {
        case "create":
            return runAsync(ctx.kubectl, [...who, "create", ...(dryRun ? ["--dry-run=server"] : []), "-o", "json", "-f", "-"], { input: JSON.stringify(o) });
        case "update":
            return runAsync(ctx.kubectl, [
                ...who,
                "patch",
                o.kind.toLowerCase(),
                o.metadata.name,
                "-n",
                ns,
                "--type=merge",
                ...(c.subresource ? [`--subresource=${c.subresource}`] : []),
                "--dry-run=server",
                "-o",
                "json",
                "-p",
                JSON.stringify(c.with ?? {}),
            ]);
        case "delete":
            return runAsync(ctx.kubectl, [...who, "delete", o.kind.toLowerCase(), o.metadata.name, "-n", ns, "--dry-run=server", "--wait=false"]);
    }
}

/** The policies of this stack `text` names, as Kyverno names them in a refusal or a warning. */
const named = (text: string, policies: readonly string[]) => policies.filter((p) => new RegExp(`(^|[^a-z0-9-])${p}([^a-z0-9-]|$)`).test(text)).sort();

/** What is wrong with an answer, for the case's expectation in `api`; undefined when it is what the samples say. */
export function judge(c: AdmissionCase, api: string, r: RunResult, policies: readonly string[]): string | undefined {
    const e: Expectation = (api === "kyverno.io/v1" ? c["kyverno.io/v1"] : undefined) ?? c;
    const lines = r.stderr.split("\n");
    const warnings = lines.filter((l) => l.startsWith("Warning:")).join("\n");
    const refusal = lines.filter((l) => !l.startsWith("Warning:")).join("\n");
    const want = e.policy === undefined ? [] : ([] as string[]).concat(e.policy).sort();
    const answer = r.status === 0 ? `admitted${warnings ? ` with ${warnings}` : ""}` : `refused: ${refusal.trim()}`;
    if (e.expect === "refused") {
        if (r.status === 0) {
            return `admitted, expected refused by ${want.join(", ") || e.says}${warnings ? ` (${warnings})` : ""}`;
        }
        // Several policies may refuse one request: a ClusterPolicy webhook names every one, the API
        // server stops at the first CEL policy's webhook that refuses (they are called in parallel).
        // A sample that names no policy is refused by the API server itself, by no policy.
        const by = named(refusal, policies);
        if (
            (want.length > 0 && by.length === 0) ||
            !by.every((p) => want.includes(p)) ||
            (e.says !== undefined && !refusal.replace(/\s+/g, " ").includes(e.says))
        ) {
            return `expected refused by [${want.join(", ")}]${e.says ? ` saying "${e.says}"` : ""}, got ${answer}`;
        }
        if (/Policy \S+ error:/.test(refusal)) {
            return `refused by a policy's error, not its rule: ${refusal.trim()}`;
        }
        return undefined;
    }
    if (r.status !== 0) {
        return `expected ${e.expect}${want.length ? ` by ${want.join(", ")}` : ""}, got ${answer}`;
    }
    if (!isDeepStrictEqual(named(warnings, policies), want)) {
        return `expected ${e.expect}${want.length ? ` by [${want.join(", ")}]` : " without a warning"}, got ${answer}`;
    }
    if (c.object !== undefined || c.absent !== undefined) {
        if ((c.op ?? "create") === "delete") {
            return "a delete returns no object to check";
        }
        const obj = JSON.parse(r.stdout) as unknown;
        if (c.object !== undefined && !holds(obj, c.object)) {
            return `admitted, but the object does not hold ${JSON.stringify(c.object)}: ${JSON.stringify((obj as { spec?: unknown }).spec)}`;
        }
        for (const p of c.absent ?? []) {
            if (at(obj, p) !== undefined) {
                return `admitted, but the object has ${p}: ${JSON.stringify(at(obj, p))}`;
            }
        }
    }
    return undefined;
}

/**
 * Every HTTPRoute the program can emit, for the API server to judge against the Gateway API CRD: a
 * hub's spoke routes (each ownership mode, a spoke's own listener, a route namespace of its own),
 * and the delivery library's app routes of every tier, class and shape, blue/green with each
 * preview gate; and routes that break the CRD's rules, each with what the API server says.
 */
export function emittedRoutes(spoke: AddonConfig): { source: string; object: unknown; says?: string }[] {
    const out: { source: string; object: unknown; says?: string }[] = [];
    const route = (name: string, namespace: string, spec: unknown) => ({
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name, namespace },
        spec,
    });
    const spokes = [
        { name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.platform.test", query: true },
        { name: "edge", tenant: "edge", hostname: "mimir-edge.hub.platform.test", query: false, listener: "spokes" },
    ];
    for (const [owner, mimir] of [
        ["addon", {}],
        ["observability", {}],
        ["addon", { spokeRouteNamespace: "gateway-system" }],
    ] as const) {
        const hub = addonConfig("hub", {
            ...fixtureConfig("hub"),
            [`${PROJECT}:spokes`]: spokes.map((s) => ({ ...s, pushRouteOwner: owner })),
            [`${PROJECT}:mimir`]: mimir,
        });
        for (const s of hub.spokes) {
            for (const r of spokeRoutes(s, hub.mimir)) {
                out.push({
                    source: `spoke route ${r.name} (${owner}${"spokeRouteNamespace" in mimir ? ", route namespace" : ""})`,
                    object: route(r.name, "gateway-system", r.spec),
                });
            }
        }
    }
    // An existing namespace: the API server looks it up before it judges the route (no policy matches routes).
    const app = {
        name: "checkout",
        namespace: "default",
        port: 8080,
        route: { name: "checkout", gateway: spoke.gateway, hostnames: ["checkout.shop.platform.test"] },
    };
    const previewGates: (PreviewGate | undefined)[] = [
        undefined,
        { header: "x-rollouts-preview" },
        { hostname: "checkout-preview.shop.platform.test" },
        { hostname: "checkout-preview.shop.platform.test", gateway: { ...spoke.gateway, listener: "previews" } },
    ];
    for (const tier of TIERS) {
        for (const prodClass of tier === "prod" ? PROD_CLASSES : [undefined]) {
            for (const shape of tier === "prod" ? SHAPES : [undefined]) {
                for (const previewGate of shape === "blueGreen" ? previewGates : [undefined]) {
                    const plan = deliveryPlan(app, {
                        tier,
                        ...(prodClass ? { prodClass, shape } : {}),
                        ...(previewGate ? { previewGate } : {}),
                        ...(prodClass === "regulated" ? { approval: { approverGroups: ["release-approvers"], deployerGroups: [] } } : {}),
                    });
                    for (const r of [plan.httpRoute, plan.previewRoute]) {
                        if (r) {
                            out.push({
                                source: `${tier} ${prodClass ?? ""} ${shape ?? ""} ${previewGate ? JSON.stringify(previewGate) : ""}: ${r.metadata.name}`,
                                object: r,
                            });
                        }
                    }
                }
            }
        }
    }
    const [first] = out;
    const broken = (
        what: string,
        says: string,
        change: (spec: { rules: { matches?: { path: { value: string } }[]; filters?: unknown[]; backendRefs?: Record<string, unknown>[] }[] }) => void,
    ) => {
        const object = structuredClone(first.object) as { spec: Parameters<typeof change>[0] };
        change(object.spec);
        out.push({ source: `${first.source}, ${what}`, object, says });
    };
    broken("its path with //", "must not contain '//'", (s) => (s.rules[1].matches![0].path.value = "/prometheus//api"));
    broken("its path relative", "must be an absolute path", (s) => (s.rules[1].matches![0].path.value = "prometheus"));
    broken("a Service backend without a port", "Must have port for Service reference", (s) => delete s.rules[0].backendRefs![0].port);
    broken("its header filter twice", "RequestHeaderModifier filter cannot be repeated", (s) => s.rules[0].filters!.push(s.rules[0].filters![0]));
    return out;
}
