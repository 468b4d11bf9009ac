/** components/config/project.ts: the rules between the stack files of one project, from each stack's own run. */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ConfigError, ConfigProblem } from "../components/config";
import { configFromStackFile, readStackFile } from "../tools/stackFile";
import { FIXTURE_STACKS } from "./harness";

describe("configuration across a project's stack files", () => {
    let dir: string;
    beforeEach(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "project-stacks-"));
        for (const stack of ["hub", "preprod"]) {
            fs.copyFileSync(path.join(FIXTURE_STACKS, `Pulumi.${stack}.yaml`), path.join(dir, `Pulumi.${stack}.yaml`));
        }
    });

    const write = (stack: string, from: "hub" | "preprod", edit: (text: string) => string) =>
        fs.writeFileSync(path.join(dir, `Pulumi.${stack}.yaml`), edit(fs.readFileSync(path.join(FIXTURE_STACKS, `Pulumi.${from}.yaml`), "utf8")));
    const problemsOf = (stack: string): ConfigProblem[] => {
        try {
            configFromStackFile(readStackFile(stack, dir));
        } catch (e) {
            assert.ok(e instanceof ConfigError, String(e));
            return e.problems;
        }
        return [];
    };

    it("refuses two stack files for the same cluster", () => {
        write("preprod-copy", "preprod", (t) => t.replace("mimirTenant: preprod", "mimirTenant: preprod-copy"));
        const found = problemsOf("preprod-copy").filter((p) => p.key === "cluster.name");
        assert.strictEqual(found.length, 1, JSON.stringify(found));
        assert.match(found[0].allowed, /Pulumi\.preprod\.yaml names the same cluster/);
    });

    it("refuses one Mimir tenant for two clusters", () => {
        write("prod", "preprod", (t) => t.replace(/name: preprod\n/, "name: prod\n"));
        const found = problemsOf("prod").filter((p) => p.key === "cluster.mimirTenant");
        assert.ok(
            found.some((p) => /Pulumi\.preprod\.yaml gives cluster preprod the same tenant/.test(p.allowed)),
            JSON.stringify(found),
        );
    });

    it("refuses a hub's spoke entry whose tenant differs from the spoke's own stack file, from either side", () => {
        write("hub", "hub", (t) => t.replace("tenant: preprod", "tenant: preprod-old"));
        const hub = problemsOf("hub").filter((p) => p.key === "spokes[0].tenant");
        assert.strictEqual(hub.length, 1, JSON.stringify(hub));
        assert.match(hub[0].allowed, /must be the spoke's own cluster\.mimirTenant, preprod \(Pulumi\.preprod\.yaml\)/);
        const spoke = problemsOf("preprod").filter((p) => p.key === "cluster.mimirTenant");
        assert.ok(
            spoke.some((p) => /Pulumi\.hub\.yaml lists preprod under tenant preprod-old/.test(p.allowed)),
            JSON.stringify(spoke),
        );
    });
});
