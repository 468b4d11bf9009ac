import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { PROJECT } from "../components/config/reader";
import { planCases, syntheticHubFile, syntheticStacks } from "../tools/bench";
import { Arrival, Phases, Request, breakdownTable, medianPhases, phases } from "../e2e/lib/eventLog";
import { deployOrder } from "../tools/deployOrder";
import { scriptArgs } from "../tools/cli";
import { REPO_ROOT, listStacks, readStackFile } from "../tools/stackFile";
import { FIXTURE_STACKS } from "./harness";

describe("benchmark", () => {
    it("runs package.json's plan script with the Node that runs it, as npm does", () => {
        const script = "node --require ./tools/swc-register.js tools/plan.ts";
        assert.deepStrictEqual(scriptArgs(script, REPO_ROOT), ["--require", "./tools/swc-register.js", "tools/plan.ts"]);
        // A package's command is its bin script, run by the same Node.
        const bin = fs.realpathSync(path.join(REPO_ROOT, "node_modules", "ts-node", "dist", "bin.js"));
        assert.deepStrictEqual(scriptArgs("ts-node --transpile-only tools/plan.ts", REPO_ROOT), [bin, "--transpile-only", "tools/plan.ts"]);
        // Anything a shell would read differently is refused rather than run another way.
        assert.throws(() => scriptArgs("node tools/plan.ts && echo done", REPO_ROOT), /not one plain command/);
        assert.throws(() => scriptArgs('node "tools/plan.ts"', REPO_ROOT), /not one plain command/);
    });

    it("splits a run's engine events, stamped as they arrived, and the program's requests into phases", () => {
        type Log = { totalMs: number; requests: Request[]; arrivals: Arrival[]; expected: Phases };
        const log = JSON.parse(fs.readFileSync(path.join(__dirname, "fixtures", "bench-event-log.json"), "utf8")) as Log;
        const p = phases(log.arrivals, log.requests, log.totalMs);
        assert.deepStrictEqual([p, medianPhases([p, { ...p, steps: {}, chartMs: 0 }, p])], [log.expected, log.expected]);
        // Step types in the order they began (the provider after the stage, though its summed time is the smallest).
        const rows = breakdownTable([["hub", p]]).map((r) => r.replace(/ \(summed.*?\)/, ""));
        assert.deepStrictEqual(rows.slice(9, 11), [
            "| component: argo-rollouts-addon:stages:Policy | 4250 (1) at 4900-9150 |",
            "| steps: pulumi:providers:kubernetes | 50 (1) at 5000-5050 |",
        ]);
        assert.strictEqual(rows[7], "| chart (its step and objects, wall, at from-to) | 3000 at 5200-8200 |");
    });

    it("makes a synthetic hub of the hub's stack file with n spokes, a cluster, tenant and ArgoCD of its own, and nothing else changed", () => {
        const read = (text: string) => YAML.parse(text) as { config: Record<string, Record<string, unknown>> };
        const [hub, synthetic] = [read(fs.readFileSync(path.join(FIXTURE_STACKS, "Pulumi.hub.yaml"), "utf8")), read(syntheticHubFile(3, FIXTURE_STACKS))];
        const [spokes, cluster, argo, name] = [`${PROJECT}:spokes`, `${PROJECT}:cluster`, `${PROJECT}:argocd`, "hub-3-spokes"];
        const queried = (synthetic.config[spokes] as unknown as { name: string; query: boolean }[]).map((s) => `${s.name}: ${s.query}`);
        assert.deepStrictEqual(queried, ["spoke-0: true", "spoke-1: true", "spoke-2: true"]);
        const own = { [cluster]: { ...hub.config[cluster], name, mimirTenant: name }, [argo]: { ...hub.config[argo], runsOn: name } };
        assert.deepStrictEqual({ ...synthetic.config, [spokes]: undefined }, { ...hub.config, [spokes]: undefined, ...own });
    });

    it("puts the synthetic hubs, made of the stack file whose role is hub whatever its name, beside the project's stack files, and plans those then these", () => {
        const project = fs.mkdtempSync(path.join(os.tmpdir(), "bench-hubs-"));
        fs.copyFileSync(path.join(FIXTURE_STACKS, "Pulumi.hub.yaml"), path.join(project, "Pulumi.central.yaml"));
        fs.copyFileSync(path.join(FIXTURE_STACKS, "Pulumi.preprod.yaml"), path.join(project, "Pulumi.staging.yaml"));
        const [hub] = deployOrder(project).hubs;
        assert.strictEqual(hub, "central");
        const dir = syntheticStacks([1, 10], hub, project);
        assert.deepStrictEqual(listStacks(dir), ["central", "hub-1-spokes", "hub-10-spokes", "staging"]);
        const cases = planCases(listStacks(project), dir, [1, 10]);
        const planned = cases.map((c) => `${c.label}=${c.stack}${c.configDir === dir ? " there" : ""}`);
        assert.deepStrictEqual(planned, ["central=central", "staging=staging", "hub-1-spokes=hub-1-spokes there", "hub-10-spokes=hub-10-spokes there"]);
        const file = readStackFile("hub-10-spokes", dir);
        assert.strictEqual((JSON.parse(file.config[`${PROJECT}:spokes`]) as unknown[]).length, 10);
        // The clusters of the files beside it are the project's and the synthetic hubs' own.
        const clusters = (f: typeof file) => new Set(f.projectStacks?.map((s) => s.cluster));
        assert.deepStrictEqual(clusters(file), new Set([...clusters(readStackFile("central", project)), "central-1-spokes", "central-10-spokes"]));
    });
});
