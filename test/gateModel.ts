/**
 * Models of the engines a metric gate passes through, for the tests: Prometheus' own PromQL grammar
 * (`@prometheus-io/lezer-promql`), a small evaluator over its parse tree for the query shapes the
 * program emits, the subset of expr that Argo Rollouts evaluates conditions with, and Argo
 * Rollouts' rules for a measurement and a run. Every rule restated here names the upstream file it
 * comes from; anything the models do not know is an error, never a guess.
 */
import { parser } from "@prometheus-io/lezer-promql";
import { promqlSyntaxErrors } from "../components/rollouts/promql";

type Tree = ReturnType<typeof parser.parse>;
export type PromNode = Tree["topNode"];

// ---------------------------------------------------------------------------------------------
// PromQL: grammar

export function parsePromQL(query: string): PromNode {
    return parser.parse(query).topNode;
}

export { promqlSyntaxErrors };

/** The values of every string literal in `query`, unescaped. */
export function stringLiterals(query: string): string[] {
    const out: string[] = [];
    parser.parse(query).iterate({
        enter: (n) => {
            if (n.name === "StringLiteral") {
                out.push(unquote(query.slice(n.from, n.to)));
            }
        },
    });
    return out;
}

export function children(n: PromNode): PromNode[] {
    const out: PromNode[] = [];
    for (let c = n.firstChild; c; c = c.nextSibling) {
        out.push(c);
    }
    return out;
}

/** The node below parentheses. */
export function unparen(n: PromNode): PromNode {
    return n.name === "ParenExpr" ? unparen(children(n)[0]) : n;
}

/** A binary expression's parts: `lhs <op> [modifiers] rhs`. */
export function binary(n: PromNode): { lhs: PromNode; op: string; modifiers: PromNode[]; rhs: PromNode } {
    if (n.name !== "BinaryExpr") {
        throw new Error(`not a binary expression: ${n.name}`);
    }
    const k = children(n);
    return { lhs: k[0], op: k[1].name, modifiers: k.slice(2, -1), rhs: k[k.length - 1] };
}

// ---------------------------------------------------------------------------------------------
// PromQL: evaluation of the shapes the program emits

export type Labels = Record<string, string>;
/**
 * A series as scraped: its labels (with `__name__`) and the counter values inside the window.
 * `times` (seconds relative to the evaluation instant, so at most 0) places each sample; with it,
 * rate/increase select the samples in the window and extrapolate as Prometheus does (see
 * rangeFunction). Without it the samples are taken to span the window exactly (factor 1).
 */
export interface Series {
    labels: Labels;
    samples: number[];
    times?: number[];
}
export interface Sample {
    labels: Labels;
    value: number;
}
type Value = { kind: "vector"; samples: Sample[] } | { kind: "scalar"; value: number };

/**
 * Evaluates `query` over `series` at one instant, every range selector seeing the samples given.
 * Restates, for the node types the program emits (anything else throws):
 * - rate/increase (promql/functions.go, extrapolatedRate): a series needs two samples in the
 *   window, else it yields nothing; the increase is last - first plus every counter reset,
 *   extrapolated to the window's edges when the series carries sample times (extrapolatedIncrease),
 *   which can lift a count over a comparison's threshold; rate is increase / range.
 * - sum [by (...)] (promql/engine.go, aggregation): one sample per group, labelled with the grouping
 *   labels only; no input, no output.
 * - vector(s) (promql/functions.go, funcVector): one sample without labels.
 * - histogram_quantile (promql/quantile.go, BucketQuantile), see bucketQuantile.
 * - arithmetic between vectors: one-to-one on the label set without `__name__` (or the `on` list);
 *   the result drops the metric name (promql/engine.go, VectorBinop).
 * - comparison of a vector with a scalar, without `bool`: keeps the samples for which it holds.
 * - `or`: the left side, plus right-side samples whose labels match none on the left; `and`: the
 *   left-side samples whose labels match one on the right (promql/engine.go, VectorOr, VectorAnd).
 */
export function evaluatePromQL(query: string, series: Series[]): Sample[] {
    const errors = promqlSyntaxErrors(query);
    if (errors.length > 0) {
        throw new Error(errors.join("; "));
    }
    const v = evalNode(parsePromQL(query), query, series);
    if (v.kind !== "vector") {
        throw new Error("the query is a scalar: Argo Rollouts would bind result to a float, not a list");
    }
    return v.samples;
}

function text(n: PromNode, q: string): string {
    return q.slice(n.from, n.to);
}

function vectorOf(v: Value, what: string): Sample[] {
    if (v.kind !== "vector") {
        throw new Error(`${what} must be a vector`);
    }
    return v.samples;
}

function withoutName(l: Labels): Labels {
    const { __name__: _n, ...rest } = l;
    return rest;
}

function evalNode(n: PromNode, q: string, series: Series[]): Value {
    switch (n.name) {
        case "PromQL":
        case "ParenExpr":
            return evalNode(children(n)[0], q, series);
        case "NumberDurationLiteral":
            return { kind: "scalar", value: Number(text(n, q)) };
        case "AggregateExpr":
            return { kind: "vector", samples: aggregate(n, q, series) };
        case "FunctionCall":
            return call(n, q, series);
        case "BinaryExpr":
            return binaryOp(n, q, series);
        default:
            throw new Error(`the model does not evaluate ${n.name} (${text(n, q)})`);
    }
}

function aggregate(n: PromNode, q: string, series: Series[]): Sample[] {
    const k = children(n);
    const op = children(k[0])[0].name;
    if (op !== "Sum") {
        throw new Error(`the model does not evaluate the aggregation ${op}`);
    }
    const modifier = k.find((c) => c.name === "AggregateModifier");
    let by: string[] = [];
    if (modifier) {
        const [kind, grouping] = children(modifier);
        if (kind.name !== "By") {
            throw new Error("the model only evaluates sum by (...)");
        }
        by = children(grouping).map((l) => text(l, q));
    }
    const body = k.find((c) => c.name === "FunctionCallBody")!;
    const input = vectorOf(evalNode(children(body)[0], q, series), "sum's argument");
    const groups = new Map<string, Sample>();
    for (const s of input) {
        const labels: Labels = {};
        for (const l of by) {
            if (s.labels[l] !== undefined) {
                labels[l] = s.labels[l];
            }
        }
        const key = JSON.stringify(labels);
        const g = groups.get(key);
        groups.set(key, { labels, value: (g?.value ?? 0) + s.value });
    }
    return [...groups.values()];
}

function call(n: PromNode, q: string, series: Series[]): Value {
    const [ident, body] = children(n);
    const fn = children(ident)[0].name;
    const args = children(body);
    switch (fn) {
        case "Rate":
        case "Increase":
            return { kind: "vector", samples: rangeFunction(args[0], q, series, fn === "Rate") };
        case "Vector": {
            const s = evalNode(args[0], q, series);
            if (s.kind !== "scalar") {
                throw new Error("vector() takes a scalar");
            }
            return { kind: "vector", samples: [{ labels: {}, value: s.value }] };
        }
        case "HistogramQuantile": {
            const phi = evalNode(args[0], q, series);
            if (phi.kind !== "scalar") {
                throw new Error("histogram_quantile takes a scalar quantile");
            }
            return { kind: "vector", samples: histogramQuantile(phi.value, vectorOf(evalNode(args[1], q, series), "histogram_quantile's buckets")) };
        }
        default:
            throw new Error(`the model does not evaluate the function ${fn}`);
    }
}

function durationSeconds(d: string): number {
    const m = /^([0-9]+)(s|m|h)$/.exec(d);
    if (!m) {
        throw new Error(`the model does not read the duration ${d}`);
    }
    return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as "s" | "m" | "h"];
}

/**
 * rate/increase of one series, as Prometheus computes it (promql/functions.go at v3.14.0,
 * extrapolatedRate): the samples in the left-open window (-range, 0], at least two, the delta
 * plus every counter reset, then extrapolated to the window's edges. Each edge is reached fully
 * when the nearest sample is within 1.1 average sample intervals of it, else by half an interval;
 * towards the start never past the counter's extrapolated zero. The delivery end-to-end scenario
 * `gate-model-agrees` found the gate floor (`>= minRequests`) decided on the extrapolated value:
 * a window of raw 45 requests reads 60 there, so the model must extrapolate to agree.
 */
export function extrapolatedIncrease(values: number[], times: number[] | undefined, range: number): number | undefined {
    let v = values;
    let t = times;
    if (t) {
        const inWindow = t.map((x, i) => [x, i] as const).filter(([x]) => x > -range && x <= 0);
        v = inWindow.map(([, i]) => values[i]);
        t = inWindow.map(([x]) => x);
    }
    if (v.length < 2) {
        return undefined;
    }
    let delta = v[v.length - 1] - v[0];
    for (let i = 1; i < v.length; i++) {
        if (v[i] < v[i - 1]) {
            delta += v[i - 1];
        }
    }
    if (!t) {
        return delta;
    }
    const sampled = t[t.length - 1] - t[0];
    const average = sampled / (t.length - 1);
    const threshold = average * 1.1;
    let toStart = t[0] + range;
    let toEnd = -t[t.length - 1];
    if (toStart >= threshold) {
        toStart = average / 2;
    }
    if (delta > 0 && v[0] >= 0) {
        toStart = Math.min(toStart, sampled * (v[0] / delta));
    }
    if (toEnd >= threshold) {
        toEnd = average / 2;
    }
    return sampled === 0 ? delta : (delta * (sampled + toStart + toEnd)) / sampled;
}

function rangeFunction(matrix: PromNode, q: string, series: Series[], isRate: boolean): Sample[] {
    if (matrix.name !== "MatrixSelector") {
        throw new Error("rate/increase take a range selector");
    }
    const [vs, duration] = children(matrix);
    const range = durationSeconds(text(duration, q));
    const out: Sample[] = [];
    for (const s of select(vs, q, series)) {
        const increase = extrapolatedIncrease(s.samples, s.times, range);
        if (increase === undefined) {
            continue;
        }
        out.push({ labels: withoutName(s.labels), value: isRate ? increase / range : increase });
    }
    return out;
}

/** PromQL string literals: Go-style escapes inside double quotes, as the program writes them. */
function unquote(literal: string): string {
    if (!literal.startsWith('"')) {
        throw new Error(`the model only reads double-quoted strings: ${literal}`);
    }
    return JSON.parse(literal) as string;
}

function select(vs: PromNode, q: string, series: Series[]): Series[] {
    if (vs.name !== "VectorSelector") {
        throw new Error(`not a selector: ${vs.name}`);
    }
    const matchers: { name: string; test: (v: string) => boolean }[] = [];
    for (const c of children(vs)) {
        if (c.name === "Identifier") {
            const metric = text(c, q);
            matchers.push({ name: "__name__", test: (v) => v === metric });
        } else if (c.name === "LabelMatchers") {
            for (const m of children(c)) {
                if (m.name !== "UnquotedLabelMatcher") {
                    throw new Error(`the model does not read ${m.name}`);
                }
                const [label, op, value] = children(m);
                const want = unquote(text(value, q));
                // Regex matchers are fully anchored (promql/parser/lex.go, labels.NewMatcher).
                const re = new RegExp(`^(?:${want})$`);
                const test = {
                    EqlSingle: (v: string) => v === want,
                    Neq: (v: string) => v !== want,
                    EqlRegex: (v: string) => re.test(v),
                    NeqRegex: (v: string) => !re.test(v),
                }[children(op)[0].name as "EqlSingle" | "Neq" | "EqlRegex" | "NeqRegex"];
                matchers.push({ name: text(label, q), test });
            }
        } else {
            throw new Error(`the model does not read ${c.name} in a selector`);
        }
    }
    // A label a series does not have matches as the empty string.
    return series.filter((s) => matchers.every((m) => m.test(s.labels[m.name] ?? "")));
}

/**
 * Restates Prometheus' BucketQuantile (promql/quantile.go) for classic buckets that are already
 * monotonic: NaN without a +Inf bucket, with fewer than two buckets or with no observations; the
 * upper bound of the second-highest bucket when the quantile falls into +Inf; linear interpolation
 * inside a bucket otherwise, from 0 for the lowest one.
 */
export function bucketQuantile(q: number, buckets: { upperBound: number; count: number }[]): number {
    const b = [...buckets].sort((x, y) => x.upperBound - y.upperBound);
    if (b.length === 0 || b[b.length - 1].upperBound !== Infinity || b.length < 2) {
        return NaN;
    }
    const observations = b[b.length - 1].count;
    if (observations === 0) {
        return NaN;
    }
    let rank = q * observations;
    let i = b.findIndex((x, j) => j < b.length - 1 && x.count >= rank);
    if (i < 0) {
        i = b.length - 1;
    }
    if (i === b.length - 1) {
        return b[b.length - 2].upperBound;
    }
    if (i === 0 && b[0].upperBound <= 0) {
        return b[0].upperBound;
    }
    let start = 0;
    let count = b[i].count;
    if (i > 0) {
        start = b[i - 1].upperBound;
        count -= b[i - 1].count;
        rank -= b[i - 1].count;
    }
    return start + (b[i].upperBound - start) * (rank / count);
}

function histogramQuantile(phi: number, input: Sample[]): Sample[] {
    const groups = new Map<string, { labels: Labels; buckets: { upperBound: number; count: number }[] }>();
    for (const s of input) {
        const { le, ...rest } = s.labels;
        if (le === undefined) {
            continue;
        }
        const key = JSON.stringify(rest);
        const g = groups.get(key) ?? { labels: rest, buckets: [] };
        g.buckets.push({ upperBound: le === "+Inf" ? Infinity : Number(le), count: s.value });
        groups.set(key, g);
    }
    return [...groups.values()].map((g) => ({ labels: g.labels, value: bucketQuantile(phi, g.buckets) }));
}

function binaryOp(n: PromNode, q: string, series: Series[]): Value {
    const { lhs, op, modifiers, rhs } = binary(n);
    if (modifiers.some((m) => m.name === "BoolModifier")) {
        throw new Error("the model does not evaluate comparisons with bool");
    }
    const matching = modifiers.find((m) => m.name === "MatchingModifierClause");
    let on: string[] | undefined;
    if (matching) {
        const k = children(matching);
        if (k[0].name !== "On" || k.length !== 2) {
            throw new Error("the model only evaluates on(...) without group modifiers");
        }
        on = children(k[1]).map((l) => text(l, q));
    }
    const signature = (l: Labels) => {
        const base = withoutName(l);
        const kept = on === undefined ? base : Object.fromEntries(on.filter((k) => base[k] !== undefined).map((k) => [k, base[k]]));
        return JSON.stringify(
            Object.keys(kept)
                .sort()
                .map((k) => [k, kept[k]]),
        );
    };
    const left = evalNode(lhs, q, series);
    const right = evalNode(rhs, q, series);
    const comparisons: Record<string, (a: number, b: number) => boolean> = {
        Gte: (a, b) => a >= b,
        Gtr: (a, b) => a > b,
        Lte: (a, b) => a <= b,
        Lss: (a, b) => a < b,
        Eql: (a, b) => a === b,
        Neq: (a, b) => a !== b,
    };
    if (comparisons[op]) {
        if (left.kind !== "vector" || right.kind !== "scalar") {
            throw new Error("the model only evaluates vector-to-scalar comparisons");
        }
        return { kind: "vector", samples: left.samples.filter((s) => comparisons[op](s.value, right.value)) };
    }
    const l = vectorOf(left, `the left side of ${op}`);
    const r = vectorOf(right, `the right side of ${op}`);
    const rightSigs = new Map<string, Sample[]>();
    for (const s of r) {
        rightSigs.set(signature(s.labels), [...(rightSigs.get(signature(s.labels)) ?? []), s]);
    }
    switch (op) {
        case "Or": {
            const leftSigs = new Set(l.map((s) => signature(s.labels)));
            return { kind: "vector", samples: [...l, ...r.filter((s) => !leftSigs.has(signature(s.labels)))] };
        }
        case "And":
            return { kind: "vector", samples: l.filter((s) => rightSigs.has(signature(s.labels))) };
        case "Div": {
            const out: Sample[] = [];
            for (const s of l) {
                const match = rightSigs.get(signature(s.labels)) ?? [];
                if (match.length > 1) {
                    throw new Error("many-to-one matching needs group_left (Prometheus refuses it)");
                }
                if (match.length === 1) {
                    out.push({ labels: withoutName(s.labels), value: s.value / match[0].value });
                }
            }
            return { kind: "vector", samples: out };
        }
        default:
            throw new Error(`the model does not evaluate the operator ${op}`);
    }
}

// ---------------------------------------------------------------------------------------------
// Conditions: the subset of expr Argo Rollouts evaluates them with

/**
 * Argo Rollouts v1.9.0 evaluates a condition with github.com/antonmedv/expr v1.15.5 (go.mod) in an
 * environment holding `result` (a Prometheus vector becomes a list of float64,
 * metricproviders/prometheus/prometheus.go processResponse), `asInt`, `asFloat`, `isNaN`, `isInf`,
 * `isNil` and `default` (utils/evaluate/evaluate.go, EvalCondition), beside expr's builtins such as
 * `len`. A name outside the environment fails compilation; a failed compilation or run (an index
 * past the end of the list) is an error, and an error makes the measurement Error. `&&`/`and` and
 * `||`/`or` short-circuit (expr compiler/compiler.go: OpJumpIfFalse / OpJumpIfTrue).
 */
export class ExprError extends Error {}

const ENV_FUNCTIONS = ["len", "isNaN", "isInf", "isNil", "default", "asInt", "asFloat"] as const;
type Token = { kind: "num" | "ident" | "op"; text: string };
type Ast =
    | { t: "num"; v: number }
    | { t: "bool"; v: boolean }
    | { t: "ident"; name: string }
    | { t: "call"; fn: string; args: Ast[] }
    | { t: "index"; of: Ast; at: Ast }
    | { t: "not"; of: Ast }
    | { t: "bin"; op: string; l: Ast; r: Ast };

function tokenize(src: string): Token[] {
    const out: Token[] = [];
    const re = /\s*(?:([0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)|([A-Za-z_][A-Za-z0-9_]*)|(&&|\|\||>=|<=|==|!=|[<>!()[\],]))/y;
    let at = 0;
    while (at < src.length) {
        if (/^\s*$/.test(src.slice(at))) {
            break;
        }
        re.lastIndex = at;
        const m = re.exec(src);
        if (!m) {
            throw new ExprError(`expr cannot read "${src.slice(at)}"`);
        }
        at = re.lastIndex;
        if (m[1] !== undefined) {
            out.push({ kind: "num", text: m[1] });
        } else if (m[2] !== undefined) {
            const word = m[2];
            out.push(
                word === "and" || word === "or" || word === "not"
                    ? { kind: "op", text: { and: "&&", or: "||", not: "!" }[word] }
                    : { kind: "ident", text: word },
            );
        } else {
            out.push({ kind: "op", text: m[3] });
        }
    }
    return out;
}

function parseExpr(src: string): Ast {
    const toks = tokenize(src);
    let i = 0;
    const peek = () => toks[i]?.text;
    const expect = (t: string) => {
        if (toks[i]?.text !== t) {
            throw new ExprError(`expected ${t} at token ${i} of "${src}"`);
        }
        i++;
    };
    const primary = (): Ast => {
        const t = toks[i++];
        if (!t) {
            throw new ExprError(`unexpected end of "${src}"`);
        }
        let node: Ast;
        if (t.kind === "num") {
            node = { t: "num", v: Number(t.text) };
        } else if (t.kind === "ident") {
            if (peek() === "(") {
                i++;
                const args: Ast[] = [];
                while (peek() !== ")") {
                    args.push(or());
                    if (peek() === ",") {
                        i++;
                    }
                }
                expect(")");
                node = { t: "call", fn: t.text, args };
            } else if (t.text === "true" || t.text === "false") {
                // expr's boolean literals (expr parser/lexer: `true` and `false` are literals, not names).
                node = { t: "bool", v: t.text === "true" };
            } else {
                node = { t: "ident", name: t.text };
            }
        } else if (t.text === "(") {
            node = or();
            expect(")");
        } else {
            throw new ExprError(`unexpected ${t.text} in "${src}"`);
        }
        while (peek() === "[") {
            i++;
            const at = or();
            expect("]");
            node = { t: "index", of: node, at };
        }
        return node;
    };
    const unary = (): Ast => {
        if (peek() === "!") {
            i++;
            return { t: "not", of: unary() };
        }
        return primary();
    };
    const comparison = (): Ast => {
        const l = unary();
        const op = peek();
        if (op && [">=", "<=", ">", "<", "==", "!="].includes(op)) {
            i++;
            return { t: "bin", op, l, r: unary() };
        }
        return l;
    };
    const and = (): Ast => {
        let l = comparison();
        while (peek() === "&&") {
            i++;
            l = { t: "bin", op: "&&", l, r: comparison() };
        }
        return l;
    };
    const or = (): Ast => {
        let l = and();
        while (peek() === "||") {
            i++;
            l = { t: "bin", op: "||", l, r: and() };
        }
        return l;
    };
    const ast = or();
    if (i !== toks.length) {
        throw new ExprError(`unexpected ${toks[i].text} in "${src}"`);
    }
    return ast;
}

/** Compile-time check: every name must be in the environment (expr.Env makes unknown names errors). */
function checkNames(a: Ast): void {
    switch (a.t) {
        case "ident":
            if (a.name !== "result") {
                throw new ExprError(`unknown name ${a.name}`);
            }
            return;
        case "call":
            if (!(ENV_FUNCTIONS as readonly string[]).includes(a.fn)) {
                throw new ExprError(`unknown function ${a.fn}`);
            }
            a.args.forEach(checkNames);
            return;
        case "index":
            checkNames(a.of);
            checkNames(a.at);
            return;
        case "not":
            checkNames(a.of);
            return;
        case "bin":
            checkNames(a.l);
            checkNames(a.r);
            return;
        default:
            return;
    }
}

type ExprValue = number | boolean | number[];

function run(a: Ast, result: number[]): ExprValue {
    switch (a.t) {
        case "num":
        case "bool":
            return a.v;
        case "ident":
            return result;
        case "index": {
            const list = run(a.of, result);
            const at = run(a.at, result);
            if (!Array.isArray(list) || typeof at !== "number") {
                throw new ExprError("only a list can be indexed, by a number");
            }
            if (at < 0 || at >= list.length) {
                throw new ExprError(`index out of range: ${at} (array length is ${list.length})`);
            }
            return list[at];
        }
        case "call": {
            const args = a.args.map((x) => run(x, result));
            switch (a.fn) {
                case "len":
                    if (!Array.isArray(args[0])) {
                        throw new ExprError("len of a number");
                    }
                    return args[0].length;
                case "isNaN":
                    return typeof args[0] === "number" && Number.isNaN(args[0]);
                case "isInf":
                    return args[0] === Infinity || args[0] === -Infinity;
                default:
                    throw new ExprError(`the model does not evaluate ${a.fn}`);
            }
        }
        case "not": {
            const v = run(a.of, result);
            if (typeof v !== "boolean") {
                throw new ExprError("! of a non-boolean");
            }
            return !v;
        }
        case "bin": {
            if (a.op === "&&" || a.op === "||") {
                const l = run(a.l, result);
                if (typeof l !== "boolean") {
                    throw new ExprError(`${a.op} of a non-boolean`);
                }
                if (a.op === "&&" ? !l : l) {
                    return l;
                }
                const r = run(a.r, result);
                if (typeof r !== "boolean") {
                    throw new ExprError(`${a.op} of a non-boolean`);
                }
                return r;
            }
            const l = run(a.l, result);
            const r = run(a.r, result);
            if (typeof l !== "number" || typeof r !== "number") {
                throw new ExprError(`${a.op} compares numbers only here`);
            }
            // Go float comparisons: anything with NaN is false, except !=.
            return { ">=": l >= r, "<=": l <= r, ">": l > r, "<": l < r, "==": l === r, "!=": l !== r }[a.op as ">=" | "<=" | ">" | "<" | "==" | "!="];
        }
    }
}

/** One condition over `result` (a vector's values), as EvalCondition: a boolean, or an ExprError. */
export function evalCondition(condition: string, result: number[]): boolean {
    const ast = parseExpr(condition);
    checkNames(ast);
    const v = run(ast, result);
    if (typeof v !== "boolean") {
        throw new ExprError(`expected bool, but got ${typeof v}`);
    }
    return v;
}

export type MeasurementPhase = "Successful" | "Failed" | "Inconclusive" | "Error";

/**
 * A measurement's phase (utils/evaluate/evaluate.go, EvaluateResult): an error in either condition
 * is Error; with no conditions, Successful; with only a success condition, Failed when it is false;
 * with only a failure condition, Successful when it is false; with both, Failed when the failure
 * condition holds, Inconclusive when neither does.
 */
export function measurementPhase(metric: { successCondition?: string; failureCondition?: string }, result: number[]): MeasurementPhase {
    let success = false;
    let failure = false;
    try {
        if (metric.successCondition) {
            success = evalCondition(metric.successCondition, result);
        }
        if (metric.failureCondition) {
            failure = evalCondition(metric.failureCondition, result);
        }
    } catch (err) {
        if (err instanceof ExprError) {
            return "Error";
        }
        throw err;
    }
    if (!metric.successCondition && !metric.failureCondition) {
        return "Successful";
    }
    if (metric.successCondition && !metric.failureCondition) {
        failure = !success;
    }
    if (!metric.successCondition && metric.failureCondition) {
        success = !failure;
    }
    if (failure) {
        return "Failed";
    }
    return success ? "Successful" : "Inconclusive";
}

// ---------------------------------------------------------------------------------------------
// Runs: how measurements add up

export interface MetricLimits {
    count?: number;
    interval?: string;
    /** -1: failures alone never end the metric. */
    failureLimit?: number;
    consecutiveSuccessLimit?: number;
    inconclusiveLimit?: number;
    consecutiveErrorLimit?: number;
}

/**
 * Restates Metric.EffectiveCount (pkg/apis/rollouts/v1alpha1/analysis_types.go, v1.9.0): no count
 * (or 0) and no interval is one measurement; no count with an interval has no effective count, the
 * metric runs until the run is terminated; otherwise the count.
 */
export function effectiveCount(m: { count?: number; interval?: string }): number | undefined {
    if (m.count === undefined || m.count === 0) {
        return m.interval ? undefined : 1;
    }
    return m.count;
}

/**
 * The phase of one metric after `phases` measurements (analysis/analysis.go, assessMetricStatus and
 * assessMetricFailureInconclusiveOrError, v1.9.0):
 * - Failed once failures exceed failureLimit (default 0; -1 never), Inconclusive once inconclusive
 *   measurements exceed inconclusiveLimit (default 0), Error once consecutive errors exceed
 *   consecutiveErrorLimit (default 4); these are totals over the run except errors, which any other
 *   measurement resets, and an Error does not count towards `count`. Error wins over Inconclusive,
 *   Inconclusive over Failed (the later check overwrites the phase).
 * - Then Successful once the successes in a row reach consecutiveSuccessLimit (when above 0).
 * - Then at the effective count: with both a failureLimit of 0 or more and a
 *   consecutiveSuccessLimit, Inconclusive (neither limit was reached); with a consecutiveSuccessLimit
 *   alone (failureLimit -1), Failed; otherwise Successful.
 * - Otherwise Running.
 */
export function metricPhase(m: MetricLimits, phases: MeasurementPhase[]): "Running" | "Successful" | "Failed" | "Inconclusive" | "Error" {
    let failed = 0;
    let inconclusive = 0;
    let consecutiveErrors = 0;
    let consecutiveSuccesses = 0;
    let count = 0;
    for (const p of phases) {
        if (p === "Error") {
            consecutiveErrors++;
            consecutiveSuccesses = 0;
        } else {
            consecutiveErrors = 0;
            count++;
            failed += p === "Failed" ? 1 : 0;
            inconclusive += p === "Inconclusive" ? 1 : 0;
            consecutiveSuccesses = p === "Successful" ? consecutiveSuccesses + 1 : 0;
        }
    }
    const failureLimit = m.failureLimit ?? 0;
    let phase: "Failed" | "Inconclusive" | "Error" | undefined;
    if (failureLimit >= 0 && failed > failureLimit) {
        phase = "Failed";
    }
    if (inconclusive > (m.inconclusiveLimit ?? 0)) {
        phase = "Inconclusive";
    }
    if (consecutiveErrors > (m.consecutiveErrorLimit ?? 4)) {
        phase = "Error";
    }
    if (phase) {
        return phase;
    }
    const successLimit = m.consecutiveSuccessLimit ?? 0;
    if (successLimit > 0 && consecutiveSuccesses >= successLimit) {
        return "Successful";
    }
    const n = effectiveCount(m);
    if (n !== undefined && count >= n) {
        if (successLimit > 0) {
            return failureLimit >= 0 ? "Inconclusive" : "Failed";
        }
        return "Successful";
    }
    return "Running";
}
