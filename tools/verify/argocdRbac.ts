/**
 * ArgoCD's RBAC decision (ADR-056 D3): argo-cd v3.5.1's casbin model run by node-casbin, with what util/rbac/rbac.go and
 * server/rbacpolicy/rbacpolicy.go add; the end-to-end scenario argocd-rbac-enforcer-agrees asks ArgoCD the same.
 */
import { Enforcer, newEnforcer, newModelFromString } from "casbin";

/** argo-cd v3.5.1 assets/model.conf. */
const ARGOCD_MODEL = `
[request_definition]
r = sub, res, act, obj
[policy_definition]
p = sub, res, act, obj, eft
[role_definition]
g = _, _
[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))
[matchers]
m = g(r.sub, p.sub) && globOrRegexMatch(r.res, p.res) && globOrRegexMatch(r.act, p.act) && globOrRegexMatch(r.obj, p.obj)
`;

/** argo-cd v3.5.1 assets/builtin-policy.csv, the lines that grant (comments dropped). */
const BUILTIN_POLICY_CSV = [
    ...["applications", "applicationsets", "logs"].map((res) => `p, role:readonly, ${res}, get, */*, allow`),
    ...["certificates", "clusters", "repositories", "write-repositories", "projects", "accounts", "gpgkeys"].map(
        (r) => `p, role:readonly, ${r}, get, *, allow`,
    ),
    ...["create", "update", "update/*", "delete", "delete/*", "sync", "override", "action/*"].map((a) => `p, role:admin, applications, ${a}, */*, allow`),
    ...["get", "create", "update", "delete"].map((a) => `p, role:admin, applicationsets, ${a}, */*, allow`),
    ...["certificates", "clusters", "repositories", "write-repositories", "projects"].flatMap((r) =>
        ["create", "update", "delete"].map((a) => `p, role:admin, ${r}, ${a}, *, allow`),
    ),
    ...["accounts, update", "gpgkeys, create", "gpgkeys, delete"].map((ra) => `p, role:admin, ${ra}, *, allow`),
    "p, role:admin, exec, create, */*, allow",
    "g, role:admin, role:readonly",
    "g, admin, role:admin",
].join("\n");

type ArgoRbacData = Readonly<Record<string, string>>;
export type ArgoProjectRoles = { name: string; roles: { name: string; policies?: string[]; groups?: string[] }[] };
/** Who asks: the token's `sub` and its groups. */
export type ArgoRbacSubject = { user?: string; groups: readonly string[] };
/** What is asked: `p` line fields 2 to 4. */
export type ArgoRbacQuery = { resource: string; action: string; object: string };
export interface ArgoRbac {
    /** Set when the policy does not load: ArgoCD then denies every request. */
    error?: string;
    enforce(subject: ArgoRbacSubject, q: ArgoRbacQuery): boolean;
}

/** util/rbac/rbac.go `PolicyCSV` (Go's sort.Strings compares bytes). */
function policyCsv(data: ArgoRbacData): string {
    const keys = Object.keys(data).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const overlays = keys.filter((k) => k.startsWith("policy.") && k.endsWith(".csv") && k !== "policy.csv");
    return [data["policy.csv"] ?? "", ...overlays.map((k) => data[k])].join("\n");
}

/** One field as encoding/csv reads it with TrimLeadingSpace, no LazyQuotes: quoted (`""` a quote) or without any quote. */
const CSV_FIELD = /\s*(?:"((?:[^"]|"")*)"|([^,"]*))(,|$)/y;

/** A line as encoding/csv reads it; undefined where Go reports a bare or extraneous quote. */
function readCsvLine(line: string): string[] | undefined {
    const out: string[] = [];
    CSV_FIELD.lastIndex = 0;
    for (;;) {
        const m = CSV_FIELD.exec(line);
        if (!m) return undefined;
        out.push(m[1] === undefined ? m[2] : m[1].replace(/""/g, '"'));
        if (m[3] === "") return out;
    }
}

/** AppProject `ProjectPoliciesString` (pkg/apis/application/v1alpha1/app_project_types.go). */
function projectPoliciesString(project: ArgoProjectRoles): string {
    return project.roles
        .flatMap((role) => {
            const sub = `proj:${project.name}:${role.name}`;
            return [`p, ${sub}, projects, get, ${project.name}, allow`, ...(role.policies ?? []), ...(role.groups ?? []).map((g) => `g, ${g}, ${sub}`)];
        })
        .join("\n");
}

/** gobwas/glob's syntax (`*`, `?`, `[a-z]`, `[!a]`, `{a,b}`, `\`) as a regular expression; undefined where gobwas would not compile it. */
export function globRegExp(pattern: string): RegExp | undefined {
    const chars = [...pattern];
    let i = 0;
    const esc = (c: string, inSet = false) => c.replace(inSet ? /[\]\\^-]/g : /[.*+?^${}()|[\]\\/]/g, "\\$&");
    const parse = (inAlt: boolean): string | undefined => {
        let out = "";
        while (i < chars.length) {
            const c = chars[i++];
            if (inAlt && (c === "," || c === "}")) {
                i--;
                return out;
            } else if (c === "\\") {
                if (i >= chars.length) return undefined;
                out += esc(chars[i++]);
            } else if (c === "*" || c === "?") {
                out += c === "*" ? "[\\s\\S]*" : "[\\s\\S]";
            } else if (c === "[") {
                const negate = chars[i] === "!" ? (i++, true) : false;
                let set = "";
                for (;;) {
                    const d = chars[i++];
                    if (d === undefined || (d === "]" && set === "")) {
                        return undefined;
                    } else if (d === "]") {
                        break;
                    } else if (chars[i] === "-" && i + 1 < chars.length && chars[i + 1] !== "]") {
                        if (chars[i + 1] < d) return undefined;
                        set += `${esc(d, true)}-${esc(chars[i + 1], true)}`;
                        i += 2;
                    } else {
                        set += esc(d, true);
                    }
                }
                out += `[${negate ? "^" : ""}${set}]`;
            } else if (c === "{") {
                const alts: string[] = [];
                for (let sep = ","; sep === ",";) {
                    const alt = parse(true);
                    if (alt === undefined || i >= chars.length) return undefined;
                    alts.push(alt);
                    sep = chars[i++];
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

/** util/glob `Match`: a pattern that does not compile matches nothing. */
export const globMatch = (pattern: string, value: string): boolean => globRegExp(pattern)?.test(value) ?? false;

/** Go's RE2 as a JavaScript expression where the two spell it differently (`(?i)`, `(?P<name>`, `\pL`, `\A`, `\z`). */
function goRegExp(pattern: string): RegExp | undefined {
    const lead = /^\(\?([ims]+)\)/.exec(pattern);
    const body = pattern
        .slice(lead?.[0].length ?? 0)
        .replace(/\(\?P</g, "(?<")
        .replace(/\\([pP])([A-Za-z])/g, "\\$1{$2}")
        .replace(/\\A/g, "^")
        .replace(/\\z/g, "$(?![\\s\\S])");
    try {
        return new RegExp(body, `u${[...new Set(lead?.[1] ?? "")].join("")}`);
    } catch {
        return undefined;
    }
}

/** ArgoCD's `globOrRegexMatch`; in regex mode a pattern that does not compile throws, which fails the request. */
function matcher(regex: boolean): (value: string, pattern: string) => boolean {
    const cache = new Map<string, RegExp | undefined>();
    return (value, pattern) => {
        if (!cache.has(pattern)) cache.set(pattern, regex ? goRegExp(pattern) : globRegExp(pattern));
        const re = cache.get(pattern);
        if (re === undefined && regex) throw new Error(`error parsing regexp: ${pattern}`);
        return re?.test(value) ?? false;
    };
}

/** `argocdAdapter.LoadPolicy` into argo-cd's model, then node-casbin over it; throws on the first line ArgoCD refuses. */
async function casbin(
    policies: readonly string[],
    match: (value: string, pattern: string) => boolean,
): Promise<{ e: Enforcer; groupSubjects: Set<string>; answers: Map<string, boolean> }> {
    const m = newModelFromString(ARGOCD_MODEL);
    const groupSubjects = new Set<string>();
    for (const raw of policies.flatMap((p) => p.split("\n"))) {
        const line = raw.trim();
        if (line === "" || line.startsWith("#")) continue;
        const tokens = readCsvLine(line);
        if (tokens === undefined) throw new Error(`error parsing policy line ${JSON.stringify(line)}`);
        const [key, ...rule] = tokens;
        const assertion = m.model.get(key.slice(0, 1))?.get(key);
        if (key === "" || (key === "g" && rule.length !== 2) || (key === "p" && rule.length !== 5) || !assertion) {
            throw new Error(`invalid RBAC policy: ${line}`);
        }
        assertion.policy.push(rule);
        if (key === "g") groupSubjects.add(rule[0]);
    }
    const e = await newEnforcer(m);
    await e.buildRoleLinks();
    await e.addFunction("globOrRegexMatch", match);
    return { e, groupSubjects, answers: new Map() };
}

function ask(e: Enforcer, sub: string, q: ArgoRbacQuery): boolean {
    try {
        return e.enforceSync(sub, q.resource, q.action, q.object);
    } catch {
        return false;
    }
}

/** ArgoCD's enforcer over argocd-rbac-cm's data and the cluster's AppProjects. */
export async function loadArgoRbac(data: ArgoRbacData, projects: readonly ArgoProjectRoles[] = []): Promise<ArgoRbac> {
    const match = matcher(data["policy.matchMode"] === "regex");
    const defaultRole = data["policy.default"] ?? "";
    const user = policyCsv(data);
    let base: Awaited<ReturnType<typeof casbin>>;
    try {
        base = await casbin([BUILTIN_POLICY_CSV, user], match);
    } catch (err) {
        return { error: `error loading RBAC policy: ${(err as Error).message}`, enforce: () => false };
    }
    const byProject = new Map<string, typeof base>();
    for (const p of projects.filter((x) => x.roles.length > 0)) {
        byProject.set(p.name, await casbin([BUILTIN_POLICY_CSV, user, projectPoliciesString(p)], match).catch(() => base));
    }
    // The policy is fixed once loaded, and a check asks the same question many times (every group, project and object).
    const allows = (c: typeof base, sub: string, q: ArgoRbacQuery): boolean => {
        const key = [sub, q.resource, q.action, q.object].join("\n");
        if (!c.answers.has(key)) c.answers.set(key, ask(c.e, sub, q));
        return c.answers.get(key)!;
    };
    const withDefault = (c: typeof base, sub: string, q: ArgoRbacQuery) => (defaultRole !== "" && allows(c, defaultRole, q)) || allows(c, sub, q);
    const names = new Set(projects.map((p) => p.name));
    return {
        enforce(subject, q) {
            if (defaultRole !== "" && allows(base, defaultRole, q)) return true;
            const parts = q.object.split("/");
            const scoped = ["applicationsets", "applications", "repositories", "clusters", "logs", "exec"].includes(q.resource) && parts.length >= 2;
            const project = scoped ? parts[0] : q.resource === "projects" ? q.object : undefined;
            const c = (project !== undefined && byProject.get(project)) || base;
            const sub = subject.user ?? "";
            if (project !== undefined && names.has(project) && /^proj:[^:]*:[^:]*$/.test(sub)) {
                return sub.split(":")[1] === project && withDefault(c, sub, q);
            }
            return withDefault(c, sub, q) || subject.groups.some((g) => c.groupSubjects.has(g) && withDefault(c, g, q));
        },
    };
}
