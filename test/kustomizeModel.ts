/**
 * A restated kustomize, for the unit tests of the delivery components (components/delivery/kustomize.ts),
 * and an app's base as a tenant writes it. The e2e scenario `tier-components-build` builds the
 * same bases with the real kustomize (`kubectl kustomize`) and holds this model to it.
 */
import * as assert from "assert";
import * as YAML from "yaml";

export type Obj = Record<string, unknown>;

/**
 * What kustomize does with a Component's patches and replacements, restated for the operations the
 * rendered components use (kubernetes-sigs/kustomize api/filters/replacement and patchjson6902, v5):
 * JSON 6902 `add` (on an array index: insert; on an object member: set, replacing) and `replace`
 * (the path must exist); a replacement reads its source (exactly one object; a missing field is an
 * error), and writes each target field path, splitting on `delimiter` and setting part `index`, or
 * creating the field with `create`. Patches run before replacements. The e2e scenario
 * `tier-components-build` builds the same components with the real kustomize.
 */
function pointer(p: string): string[] {
    return p
        .split("/")
        .slice(1)
        .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}
function applyOp(doc: Obj, op: { op: string; path: string; value: unknown }): void {
    const parts = pointer(op.path);
    const last = parts.pop()!;
    let at: unknown = doc;
    for (const p of parts) {
        at = (at as Record<string, unknown>)[p];
        assert.ok(at !== undefined && at !== null, `${op.op} ${op.path}: ${p} is missing`);
    }
    const clone = structuredClone(op.value);
    if (Array.isArray(at)) {
        const i = Number(last);
        assert.ok(i <= at.length, `${op.op} ${op.path}: index out of range`);
        if (op.op === "add") {
            at.splice(i, 0, clone);
        } else {
            assert.ok(i < at.length, `replace ${op.path}: missing`);
            at[i] = clone;
        }
    } else {
        const o = at as Obj;
        assert.ok(op.op === "add" || last in o, `replace ${op.path}: missing`);
        o[last] = clone;
    }
}
function fieldParts(fieldPath: string): string[] {
    return [...fieldPath.matchAll(/\[([^\]]+)\]|[^.[\]]+/g)].map((m) => m[1] ?? m[0]);
}
function getField(o: unknown, fieldPath: string): unknown {
    return fieldParts(fieldPath).reduce<unknown>((at, p) => (at === undefined || at === null ? undefined : (at as Record<string, unknown>)[p]), o);
}
function setField(o: Obj, fieldPath: string, value: unknown, options: { delimiter?: string; index?: number; create?: boolean } = {}): void {
    const parts = fieldParts(fieldPath);
    const last = parts.pop()!;
    let at: Record<string, unknown> = o;
    for (const p of parts) {
        if (at[p] === undefined) {
            assert.ok(options.create, `${fieldPath}: ${p} is missing`);
            at[p] = {};
        }
        at = at[p] as Record<string, unknown>;
    }
    assert.ok(last in at || options.create, `${fieldPath} is missing in the target`);
    if (options.delimiter !== undefined) {
        const pieces = String(at[last]).split(options.delimiter);
        pieces[options.index ?? 0] = String(value);
        at[last] = pieces.join(options.delimiter);
    } else {
        at[last] = structuredClone(value);
    }
}
const groupOf = (o: Obj) => (String(o.apiVersion).includes("/") ? String(o.apiVersion).split("/")[0] : "");
function selects(sel: { group?: string; kind: string; name?: string }, o: Obj): boolean {
    return (
        o.kind === sel.kind &&
        (sel.group === undefined || groupOf(o) === sel.group) &&
        (sel.name === undefined || (o.metadata as { name: string }).name === sel.name)
    );
}

/** An overlay of `base` with one component, as `kubectl kustomize` would build it. */
export function build(base: Obj[], files: Record<string, string>): Obj[] {
    const k = YAML.parse(files["kustomization.yaml"]) as {
        apiVersion: string;
        kind: string;
        resources?: string[];
        patches: { path: string; target: { group?: string; kind: string } }[];
        replacements: {
            source: { group?: string; kind: string; fieldPath: string };
            targets: {
                select: { group?: string; kind: string; name?: string };
                fieldPaths: string[];
                options?: { delimiter?: string; index?: number; create?: boolean };
            }[];
        }[];
    };
    assert.strictEqual(k.apiVersion, "kustomize.config.k8s.io/v1alpha1");
    assert.strictEqual(k.kind, "Component");
    const objects = [...structuredClone(base), ...(k.resources ?? []).flatMap((r) => YAML.parseAllDocuments(files[r]).map((d) => d.toJS() as Obj))];
    for (const p of k.patches) {
        const ops = YAML.parse(files[p.path]) as { op: string; path: string; value: unknown }[];
        const targets = objects.filter((o) => selects(p.target, o));
        assert.ok(targets.length > 0, `patch ${p.path} selects nothing`);
        for (const t of targets) {
            ops.forEach((op) => applyOp(t, op));
        }
    }
    for (const r of k.replacements) {
        const sources = objects.filter((o) => selects(r.source, o));
        assert.strictEqual(sources.length, 1, `replacement source ${r.source.kind} must match one object`);
        const value = getField(sources[0], r.source.fieldPath);
        assert.ok(value !== undefined, `fieldPath ${r.source.fieldPath} is missing for replacement source ${r.source.kind}`);
        for (const t of r.targets) {
            const targets = objects.filter((o) => selects(t.select, o));
            assert.ok(targets.length > 0, `replacement target ${JSON.stringify(t.select)} selects nothing`);
            for (const o of targets) {
                t.fieldPaths.forEach((fp) => setField(o, fp, value, t.options));
            }
        }
    }
    return objects;
}

/** An app's base as a tenant writes it: its own names, ports and labels, none of the placeholder's. */
export function appBase(routed = true): Obj[] {
    const rollout = {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Rollout",
        metadata: { name: "orders-api", namespace: "shop" },
        spec: {
            replicas: 3,
            selector: { matchLabels: { app: "orders-api", team: "shop" } },
            template: {
                metadata: { labels: { app: "orders-api", team: "shop" } },
                spec: { containers: [{ name: "api", image: "registry.platform.test/shop/orders:1", ports: [{ name: "http", containerPort: 9090 }] }] },
            },
            strategy: { canary: { steps: [{ setWeight: 50 }] } },
        },
    };
    const route = {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: "orders", namespace: "shop" },
        spec: {
            parentRefs: [{ name: "internal", namespace: "gateway-system", sectionName: "https" }],
            hostnames: ["orders.shop.platform.test"],
            rules: [{ matches: [{ path: { type: "PathPrefix", value: "/api" } }], backendRefs: [{ name: "orders-api", port: 8081 }] }],
        },
    };
    return routed ? [rollout, route] : [rollout];
}
