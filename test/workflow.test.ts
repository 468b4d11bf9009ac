import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { deployOrder, githubOutputLines } from "../tools/deployOrder";
import { REPO_ROOT, listStacks } from "../tools/stackFile";
import { parseVerifyArgs } from "../tools/verify";
import { parsePlanArgs } from "../tools/plan";
import { parseCommentArgs } from "../tools/prComment";
import { FIXTURE_STACKS } from "./harness";

/** The arguments after `--` of an `npm run ... -- <args> > file` line, as the shell splits them (no spaces inside quotes). */
const argvOf = (run: string): string[] =>
    run
        .split(" -- ")[1]
        .split(" > ")[0]
        .split(/\s+/)
        .map((a) => a.replace(/^"(.*)"$/, "$1"));

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
        // The README's quick start gives the same two commands as one line.
        const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
        assert.match(readme, /^npm ci && npm test +# /m);
    });

    it("plans every stack file against the base branch and uploads the plan and its diff for review", () => {
        const plan = doc.jobs.plan;
        assert.strictEqual(plan.strategy?.matrix.stack, "${{ fromJSON(needs.stacks.outputs.stacks) }}");
        const run = plan.steps.find((s) => s.run?.startsWith("npm run plan"))?.run ?? "";
        assert.strictEqual(run, 'npm run plan -- --stack "${{ matrix.stack }}" --out plan --against "origin/${{ github.base_ref }}"');
        // As the runner runs it for each stack and base branch: GitHub substitutes the expressions first.
        for (const stack of listStacks(FIXTURE_STACKS)) {
            const args = parsePlanArgs(argvOf(run.replace("${{ matrix.stack }}", stack).replace("${{ github.base_ref }}", "main")));
            assert.ok(args !== "help");
            assert.deepStrictEqual([args.stack, args.out, args.against], [stack, path.resolve("plan"), "origin/main"]);
        }
        // The base branch's commits are there to plan.
        assert.strictEqual(plan.steps.find((s) => s.uses?.startsWith("actions/checkout@"))?.with?.["fetch-depth"], 0);
        const upload = plan.steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"));
        assert.strictEqual(upload?.with?.path, "plan/${{ matrix.stack }}/");
        assert.strictEqual(upload?.if, "always()");
    });

    it("comments the short diff on the pull request per stack, also after a failed guardrail, never failing the job", () => {
        const steps = doc.jobs.plan.steps as (Step & { env?: Record<string, string>; "continue-on-error"?: boolean })[];
        const plan = steps.findIndex((s) => s.run?.startsWith("npm run plan"));
        const comment = steps.findIndex((s) => s.run?.includes("tools/prComment.ts"));
        assert.ok(comment > plan);
        const step = steps[comment];
        // The file the plan writes with --against, for the stack of this matrix entry.
        assert.strictEqual(step.run, 'node --require ./tools/swc-register.js tools/prComment.ts --stack "${{ matrix.stack }}" --file "plan/${{ matrix.stack }}/diff-summary.md"');
        assert.deepStrictEqual(parseCommentArgs(argvOf(` -- ${step.run!.split("tools/prComment.ts ")[1]}`.replace(/\$\{\{ matrix\.stack \}\}/g, "hub"))), { stack: "hub", file: "plan/hub/diff-summary.md" });
        assert.strictEqual(step.if, "always() && hashFiles(format('plan/{0}/diff-summary.md', matrix.stack)) != ''");
        assert.strictEqual(step["continue-on-error"], true);
        assert.strictEqual(step.env?.GITHUB_TOKEN, "${{ secrets.GITHUB_TOKEN }}");
        assert.strictEqual(doc.permissions["pull-requests"], "write");
        // The script is run as the plan runs: the command is the plan script's loader.
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
        assert.ok(pkg.scripts.plan.startsWith("node --require ./tools/swc-register.js "));
    });

    it("plans on the Node.js the README names", () => {
        assert.strictEqual(doc.jobs.plan.steps.find((s) => s.uses?.startsWith("actions/setup-node@"))?.with?.["node-version"], 20);
    });

    it("previews with the policy pack and comments, only with credentials, and says so otherwise", () => {
        const steps = doc.jobs.preview.steps;
        const pulumi = steps.find((s) => s.uses?.startsWith("pulumi/actions@"))!;
        assert.strictEqual(pulumi.with?.command, "preview");
        assert.strictEqual(pulumi.with?.policyPacks, "policy-pack");
        assert.strictEqual(pulumi.with?.["comment-on-pr"], true);
        assert.strictEqual(pulumi.if, "steps.creds.outputs.configured == 'true'");
        const creds = steps.find((s) => s.id === "creds")!;
        assert.match(creds.run ?? "", /::notice title=pulumi preview skipped::.*preview-\$\{\{ matrix\.stack \}\} environment/);
        assert.strictEqual(doc.permissions["pull-requests"], "write");
        // Its own environment per stack: preview credentials, never the deploy environment's.
        assert.strictEqual((doc.jobs.preview as Job & { environment?: string }).environment, "preview-${{ matrix.stack }}");
        // The policy pack the workflow names exists.
        assert.ok(fs.existsSync(path.join(REPO_ROOT, "policy-pack", "PulumiPolicy.yaml")));
    });
});

describe("deploy workflow", () => {
    type DeployJob = Job & { if?: string; environment?: string; outputs?: Record<string, string>; strategy?: { "fail-fast"?: boolean; matrix: { stack: string } } };
    const doc = YAML.parse(fs.readFileSync(path.join(REPO_ROOT, ".github", "workflows", "deploy.yml"), "utf8")) as {
        on: Record<string, { branches?: string[] }>;
        permissions: Record<string, string>;
        concurrency: { group: string; "cancel-in-progress": boolean };
        jobs: Record<string, DeployJob>;
    };

    it("runs on a push to main only, one deploy at a time, never cancelled half-way", () => {
        assert.deepStrictEqual(Object.keys(doc.on), ["push"]);
        assert.deepStrictEqual(doc.on.push.branches, ["main"]);
        assert.strictEqual(doc.concurrency["cancel-in-progress"], false);
        assert.deepStrictEqual(Object.keys(doc.jobs), ["order", "hubs", "spokes"]);
    });

    it("derives the order from the stack files, not from a list in the workflow", () => {
        const order = doc.jobs.order;
        assert.ok(order.steps.some((s) => s.run === 'npm run --silent deploy-order >> "$GITHUB_OUTPUT"'));
        assert.strictEqual(order.outputs?.hubs, "${{ steps.order.outputs.hubs }}");
        assert.strictEqual(doc.jobs.hubs.strategy?.matrix.stack, "${{ fromJSON(needs.order.outputs.hubs) }}");
        assert.strictEqual(doc.jobs.spokes.strategy?.matrix.stack, "${{ fromJSON(needs.order.outputs.spokes) }}");
        const text = fs.readFileSync(path.join(REPO_ROOT, ".github", "workflows", "deploy.yml"), "utf8");
        for (const stack of listStacks(FIXTURE_STACKS)) {
            assert.ok(!new RegExp(`\\b${stack}\\b`).test(text.replace(/^\s*#.*$/gm, "")), `the workflow names the stack ${stack}`);
        }
        assert.deepStrictEqual(deployOrder(FIXTURE_STACKS), { hubs: ["hub"], spokes: ["preprod"] });
    });

    it("orders any number of hubs and spokes, and refuses a stack without a role", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "order-"));
        const hub = fs.readFileSync(path.join(FIXTURE_STACKS, "Pulumi.hub.yaml"), "utf8");
        const spoke = fs.readFileSync(path.join(FIXTURE_STACKS, "Pulumi.preprod.yaml"), "utf8");
        for (const name of ["hub", "hub-eu"]) {
            fs.writeFileSync(path.join(dir, `Pulumi.${name}.yaml`), hub);
        }
        for (const name of ["preprod", "prod", "prod-eu"]) {
            fs.writeFileSync(path.join(dir, `Pulumi.${name}.yaml`), spoke);
        }
        assert.deepStrictEqual(deployOrder(dir), { hubs: ["hub", "hub-eu"], spokes: ["preprod", "prod", "prod-eu"] });
        assert.strictEqual(githubOutputLines(deployOrder(dir)), 'hubs=["hub","hub-eu"]\nspokes=["preprod","prod","prod-eu"]\nstacks=["hub","hub-eu","preprod","prod","prod-eu"]\n');
        fs.writeFileSync(path.join(dir, "Pulumi.odd.yaml"), hub.replace("role: hub", "role: primary"));
        assert.throws(() => deployOrder(dir), /stack "odd": argo-rollouts-addon:cluster\.role = "primary": must be one of hub, spoke/);
    });

    it("brings every hub up before any spoke, and no spoke after a failed hub", () => {
        const needs = doc.jobs.spokes.needs;
        assert.ok(Array.isArray(needs) && needs.includes("hubs") && needs.includes("order"));
        assert.strictEqual(doc.jobs.hubs.needs, "order");
        // A skipped hub job counts only when the project has no hub at all.
        assert.match(doc.jobs.spokes.if ?? "", /needs\.hubs\.result == 'success' \|\| \(needs\.hubs\.result == 'skipped' && needs\.order\.outputs\.hubs == '\[\]'\)/);
        assert.match(doc.jobs.spokes.if ?? "", /!cancelled\(\)/);
        // A failed hub never cancels a sibling hub's up mid-flight (an interrupted create leaves an
        // object the state does not know); the spokes wait for all of them.
        assert.strictEqual(doc.jobs.hubs.strategy?.["fail-fast"], false);
        assert.strictEqual(doc.jobs.spokes.strategy?.["fail-fast"], false);
    });

    for (const job of ["hubs", "spokes"]) {
        it(`${job}: a preview with the policy pack gates pulumi up, one environment per cluster, and no credentials fails the job`, () => {
            const j = doc.jobs[job];
            assert.strictEqual(j.environment, "${{ matrix.stack }}");
            const pulumiSteps = j.steps.filter((s) => s.uses?.startsWith("pulumi/actions@"));
            assert.deepStrictEqual(pulumiSteps.map((s) => [s.id, s.with?.command]), [["preview", "preview"], ["up", "up"]]);
            const [preview, up] = pulumiSteps;
            for (const step of pulumiSteps) {
                assert.strictEqual(step.with?.policyPacks, "policy-pack");
                assert.match(String(step.with?.["stack-name"]), /matrix\.stack/);
            }
            assert.strictEqual(preview.with?.["stack-name"], up.with?.["stack-name"]);
            // The up runs only after the preview of the same stack succeeded: a check that refuses
            // the stack fails the preview, before anything is changed.
            assert.strictEqual(up.if, "steps.preview.outcome == 'success'");
            assert.strictEqual(j.steps.indexOf(up), j.steps.indexOf(preview) + 1);
            // Missing credentials are an error, never a skip that counts as success.
            const creds = j.steps.find((s) => s.id === "creds")!;
            assert.match(creds.run ?? "", /::error title=pulumi up not run::.*\n\s*exit 1/);
            assert.ok(!j.steps.some((s) => /configured/.test(s.if ?? "")), "no step is skipped for missing credentials");
        });

        it(`${job}: verifies the stack's cluster right after its pulumi up, and keeps the JSON report`, () => {
            const steps = doc.jobs[job].steps;
            const up = steps.findIndex((s) => s.uses?.startsWith("pulumi/actions@") && s.with?.command === "up");
            assert.strictEqual(steps[up].id, "up");
            const verify = steps.findIndex((s) => s.id === "verify");
            assert.strictEqual(verify, up + 1, "verify is the step right after the up");
            const step = steps[verify];
            // Skipped when the up did not run or did not succeed.
            assert.strictEqual(step.if, "steps.up.outcome == 'success'");
            // The stack of this job's matrix entry, the one the up just deployed; JSON for the report.
            assert.match(step.run ?? "", /^npm run --silent verify -- --stack "\$\{\{ matrix\.stack \}\}" --json .*> "verify-\$\{\{ matrix\.stack \}\}\.json"$/);
            // As the runner runs it for each stack: GitHub substitutes the expression first.
            for (const stack of listStacks(FIXTURE_STACKS)) {
                const args = parseVerifyArgs(argvOf(step.run!.replace(/\$\{\{ matrix\.stack \}\}/g, stack)));
                assert.deepStrictEqual([args.stack, args.json, args.printRole], [stack, true, false]);
            }
            const upload = steps[verify + 1];
            assert.match(upload.uses ?? "", /^actions\/upload-artifact@/);
            assert.strictEqual(upload.with?.path, "verify-${{ matrix.stack }}.json");
            assert.strictEqual(upload.with?.name, "verify-${{ matrix.stack }}");
            // Kept whether verify passed or failed, never when it did not run.
            assert.match(upload.if ?? "", /steps\.verify\.outcome == 'success' \|\| steps\.verify\.outcome == 'failure'/);
        });
    }

    it("can mint cloud credentials and nothing more", () => {
        assert.deepStrictEqual(doc.permissions, { contents: "read", "id-token": "write" });
    });
});
