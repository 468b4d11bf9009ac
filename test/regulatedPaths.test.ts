import * as assert from "assert";
import {
    IN_CLUSTER,
    LiveProject,
    destinationPermitted,
    regulatedProjectProblems,
    regulatedTargets,
    templatedSetProblems,
} from "../tools/verify/regulatedPaths";

const NONE: Omit<LiveProject, "name"> = { destinations: [], sourceNamespaces: [], destinationServiceAccounts: [], roles: [] };
const project = (name: string, spec: Partial<LiveProject> = {}): LiveProject => ({ name, ...NONE, ...spec });

describe("paths around the regulated projects (argo-cd v3.5.1)", () => {
    const inCluster = (namespace: string) => ({ ...IN_CLUSTER, namespace });

    it("matches destinations as AppProject.isDestinationMatched does: server or name, globs, and negations that refuse outright", () => {
        const star = [{ server: "*", namespace: "*" }];
        assert.ok(destinationPermitted(star, inCluster("payments-prod")));
        assert.ok(destinationPermitted([{ name: "in-cluster", namespace: "payments-*" }], inCluster("payments-prod")), "by name");
        assert.ok(!destinationPermitted([{ server: "https://spoke.example", namespace: "*" }], inCluster("payments-prod")), "another cluster");
        assert.ok(!destinationPermitted([{ server: "*", namespace: "*-dev" }], inCluster("payments-prod")));
        // A "!" namespace refuses where the server matches, whatever the other entries say.
        assert.ok(!destinationPermitted([...star, { server: "*", namespace: "!payments-prod" }], inCluster("payments-prod")));
        assert.ok(destinationPermitted([...star, { server: "*", namespace: "!payments-prod" }], inCluster("alpha-prod")));
        // A "!" server refuses a destination it does not match only where the namespace matches (Go's && before ||).
        assert.ok(!destinationPermitted([...star, { server: "!https://kubernetes.default.svc", namespace: "*" }], inCluster("payments-prod")));
        assert.ok(!destinationPermitted([{ server: "[", namespace: "*" }], inCluster("payments-prod")), "a pattern that does not compile matches nothing");
    });

    it("finds another project reaching a regulated namespace, here or on a spoke a regulated project names", async () => {
        const regulated = project("tenants-regulated", {
            destinations: [
                { server: "https://kubernetes.default.svc", namespace: "payments-prod" },
                { server: "https://prod.spoke.example", namespace: "ledger-prod" },
                { server: "*", namespace: "audit-*" },
            ],
        });
        const targets = regulatedTargets(["payments-prod"], [regulated]);
        assert.deepStrictEqual(
            targets.map((t) => `${t.server || t.name}/${t.namespace}`),
            ["https://kubernetes.default.svc/payments-prod", "https://prod.spoke.example/ledger-prod"],
            "a pattern is no target",
        );
        const rbac = { regulatedProjects: ["tenants-regulated"], actions: ["resume"] };
        const problems = await regulatedProjectProblems(rbac, {
            projects: [
                regulated,
                project("tenants", {
                    destinations: [
                        { server: "*", namespace: "*" },
                        { server: "*", namespace: "!payments-prod" },
                    ],
                }),
                project("platform", { destinations: [{ server: "https://kubernetes.default.svc", namespace: "*-dev" }] }),
            ],
            targets,
            rbacCm: {},
            apps: [],
            allowReplaceOrForceSync: false,
        });
        assert.deepStrictEqual(
            problems.map((p) => p.object),
            ["AppProject tenants"],
        );
        assert.match(
            problems[0].found,
            /reach namespace ledger-prod on https:\/\/prod\.spoke\.example \(a destination of regulated project tenants-regulated\)/,
        );
        assert.doesNotMatch(problems[0].found, /payments-prod/, 'the "!" entry keeps it out');
    });

    it("judges each role of a regulated project as its tokens arrive (proj:<project>:<role>), and Replace or Force syncs", async () => {
        const rbac = { regulatedProjects: ["tenants-regulated"], actions: ["resume", "promote-full"] };
        const live = (roles: LiveProject["roles"], apps: { project: string; name: string; syncOptions: string[] }[] = [], allowReplaceOrForceSync = false) =>
            regulatedProjectProblems(rbac, {
                projects: [project("tenants-regulated", { roles })],
                targets: [],
                rbacCm: { "policy.csv": "" },
                apps,
                allowReplaceOrForceSync,
            });
        const role = (name: string, grant: string, extra: Partial<LiveProject["roles"][number]> = {}) => ({
            name,
            policies: [`p, proj:tenants-regulated:${name}, ${grant}`],
            groups: [],
            tokens: [],
            ...extra,
        });
        const found = await live([
            role("pipeline", "applications, sync, tenants-regulated/*, allow", { tokens: ["1767225600"] }),
            role("approvers", "applications, action/argoproj.io/Rollout/resume, tenants-regulated/*, allow", { groups: ["release"] }),
            role("sets", "applicationsets, create, tenants-regulated/*, allow"),
            role("reader", "applications, get, tenants-regulated/*, allow", { tokens: ["ro"] }),
            role("elsewhere", "applications, sync, tenants/*, allow"),
        ]);
        assert.deepStrictEqual(
            found.map((f) => f.object),
            ["AppProject tenants-regulated role pipeline", "AppProject tenants-regulated role approvers", "AppProject tenants-regulated role sets"],
        );
        assert.match(found[0].found, /^\(tokens 1767225600, no group\) may sync applications:/);
        assert.match(found[1].found, /^\(no token yet, groups release\) may action\/argoproj\.io\/Rollout\/resume applications:/);
        assert.match(found[2].found, /may create applicationsets/);
        const apps = [
            { project: "tenants-regulated", name: "payments", syncOptions: ["CreateNamespace=true", "Replace=true"] },
            { project: "tenants-regulated", name: "ledger", syncOptions: [" Force=true"] },
            { project: "tenants", name: "web", syncOptions: ["Replace=true"] },
        ];
        assert.deepStrictEqual(
            (await live([], apps)).map((f) => `${f.object}: ${f.found.split(" (")[0]}`),
            [
                "Application payments: of regulated project tenants-regulated syncs with Replace=true",
                "Application ledger: of regulated project tenants-regulated syncs with Force=true",
            ],
        );
        assert.deepStrictEqual(await live([], apps, true), [], "allowReplaceOrForceSync");
    });

    it("finds the ApplicationSets whose generators choose a project or a revision, and passes literal ones", () => {
        const set = (spec: Record<string, unknown>) => ({ kind: "ApplicationSet", metadata: { name: "s" }, spec });
        const app = (project: string, source: Record<string, unknown>) => ({ template: { spec: { project, ...source } } });
        const found = (spec: Record<string, unknown>) => templatedSetProblems([set(spec)]).map((f) => f.found.split(" while")[0]);
        assert.deepStrictEqual(found(app("tenants", { source: { targetRevision: "main", path: "{{.path.path}}" } })), []);
        assert.deepStrictEqual(found(app("{{.path.basename}}", { source: { targetRevision: "main" } })), ["templates spec.template.spec.project"]);
        assert.deepStrictEqual(found(app("tenants", { sources: [{ targetRevision: "main" }, { targetRevision: "{{revision}}" }] })), [
            "templates spec.template.spec.source(s).targetRevision",
        ]);
        assert.deepStrictEqual(found({ ...app("tenants", {}), templatePatch: "spec:\n  project: {{ .team }}\n" }), ["templates spec.templatePatch"]);
    });
});
