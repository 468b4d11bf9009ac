import { parser } from "@prometheus-io/lezer-promql";

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
