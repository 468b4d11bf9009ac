/**
 * Guardrails: the ADR's traps as checks over the resources a stack declares. The same checks run
 * in the Pulumi policy pack (`pulumi preview --policy-pack policy-pack`, on every resource the engine
 * sees, chart children included) and in the offline plan, so the two can never disagree.
 */
import * as YAML from "yaml";
import {
    HTTPROUTE,
    IgnoreRule,
    ROLLOUT,
    ResourceIgnoreDifferences,
    RuleScope,
    SERVICE,
    canaryRuleReasons,
    fromApplicationRule,
    kindLabel,
    rolloutArrayPathReasons,
} from "../argocd/ignoreRules";
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

export interface ResourceCheck {
    name: string;
    /** What it protects, citing the ADR decision or upstream fact. */
    description: string;
    check(r: GuardedResource): string[];
}

export interface StackCheck {
    name: string;
    description: string;
    check(resources: GuardedResource[]): string[];
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const kindOf = (type: string): string => type.split(":").pop() ?? "";
const metaName = (r: GuardedResource): string => str(obj(r.props.metadata).name) ?? r.name;

const RBAC_TYPES = /^kubernetes:rbac\.authorization\.k8s\.io\/v1:(Cluster)?Role$/;
const CHART_TYPE = /^kubernetes:helm\.sh\/v[34]:Chart$/;
const HEX64 = /^[a-f0-9]{64}$/;

/** Wildcards in RBAC rules (design: least privilege, never `*`). */
export function rbacWildcards(rules: unknown): string[] {
    return wildcardFields(rules).map((w) => `rule ${w.rule} grants ${w.field} "*"`);
}

const AGGREGATE_TO = /^rbac\.authorization\.k8s\.io\/aggregate-to-(view|edit|admin)$/;
const WRITE_VERBS = ["create", "update", "patch", "delete", "deletecollection"];

/** The write grants on argoproj.io objects of a role whose labels aggregate it to view, edit or admin. */
export function aggregatedRolloutWrites(labels: Obj, rules: unknown): string[] {
    const to = Object.keys(labels).filter((k) => AGGREGATE_TO.test(k) && labels[k] === "true");
    if (to.length === 0) {
        return [];
    }
    return list(rules).flatMap((rule, i) => {
        const r = obj(rule);
        const writes = list(r.verbs).filter((v): v is string => typeof v === "string" && WRITE_VERBS.includes(v));
        return list(r.apiGroups).includes("argoproj.io") && writes.length > 0
            ? [`rule ${i} grants ${writes.join(", ")} on argoproj.io ${list(r.resources).join(", ")} and is aggregated through ${to.join(", ")}`]
            : [];
    });
}

/** A Gateway API plugin list (chart values or the rendered argo-rollouts-config) without checksums. */
export function pluginChecksumProblems(plugins: unknown): string[] {
    const out: string[] = [];
    for (const p of list(plugins)) {
        const entry = obj(p);
        const location = str(entry.location) ?? "";
        if (/^https?:\/\//.test(location) && !HEX64.test(str(entry.sha256) ?? "")) {
            out.push(`plugin ${str(entry.name) ?? "?"} is downloaded from ${location} without a 64-hex sha256`);
        }
    }
    return out;
}

/** The metric providers of an (Cluster)AnalysisTemplate that break the platform's rules. */
export function analysisProviderProblems(spec: unknown): string[] {
    const out: string[] = [];
    for (const m of list(obj(spec).metrics)) {
        const metric = obj(m);
        const provider = obj(metric.provider);
        const name = str(metric.name) ?? "?";
        if ("job" in provider) {
            out.push(`metric ${name} uses the Job provider, whose pod the registry policy denies (ADR-056 as-built): use the Prometheus provider`);
        }
        if ("prometheus" in provider) {
            const headers = list(obj(provider.prometheus).headers).map(obj);
            if (!headers.some((h) => str(h.key)?.toLowerCase() === TENANT_HEADER.toLowerCase() && (str(h.value) ?? "") !== "")) {
                out.push(`metric ${name} queries Prometheus without ${TENANT_HEADER}: Mimir would not know whose metrics to read (ADR-056 D5)`);
            }
        }
    }
    return out;
}

/** HTTPRoute rules that could let a client choose its Mimir tenant. */
export function tenantHeaderProblems(spec: unknown): string[] {
    const out: string[] = [];
    list(obj(spec).rules).forEach((rr, i) => {
        const rule = obj(rr);
        const modifiers = list(rule.filters)
            .map(obj)
            .filter((f) => f.type === "RequestHeaderModifier")
            .map((f) => obj(f.requestHeaderModifier));
        const names = (field: string) => modifiers.flatMap((m) => list(m[field]).map((h) => str(obj(h).name)?.toLowerCase()));
        if (names("add").includes(TENANT_HEADER.toLowerCase())) {
            out.push(`rule ${i} adds ${TENANT_HEADER}: add appends to what the client sent, so a spoke could name another tenant; use set (ADR-056 W8c)`);
        }
        const toMimir = list(rule.backendRefs).some((b) => /mimir/.test(str(obj(b).name) ?? ""));
        if (toMimir && !names("set").includes(TENANT_HEADER.toLowerCase())) {
            out.push(`rule ${i} reaches Mimir without setting ${TENANT_HEADER}: the client's own header would pick the tenant (ADR-056 W8c)`);
        }
    });
    return out;
}

/** ignoreDifferences rules that reach a Rollout through an array path (ADR-056 as-built 2026-07-14). */
export function rolloutIgnoreProblems(rules: IgnoreRule[]): string[] {
    return rules.flatMap((r) =>
        rolloutArrayPathReasons(r.kind === "*" ? { ...r, ...ROLLOUT } : r).map(
            (reason) => `${r.kind === "*" ? "a rule for all kinds" : "a Rollout rule"}: ${reason}`,
        ),
    );
}

/**
 * Every ignore rule of argocd-cm, by its key: `.all` (every kind), `<group>_<Kind>`, or `<Kind>` for
 * the core group (argo-cd docs, "Diffing Customization").
 */
export function argocdCmRules(data: unknown): IgnoreRule[] {
    const out: IgnoreRule[] = [];
    for (const [key, text] of Object.entries(obj(data))) {
        const m = /^resource\.customizations\.ignoreDifferences\.(.+)$/.exec(key);
        if (!m || typeof text !== "string") {
            continue;
        }
        const split = m[1].lastIndexOf("_");
        const gk =
            m[1] === "all" ? { group: "", kind: "*" } : split < 0 ? { group: "", kind: m[1] } : { group: m[1].slice(0, split), kind: m[1].slice(split + 1) };
        const body = obj(YAML.parse(text));
        out.push({
            ...gk,
            jsonPointers: list(body.jsonPointers).map(String),
            jqPathExpressions: list(body.jqPathExpressions).map(String),
            managedFieldsManagers: list(body.managedFieldsManagers).map(String),
        });
    }
    return out;
}

/** Application-level ignore rules (an Application's spec, or an ApplicationSet's template spec). */
export function applicationRules(spec: unknown): IgnoreRule[] {
    return list(obj(spec).ignoreDifferences).map((r) => fromApplicationRule(obj(r) as unknown as ResourceIgnoreDifferences));
}

/** Rules that reach a Rollout: its own kind, or every kind. */
const reachesRollout = (r: IgnoreRule): boolean => r.kind === "*" || (r.kind === ROLLOUT.kind && r.group === ROLLOUT.group);

/** Rules that would undo the narrow canary rules: see `canaryRuleReasons`. A rule for every kind reaches both kinds. */
export function canaryIgnoreProblems(rules: IgnoreRule[], scope: RuleScope): string[] {
    return rules.flatMap((r) =>
        (r.kind === "*"
            ? [
                  { ...r, ...SERVICE },
                  { ...r, ...HTTPROUTE },
              ]
            : [r]
        ).flatMap((x) => canaryRuleReasons(x, scope).map((reason) => `${r.kind === "*" ? "a rule for all kinds" : kindLabel(r)} rule: ${reason}`)),
    );
}

/** The ignore rules an ArgoCD object of the stack carries, and where they apply. */
function argoIgnoreRules(r: GuardedResource): { rules: IgnoreRule[]; scope: RuleScope } | undefined {
    const kind = kindOf(r.type);
    if ((kind === "ConfigMap" || kind === "ConfigMapPatch") && metaName(r) === "argocd-cm") {
        return { rules: argocdCmRules(r.props.data), scope: "system" };
    }
    if (r.type.startsWith("kubernetes:argoproj.io/v1alpha1:Application")) {
        const spec = kind.startsWith("ApplicationSet") ? obj(obj(obj(r.props.spec).template).spec) : obj(r.props.spec);
        return { rules: applicationRules(spec), scope: "application" };
    }
    return undefined;
}

const isPercent = (v: unknown): boolean => typeof v === "string" && v.includes("%");

/** PDB budgets that are not whole numbers of pods (ADR-056 D8). */
export function pdbBudgetProblems(r: GuardedResource): string[] {
    const kind = kindOf(r.type);
    if (kind === "PodDisruptionBudget") {
        const spec = obj(r.props.spec);
        return ["maxUnavailable", "minAvailable"]
            .filter((f) => isPercent(spec[f]))
            .map((f) => `${f} is a percentage (${String(spec[f])}); use a whole number of pods`);
    }
    if (CHART_TYPE.test(r.type)) {
        const pdb = obj(obj(obj(r.props.values).controller).pdb);
        if (pdb.enabled === true && !(Number.isInteger(pdb.maxUnavailable) && (pdb.maxUnavailable as number) >= 1)) {
            return [`controller.pdb.maxUnavailable is ${JSON.stringify(pdb.maxUnavailable)}: the chart then renders minAvailable: 0; set a whole number >= 1`];
        }
        return [];
    }
    if (/^kubernetes:(policies\.kyverno\.io\/v1:GeneratingPolicy|kyverno\.io\/v1:ClusterPolicy)$/.test(r.type)) {
        // Both forms carry the generated PDB's budget as a literal: a CEL `"maxUnavailable": dyn("25%")`
        // or a ClusterPolicy `maxUnavailable: "25%"` in the generate data.
        const text = JSON.stringify(r.props);
        return /maxUnavailable\\?"?:\s*(dyn\()?\\?"[0-9]+%/.test(text)
            ? ["the generated PodDisruptionBudget's maxUnavailable is a percentage; use a whole number of pods"]
            : [];
    }
    return [];
}

export const RESOURCE_CHECKS: readonly ResourceCheck[] = [
    {
        name: "no-rbac-wildcards",
        description: "No RBAC rule grants a wildcard group, resource or verb: the controller and the plugin get exactly what they use.",
        check: (r) => (RBAC_TYPES.test(r.type) ? rbacWildcards(r.props.rules) : []),
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
        check: (r) => {
            if (r.type !== CRD_TYPE || !ROLLOUTS_CRDS.some((c) => c.name === metaName(r))) {
                return [];
            }
            return [...(r.protect ? [] : ["is not protected"]), ...(r.retainOnDelete === false ? ["is not retained on delete"] : [])];
        },
    },
    {
        name: "plugin-download-checksum",
        description: "A plugin the controller downloads carries a 64-hex sha256: the Gateway API plugin publishes no checksum file (ADR-056 D7).",
        check: (r) => {
            if (CHART_TYPE.test(r.type)) {
                return pluginChecksumProblems(obj(obj(r.props.values).controller).trafficRouterPlugins);
            }
            if (kindOf(r.type) === "ConfigMap" && metaName(r) === "argo-rollouts-config") {
                const text = str(obj(r.props.data).trafficRouterPlugins);
                return text ? pluginChecksumProblems(YAML.parse(text)) : [];
            }
            return [];
        },
    },
    {
        name: "analysis-prometheus-with-tenant",
        description:
            "Analysis templates use the Prometheus provider (a Job's pod is denied by the registry policy) and send X-Scope-OrgID (ADR-056 D5, as-built).",
        check: (r) =>
            /:(Cluster)?AnalysisTemplate$/.test(r.type) && r.type.startsWith("kubernetes:argoproj.io/") ? analysisProviderProblems(r.props.spec) : [],
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
        check: (r) => {
            const found = argoIgnoreRules(r);
            return found ? rolloutIgnoreProblems(found.rules.filter(reachesRollout)) : [];
        },
    },
    {
        name: "narrow-canary-ignore-rules",
        description:
            "ArgoCD ignore rules for the canary touch only what the controller and the plugin write: no managedFieldsManagers on HTTPRoute, no HTTPRoute rule in argocd-cm (it applies to every Application), no rule for a whole Service selector. With RespectIgnoreDifferences each of those freezes route or selector edits from git (ADR-056 as-built #871; argo-cd controller/sync.go).",
        check: (r) => {
            const found = argoIgnoreRules(r);
            return found ? canaryIgnoreProblems(found.rules, found.scope) : [];
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
            const dashboard = obj(obj(r.props.values).dashboard);
            return CHART_TYPE.test(r.type) && dashboard.enabled === true && dashboard.readonly !== true
                ? ["dashboard.enabled without dashboard.readonly: true"]
                : [];
        },
    },
];

/** Each resource's stage, by its ancestors' component types. */
export function stagesOf(resources: GuardedResource[]): Map<string, StageName | undefined> {
    const byUrn = new Map(resources.map((r) => [r.urn, r]));
    const byType = new Map<string, StageName>(Object.entries(STAGE_TYPES).map(([s, t]) => [t, s as StageName]));
    const out = new Map<string, StageName | undefined>();
    for (const r of resources) {
        let cur: GuardedResource | undefined = r;
        let stage: StageName | undefined;
        while (cur && !stage) {
            stage = byType.get(cur.type);
            cur = cur.parent ? byUrn.get(cur.parent) : undefined;
        }
        out.set(r.urn, stage);
    }
    return out;
}

/** Components the provider renders: their children start only after the component's own dependencies. */
const REMOTE_COMPONENT = /^kubernetes:(helm\.sh\/v4:Chart|yaml\/v2:Config(Group|File)|kustomize\/v2:Directory)$/;

/** Everything a resource waits for, through its dependencies and provider-rendered ancestors. */
export function waitsFor(resources: GuardedResource[]): (urn: string) => Set<string> {
    const byUrn = new Map(resources.map((r) => [r.urn, r]));
    const direct = (r: GuardedResource): string[] => {
        const deps = [...r.dependencies];
        for (let p = r.parent ? byUrn.get(r.parent) : undefined; p; p = p.parent ? byUrn.get(p.parent) : undefined) {
            if (REMOTE_COMPONENT.test(p.type)) {
                deps.push(...p.dependencies);
            }
        }
        return deps;
    };
    const children = new Map<string, string[]>();
    for (const r of resources) {
        if (r.parent) {
            children.set(r.parent, [...(children.get(r.parent) ?? []), r.urn]);
        }
    }
    const memo = new Map<string, Set<string>>();
    return (urn: string) => {
        const cached = memo.get(urn);
        if (cached) {
            return cached;
        }
        const seen = new Set<string>();
        const todo = [...direct(byUrn.get(urn)!)];
        while (todo.length > 0) {
            const next = todo.pop()!;
            if (seen.has(next) || !byUrn.has(next)) {
                continue;
            }
            seen.add(next);
            const r = byUrn.get(next)!;
            todo.push(...direct(r));
            // Waiting for a provider-rendered component is waiting for everything it renders.
            if (REMOTE_COMPONENT.test(r.type)) {
                todo.push(...(children.get(next) ?? []));
            }
        }
        memo.set(urn, seen);
        return seen;
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
            const out: string[] = [];
            for (const r of resources.filter((x) => KYVERNO_POLICY.test(x.type) && JSON.stringify(x.props).includes("rollouts"))) {
                if (![...deps(r.urn)].some((u) => crds.has(u))) {
                    out.push(`${kindOf(r.type)} ${metaName(r)} names Rollout but does not wait for the rollouts.argoproj.io CRD`);
                }
            }
            return out;
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
            const out: string[] = [];
            STAGES.forEach((later, li) => {
                for (const r of members(later)) {
                    const waits = deps(r.urn);
                    for (const earlier of STAGES.slice(0, li)) {
                        const missing = members(earlier).filter((e) => !waits.has(e.urn));
                        if (missing.length > 0) {
                            out.push(`${later}/${r.name} does not wait for ${earlier}/${missing.map((m) => m.name).join(", ")}`);
                        }
                    }
                }
            });
            return out;
        },
    },
];

export interface Violation {
    check: string;
    urn: string;
    message: string;
}

/** Runs every check over a stack's resources. */
export function runGuardrails(resources: GuardedResource[]): Violation[] {
    const out: Violation[] = [];
    for (const r of resources) {
        for (const c of RESOURCE_CHECKS) {
            for (const message of c.check(r)) {
                out.push({ check: c.name, urn: r.urn, message });
            }
        }
    }
    for (const c of STACK_CHECKS) {
        for (const message of c.check(resources)) {
            out.push({ check: c.name, urn: "", message });
        }
    }
    return out;
}
