import * as assert from "assert";
import { argoIdentities, identityProblems, serviceAccountToImpersonate } from "../tools/verify/argocdIdentities";
import { IN_CLUSTER, LiveProject } from "../tools/verify/regulatedPaths";

const NONE: Omit<LiveProject, "name"> = { destinations: [], sourceNamespaces: [], destinationServiceAccounts: [], roles: [] };
const project = (name: string, spec: Partial<LiveProject> = {}): LiveProject => ({ name, ...NONE, ...spec });

describe("who ArgoCD acts as on the regulated namespaces (argo-cd v3.5.1 util/settings)", () => {
    it("derives the ServiceAccount ArgoCD impersonates as DeriveServiceAccountToImpersonate does", () => {
        const dst = { server: IN_CLUSTER.server, namespace: "payments-prod" };
        const cases: [string, string, string, string | { error: string }][] = [
            ["*", "*-prod", "deployer", "system:serviceaccount:payments-prod:deployer"],
            ["*", "*", "argocd:sync", "system:serviceaccount:argocd:sync"],
            ["https://spoke", "*", "x", ""],
            ["*", "*", "a/b", { error: "default service account contains invalid chars 'a/b'" }],
        ];
        for (const [server, namespace, defaultServiceAccount, expected] of cases) {
            const p = project("p", { destinationServiceAccounts: [{ server, namespace, defaultServiceAccount }] });
            assert.deepStrictEqual(serviceAccountToImpersonate(p, dst), expected);
        }
    });

    it("says who ArgoCD acts as and what the guard must name, impersonation on or off", () => {
        const own = { controller: "system:serviceaccount:argocd:argocd-application-controller", server: "system:serviceaccount:argocd:argocd-server" };
        const projects = [
            project("r", {
                destinations: [{ server: "*", namespace: "*-prod" }],
                destinationServiceAccounts: [{ server: "*", namespace: "payments-*", defaultServiceAccount: "sync" }],
            }),
        ];
        const off = argoIdentities({}, projects, ["payments-prod", "ledger-prod"], own);
        const both = `${own.controller} ${own.server}`;
        assert.deepStrictEqual(
            off.map((a) => `${a.namespace} ${a.sync} ${a.server}`),
            [`payments-prod ${both}`, `ledger-prod ${both}`],
        );
        const guard = { gitops: [own.controller], gitopsGroups: [], action: [own.server] };
        assert.deepStrictEqual(identityProblems(guard, off), []);
        const on = argoIdentities({ "application.sync.impersonation.enabled": "true" }, projects, ["payments-prod", "ledger-prod"], own);
        assert.deepStrictEqual(
            on.map((a) => `${a.namespace} ${a.sync}`),
            ["payments-prod system:serviceaccount:payments-prod:sync", "ledger-prod undefined"],
        );
        assert.match(on[1].note, /enforced, and no destinationServiceAccounts entry of project r matches ledger-prod: ArgoCD refuses to sync there/);
        const notEnforced = argoIdentities(
            { "application.sync.impersonation.enabled": "true", "application.sync.impersonation.enforced": "false" },
            projects,
            ["ledger-prod"],
            own,
        );
        assert.deepStrictEqual([notEnforced[0].sync, notEnforced[0].server], [own.controller, own.server]);
        const problems = identityProblems(guard, on.slice(0, 1));
        assert.strictEqual(problems.length, 3, problems.join("\n")); // each one's words: checks-argocd.test.ts, argocd.regulated-identities
        assert.deepStrictEqual(identityProblems({ gitops: ["system:serviceaccount:payments-prod:sync"], gitopsGroups: [], action: [] }, on.slice(0, 1)), []);
        // "true" exactly: ArgoCD reads no other spelling as on.
        assert.strictEqual(argoIdentities({ "application.sync.impersonation.enabled": "True" }, projects, ["payments-prod"], own)[0].sync, own.controller);
    });
});
