/** components/config/project.ts: the rules between the stack files of one project, from each stack's own run. */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { configFromStackFile, readStackFile } from "../tools/stackFile";
import { planStack } from "../tools/plan";
import { FIXTURE_STACKS } from "./harness";
import { configError } from "./stackConfig";

describe("configuration across a project's stack files", () => {
    let dir: string;
    const write = (stack: string, from: string, edit = (text: string) => text) =>
        fs.writeFileSync(path.join(dir, `Pulumi.${stack}.yaml`), edit(fs.readFileSync(path.join(FIXTURE_STACKS, `Pulumi.${from}.yaml`), "utf8")));
    beforeEach(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "project-stacks-"));
        ["hub", "preprod"].forEach((stack) => write(stack, stack));
    });
    const plan = (stack: string) => configFromStackFile(readStackFile(stack, dir));
    const problemsOf = (stack: string) => configError(() => plan(stack)).problems;
    /** A problem of `stack` under `key` that matches `allowed`. */
    const refused = (stack: string, key: string, allowed: RegExp, found = problemsOf(stack)) =>
        assert.ok(found.findIndex((p) => p.key === key && allowed.test(p.allowed)) >= 0, `${stack}: ${JSON.stringify(found)}`);
    const edit = (from: string | RegExp, to: string) => (t: string) => t.replace(from, to);
    const bare = (t: string) => t.replaceAll("argo-rollouts-addon:", ""); // the Pulumi CLI reads a bare key as the project's

    it("reads bare keys as the project's: refuses two files for one cluster and one tenant for two clusters, accepts a spoke beside a bare hub", () => {
        write("copy", "preprod", (t) => bare(t).replace("mimirTenant: preprod", "mimirTenant: copy"));
        refused("copy", "cluster.name", /^contradicts Pulumi\.preprod\.yaml cluster\.name = "preprod": one stack file per cluster/);
        refused("preprod", "cluster.name", /^contradicts Pulumi\.copy\.yaml cluster\.name/);
        write("copy", "preprod", edit("name: preprod\n", "name: prod\n"));
        refused("copy", "cluster.mimirTenant", /^contradicts Pulumi\.preprod\.yaml cluster\.mimirTenant = "preprod": one tenant per cluster/);
        fs.rmSync(path.join(dir, "Pulumi.copy.yaml"));
        write("hub", "hub", bare);
        plan("preprod");
    });

    it("refuses a hub's spoke entry whose tenant, host or role contradicts the spoke's file, from each side, and a hubStack naming another hub", () => {
        write("hub", "hub", edit("tenant: preprod", "tenant: old"));
        refused("hub", "spokes[0].tenant", /^contradicts Pulumi\.preprod\.yaml cluster\.mimirTenant = "preprod"/);
        refused("preprod", "cluster.mimirTenant", /^contradicts Pulumi\.hub\.yaml spokes\[0\]\.tenant = "old"/);
        write("hub", "hub");
        write("preprod", "preprod", edit(/hubStack: .*/, "readEndpoint: https://other.platform.test/prometheus"));
        refused("hub", "spokes[0].hostname", /^contradicts Pulumi\.preprod\.yaml mimir\.readEndpoint = "https:\/\/other\.platform\.test\/prometheus"/);
        refused("preprod", "mimir.readEndpoint", /^contradicts Pulumi\.hub\.yaml spokes\[0\]\.hostname = "mimir-preprod\.hub\.platform\.test"/);
        write("preprod", "preprod", (t) => t.replace("role: spoke", "role: hub").replace(/ {2}argo-rollouts-addon:mimir:\n.*\n/, ""));
        refused("hub", "spokes[0].name", /^contradicts Pulumi\.preprod\.yaml cluster\.role = "hub"/);
        refused("preprod", "cluster.role", /^contradicts Pulumi\.hub\.yaml spokes\[0\]\.name = "preprod"/);
        write("preprod", "preprod");
        write("hub-b", "hub", (t) => t.replace(/hub\n/g, "hub-b\n").replace("tenant: preprod", "tenant: old"));
        write("hub", "hub", edit("name: preprod\n      tenant: preprod", "name: staging\n      tenant: staging"));
        refused("preprod", "mimir.hubStack", /that hub routes no read endpoint for preprod; Pulumi\.hub-b\.yaml does: name that hub's stack$/);
        assert.ok(!problemsOf("preprod").some((p) => p.key === "cluster.mimirTenant"));
        write("preprod", "preprod", edit("/hub\n", "/hub-b\n"));
        const keys = problemsOf("preprod").map((p) => p.key);
        assert.deepStrictEqual(keys, ["cluster.mimirTenant"]);
    });

    it("refuses an argocd.runsOn naming no cluster of the project or one whose ArgoCD runs elsewhere (a circle), and groups the hub's ArgoCD RBAC lacks", () => {
        write("preprod", "preprod", edit("runsOn: preprod", "runsOn: hubb"));
        refused("preprod", "argocd.runsOn", /^must name a cluster of the project's stack files \(hub, preprod\)/);
        write("hub", "hub", edit("runsOn: hub", "runsOn: preprod"));
        write("preprod", "preprod", edit("runsOn: preprod", "runsOn: hub"));
        refused("preprod", "argocd.runsOn", /^contradicts Pulumi\.hub\.yaml argocd\.runsOn = "preprod": a cluster whose own ArgoCD runs there/);
        refused("hub", "argocd.runsOn", /^contradicts Pulumi\.preprod\.yaml argocd\.runsOn = "hub"/);
        write("hub", "hub");
        const spoke = (t: string, groups: string) => t.replace("runsOn: preprod", "runsOn: hub").replace("[platform-release-approvers]", groups);
        write("preprod", "preprod", (t) => spoke(t, '["o:platform-release-approvers"]').replace("role: spoke", 'role: spoke\n    oidcGroupsPrefix: "o:"'));
        plan("hub");
        assert.deepStrictEqual(
            problemsOf("preprod").filter((p) => p.key.endsWith("Groups")),
            [],
        );
        write("preprod", "preprod", (t) => spoke(t, "[platform-release-approvers, eu]"));
        refused("preprod", "policy.regulated.approverGroups", /^contradicts Pulumi\.hub\.yaml argocd\.rbac\.approverGroups = .*not list eu/);
        refused("hub", "argocd.rbac.approverGroups", /^contradicts Pulumi\.preprod\.yaml policy\.regulated\.approverGroups = \[.*"eu"\]/);
    });

    it("plans with the checks between the stack files wherever they are (--config-dir)", async () => {
        write("copy", "preprod", edit("mimirTenant: preprod", "mimirTenant: copy"));
        fs.rmSync(path.join(dir, "Pulumi.hub.yaml"));
        await assert.rejects(planStack(readStackFile("copy", dir), dir), /cluster\.name = "preprod": contradicts Pulumi\.preprod\.yaml cluster\.name/);
    });
});
