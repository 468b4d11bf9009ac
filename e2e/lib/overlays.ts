/**
 * Tenant overlays of a delivery component as teams write them (tenant-overlay-idioms,
 * docs/tenants/delivery-strategies.md): the base and one line naming the component, plus one
 * ordinary kustomize idiom; and the names a build's objects give each other, each of which must be
 * an object of the build.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { run } from "./procs";

export type Built = { kind: string; metadata: { name: string; namespace?: string }; spec?: Record<string, unknown>; roleRef?: { kind: string; name: string } };

/** What each overlay adds beside the component: a prefix, a suffix, or the namespace (`ns`, where it is applied). */
export const IDIOMS = {
    prefixed: { line: () => "namePrefix: eu-\n", holds: (o: Built) => o.metadata.name.startsWith("eu-") && o.metadata.namespace === undefined },
    suffixed: { line: () => "nameSuffix: -eu\n", holds: (o: Built) => o.metadata.name.endsWith("-eu") && o.metadata.namespace === undefined },
    namespaced: { line: (ns: string) => `namespace: ${ns}\n`, holds: (o: Built, ns: string) => o.metadata.namespace === ns },
} as const;
export type Idiom = keyof typeof IDIOMS;

/** Writes the overlay `<dir>/<ns>/kustomization.yaml` over `<dir>/base` with the component `<dir>/components/<id>` and builds it with `kustomize`. */
export function buildOverlay(kustomize: string, dir: string, id: string, idiom: Idiom, ns: string): Built[] {
    fs.mkdirSync(path.join(dir, ns));
    const overlay = `resources:\n  - ../base\ncomponents:\n  - ../components/${id}\n${IDIOMS[idiom].line(ns)}`;
    fs.writeFileSync(path.join(dir, ns, "kustomization.yaml"), overlay);
    const r = run(kustomize, ["build", path.join(dir, ns)]);
    if (r.status !== 0) {
        throw new Error(`kustomize build of ${id} ${idiom} failed: ${r.stderr.trim()}`);
    }
    return YAML.parseAllDocuments(r.stdout).map((d) => d.toJS() as Built);
}

/** Every name an object gives another (a Rollout its Services and route, a route its backends, a binding its Role) that no object of `objects` in the referrer's namespace has. */
export function unresolved(objects: Built[]): string[] {
    const has = (kind: string, ns: string | undefined, name: unknown) =>
        objects.some((o) => o.kind === kind && o.metadata.namespace === ns && o.metadata.name === name);
    const out: string[] = [];
    const need = (from: Built, field: string, kind: string, name: unknown) => {
        if (!has(kind, from.metadata.namespace, name)) {
            out.push(`${from.kind} ${from.metadata.name} ${field} names ${kind} ${String(name)}, which the build does not hold`);
        }
    };
    for (const o of objects) {
        const strategy = (o.spec?.strategy ?? {}) as Record<string, Record<string, unknown> | undefined>;
        for (const field of ["canary.stableService", "canary.canaryService", "blueGreen.activeService", "blueGreen.previewService"]) {
            const [shape, key] = field.split(".");
            if (o.kind === "Rollout" && strategy[shape]?.[key] !== undefined) {
                need(o, field, "Service", strategy[shape]![key]);
            }
        }
        const plugins = (strategy.canary?.trafficRouting as { plugins?: Record<string, { httpRoute?: string }> } | undefined)?.plugins ?? {};
        for (const [plugin, args] of Object.entries(plugins)) {
            need(o, `${plugin}.httpRoute`, "HTTPRoute", args.httpRoute);
        }
        const rules = o.kind === "HTTPRoute" ? ((o.spec?.rules ?? []) as { backendRefs?: { name: string }[] }[]) : [];
        rules.forEach((rule, i) => rule.backendRefs?.forEach((b, j) => need(o, `rules.${i}.backendRefs.${j}`, "Service", b.name)));
        if (o.kind === "RoleBinding" && o.roleRef?.kind === "Role") {
            need(o, "roleRef", "Role", o.roleRef.name);
        }
    }
    return out;
}
