/**
 * Whether ArgoCD can build the normalizer of an ignoreDifferences rule's jq path expression. ArgoCD
 * compiles each as `del(<expression>)` with gojq when it builds an Application's diff normalizer
 * (argo-cd v3.5.1 util/argo/normalizers/diff_normalizer.go NewIgnoreNormalizer: gojq.Parse, then
 * gojq.Compile; an error fails the whole normalizer, so a broken rule in argocd-cm breaks the diff
 * of every Application). ArgoCD pins itchyny/gojq v0.12.19 (argo-cd go.mod at v3.5.1).
 *
 * This is gojq's grammar (parser.go.y and lexer.go at v0.12.19) written out as a recursive-descent
 * parser, and the compile-time checks gojq.Compile makes without options (compiler.go): every
 * function called exists with that arity (the builtins below or a `def` in scope), every
 * `$variable` is bound (`as`, reduce/foreach patterns, `$` parameters, or `$ENV`), every
 * `break $label` has its `label`. Not read: `import`/`include`/`module` (they cannot appear inside
 * `del(...)`, so gojq refuses them there too, and so does this).
 *
 * Compared with gojq v0.12.19 itself (a program calling gojq.Parse and gojq.Compile on
 * `del(<expression>)` exactly as ArgoCD does, built outside the repository): 349 expressions (the
 * shipped rules, common ignoreDifferences paths, and every construct of the grammar written valid
 * and broken), 257 that gojq compiles and 92 it refuses; this agreed on every one
 * (test/edgeCases3.test.ts keeps a sample of each side). Not compared: inputs outside that set.
 */

/** gojq v0.12.19's functions and their arities, as gojq.Compile without options accepts them (builtin.jq, func.go, compiler.go). */
const BUILTINS: Readonly<Record<string, readonly number[]>> = Object.fromEntries(
    (
        "IN:1,2 INDEX:1,2 JOIN:2,3 _add:2 _alternative:2 _assign:2 _captures:0 _divide:2 _equal:2 _greater:2 _greatereq:2 _group_by:1 _index:2 _last:1 _less:2 " +
        "_lesseq:2 _match:3 _max_by:1 _min_by:1 _modify:2 _modulo:2 _multiply:2 _negate:0 _notequal:2 _plus:0 _range:3 _slice:3 _sort_by:1 _subtract:2 " +
        "_tobase64:0 _tobase64d:0 _tocsv:0 _tohtml:0 _tosh:0 _totsv:0 _touri:0 _tourid:0 _unique_by:1 abs:0 acos:0 acosh:0 add:0,1 all:0,1,2 any:0,1,2 " +
        "arrays:0 ascii_downcase:0 ascii_upcase:0 asin:0 asinh:0 atan2:2 atan:0 atanh:0 booleans:0 bsearch:1 builtins:0 capture:1,2 cbrt:0 ceil:0 " +
        "combinations:0,1 contains:1 copysign:2 cos:0 cosh:0 del:1 delpaths:1 drem:2 empty:0 endswith:1 env:0 erf:0 erfc:0 error:0,1 exp10:0 exp2:0 exp:0 " +
        "explode:0 expm1:0 fabs:0 fdim:2 finites:0 first:0,1 flatten:0,1 floor:0 fma:3 fmax:2 fmin:2 fmod:2 format:1 frexp:0 from_entries:0 fromdate:0 " +
        "fromdateiso8601:0 fromjson:0 fromstream:1 gamma:0 getpath:1 gmtime:0 group_by:1 gsub:2,3 halt:0 halt_error:0,1 has:1 hypot:2 implode:0 in:1 index:1 " +
        "indices:1 infinite:0 inside:1 isempty:1 isfinite:0 isinfinite:0 isnan:0 isnormal:0 iterables:0 j0:0 j1:0 jn:2 join:1 keys:0 last:0,1 ldexp:2 length:0 " +
        "lgamma:0 limit:2 localtime:0 log10:0 log1p:0 log2:0 log:0 logb:0 ltrim:0 ltrimstr:1 map:1 map_values:1 match:1,2 max:0 max_by:1 min:0 min_by:1 " +
        "mktime:0 modf:0 modulemeta:0 nan:0 nearbyint:0 nextafter:2 nexttoward:2 normals:0 not:0 now:0 nth:1,2 nulls:0 numbers:0 objects:0 path:1 paths:0,1 " +
        "pick:1 pow:2 range:1,2,3 recurse:0,1,2 remainder:2 repeat:1 reverse:0 rindex:1 rint:0 round:0 rtrim:0 rtrimstr:1 scalars:0 scalb:2 scalbln:2 scan:1,2 " +
        "select:1 setpath:2 significand:0 sin:0 sinh:0 skip:2 sort:0 sort_by:1 split:1,2 splits:1,2 sqrt:0 startswith:1 strflocaltime:1 strftime:1 strings:0 " +
        "strptime:1 sub:2,3 tan:0 tanh:0 test:1,2 tgamma:0 to_entries:0 toboolean:0 todate:0 todateiso8601:0 tojson:0 tonumber:0 tostream:0 tostring:0 " +
        "transpose:0 trim:0 trimstr:1 trunc:0 truncate_stream:1 type:0 unique:0 unique_by:1 until:2 utf8bytelength:0 values:0 walk:1 while:2 with_entries:1 " +
        "y0:0 y1:0 yn:2"
    )
        .split(" ")
        .map((e) => [
            e.slice(0, e.indexOf(":")),
            e
                .slice(e.indexOf(":") + 1)
                .split(",")
                .map(Number),
        ]),
);

const KEYWORDS = new Set([
    "or",
    "and",
    "module",
    "import",
    "include",
    "def",
    "as",
    "label",
    "break",
    "null",
    "true",
    "false",
    "if",
    "then",
    "elif",
    "else",
    "end",
    "try",
    "catch",
    "reduce",
    "foreach",
]);

type Tok =
    | { k: "ident" | "modident" | "var" | "modvar" | "number" | "index" | "format" | "kw" | "op" | "punct"; v: string; at: number }
    | { k: "string"; parts: Tok[][]; at: number }
    | { k: "eof"; at: number };

class JqError extends Error {}

const isIdent = (c: string | undefined, tail: boolean) => c !== undefined && (/[A-Za-z_]/.test(c) || (tail && /[0-9]/.test(c)));
const isNum = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";

/** gojq's lexer (lexer.go): tokens until the end, or until an unmatched `)` when inside a string's `\(...)`. */
function lex(src: string, start: number, inInterpolation: boolean): { toks: Tok[]; end: number } {
    const toks: Tok[] = [];
    let i = start;
    let depth = 0;
    const fail = (what: string): never => {
        throw new JqError(`${what} at ${i}`);
    };
    const scanIdent = () => {
        while (isIdent(src[i], true)) {
            i++;
        }
    };
    const scanNumber = (float: boolean) => {
        let state = float ? "float" : "lead";
        for (;;) {
            const c = src[i];
            if (state === "lead" || state === "float") {
                if (isNum(c)) {
                    i++;
                } else if (c === ".") {
                    if (state !== "lead") {
                        fail("invalid number");
                    }
                    i++;
                    state = "float";
                } else if (c === "e" || c === "E") {
                    i++;
                    if (src[i] === "+" || src[i] === "-") {
                        i++;
                    }
                    state = "explead";
                } else if (isIdent(c, false)) {
                    fail("invalid number");
                } else {
                    return;
                }
            } else {
                if (!isNum(c)) {
                    if (isIdent(c, false) || state === "explead") {
                        fail("invalid number");
                    }
                    return;
                }
                i++;
                state = "exp";
            }
        }
    };
    const scanIdentOrModule = (): boolean => {
        scanIdent();
        if (src[i] === ":" && src[i + 1] === ":" && isIdent(src[i + 2], false)) {
            i += 3;
            scanIdent();
            return true;
        }
        return false;
    };
    for (;;) {
        // whitespace and comments (a comment runs to the line's end; a backslash continues it)
        for (;;) {
            const c = src[i];
            if (c === " " || c === "\t" || c === "\n" || c === "\r") {
                i++;
            } else if (c === "#") {
                while (i < src.length && src[i] !== "\n" && src[i] !== "\r") {
                    if (src[i] === "\\" && (src[i + 1] === "\\" || src[i + 1] === "\n")) {
                        i++;
                    } else if (src[i] === "\\" && src[i + 1] === "\r") {
                        i += src[i + 2] === "\n" ? 2 : 1;
                    }
                    i++;
                }
            } else {
                break;
            }
        }
        const at = i;
        if (i >= src.length) {
            if (inInterpolation) {
                fail("unterminated string");
            }
            toks.push({ k: "eof", at });
            return { toks, end: i };
        }
        const c = src[i++];
        if (isIdent(c, false)) {
            i--;
            const mod = scanIdentOrModule();
            const v = src.slice(at, i);
            toks.push(mod ? { k: "modident", v, at } : KEYWORDS.has(v) ? { k: "kw", v, at } : { k: "ident", v, at });
            continue;
        }
        if (isNum(c)) {
            scanNumber(false);
            toks.push({ k: "number", v: src.slice(at, i), at });
            continue;
        }
        switch (c) {
            case ".":
                if (src[i] === ".") {
                    i++;
                    toks.push({ k: "punct", v: "..", at });
                } else if (isIdent(src[i], false)) {
                    scanIdent();
                    toks.push({ k: "index", v: src.slice(at + 1, i), at });
                } else if (isNum(src[i])) {
                    scanNumber(true);
                    toks.push({ k: "number", v: src.slice(at, i), at });
                } else {
                    toks.push({ k: "punct", v: ".", at });
                }
                continue;
            case "$":
                if (isIdent(src[i], false)) {
                    const mod = scanIdentOrModule();
                    toks.push({ k: mod ? "modvar" : "var", v: src.slice(at, i), at });
                    continue;
                }
                break;
            case "@":
                if (isIdent(src[i], true)) {
                    scanIdent();
                    toks.push({ k: "format", v: src.slice(at, i), at });
                    continue;
                }
                break;
            case '"': {
                const parts: Tok[][] = [];
                for (;;) {
                    if (i >= src.length) {
                        fail("unterminated string");
                    }
                    const s = src[i];
                    if (s === '"') {
                        i++;
                        break;
                    }
                    if (s === "\\") {
                        const e = src[i + 1];
                        if (e === "u") {
                            if (!/^[0-9A-Fa-f]{4}$/.test(src.slice(i + 2, i + 6))) {
                                fail("invalid escape sequence");
                            }
                            i += 6;
                        } else if (e !== undefined && '"/\\bfnrt'.includes(e)) {
                            i += 2;
                        } else if (e === "(") {
                            const inner = lex(src, i + 2, true);
                            parts.push(inner.toks);
                            i = inner.end;
                        } else {
                            fail("invalid escape sequence");
                        }
                        continue;
                    }
                    i++;
                }
                toks.push({ k: "string", parts, at });
                continue;
            }
            case "(":
                depth++;
                break;
            case ")":
                if (inInterpolation && depth === 0) {
                    toks.push({ k: "eof", at });
                    return { toks, end: i };
                }
                depth--;
                break;
        }
        const two = src.slice(at, at + 2);
        const three = src.slice(at, at + 3);
        if (three === "?//" || three === "//=") {
            i = at + 3;
            toks.push({ k: "op", v: three, at });
        } else if (["|=", "+=", "-=", "*=", "/=", "%=", "==", "!=", ">=", "<=", "//"].includes(two)) {
            i = at + 2;
            toks.push({ k: "op", v: two, at });
        } else {
            toks.push({ k: "punct", v: c, at });
        }
    }
}

const UPDATE_OPS = new Set(["=", "|=", "+=", "-=", "*=", "/=", "%=", "//="]);
const COMPARE_OPS = new Set(["==", "!=", "<", "<=", ">", ">="]);

interface Scope {
    funcs: Map<string, Set<number>>;
    vars: Set<string>;
    labels: Set<string>;
}

function child(s: Scope): Scope {
    return { funcs: new Map([...s.funcs].map(([k, v]) => [k, new Set(v)])), vars: new Set(s.vars), labels: new Set(s.labels) };
}

/** Parses and checks a token list as one query, as gojq.Parse then gojq.Compile would. */
class Parser {
    private p = 0;
    constructor(private readonly toks: Tok[]) {}

    private peek(): Tok {
        return this.toks[this.p];
    }
    private is(v: string): boolean {
        const t = this.peek();
        return (t.k === "punct" || t.k === "op" || t.k === "kw") && t.v === v;
    }
    private take(v: string): void {
        if (!this.is(v)) {
            this.unexpected();
        }
        this.p++;
    }
    private unexpected(): never {
        const t = this.peek();
        throw new JqError(t.k === "eof" ? "unexpected end of expression" : `unexpected token ${"v" in t ? JSON.stringify(t.v) : "string"} at ${t.at}`);
    }

    whole(scope: Scope): void {
        this.query(scope);
        if (this.peek().k !== "eof") {
            this.unexpected();
        }
    }

    /** query: def/label forms, pipes (with `as` bindings), commas. */
    private query(scope: Scope): void {
        if (this.is("def")) {
            const inner = child(scope);
            this.funcdef(inner);
            this.query(inner);
            return;
        }
        if (this.is("label")) {
            this.p++;
            const t = this.peek();
            if (t.k !== "var") {
                this.unexpected();
            }
            this.p++;
            this.take("|");
            const inner = child(scope);
            inner.labels.add(t.v);
            this.query(inner);
            return;
        }
        this.comma(scope);
        if (this.is("as")) {
            this.p++;
            const inner = child(scope);
            this.patterns(scope, inner);
            this.take("|");
            this.query(inner);
            return;
        }
        if (this.is("|")) {
            this.p++;
            this.query(scope);
        }
    }

    private comma(scope: Scope): void {
        this.expr(scope, 0);
        while (this.is(",")) {
            this.p++;
            if (this.is("def") || this.is("label")) {
                this.query(scope);
                return;
            }
            this.expr(scope, 0);
        }
    }

    private funcdef(scope: Scope): void {
        this.take("def");
        const name = this.peek();
        if (name.k !== "ident" && name.k !== "kw") {
            this.unexpected();
        }
        if (name.k === "kw") {
            this.unexpected();
        }
        this.p++;
        const params: string[] = [];
        if (this.is("(")) {
            this.p++;
            for (;;) {
                const a = this.peek();
                if (a.k !== "ident" && a.k !== "var") {
                    this.unexpected();
                }
                params.push(a.v);
                this.p++;
                if (this.is(";")) {
                    this.p++;
                    continue;
                }
                this.take(")");
                break;
            }
        }
        this.take(":");
        const arities = scope.funcs.get(name.v) ?? new Set<number>();
        arities.add(params.length);
        scope.funcs.set(name.v, arities);
        const body = child(scope);
        for (const a of params) {
            if (a.startsWith("$")) {
                body.vars.add(a);
                body.funcs.set(a.slice(1), new Set([...(body.funcs.get(a.slice(1)) ?? []), 0]));
            } else {
                body.funcs.set(a, new Set([...(body.funcs.get(a) ?? []), 0]));
            }
        }
        this.query(body);
        this.take(";");
    }

    /** Binary operators by gojq's precedence (parser.go.y): `//` right, update ops and comparisons non-associative. */
    private static readonly LEVELS: { ops: (v: string) => boolean; assoc: "left" | "right" | "none" }[] = [
        { ops: (v) => v === "//", assoc: "right" },
        { ops: (v) => UPDATE_OPS.has(v), assoc: "none" },
        { ops: (v) => v === "or", assoc: "left" },
        { ops: (v) => v === "and", assoc: "left" },
        { ops: (v) => COMPARE_OPS.has(v), assoc: "none" },
        { ops: (v) => v === "+" || v === "-", assoc: "left" },
        { ops: (v) => v === "*" || v === "/" || v === "%", assoc: "left" },
    ];

    private binop(level: number): boolean {
        const t = this.peek();
        return (t.k === "op" || t.k === "punct" || t.k === "kw") && Parser.LEVELS[level].ops(t.v);
    }

    private expr(scope: Scope, level: number): void {
        if (level === Parser.LEVELS.length) {
            this.term(scope);
            return;
        }
        const { assoc } = Parser.LEVELS[level];
        this.expr(scope, level + 1);
        if (assoc === "right") {
            if (this.binop(level)) {
                this.p++;
                this.expr(scope, level);
            }
            return;
        }
        if (assoc === "none") {
            if (this.binop(level)) {
                this.p++;
                this.expr(scope, level + 1);
                if (this.binop(level)) {
                    this.unexpected();
                }
            }
            return;
        }
        while (this.binop(level)) {
            this.p++;
            this.expr(scope, level + 1);
        }
    }

    private call(scope: Scope, name: string, arity: number, at: number): void {
        const known = scope.funcs.get(name)?.has(arity) || BUILTINS[name]?.includes(arity);
        if (!known) {
            throw new JqError(`function not defined: ${name}/${arity} (at ${at})`);
        }
    }

    private string(scope: Scope, t: Tok & { k: "string" }): void {
        for (const part of t.parts) {
            new Parser(part).whole(scope);
        }
    }

    private term(scope: Scope): void {
        const t = this.peek();
        this.p++;
        switch (t.k) {
            case "index":
            case "number":
                break;
            case "string":
                this.string(scope, t);
                break;
            case "format": {
                const s = this.peek();
                if (s.k === "string") {
                    this.p++;
                    this.string(scope, s);
                }
                break;
            }
            case "var":
                if (t.v !== "$ENV" && !scope.vars.has(t.v)) {
                    throw new JqError(`variable not defined: ${t.v} (at ${t.at})`);
                }
                break;
            case "modvar":
                throw new JqError(`variable not defined: ${t.v} (at ${t.at})`);
            case "modident":
                throw new JqError(`function not defined: ${t.v} (at ${t.at})`);
            case "ident": {
                let arity = 0;
                if (this.is("(")) {
                    this.p++;
                    for (;;) {
                        this.query(scope);
                        arity++;
                        if (this.is(";")) {
                            this.p++;
                            continue;
                        }
                        this.take(")");
                        break;
                    }
                }
                this.call(scope, t.v, arity, t.at);
                break;
            }
            case "kw":
                switch (t.v) {
                    case "null":
                    case "true":
                    case "false":
                        break;
                    case "if":
                        this.query(scope);
                        this.take("then");
                        this.query(scope);
                        while (this.is("elif")) {
                            this.p++;
                            this.query(scope);
                            this.take("then");
                            this.query(scope);
                        }
                        if (this.is("else")) {
                            this.p++;
                            this.query(scope);
                        }
                        this.take("end");
                        break;
                    case "try":
                        // `try` and `catch` bind tighter than any operator (tokTry, tokCatch, tokEmptyCatch).
                        this.postfixTerm(scope);
                        if (this.is("catch")) {
                            this.p++;
                            this.postfixTerm(scope);
                        }
                        break;
                    case "reduce":
                    case "foreach": {
                        this.expr(scope, 0);
                        this.take("as");
                        const inner = child(scope);
                        this.pattern(scope, inner);
                        this.take("(");
                        this.query(scope);
                        this.take(";");
                        this.query(inner);
                        if (t.v === "foreach" && this.is(";")) {
                            this.p++;
                            this.query(inner);
                        }
                        this.take(")");
                        break;
                    }
                    case "break": {
                        const l = this.peek();
                        if (l.k !== "var") {
                            this.unexpected();
                        }
                        this.p++;
                        if (!scope.labels.has(l.v)) {
                            throw new JqError(`break to an undefined label ${l.v} (at ${l.at})`);
                        }
                        break;
                    }
                    default:
                        this.p--;
                        this.unexpected();
                }
                break;
            case "punct":
                switch (t.v) {
                    case ".":
                        if (this.peek().k === "string") {
                            this.string(scope, this.peek() as Tok & { k: "string" });
                            this.p++;
                        } else if (this.is("[")) {
                            this.suffix(scope);
                        }
                        break;
                    case "..":
                        break;
                    case "(":
                        this.query(scope);
                        this.take(")");
                        break;
                    case "[":
                        if (!this.is("]")) {
                            this.query(scope);
                        }
                        this.take("]");
                        break;
                    case "{":
                        this.object(scope);
                        break;
                    case "+":
                    case "-":
                        this.postfixTerm(scope);
                        return;
                    default:
                        this.p--;
                        this.unexpected();
                }
                break;
            default:
                this.p--;
                this.unexpected();
        }
        this.suffixes(scope);
    }

    private postfixTerm(scope: Scope): void {
        this.term(scope);
    }

    private suffixes(scope: Scope): void {
        for (;;) {
            const t = this.peek();
            if (t.k === "index") {
                this.p++;
            } else if (this.is("[")) {
                this.suffix(scope);
            } else if (this.is("?")) {
                this.p++;
            } else if (this.is(".")) {
                this.p++;
                const n = this.peek();
                if (n.k === "string") {
                    this.p++;
                    this.string(scope, n);
                } else if (this.is("[")) {
                    this.suffix(scope);
                } else {
                    this.unexpected();
                }
            } else {
                return;
            }
        }
    }

    /** `[]`, `[q]`, `[q:]`, `[:q]`, `[q:q]`. */
    private suffix(scope: Scope): void {
        this.take("[");
        if (this.is("]")) {
            this.p++;
            return;
        }
        if (this.is(":")) {
            this.p++;
            this.query(scope);
            this.take("]");
            return;
        }
        this.query(scope);
        if (this.is(":")) {
            this.p++;
            if (!this.is("]")) {
                this.query(scope);
            }
        }
        this.take("]");
    }

    private object(scope: Scope): void {
        if (this.is("}")) {
            this.p++;
            return;
        }
        for (;;) {
            const t = this.peek();
            let value = true;
            if (t.k === "ident" || t.k === "kw") {
                this.p++;
            } else if (t.k === "var") {
                this.p++;
                if (t.v !== "$ENV" && !scope.vars.has(t.v)) {
                    throw new JqError(`variable not defined: ${t.v} (at ${t.at})`);
                }
            } else if (t.k === "string") {
                this.p++;
                this.string(scope, t);
            } else if (this.is("(")) {
                this.p++;
                this.query(scope);
                this.take(")");
                this.take(":");
                this.objectValue(scope);
                value = false;
            } else {
                this.unexpected();
            }
            if (value && this.is(":")) {
                this.p++;
                this.objectValue(scope);
            }
            if (this.is(",")) {
                this.p++;
                if (this.is("}")) {
                    this.p++;
                    return;
                }
                continue;
            }
            this.take("}");
            return;
        }
    }

    /** objectval: exprs joined by `|`. */
    private objectValue(scope: Scope): void {
        this.expr(scope, 0);
        while (this.is("|")) {
            this.p++;
            this.expr(scope, 0);
        }
    }

    /** bindpatterns: pattern (`?//` pattern)*; every variable of every pattern is bound in the body. */
    private patterns(outer: Scope, inner: Scope): void {
        this.pattern(outer, inner);
        while (this.is("?//")) {
            this.p++;
            this.pattern(outer, inner);
        }
    }

    private pattern(outer: Scope, inner: Scope): void {
        const t = this.peek();
        if (t.k === "var") {
            this.p++;
            inner.vars.add(t.v);
            return;
        }
        if (this.is("[")) {
            this.p++;
            for (;;) {
                this.pattern(outer, inner);
                if (this.is(",")) {
                    this.p++;
                    continue;
                }
                this.take("]");
                return;
            }
        }
        if (this.is("{")) {
            this.p++;
            for (;;) {
                const k = this.peek();
                if (k.k === "var") {
                    this.p++;
                    inner.vars.add(k.v);
                    if (this.is(":")) {
                        this.p++;
                        this.pattern(outer, inner);
                    }
                } else if (k.k === "ident" || k.k === "kw") {
                    this.p++;
                    this.take(":");
                    this.pattern(outer, inner);
                } else if (k.k === "string") {
                    this.p++;
                    this.string(outer, k);
                    this.take(":");
                    this.pattern(outer, inner);
                } else if (this.is("(")) {
                    this.p++;
                    this.query(outer);
                    this.take(")");
                    this.take(":");
                    this.pattern(outer, inner);
                } else {
                    this.unexpected();
                }
                if (this.is(",")) {
                    this.p++;
                    continue;
                }
                this.take("}");
                return;
            }
        }
        this.unexpected();
    }
}

/**
 * Why ArgoCD cannot compile `del(<expression>)`, or undefined when it can. The reason names what
 * gojq trips on, in the product's words.
 */
export function jqPathProblem(expression: string): string | undefined {
    const whole = `del(${expression})`;
    try {
        const { toks } = lex(whole, 0, false);
        new Parser(toks).whole({ funcs: new Map(), vars: new Set(), labels: new Set() });
        return undefined;
    } catch (e) {
        if (e instanceof JqError) {
            // Positions are in `del(...)`; give them in the expression the user wrote.
            return e.message.replace(/at (\d+)/, (_, n: string) => `at character ${Math.max(0, Number(n) - 4) + 1}`);
        }
        throw e;
    }
}

/**
 * Why ArgoCD's normalizer would not remove the field a JSON pointer names, or undefined. ArgoCD
 * turns each pointer into a JSON patch `remove` (argo-cd v3.5.1 diff_normalizer.go, with
 * evanphx/json-patch v5.9.11+incompatible) and drops the patch's error without a word
 * (Normalize: `continue`; shouldLogError hides "doc is missing path"), so a pointer it cannot
 * follow ignores nothing. json-patch's findObject splits at `/` and decodes only `~0` and `~1`
 * (decodePatchKey), so a `~` followed by anything else names no key (RFC 6901 section 3 forbids
 * it); and `remove` at `-` (the end of a list, meaningful to `add` alone) is an invalid index.
 */
export function jsonPointerProblem(pointer: string): string | undefined {
    if (!pointer.startsWith("/")) {
        return "must start with / (json-patch reads the text before the first / as nothing and the rest from the document's root)";
    }
    if (/~(?![01])/.test(pointer)) {
        return "must escape ~ as ~0 and / as ~1 (RFC 6901): ArgoCD's json-patch decodes only ~0 and ~1, so this pointer names no field and the rule ignores nothing";
    }
    if (pointer.split("/").slice(-1)[0] === "-") {
        return "must not end in /- (the position after a list's last item, which a remove cannot take): the rule would ignore nothing";
    }
    return undefined;
}
