/**
 * ArgoCD's own RBAC enforcer decides (no cluster): what verify asks (tools/verify/argocdRbac.ts:
 * argo-cd's casbin model run by node-casbin, with ArgoCD's policy assembly, default role and
 * claims check) against the enforcer of argo-cd v3.5.1's API server, built from
 * the argo-cd module (e2e/engines/argocd-rbac: util/rbac, with the server's claims check). Each
 * case is an argocd-rbac-cm data map and a set of AppProjects; every subject of the case asks
 * every request of the case, and both must give the same verdict, and both must refuse a policy
 * that does not load. A disagreement names the case, the subject, the request and both answers.
 */
import assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { world } from "../lib/context";
import { run } from "../lib/procs";
import { ArgoProjectRoles, ArgoRbacQuery, ArgoRbacSubject, loadArgoRbac } from "../../tools/verify/argocdRbac";
import { ARGOCD_ROLLOUT_ACTIONS, APPROVER_ROLLOUT_ACTIONS, ROLLOUT_ACTIONS_POLICY_KEY, rolloutActionsPolicyCsv } from "../../components/argocd/rbac";

const ENGINE = "argocd-rbac-enforce";

interface RbacCase {
    name: string;
    data: Record<string, string>;
    projects?: ArgoProjectRoles[];
    /** The policy does not load (both must say so, and deny everything). */
    broken?: boolean;
    /** Subjects beyond the common ones. */
    subjects?: ArgoRbacSubject[];
    /** Requests beyond the common ones. */
    requests?: ArgoRbacQuery[];
}

interface EngineAnswer {
    loadError: string | null;
    verdicts: boolean[];
    panics: number[];
    panicText?: Record<string, string>;
}

// ---- who asks -------------------------------------------------------------------------------

const SUBJECTS: ArgoRbacSubject[] = [
    { user: "admin", groups: [] },
    { user: "alice", groups: [] },
    { groups: [] },
    { user: "alice", groups: ["platform-deployers"] },
    { user: "bob", groups: ["platform-approvers"] },
    { user: "carol", groups: ["platform-deployers", "platform-approvers"] },
    { user: "carol", groups: ["platform-approvers", "platform-deployers"] },
    { user: "dave", groups: ["direct-group"] },
    { user: "erin", groups: ["g1"] },
    { user: "erin", groups: ["g1", "payments-ops"] },
    { groups: ["platform-readers"] },
    { user: "frank", groups: ["chain-10", "unknown-group"] },
    { user: "frank", groups: ["chain-11"] },
    { user: "role:admin", groups: [] },
    { user: "mallory", groups: ["role:admin"] },
    { user: "mallory", groups: ["role:readonly", "role:readonly"] },
    { user: "proj:tenants:r", groups: [] },
    { user: "proj:other:r", groups: [] },
    { user: "proj:tenants:deployer", groups: ["platform-approvers"] },
    { user: "*", groups: ["*"] },
];

// ---- what is asked --------------------------------------------------------------------------

const APP_OBJECTS = ["tenants/web", "tenants/ns-a/web", "payments/api", "other/web", "tenants"];
const APP_ACTIONS = [
    "get",
    "create",
    "update",
    "delete",
    "sync",
    "override",
    ...ARGOCD_ROLLOUT_ACTIONS.map((a) => `action/argoproj.io/Rollout/${a}`),
    "action/apps/Deployment/restart",
    "update/argoproj.io/Rollout/ns-a/web",
    "update/apps/Deployment/ns-a/web",
    "delete/argoproj.io/Rollout/ns-a/web",
    "delete/apps/Deployment/ns-a/web",
];
const OTHER_REQUESTS: ArgoRbacQuery[] = [
    { resource: "projects", action: "get", object: "tenants" },
    { resource: "projects", action: "get", object: "payments" },
    { resource: "projects", action: "update", object: "tenants" },
    { resource: "applicationsets", action: "get", object: "tenants/set" },
    { resource: "applicationsets", action: "create", object: "payments/set" },
    { resource: "applicationsets", action: "update", object: "payments/set" },
    { resource: "applicationsets", action: "delete", object: "tenants/set" },
    { resource: "logs", action: "get", object: "tenants/web" },
    { resource: "exec", action: "create", object: "tenants/web" },
    { resource: "clusters", action: "get", object: "https://kubernetes.default.svc" },
    { resource: "clusters", action: "update", object: "tenants/https://spoke.example" },
    { resource: "repositories", action: "get", object: "https://git.example/repo.git" },
    { resource: "repositories", action: "create", object: "tenants/https://git.example/repo.git" },
    { resource: "accounts", action: "update", object: "alice" },
    { resource: "certificates", action: "create", object: "git.example" },
    { resource: "gpgkeys", action: "get", object: "ABCDEF" },
    { resource: "extensions", action: "invoke", object: "metrics" },
];
const REQUESTS: ArgoRbacQuery[] = [
    ...APP_ACTIONS.flatMap((action) => APP_OBJECTS.map((object) => ({ resource: "applications", action, object }))),
    ...OTHER_REQUESTS,
];

// ---- the policies ---------------------------------------------------------------------------

/** A platform's own policy.csv: deployers may act broadly, approvers are deployers too. */
const PLATFORM_POLICY = [
    "p, role:deployer, applications, sync, tenants/*, allow",
    "p, role:deployer, applications, action/*, tenants/*, allow",
    "p, role:deployer, applications, action/*, payments/*, allow",
    "p, role:deployer, applications, update/argoproj.io/Rollout/*, tenants/*, allow",
    "g, role:deployer, role:readonly",
    "g, role:approver, role:deployer",
    "g, platform-deployers, role:deployer",
    "g, platform-approvers, role:approver",
    "g, platform-readers, role:readonly",
].join("\n");

/** `g, chain-0, chain-1` ... with the grant on the last link: casbin follows 10 links, not 11. */
function chain(prefix: string, links: number, grant: string): string[] {
    return [
        ...Array.from({ length: links }, (_, i) => `g, ${prefix}${i === 0 ? "" : `-${i}`}, ${prefix}-${i + 1}`),
        `p, ${prefix}-${links}, applications, ${grant}, */*, allow`,
    ];
}

const TENANTS_PROJECT: ArgoProjectRoles = {
    name: "tenants",
    roles: [
        {
            name: "r",
            policies: ["p, proj:tenants:r, applications, sync, tenants/*, allow", "p, proj:tenants:r, applications, get, tenants/*, allow"],
            groups: ["g1"],
        },
        {
            name: "deployer",
            policies: [
                "p, proj:tenants:deployer, applications, action/*, tenants/*, allow",
                "p, proj:tenants:deployer, applications, action/argoproj.io/Rollout/resume, tenants/*, deny",
            ],
            groups: ["platform-deployers"],
        },
        // A role granting outside its project: ArgoCD adds a project's roles only to requests on that project.
        { name: "wide", policies: ["p, proj:tenants:wide, applications, delete, */*, allow"], groups: [] },
    ],
};
const PAYMENTS_PROJECT: ArgoProjectRoles = {
    name: "payments",
    roles: [
        {
            name: "ops",
            policies: ["p, proj:payments:ops, applications, *, payments/*, allow", "p, proj:payments:ops, applications, sync, tenants/*, allow"],
            groups: ["payments-ops"],
        },
        { name: "empty", groups: ["nobody"] },
    ],
};

/** The program's policy as components/argocd/rbac.ts writes it, over a platform policy. */
function programCase(name: string, actions: readonly string[], extra: Record<string, string> = {}): RbacCase {
    const csv = rolloutActionsPolicyCsv({
        approverRole: "role:approver",
        deployerRoles: ["role:deployer", "role:tenant-deployer"],
        projects: ["tenants", "payments"],
        actions: [...actions],
        regulatedProjects: ["payments"],
        approverGroups: [],
        deployerGroups: [],
    });
    assert.ok(csv, "rolloutActionsPolicyCsv wrote no policy for a configured approver");
    return { name, data: { "policy.csv": PLATFORM_POLICY, [ROLLOUT_ACTIONS_POLICY_KEY]: csv, ...extra }, projects: [TENANTS_PROJECT, PAYMENTS_PROJECT] };
}

const CASES: RbacCase[] = [
    { name: "built-in roles only (no ConfigMap data)", data: {} },
    { name: "policy.default: role:readonly", data: { "policy.default": "role:readonly" } },
    {
        name: "policy.default: role:admin with a deny for a group",
        data: { "policy.default": "role:admin", "policy.csv": "p, role:deployer, applications, sync, */*, deny\ng, platform-deployers, role:deployer" },
    },
    {
        name: "policy.default: a role the policy defines",
        data: {
            "policy.default": "role:viewer",
            "policy.csv": "p, role:viewer, applications, get, tenants/*, allow\np, role:viewer, projects, get, tenants, allow",
        },
    },
    { name: "platform groups, roles and inheritance", data: { "policy.csv": PLATFORM_POLICY } },
    {
        name: "role chains 10 and 11 links deep, and a cycle",
        data: {
            "policy.csv": [
                ...chain("chain-10", 10, "sync"),
                ...chain("chain-11", 11, "sync"),
                "g, loop-a, loop-b",
                "g, loop-b, loop-a",
                "p, loop-b, applications, get, */*, allow",
            ].join("\n"),
        },
        subjects: [{ user: "x", groups: ["loop-a"] }],
    },
    {
        name: "a group with p lines but no g line, and the same group once it has one",
        data: { "policy.csv": "p, direct-group, applications, sync, */*, allow\np, g1, applications, override, */*, allow\ng, g1, role:nothing" },
    },
    {
        name: "allow and deny on one subject; deny on one group, allow on another",
        data: {
            "policy.csv": [
                "p, role:deployer, applications, *, tenants/*, allow",
                "p, role:deployer, applications, action/argoproj.io/Rollout/resume, tenants/*, deny",
                "p, role:deployer, applications, delete/*, */*, deny",
                "p, role:approver, applications, action/argoproj.io/Rollout/resume, */*, allow",
                "p, role:approver, applications, delete/*, tenants/*, allow",
                "p, alice, applications, sync, tenants/*, deny",
                "g, platform-deployers, role:deployer",
                "g, platform-approvers, role:approver",
            ].join("\n"),
        },
    },
    {
        name: "glob patterns",
        data: {
            "policy.csv": [
                'p, role:g, applications, "{sync,override}", tenants/*, allow',
                "p, role:g, applications, update/*, t?nants/*, allow",
                "p, role:g, applications, delete/*/Rollout/*, [tp]*/*, allow",
                "p, role:g, applications, action/*, [!p]*/web, allow",
                'p, role:g, applications, get, "{tenants,payments}/{web,api}", allow',
                "p, role:g, projects, get, [a-t]*, allow",
                "p, role:g, clusters, *, tenants/*, allow",
                "p, role:g, *, create, *, allow",
                "p, role:g, applications, delete, tenants/ns-?/*, allow",
                "p, role:g, applications, override, [abc, allow",
                'p, role:g, applications, sync, "{payments,other", allow',
                "p, role:g, logs, get, tenants/w\\eb, allow",
                "p, role:g, applications, action/argoproj.io/Rollout/\\*, */*, allow",
                "g, platform-deployers, role:g",
            ].join("\n"),
        },
        requests: [{ resource: "applications", action: "action/argoproj.io/Rollout/*", object: "other/web" }],
    },
    {
        name: "policy.matchMode: regex (unanchored)",
        data: {
            "policy.matchMode": "regex",
            "policy.csv": [
                "p, role:re, applications, sync|override, tenants/.*, allow",
                "p, role:re, applications, action/.*, ^tenants/web$, allow",
                "p, role:re, applications, get, enant, allow",
                "p, role:re, applications, update/argoproj\\.io/Rollout/.*, [tp].*, allow",
                "p, role:re, applications, delete, ^(payments|other)/, allow",
                "p, role:re, projects, get, ^t, allow",
                "p, role:re, app, create, .*, allow",
                "g, platform-deployers, role:re",
            ].join("\n"),
        },
    },
    {
        name: "policy.matchMode: regex, one pattern Go's regexp refuses next to valid ones",
        data: {
            "policy.matchMode": "regex",
            "policy.csv": "p, role:re, applications, sync, .*, allow\np, role:re, applications, sync, *, allow\ng, platform-deployers, role:re",
        },
    },
    {
        name: "policy.matchMode: regex, RE2-only and JavaScript-only syntax",
        data: {
            "policy.matchMode": "regex",
            "policy.csv":
                "p, role:re, applications, sync, (?i)TENANTS/.*, allow\np, role:re, applications, get, ^\\pL+/, allow\ng, platform-deployers, role:re",
        },
    },
    {
        name: "policy.csv and several policy.<x>.csv keys",
        data: {
            "policy.csv": "p, role:deployer, applications, sync, tenants/*, allow\ng, platform-deployers, role:deployer",
            "policy.b-overlay.csv": "p, role:deployer, applications, sync, tenants/*, deny",
            "policy.a-overlay.csv": "p, role:deployer, applications, override, */*, allow\ng, platform-approvers, role:approver",
            "policy.z.csv": "p, role:approver, applications, *, */*, allow",
            "policy.notes.txt": 'p, "broken',
            "x.policy.csv": 'p, "broken',
            "policy.csv.bak": 'p, "broken',
            "policy.UPPER.CSV": 'p, "broken',
        },
    },
    {
        name: "policy.<x>.csv keys without policy.csv",
        data: { "policy.one.csv": "g, platform-deployers, role:admin", "policy.two.csv": "p, role:admin, applications, sync, tenants/*, deny" },
    },
    {
        name: "quoted fields with commas and quotes",
        data: {
            "policy.csv": [
                'p, "role:a,b", applications, get, "tenants/*", allow',
                'g, "group, with comma", "role:a,b"',
                'p, "say ""hi""", applications, sync, */*, allow',
                'g, platform-deployers, "say ""hi"""',
                "p,role:tight,applications,override,*/*,allow",
                "g,platform-approvers,role:tight",
            ].join("\n"),
        },
        subjects: [
            { user: "q", groups: ["group, with comma"] },
            { user: 'say "hi"', groups: [] },
        ],
    },
    {
        name: "leading spaces, tabs, trailing spaces, comments and odd effects",
        data: {
            "policy.csv": [
                "# a comment line",
                "   # an indented comment",
                "",
                "   p, role:s, applications, sync, tenants/*, allow",
                "\tg, platform-deployers, role:s",
                "p, role:s , applications, override, */*, allow",
                "g, platform-approvers, role:s ",
                "p, role:s, applications, get, */*, allow # not a comment",
                "p, role:s, applications, create, */*, Allow",
                "p, role:s, applications, delete, */*, DENY",
                "p, role:s, applications , update, */*, allow",
                "  ",
            ].join("\n"),
        },
    },
    {
        name: "an unquoted {a,b} glob splits the line (load error)",
        data: { "policy.csv": "p, role:g, applications, {sync,override}, */*, allow" },
        broken: true,
    },
    {
        name: "a bare quote in a field (load error)",
        data: { "policy.csv": 'p, role:x, applications, get, tenants/"web, allow\ng, platform-deployers, role:x' },
        broken: true,
    },
    { name: "an unterminated quoted field (load error)", data: { "policy.csv": 'p, "role:x, applications, get, */*, allow' }, broken: true },
    { name: "text after a closing quote (load error)", data: { "policy.csv": 'p, "role:x" y, applications, get, */*, allow' }, broken: true },
    { name: "a p line with 5 fields (load error)", data: { "policy.csv": "p, role:x, applications, get, */*" }, broken: true },
    { name: "a p line with 7 fields (load error)", data: { "policy.csv": "p, role:x, applications, get, */*, allow, extra" }, broken: true },
    { name: "a g line with 2 fields (load error)", data: { "policy.csv": "g, platform-deployers" }, broken: true },
    { name: "a g line with 4 fields (load error)", data: { "policy.csv": "g, platform-deployers, role:admin, extra" }, broken: true },
    { name: "an unknown line type (load error)", data: { "policy.csv": "g2, platform-deployers, role:admin" }, broken: true },
    {
        name: "a bad line in an overlay key (load error)",
        data: { "policy.csv": "g, platform-deployers, role:admin", "policy.zz.csv": "p, role:x" },
        broken: true,
    },
    {
        name: "bad lines in two overlay keys: the first in key order fails",
        data: { "policy.csv": "g, platform-deployers, role:admin", "policy.b.csv": "p, role:b", "policy.a.csv": "g, role:a" },
        broken: true,
    },
    { name: "bad lines in policy.csv and an overlay: policy.csv fails first", data: { "policy.csv": 'p, "role:x', "policy.a.csv": "g, role:a" }, broken: true },
    {
        name: "a bad line under policy.default and regex mode (load error)",
        data: { "policy.default": "role:admin", "policy.matchMode": "regex", "policy.csv": "p, a, b" },
        broken: true,
    },
    { name: "AppProject roles with groups", data: { "policy.csv": "g, platform-approvers, role:readonly" }, projects: [TENANTS_PROJECT, PAYMENTS_PROJECT] },
    {
        name: "AppProject roles over a platform policy with denies",
        data: { "policy.csv": PLATFORM_POLICY + "\np, role:deployer, applications, action/argoproj.io/Rollout/abort, */*, deny" },
        projects: [TENANTS_PROJECT, PAYMENTS_PROJECT],
    },
    {
        name: "an AppProject whose role policy does not load (falls back to the policy without it)",
        data: { "policy.csv": "g, platform-deployers, role:readonly" },
        projects: [
            {
                name: "tenants",
                roles: [{ name: "r", policies: ["p, proj:tenants:r, applications, sync, tenants/*, allow", "p, proj:tenants:r, broken"], groups: ["g1"] }],
            },
            PAYMENTS_PROJECT,
        ],
    },
    {
        name: "policy.default with an AppProject role that denies the default role",
        data: { "policy.default": "role:readonly" },
        projects: [
            {
                name: "tenants",
                roles: [
                    {
                        name: "r",
                        policies: ["p, role:readonly, applications, get, tenants/*, deny", "p, proj:tenants:r, applications, sync, tenants/*, allow"],
                        groups: ["g1"],
                    },
                ],
            },
        ],
    },
    {
        name: "policy.default with project tokens",
        data: { "policy.default": "role:readonly", "policy.csv": "p, role:readonly, applications, sync, payments/*, allow" },
        projects: [TENANTS_PROJECT, PAYMENTS_PROJECT],
    },
    programCase("the program's policy (approver actions, two projects)", APPROVER_ROLLOUT_ACTIONS),
    programCase("the program's policy (every Rollout action) with a platform action/* on every project", ARGOCD_ROLLOUT_ACTIONS, {
        "policy.platform.csv": "p, role:tenant-deployer, applications, action/*, */*, allow\ng, platform-readers, role:tenant-deployer",
    }),
    programCase("the program's policy under policy.default: role:admin", APPROVER_ROLLOUT_ACTIONS, { "policy.default": "role:admin" }),
];

// ---- the comparison -------------------------------------------------------------------------

function subjectText(s: ArgoRbacSubject): string {
    return `${s.user === undefined ? "(no sub)" : JSON.stringify(s.user)} groups ${JSON.stringify(s.groups)}`;
}

/** The policy line a load error names (util/rbac/rbac.go `loadPolicyLine`: "error parsing policy line %q" or "invalid RBAC policy: %s"). */
function failingLine(error: string): string | undefined {
    const parsed = /error parsing policy line ("(?:[^"\\]|\\.)*")/.exec(error);
    if (parsed) {
        return JSON.parse(parsed[1]) as string;
    }
    return /invalid RBAC policy: (.*)$/.exec(error)?.[1];
}

function askEngine(bin: string, c: RbacCase, queries: { subject: ArgoRbacSubject; q: ArgoRbacQuery }[]): EngineAnswer {
    const input = {
        data: c.data,
        projects: (c.projects ?? []).map((p) => ({
            name: p.name,
            roles: p.roles.map((r) => ({ name: r.name, policies: r.policies ?? [], groups: r.groups ?? [] })),
        })),
        queries: queries.map(({ subject, q }) => ({ user: subject.user ?? "", groups: [...subject.groups], ...q })),
    };
    const r = run(bin, [], { input: JSON.stringify(input) });
    assert.strictEqual(r.status, 0, `${ENGINE} failed on case "${c.name}" (exit ${r.status}):\n${r.stderr.split("\n").slice(-20).join("\n")}`);
    const answer = JSON.parse(r.stdout) as EngineAnswer;
    assert.strictEqual(answer.verdicts.length, queries.length, `${ENGINE} answered ${answer.verdicts.length} of ${queries.length} queries of case "${c.name}"`);
    return answer;
}

/** About how long this file runs beside another on 2 cores: orders the side-by-side run (e2e/lib/pool.ts). */
export const SECONDS = 20;

describe("argocd-rbac", function () {
    it("argocd-rbac-enforcer-agrees", async function () {
        const w = await world();
        const bin = path.join(w.bin, ENGINE);
        assert.ok(fs.existsSync(bin), `no ${ENGINE} in ${w.bin}: build e2e/engines/argocd-rbac (bash e2e/engines/build.sh argocd-rbac)`);

        /** Disagreements by case, in case order. */
        const problems = new Map<string, string[]>();
        const problem = (c: RbacCase, text: string) => problems.set(c.name, [...(problems.get(c.name) ?? []), text]);
        let total = 0;
        let allowed = 0;
        for (const c of CASES) {
            const subjects = [...SUBJECTS, ...(c.subjects ?? [])];
            const requests = [...REQUESTS, ...(c.requests ?? [])];
            const queries = subjects.flatMap((subject) => requests.map((q) => ({ subject, q })));
            const go = askEngine(bin, c, queries);
            const ts = await loadArgoRbac(c.data, c.projects ?? []);
            total += queries.length;

            // Load errors: both or neither, and where expected.
            if ((go.loadError !== null) !== (ts.error !== undefined)) {
                problem(c, `ArgoCD load error ${JSON.stringify(go.loadError)}, TypeScript error ${JSON.stringify(ts.error)}`);
            }
            // ...and both name the same line: the merge order of the keys decides which fails first.
            if (go.loadError !== null && ts.error !== undefined && failingLine(go.loadError) !== failingLine(ts.error)) {
                problem(c, `the failing line: ArgoCD ${JSON.stringify(go.loadError)}, TypeScript ${JSON.stringify(ts.error)}`);
            }
            if ((go.loadError !== null) !== Boolean(c.broken)) {
                problem(c, `the case expects ${c.broken ? "a load error" : "the policy to load"}, ArgoCD says ${JSON.stringify(go.loadError)}`);
            }
            // ArgoCD panics on every request exactly when the policy did not load.
            if (go.panics.length !== (go.loadError !== null ? queries.length : 0)) {
                problem(
                    c,
                    `${go.panics.length} of ${queries.length} requests panicked in ArgoCD (load error ${JSON.stringify(go.loadError)}; first: ${JSON.stringify(Object.values(go.panicText ?? {})[0])})`,
                );
            }

            queries.forEach(({ subject, q }, i) => {
                const mine = ts.enforce(subject, q);
                if (go.verdicts[i]) {
                    allowed++;
                }
                if (mine !== go.verdicts[i]) {
                    problem(
                        c,
                        `${subjectText(subject)} ${q.resource} ${q.action} ${q.object}: ArgoCD ${go.verdicts[i] ? "allows" : "denies"}, TypeScript ${mine ? "allows" : "denies"}`,
                    );
                }
            });
        }
        // Not vacuous: ArgoCD both allowed and denied a good share.
        assert.ok(
            allowed > total / 20 && allowed < total - total / 20,
            `ArgoCD allowed ${allowed} of ${total} requests: the cases do not exercise both verdicts`,
        );
        const count = [...problems.values()].reduce((n, p) => n + p.length, 0);
        const shown = [...problems]
            .map(
                ([name, ps]) =>
                    `${name}: ${ps.length} disagreement(s), e.g.\n${ps
                        .slice(0, 4)
                        .map((p) => `      ${p}`)
                        .join("\n")}`,
            )
            .join("\n");
        assert.strictEqual(count, 0, `${count} disagreements in ${problems.size} of ${CASES.length} cases (${total} requests):\n${shown}`);
    });
});
