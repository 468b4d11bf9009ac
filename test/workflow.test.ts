import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { REPO_ROOT } from "../tools/stackFile";

type Step = { uses?: string; run?: string; if?: string; with?: Record<string, unknown>; id?: string };
type Job = { name: string; needs?: string | string[]; steps: Step[]; strategy?: { matrix: { stack: string } } };

describe("pull-request workflow", () => {
    const doc = YAML.parse(fs.readFileSync(path.join(REPO_ROOT, ".github", "workflows", "preview.yml"), "utf8")) as {
        on: Record<string, unknown>;
        permissions: Record<string, string>;
        jobs: Record<string, Job>;
    };

    it("parses, runs on pull requests and names its jobs", () => {
        assert.ok("pull_request" in doc.on);
        assert.deepStrictEqual(Object.keys(doc.jobs), ["test", "stacks", "plan", "preview"]);
        for (const job of Object.values(doc.jobs)) {
            assert.match(job.name, /\S/);
        }
    });

    it("runs the README's test command after a clean install", () => {
        const runs = doc.jobs.test.steps.map((s) => s.run).filter(Boolean);
        assert.deepStrictEqual(runs, ["npm ci", "npm test"]);
    });

    it("plans every stack file and uploads the plan for review", () => {
        const plan = doc.jobs.plan;
        assert.strictEqual(plan.strategy?.matrix.stack, "${{ fromJSON(needs.stacks.outputs.stacks) }}");
        assert.ok(plan.steps.some((s) => s.run === 'npm run plan -- --stack "${{ matrix.stack }}" --out plan'));
        const upload = plan.steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"));
        assert.strictEqual(upload?.with?.path, "plan/${{ matrix.stack }}/");
    });

    it("previews with the policy pack and comments, only with credentials, and says so otherwise", () => {
        const steps = doc.jobs.preview.steps;
        const pulumi = steps.find((s) => s.uses?.startsWith("pulumi/actions@"))!;
        assert.strictEqual(pulumi.with?.command, "preview");
        assert.strictEqual(pulumi.with?.policyPacks, "policy");
        assert.strictEqual(pulumi.with?.["comment-on-pr"], true);
        assert.strictEqual(pulumi.if, "steps.creds.outputs.configured == 'true'");
        const creds = steps.find((s) => s.id === "creds")!;
        assert.match(creds.run ?? "", /::notice title=pulumi preview skipped::/);
        assert.strictEqual(doc.permissions["pull-requests"], "write");
        // The policy pack the workflow names exists.
        assert.ok(fs.existsSync(path.join(REPO_ROOT, "policy", "PulumiPolicy.yaml")));
    });
});
