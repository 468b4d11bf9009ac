import * as assert from "assert";
import { globRegExp, loadArgoRbac, policyCsv, projectPoliciesString, readCsvLine } from "../tools/verify/argocdRbac";

const app = (action: string, object = "tenants/web") => ({ resource: "applications", action, object });

describe("ArgoCD RBAC for verify: argo-cd's casbin model with ArgoCD's policy assembly and claims (e2e argocd-rbac-enforcer-agrees checks it)", () => {
    it("merges policy.csv first, then the other policy.*.csv keys in key order", () => {
        assert.strictEqual(
            policyCsv({ "policy.b.csv": "B", "policy.csv": "MAIN", "policy.a.csv": "A", "policy.default": "x", "other.csv": "no" }),
            "MAIN\nA\nB",
        );
        assert.strictEqual(policyCsv({ "policy.z.csv": "Z" }), "\nZ");
    });

    it("reads a line as Go's encoding/csv with TrimLeadingSpace", () => {
        assert.deepStrictEqual(readCsvLine("p,  a , b"), ["p", "a ", "b"]);
        assert.deepStrictEqual(readCsvLine('p, "a, b", "say ""hi"""'), ["p", "a, b", 'say "hi"']);
        assert.deepStrictEqual(readCsvLine("g, a,"), ["g", "a", ""]);
        for (const bad of ['p, a"b', 'p, "ab" , c', 'p, "ab']) {
            assert.strictEqual(readCsvLine(bad), undefined, bad);
        }
    });

    it("compiles gobwas globs: * crosses /, alternatives, classes; a broken pattern matches nothing", () => {
        assert.ok(globRegExp("update/*")!.test("update/argoproj.io/Rollout/ns/name"));
        assert.ok(globRegExp("{sync,override}")!.test("override"));
        assert.ok(!globRegExp("{sync,override}")!.test("syncx"));
        assert.ok(globRegExp("t?n[a-c]nts/*")!.test("tenants/web"));
        assert.ok(!globRegExp("[!t]enants/*")!.test("tenants/web"));
        assert.strictEqual(globRegExp("[abc"), undefined);
        assert.strictEqual(globRegExp("{a,b"), undefined);
        assert.ok(globRegExp("a\\*")!.test("a*") && !globRegExp("a\\*")!.test("ab"));
    });

    it("a deny wins for one subject; an allow through another group of the same user still passes", async () => {
        const rbac = await loadArgoRbac({
            "policy.csv": [
                "p, role:dev, applications, *, tenants/*, allow",
                "p, role:dev, applications, sync, tenants/*, deny",
                "g, devs, role:dev",
                "g, ops, role:admin",
            ].join("\n"),
        });
        assert.strictEqual(rbac.error, undefined);
        assert.ok(rbac.enforce({ groups: ["devs"] }, app("get")));
        assert.ok(!rbac.enforce({ groups: ["devs"] }, app("sync")));
        assert.ok(rbac.enforce({ groups: ["devs", "ops"] }, app("sync")), "ops (role:admin) allows what role:dev denies");
    });

    it("the default role is tried first and answers alone when it allows", async () => {
        const rbac = await loadArgoRbac({ "policy.default": "role:admin", "policy.csv": "p, role:dev, applications, sync, */*, deny\ng, devs, role:dev" });
        assert.ok(rbac.enforce({ groups: ["devs"] }, app("sync")));
        assert.ok(
            !(await loadArgoRbac({ "policy.csv": "p, role:dev, applications, sync, */*, deny\ng, devs, role:dev" })).enforce({ groups: ["devs"] }, app("sync")),
        );
    });

    it("a group's own p lines count only when the group is the subject of some g line", async () => {
        assert.ok(!(await loadArgoRbac({ "policy.csv": "p, devs, applications, sync, */*, allow" })).enforce({ groups: ["devs"] }, app("sync")));
        assert.ok(
            (await loadArgoRbac({ "policy.csv": "p, devs, applications, sync, */*, allow\ng, devs, role:readonly" })).enforce(
                { groups: ["devs"] },
                app("sync"),
            ),
        );
        assert.ok(
            (await loadArgoRbac({ "policy.csv": "p, alice, applications, sync, */*, allow" })).enforce({ user: "alice", groups: [] }, app("sync")),
            "the user's own subject needs no g line",
        );
    });

    it("one bad line fails the whole policy: every request is denied, the built-in admin included", async () => {
        for (const bad of ['p, role:x, applications, get, "*/*, allow', "p, role:x, applications, get, */*", "g, a, b, c", "x, a, b"]) {
            const rbac = await loadArgoRbac({ "policy.csv": `g, ops, role:admin\n${bad}` });
            assert.match(rbac.error ?? "", /error loading RBAC policy/, bad);
            assert.ok(!rbac.enforce({ user: "admin", groups: ["ops"] }, app("get")), bad);
        }
        assert.strictEqual((await loadArgoRbac({ "policy.csv": "# comment\n\n   p, role:x, applications, get, */*, allow  \n" })).error, undefined);
    });

    it("regex mode matches unanchored", async () => {
        const rbac = await loadArgoRbac({ "policy.matchMode": "regex", "policy.csv": "p, role:dev, applications, sync, ten, allow\ng, devs, role:dev" });
        assert.ok(rbac.enforce({ groups: ["devs"] }, app("sync", "tenants/web")));
        assert.ok(rbac.enforce({ groups: ["devs"] }, app("resync", "tenants/web")), "sync matches inside resync");
    });

    it("regex mode: a pattern Go cannot compile fails the request, in any line order; Go's own syntax is read", async () => {
        for (const csv of [
            "p, alice, applications, sync, *, allow\np, alice, applications, sync, .*, allow",
            "p, alice, applications, sync, .*, allow\np, alice, applications, sync, *, allow",
        ]) {
            assert.ok(!(await loadArgoRbac({ "policy.matchMode": "regex", "policy.csv": csv })).enforce({ user: "alice", groups: [] }, app("sync")), csv);
        }
        assert.ok(
            !(await loadArgoRbac({ "policy.matchMode": "regex", "policy.csv": "g, ops, role:admin" })).enforce({ groups: ["ops"] }, app("get")),
            "the built-in roles' globs are no regular expressions",
        );
        for (const pattern of ["(?i)TENANTS/.*", "^\\pL+/", "\\Atenants/web\\z", "(?P<p>tenants)/web"]) {
            assert.ok(
                (await loadArgoRbac({ "policy.matchMode": "regex", "policy.csv": `p, alice, applications, sync, ${pattern}, allow` })).enforce(
                    { user: "alice", groups: [] },
                    app("sync"),
                ),
                pattern,
            );
        }
    });

    it("tries the default role on the policy without the project first, project tokens included", async () => {
        const projects = [
            { name: "tenants", roles: [{ name: "r", policies: ["p, role:readonly, applications, get, tenants/*, deny"] }] },
            { name: "payments", roles: [{ name: "x" }] },
        ];
        const rbac = await loadArgoRbac({ "policy.default": "role:readonly" }, projects);
        assert.ok(rbac.enforce({ user: "alice", groups: [] }, app("get")), "the project's deny is not in the policy the default role is tried on");
        assert.ok(rbac.enforce({ user: "proj:tenants:r", groups: [] }, app("get", "payments/api")));
        assert.ok(
            !(await loadArgoRbac({}, projects)).enforce({ user: "proj:tenants:r", groups: [] }, app("get", "payments/api")),
            "a project token reaches no other project",
        );
    });

    it("adds the request's AppProject roles and their groups", async () => {
        const projects = [
            {
                name: "tenants",
                roles: [{ name: "release", policies: ["p, proj:tenants:release, applications, action/*, tenants/*, allow"], groups: ["approvers"] }],
            },
        ];
        assert.strictEqual(projectPoliciesString(projects[0]).split("\n")[0], "p, proj:tenants:release, projects, get, tenants, allow");
        const rbac = await loadArgoRbac({}, projects);
        assert.ok(rbac.enforce({ groups: ["approvers"] }, app("action/argoproj.io/Rollout/resume")));
        assert.ok(
            !rbac.enforce({ groups: ["approvers"] }, app("action/argoproj.io/Rollout/resume", "other/web")),
            "another project's request does not load this project's roles",
        );
    });
});
