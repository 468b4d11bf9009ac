import { parser } from "@prometheus-io/lezer-promql";

/**
 * A stack file's PromQL as Prometheus' own grammar reads it (`@prometheus-io/lezer-promql`, published
 * from prometheus/prometheus web/ui/module/lezer-promql), so a bad query is refused at plan time
 * rather than by every measurement at run time.
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

/** A template's query with every `{{args.<name>}}` resolved, as Argo Rollouts sends it (v1.9.0 utils/analysis/helpers.go ResolveArgs). */
export const withArgsResolved = (query: string, value = "arg"): string => query.replace(/\{\{\s*args\.[A-Za-z0-9_-]+\s*\}\}/g, value);

type SyntaxNode = ReturnType<typeof parser.parse>["topNode"];
export type PromqlType = "scalar" | "instant vector" | "range vector" | "string";

/**
 * The type of a query that parses, by the rules of Prometheus' type checker (promql/parser/ast.go
 * `Type()`): a matrix selector or subquery is a range vector; parentheses, `offset`, `@` and a sign
 * keep their operand's; a binary operation is a scalar only between scalars; a call is what its
 * function returns (a scalar for scalar(), time() and pi(), promql/parser/functions.go).
 */
export function promqlResultType(query: string): PromqlType {
    const typeOf = (n: SyntaxNode | null): PromqlType => {
        switch (n?.name) {
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
            case "BinaryExpr":
                return typeOf(n.firstChild) === "scalar" && typeOf(n.lastChild) === "scalar" ? "scalar" : "instant vector";
            case "FunctionCall":
                return ["Scalar", "Time", "Pi"].includes(n.getChild("FunctionIdentifier")?.firstChild?.name ?? "") ? "scalar" : "instant vector";
            default:
                return "instant vector";
        }
    };
    return typeOf(parser.parse(query).topNode.firstChild);
}
