/** Go's readings of scalar text (strconv, time) as yaml.v3 v3.0.1 resolve.go applies them: see stackYaml.ts. */

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const DIGITS: Record<number, RegExp> = { 2: /^[01]*$/, 8: /^[0-7]*$/, 10: /^[0-9]*$/, 16: /^[0-9a-fA-F]*$/ };

/** Go's strconv.ParseUint(s, base, 64), base 0 (prefixes 0b, 0o, 0x and a bare leading 0 for octal) or 2/8/10/16. */
export function parseUint(s: string, base: number): bigint | undefined {
    if (s === "") {
        return undefined;
    }
    if (base === 0) {
        base = 10;
        if (s[0] === "0") {
            const p = s.length >= 3 ? s[1].toLowerCase() : "";
            [base, s] = p === "b" ? [2, s.slice(2)] : p === "o" ? [8, s.slice(2)] : p === "x" ? [16, s.slice(2)] : [8, s.slice(1)];
        }
    }
    if (!DIGITS[base].test(s)) {
        return undefined;
    }
    const prefix = { 2: "0b", 8: "0o", 10: "", 16: "0x" }[base as 2 | 8 | 10 | 16];
    const n = s === "" ? 0n : BigInt(prefix + s);
    return n <= UINT64_MAX ? n : undefined;
}

/** Go's strconv.ParseInt(s, base, 64). */
export function parseInt64(s: string, base: number): bigint | undefined {
    if (s === "") {
        return undefined;
    }
    const neg = s[0] === "-";
    const u = parseUint(s[0] === "+" || s[0] === "-" ? s.slice(1) : s, base);
    if (u === undefined) {
        return undefined;
    }
    const n = neg ? -u : u;
    return n >= INT64_MIN && n <= INT64_MAX ? n : undefined;
}

/**
 * Go's strconv.ParseFloat(s, 64) for the decimal shapes yaml.v3 hands it; undefined where Go errs
 * (syntax, overflow). Go takes `_` between digits (strconv/atof.go readFloat, underscoreOK).
 */
export function parseFloat64(s: string): number | undefined {
    if (s.includes("_")) {
        if (!/^[-+]?[0-9.]*[0-9](_[0-9]+)*([0-9._]*[0-9])?([eE][-+]?[0-9_]*[0-9])?$/.test(s) || /(^|[^0-9])_|_($|[^0-9])/.test(s)) {
            return undefined;
        }
        s = s.replace(/_/g, "");
    }
    if (!/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(s)) {
        return undefined;
    }
    const f = Number(s);
    return Number.isFinite(f) ? f : undefined;
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");
const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * A plain timestamp as the Pulumi CLI hands it over: yaml.v3 decodes it into a time.Time
 * (resolve.go parseTimestamp: `2006-1-2T15:4:5.999999999Z07:00`, the same with `t`,
 * `2006-1-2 15:4:5.999999999`, `2006-1-2`), and Pulumi stores `time.Time.String()`
 * (resource/config/object.go unmarshalObject): `2001-12-14 00:00:00 +0000 UTC`. An offset other
 * than Z is printed as Go prints a zone without a name (`-0500 -0500`); `+00:00` is printed as UTC,
 * as Go does where the machine's zone is UTC.
 */
export function goTimestamp(text: string): string | undefined {
    const m =
        /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:([Tt])([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})| ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(\.[0-9]+)?)?$/.exec(
            text,
        );
    if (!m) {
        return undefined;
    }
    const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const [h, min, sec] = [m[5] ?? m[10] ?? "0", m[6] ?? m[11] ?? "0", m[7] ?? m[12] ?? "0"].map(Number);
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    if (month < 1 || month > 12 || day < 1 || day > (month === 2 && !leap ? 28 : DAYS[month - 1]) || h > 23 || min > 59 || sec > 59) {
        return undefined;
    }
    const frac = (m[8] ?? m[13] ?? "").slice(1, 10).replace(/0+$/, "");
    const zone = m[9] ?? "Z";
    const offset = zone === "Z" ? "+0000" : zone.replace(":", "");
    const name = offset === "+0000" ? "UTC" : offset;
    return `${pad(year, 4)}-${pad(month)}-${pad(day)} ${pad(h)}:${pad(min)}:${pad(sec)}${frac ? `.${frac}` : ""} ${offset} ${name}`;
}
