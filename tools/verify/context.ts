import type { AddonConfig } from "../../stacks/config";
import type { HttpAnswer, KubeObject, ReadOnlyCluster } from "./cluster";
import type { CheckResult } from "./report";

export interface VerifyOptions {
    /** Namespace Kyverno runs in (its chart's release namespace). */
    kyvernoNamespace: string;
    /** Platform components declared absent on this cluster: the checks that need them SKIP (index.ts COMPONENTS). */
    without: readonly ("rollouts-controller" | "kyverno" | "argocd" | "gateway-controller" | "mimir")[];
    /** How long to wait for the smoke canary to finish before judging it; 0: judge it as it is. */
    smokeTimeoutSeconds: number;
    /** Seconds between two looks at the smoke canary while waiting. */
    smokePollSeconds: number;
    now: () => Date;
    sleep: (ms: number) => Promise<void>;
    /**
     * A GET from this machine to an address outside the cluster (a spoke's read endpoint), trusting
     * what the controller trusts: the public roots and, when the stack sets `mimir.readCaBundle`,
     * `trust.extraCa`.
     */
    httpGet: (url: string, headers: Record<string, string>, trust: { extraCa?: string }) => Promise<HttpAnswer>;
}

export interface VerifyContext {
    config: AddonConfig;
    cluster: ReadOnlyCluster;
    options: VerifyOptions;
}

/** A group of checks: each returns one result per requirement it verifies. */
export type CheckGroup = (ctx: VerifyContext) => Promise<CheckResult[]>;

/** A status condition as Kubernetes objects report them (metav1.Condition and its older cousins). */
export interface Condition {
    type: string;
    status: string;
    reason?: string;
    message?: string;
    lastTransitionTime?: string;
}

export function conditions(obj: KubeObject | undefined, path: (status: Record<string, unknown>) => unknown = (s) => s.conditions): Condition[] {
    const status = obj?.status;
    if (typeof status !== "object" || status === null) {
        return [];
    }
    const list = path(status as Record<string, unknown>);
    return Array.isArray(list) ? (list as Condition[]) : [];
}

export function condition(list: readonly Condition[], type: string): Condition | undefined {
    return list.find((c) => c.type === type);
}

/** `Type=Status (Reason: message)`, for a finding. */
export function describeCondition(c: Condition | undefined, type: string): string {
    if (!c) {
        return `no ${type} condition`;
    }
    const why = [c.reason, c.message].filter(Boolean).join(": ");
    return `${c.type}=${c.status}${why ? ` (${why})` : ""}`;
}

export const ref = (kind: string, namespace: string | undefined, name: string): string => `${kind} ${namespace ? `${namespace}/` : ""}${name}`;

export const nameOf = (o: KubeObject): string => o.metadata?.name ?? "";
export const namespaceOf = (o: KubeObject): string => o.metadata?.namespace ?? "";

/** Reads a nested field of an object of unknown shape. */
export function field(obj: unknown, ...path: (string | number)[]): unknown {
    let cur: unknown = obj;
    for (const key of path) {
        if (cur === null || typeof cur !== "object") {
            return undefined;
        }
        cur = (cur as Record<string | number, unknown>)[key];
    }
    return cur;
}

/** JSON with sorted keys, so two objects compare by content. */
export function canonical(v: unknown): string {
    if (Array.isArray(v)) {
        return `[${v.map(canonical).join(",")}]`;
    }
    if (v !== null && typeof v === "object") {
        return `{${Object.keys(v)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
            .join(",")}}`;
    }
    return JSON.stringify(v);
}

/** A value for a finding, shortened. */
export const shown = (v: unknown, from = 0): string => {
    const text = JSON.stringify(v) ?? "nothing";
    if (text.length <= 100) {
        return text;
    }
    const start = Math.max(0, Math.min(from - 40, text.length - 100));
    return `${start > 0 ? "..." : ""}${text.slice(start, start + 100)}${start + 100 < text.length ? "..." : ""}`;
};

/** Where two JSON texts first differ, so a long string is shown around its difference. */
const firstDifference = (a: unknown, b: unknown): number => {
    const x = JSON.stringify(a) ?? "";
    const y = JSON.stringify(b) ?? "";
    let i = 0;
    while (i < x.length && i < y.length && x[i] === y[i]) {
        i++;
    }
    return i;
};

/**
 * Where `live` does not carry what `declared` says: every declared field present with the same
 * value, lists entry by entry and of the same length. Extra live fields are not drift: the API
 * server fills in defaults (a CRD's schema defaults such as Kyverno's
 * `evaluation.admission.enabled` or `rules[].skipBackgroundRequests`, a Service's `clusterIP`).
 */
export function drift(declared: unknown, live: unknown, path = ""): string[] {
    if (Array.isArray(declared)) {
        if (!Array.isArray(live)) {
            return [`${path} is ${shown(live)}, the stack declares a list of ${declared.length}`];
        }
        if (live.length !== declared.length) {
            return [`${path} has ${live.length} entries, the stack declares ${declared.length}`];
        }
        return declared.flatMap((d, i) => drift(d, live[i], `${path}[${i}]`));
    }
    if (declared !== null && typeof declared === "object") {
        if (live === null || typeof live !== "object" || Array.isArray(live)) {
            return [`${path} is ${shown(live)}, the stack declares an object`];
        }
        return Object.entries(declared).flatMap(([k, v]) => drift(v, (live as Record<string, unknown>)[k], path ? `${path}.${k}` : k));
    }
    const at = firstDifference(declared, live);
    return declared === live ? [] : [`${path} is ${shown(live, at)}, the stack declares ${shown(declared, at)}`];
}

export const asArray = <T = unknown>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
export const asRecord = (v: unknown): Record<string, string> => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, string>) : {});

/** Runs `fn` over `items` with at most `limit` running at once. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
    const out: R[] = new Array(items.length);
    let next = 0;
    const worker = async () => {
        while (next < items.length) {
            const i = next++;
            out[i] = await fn(items[i]);
        }
    };
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
    return out;
}
