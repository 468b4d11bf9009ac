/**
 * Kyverno's `kyverno.io/v1` engine, for tests: no JMESPath package ships Kyverno's dialect, so the
 * rules the ClusterPolicies rely on are restated here with the source they come from.
 *
 * - JMESPath as Kyverno evaluates it (kyverno/go-jmespath `interpreter.go`, `parser.go`): a
 *   missing map key is a NotFoundError; comparators, function arguments, filter conditions, `||`,
 *   `&&`, `!` and `|` read it as null, a plain path propagates it. Binding powers as in `parser.go`;
 *   `[?cond]` is a filter projection whose right side takes every `.x`, `[...]` that follows.
 * - Kyverno's functions used by the policies (kyverno/kyverno `pkg/engine/jmespath/functions.go`):
 *   `label_match`, `lookup`, `to_string`, `regex_match`, `add`; `merge` from the go-jmespath fork.
 * - Variables `{{ ... }}` (kyverno/kyverno `pkg/engine/variables/vars.go`, `regex/vars.go`): a
 *   string that is one variable becomes its value; inside a longer string a non-string value is
 *   JSON-encoded; a NotFoundError fails the rule, except in preconditions, where it reads as null.
 * - Condition operators (kyverno/kyverno `pkg/engine/variables/operator/*.go`).
 * - Matching: kinds `group/version/Kind[/subresource]` (`pkg/utils/kube/kind.go` `ParseKindSelector`,
 *   `pkg/utils/match/kind.go` `CheckKind`), operations, namespaceSelector, excluded namespaces.
 */
import type { ClusterPolicy, ClusterPolicyRule, Condition, Conditions, LabelSelector } from "../components/policy";
import { selects } from "../components/policy";
import { Admission, FakeCluster, Json, requestKind } from "./kyvernoCel";

// ---------------------------------------------------------------------------------------------
// JMESPath

class NotFound extends Error {}

type Tok = { t: string; v?: Json };

function lex(src: string): Tok[] {
    const out: Tok[] = [];
    let i = 0;
    const two = ["||", "&&", "==", "!=", "<=", ">=", "[?"];
    while (i < src.length) {
        const c = src[i];
        if (/\s/.test(c)) {
            i++;
        } else if (/[A-Za-z_]/.test(c)) {
            const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))![0];
            out.push({ t: "ident", v: m });
            i += m.length;
        } else if (/[0-9-]/.test(c) && /^-?[0-9]+/.test(src.slice(i))) {
            const m = /^-?[0-9]+/.exec(src.slice(i))![0];
            out.push({ t: "number", v: Number(m) });
            i += m.length;
        } else if (c === '"') {
            const m = /^"(?:[^"\\]|\\.)*"/.exec(src.slice(i))![0];
            out.push({ t: "ident", v: JSON.parse(m) as string });
            i += m.length;
        } else if (c === "'") {
            const m = /^'(?:[^'\\]|\\.)*'/.exec(src.slice(i))![0];
            out.push({ t: "literal", v: m.slice(1, -1).replace(/\\'/g, "'") });
            i += m.length;
        } else if (c === "`") {
            const m = /^`(?:[^`\\]|\\.)*`/.exec(src.slice(i))![0];
            out.push({ t: "literal", v: JSON.parse(m.slice(1, -1).replace(/\\`/g, "`")) as Json });
            i += m.length;
        } else if (two.includes(src.slice(i, i + 2))) {
            out.push({ t: src.slice(i, i + 2) });
            i += 2;
        } else if (".,()[]{}@&|!<>:*".includes(c)) {
            out.push({ t: c });
            i++;
        } else {
            throw new Error(`jmespath: unexpected ${c} in ${src}`);
        }
    }
    out.push({ t: "eof" });
    return out;
}

type Node =
    | { n: "field"; name: string }
    | { n: "current" }
    | { n: "literal"; v: Json }
    | { n: "sub"; l: Node; r: Node }
    | { n: "filter"; l: Node; cond: Node; r: Node }
    | { n: "index"; l: Node; i: number }
    | { n: "cmp"; op: string; l: Node; r: Node }
    | { n: "or" | "and" | "pipe"; l: Node; r: Node }
    | { n: "not"; e: Node }
    | { n: "call"; name: string; args: Node[] };

/** kyverno/go-jmespath `parser.go` bindingPowers. */
const BP: Record<string, number> = {
    "|": 1,
    "||": 2,
    "&&": 3,
    "==": 5,
    "!=": 5,
    "<": 5,
    "<=": 5,
    ">": 5,
    ">=": 5,
    "[?": 21,
    ".": 40,
    "!": 45,
    "[": 55,
    "(": 60,
};
const bp = (t: string) => BP[t] ?? 0;

export function parseJmes(src: string): Node {
    const toks = lex(src);
    let p = 0;
    const cur = () => toks[p].t;
    const take = (t?: string) => {
        const tok = toks[p++];
        if (t && tok.t !== t) {
            throw new Error(`jmespath: expected ${t}, got ${tok.t} in ${src}`);
        }
        return tok;
    };
    const expr = (rbp: number): Node => {
        let left = nud(take());
        while (rbp < bp(cur())) {
            left = led(take(), left);
        }
        return left;
    };
    const projectionRhs = (power: number): Node => {
        if (bp(cur()) < 10) {
            return { n: "current" };
        }
        if (cur() === ".") {
            take();
            return expr(power);
        }
        return expr(power);
    };
    const filter = (left: Node): Node => {
        const cond = expr(0);
        take("]");
        return { n: "filter", l: left, cond, r: projectionRhs(BP["[?"]) };
    };
    const nud = (tok: Tok): Node => {
        switch (tok.t) {
            case "ident":
                if (cur() === "(") {
                    take();
                    const args: Node[] = [];
                    while (cur() !== ")") {
                        args.push(expr(0));
                        if (cur() === ",") {
                            take();
                        }
                    }
                    take(")");
                    return { n: "call", name: tok.v as string, args };
                }
                return { n: "field", name: tok.v as string };
            case "literal":
                return { n: "literal", v: tok.v as Json };
            case "@":
                return { n: "current" };
            case "!":
                return { n: "not", e: expr(BP["!"]) };
            case "(": {
                const e = expr(0);
                take(")");
                return e;
            }
            case "[?":
                return filter({ n: "current" });
            default:
                throw new Error(`jmespath: unexpected ${tok.t} in ${src}`);
        }
    };
    const led = (tok: Tok, left: Node): Node => {
        switch (tok.t) {
            case ".":
                return { n: "sub", l: left, r: expr(BP["."]) };
            case "|":
                return { n: "pipe", l: left, r: expr(BP["|"]) };
            case "||":
                return { n: "or", l: left, r: expr(BP["||"]) };
            case "&&":
                return { n: "and", l: left, r: expr(BP["&&"]) };
            case "[?":
                return filter(left);
            case "[": {
                const i = take("number").v as number;
                take("]");
                return { n: "index", l: left, i };
            }
            default:
                if (BP[tok.t] === 5) {
                    return { n: "cmp", op: tok.t, l: left, r: expr(5) };
                }
                throw new Error(`jmespath: unexpected ${tok.t} in ${src}`);
        }
    };
    const out = expr(0);
    take("eof");
    return out;
}

const isObject = (v: unknown): v is { [k: string]: Json } => v !== null && typeof v === "object" && !Array.isArray(v);
/** JMESPath truthiness: false, null, "", [] and {} are false. */
const isFalse = (v: Json): boolean =>
    v === null || v === false || v === "" || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
export const deepEqual = (a: Json, b: Json): boolean => canonical(a) === canonical(b);
/** Go's json.Marshal of unstructured data: map keys sorted. */
export function canonical(v: Json): string {
    if (Array.isArray(v)) {
        return `[${v.map(canonical).join(",")}]`;
    }
    if (isObject(v)) {
        return `{${Object.keys(v)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
            .join(",")}}`;
    }
    return JSON.stringify(v);
}

const lenient = (f: () => Json): Json => {
    try {
        return f();
    } catch (e) {
        if (e instanceof NotFound) {
            return null;
        }
        throw e;
    }
};

const FUNCTIONS: Record<string, (...a: Json[]) => Json> = {
    length: (x) => (typeof x === "string" || Array.isArray(x) ? x.length : isObject(x) ? Object.keys(x).length : fail("length")),
    contains: (s, x) => (Array.isArray(s) ? s.some((e) => deepEqual(e, x)) : typeof s === "string" && typeof x === "string" ? s.includes(x) : fail("contains")),
    label_match: (sel, labels) =>
        isObject(sel) && isObject(labels) ? Object.entries(sel).every(([k, v]) => k in labels && deepEqual(labels[k], v)) : fail("label_match"),
    lookup: (o, k) => (isObject(o) && typeof k === "string" ? (o[k] ?? null) : fail("lookup")),
    to_string: (x) => (typeof x === "string" ? x : canonical(x)),
    regex_match: (re, s) => new RegExp(String(re)).test(String(s)),
    merge: (...objs) => Object.assign({}, ...objs.map((o) => (isObject(o) ? o : fail("merge")))) as Json,
    add: (a, b) => (typeof a === "number" && typeof b === "number" ? a + b : fail("add")),
};

function fail(name: string): never {
    throw new Error(`jmespath: invalid arguments to ${name}`);
}

export function evalJmes(node: Node, value: Json): Json {
    switch (node.n) {
        case "field":
            if (isObject(value)) {
                if (!(node.name in value)) {
                    throw new NotFound(node.name);
                }
                return value[node.name];
            }
            return null;
        case "current":
            return value;
        case "literal":
            return node.v;
        case "sub":
            return evalJmes(node.r, evalJmes(node.l, value));
        case "index": {
            const l = evalJmes(node.l, value);
            // A negative index counts from the end (JMESPath specification, index expressions).
            return Array.isArray(l) ? (l[node.i < 0 ? l.length + node.i : node.i] ?? null) : null;
        }
        case "filter": {
            const l = lenient(() => evalJmes(node.l, value));
            if (!Array.isArray(l)) {
                return null;
            }
            const out: Json[] = [];
            for (const el of l) {
                if (!isFalse(lenient(() => evalJmes(node.cond, el)))) {
                    const r = lenient(() => evalJmes(node.r, el));
                    if (r !== null) {
                        out.push(r);
                    }
                }
            }
            return out;
        }
        case "cmp": {
            const [l, r] = [lenient(() => evalJmes(node.l, value)), lenient(() => evalJmes(node.r, value))];
            if (node.op === "==") {
                return deepEqual(l, r);
            }
            if (node.op === "!=") {
                return !deepEqual(l, r);
            }
            if (typeof l !== "number" || typeof r !== "number") {
                return null;
            }
            return node.op === "<" ? l < r : node.op === "<=" ? l <= r : node.op === ">" ? l > r : l >= r;
        }
        case "or": {
            const l = lenient(() => evalJmes(node.l, value));
            return isFalse(l) ? evalJmes(node.r, value) : l;
        }
        case "and": {
            const l = lenient(() => evalJmes(node.l, value));
            return isFalse(l) ? l : evalJmes(node.r, value);
        }
        case "not":
            return isFalse(lenient(() => evalJmes(node.e, value)));
        case "pipe":
            return evalJmes(
                node.r,
                lenient(() => evalJmes(node.l, value)),
            );
        case "call": {
            const f = FUNCTIONS[node.name];
            if (!f) {
                throw new Error(`jmespath: unknown function ${node.name}`);
            }
            return f(...node.args.map((a) => lenient(() => evalJmes(a, value))));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Variables and conditions

/** kyverno/kyverno `pkg/engine/variables/regex/vars.go` RegexVariables. */
const VARIABLE = /(^|[^\\])(\{\{(?:\{[^{}]*\}|[^{}])*\}\})/g;

export function substitute(value: Json, ctx: Json, opts: { preconditions?: boolean } = {}): Json {
    const query = (v: string): Json => {
        const expr = v.slice(2, -2).trim();
        try {
            return evalJmes(parseJmes(expr), ctx);
        } catch (e) {
            if (e instanceof NotFound && opts.preconditions) {
                return null;
            }
            throw e;
        }
    };
    if (typeof value === "string") {
        let s = value;
        for (let guard = 0; guard < 10; guard++) {
            const matches = [...s.matchAll(VARIABLE)];
            if (matches.length === 0) {
                return s;
            }
            const v = matches[0][2];
            const resolved = query(v);
            if (s === v) {
                return resolved;
            }
            s = s.replace(v, typeof resolved === "string" ? resolved : canonical(resolved));
        }
        throw new Error(`variables do not resolve: ${value}`);
    }
    if (Array.isArray(value)) {
        return value.map((v) => substitute(v, ctx, opts));
    }
    if (isObject(value)) {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, ctx, opts)]));
    }
    return value;
}

const asStrings = (v: Json): string[] =>
    Array.isArray(v) ? v.map((x) => (typeof x === "string" ? x : canonical(x))) : [typeof v === "string" ? v : canonical(v)];

/** kyverno/kyverno `pkg/engine/variables/operator`: the operators the policies use. */
export function holds(c: { key: Json; operator: Condition["operator"]; value: Json }): boolean {
    const { key, value } = c;
    switch (c.operator) {
        case "Equals":
            return deepEqual(key, value);
        case "NotEquals":
            return !deepEqual(key, value);
        case "GreaterThan":
        case "GreaterThanOrEquals":
        case "LessThan": {
            const [k, v] = [Number(key), Number(value)];
            if (typeof key === "object" || Number.isNaN(k) || Number.isNaN(v)) {
                return false;
            }
            return c.operator === "GreaterThan" ? k > v : c.operator === "LessThan" ? k < v : k >= v;
        }
        case "AnyIn":
            return asStrings(key).some((k) => asStrings(value).includes(k));
        case "AnyNotIn":
            return asStrings(key).some((k) => !asStrings(value).includes(k));
        case "AllNotIn":
            return asStrings(key).every((k) => !asStrings(value).includes(k));
    }
}

function conditionsHold(conditions: Conditions, ctx: Json, preconditions: boolean): boolean {
    const one = (c: Condition) =>
        holds({ key: substitute(c.key as Json, ctx, { preconditions }), operator: c.operator, value: substitute(c.value as Json, ctx, { preconditions }) });
    return (conditions.all ?? []).every(one) && (conditions.any === undefined || conditions.any.some(one));
}

// ---------------------------------------------------------------------------------------------
// Rules

/** The same admission request as the CEL side's, plus the labels of the object's namespace. */
export interface ClusterAdmission extends Admission {
    namespaceLabels?: Record<string, string>;
}

export interface RuleOutcome {
    rule: string;
    denied?: string;
    /** A violation of a rule whose failureAction is Audit: reported, not refused. */
    audited?: string;
    generated?: Json;
    patch?: Json;
}

/**
 * kyverno/kyverno v1.17.2 pkg/utils/kube/kind.go `ParseKindSelector` and pkg/utils/match/kind.go
 * `CheckKind`, for the selectors the policies write: the request's top-level kind (the resource's,
 * pkg/webhooks/handlers/enrich.go `withTopLevelGVK`), and a Pod rule matches
 * pods/ephemeralcontainers too (`allowEphemeralContainers`, pkg/engine/utils/match.go).
 */
function kindMatches(selector: string, kind: { group: string; version: string; kind: string }, subResource: string): boolean {
    const parts = selector.split("/");
    const version = /^(v\d((alpha|beta)\d)?|\*)$/;
    const [group, ver, k, sub] =
        parts.length === 4
            ? parts
            : parts.length === 3
              ? version.test(parts[0])
                  ? ["*", ...parts]
                  : [...parts, ""]
              : parts.length === 2
                ? version.test(parts[0])
                    ? ["*", parts[0], parts[1], ""]
                    : ["*", "*", parts[0], parts[1]]
                : ["*", "*", parts[0], ""];
    const is = (pattern: string, value: string) => pattern === "*" || pattern === value;
    if (!(is(group, kind.group) && is(ver, kind.version) && is(k, kind.kind))) {
        return false;
    }
    return sub === subResource || (kind.group === "" && kind.version === "v1" && kind.kind === "Pod" && subResource === "ephemeralcontainers");
}

/** Whether a rule's match and exclude blocks select the request. */
export function ruleMatches(rule: ClusterPolicyRule, a: ClusterAdmission): boolean {
    const o = a.object as { metadata: { namespace: string } };
    const ns = o.metadata.namespace;
    const kind = requestKind(a);
    const labels = { ...(a.namespaceLabels ?? {}), "kubernetes.io/metadata.name": ns };
    const matched = rule.match.any.some(
        ({ resources: r }) =>
            r.kinds.some((k) => kindMatches(k, kind, a.subResource ?? "")) &&
            (r.operations === undefined || r.operations.includes(a.operation)) &&
            (r.namespaceSelector === undefined || selects(r.namespaceSelector as LabelSelector, labels)),
    );
    const excluded = (rule.exclude?.any ?? []).some(({ resources }) => resources.namespaces.includes(ns));
    return matched && !excluded;
}

/**
 * A strategic merge patch with Kyverno's add-if-absent anchor `+(key)`: the value is added only
 * where the resource has no such key (kyverno/kyverno `pkg/engine/anchor`, "add if not present").
 */
export function mergeWithAnchors(target: Json, patch: Json): Json {
    if (!isObject(patch) || !isObject(target)) {
        return patch;
    }
    const out: { [k: string]: Json } = { ...target };
    for (const [k, v] of Object.entries(patch)) {
        const anchored = /^\+\((.*)\)$/.exec(k);
        if (anchored) {
            if (!(anchored[1] in out)) {
                out[anchored[1]] = v;
            }
        } else {
            out[k] = k in out ? mergeWithAnchors(out[k], v) : v;
        }
    }
    return out;
}

/**
 * An enforced rule that refuses an UPDATE is evaluated again on the old object as if it were
 * created; when that fails too, the update is let through as a violation the object already had,
 * unless the rule sets `allowExistingViolations: false` (kyverno/kyverno v1.17.2
 * pkg/engine/handlers/validation/validate_resource.go `validateOldObject`: old resource empty, new
 * the old object, operation CREATE; a rule that does not match CREATE, or fails to evaluate, is
 * skipped there and lets the refusal stand).
 */
function existingViolation(p: ClusterPolicy, rule: ClusterPolicyRule, a: ClusterAdmission): boolean {
    const enforce = (rule.validate?.failureAction ?? p.spec.validationFailureAction) === "Enforce";
    if (a.operation !== "UPDATE" || !enforce || rule.validate?.allowExistingViolations === false || a.oldObject === undefined) {
        return false;
    }
    try {
        return applyClusterPolicy({ ...p, spec: { ...p.spec, rules: [rule] } }, { ...a, object: a.oldObject, oldObject: undefined, operation: "CREATE" }).some(
            (o) => o.denied !== undefined,
        );
    } catch {
        return false;
    }
}

/** Applies a ClusterPolicy's rules to an admission request, as Kyverno's engine would. */
export function applyClusterPolicy(p: ClusterPolicy, a: ClusterAdmission): RuleOutcome[] {
    const cluster = a.cluster ?? new FakeCluster();
    const deleting = a.operation === "DELETE";
    const request = {
        operation: a.operation,
        namespace: (a.object as { metadata: { namespace: string } }).metadata.namespace,
        // A DELETE carries the object as oldObject (kyverno pkg/engine/context, AddOldResource).
        object: deleting ? null : a.object,
        oldObject: deleting ? a.object : (a.oldObject ?? null),
        subResource: a.subResource ?? "",
        userInfo: { username: a.username ?? "someone", ...(a.groups ? { groups: a.groups } : {}) },
    } as Json;
    const out: RuleOutcome[] = [];
    for (const rule of p.spec.rules) {
        if (!ruleMatches(rule, a)) {
            continue;
        }
        const ctx: { [k: string]: Json } = { request };
        for (const entry of rule.context ?? []) {
            if (entry.variable) {
                ctx[entry.name] = evalJmes(parseJmes(entry.variable.jmesPath), ctx);
            } else if (entry.apiCall) {
                const url = substitute(entry.apiCall.urlPath, ctx) as string;
                const nsGet = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(url);
                if (nsGet) {
                    const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: nsGet[1] }, status: { phase: a.namespacePhase ?? "Active" } };
                    ctx[entry.name] = evalJmes(parseJmes(substitute(entry.apiCall.jmesPath, ctx) as string), namespace as Json);
                    continue;
                }
                const m = /^\/apis\/([^/]+)\/([^/]+)\/namespaces\/([^/]+)\/([^/]+)$/.exec(url);
                if (!m) {
                    throw new Error(`unsupported urlPath ${url}`);
                }
                const list = cluster.list(`${m[1]}/${m[2]}`, m[4], m[3]);
                ctx[entry.name] = evalJmes(parseJmes(substitute(entry.apiCall.jmesPath, ctx) as string), list);
            }
        }
        if (rule.preconditions && !conditionsHold(rule.preconditions, ctx, true)) {
            continue;
        }
        if (rule.validate) {
            const enforce = (rule.validate.failureAction ?? p.spec.validationFailureAction) === "Enforce";
            if (conditionsHold(rule.validate.deny.conditions, ctx, false) && !existingViolation(p, rule, a)) {
                out.push(enforce ? { rule: rule.name, denied: rule.validate.message } : { rule: rule.name, audited: rule.validate.message });
            }
        } else if (rule.generate) {
            const g = rule.generate;
            const data = substitute(g.data as Json, ctx) as { [k: string]: Json };
            out.push({
                rule: rule.name,
                generated: {
                    apiVersion: g.apiVersion,
                    kind: g.kind,
                    metadata: { name: substitute(g.name, ctx), namespace: substitute(g.namespace, ctx) },
                    ...data,
                },
            });
        } else if (rule.mutate) {
            const mutated = mergeWithAnchors(a.object, substitute(rule.mutate.patchStrategicMerge as Json, ctx));
            if (!deepEqual(mutated, a.object)) {
                out.push({ rule: rule.name, patch: mutated });
            }
        }
    }
    return out;
}
