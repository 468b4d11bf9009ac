import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as os from "os";
import { defaultJobs, grepScenarios, parseE2eArgs } from "../e2e/lib/args";
import { parseAdoptCheckArgs } from "../tools/adopt-check";
import { parseBenchArgs } from "../tools/bench";
import { parseIssueArgs } from "../tools/driftIssue";
import { parseDriftArgs } from "../tools/driftReport";
import { parsePlanArgs } from "../tools/plan";
import { parseCommentArgs } from "../tools/prComment";
import { parseVerifyArgs } from "../tools/verify";
import { parseDeployOrderArgs } from "../tools/deployOrder";
import { REPO_ROOT } from "../tools/stackFile";

const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };

/** The project's own commands: every npm script but the type-check, the tests, the linter and the formatter. */
const COMMANDS = Object.keys(pkg.scripts).filter((name) => !["typecheck", "test", "test:unit", "test:integration", "lint", "format"].includes(name));

describe("the project's commands", () => {
    it("are the ones the README lists, each loading its TypeScript through the swc loader, not ts-node", () => {
        assert.deepStrictEqual(COMMANDS.sort(), ["adopt-check", "bench", "delivery", "deploy-order", "docs", "drift-report", "e2e", "plan", "verify"]);
        for (const name of COMMANDS) {
            assert.match(pkg.scripts[name], /^node --require \.\/tools\/swc-register\.js (tools|e2e)\/[\w-]+\.ts$/, name);
        }
        const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
        for (const name of COMMANDS) {
            assert.ok(readme.includes(`npm run ${name}`) || readme.includes(`npm run --silent ${name}`), `README: npm run ${name}`);
        }
    });

    /** Each parser: what it makes of good arguments, and the usage error it gives for bad ones. */
    const R = REPO_ROOT;
    const CHART = path.join(__dirname, "fixtures", "chart-render");
    const VERIFY_DEFAULTS = { json: false, printRole: false, kyvernoNamespace: "kyverno", smokeTimeoutSeconds: 0, configDir: R, without: [] };
    const PARSERS: { name: string; parse: (argv: string[]) => unknown; accepts: [string[], unknown][]; refuses: [string[], RegExp][] }[] = [
        {
            name: "plan",
            parse: parsePlanArgs,
            accepts: [
                [["--stack", "hub"], { stack: "hub", out: path.join(R, "plan"), configDir: R }],
                [["--stack", "hub", "--out", "/p", "--config-dir", "/c", "--stats=/s.json"], { stack: "hub", out: "/p", configDir: "/c", stats: "/s.json" }],
                [
                    ["--stack", "hub", "--kube-version=v1.33.4", "--chart", CHART, "--crds", "remote", "--against", "main"],
                    { stack: "hub", out: path.join(R, "plan"), configDir: R, kubeVersion: "v1.33.4", chart: CHART, crds: "remote", against: "main" },
                ],
                [["--stack=hub", "--charts=/none", "--pull-charts"], { stack: "hub", out: path.join(R, "plan"), configDir: R, charts: "/none", pull: true }],
            ],
            refuses: [
                [["--stack", "hub", "--stats"], /^Error: --stats needs a value; usage: npm run plan/],
                [["--stack", "hub", "--kube-version", "1.33"], /--kube-version "1\.33": must be a Kubernetes version such as v1\.33/],
                [["--out", "x"], /^Error: usage: npm run plan/],
                [["--stack", ".."], /^Error: --stack "\.\.": must be a stack name, 1 to 100 letters, digits, "_", "\." or "-" as Pulumi allows/],
                // A chart or CRD source asked for that cannot be read is refused before anything is planned.
                [
                    ["--stack=hub", "--chart=/none.tgz"],
                    /^Error: --chart \/none\.tgz: does not exist; give the pinned chart's folder \(holding Chart\.yaml\) or its \.tgz$/,
                ],
                [["--stack=hub", `--chart=${R}`], /^Error: --chart .*: is no chart; give/],
                [["--stack=hub", "--crds=/none"], /^Error: --crds \/none: is no folder; give the folder holding the CRD files the stack names, or remote$/],
                [["--stack=hub", "--charts=/none"], /^Error: --charts \/none: is no folder; give a folder of charts, or --pull-charts to fill it$/],
                [["--stack=hub", `--charts=${R}`, `--chart=${CHART}`], /give --chart or --charts, not both/],
                [["--stack=hub", "--pull-charts"], /--pull-charts pulls into the folder of --charts <dir>: give one/],
            ],
        },
        {
            name: "verify",
            parse: parseVerifyArgs,
            accepts: [
                [
                    ["--stack", "hub", "--json", "--context", "ctx", "--smoke-timeout", "900", "--config-dir=/c"],
                    { ...VERIFY_DEFAULTS, stack: "hub", json: true, context: "ctx", smokeTimeoutSeconds: 900, configDir: "/c" },
                ],
                [
                    ["--stack=hub", "--without=kyverno", "--without", "mimir", "--kubeconfig", "/k"],
                    { ...VERIFY_DEFAULTS, stack: "hub", kubeconfig: "/k", without: ["kyverno", "mimir"] },
                ],
                [["--print-role"], { ...VERIFY_DEFAULTS, stack: "", printRole: true }],
            ],
            refuses: [
                [
                    ["--stack", "hub", "--without", "cilium"],
                    /--without takes one of rollouts-controller, kyverno, argocd, gateway-controller, mimir, got cilium/,
                ],
                [[], /^Error: usage: npm run verify -- --stack <name>/],
                [["--stack", "hub", "--smoke-timeout", "soon"], /whole seconds/],
                [["--stack", "hub", "--force"], /unknown argument --force; usage: npm run verify/],
                [["--stack", "."], /^Error: --stack "\.": must be a stack name/],
            ],
        },
        {
            name: "adopt-check",
            parse: parseAdoptCheckArgs,
            accepts: [
                [["--stack", "hub", "--running-chart"], { stack: "hub", json: false, runningChart: true, configDir: process.cwd() }],
                [
                    ["--stack=preprod", "--json", "--context", "c"],
                    { stack: "preprod", json: true, runningChart: false, context: "c", configDir: process.cwd() },
                ],
            ],
            refuses: [
                [["--stack"], /^Error: --stack needs a value; usage: npm run adopt-check/],
                [["--json"], /^Error: usage: npm run adopt-check/],
                [["--stack", "../hub"], /^Error: --stack "\.\.\/hub": must be a stack name/],
            ],
        },
        {
            name: "drift-report",
            parse: parseDriftArgs,
            accepts: [
                [
                    ["--stack", "hub", "--preview=p.json", "--verify", "v.json", "--preview-exit", "255", "--run-url", "https://x.test/r", "--out", "d.md"],
                    { stack: "hub", preview: "p.json", verify: "v.json", previewExit: 255, runUrl: "https://x.test/r", out: "d.md" },
                ],
            ],
            refuses: [
                [["--stack", "hub"], /^Error: --preview, --verify missing; usage: npm run --silent drift-report/],
                [["--stack", "hub", "--preview", "p", "--verify", "v", "--preview-exit", "x"], /--preview-exit "x": must be a whole number/],
                [["--stack", "a/b", "--preview", "p", "--verify", "v"], /^Error: --stack "a\/b": must be a stack name/],
                [["--stack=a", "--preview=p", "--verify=v", `--out=${R}`], /^Error: --out .*: must be a file, it is a folder$/],
            ],
        },
        {
            name: "deploy-order",
            parse: parseDeployOrderArgs,
            accepts: [[[], { configDir: R }]],
            refuses: [[["--config-dir"], /^Error: --config-dir needs a value; usage: npm run --silent deploy-order/]],
        },
        {
            name: "bench",
            parse: parseBenchArgs,
            accepts: [
                [[], { runs: 3, engine: true }],
                [["--runs=5", "--no-engine"], { runs: 5, engine: false }],
                [["--json", "figures.json"], { runs: 3, engine: true, json: path.resolve("figures.json") }],
            ],
            refuses: [
                ...["0", "-1", "1.5", "2x", "1e3"].map((bad): [string[], RegExp] => [[`--runs=${bad}`], /--runs ".*": must be a whole number of at least 1/]),
                [["--runs", "--no-engine"], /--runs needs a value/],
                [["--json", R], /^Error: --json .*: must be a file, it is a folder$/],
            ],
        },
        {
            name: "e2e",
            parse: parseE2eArgs,
            accepts: [
                [[], { keep: false, jobs: defaultJobs(os.availableParallelism()) }],
                [["--json", "r.json", "--grep=smoke", "--keep", "--jobs", "3"], { json: "r.json", grep: "smoke", keep: true, jobs: 3 }],
            ],
            refuses: [
                [["--grep", "--keep"], /^Error: --grep needs a value; usage: npm run e2e/],
                [["--jobs", "0"], /^Error: --jobs "0": must be a whole number from 1 to 99; usage: npm run e2e/],
            ],
        },
        {
            name: "prComment and driftIssue (the workflows')",
            parse: (argv) => [parseCommentArgs(argv), parseIssueArgs(argv)],
            accepts: [[["--stack", "hub", "--file=f.md"], Array(2).fill({ stack: "hub", file: "f.md" })]],
            refuses: [[["--stack", "hub"], /^Error: usage: tools\/prComment\.ts/]],
        },
    ];
    for (const c of PARSERS) {
        it(`${c.name}: reads --flag value and --flag=value, -h or --help anywhere asks for the usage, and refuses bad arguments`, () => {
            for (const [argv, want] of c.accepts) {
                assert.deepStrictEqual(c.parse(argv), want, argv.join(" "));
            }
            for (const [argv, why] of c.refuses) {
                assert.throws(() => c.parse(argv), why, argv.join(" "));
            }
            assert.ok([c.parse(["-h"]), c.parse(["--nope", "--help"])].flat().every((h) => h === "help"));
        });
    }
    it("e2e: --jobs defaults to one more than the cores, at most 4", () => assert.deepStrictEqual([1, 2, 3, 8].map(defaultJobs), [2, 3, 4, 4]));

    it("e2e: --grep is a regular expression, as Mocha reads it, that must select a scenario; otherwise the error lists them", () => {
        const titles = ["greenfield greenfield-hub", "greenfield idempotent", "kyverno kyverno-ready (kyverno.io/v1, own)", "destroy destroy-keeps-crds"];
        assert.deepStrictEqual(grepScenarios("greenfield", titles), titles.slice(0, 2));
        assert.deepStrictEqual(grepScenarios("hub$|destroy", titles), [titles[0], titles[3]]);
        // Mocha's /re/flags form, and its regular-expression reading of parentheses.
        assert.deepStrictEqual(grepScenarios("/GREENFIELD-HUB/i", titles), [titles[0]]);
        assert.deepStrictEqual(grepScenarios("kyverno-ready \\(kyverno\\.io", titles), [titles[2]]);
        const listed =
            /; the scenarios are:\n {2}greenfield greenfield-hub\n {2}greenfield idempotent\n {2}kyverno kyverno-ready \(kyverno\.io\/v1, own\)\n {2}destroy destroy-keeps-crds$/;
        assert.throws(
            () => grepScenarios("kyverno-ready (kyverno.io", titles),
            (e: Error) =>
                /^--grep "kyverno-ready \(kyverno\.io" is not a regular expression \(.*Unterminated group.*\)/.test(e.message) && listed.test(e.message),
        );
        assert.throws(
            () => grepScenarios("smoke", titles),
            (e: Error) => /^--grep "smoke" matches no scenario/.test(e.message) && listed.test(e.message),
        );
        assert.throws(() => grepScenarios("/greenfield/z", titles), /is not a regular expression/);
    });
});
