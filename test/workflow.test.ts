import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { DEPLOY_WAVES } from "../components/cluster/config";
import { deployOrder, githubOutputLines } from "../tools/deployOrder";
import { REPO_ROOT, listStacks } from "../tools/stackFile";
import { parseVerifyArgs } from "../tools/verify";

import { parsePlanArgs } from "../tools/plan";
import { parseCommentArgs } from "../tools/prComment";
import { parseDriftArgs } from "../tools/driftReport";
import { parseIssueArgs } from "../tools/driftIssue";
import { FIXTURE_STACKS } from "./harness";

type VerifyArgs = Exclude<ReturnType<typeof parseVerifyArgs>, "help">;

/** The arguments after `after` of an `npm run ... -- <args> > file` line, as the shell splits them (no spaces inside quotes). */
const argvOf = (run: string, after = " -- "): string[] =>
    run
        .split(after)[1]
        .split(" > ")[0]
        .split(/\s+/)
        .map((a) => a.replace(/^"(.*)"$/, "$1"));

type Strings = Record<string, string>;
type Step = { uses?: string; run?: string; if?: string; id?: string; with?: Record<string, unknown>; env?: Strings; "continue-on-error"?: boolean };
type Strategy = { "fail-fast"?: boolean; matrix: { stack: string } };
type Job = Pick<Step, "if" | "env"> & { environment?: string; outputs?: Strings; needs?: string | string[]; steps: Step[]; strategy?: Strategy };
type Workflow = {
    on: { push?: { branches?: string[] }; schedule?: { cron: string }[] };
    permissions: Strings;
    concurrency: Record<string, unknown>;
    jobs: Record<string, Job>;
};
const workflowText = (name: string) => fs.readFileSync(path.join(REPO_ROOT, ".github", "workflows", name), "utf8");
/** A workflow derives its stacks from the stack files: outside comments it names none of them. */
const assertNamesNoStack = (text: string) => {
    for (const stack of listStacks(FIXTURE_STACKS)) {
        assert.ok(!new RegExp(`\\b${stack}\\b`).test(text.replace(/^\s*#.*$/gm, "")), `the workflow names the stack ${stack}`);
    }
};

describe("pull-request workflow", () => {
    const doc = YAML.parse(workflowText("preview.yml")) as Workflow;

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
        assert.strictEqual(
            run,
            'npm run plan -- --stack "${{ matrix.stack }}" --out plan --charts charts --pull-charts --crds remote --against "origin/${{ github.base_ref }}"',
        );
        // As the runner runs it for each stack and base branch: GitHub substitutes the expressions first.
        for (const stack of listStacks(FIXTURE_STACKS)) {
            const args = parsePlanArgs(argvOf(run.replace("${{ matrix.stack }}", stack).replace("${{ github.base_ref }}", "main")));
            assert.ok(args !== "help");
            const expected = [stack, path.resolve("plan"), "origin/main", "remote", path.resolve("charts"), true];
            assert.deepStrictEqual([args.stack, args.out, args.against, args.crds, args.charts, args.pull], expected);
        }
        // The base branch's commits are there to plan.
        assert.strictEqual(plan.steps.find((s) => s.uses?.startsWith("actions/checkout@"))?.with?.["fetch-depth"], 0);
        const upload = plan.steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"));
        assert.strictEqual(upload?.with?.path, "plan/${{ matrix.stack }}/");
        assert.strictEqual(upload?.if, "always()");
    });

    it("comments the short diff on the pull request per stack, also after a failed guardrail, never failing the job", () => {
        const steps = doc.jobs.plan.steps;
        const plan = steps.findIndex((s) => s.run?.startsWith("npm run plan"));
        const comment = steps.findIndex((s) => s.run?.includes("tools/prComment.ts"));
        assert.ok(comment > plan);
        const step = steps[comment];
        // The file the plan writes with --against, for the stack of this matrix entry, run as the plan script runs.
        assert.ok(step.run?.startsWith("node --require ./tools/swc-register.js tools/prComment.ts "));
        const argv = argvOf(step.run!.replace(/\$\{\{ matrix\.stack \}\}/g, "hub"), "tools/prComment.ts ");
        assert.deepStrictEqual(parseCommentArgs(argv), { stack: "hub", file: "plan/hub/diff-summary.md" });
        assert.strictEqual(step.if, "always() && hashFiles(format('plan/{0}/diff-summary.md', matrix.stack)) != ''");
        assert.strictEqual(step["continue-on-error"], true);
        assert.strictEqual(step.env?.GITHUB_TOKEN, "${{ secrets.GITHUB_TOKEN }}");
        assert.strictEqual(doc.permissions["pull-requests"], "write");
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
        // Its own environment per stack: preview credentials, never the deploy environment's.
        assert.strictEqual(doc.jobs.preview.environment, "preview-${{ matrix.stack }}");
        // The policy pack the workflow names exists.
        assert.ok(fs.existsSync(path.join(REPO_ROOT, "policy-pack", "PulumiPolicy.yaml")));
    });
});

describe("deploy workflow", () => {
    const doc = YAML.parse(workflowText("deploy.yml")) as Workflow;
    const waves = Array.from({ length: DEPLOY_WAVES }, (_, i) => `wave${i + 1}`);

    it("runs on a push to main only, one deploy at a time, never cancelled half-way", () => {
        assert.deepStrictEqual(Object.keys(doc.on), ["push"]);
        assert.deepStrictEqual(doc.on.push?.branches, ["main"]);
        assert.strictEqual(doc.concurrency["cancel-in-progress"], false);
        assert.deepStrictEqual(Object.keys(doc.jobs), ["order", "hubs", ...waves]);
        assert.deepStrictEqual(doc.permissions, { contents: "read", "id-token": "write" });
    });

    it("derives the order from the stack files, not from a list in the workflow", () => {
        const order = doc.jobs.order;
        assert.ok(order.steps.some((s) => s.run === 'npm run --silent deploy-order >> "$GITHUB_OUTPUT"'));
        for (const job of ["hubs", ...waves]) {
            assert.strictEqual(order.outputs?.[job], `\${{ steps.order.outputs.${job} }}`);
            assert.strictEqual(doc.jobs[job].strategy?.matrix.stack, `\${{ fromJSON(needs.order.outputs.${job}) }}`);
        }
        assertNamesNoStack(workflowText("deploy.yml"));
        assert.deepStrictEqual(deployOrder(FIXTURE_STACKS), { hubs: ["hub"], waves: [["preprod"]] });
    });

    it("orders any number of hubs and spokes in their waves, numbered without gaps, and refuses a stack without a role or a wave outside the jobs", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "order-"));
        const hub = fs.readFileSync(path.join(FIXTURE_STACKS, "Pulumi.hub.yaml"), "utf8");
        const spoke = fs.readFileSync(path.join(FIXTURE_STACKS, "Pulumi.preprod.yaml"), "utf8");
        const inWave = (wave: number) => spoke.replace("role: spoke", `role: spoke\n    wave: ${wave}`);
        for (const [name, text] of Object.entries({ hub, "hub-eu": hub, staging: spoke, "prod-eu": inWave(3), prod: inWave(3) })) {
            fs.writeFileSync(path.join(dir, `Pulumi.${name}.yaml`), text);
        }
        assert.deepStrictEqual(deployOrder(dir), { hubs: ["hub", "hub-eu"], waves: [["staging"], ["prod", "prod-eu"]] });
        assert.strictEqual(
            githubOutputLines(deployOrder(dir)),
            'hubs=["hub","hub-eu"]\nwave1=["staging"]\nwave2=["prod","prod-eu"]\nwave3=[]\nwave4=[]\nspokes=["staging","prod","prod-eu"]\nstacks=["hub","hub-eu","staging","prod","prod-eu"]\n',
        );
        fs.writeFileSync(path.join(dir, "Pulumi.odd.yaml"), hub.replace("role: hub", "role: primary"));
        assert.throws(() => deployOrder(dir), /stack "odd": argo-rollouts-addon:cluster\.role = "primary": must be one of hub, spoke/);
        fs.writeFileSync(path.join(dir, "Pulumi.odd.yaml"), inWave(DEPLOY_WAVES + 1));
        assert.throws(() => deployOrder(dir), /stack "odd": argo-rollouts-addon:cluster\.wave = 5: must be a whole number from 1 to 4/);
        fs.mkdirSync(path.join(dir, "empty"));
        assert.throws(() => deployOrder(path.join(dir, "empty")), /no stack file \(Pulumi\.<stack>\.yaml\) in .*: nothing to order/);
        assert.throws(() => deployOrder(path.join(dir, "missing")), /is not a folder/);
    });

    it("brings every hub up before any spoke, each wave after the one before it, and nothing after a failed hub or wave", () => {
        assert.strictEqual(doc.jobs.hubs.needs, "order");
        // A skipped hub job counts only when the project has no hub at all.
        assert.match(
            doc.jobs.wave1.if ?? "",
            /needs\.hubs\.result == 'success' \|\| \(needs\.hubs\.result == 'skipped' && needs\.order\.outputs\.hubs == '\[\]'\)/,
        );
        waves.forEach((wave, i) => {
            const before = i === 0 ? "hubs" : waves[i - 1];
            assert.deepStrictEqual(doc.jobs[wave].needs, ["order", before]);
            // Only a wave before that succeeded: the waves in use have no gaps, so a skipped one failed or followed a failure.
            assert.match(doc.jobs[wave].if ?? "", new RegExp(`!cancelled\\(\\) && .*${wave} != '\\[\\]' && \\(?needs\\.${before}\\.result == 'success'`));
        });
        // A failed up never cancels a sibling's up mid-flight (an interrupted create leaves an object the state does not know).
        for (const job of ["hubs", ...waves]) assert.strictEqual(doc.jobs[job].strategy?.["fail-fast"], false);
    });

    for (const job of ["hubs", ...waves]) {
        it(`${job}: a preview with the policy pack gates pulumi up, one environment per cluster, and no credentials fails the job`, () => {
            const j = doc.jobs[job];
            assert.strictEqual(j.environment, "${{ matrix.stack }}");
            const pulumiSteps = j.steps.filter((s) => s.uses?.startsWith("pulumi/actions@"));
            const commands = pulumiSteps.map((s) => `${s.id}: ${s.with?.command}`);
            assert.deepStrictEqual(commands, ["preview: preview", "up: up"]);
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
            assert.strictEqual(step.if, "steps.up.outcome == 'success'");
            // The stack of this job's matrix entry, the one the up just deployed; JSON for the report.
            assert.match(
                step.run ?? "",
                /^npm run --silent verify -- --stack "\$\{\{ matrix\.stack \}\}" --json .*> "verify-\$\{\{ matrix\.stack \}\}\.json"$/,
            );
            // As the runner runs it for each stack: GitHub substitutes the expression first.
            for (const stack of listStacks(FIXTURE_STACKS)) {
                const args = parseVerifyArgs(argvOf(step.run!.replace(/\$\{\{ matrix\.stack \}\}/g, stack))) as VerifyArgs;
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
});

describe("drift workflow", () => {
    const text = workflowText("drift.yml");
    const doc = YAML.parse(text) as Workflow;
    const job = doc.jobs.drift;
    const steps = job.steps;
    const stepNamed = (re: RegExp) => steps.find((s) => re.test(s.run ?? ""))!;
    /** The run line as the runner runs it for a stack: GitHub substitutes the expressions first. */
    const forStack = (run: string, stack: string, exit = "255") =>
        run
            .replace(/\$\{\{ matrix\.stack \}\}/g, stack)
            .replace("${{ steps.preview.outputs.exit }}", exit)
            .replace("${{ github.server_url }}/${{ github.repository }}/actions/runs/${{ github.run_id }}", "https://github.test/o/r/actions/runs/7");

    it("runs on a schedule (and by hand), never on a push or a pull request, one run at a time, reading the code, writing issues, minting cloud credentials", () => {
        assert.deepStrictEqual(Object.keys(doc.on).sort(), ["schedule", "workflow_dispatch"]);
        assert.strictEqual(doc.on.schedule?.length, 1);
        // Five fields, a daily time: minute and hour fixed, every day.
        assert.match(doc.on.schedule![0].cron, /^\d{1,2} \d{1,2} \* \* \*$/);
        assert.strictEqual(doc.concurrency.group, "drift");
        assert.deepStrictEqual(Object.keys(doc.jobs), ["order", "drift"]);
        assert.deepStrictEqual(doc.permissions, { contents: "read", issues: "write", "id-token": "write" });
    });

    it("checks every stack of the deploy order, each in its own environment, one failure hiding no other", () => {
        assert.ok(doc.jobs.order.steps.some((s) => s.run === 'npm run --silent deploy-order >> "$GITHUB_OUTPUT"'));
        assert.strictEqual(doc.jobs.order.outputs?.stacks, "${{ steps.order.outputs.stacks }}");
        assert.strictEqual(job.strategy?.matrix.stack, "${{ fromJSON(needs.order.outputs.stacks) }}");
        assert.strictEqual(job.strategy?.["fail-fast"], false);
        assert.strictEqual(job.environment, "drift-${{ matrix.stack }}");
        assertNamesNoStack(text);
        // Missing credentials are an error: a cluster that was not checked is not clean.
        const creds = steps.find((s) => s.id === "creds")?.run ?? "";
        assert.match(creds, /::error title=drift not checked::.*drift-\$\{\{ matrix\.stack \}\} environment.*\n\s*exit 1/);
    });

    it("installs the Node.js and the Pulumi CLI the project pins", () => {
        for (const j of Object.values(doc.jobs)) {
            assert.strictEqual(j.steps.find((s) => s.uses?.startsWith("actions/setup-node@"))?.with?.["node-version"], 20);
            assert.ok(j.steps.some((s) => s.run === "npm ci"));
        }
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
        const install = steps.find((s) => s.uses?.startsWith("pulumi/actions@"))!;
        // No command: the action only installs the CLI, whose preview JSON the report reads.
        assert.deepStrictEqual(install.with, { "pulumi-version": pkg.dependencies["@pulumi/pulumi"] });
    });

    it("previews the stack refreshed, expecting no change, with the policy pack, as JSON, keeping the exit status", () => {
        const preview = steps.find((s) => s.id === "preview")!;
        const line = (preview.run ?? "").split("\n").find((l) => l.startsWith("pulumi preview "))!;
        const argv = line.split(" > ")[0].split(/\s+/);
        const missing = ["--refresh", "--expect-no-changes", "--json", "--non-interactive"].filter((f) => !argv.includes(f));
        assert.deepStrictEqual(missing, []);
        assert.strictEqual(argv[argv.indexOf("--policy-pack") + 1], "policy-pack");
        assert.strictEqual(argv[argv.indexOf("--stack") + 1], '"${STACK_NAME}"');
        assert.strictEqual(job.env?.STACK_NAME, "${{ vars.PULUMI_ORG && format('{0}/{1}', vars.PULUMI_ORG, matrix.stack) || matrix.stack }}");
        assert.strictEqual(line.split(" > ")[1], '"preview-${{ matrix.stack }}.json"');
        // Drift makes the preview exit non-zero: the step records it and goes on to the report.
        assert.match(preview.run ?? "", /set \+e\n.*\necho "exit=\$\?" >> "\$GITHUB_OUTPUT"/);
    });

    it("verifies the stack read-only, as JSON, without stopping the report", () => {
        const verify = steps.find((s) => s.id === "verify")!;
        assert.strictEqual(verify["continue-on-error"], true);
        assert.ok(steps.indexOf(verify) > steps.findIndex((s) => s.id === "preview"));
        for (const stack of listStacks(FIXTURE_STACKS)) {
            const args = parseVerifyArgs(argvOf(forStack(verify.run!, stack))) as VerifyArgs;
            assert.deepStrictEqual([args.stack, args.json, args.printRole], [stack, true, false]);
            assert.ok(forStack(verify.run!, stack).endsWith(` > "verify-${stack}.json"`));
        }
    });

    it("turns the preview's JSON and verify's report into the stack's report, then its one issue", () => {
        const report = steps.find((s) => s.id === "report")!;
        assert.strictEqual(report["continue-on-error"], true);
        assert.ok(steps.indexOf(report) > steps.findIndex((s) => s.id === "verify"));
        const issue = stepNamed(/tools\/driftIssue\.ts/);
        for (const stack of listStacks(FIXTURE_STACKS)) {
            assert.deepStrictEqual(parseDriftArgs(argvOf(forStack(report.run!, stack))), {
                stack,
                preview: `preview-${stack}.json`,
                previewExit: 255,
                verify: `verify-${stack}.json`,
                runUrl: "https://github.test/o/r/actions/runs/7",
                out: `drift-${stack}.md`,
            });
            assert.deepStrictEqual(parseIssueArgs(argvOf(forStack(issue.run!, stack), "tools/driftIssue.ts ")), { stack, file: `drift-${stack}.md` });
        }
        assert.ok(report.run!.startsWith("npm run --silent drift-report -- "));
        assert.ok(steps.indexOf(issue) > steps.indexOf(report));
        assert.strictEqual(issue.if, "steps.report.outcome == 'success' || steps.report.outcome == 'failure'");
        assert.strictEqual(issue.env?.GITHUB_TOKEN, "${{ secrets.GITHUB_TOKEN }}");
        const upload = steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"))!;
        assert.strictEqual(upload.if, "always()");
        assert.strictEqual(upload.with?.name, "drift-${{ matrix.stack }}");
        assert.deepStrictEqual((upload.with?.path as string).trim().split(/\s*\n\s*/), [
            "preview-${{ matrix.stack }}.json",
            "verify-${{ matrix.stack }}.json",
            "drift-${{ matrix.stack }}.md",
        ]);
        // Drift fails the job too, after the issue is written.
        const last = steps[steps.length - 1];
        assert.strictEqual(last.if, "steps.report.outcome != 'success'");
        assert.match(last.run ?? "", /::error title=drift on \$\{\{ matrix\.stack \}\}::.*\n\s*exit 1/);
    });
});
