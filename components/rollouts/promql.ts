import { parser } from "@prometheus-io/lezer-promql";

type SyntaxNode = ReturnType<typeof parser.parse>["topNode"];

/**
 * PromQL as Prometheus' own grammar reads it (`@prometheus-io/lezer-promql`, the grammar the
 * Prometheus project publishes from prometheus/prometheus `web/ui/module/lezer-promql`), so a query
 * from a stack file is refused at plan time rather than by every measurement at run time.
 */

/** Every error node of Prometheus' grammar in `query`, with its position (empty: it parses). */
export function promqlSyntaxErrors(query: string): string[] {
    const errors: string[] = [];
    parser.parse(query).iterate({
        enter: (n) => {
            if (n.type.isError) {
                errors.push(`syntax error at ${n.from}: ...${query.slice(Math.max(0, n.from - 20), n.from)}<here>${query.slice(n.from, n.from + 20)}...`);
            }
        },
    });
    return errors;
}

/**
 * A template's query with every `{{args.<name>}}` replaced by a value, as Argo Rollouts resolves
 * them before it sends the query (argo-rollouts v1.9.0 `utils/analysis/helpers.go` ResolveArgs and
 * `metricproviders/prometheus/prometheus.go` Run, which queries the resolved text).
 */
export function withArgsResolved(query: string, value = "arg"): string {
    return query.replace(/\{\{\s*args\.[A-Za-z0-9_-]+\s*\}\}/g, value);
}

/** What a PromQL expression evaluates to, in Prometheus' own words (promql/parser/value.go ValueType). */
export type PromqlType = "scalar" | "instant vector" | "range vector" | "string";

/** Functions whose result is a scalar (prometheus/prometheus promql/parser/functions.go: ReturnType ValueTypeScalar). */
const SCALAR_FUNCTIONS = new Set(["Scalar", "Time", "Pi"]);

/**
 * The type of a query that parses (promqlSyntaxErrors is empty), as Prometheus' type checker gives
 * it (prometheus/prometheus promql/parser/ast.go, `Type()` of each node): a matrix selector or a
 * subquery is a range vector; parentheses, `offset`, `@` and a unary sign keep their operand's
 * type; an aggregation is an instant vector; a binary operation is a scalar only between scalars;
 * a function call is what the function returns (a scalar for scalar(), time() and pi() alone).
 */
export function promqlResultType(query: string): PromqlType {
    const typeOf = (n: SyntaxNode | null): PromqlType => {
        if (!n) {
            return "instant vector";
        }
        switch (n.name) {
            case "StringLiteral":
                return "string";
            case "NumberDurationLiteral":
            case "NumberLiteral":
                return "scalar";
            case "MatrixSelector":
            case "SubqueryExpr":
                return "range vector";
            case "ParenExpr":
            case "OffsetExpr":
            case "StepInvariantExpr":
                return typeOf(n.firstChild);
            case "UnaryExpr":
                return typeOf(n.lastChild);
            case "BinaryExpr": {
                const sides = [typeOf(n.firstChild), typeOf(n.lastChild)];
                return sides.every((t) => t === "scalar") ? "scalar" : "instant vector";
            }
            case "FunctionCall": {
                const name = n.getChild("FunctionIdentifier")?.firstChild?.name ?? "";
                return SCALAR_FUNCTIONS.has(name) ? "scalar" : "instant vector";
            }
            default:
                return "instant vector";
        }
    };
    return typeOf(parser.parse(query).topNode.firstChild);
}
