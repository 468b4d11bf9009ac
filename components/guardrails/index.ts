/**
 * Guardrails: the ADR's traps as checks over the resources a stack declares. The same checks run
 * in the Pulumi policy pack (`pulumi preview --policy-pack policy-pack`, on every resource the engine
 * sees, chart children included) and in the offline plan, so the two can never disagree.
 */
import * as YAML from "yaml";
import type { IgnoreRule, ResourceIgnoreDifferences, RuleScope } from "../argocd/ignoreRules";
import { HTTPROUTE, ROLLOUT, SERVICE, canaryRuleReasons, fromApplicationRule, kindLabel, rolloutArrayPathReasons } from "../argocd/ignoreRules";
import { TENANT_HEADER } from "../mimir";
import { STAGES, STAGE_TYPES, StageName } from "../stage";
import { CRD_TYPE, ROLLOUTS_CRDS, wildcardFields } from "../argoRollouts";

/** A resource as the checks see it, whichever side (policy pack or offline plan) supplies it. */
export interface GuardedResource {
    urn: string;
    type: string;
    name: string;
    props: Record<string, unknown>;
    protect: boolean;
    /** Unknown to the policy pack (the engine does not pass it); known to the plan. */
    retainOnDelete?: boolean;
    parent?: string;
    /** URNs this resource waits for. */
    dependencies: string[];
    /** A component record (not a cloud object); the pack knows it by having no provider. */
    component: boolean;
}

/** A check, with what it protects (citing the ADR decision or upstream fact). */
export type ResourceCheck = { name: string; description: string; check(r: GuardedResource): string[] };
export type StackCheck = { name: string; description: string; check(resources: GuardedResource[]): string[] };

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const kindOf = (type: string): string => type.split(":").pop() ?? "";
const metaName = (r: GuardedResource): string => str(obj(r.props.metadata).name) ?? r.name;

const RBAC_TYPES = /^kubernetes:rbac\.authorization\.k8s\.io\/v1:(Cluster)?Role$/;
const CHART_TYPE = /^kubernetes:helm\.sh\/v[34]:Chart$/;
const AGGREGATE_TO = /^rbac\.authorization\.k8s\.io\/aggregate-to-(view|edit|admin)$/;
const WRITE_VERBS = ["create", "update", "patch", "delete", "deletecollection"];

/** The write grants on argoproj.io objects of a role whose labels aggregate it to view, edit or admin. */
export function aggregatedRolloutWrites(labels: Obj, rules: unknown): string[] {
    const to = Object.keys(labels).filter((k) => AGGREGATE_TO.test(k) && labels[k] === "true");
    return list(rules).flatMap((rule, i) => {
        const r = obj(rule);
        const writes = list(r.verbs).filter((v): v is string => typeof v === "string" && WRITE_VERBS.includes(v));
        return to.length > 0 && list(r.apiGroups).includes("argoproj.io") && writes.length > 0
            ? [`rule ${i} grants ${writes.join(", ")} on argoproj.io ${list(r.resources).join(", ")} and is aggregated through ${to.join(", ")}`]
            : [];
    });
}

/** A Gateway API plugin list (chart values or the rendered argo-rollouts-config) without checksums. */
function pluginChecksumProblems(plugins: unknown): string[] {
    return list(plugins)
        .map(obj)
        .filter((p) => /^https?:\/\//.test(str(p.location) ?? "") && !/^[a-f0-9]{64}$/.test(str(p.sha256) ?? ""))
        .map((p) => `plugin ${str(p.name) ?? "?"} is downloaded from ${str(p.location)} without a 64-hex sha256`);
}

/** The metric providers of an (Cluster)AnalysisTemplate that break the platform's rules. */
function analysisProviderProblems(spec: unknown): string[] {
    return list(obj(spec).metrics).flatMap((m) => {
        const name = str(obj(m).name) ?? "?";
        const p = obj(obj(m).provider);
        const headers = list(obj(p.prometheus).headers).map(obj);
        const tenant = headers.some((h) => str(h.key)?.toLowerCase() === TENANT_HEADER.toLowerCase() && (str(h.value) ?? "") !== "");
        return [
            ...("job" in p
                ? [`metric ${name} uses the Job provider, whose pod the registry policy denies (ADR-056 as-built): use the Prometheus provider`]
                : []),
            ...("prometheus" in p && !tenant
                ? [`metric ${name} queries Prometheus without ${TENANT_HEADER}: Mimir would not know whose metrics to read (ADR-056 D5)`]
                : []),
        ];
    });
}

/** HTTPRoute rules that could let a client choose its Mimir tenant. */
function tenantHeaderProblems(spec: unknown): string[] {
    return list(obj(spec).rules).flatMap((rr, i) => {
        const rule = obj(rr);
        const modifiers = list(rule.filters).flatMap((f) => (obj(f).type === "RequestHeaderModifier" ? [obj(obj(f).requestHeaderModifier)] : []));
        const names = (field: string) => modifiers.flatMap((m) => list(m[field]).map((h) => str(obj(h).name)?.toLowerCase()));
        const toMimir = list(rule.backendRefs).some((b) => /mimir/.test(str(obj(b).name) ?? ""));
        return [
            ...(names("add").includes(TENANT_HEADER.toLowerCase())
                ? [`rule ${i} adds ${TENANT_HEADER}: add appends to what the client sent, so a spoke could name another tenant; use set (ADR-056 W8c)`]
                : []),
            ...(toMimir && !names("set").includes(TENANT_HEADER.toLowerCase())
                ? [`rule ${i} reaches Mimir without setting ${TENANT_HEADER}: the client's own header would pick the tenant (ADR-056 W8c)`]
                : []),
        ];
    });
}

/**
 * The ignore rules an ArgoCD object of the stack carries, and where they apply: argocd-cm's by key,
 * `.all` (every kind), `<group>_<Kind>`, or `<Kind>` for the core group (argo-cd docs, "Diffing
 * Customization"), and an Application's or ApplicationSet template's own.
 */
function argoIgnoreRules(r: GuardedResource): { rules: IgnoreRule[]; scope: RuleScope } | undefined {
    const kind = kindOf(r.type);
    if ((kind === "ConfigMap" || kind === "ConfigMapPatch") && metaName(r) === "argocd-cm") {
        const rules = Object.entries(obj(r.props.data)).flatMap(([key, text]): IgnoreRule[] => {
            const m = /^resource\.customizations\.ignoreDifferences\.(.+)$/.exec(key);
            if (!m || typeof text !== "string") return [];
            const split = m[1].lastIndexOf("_");
            const gk = m[1] === "all" ? { group: "", kind: "*" } : { group: split < 0 ? "" : m[1].slice(0, split), kind: m[1].slice(split + 1) };
            const body = obj(YAML.parse(text));
            const [jsonPointers, jqPathExpressions, managedFieldsManagers] = ["jsonPointers", "jqPathExpressions", "managedFieldsManagers"].map((k) =>
                list(body[k]).map(String),
            );
            return [{ ...gk, jsonPointers, jqPathExpressions, managedFieldsManagers }];
        });
        return { rules, scope: "system" };
    }
    if (r.type.startsWith("kubernetes:argoproj.io/v1alpha1:Application")) {
        const spec = kind.startsWith("ApplicationSet") ? obj(obj(obj(r.props.spec).template).spec) : obj(r.props.spec);
        return { rules: list(spec.ignoreDifferences).map((x) => fromApplicationRule(obj(x) as unknown as ResourceIgnoreDifferences)), scope: "application" };
    }
    return undefined;
}

/** A rule for every kind reaches each kind a check asks about. */
const asKind = (r: IgnoreRule, kind: Pick<IgnoreRule, "group" | "kind">): IgnoreRule[] =>
    r.kind === "*" ? [{ ...r, ...kind }] : r.kind === kind.kind && r.group === kind.group ? [r] : [];
const label = (r: IgnoreRule): string => `${r.kind === "*" ? "a rule for all kinds" : kindLabel(r)} rule`;

/**
 * PDB budgets that are not whole numbers of pods (ADR-056 D8): a budget the stack declares, and the
 * chart's controller budget. The budget the PDB policies generate is a number by its type
 * (availability.ts `pdbTemplate`), and the configuration refuses a percentage before it.
 */
export function pdbBudgetProblems(r: GuardedResource): string[] {
    if (kindOf(r.type) === "PodDisruptionBudget") {
        const spec = obj(r.props.spec);
        return ["maxUnavailable", "minAvailable"]
            .filter((f) => typeof spec[f] === "string" && (spec[f] as string).includes("%"))
            .map((f) => `${f} is a percentage (${String(spec[f])}); use a whole number of pods`);
    }
    const pdb = obj(obj(obj(r.props.values).controller).pdb);
    return CHART_TYPE.test(r.type) && pdb.enabled === true && !(Number.isInteger(pdb.maxUnavailable) && (pdb.maxUnavailable as number) >= 1)
        ? [`controller.pdb.maxUnavailable is ${JSON.stringify(pdb.maxUnavailable)}: the chart then renders minAvailable: 0; set a whole number >= 1`]
        : [];
}

export const RESOURCE_CHECKS: readonly ResourceCheck[] = [
    {
        name: "no-rbac-wildcards",
        description: "No RBAC rule grants a wildcard group, resource or verb: the controller and the plugin get exactly what they use.",
        check: (r) => (RBAC_TYPES.test(r.type) ? wildcardFields(r.props.rules).map((w) => `rule ${w.rule} grants ${w.field} "*"`) : []),
    },
    {
        name: "no-aggregated-rollout-writes",
        description:
            "No ClusterRole aggregated to view, edit or admin writes Argo Rollouts objects: every namespace viewer, editor or admin would get it, and a write of rollouts/status is a promotion (ADR-056 D3; the chart's aggregate roles stay off).",
        check: (r) => (RBAC_TYPES.test(r.type) ? aggregatedRolloutWrites(obj(obj(r.props.metadata).labels), r.props.rules) : []),
    },
    {
        name: "rollouts-crds-protected",
        description: "The Argo Rollouts CRDs are protected and retained on delete: deleting the Rollout CRD deletes every Rollout in the cluster (ADR-056 D7).",
        check: (r) =>
            r.type === CRD_TYPE && ROLLOUTS_CRDS.some((c) => c.name === metaName(r))
                ? [...(r.protect ? [] : ["is not protected"]), ...(r.retainOnDelete === false ? ["is not retained on delete"] : [])]
                : [],
    },
    {
        name: "plugin-download-checksum",
        description: "A plugin the controller downloads carries a 64-hex sha256: the Gateway API plugin publishes no checksum file (ADR-056 D7).",
        check: (r) => {
            const text = kindOf(r.type) === "ConfigMap" && metaName(r) === "argo-rollouts-config" ? str(obj(r.props.data).trafficRouterPlugins) : undefined;
            return CHART_TYPE.test(r.type)
                ? pluginChecksumProblems(obj(obj(r.props.values).controller).trafficRouterPlugins)
                : text
                  ? pluginChecksumProblems(YAML.parse(text))
                  : [];
        },
    },
    {
        name: "analysis-prometheus-with-tenant",
        description:
            "Analysis templates use the Prometheus provider (a Job's pod is denied by the registry policy) and send X-Scope-OrgID (ADR-056 D5, as-built).",
        check: (r) => (/^kubernetes:argoproj\.io\/.*:(Cluster)?AnalysisTemplate$/.test(r.type) ? analysisProviderProblems(r.props.spec) : []),
    },
    {
        name: "mimir-routes-set-tenant",
        description: "Every HTTPRoute rule to Mimir sets (never adds) X-Scope-OrgID, so no spoke can read another tenant (ADR-056 W8c).",
        check: (r) => (r.type === "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute" ? tenantHeaderProblems(r.props.spec) : []),
    },
    {
        name: "no-array-ignore-rules-on-rollout",
        description:
            "No ArgoCD ignore rule with an array-element path reaches a Rollout: with RespectIgnoreDifferences it silently freezes the image (ADR-056 as-built 2026-07-14).",
        check: (r) =>
            (argoIgnoreRules(r)?.rules ?? []).flatMap((x) =>
                asKind(x, ROLLOUT).flatMap((y) =>
                    rolloutArrayPathReasons(y).map((reason) => `${x.kind === "*" ? "a rule for all kinds" : "a Rollout rule"}: ${reason}`),
                ),
            ),
    },
    {
        name: "narrow-canary-ignore-rules",
        description:
            "ArgoCD ignore rules for the canary touch only what the controller and the plugin write: no managedFieldsManagers on HTTPRoute, no HTTPRoute rule in argocd-cm (it applies to every Application), no rule for a whole Service selector. With RespectIgnoreDifferences each of those freezes route or selector edits from git (ADR-056 as-built #871; argo-cd controller/sync.go).",
        check: (r) => {
            const found = argoIgnoreRules(r);
            return (found?.rules ?? []).flatMap((x) =>
                (x.kind === "*" ? [SERVICE, HTTPROUTE].flatMap((k) => asKind(x, k)) : [x]).flatMap((y) =>
                    canaryRuleReasons(y, found!.scope).map((reason) => `${label(x)}: ${reason}`),
                ),
            );
        },
    },
    {
        name: "integer-pdb-budgets",
        description: "PodDisruptionBudget budgets for rollout workloads are whole numbers of pods (ADR-056 D8).",
        check: pdbBudgetProblems,
    },
    {
        name: "dashboard-read-only",
        description: "The Argo Rollouts dashboard, when enabled, is read-only: otherwise it promotes with its own ServiceAccount, bypassing the approver role.",
        check: (r) => {
            const d = obj(obj(r.props.values).dashboard);
            return CHART_TYPE.test(r.type) && d.enabled === true && d.readonly !== true ? ["dashboard.enabled without dashboard.readonly: true"] : [];
        },
    },
];

/** Each resource's stage, by its ancestors' component types. */
function stagesOf(resources: GuardedResource[]): Map<string, StageName | undefined> {
    const byUrn = new Map(resources.map((r) => [r.urn, r]));
    const byType = new Map<string, StageName>(Object.entries(STAGE_TYPES).map(([s, t]) => [t, s as StageName]));
    const stageOf = (r: GuardedResource | undefined): StageName | undefined =>
        r ? (byType.get(r.type) ?? stageOf(r.parent ? byUrn.get(r.parent) : undefined)) : undefined;
    return new Map(resources.map((r) => [r.urn, stageOf(r)]));
}

/** Components the provider renders: their children start only after the component's own dependencies. */
const REMOTE_COMPONENT = /^kubernetes:(helm\.sh\/v4:Chart|yaml\/v2:Config(Group|File)|kustomize\/v2:Directory)$/;

/** Everything a resource waits for, through its dependencies and provider-rendered ancestors. */
function waitsFor(resources: GuardedResource[]): (urn: string) => Set<string> {
    const byUrn = new Map(resources.map((r) => [r.urn, r]));
    const ancestors = (r: GuardedResource): GuardedResource[] => {
        const p = r.parent ? byUrn.get(r.parent) : undefined;
        return p ? [p, ...ancestors(p)] : [];
    };
    const direct = (r: GuardedResource) => [...r.dependencies, ...ancestors(r).flatMap((p) => (REMOTE_COMPONENT.test(p.type) ? p.dependencies : []))];
    const children = new Map<string, string[]>();
    for (const r of resources.filter((x) => x.parent)) {
        children.set(r.parent!, [...(children.get(r.parent!) ?? []), r.urn]);
    }
    const memo = new Map<string, Set<string>>();
    return (urn) => {
        if (!memo.has(urn)) {
            const seen = new Set<string>();
            const todo = direct(byUrn.get(urn)!);
            for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
                const r = byUrn.get(next);
                if (r && !seen.has(next)) {
                    seen.add(next);
                    // Waiting for a provider-rendered component is waiting for everything it renders.
                    todo.push(...direct(r), ...(REMOTE_COMPONENT.test(r.type) ? (children.get(next) ?? []) : []));
                }
            }
            memo.set(urn, seen);
        }
        return memo.get(urn)!;
    };
}

const KYVERNO_POLICY = /^kubernetes:(policies\.kyverno\.io\/v1:(Validating|Mutating|Generating|ImageValidating)Policy|kyverno\.io\/v1:(Cluster)?Policy)$/;

export const STACK_CHECKS: readonly StackCheck[] = [
    {
        name: "admission-after-crds",
        description:
            "Every admission policy that names Rollout waits for the Rollout CRD: Kyverno refuses, or leaves not ready, a policy for a kind whose CRD is absent (Kyverno #7839, ADR-056 D2).",
        check: (resources) => {
            const deps = waitsFor(resources);
            const crds = new Set(resources.filter((r) => r.type === CRD_TYPE && metaName(r) === "rollouts.argoproj.io").map((r) => r.urn));
            return resources
                .filter((r) => KYVERNO_POLICY.test(r.type) && JSON.stringify(r.props).includes("rollouts") && ![...deps(r.urn)].some((u) => crds.has(u)))
                .map((r) => `${kindOf(r.type)} ${metaName(r)} names Rollout but does not wait for the rollouts.argoproj.io CRD`);
        },
    },
    {
        name: "stages-in-order",
        description:
            "The four stages run in order, gateway -> rollouts -> policy -> argocd-apps: every resource of a later stage waits for every resource of the earlier ones (ADR-056 D7).",
        check: (resources) => {
            const stages = stagesOf(resources);
            const deps = waitsFor(resources);
            const members = (s: StageName) => resources.filter((r) => stages.get(r.urn) === s && !r.component);
            return STAGES.flatMap((later, li) =>
                members(later).flatMap((r) =>
                    STAGES.slice(0, li).flatMap((earlier) => {
                        const missing = members(earlier).filter((e) => !deps(r.urn).has(e.urn));
                        return missing.length > 0 ? [`${later}/${r.name} does not wait for ${earlier}/${missing.map((m) => m.name).join(", ")}`] : [];
                    }),
                ),
            );
        },
    },
];

export type Violation = { check: string; urn: string; message: string };

/** Runs every check over a stack's resources. */
export function runGuardrails(resources: GuardedResource[]): Violation[] {
    return [
        ...resources.flatMap((r) => RESOURCE_CHECKS.flatMap((c) => c.check(r).map((message) => ({ check: c.name, urn: r.urn, message })))),
        ...STACK_CHECKS.flatMap((c) => c.check(resources).map((message) => ({ check: c.name, urn: "", message }))),
    ];
}
