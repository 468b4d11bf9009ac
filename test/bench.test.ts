import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { PROJECT } from "../components/config/reader";
import { planCases, syntheticHubFile, syntheticStacks } from "../tools/bench";
import { deployOrder } from "../tools/deployOrder";
import { scriptArgs } from "../tools/cli";
import { REPO_ROOT, listStacks, readStackFile } from "../tools/stackFile";
import { FIXTURE_STACKS } from "./harness";

/** The benchmark's plan cases run the plan as `npm run plan` does; no figure is asserted here. */
describe("benchmark", () => {
    it("runs package.json's plan script with the Node that runs it, as npm does", () => {
        const script = "node --require ./tools/swc-register.js tools/plan.ts";
        assert.deepStrictEqual(scriptArgs(script, REPO_ROOT), ["--require", "./tools/swc-register.js", "tools/plan.ts"]);
        // A package's command is its bin script, run by the same Node.
        const [bin, ...rest] = scriptArgs("ts-node --transpile-only tools/plan.ts", REPO_ROOT);
        assert.strictEqual(bin, fs.realpathSync(path.join(REPO_ROOT, "node_modules", "ts-node", "dist", "bin.js")));
        assert.deepStrictEqual(rest, ["--transpile-only", "tools/plan.ts"]);
        // Anything a shell would read differently is refused rather than run another way.
        assert.throws(() => scriptArgs("node tools/plan.ts && echo done", REPO_ROOT), /not one plain command/);
        assert.throws(() => scriptArgs('node "tools/plan.ts"', REPO_ROOT), /not one plain command/);
    });

    it("plans every stack file of the project, then the synthetic hubs from their own folder", () => {
        const cases = planCases(["central", "staging"], "/synthetic", [1, 10]);
        const planned = cases.map((c) => `${c.label}: stack ${c.stack} from ${c.configDir ?? "the project"}`);
        assert.deepStrictEqual(planned, [
            "central: stack central from the project",
            "staging: stack staging from the project",
            "hub-1-spokes: stack hub-1-spokes from /synthetic",
            "hub-10-spokes: stack hub-10-spokes from /synthetic",
        ]);
    });

    it("makes a synthetic hub of the hub's stack file with n spokes and nothing else changed", () => {
        const hub = YAML.parse(fs.readFileSync(path.join(FIXTURE_STACKS, "Pulumi.hub.yaml"), "utf8")) as { config: Record<string, unknown> };
        const synthetic = YAML.parse(syntheticHubFile(3, FIXTURE_STACKS)) as { config: Record<string, unknown> };
        const spokes = synthetic.config[`${PROJECT}:spokes`] as { name: string; query: boolean }[];
        const queried = spokes.map((s) => `${s.name}: ${s.query}`);
        assert.deepStrictEqual(queried, ["spoke-0: true", "spoke-1: true", "spoke-2: true"]);
        assert.deepStrictEqual({ ...synthetic.config, [`${PROJECT}:spokes`]: undefined }, { ...hub.config, [`${PROJECT}:spokes`]: undefined });
    });

    it("puts the synthetic hubs, made of the stack file whose role is hub whatever its name, beside the project's stack files", () => {
        const project = fs.mkdtempSync(path.join(os.tmpdir(), "bench-hubs-"));
        fs.copyFileSync(path.join(FIXTURE_STACKS, "Pulumi.hub.yaml"), path.join(project, "Pulumi.central.yaml"));
        fs.copyFileSync(path.join(FIXTURE_STACKS, "Pulumi.preprod.yaml"), path.join(project, "Pulumi.staging.yaml"));
        const [hub] = deployOrder(project).hubs;
        assert.strictEqual(hub, "central");
        const dir = syntheticStacks([1, 10], hub, project);
        assert.deepStrictEqual(listStacks(dir), ["central", "hub-1-spokes", "hub-10-spokes", "staging"]);
        const file = readStackFile("hub-10-spokes", dir);
        assert.strictEqual((JSON.parse(file.config[`${PROJECT}:spokes`]) as unknown[]).length, 10);
        // The clusters of the files beside it are the project's, as for the hub itself.
        const clusters = (f: typeof file) => new Set(f.projectStacks?.map((s) => s.cluster));
        assert.deepStrictEqual(clusters(file), clusters(readStackFile("central", project)));
    });
});
