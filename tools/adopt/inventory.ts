/** The pure half of `npm run adopt-check`: what the adopting run would change on the objects the cluster holds. */
import type { KubeObject } from "../verify/cluster";
import type { Argument } from "../verify/probeRoutes";

export { imageTag, isDowngrade, parseVersion } from "../../components/cluster/adoption";
export { apiPath, objectName, plural } from "../../components/cluster/live";
export { fieldManagers } from "../verify/checks/controller";
export { Argument, TemplateReference, templateReferences } from "../verify/probeRoutes";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The leaves of the planned object the live one holds otherwise (named list items by name), compared as text; the provider's
 * `pulumi.com/` annotations and a Secret's data are never compared.
 */
export function fieldChanges(planned: Record<string, unknown>, live: KubeObject): string[] {
    const out: string[] = [];
    const skip = (k: string, at: string[]) =>
        (at.length === 0 && ["apiVersion", "kind", "status", ...(planned.kind === "Secret" ? ["data", "stringData"] : [])].includes(k)) ||
        (at.join(".") === "metadata.annotations" && k.startsWith("pulumi.com/"));
    const walk = (want: unknown, have: unknown, at: string[]) => {
        if (Array.isArray(want) && want.length > 0 && want.every((x) => isRecord(x) && typeof x.name === "string") && Array.isArray(have)) {
            for (const item of want as Record<string, unknown>[]) {
                walk(
                    item,
                    have.find((h) => isRecord(h) && h.name === item.name),
                    [...at.slice(0, -1), `${at[at.length - 1]}[${String(item.name)}]`],
                );
            }
        } else if (isRecord(want) && Object.keys(want).length > 0) {
            for (const [k, v] of Object.entries(want).filter(([k]) => !skip(k, at))) {
                walk(v, isRecord(have) ? have[k] : undefined, [...at, k]);
            }
        } else if (JSON.stringify(want, text) !== JSON.stringify(have, text)) {
            out.push(at.join("."));
        }
    };
    const text = (_k: string, v: unknown) => (typeof v === "number" || typeof v === "boolean" ? String(v) : v);
    walk(planned, live, []);
    return out;
}

/** The data keys of a live ConfigMap that the stack will not write: they stay, owned by their old manager. */
export function staleKeys(live: KubeObject | undefined, written: readonly string[]): string[] {
    return Object.keys(isRecord(live?.data) ? live.data : {})
        .filter((k) => !written.includes(k))
        .sort();
}

/** A JSON patch command that removes data keys from a ConfigMap, and nothing else. */
export function removeKeysCommand(namespace: string, name: string, keys: readonly string[]): string {
    const ops = keys.map((k) => ({ op: "remove", path: `/data/${k.replace(/~/g, "~0").replace(/\//g, "~1")}` }));
    return `kubectl patch configmap ${name} -n ${namespace} --type=json -p '${JSON.stringify(ops)}'`;
}

/** The args a reference leaves without a value (argo-rollouts v1.9.0 utils/analysis/helpers.go `ResolveArgs`: the Rollout goes InvalidSpec). */
export function unresolvedArgs(templateArgs: readonly Argument[], passed: readonly Argument[]): string[] {
    return templateArgs
        .filter((a) => {
            const incoming = passed.find((p) => p.name === a.name);
            return (incoming?.value ?? a.value) === undefined && (incoming?.valueFrom ?? a.valueFrom) === undefined;
        })
        .map((a) => a.name);
}
