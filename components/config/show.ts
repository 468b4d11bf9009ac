/**
 * How a message renders a value it was given: never a URL's user-info or query (tokens live there),
 * long values cut. Every message path (config problems, plan and verify output) renders through here.
 */

/** What a message shows instead of a value it must not echo. */
export const NOT_SHOWN = "[not shown]";

/** Every URL in a text without its user-info and query (tokens live there), the query shown as `?[not shown]`. */
export function withoutUrlSecrets(text: string): string {
    return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)(?:[^\/?#@\s"]*@)?([^?#\s"]*)(\?[^#\s"]*)?(#[^\s"]*)?/gi, (_m, scheme: string, rest: string, query?: string) => `${scheme}${rest}${query ? `?${NOT_SHOWN}` : ""}`);
}

/** Renders a given value for an error message; long values are cut so messages stay readable. */
export function show(value: unknown): string {
    if (value === undefined) {
        return "(not set)";
    }
    const text = withoutUrlSecrets(JSON.stringify(value) ?? String(value));
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
