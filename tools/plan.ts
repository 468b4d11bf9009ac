/** `npm run plan`: the program for one stack file under Pulumi's mock runtime (no credentials, network or CLI), written by planFiles.ts. */
import * as fs from "fs";
import * as path from "path";
import { PROJECT, printable } from "../components/config/reader";
import { checkPlan } from "./guard";
import { validateObject } from "./schemas";
import { OfflineRun, runOffline } from "./offline";
import { REPO_ROOT, StackFile, configFromStackFile, listStacks, placeholderWorld, readStackFile, referencedHubStack } from "./stackFile";
import { KUBERNETES_VERSION } from "../components/cluster/config";
import { UsageError, argsOrExit, readFlags, runMain, stackFlag } from "./cli";
import { PlanRow } from "./planDiff";
import { reviewDiff } from "./planAgainst";
import { chartPathFrom } from "./chartRender";
import { crdSourceFrom } from "./crdSources";
import { manifestResources, productFiles, removePlan, resourceRows, summary, writePlan } from "./planFiles";
import { RenderOptions, renderProviderObjects, unhonoured } from "./planRendered";

export { adoptions, manifestResources, manifestsYaml, patchesYaml, productFiles, resourceRows, summary } from "./planFiles";

export async function planStack(file: StackFile, configDir = file.dir ?? REPO_ROOT): Promise<OfflineRun> {
    // The program module is loaded only now, after nothing else touched the runtime.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { defineStack } = require("../stacks/program") as typeof import("../stacks/program");
    const world = placeholderWorld(file);
    // A spoke's hub with its file here is planned first, so the spoke reads the endpoint the hub really routes for it.
    const hubStack = referencedHubStack(file);
    const [, project, hubName] = hubStack?.split("/") ?? [];
    if (hubStack && project === PROJECT && hubName && hubName !== file.stack && listStacks(configDir).includes(hubName)) {
        const hub = await planStack(readStackFile(hubName, configDir), configDir);
        world.stackOutputs = { ...world.stackOutputs, [hubStack]: hub.outputs };
    }
    // The program reads the project's stack files from the root, as under `pulumi up`: here, wherever they are.
    return runOffline({ stack: file.stack, config: file.config, secretKeys: file.secretKeys, world, rootDirectory: configDir, program: () => defineStack() });
}

const USAGE =
    "usage: npm run plan -- --stack <name> [--out <dir>] [--config-dir <dir>] [--chart <path> | --charts <dir> [--pull-charts]] [--kube-version <vX.Y.Z>] [--crds <dir>|remote] [--against <git ref>] [--stats <file>]";
const HELP = `${USAGE}

Plans a stack offline (no cluster, no credentials) and writes <out>/<stack>/resources.json, manifests.yaml,
patches.yaml, outputs.json and delivery/ (the tenant components), all or none; a failed plan removes the
files of the stack's previous plan.

  --stack <name>       the stack file Pulumi.<name>.yaml (required)
  --out <dir>          where the plan goes (default: plan/ in the project)
  --config-dir <dir>   where the stack files are (default: the project)
  --chart <path>       the pinned chart's folder or .tgz (default: ARGO_ROLLOUTS_CHART): its objects,
                       rendered by helm (HELM, or helm on the PATH) with the stack's values, go into
                       manifests.yaml; without it they are not shown, asked for they are shown or refused
  --charts <dir>       charts by version, <name>-<version>.tgz or /: each side renders with its own
  --pull-charts        helm pull a pinned chart --charts lacks into it (needs the chart's repository)
  --kube-version <v>   the Kubernetes version the chart renders for (default: the stack's
                       cluster.kubernetesVersion); without one the chart's objects are not shown
  --crds <dir>|remote  the CRDs up applies, from a folder holding the same files or from their URLs
                       (default: ARGO_ROLLOUTS_CRDS); without it they are not shown (as the chart's)
  --against <git ref>  also plan the stack as it was at that ref (a temporary worktree; the checkout
                       is left alone), print the review diff and write it: diff.md (complete) and
                       diff-summary.md (short, for a pull-request comment)
  --stats <file>       also write the run's figures there as JSON (npm run bench reads them)
  --help, -h           print this and exit

Flags take their value as the next argument or after "=" (--stack=hub).`;

export function parsePlanArgs(argv: readonly string[]) {
    const text = { type: "string" } as const;
    const where = { stack: text, out: text, "config-dir": text, stats: text, against: text } as const;
    const rendering = { chart: text, charts: text, "pull-charts": { type: "boolean" }, "kube-version": text, crds: text } as const;
    const flags = readFlags(argv, { ...where, ...rendering }, USAGE);
    if (flags === "help") return flags;
    const { stack, stats, against, chart, charts, crds, "kube-version": kubeVersion } = flags;
    if (!stack) throw new UsageError(USAGE);
    if (kubeVersion !== undefined && !KUBERNETES_VERSION.test(kubeVersion)) {
        throw new UsageError(`--kube-version ${JSON.stringify(kubeVersion)}: must be a Kubernetes version such as v1.33 or v1.33.4`);
    }
    // A chart or CRD source asked for is used or refused, before anything is planned.
    chartPathFrom(chart);
    crdSourceFrom(crds);
    const pull = flags["pull-charts"] === true;
    const folder = charts === undefined ? undefined : fs.statSync(charts, { throwIfNoEntry: false });
    if (charts !== undefined && (chart !== undefined || (folder ? !folder.isDirectory() : !pull))) {
        throw new UsageError(
            `--charts ${charts}: ${chart ? "give --chart or --charts, not both" : "is no folder; give a folder of charts, or --pull-charts to fill it"}`,
        );
    }
    if (pull && !charts) throw new UsageError(`--pull-charts pulls into the folder of --charts <dir>: give one`);
    return {
        stack: stackFlag(stack),
        out: path.resolve(flags.out ?? path.join(REPO_ROOT, "plan")),
        configDir: path.resolve(flags["config-dir"] ?? REPO_ROOT),
        ...(stats ? { stats: path.resolve(stats) } : {}),
        ...(against ? { against } : {}),
        ...(chart ? { chart } : {}),
        ...(charts ? { charts: path.resolve(charts), pull } : {}),
        ...(kubeVersion ? { kubeVersion } : {}),
        ...(crds ? { crds } : {}),
    };
}

/** The figures of a run that started at `start`, for `npm run bench`: CPU time is steadier than wall time on a busy machine. */
function planStats(start: bigint, resources: number): Record<string, number> {
    const cpu = process.cpuUsage();
    const planMs = Number(process.hrtime.bigint() - start) / 1e6;
    return { planMs, cpuMs: (cpu.user + cpu.system) / 1000, peakRssMiB: process.resourceUsage().maxRSS / 1024, resources };
}

async function main(): Promise<void> {
    const start = process.hrtime.bigint();
    const args = argsOrExit(() => parsePlanArgs(process.argv.slice(2)), HELP);
    let finished = false;
    // A program that leaves an output pending would let Node exit quietly with status 0.
    process.on("beforeExit", () => {
        if (!finished) {
            console.error(printable(`stack "${args.stack}": the program did not finish (an output never resolved)`));
            process.exit(1);
        }
    });
    let run: OfflineRun;
    let file: StackFile;
    try {
        file = readStackFile(args.stack, args.configDir);
        run = await planStack(file, args.configDir);
    } catch (e) {
        // No plan of a stack that cannot be planned: the previous one would pass for current.
        removePlan(args.stack, args.out);
        throw e;
    }
    const violations = await checkPlan(run);
    const objects = manifestResources(run);
    const schemas = objects.map((r) => validateObject(r.inputs));
    const invalid = schemas.filter((res) => res.problems.length > 0);
    const unchecked = [...new Set(schemas.filter((res) => res.via === "none").map((res) => res.object.split(" ")[0]))];
    const config = configFromStackFile(file);
    const renderOpts: RenderOptions = {
        ...(args.charts ? { charts: args.charts, pull: args.pull } : { chartPath: chartPathFrom(args.chart) }),
        kubeVersion: args.kubeVersion ?? config.cluster.kubernetesVersion,
        crds: crdSourceFrom(args.crds),
    };
    const rows = JSON.parse(JSON.stringify(resourceRows(run))) as PlanRow[];
    const rendered = await renderProviderObjects(rows, renderOpts);
    const refused = unhonoured(rendered, renderOpts);
    if (refused.length > 0) {
        removePlan(args.stack, args.out);
        throw new UsageError(printable(`stack "${run.stack}": cannot show what was asked for: ${refused.join("; ")}`));
    }
    const products = productFiles(run, config);
    finished = true;
    let extra: Record<string, string> = {};
    let diffError: Error | undefined;
    if (args.against) {
        try {
            extra = await reviewDiff(run.stack, args.against, { rows, rendered, products }, { repoRoot: REPO_ROOT, configDir: args.configDir }, renderOpts);
        } catch (e) {
            diffError = e instanceof Error ? e : new Error(String(e));
        }
    }
    const short = extra["diff-summary.md"];
    const dir = writePlan(run, args.out, { ...products, ...extra }, rendered);
    console.log(summary(run, rendered));
    const shown = path.relative(process.cwd(), dir) || dir;
    console.log(`wrote ${shown}/resources.json, manifests.yaml, patches.yaml, outputs.json, delivery/${short ? `, diff.md and diff-summary.md` : ""}`);
    if (short) {
        console.log("");
        console.log(short);
    }
    // The plan itself stands; only the comparison failed.
    if (diffError) {
        console.error(`no diff against ${args.against}: ${diffError.message}`);
        process.exitCode = 1;
    }
    // The policy pack's checks, offline: a plan that breaks one fails like `pulumi preview` would.
    if (violations.length > 0) {
        console.error(printable(`stack "${run.stack}": ${violations.length} guardrail violation(s):`));
        for (const v of violations) {
            console.error(printable(`  - [${v.check}] ${v.urn ? `${v.urn.split("::").pop()}: ` : ""}${v.message}`));
        }
        process.exitCode = 1;
    } else {
        console.log("guardrails: every check passed");
    }
    if (invalid.length > 0) {
        console.error(printable(`stack "${run.stack}": ${invalid.length} object(s) fail schema validation:`));
        for (const res of invalid) {
            console.error(printable(`  - ${res.object} (${res.via}): ${res.problems.join("; ")}`));
        }
        process.exitCode = 1;
    } else {
        const rest = unchecked.length > 0 ? `; ${unchecked.join(", ")}: no schema package, the API server checks them against their CRDs at up` : "";
        console.log(`schemas: all ${schemas.filter((res) => res.via === "package").length} objects a schema package covers are valid${rest}`);
    }
    if (args.stats) fs.writeFileSync(args.stats, JSON.stringify(planStats(start, run.resources.length)) + "\n");
}

if (require.main === module) runMain(main);
