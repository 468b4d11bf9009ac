/**
 * Kyverno's CEL, for the fast unit tests: every expression of an emitted policy is parsed by a
 * conformant CEL engine (`@bufbuild/cel`) and type-checked, with Kyverno's library functions
 * declared with their upstream signatures, by the rules of cel-go's checker that `@bufbuild/cel`
 * does not implement (its checker only checks constants and identifiers), restated here with the
 * source they come from. What the policies decide is the real Kyverno's to say: the end-to-end
 * scenario engine-kyverno-cli sends it the admission samples (e2e/samples/admission.yaml).
 *
 * Upstream sources (kyverno/kyverno v1.19.0, kyverno/sdk, google/cel-go):
 * - `resource.List(apiVersion, resource, namespace)` and `resource.Get(...)` return
 *   `map(string, Any)`; `generator.Apply(namespace, list(map(string, Any)))` returns `bool`
 *   (kyverno/sdk `extensions/cel/libs/resource/lib.go` and `libs/generator/lib.go`; the same in
 *   kyverno/kyverno v1.17.0 `pkg/cel/libs/resource/lib.go`, `pkg/cel/libs/generator/lib.go`).
 *   A cluster-scoped policy gets the cluster overloads (`clusterEnv`), with a namespace argument.
 * - `object` and `oldObject` are `dyn`, `request` is the admission request type, `variables.<n>` has
 *   the checked output type of its expression and only the variables declared before it
 *   (kyverno/kyverno `pkg/cel/compiler/variables.go`, `CompileVariable` in
 *   `pkg/cel/compiler/compiler.go`).
 * - Validations and match conditions must type-check to exactly `bool`, generations to `bool`,
 *   JSONPatch mutations to `list(JSONPatch)` (`CompileValidation`, `CompileMatchCondition`,
 *   `CompileGeneration`, `CompileMutation` in `pkg/cel/compiler/compiler.go`).
 * - A comprehension's range must be a list, a map, `dyn`, an error or a type parameter; anything
 *   else, `google.protobuf.Any` included, is "cannot be range of a comprehension" (cel-go
 *   `checker/checker.go` `checkComprehension`, `checker/errors.go` `notAComprehensionRange`).
 *   Selecting a field of an Any value yields `dyn` (`checkSelectField`: `isDynOrError`), so the
 *   Any escapes into `dyn` only where it is selected from, never where it is iterated.
 * - Aggregate literals are homogeneous unless their elements are `dyn`
 *   (`cel.HomogeneousAggregateLiterals()` in `pkg/cel/compiler/env.go` `DefaultEnvOptions`).
 */
import { parse } from "@bufbuild/cel";
import type { Expr } from "@bufbuild/cel-spec/cel/expr/syntax_pb.js";
import type { CelPolicy, NamedExpression } from "../components/policy";

// ---------------------------------------------------------------------------------------------
// Types, as cel-go's checker sees them.

export type CelT =
    | { k: "dyn" | "any" | "bool" | "int" | "uint" | "double" | "string" | "bytes" | "null" | "error" | "typeparam" | "type" }
    | { k: "list"; e: CelT }
    | { k: "map"; key: CelT; v: CelT }
    | { k: "opaque"; name: string }
    | { k: "object"; name: string; fields: Record<string, CelT> };

const T = {
    dyn: { k: "dyn" } as CelT,
    any: { k: "any" } as CelT,
    bool: { k: "bool" } as CelT,
    int: { k: "int" } as CelT,
    double: { k: "double" } as CelT,
    string: { k: "string" } as CelT,
    null: { k: "null" } as CelT,
    error: { k: "error" } as CelT,
    typeparam: { k: "typeparam" } as CelT,
    type: { k: "type" } as CelT,
    list: (e: CelT): CelT => ({ k: "list", e }),
    map: (key: CelT, v: CelT): CelT => ({ k: "map", key, v }),
};

export function format(t: CelT): string {
    switch (t.k) {
        case "list":
            return `list(${format(t.e)})`;
        case "map":
            return `map(${format(t.key)}, ${format(t.v)})`;
        case "opaque":
        case "object":
            return t.name;
        case "any":
            return "google.protobuf.Any";
        default:
            return t.k;
    }
}

/** cel-go `checker/types.go` `isDyn`: DYN and the well-known Any behave alike for assignment. */
const isDynLike = (t: CelT) => t.k === "dyn" || t.k === "any" || t.k === "error" || t.k === "typeparam";

/** cel-go `checker/types.go` `internalIsAssignable`, without type-parameter bookkeeping. */
function assignable(to: CelT, from: CelT): boolean {
    if (isDynLike(to) || isDynLike(from)) {
        return true;
    }
    if (to.k === "null" || from.k === "null") {
        return to.k === from.k || ["opaque", "object", "any"].includes(to.k === "null" ? from.k : to.k);
    }
    if (to.k === "list" && from.k === "list") {
        return assignable(to.e, from.e);
    }
    if (to.k === "map" && from.k === "map") {
        return assignable(to.key, from.key) && assignable(to.v, from.v);
    }
    if ((to.k === "opaque" || to.k === "object") && (from.k === "opaque" || from.k === "object")) {
        return to.name === from.name;
    }
    return to.k === from.k;
}

const exact = (a: CelT, b: CelT): boolean => format(a) === format(b);

/** The request variable's type (k8s.io/apiserver `pkg/admission/plugin/cel/compile.go` `BuildRequestType`). */
const GVK = { k: "object", name: "kubernetes.GroupVersionKind", fields: { group: T.string, version: T.string, kind: T.string } } as CelT;
const GVR = { k: "object", name: "kubernetes.GroupVersionResource", fields: { group: T.string, version: T.string, resource: T.string } } as CelT;
export const REQUEST_TYPE: CelT = {
    k: "object",
    name: "kubernetes.AdmissionRequest",
    fields: {
        kind: GVK,
        resource: GVR,
        subResource: T.string,
        requestKind: GVK,
        requestResource: GVR,
        requestSubResource: T.string,
        name: T.string,
        namespace: T.string,
        operation: T.string,
        userInfo: {
            k: "object",
            name: "kubernetes.UserInfo",
            fields: { username: T.string, uid: T.string, groups: T.list(T.string), extra: T.map(T.string, T.list(T.string)) },
        },
        dryRun: T.bool,
        options: T.dyn,
        object: T.dyn,
        oldObject: T.dyn,
    },
};

const RESOURCE_CONTEXT: CelT = { k: "opaque", name: "resource.Context" };
const GENERATOR_CONTEXT: CelT = { k: "opaque", name: "generator.Context" };
const JSON_PATCH: CelT = { k: "object", name: "JSONPatch", fields: { op: T.string, path: T.string, from: T.string, value: T.dyn } };
const KYVERNO_RESULT = T.map(T.string, T.any);

/** Kyverno's library member functions for a cluster-scoped policy: receiver -> name -> overloads. */
const LIBRARY: Record<string, Record<string, { args: CelT[]; result: CelT }[]>> = {
    "resource.Context": {
        List: [
            { args: [T.string, T.string, T.string], result: KYVERNO_RESULT },
            { args: [T.string, T.string, T.string, T.map(T.string, T.string)], result: KYVERNO_RESULT },
        ],
        Get: [{ args: [T.string, T.string, T.string, T.string], result: KYVERNO_RESULT }],
        Post: [
            { args: [T.string, T.string, T.string, T.map(T.string, T.any)], result: KYVERNO_RESULT },
            { args: [T.string, T.string, T.map(T.string, T.any)], result: KYVERNO_RESULT },
        ],
    },
    "generator.Context": {
        Apply: [{ args: [T.string, T.list(KYVERNO_RESULT)], result: T.bool }],
    },
};

/** Where an expression sits in a policy, and what it must type-check to. */
export interface Site {
    policy: string;
    field: string;
    expression: string;
    expect: CelT;
}

export interface CheckEnv {
    idents: Record<string, CelT>;
    types: Record<string, CelT>;
}

/** The static problems cel-go's checker would report for `expression`, and its output type. */
export function checkExpression(expression: string, env: CheckEnv): { type: CelT; problems: string[] } {
    const problems: string[] = [];
    let parsed: Expr;
    try {
        parsed = parse(expression).expr;
    } catch (err) {
        return { type: T.error, problems: [`does not parse: ${err instanceof Error ? err.message : String(err)}`] };
    }
    const scopes: Record<string, CelT>[] = [env.idents];
    const lookup = (name: string): CelT | undefined => {
        for (let i = scopes.length - 1; i >= 0; i--) {
            if (name in scopes[i]) {
                return scopes[i][name];
            }
        }
        return undefined;
    };
    const join = (ts: CelT[], what: string): CelT => {
        if (ts.length === 0) {
            return T.typeparam;
        }
        let out = ts[0];
        for (const t of ts.slice(1)) {
            // cel-go `joinTypes` with HomogeneousAggregateLiterals: the elements must agree unless dyn.
            if (!assignable(out, t) && !assignable(t, out)) {
                problems.push(`${what}: type mismatch: ${format(out)} and ${format(t)} in one aggregate literal (wrap the values in dyn())`);
                return T.error;
            }
            out = isDynLike(out) ? out : t;
        }
        return out;
    };

    const check = (e: Expr): CelT => {
        const kind = e.exprKind;
        switch (kind.case) {
            case "constExpr": {
                const c = kind.value.constantKind;
                switch (c.case) {
                    case "boolValue":
                        return T.bool;
                    case "int64Value":
                        return T.int;
                    case "uint64Value":
                        return { k: "uint" };
                    case "doubleValue":
                        return T.double;
                    case "stringValue":
                        return T.string;
                    case "bytesValue":
                        return { k: "bytes" };
                    default:
                        return T.null;
                }
            }
            case "identExpr": {
                const t = lookup(kind.value.name);
                if (!t) {
                    problems.push(`undeclared reference to '${kind.value.name}'`);
                    return T.error;
                }
                return t;
            }
            case "selectExpr": {
                const operand = check(kind.value.operand!);
                const field = kind.value.field;
                if (kind.value.testOnly) {
                    return T.bool;
                }
                // cel-go `checkSelectField`.
                switch (operand.k) {
                    case "map":
                        return operand.v;
                    case "object":
                        if (!(field in operand.fields)) {
                            problems.push(`undefined field '${field}' of ${operand.name}`);
                            return T.error;
                        }
                        return operand.fields[field];
                    case "dyn":
                    case "any":
                    case "error":
                    case "typeparam":
                        return T.dyn;
                    default:
                        problems.push(`type '${format(operand)}' does not support field selection (.${field})`);
                        return T.error;
                }
            }
            case "listExpr":
                return T.list(join(kind.value.elements.map(check), "list literal"));
            case "structExpr": {
                const s = kind.value;
                if (s.messageName) {
                    const t = env.types[s.messageName];
                    if (!t || t.k !== "object") {
                        problems.push(`undeclared reference to type '${s.messageName}'`);
                        return T.error;
                    }
                    for (const entry of s.entries) {
                        const key = entry.keyKind.case === "fieldKey" ? entry.keyKind.value : "";
                        const vt = check(entry.value!);
                        if (!(key in t.fields)) {
                            problems.push(`undefined field '${key}' of ${t.name}`);
                        } else if (!assignable(t.fields[key], vt)) {
                            problems.push(`field '${key}' of ${t.name} is ${format(t.fields[key])}, got ${format(vt)}`);
                        }
                    }
                    return t;
                }
                const keys = s.entries.map((en) => (en.keyKind.case === "mapKey" ? check(en.keyKind.value) : T.error));
                const values = s.entries.map((en) => check(en.value!));
                return T.map(join(keys, "map literal keys"), join(values, "map literal values"));
            }
            case "comprehensionExpr": {
                const c = kind.value;
                const range = check(c.iterRange!);
                const accu = check(c.accuInit!);
                let iterType: CelT;
                // cel-go `checkComprehension`: list, map, dyn, error and type parameters only.
                switch (range.k) {
                    case "list":
                        iterType = range.e;
                        break;
                    case "map":
                        iterType = range.key;
                        break;
                    case "dyn":
                    case "error":
                    case "typeparam":
                        iterType = T.dyn;
                        break;
                    default:
                        problems.push(`expression of type '${format(range)}' cannot be range of a comprehension (must be list, map, or dynamic)`);
                        iterType = T.error;
                }
                scopes.push({ [c.accuVar]: accu });
                scopes.push({ [c.iterVar]: iterType, ...(c.iterVar2 ? { [c.iterVar2]: T.dyn } : {}) });
                check(c.loopCondition!);
                const step = check(c.loopStep!);
                scopes.pop();
                const result = check(c.result!);
                scopes.pop();
                return accu.k === "typeparam" || accu.k === "list" ? (step.k === "list" ? step : result) : result;
            }
            case "callExpr":
                return checkCall(kind.value.function, kind.value.target, kind.value.args);
            default:
                problems.push(`unsupported expression kind ${String(kind.case)}`);
                return T.error;
        }
    };

    const checkCall = (fn: string, target: Expr | undefined, argExprs: Expr[]): CelT => {
        if (target) {
            const recv = check(target);
            const args = argExprs.map(check);
            if (recv.k === "opaque") {
                const overloads = LIBRARY[recv.name]?.[fn];
                if (!overloads) {
                    problems.push(`undeclared reference to '${fn}' on ${recv.name}`);
                    return T.error;
                }
                const match = overloads.find((o) => o.args.length === args.length && o.args.every((a, i) => assignable(a, args[i])));
                if (!match) {
                    problems.push(`found no matching overload for '${recv.name}.${fn}' applied to (${args.map(format).join(", ")})`);
                    return T.error;
                }
                return match.result;
            }
            switch (fn) {
                case "matches":
                case "startsWith":
                case "endsWith":
                case "contains":
                    return T.bool;
                case "size":
                    return T.int;
                default:
                    return T.dyn;
            }
        }
        const args = argExprs.map(check);
        switch (fn) {
            case "_&&_":
            case "_||_":
            case "!_":
                args.forEach((a) => {
                    if (!assignable(T.bool, a)) {
                        problems.push(`found no matching overload for '${fn}' applied to ${format(a)}`);
                    }
                });
                return T.bool;
            case "_==_":
            case "_!=_":
            case "_<_":
            case "_<=_":
            case "_>_":
            case "_>=_":
            case "@in":
            case "@not_strictly_false":
                return T.bool;
            case "_?_:_": {
                if (!assignable(T.bool, args[0])) {
                    problems.push(`the condition of ?: is ${format(args[0])}, not bool`);
                }
                const [a, b] = [args[1], args[2]];
                if (!assignable(a, b) && !assignable(b, a)) {
                    problems.push(`the branches of ?: disagree: ${format(a)} and ${format(b)}`);
                    return T.error;
                }
                return a.k === "typeparam"
                    ? b
                    : b.k === "typeparam"
                      ? a
                      : isDynLike(a)
                        ? a
                        : isDynLike(b)
                          ? b
                          : a.k === "list" && b.k === "list" && b.e.k !== "typeparam"
                            ? b
                            : a;
            }
            case "_[_]": {
                const [c] = args;
                if (c.k === "list") {
                    return c.e;
                }
                if (c.k === "map") {
                    return c.v;
                }
                return T.dyn;
            }
            case "_+_": {
                const [a, b] = args;
                if (a.k === "string" && b.k === "string") {
                    return T.string;
                }
                if (a.k === "int" && b.k === "int") {
                    return T.int;
                }
                if (a.k === "list" && b.k === "list") {
                    return a;
                }
                return T.dyn;
            }
            case "dyn":
                return T.dyn;
            case "size":
            case "int":
                return T.int;
            case "string":
                return T.string;
            case "type":
                return T.type;
            default:
                return T.dyn;
        }
    };

    return { type: check(parsed), problems };
}

/** Every expression of a CEL policy, with the type Kyverno's compiler requires of it. */
export function sites(p: CelPolicy): Site[] {
    const out: Site[] = [];
    const add = (field: string, list: readonly NamedExpression[] | undefined, expect: CelT) =>
        (list ?? []).forEach((m) => out.push({ policy: p.metadata.name, field: `${field}[${m.name}]`, expression: m.expression, expect }));
    add("matchConditions", p.spec.matchConditions, T.bool);
    add("variables", p.spec.variables, T.dyn);
    if (p.kind === "ValidatingPolicy") {
        p.spec.validations.forEach((v, i) => out.push({ policy: p.metadata.name, field: `validations[${i}]`, expression: v.expression, expect: T.bool }));
    }
    if (p.kind === "MutatingPolicy") {
        p.spec.mutations.forEach((m, i) =>
            out.push({ policy: p.metadata.name, field: `mutations[${i}]`, expression: m.jsonPatch.expression, expect: T.list(JSON_PATCH) }),
        );
    }
    if (p.kind === "GeneratingPolicy") {
        p.spec.generate.forEach((g, i) => out.push({ policy: p.metadata.name, field: `generate[${i}]`, expression: g.expression, expect: T.bool }));
    }
    return out;
}

/**
 * Type-checks a whole policy as Kyverno's compiler does: match conditions in the environment the
 * API server also uses (no `variables`, no libraries: they become the webhook's matchConditions,
 * `pkg/controllers/webhook/validating.go`), variables in order, each visible to the later ones.
 */
export function checkPolicy(p: CelPolicy): string[] {
    const base: Record<string, CelT> = { object: T.dyn, oldObject: T.dyn, request: REQUEST_TYPE, namespaceObject: T.dyn };
    const variables: Record<string, CelT> = {};
    const libs: Record<string, CelT> = {
        resource: RESOURCE_CONTEXT,
        generator: GENERATOR_CONTEXT,
        variables: { k: "object", name: "kyverno.variables", fields: variables },
    };
    const types: Record<string, CelT> = p.kind === "MutatingPolicy" ? { JSONPatch: JSON_PATCH } : {};
    const problems: string[] = [];
    for (const site of sites(p)) {
        const env = { idents: site.field.startsWith("matchConditions") ? base : { ...base, ...libs }, types };
        const { type, problems: found } = checkExpression(site.expression, env);
        problems.push(...found.map((f) => `${site.policy} ${site.field}: ${f}`));
        if (site.field.startsWith("variables")) {
            variables[site.field.slice("variables[".length, -1)] = type;
        } else if (found.length === 0 && !exact(type, site.expect)) {
            problems.push(`${site.policy} ${site.field}: output is expected to be of type ${format(site.expect)}, got ${format(type)}`);
        }
    }
    return problems;
}
