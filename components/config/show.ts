/**
 * How a message renders a value it was given: never a URL's user-info or query (tokens live there),
 * long values cut. Every message path (config problems, plan and verify output) renders through here.
 */

/** What a message shows instead of a value it must not echo. */
export const NOT_SHOWN = "[not shown]";

/** Every URL in a text without its user-info and query (tokens live there), the query shown as `?[not shown]`; applied twice, the same. */
export function withoutUrlSecrets(text: string): string {
    return text.replace(
        /\b([a-z][a-z0-9+.-]*:\/\/)(?:[^/?#@\s"]*@)?([^?#\s"]*)(\?(?!\[not shown\])[^#\s"]*)?(#[^\s"]*)?/gi,
        (_m, scheme: string, rest: string, query?: string) => `${scheme}${rest}${query ? `?${NOT_SHOWN}` : ""}`,
    );
}

/**
 * Characters a terminal does not show (controls, zero-width and direction marks, separators, the BOM,
 * the noncharacters U+FFFE and U+FFFF): escaped in what is printed, the reader sees why a value that
 * looks right is refused; refused in a stack file (stackYaml.ts), where they make a name no token carries.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what this finds
export const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u206a-\u206f\ufeff\ufffe\uffff]/;

/** `text` with every invisible character written as `\\uXXXX`. */
export function escapeInvisible(text: string): string {
    return text.replace(new RegExp(INVISIBLE, "g"), (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** What every message, log line and report goes through before it is printed: no URL secrets, nothing invisible. */
export function printable(text: string): string {
    return escapeInvisible(withoutUrlSecrets(text));
}

/** Renders a given value for an error message; long values are cut so messages stay readable. */
export function show(value: unknown): string {
    if (value === undefined) return "(not set)";
    const text = printable(JSON.stringify(value) ?? String(value));
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** What the offline plan reads in place of a `secure:` value: it has no secrets provider (tools/offline.ts). */
export const OFFLINE_SECRET = "[secret]";
