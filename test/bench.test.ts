import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { PROJECT } from "../components/config/reader";
import { planCases, planCommand, syntheticHubFile, syntheticStacks } from "../tools/bench";
import { REPO_ROOT, listStacks, readStackFile } from "../tools/stackFile";
import { FIXTURE_STACKS } from "./harness";

/** The benchmark's plan cases run the plan as `npm run plan` does; no figure is asserted here. */
describe("benchmark", () => {
    it("runs package.json's plan script with the Node that runs it, as npm does", () => {
        assert.deepStrictEqual(planCommand("node --require ./tools/swc-register.js tools/plan.ts"), ["--require", "./tools/swc-register.js", "tools/plan.ts"]);
        // A package's command is its bin script, run by the same Node.
        const [bin, ...rest] = planCommand("ts-node --transpile-only tools/plan.ts");
        assert.strictEqual(bin, fs.realpathSync(path.join(REPO_ROOT, "node_modules", "ts-node", "dist", "bin.js")));
        assert.deepStrictEqual(rest, ["--transpile-only", "tools/plan.ts"]);
        // Anything a shell would read differently is refused rather than run another way.
        assert.throws(() => planCommand("node tools/plan.ts && echo done"), /not one plain command/);
        assert.throws(() => planCommand('node "tools/plan.ts"'), /not one plain command/);
    });

    it("plans with the swc loader, not ts-node", () => {
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
        assert.deepStrictEqual(planCommand(pkg.scripts.plan), ["--require", "./tools/swc-register.js", "tools/plan.ts"]);
    });

    it("plans the hub with its validators cached and with an empty cache, every other case cached", () => {
        const cases = planCases("/synthetic", [1, 10]);
        assert.deepStrictEqual(
            cases.map((c) => [c.label, c.stack, c.cold]),
            [
                ["hub", "hub", false],
                ["hub, cold cache", "hub", true],
                ["preprod", "preprod", false],
                ["hub-1-spokes", "hub-1-spokes", false],
                ["hub-10-spokes", "hub-10-spokes", false],
            ],
        );
        assert.deepStrictEqual(cases.filter((c) => c.configDir === "/synthetic").map((c) => c.stack), ["hub-1-spokes", "hub-10-spokes"]);
    });

    it("makes a synthetic hub of the hub's stack file with n spokes and nothing else changed", () => {
        const hub = YAML.parse(fs.readFileSync(path.join(FIXTURE_STACKS, "Pulumi.hub.yaml"), "utf8")) as { config: Record<string, unknown> };
        const synthetic = YAML.parse(syntheticHubFile(3, FIXTURE_STACKS)) as { config: Record<string, unknown> };
        const spokes = synthetic.config[`${PROJECT}:spokes`] as { name: string; query: boolean }[];
        assert.deepStrictEqual(
            spokes.map((s) => s.name),
            ["spoke-0", "spoke-1", "spoke-2"],
        );
        assert.ok(spokes.every((s) => s.query));
        assert.deepStrictEqual({ ...synthetic.config, [`${PROJECT}:spokes`]: undefined }, { ...hub.config, [`${PROJECT}:spokes`]: undefined });
    });

    it("puts the synthetic hubs beside the project's stack files", () => {
        const dir = syntheticStacks([1, 10], FIXTURE_STACKS);
        try {
            assert.deepStrictEqual(listStacks(dir), [...listStacks(FIXTURE_STACKS), "hub-1-spokes", "hub-10-spokes"].sort());
            const file = readStackFile("hub-10-spokes", dir);
            assert.strictEqual((JSON.parse(file.config[`${PROJECT}:spokes`]) as unknown[]).length, 10);
            // The clusters of the files beside it are the project's, as for the hub itself.
            assert.deepStrictEqual(file.projectClusters, readStackFile("hub", FIXTURE_STACKS).projectClusters);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
