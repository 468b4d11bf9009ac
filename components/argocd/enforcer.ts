/**
 * ArgoCD's RBAC decision, restated so verify can ask what argocd-rbac-cm lets a group do, the way
 * the ArgoCD API server decides it (argo-cd v3.5.1). Kept honest by the end-to-end scenario
 * `argocd-rbac-enforcer-agrees`, which asks ArgoCD's own enforcer (util/rbac built from the
 * argo-cd module) the same questions.
 *
 * What decides, by file at argo-cd v3.5.1:
 * - util/rbac/rbac.go `PolicyCSV`: `policy.csv` first, then every other `policy.<x>.csv` key in
 *   sorted key order, each after a newline. `syncUpdate`: `policy.default` is the default role,
 *   `policy.matchMode: regex` switches glob matching to regular expressions.
 * - util/rbac/rbac.go `argocdAdapter.LoadPolicy`/`loadPolicyLine`: the built-in policy
 *   (assets/builtin-policy.csv), then the user policy, then a project's runtime policy; each line
 *   trimmed, blank and `#` lines skipped, the rest read by Go's encoding/csv with
 *   TrimLeadingSpace (no LazyQuotes): a `g` line needs 3 fields, a `p` line 6. One bad line fails
 *   the whole policy, and then `getCasbinEnforcer` panics on every request: everything is denied.
 *   A project's bad runtime policy falls back to the policy without it (`tryGetCasbinEnforcer`).
 * - assets/model.conf: `g(r.sub, p.sub) && globOrRegexMatch(r.res, p.res) && ...(act) && ...(obj)`;
 *   effect `some(allow) && !some(deny)`: for one subject a deny wins over any allow.
 * - util/rbac/rbac.go `enforce`: the default role is tried first; if it allows, that is the answer.
 * - server/rbacpolicy/rbacpolicy.go `EnforceClaims`: the user's subject, then each of its groups,
 *   but only a group that is the subject of some `g` line; the first subject allowed wins. So a
 *   deny on one group does not stop an allow through another group of the same user. The
 *   request's project (`<project>/<app>` objects of applications, applicationsets, repositories,
 *   clusters, logs, exec) adds the AppProject's roles (pkg/apis/application/v1alpha1
 *   app_project_types.go `ProjectPoliciesString`).
 * - util/glob/glob.go `Match`: gobwas/glob without separators (`*` crosses `/`), a pattern that
 *   does not compile matches nothing; regex mode is casbin util `RegexMatch`, unanchored, and a
 *   pattern that does not compile fails the request (so in regex mode the built-in roles, whose
 *   objects are `*` globs, grant nothing). Regular expressions are Go's RE2; `goRegExp` spells the common
 *   differences in JavaScript.
 * - util/rbac/rbac.go `Enforce`: the default role is tried on the policy without the request's
 *   project first, then the claims.
 * - casbin default role manager: role links followed at most 10 levels deep.
 */

/** argocd-rbac-cm's data. */
export type ArgoRbacData = Readonly<Record<string, string>>;

/** An AppProject's roles, as `spec.roles` holds them. */
export interface ArgoProjectRoles {
    name: string;
    roles: { name: string; policies?: string[]; groups?: string[] }[];
}

/** Who asks: the token's `sub` and its `groups` claim. */
export interface ArgoRbacSubject {
    user?: string;
    groups: readonly string[];
}

/** What is asked: `p` line fields 2 to 4. */
export interface ArgoRbacQuery {
    resource: string;
    action: string;
    object: string;
}

export interface ArgoRbac {
    /** Set when the policy does not load: ArgoCD then denies every request. */
    error?: string;
    enforce(subject: ArgoRbacSubject, q: ArgoRbacQuery): boolean;
}

/** argo-cd assets/builtin-policy.csv at v3.5.1, the lines that grant (comments dropped). */
export const BUILTIN_POLICY_CSV = [
    "p, role:readonly, applications, get, */*, allow",
    "p, role:readonly, applicationsets, get, */*, allow",
    "p, role:readonly, certificates, get, *, allow",
    "p, role:readonly, clusters, get, *, allow",
    "p, role:readonly, repositories, get, *, allow",
    "p, role:readonly, write-repositories, get, *, allow",
    "p, role:readonly, projects, get, *, allow",
    "p, role:readonly, accounts, get, *, allow",
    "p, role:readonly, gpgkeys, get, *, allow",
    "p, role:readonly, logs, get, */*, allow",
    ...["create", "update", "update/*", "delete", "delete/*", "sync", "override", "action/*"].map((a) => `p, role:admin, applications, ${a}, */*, allow`),
    ...["get", "create", "update", "delete"].map((a) => `p, role:admin, applicationsets, ${a}, */*, allow`),
    ...["certificates", "clusters", "repositories", "write-repositories", "projects"].flatMap((res) =>
        ["create", "update", "delete"].map((a) => `p, role:admin, ${res}, ${a}, *, allow`),
    ),
    "p, role:admin, accounts, update, *, allow",
    "p, role:admin, gpgkeys, create, *, allow",
    "p, role:admin, gpgkeys, delete, *, allow",
    "p, role:admin, exec, create, */*, allow",
    "g, role:admin, role:readonly",
    "g, admin, role:admin",
].join("\n");

/** util/rbac/rbac.go `PolicyCSV`. */
export function policyCsv(data: ArgoRbacData): string {
    let out = data["policy.csv"] ?? "";
    for (const key of Object.keys(data).sort(goStringLess)) {
        if (key.startsWith("policy.") && key.endsWith(".csv") && key !== "policy.csv") {
            out += `\n${data[key]}`;
        }
    }
    return out;
}

/** Go's sort.Strings compares bytes (UTF-8), not UTF-16 code units. */
function goStringLess(a: string, b: string): number {
    const x = Buffer.from(a, "utf8");
    const y = Buffer.from(b, "utf8");
    return Buffer.compare(x, y);
}

/** ArgoCD's projects whose `<project>/...` object names the request's project (rbacpolicy.go `getProjectFromRequest`). */
const PROJECT_SCOPED = new Set(["applicationsets", "applications", "repositories", "clusters", "logs", "exec"]);
/** casbin's default role manager: `maxHierarchyLevel` 10. */
const MAX_HIERARCHY = 10;

interface Rules {
    p: string[][];
    g: string[][];
}

export class ArgoCsvError extends Error {}

/**
 * One line as encoding/csv reads it with TrimLeadingSpace and without LazyQuotes (Go
 * src/encoding/csv/reader.go `readRecord`): a field may be quoted (`""` is a quote), a quote in an
 * unquoted field is an error ("bare \" in non-quoted-field"), and so is anything but a comma or the
 * end after a closing quote, or a quote left open.
 */
export function readCsvLine(line: string): string[] {
    const fields: string[] = [];
    let i = 0;
    for (;;) {
        while (i < line.length && /\s/u.test(line[i])) {
            i++;
        }
        if (line[i] !== '"') {
            const comma = line.indexOf(",", i);
            const field = comma < 0 ? line.slice(i) : line.slice(i, comma);
            if (field.includes('"')) {
                throw new ArgoCsvError(`bare " in non-quoted-field`);
            }
            fields.push(field);
            if (comma < 0) {
                return fields;
            }
            i = comma + 1;
            continue;
        }
        i++;
        let field = "";
        for (;;) {
            const q = line.indexOf('"', i);
            if (q < 0) {
                throw new ArgoCsvError(`extraneous or missing " in quoted-field`);
            }
            field += line.slice(i, q);
            i = q + 1;
            if (line[i] === '"') {
                field += '"';
                i++;
            } else if (line[i] === ",") {
                fields.push(field);
                i++;
                break;
            } else if (i === line.length) {
                fields.push(field);
                return fields;
            } else {
                throw new ArgoCsvError(`extraneous or missing " in quoted-field`);
            }
        }
    }
}

/** util/rbac/rbac.go `loadPolicyLine` over every line of `policy`. */
function loadLines(policy: string, into: Rules): void {
    for (const raw of policy.split("\n")) {
        const line = raw.trim();
        if (line === "" || line.startsWith("#")) {
            continue;
        }
        let tokens: string[];
        try {
            tokens = readCsvLine(line);
        } catch (e) {
            throw new ArgoCsvError(`error parsing policy line ${JSON.stringify(line)}: ${(e as Error).message}`);
        }
        const key = tokens[0];
        if (key === "" || (key === "g" && tokens.length !== 3) || (key === "p" && tokens.length !== 6)) {
            throw new ArgoCsvError(`invalid RBAC policy: ${line}`);
        }
        if (key === "p") {
            into.p.push(tokens.slice(1));
        } else if (key === "g") {
            into.g.push(tokens.slice(1));
        } else if (!["r", "e", "m"].includes(key)) {
            // Only the model's own section keys are accepted; r, e and m lines load and decide nothing.
            throw new ArgoCsvError(`invalid RBAC policy: ${line}`);
        }
    }
}

/** AppProject's `ProjectPoliciesString`. */
export function projectPoliciesString(project: ArgoProjectRoles): string {
    const lines: string[] = [];
    for (const role of project.roles) {
        lines.push(`p, proj:${project.name}:${role.name}, projects, get, ${project.name}, allow`);
        lines.push(...(role.policies ?? []));
        for (const group of role.groups ?? []) {
            lines.push(`g, ${group}, proj:${project.name}:${role.name}`);
        }
    }
    return lines.join("\n");
}

/**
 * gobwas/glob's syntax as a regular expression: `*` any run, `?` one character, `[abc]`, `[a-z]`,
 * `[!abc]`, `{a,b}` alternatives, `\` escapes. Undefined when the pattern does not compile.
 */
export function globRegExp(pattern: string): RegExp | undefined {
    const chars = [...pattern];
    let i = 0;
    const esc = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    const escInSet = (c: string) => c.replace(/[\]\\^-]/g, "\\$&");
    const parse = (inAlt: boolean): string | undefined => {
        let out = "";
        while (i < chars.length) {
            const c = chars[i];
            if (inAlt && (c === "," || c === "}")) {
                return out;
            }
            i++;
            if (c === "\\") {
                if (i >= chars.length) {
                    return undefined;
                }
                out += esc(chars[i++]);
            } else if (c === "*") {
                out += "[\\s\\S]*";
            } else if (c === "?") {
                out += "[\\s\\S]";
            } else if (c === "[") {
                let negate = false;
                if (chars[i] === "!") {
                    negate = true;
                    i++;
                }
                let set = "";
                let closed = false;
                while (i < chars.length) {
                    const d = chars[i++];
                    if (d === "]") {
                        closed = true;
                        break;
                    }
                    if (chars[i] === "-" && i + 1 < chars.length && chars[i + 1] !== "]") {
                        const hi = chars[i + 1];
                        if (hi < d) {
                            return undefined;
                        }
                        set += `${escInSet(d)}-${escInSet(hi)}`;
                        i += 2;
                    } else {
                        set += escInSet(d);
                    }
                }
                if (!closed || set === "") {
                    return undefined;
                }
                out += negate ? `[^${set}]` : `[${set}]`;
            } else if (c === "{") {
                const alts: string[] = [];
                for (;;) {
                    const alt = parse(true);
                    if (alt === undefined || i >= chars.length) {
                        return undefined;
                    }
                    alts.push(alt);
                    if (chars[i++] === "}") {
                        break;
                    }
                }
                out += `(?:${alts.join("|")})`;
            } else {
                out += esc(c);
            }
        }
        return inAlt ? undefined : out;
    };
    const body = parse(false);
    return body === undefined ? undefined : new RegExp(`^${body}$`, "u");
}

/** A pattern's verdict; `error` fails the whole request. */
type Matcher = (value: string, pattern: string) => boolean | "error";

function globMatcher(): Matcher {
    const cache = new Map<string, RegExp | undefined>();
    return (value, pattern) => {
        if (!cache.has(pattern)) {
            cache.set(pattern, globRegExp(pattern));
        }
        return cache.get(pattern)?.test(value) ?? false;
    };
}

/**
 * Go's RE2 syntax as a JavaScript expression, for what the two spell differently: a leading flag
 * group `(?i)`, `(?s)`, `(?m)`, `(?P<name>`, `\pL`/`\PL`, `\A`, `\z`. Undefined where Go
 * accepts what JavaScript cannot express here (other flag groups); a pattern either rejects is
 * an error.
 */
export function goRegExp(pattern: string): RegExp | undefined {
    let flags = "u";
    let body = pattern;
    const lead = /^\(\?([imsU]+)\)/.exec(body);
    if (lead) {
        if (lead[1].includes("U")) {
            return undefined;
        }
        flags += [...new Set(lead[1])].join("");
        body = body.slice(lead[0].length);
    }
    body = body
        .replace(/\(\?P</g, "(?<")
        .replace(/\\([pP])([A-Za-z])/g, "\\$1{$2}")
        .replace(/\\A/g, "^")
        .replace(/\\z/g, "$(?![\\s\\S])");
    try {
        return new RegExp(body, flags);
    } catch {
        return undefined;
    }
}

/**
 * casbin util `RegexMatch` (casbin v2.135.0 util/builtin_operators.go): unanchored, and an
 * expression Go cannot compile panics; casbin recovers the panic as the request's error, and
 * util/rbac `enforce` denies (`ok && err == nil`): one bad line reached fails the request.
 */
function regexMatcher(): Matcher {
    const cache = new Map<string, RegExp | undefined>();
    return (value, pattern) => {
        if (!cache.has(pattern)) {
            cache.set(pattern, goRegExp(pattern));
        }
        const re = cache.get(pattern);
        return re === undefined ? "error" : re.test(value);
    };
}

class Casbin {
    private readonly links = new Map<string, string[]>();

    constructor(
        private readonly rules: Rules,
        private readonly match: Matcher,
    ) {
        for (const [from, to] of rules.g) {
            this.links.set(from, [...(this.links.get(from) ?? []), to]);
        }
    }

    /** The grouping policy's subjects (`GetGroupingPolicy()[i][0]`). */
    isGroupingSubject(name: string): boolean {
        return this.links.has(name);
    }

    /** casbin `hasLinkHelper`: breadth first, at most MAX_HIERARCHY links. */
    private roles(sub: string): Set<string> {
        const seen = new Set([sub]);
        let frontier = [sub];
        for (let level = 0; level < MAX_HIERARCHY && frontier.length > 0; level++) {
            const next: string[] = [];
            for (const s of frontier) {
                for (const role of this.links.get(s) ?? []) {
                    if (!seen.has(role)) {
                        seen.add(role);
                        next.push(role);
                    }
                }
            }
            frontier = next;
        }
        return seen;
    }

    /**
     * The matcher over every `p` line in order, its `&&` short-circuiting left to right (govaluate);
     * casbin's effector stops at the first deny that matches, and a pattern error fails the request.
     */
    enforce(sub: string, q: ArgoRbacQuery): boolean {
        const roles = this.roles(sub);
        let allow = false;
        for (const [pSub, res, act, obj, eft] of this.rules.p) {
            if (!roles.has(pSub)) {
                continue;
            }
            let matched = true;
            for (const [value, pattern] of [
                [q.resource, res],
                [q.action, act],
                [q.object, obj],
            ]) {
                const m = this.match(value, pattern);
                if (m === "error") {
                    return false;
                }
                if (!m) {
                    matched = false;
                    break;
                }
            }
            if (matched) {
                if (eft === "deny") {
                    return false;
                }
                allow ||= eft === "allow";
            }
        }
        return allow;
    }
}

/** ArgoCD's enforcer over argocd-rbac-cm's data and the cluster's AppProjects. */
export function loadArgoRbac(data: ArgoRbacData, projects: readonly ArgoProjectRoles[] = []): ArgoRbac {
    const match = data["policy.matchMode"] === "regex" ? regexMatcher() : globMatcher();
    const defaultRole = data["policy.default"] ?? "";
    const base: Rules = { p: [], g: [] };
    try {
        loadLines(BUILTIN_POLICY_CSV, base);
        loadLines(policyCsv(data), base);
    } catch (e) {
        const error = `error loading RBAC policy: ${(e as Error).message}`;
        return { error, enforce: () => false };
    }
    const baseEnforcer = new Casbin(base, match);
    const perProject = new Map<string, Casbin>();
    const enforcerFor = (project: ArgoProjectRoles | undefined): Casbin => {
        if (!project || project.roles.length === 0) {
            return baseEnforcer;
        }
        let e = perProject.get(project.name);
        if (!e) {
            const rules: Rules = { p: [...base.p], g: [...base.g] };
            try {
                loadLines(projectPoliciesString(project), rules);
                e = new Casbin(rules, match);
            } catch {
                e = baseEnforcer;
            }
            perProject.set(project.name, e);
        }
        return e;
    };
    const byName = new Map(projects.map((p) => [p.name, p]));
    const projectOf = (q: ArgoRbacQuery): ArgoProjectRoles | undefined => {
        if (PROJECT_SCOPED.has(q.resource)) {
            const parts = q.object.split("/");
            return parts.length >= 2 ? byName.get(parts[0]) : undefined;
        }
        return q.resource === "projects" ? byName.get(q.object) : undefined;
    };
    const withDefault = (e: Casbin, sub: string, q: ArgoRbacQuery) => (defaultRole !== "" && e.enforce(defaultRole, q)) || e.enforce(sub, q);
    return {
        enforce(subject, q) {
            // util/rbac `Enforce` tries the default role on the policy without any project first,
            // before the claims reach EnforceClaims (project tokens included).
            if (defaultRole !== "" && baseEnforcer.enforce(defaultRole, q)) {
                return true;
            }
            const project = projectOf(q);
            const user = subject.user ?? "";
            const e = enforcerFor(project);
            if (project && /^proj:[^:]*:[^:]*$/.test(user)) {
                // A project token: only its own project's policy (rbacpolicy.go `enforceProjectToken`).
                return user.split(":")[1] === project.name && withDefault(e, user, q);
            }
            if (withDefault(e, user, q)) {
                return true;
            }
            return subject.groups.some((g) => e.isGroupingSubject(g) && withDefault(e, g, q));
        },
    };
}
