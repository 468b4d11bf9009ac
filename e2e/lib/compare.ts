/**
 * Declared-versus-live comparison: every field the plan declares must be on the live object with
 * the same value. Fields the server adds (status, defaults, managed fields) are not declared and so
 * not compared; a declared field the API server dropped (pruned by a CRD schema, say) or changed is
 * a difference.
 */
export function differences(declared: unknown, live: unknown, at = ""): string[] {
    if (declared === null || declared === undefined) {
        return [];
    }
    if (Array.isArray(declared)) {
        if (!Array.isArray(live)) {
            return [`${at || "."}: declared a list, live has ${JSON.stringify(live)}`];
        }
        if (declared.length !== live.length) {
            return [`${at || "."}: declared ${declared.length} items, live has ${live.length}`];
        }
        return declared.flatMap((d, i) => differences(d, live[i], `${at}[${i}]`));
    }
    if (typeof declared === "object") {
        if (live === null || typeof live !== "object" || Array.isArray(live)) {
            return [`${at || "."}: declared an object, live has ${JSON.stringify(live)}`];
        }
        return Object.entries(declared as Record<string, unknown>).flatMap(([k, v]) => differences(v, (live as Record<string, unknown>)[k], `${at}.${k}`));
    }
    if (declared !== live) {
        return [`${at}: declared ${JSON.stringify(declared)}, live ${JSON.stringify(live)}`];
    }
    return [];
}

export interface ObjectRef {
    apiVersion: string;
    kind: string;
    namespace?: string;
    name: string;
}

export function refOf(obj: { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } }): ObjectRef {
    return {
        apiVersion: obj.apiVersion ?? "",
        kind: obj.kind ?? "",
        name: obj.metadata?.name ?? "",
        ...(obj.metadata?.namespace ? { namespace: obj.metadata.namespace } : {}),
    };
}

export function refKey(r: ObjectRef): string {
    return `${r.kind}/${r.namespace ? `${r.namespace}/` : ""}${r.name}`;
}
