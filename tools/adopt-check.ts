/** `npm run adopt-check`: what an adopting run (cluster.adoptExisting) takes over and would break, read-only; the stack's objects from its plan. */
import * as path from "path";
import { UsageError, readFlags, stackFlag } from "./cli";
import { AdoptReport, PlannedObject, adoptCheck } from "./adopt/check";
import { manifestResources, planStack } from "./plan";
import { readCrdFiles } from "./crdSources";
import { configFromStackFile, readStackFile } from "./stackFile";
import { printable } from "../components/config/show";
import { ConnectionError, connect } from "./verify/cluster";
import { runningControllerVersion } from "../stacks/preflight";
import { releaseOfLine } from "../components/rollouts/versions";

const USAGE = "usage: npm run adopt-check -- --stack <name> [--json | --running-chart] [--kubeconfig <file>] [--context <name>] [--config-dir <dir>]";
const HELP = `${USAGE}

Before the adopting run (cluster.adoptExisting): what it takes over on the stack's cluster, what
the old install leaves behind and what adopting would break. Read-only.

  --stack <name>        the stack file Pulumi.<name>.yaml (required)
  --json                one JSON document instead of lines
  --running-chart       print only the chart of the line the running controller runs, which the
                        adopting run keeps (docs/operations/adopt.md step 5); exit 1 when none runs
                        or the program has no chart of its line
  --kubeconfig <file>   another kubeconfig than the stack file's (default: the stack's connection)
  --context <name>      another kubeconfig context (default: the stack's)
  --config-dir <dir>    where the stack files are (default: the directory npm runs in)
  --help, -h            print this and exit

Exit status: 0 adopting breaks nothing adopt-check can see, 1 it would, 2 usage, configuration or
connection error. Flags take their value as the next argument or after "=".`;

export function parseAdoptCheckArgs(argv: readonly string[]) {
    const text = { type: "string" } as const;
    const flags = readFlags(
        argv,
        { stack: text, json: { type: "boolean" }, "running-chart": { type: "boolean" }, kubeconfig: text, context: text, "config-dir": text },
        USAGE,
    );
    if (flags === "help") return flags;
    if (!flags.stack) throw new UsageError(USAGE);
    // The default folder is where npm runs the script: the operator's project.
    const { stack, kubeconfig, context, "config-dir": configDir } = flags;
    return {
        stack: stackFlag(stack),
        json: flags.json === true,
        runningChart: flags["running-chart"] === true,
        ...(kubeconfig ? { kubeconfig: path.resolve(kubeconfig) } : {}),
        ...(context ? { context } : {}),
        configDir: path.resolve(configDir ?? process.cwd()),
    };
}

/** The whole objects the stack's program declares, from its offline plan. */
export async function plannedObjects(stack: string, configDir: string): Promise<PlannedObject[]> {
    const run = await planStack(readStackFile(stack, configDir), configDir);
    return manifestResources(run)
        .map((r) => r.inputs as unknown as PlannedObject)
        .filter((o) => typeof o.metadata?.name === "string" && typeof o.kind === "string" && typeof o.apiVersion === "string");
}

export async function adoptCheckMain(
    argv: readonly string[],
    toOut: (s: string) => void = console.log,
    toErr: (s: string) => void = console.error,
): Promise<number> {
    // What it prints quotes the cluster's objects: never a URL's user-info or query, nothing invisible.
    const out = (s: string) => toOut(printable(s));
    try {
        const args = parseAdoptCheckArgs(argv);
        if (args === "help") {
            out(HELP);
            return 0;
        }
        const config = configFromStackFile(readStackFile(args.stack, args.configDir));
        const cluster = await connect({ connection: config.cluster.connection, kubeconfig: args.kubeconfig, context: args.context }).catch((e: Error) => {
            throw e instanceof ConnectionError ? new Error(`stack "${args.stack}": cannot check adoption: ${e.message}`) : e;
        });
        if (args.runningChart) {
            const running = await runningControllerVersion(config, cluster);
            const kept = running ? releaseOfLine(running) : undefined;
            if (kept) out(kept.chartVersion);
            else
                toErr(
                    `stack "${args.stack}": ${running ? `the controller runs ${running}, a line no chart of the program has` : "no controller runs"}: name controller.chartVersion yourself (docs/operations/upgrade.md)`,
                );
            return kept ? 0 : 1;
        }
        const planned = await plannedObjects(args.stack, args.configDir);
        // The CRD manifests as the program reads them; when they cannot be read the CRDs' fields are not compared.
        const report = await adoptCheck(config, planned, cluster, async (urls) => {
            const read = await readCrdFiles(urls, { kind: "remote" });
            return "objects" in read ? read.objects.map((o) => o.object) : { error: read.notShown };
        });
        out(args.json ? JSON.stringify({ ...report, exitCode: adoptExitCode(report) }, null, 2) : formatAdoptText(report));
        return adoptExitCode(report);
    } catch (e) {
        toErr(printable((e as Error).message));
        return 2;
    }
}

/** 1 when adopting would break something, else 0 (2 is the CLI's). */
export const adoptExitCode = (report: AdoptReport): number => (report.breaks.length > 0 ? 1 : 0);

export function formatAdoptText(r: AdoptReport): string {
    const lines = [
        `adopt-check stack ${r.stack} (cluster ${r.cluster}) at ${r.server}`,
        `controller: running ${r.controller.running ?? "none"}, the stack configures ${r.controller.configured}`,
    ];
    for (const c of r.crds) {
        const version = c.version ? `, version label ${c.version}` : "";
        lines.push(`crd ${c.name}: ${c.present ? `present${version}, managers ${c.managers.join(", ") || "none"}` : "absent"}`);
    }
    lines.push("objects the stack declares:");
    for (const o of r.objects) {
        const changes =
            o.changes === null
                ? `; fields: not compared (${o.notCompared ?? "the source could not be read"})`
                : o.changes.length > 0
                  ? `; changes ${o.changes.join(", ")}`
                  : o.present
                    ? "; no field changes"
                    : "";
        lines.push(
            `  ${o.present ? "present" : "absent "}  ${o.object} [${o.declaredBy}]${o.present ? ` managers ${o.managers.join(", ") || "none"}` : ""}${changes}`,
        );
    }
    lines.push(`left behind (${r.leftovers.length}):`, ...r.leftovers.flatMap((l) => [`  ${l.object}: ${l.what}`, `      retire: ${l.retire}`]));
    lines.push(`tenant templates (${r.tenantTemplates.length}), never adopted:`);
    for (const t of r.tenantTemplates) {
        lines.push(`  ClusterAnalysisTemplate ${t.template}: ${t.rollouts.length} reference(s)`);
        lines.push(
            ...t.rollouts.map(
                (u) => `      Rollout ${u.rollout} ${u.where}: ${u.resolves ? "args resolve" : `args ${u.unresolved.join(", ")} do not resolve`}`,
            ),
        );
    }
    lines.push(`breaks (${r.breaks.length}):`, ...r.breaks.flatMap((b) => [`  BREAK ${b.object}: ${b.found}`, `      first: ${b.fix}`]));
    lines.push(
        r.breaks.length > 0
            ? `adopting stack ${r.stack} now would break ${r.breaks.length} thing(s): fix them first`
            : `adopting stack ${r.stack} breaks nothing adopt-check can see`,
    );
    return lines.join("\n");
}

if (require.main === module) {
    adoptCheckMain(process.argv.slice(2)).then((code) => {
        process.exitCode = code;
    });
}
