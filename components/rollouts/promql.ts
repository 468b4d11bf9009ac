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

/**
 * What a query that parses evaluates to when the Prometheus provider cannot judge it: its outermost
 * expression (inside parentheses, `offset` and `@`) is a string, or a [range] selector or subquery,
 * a range vector (promql/parser/ast.go `Type()`). Anything else Prometheus' own type checker decides.
 */
export function promqlUnjudgedType(query: string): "string" | "range vector" | undefined {
    let n = parser.parse(query).topNode.firstChild;
    while (n && ["ParenExpr", "OffsetExpr", "StepInvariantExpr"].includes(n.name)) {
        n = n.firstChild;
    }
    return n?.name === "StringLiteral" ? "string" : n?.name === "MatrixSelector" || n?.name === "SubqueryExpr" ? "range vector" : undefined;
}
