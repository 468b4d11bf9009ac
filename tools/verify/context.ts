import type { AddonConfig } from "../../stacks/config";
import type { HttpAnswer, KubeObject, ReadOnlyCluster } from "./cluster";
import type { CheckResult } from "./report";

export { objectName as ref } from "../../components/cluster/live";

export interface VerifyOptions {
    /** Namespace Kyverno runs in (its chart's release namespace). */
    kyvernoNamespace: string;
    /** Platform components declared absent on this cluster: the checks that need them SKIP (index.ts COMPONENTS). */
    without: readonly ("rollouts-controller" | "kyverno" | "argocd" | "gateway-controller" | "mimir")[];
    /** How long to wait for the smoke canary to settle before judging it; 0: judge it as it is. */
    smokeTimeoutSeconds: number;
    smokePollSeconds: number;
    now: () => Date;
    sleep: (ms: number) => Promise<void>;
    /** A GET from this machine to an address outside the cluster, trusting what the controller trusts. */
    httpGet: (url: string, headers: Record<string, string>, trust: { extraCa?: string }) => Promise<HttpAnswer>;
}

export type VerifyContext = { config: AddonConfig; cluster: ReadOnlyCluster; options: VerifyOptions };

/** A group of checks: their ids (each still reported when a read fails), their section and how to run them. */
export type CheckGroup = { ids: readonly string[]; readme: string; run: (ctx: VerifyContext) => Promise<CheckResult[]> };

/** A status condition (metav1.Condition and its older cousins). */
export type Condition = { type: string; status: string; reason?: string; message?: string };

export function conditions(obj: unknown, ...path: string[]): Condition[] {
    return asArray<Condition>(field(obj, "status", ...(path.length > 0 ? path : ["conditions"])));
}

export function condition(list: readonly Condition[], type: string): Condition | undefined {
    return list.find((c) => c.type === type);
}

/** `Type=Status (Reason: message)`, for a finding. */
export function describeCondition(c: Condition | undefined, type: string): string {
    const why = [c?.reason, c?.message].filter(Boolean).join(": ");
    return c ? `${c.type}=${c.status}${why ? ` (${why})` : ""}` : `no ${type} condition`;
}

/** The conditions of `types` that are not True on `obj`, described. */
export function notTrue(obj: unknown, types: readonly string[], path: string[] = ["conditions"]): string[] {
    const list = conditions(obj, ...path);
    return types.filter((t) => condition(list, t)?.status !== "True").map((t) => describeCondition(condition(list, t), t));
}

export const nameOf = (o: KubeObject): string => o.metadata?.name ?? "";
export const namespaceOf = (o: KubeObject): string => o.metadata?.namespace ?? "";

export function field(obj: unknown, ...path: (string | number)[]): unknown {
    let cur = obj;
    for (const key of path) {
        cur = cur !== null && typeof cur === "object" ? (cur as Record<string | number, unknown>)[key] : undefined;
    }
    return cur;
}

/** JSON with sorted keys, so two objects compare by content. */
export function canonical(v: unknown): string {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
        const o = v as Record<string, unknown>;
        return `{${Object.keys(o)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
            .join(",")}}`;
    }
    return Array.isArray(v) ? `[${v.map(canonical).join(",")}]` : JSON.stringify(v);
}

/** A value for a finding, at most 100 characters around `from`. */
export const shown = (v: unknown, from = 0): string => {
    const text = JSON.stringify(v) ?? "nothing";
    const start = text.length <= 100 ? 0 : Math.max(0, Math.min(from - 40, text.length - 100));
    return `${start > 0 ? "..." : ""}${text.slice(start, start + 100)}${start + 100 < text.length ? "..." : ""}`;
};

/** Where `live` lacks a declared field's value, lists entry by entry; extra live fields are no drift (the API server fills defaults). */
export function drift(declared: unknown, live: unknown, path = ""): string[] {
    if (Array.isArray(declared)) {
        if (!Array.isArray(live) || live.length !== declared.length) {
            const has = Array.isArray(live) ? `has ${live.length} entries` : `is ${shown(live)}`;
            return [`${path} ${has}, the stack declares ${Array.isArray(live) ? declared.length : `a list of ${declared.length}`}`];
        }
        return declared.flatMap((d, i) => drift(d, live[i], `${path}[${i}]`));
    }
    if (declared !== null && typeof declared === "object") {
        if (live === null || typeof live !== "object" || Array.isArray(live)) return [`${path} is ${shown(live)}, the stack declares an object`];
        return Object.entries(declared).flatMap(([k, v]) => drift(v, (live as Record<string, unknown>)[k], path ? `${path}.${k}` : k));
    }
    if (declared === live) return [];
    const [a, b] = [JSON.stringify(declared) ?? "", JSON.stringify(live) ?? ""];
    let at = 0;
    while (at < a.length && a[at] === b[at]) {
        at++;
    }
    return [`${path} is ${shown(live, at)}, the stack declares ${shown(declared, at)}`];
}

export const asArray = <T = unknown>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
export const asRecord = (v: unknown): Record<string, string> => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, string>) : {});

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
