/**
 * The pure half of `npm run adopt-check`: given what the stack declares and what the cluster
 * holds, what the adopting run would take over, change, leave behind or break. Nothing here reads
 * the cluster; tools/adopt-check.ts does, with GETs and LISTs only.
 */
import type { KubeObject } from "../verify/cluster";

export { imageTag, isDowngrade, parseVersion } from "../../components/cluster/adoption";

export { apiPath, objectName, plural } from "../../components/cluster/live";

/** The field managers of a live object, `manager (operation)`, in the API server's order. */
export function fieldManagers(live: KubeObject): string[] {
    return [...new Set((live.metadata?.managedFields ?? []).map((e) => `${e.manager ?? "?"} (${e.operation ?? "?"})`))];
}

/** Annotations the provider reads and never compares (pulumi-kubernetes metadata/annotations.go). */
const INTERNAL_ANNOTATION = /^pulumi\.com\//;

/**
 * The fields the stack sets to another value than the live object has: every leaf of the planned
 * object (a list counts as one leaf) whose live value differs or is absent. Fields the stack does
 * not set are not listed: a forced server-side apply leaves them to their old manager. A Secret's
 * `data` and `stringData` are never compared or shown.
 */
export function fieldChanges(planned: Record<string, unknown>, live: KubeObject): string[] {
    const out: string[] = [];
    const secret = planned.kind === "Secret";
    const walk = (want: unknown, have: unknown, at: string[]) => {
        if (at.length === 2 && at[0] === "metadata" && at[1] === "annotations" && isRecord(want)) {
            for (const [k, v] of Object.entries(want)) {
                if (!INTERNAL_ANNOTATION.test(k)) {
                    walk(v, isRecord(have) ? have[k] : undefined, [...at, k]);
                }
            }
            return;
        }
        // A list of named items (containers, ports by name) is compared item by item, by name.
        if (Array.isArray(want) && want.length > 0 && want.every((x) => isRecord(x) && typeof x.name === "string") && Array.isArray(have)) {
            for (const item of want as Record<string, unknown>[]) {
                const match = (have as unknown[]).find((h) => isRecord(h) && h.name === item.name);
                walk(item, match, [...at.slice(0, -1), `${at[at.length - 1]}[${String(item.name)}]`]);
            }
            return;
        }
        if (isRecord(want) && Object.keys(want).length > 0) {
            for (const [k, v] of Object.entries(want)) {
                if (at.length === 0 && (k === "apiVersion" || k === "kind" || k === "status" || (secret && (k === "data" || k === "stringData")))) {
                    continue;
                }
                walk(v, isRecord(have) ? have[k] : undefined, [...at, k]);
            }
            return;
        }
        if (JSON.stringify(normalize(want)) !== JSON.stringify(normalize(have))) {
            out.push(at.join("."));
        }
    };
    walk(planned, live, []);
    return out;
}

function normalize(v: unknown): unknown {
    // The plan renders numbers and booleans as the SDK serialized them; the API server returns JSON types.
    return typeof v === "number" || typeof v === "boolean" ? String(v) : v;
}

function isRecord(v: unknown): v is Record<string, unknown> {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The data keys of a live ConfigMap that the stack will not write: they stay, owned by their old manager. */
export function staleKeys(live: KubeObject | undefined, written: readonly string[]): string[] {
    const data = isRecord(live?.data) ? Object.keys(live!.data as Record<string, unknown>) : [];
    return data.filter((k) => !written.includes(k)).sort();
}

/** A JSON patch command that removes data keys from a ConfigMap, and nothing else. */
export function removeKeysCommand(namespace: string, name: string, keys: readonly string[]): string {
    const ops = keys.map((k) => ({ op: "remove", path: `/data/${k.replace(/~/g, "~0").replace(/\//g, "~1")}` }));
    return `kubectl patch configmap ${name} -n ${namespace} --type=json -p '${JSON.stringify(ops)}'`;
}

/** An analysis argument, as Rollouts and templates write them (argo-rollouts v1alpha1 Argument). */
export interface Argument {
    name: string;
    value?: string;
    valueFrom?: unknown;
}

/** One reference of a Rollout to a ClusterAnalysisTemplate, with the args passed along. */
export interface TemplateReference {
    rollout: string;
    where: string;
    template: string;
    args: Argument[];
}

interface AnalysisLike {
    templates?: { templateName?: string; clusterScope?: boolean }[];
    args?: Argument[];
}

/**
 * Every ClusterAnalysisTemplate a Rollout references, where, and with which args: canary
 * background analysis and analysis steps, blue/green pre- and post-promotion analysis
 * (argo-rollouts v1.9.0 pkg/apis/rollouts/v1alpha1/types.go, RolloutAnalysis). A namespaced
 * AnalysisTemplate (no `clusterScope`) is the tenant's own and not listed.
 */
export function templateReferences(rollout: KubeObject): TemplateReference[] {
    const name = `${rollout.metadata?.namespace ?? ""}/${rollout.metadata?.name ?? ""}`;
    const strategy = (isRecord(rollout.spec) ? (rollout.spec as Record<string, unknown>).strategy : undefined) as Record<string, unknown> | undefined;
    const found: { where: string; analysis: AnalysisLike }[] = [];
    const canary = strategy?.canary as { analysis?: AnalysisLike; steps?: { analysis?: AnalysisLike }[] } | undefined;
    if (canary?.analysis) {
        found.push({ where: "canary.analysis", analysis: canary.analysis });
    }
    (canary?.steps ?? []).forEach((s, i) => s.analysis && found.push({ where: `canary.steps[${i}].analysis`, analysis: s.analysis }));
    const blueGreen = strategy?.blueGreen as { prePromotionAnalysis?: AnalysisLike; postPromotionAnalysis?: AnalysisLike } | undefined;
    for (const w of ["prePromotionAnalysis", "postPromotionAnalysis"] as const) {
        if (blueGreen?.[w]) {
            found.push({ where: `blueGreen.${w}`, analysis: blueGreen[w]! });
        }
    }
    return found.flatMap(({ where, analysis }) =>
        (analysis.templates ?? [])
            .filter((t) => t.clusterScope && t.templateName)
            .map((t) => ({ rollout: name, where, template: t.templateName!, args: analysis.args ?? [] })),
    );
}

/**
 * The template's declared args a reference leaves without a value. Restates argo-rollouts v1.9.0
 * utils/analysis/helpers.go: MergeArgs copies a passed value or valueFrom onto the template arg
 * of the same name and ignores args the template does not declare; ResolveArgs then fails on any
 * arg with neither ("args.<name> was not resolved"), and the Rollout goes InvalidSpec.
 */
export function unresolvedArgs(templateArgs: readonly Argument[], passed: readonly Argument[]): string[] {
    return templateArgs
        .filter((a) => {
            const incoming = passed.find((p) => p.name === a.name);
            const value = incoming?.value !== undefined ? incoming.value : a.value;
            const valueFrom = incoming?.value === undefined && incoming?.valueFrom !== undefined ? incoming.valueFrom : a.valueFrom;
            return value === undefined && valueFrom === undefined;
        })
        .map((a) => a.name);
}

/**
 * Field managers that belong to Terraform. Terraform's kubernetes provider applies
 * `kubernetes_manifest` with the field manager named in its `field_manager` block, "Terraform"
 * unless set (hashicorp/terraform-provider-kubernetes docs, resources/manifest). A CRD in a
 * Terraform state is deleted, with every Rollout, by a destroy of that state, whatever its
 * annotations say.
 */
export function terraformManagers(live: KubeObject): string[] {
    return fieldManagers(live).filter((m) => /terraform/i.test(m));
}
