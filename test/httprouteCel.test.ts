/**
 * Every HTTPRoute the program can emit, checked against the Gateway API HTTPRoute CRD's CEL
 * validation rules, evaluated the way the API server does, with a conformant CEL engine
 * (@bufbuild/cel).
 *
 * Source of the rules and defaults: kubernetes-sigs/gateway-api
 * config/crd/standard/gateway.networking.k8s.io_httproutes.yaml, served version v1, standard
 * channel. The rule set is the one at v1.4.1 (v1.2.0 has the same rules minus the two
 * requestMirror percent/fraction rules); v1.6.1 adds the CORS filter rules, restated too. The
 * rules are restated here, each with its schema location; no package on npm ships them
 * (@kubernetes-models/gateway-api carries the types, not the x-kubernetes-validations).
 *
 * How the API server evaluates them (k8s.io/apiextensions-apiserver, structural schema CEL
 * validation): OpenAPI defaults are applied first; a rule runs once per value at its location
 * (`self`), and not at all where that optional value is absent; property names that are CEL
 * reserved words are escaped (`namespace` becomes `__namespace__`, k8s.io/apiserver
 * pkg/cel/escaping.go); integers are CEL ints. The rules use only standard CEL: `has`, `all`,
 * `exists`, `exists_one`, `filter`, `in`, `size`, `startsWith`, `endsWith`, `contains`,
 * `matches` (RE2; the one pattern used means the same in JavaScript) and `duration`, all of which
 * @bufbuild/cel implements; none of the Kubernetes library extensions (k8s.io/apiserver
 * pkg/cel/library: isURL, quantity, ...) is used, so no fake is needed.
 */
import * as assert from "assert";
import { isCelError, parse, run } from "@bufbuild/cel";
import { parseAddonConfig } from "../stacks/config";
import { PROD_CLASSES, PreviewGate, SHAPES, TIERS, deliveryPlan } from "../components/delivery";
import { spokeRoutes } from "../components/gateway";
import { OfflineRun } from "../tools/offline";
import { hubConfig, merged, planInline } from "./harness";

const TAG = "gateway-api v1.4.1 (v1.6.1 for CORS)";

/** The filter rules, which the CRD states at both `.spec.rules[].filters` and `.spec.rules[].backendRefs[].filters`. */
const FILTER_LIST_RULES = [
    "!(self.exists(f, f.type == 'RequestRedirect') && self.exists(f, f.type == 'URLRewrite'))",
    "self.filter(f, f.type == 'RequestHeaderModifier').size() <= 1",
    "self.filter(f, f.type == 'ResponseHeaderModifier').size() <= 1",
    "self.filter(f, f.type == 'RequestRedirect').size() <= 1",
    "self.filter(f, f.type == 'URLRewrite').size() <= 1",
    "self.filter(f, f.type == 'CORS').size() <= 1",
];
const FILTER_FIELDS: [string, string][] = [
    ["requestHeaderModifier", "RequestHeaderModifier"],
    ["responseHeaderModifier", "ResponseHeaderModifier"],
    ["requestMirror", "RequestMirror"],
    ["requestRedirect", "RequestRedirect"],
    ["urlRewrite", "URLRewrite"],
    ["extensionRef", "ExtensionRef"],
    ["cors", "CORS"],
];
const FILTER_RULES = FILTER_FIELDS.flatMap(([field, type]) => [
    `!(has(self.${field}) && self.type != '${type}')`,
    `!(!has(self.${field}) && self.type == '${type}')`,
]);
const PATH_MODIFIER_RULES = [
    "self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) : true",
    "has(self.replaceFullPath) ? self.type == 'ReplaceFullPath' : true",
    "self.type == 'ReplacePrefixMatch' ? has(self.replacePrefixMatch) : true",
    "has(self.replacePrefixMatch) ? self.type == 'ReplacePrefixMatch' : true",
];
const SERVICE_PORT_RULE = "(size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true";
const CORS_LIST_RULE = "!('*' in self && self.size() > 1)";

function filterRules(at: string): { at: string; rule: string }[] {
    return [
        ...FILTER_LIST_RULES.map((rule) => ({ at, rule })),
        ...FILTER_RULES.map((rule) => ({ at: `${at}[]`, rule })),
        { at: `${at}[].requestMirror.backendRef`, rule: SERVICE_PORT_RULE },
        { at: `${at}[].requestMirror`, rule: "!(has(self.percent) && has(self.fraction))" },
        { at: `${at}[].requestMirror.fraction`, rule: "self.numerator <= self.denominator" },
        ...PATH_MODIFIER_RULES.map((rule) => ({ at: `${at}[].requestRedirect.path`, rule })),
        ...PATH_MODIFIER_RULES.map((rule) => ({ at: `${at}[].urlRewrite.path`, rule })),
        ...["allowHeaders", "allowMethods", "allowOrigins"].map((f) => ({ at: `${at}[].cors.${f}`, rule: CORS_LIST_RULE })),
    ];
}

const SAME_PARENT =
    "p1.group == p2.group && p1.kind == p2.kind && p1.name == p2.name && (((!has(p1.__namespace__) || p1.__namespace__ == '') && (!has(p2.__namespace__) || p2.__namespace__ == '')) || (has(p1.__namespace__) && has(p2.__namespace__) && p1.__namespace__ == p2.__namespace__ ))";
const REPLACE_PREFIX_NEEDS_ONE_PREFIX_MATCH =
    "((size(self.matches) != 1 || !has(self.matches[0].path) || self.matches[0].path.type != 'PathPrefix') ? false : true)";
const EXACT_OR_PREFIX = "(self.type in ['Exact','PathPrefix'])";

/** Every x-kubernetes-validations rule of HTTPRoute v1's spec, at its schema location. */
const HTTPROUTE_RULES: { at: string; rule: string }[] = [
    {
        at: ".spec.parentRefs",
        rule: `self.all(p1, self.all(p2, ${SAME_PARENT} ? ((!has(p1.sectionName) || p1.sectionName == '') == (!has(p2.sectionName) || p2.sectionName == '')) : true))`,
    },
    {
        at: ".spec.parentRefs",
        rule: `self.all(p1, self.exists_one(p2, ${SAME_PARENT} && (((!has(p1.sectionName) || p1.sectionName == '') && (!has(p2.sectionName) || p2.sectionName == '')) || (has(p1.sectionName) && has(p2.sectionName) && p1.sectionName == p2.sectionName))))`,
    },
    { at: ".spec.rules", rule: `${Array.from({ length: 16 }, (_, i) => `(self.size() > ${i} ? self[${i}].matches.size() : 0)`).join(" + ")} <= 128` },
    {
        at: ".spec.rules[]",
        rule: "(has(self.backendRefs) && size(self.backendRefs) > 0) ? (!has(self.filters) || self.filters.all(f, !has(f.requestRedirect))): true",
    },
    {
        at: ".spec.rules[]",
        rule: `(has(self.filters) && self.filters.exists_one(f, has(f.requestRedirect) && has(f.requestRedirect.path) && f.requestRedirect.path.type == 'ReplacePrefixMatch' && has(f.requestRedirect.path.replacePrefixMatch))) ? ${REPLACE_PREFIX_NEEDS_ONE_PREFIX_MATCH} : true`,
    },
    {
        at: ".spec.rules[]",
        rule: `(has(self.filters) && self.filters.exists_one(f, has(f.urlRewrite) && has(f.urlRewrite.path) && f.urlRewrite.path.type == 'ReplacePrefixMatch' && has(f.urlRewrite.path.replacePrefixMatch))) ? ${REPLACE_PREFIX_NEEDS_ONE_PREFIX_MATCH} : true`,
    },
    {
        at: ".spec.rules[]",
        rule: `(has(self.backendRefs) && self.backendRefs.exists_one(b, (has(b.filters) && b.filters.exists_one(f, has(f.requestRedirect) && has(f.requestRedirect.path) && f.requestRedirect.path.type == 'ReplacePrefixMatch' && has(f.requestRedirect.path.replacePrefixMatch))) )) ? ${REPLACE_PREFIX_NEEDS_ONE_PREFIX_MATCH} : true`,
    },
    {
        at: ".spec.rules[]",
        rule: `(has(self.backendRefs) && self.backendRefs.exists_one(b, (has(b.filters) && b.filters.exists_one(f, has(f.urlRewrite) && has(f.urlRewrite.path) && f.urlRewrite.path.type == 'ReplacePrefixMatch' && has(f.urlRewrite.path.replacePrefixMatch))) )) ? ${REPLACE_PREFIX_NEEDS_ONE_PREFIX_MATCH} : true`,
    },
    { at: ".spec.rules[].backendRefs[]", rule: SERVICE_PORT_RULE },
    ...filterRules(".spec.rules[].backendRefs[].filters"),
    ...filterRules(".spec.rules[].filters"),
    { at: ".spec.rules[].matches[].path", rule: `${EXACT_OR_PREFIX} ? self.value.startsWith('/') : true` },
    ...["//", "/./", "/../", "%2f", "%2F", "#"].map((s) => ({
        at: ".spec.rules[].matches[].path",
        rule: `${EXACT_OR_PREFIX} ? !self.value.contains('${s}') : true`,
    })),
    ...["/..", "/."].map((s) => ({ at: ".spec.rules[].matches[].path", rule: `${EXACT_OR_PREFIX} ? !self.value.endsWith('${s}') : true` })),
    { at: ".spec.rules[].matches[].path", rule: "self.type in ['Exact','PathPrefix'] || self.type == 'RegularExpression'" },
    {
        at: ".spec.rules[].matches[].path",
        rule: `${EXACT_OR_PREFIX} ? self.value.matches(r"""^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$""") : true`,
    },
    {
        at: ".spec.rules[].timeouts",
        rule: "!(has(self.request) && has(self.backendRequest) && duration(self.request) != duration('0s') && duration(self.backendRequest) > duration(self.request))",
    },
];

/** The schema defaults of HTTPRoute v1 (same CRD), applied before validation like the API server does. */
function withDefaults(route: Record<string, unknown>): Record<string, unknown> {
    const obj = JSON.parse(JSON.stringify(route)) as { spec: Record<string, unknown> };
    const spec = obj.spec;
    const prefixAll = () => [{ path: { type: "PathPrefix", value: "/" } }];
    for (const p of (spec.parentRefs ?? []) as Record<string, unknown>[]) {
        p.group ??= "gateway.networking.k8s.io";
        p.kind ??= "Gateway";
    }
    spec.rules ??= [{ matches: prefixAll() }];
    for (const rule of spec.rules as Record<string, unknown>[]) {
        rule.matches ??= prefixAll();
        for (const m of rule.matches as Record<string, unknown>[]) {
            m.path ??= { type: "PathPrefix", value: "/" };
            const path = m.path as Record<string, unknown>;
            path.type ??= "PathPrefix";
            path.value ??= "/";
            for (const h of [...((m.headers ?? []) as Record<string, unknown>[]), ...((m.queryParams ?? []) as Record<string, unknown>[])]) {
                h.type ??= "Exact";
            }
        }
        const filterDefaults = (filters: unknown) => {
            for (const f of (filters ?? []) as Record<string, Record<string, unknown>>[]) {
                if (f.requestMirror?.backendRef) {
                    const b = f.requestMirror.backendRef as Record<string, unknown>;
                    b.group ??= "";
                    b.kind ??= "Service";
                }
                if (f.requestMirror?.fraction) {
                    (f.requestMirror.fraction as Record<string, unknown>).denominator ??= 100;
                }
                if (f.requestRedirect) {
                    f.requestRedirect.statusCode ??= 302;
                }
            }
        };
        filterDefaults(rule.filters);
        for (const b of (rule.backendRefs ?? []) as Record<string, unknown>[]) {
            b.group ??= "";
            b.kind ??= "Service";
            b.weight ??= 1;
            filterDefaults(b.filters);
        }
    }
    return obj;
}

/** CEL reserved words, escaped as `__<word>__` in object property names (k8s.io/apiserver pkg/cel/escaping.go). */
const CEL_RESERVED = new Set([
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
]);

function escapeProperty(name: string): string {
    if (CEL_RESERVED.has(name)) {
        return `__${name}__`;
    }
    return name.replace(/__/g, "__underscores__").replace(/\./g, "__dot__").replace(/-/g, "__dash__").replace(/\//g, "__slash__");
}

/** A JSON value as the API server hands it to CEL: objects as maps with escaped keys, integers as ints. */
function toCel(value: unknown): unknown {
    if (Array.isArray(value)) {
        return value.map(toCel);
    }
    if (value !== null && typeof value === "object") {
        return new Map(Object.entries(value as Record<string, unknown>).map(([k, v]) => [escapeProperty(k), toCel(v)]));
    }
    if (typeof value === "number" && Number.isInteger(value)) {
        return BigInt(value);
    }
    return value;
}

/** Every value at a schema location such as `.spec.rules[].matches[].path` (absent values are skipped). */
function valuesAt(obj: unknown, at: string): { where: string; value: unknown }[] {
    let current: { where: string; value: unknown }[] = [{ where: "", value: obj }];
    for (const part of at.split(".").filter((p) => p !== "")) {
        const list = part.endsWith("[]");
        const key = list ? part.slice(0, -2) : part;
        const next: { where: string; value: unknown }[] = [];
        for (const c of current) {
            const v = (c.value as Record<string, unknown> | undefined)?.[key];
            if (v === undefined || v === null) {
                continue;
            }
            if (list) {
                (v as unknown[]).forEach((item, i) => next.push({ where: `${c.where}.${key}[${i}]`, value: item }));
            } else {
                next.push({ where: `${c.where}.${key}`, value: v });
            }
        }
        current = next;
    }
    return current;
}

/** The rules an HTTPRoute breaks, as "<location>: <rule>" (an evaluation error counts as broken). */
function violations(route: Record<string, unknown>): string[] {
    const obj = withDefaults(route);
    const out: string[] = [];
    for (const { at, rule } of HTTPROUTE_RULES) {
        for (const { where, value } of valuesAt(obj, at)) {
            const result = run(rule, { self: toCel(value) as never });
            if (isCelError(result) || result !== true) {
                out.push(`${where}: ${rule}${isCelError(result) ? ` (error: ${String((result as { message?: string }).message ?? result)})` : ""}`);
            }
        }
    }
    return out;
}

/** A named HTTPRoute object. */
interface EmittedRoute {
    source: string;
    object: Record<string, unknown>;
}

function routesOf(run: OfflineRun, source: string): EmittedRoute[] {
    return run.resources
        .filter((r) => r.type === "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute")
        .map((r) => ({
            source: `${source}: ${r.name}`,
            object: { apiVersion: r.inputs.apiVersion, kind: r.inputs.kind, metadata: r.inputs.metadata, spec: r.inputs.spec },
        }));
}

describe(`HTTPRoute CEL validation (${TAG})`, () => {
    const emitted: EmittedRoute[] = [];
    const spokes = [
        { name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.test.example", query: true },
        { name: "edge", tenant: "edge", hostname: "mimir-edge.hub.test.example", query: false },
    ];

    before(async () => {
        // The hub's spoke routes, both ownership modes, from the program.
        for (const owner of ["addon", "observability"]) {
            emitted.push(...routesOf(await planInline(merged(hubConfig(), { spokes, mimir: { pushRouteOwner: owner } }), { stack: "hub" }), `hub (${owner})`));
        }
        // Cross-namespace routes (backendRef with a namespace) and per-spoke listeners, from the pure function.
        const { "aws:region": _r, ...raw } = merged(hubConfig(), {
            mimir: { spokeRouteNamespace: "gateway-system" },
            spokes: spokes
                .map((s) => ({ ...s, listener: "spokes", pushRouteOwner: "addon" }))
                .concat([{ ...spokes[0], name: "other", tenant: "other", hostname: "o.test.example", pushRouteOwner: "observability" } as never]),
        });
        const cfg = parseAddonConfig("hub", raw, { awsRegion: "eu-west-1" });
        for (const s of cfg.spokes) {
            for (const r of spokeRoutes(s, cfg.mimir)) {
                emitted.push({
                    source: `spokeRoutes: ${r.name}`,
                    object: {
                        apiVersion: "gateway.networking.k8s.io/v1",
                        kind: "HTTPRoute",
                        metadata: { name: r.name, namespace: "gateway-system" },
                        spec: r.spec,
                    },
                });
            }
        }
        // The delivery library's app routes, every tier, class and shape.
        const route = { name: "checkout", gateway: { name: "shared", namespace: "gateway-system", listener: "https" }, hostnames: ["checkout.shop.example"] };
        const app = { name: "checkout", namespace: "shop", port: 8080, route };
        // Blue/green also with each preview gate: the header rule in the app's route, or a route of the preview hostname.
        const previewGates: (PreviewGate | undefined)[] = [
            undefined,
            { header: "x-rollouts-preview" },
            { hostname: "checkout-preview.shop.example" },
            { hostname: "checkout-preview.shop.example", gateway: { name: "internal", namespace: "gateway-system", listener: "previews" } },
        ];
        for (const tier of TIERS) {
            for (const prodClass of tier === "prod" ? PROD_CLASSES : [undefined]) {
                for (const shape of tier === "prod" ? SHAPES : [undefined]) {
                    for (const previewGate of shape === "blueGreen" ? previewGates : [undefined]) {
                        const plan = deliveryPlan(app, {
                            tier,
                            ...(prodClass ? { prodClass } : {}),
                            ...(shape ? { shape } : {}),
                            ...(previewGate ? { previewGate } : {}),
                            ...(prodClass === "regulated" ? { approval: { approverGroups: ["release-approvers"], deployerGroups: [] } } : {}),
                        });
                        const gate =
                            previewGate === undefined
                                ? ""
                                : "header" in previewGate
                                  ? " previewGate header"
                                  : ` previewGate hostname${previewGate.gateway ? " own listener" : ""}`;
                        for (const route of [plan.httpRoute, plan.previewRoute]) {
                            if (route) {
                                emitted.push({
                                    source: `deliveryPlan ${tier} ${prodClass ?? ""} ${shape ?? ""}${gate}: ${route.metadata.name}`,
                                    object: route as unknown as Record<string, unknown>,
                                });
                            }
                        }
                    }
                }
            }
        }
        // The smoke canary's route, from the program, for either strategy (blue/green carries the header preview rule).
        for (const strategy of ["canary", "blueGreen"]) {
            const smoke = merged(hubConfig(), {
                smokeTest: {
                    enabled: true,
                    strategy,
                    hostname: "smoke.test.example",
                    image: `registry.platform.test/mirror/argoproj/rollouts-demo@sha256:${"d".repeat(64)}`,
                    loadImage: `registry.platform.test/mirror/curlimages/curl@sha256:${"e".repeat(64)}`,
                },
            });
            emitted.push(...routesOf(await planInline(smoke, { stack: "hub" }), `smoke ${strategy}`));
        }
    });

    it("parses every restated rule", () => {
        // The CRD's v1 schema carries 89 distinct rules across v1.4.1 and v1.6.1 (checked against the
        // CRD files at both tags when they were restated).
        assert.strictEqual(new Set(HTTPROUTE_RULES.map((r) => `${r.at} ${r.rule}`)).size, 89);
        for (const { rule } of HTTPROUTE_RULES) {
            assert.doesNotThrow(() => parse(rule), rule);
        }
    });

    it("sees every kind of route the program emits", () => {
        const sources = emitted.map((e) => e.source);
        for (const expected of [
            /^hub \(addon\): mimir-spoke-preprod$/,
            /^hub \(addon\): mimir-spoke-edge$/,
            /^hub \(observability\): mimir-spoke-preprod-read$/,
            /^spokeRoutes: mimir-spoke-other-read$/,
            /^deliveryPlan prod regulated blueGreen: checkout$/,
            /^deliveryPlan prod standard blueGreen previewGate header: checkout$/,
            /^deliveryPlan prod regulated blueGreen previewGate hostname: checkout-preview$/,
            /^deliveryPlan prod standard blueGreen previewGate hostname own listener: checkout-preview$/,
            /^deliveryPlan dev/,
            /^smoke canary: /,
            /^smoke blueGreen: /,
        ]) {
            assert.ok(
                sources.some((s) => expected.test(s)),
                `${expected} in ${sources.join(", ")}`,
            );
        }
    });

    it("admits every route the program can emit", () => {
        for (const route of emitted) {
            assert.deepStrictEqual(violations(route.object), [], route.source);
        }
    });

    it("refuses routes that break a rule (the evaluator is not vacuous)", () => {
        const base = emitted.find((e) => e.source === "hub (addon): mimir-spoke-preprod")!.object as {
            spec: { rules: Record<string, unknown>[]; parentRefs: Record<string, unknown>[] };
        };
        const broken = (mutate: (spec: { rules: Record<string, unknown>[]; parentRefs: Record<string, unknown>[] }) => void): string[] => {
            const copy = JSON.parse(JSON.stringify(base)) as typeof base;
            mutate(copy.spec);
            return violations(copy as unknown as Record<string, unknown>);
        };
        assert.match(
            broken((s) => ((s.rules[1].matches as { path: { value: string } }[])[0].path.value = "/prometheus//api")).join("\n"),
            /contains\('\/\/'\)/,
        );
        assert.match(broken((s) => ((s.rules[1].matches as { path: { value: string } }[])[0].path.value = "prometheus")).join("\n"), /startsWith/);
        assert.match(broken((s) => delete (s.rules[0].backendRefs as Record<string, unknown>[])[0].port).join("\n"), /has\(self\.port\)/);
        assert.match(
            broken((s) => (s.rules[0].filters as unknown[]).push((s.rules[0].filters as unknown[])[0])).join("\n"),
            /RequestHeaderModifier'\)\.size\(\) <= 1/,
        );
        assert.match(broken((s) => s.parentRefs.push({ ...s.parentRefs[0], sectionName: undefined })).join("\n"), /sectionName/);
        assert.match(broken((s) => (s.rules[0].filters = [{ type: "RequestHeaderModifier" }])).join("\n"), /requestHeaderModifier/);
    });
});
