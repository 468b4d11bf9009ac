/** `npm run verify`: a stack's live cluster after `pulumi up`, requirement by requirement (ADR-056), read-only. Usage: HELP. */
import * as path from "path";
import * as YAML from "yaml";
import { UsageError, readFlags, stackFlag } from "./cli";
import { verifyClusterRole } from "./verify/access";
import { ConnectionError, connect } from "./verify/cluster";
import { COMPONENTS, Component, defaultOptions, isComponent, runVerify } from "./verify/index";
import { exitCode, formatJson, formatJsonError, formatText } from "./verify/report";
import { REPO_ROOT, configFromStackFile, readStackFile } from "./stackFile";
import { printable } from "../components/config/show";

const USAGE =
    "usage: npm run verify -- --stack <name> [--json] [--kubeconfig <file>] [--context <name>] [--kyverno-namespace <ns>] [--smoke-timeout <seconds>] [--config-dir <dir>] [--without <component>]... | --print-role [--stack <name>]";

export function parseVerifyArgs(argv: readonly string[]) {
    const text = { type: "string" } as const;
    const flags = readFlags(
        argv,
        {
            stack: text,
            json: { type: "boolean" },
            "print-role": { type: "boolean" },
            kubeconfig: text,
            context: text,
            "kyverno-namespace": text,
            "smoke-timeout": text,
            "config-dir": text,
            without: { type: "string", multiple: true },
        },
        USAGE,
    );
    if (flags === "help") return flags;
    const timeout = flags["smoke-timeout"] ?? "0";
    const unknown = (flags.without ?? []).find((c) => !isComponent(c));
    if (!/^[0-9]+$/.test(timeout)) throw new UsageError(`--smoke-timeout takes whole seconds, got ${timeout}`);
    if (unknown !== undefined) throw new UsageError(`--without takes one of ${Object.keys(COMPONENTS).join(", ")}, got ${unknown}`);
    if (!flags.stack && !flags["print-role"]) throw new UsageError(USAGE);
    return {
        stack: flags.stack === undefined ? "" : stackFlag(flags.stack),
        json: flags.json === true,
        printRole: flags["print-role"] === true,
        ...(flags.kubeconfig ? { kubeconfig: path.resolve(flags.kubeconfig) } : {}),
        ...(flags.context ? { context: flags.context } : {}),
        kyvernoNamespace: flags["kyverno-namespace"] ?? "kyverno",
        smokeTimeoutSeconds: Number(timeout),
        configDir: path.resolve(flags["config-dir"] ?? REPO_ROOT),
        /** Components that do not run on this cluster: their checks SKIP naming them. */
        without: (flags.without ?? []) as Component[],
    };
}

const HELP = `${USAGE}

Checks a stack's live cluster after pulumi up, requirement by requirement, read-only.

  --stack <name>              the stack file Pulumi.<name>.yaml (required unless --print-role)
  --json                      one JSON document instead of lines
  --kubeconfig <file>         another kubeconfig than the stack file's (default: the stack's connection)
  --context <name>            another kubeconfig context (default: the stack's)

Which connection wins: --kubeconfig and --context, when given; otherwise the stack file's
connection, as the program's provider uses it: cluster.eksClusterName (aws eks describe-cluster and
a token from aws eks get-token; KUBECONFIG is not read) or cluster.kubeconfigContext (in
cluster.kubeconfigPath, else KUBECONFIG, else ~/.kube/config).

  --kyverno-namespace <ns>    where Kyverno runs (default: kyverno)
  --smoke-timeout <seconds>   wait this long for the smoke canary to settle (default: 0)
  --config-dir <dir>          where the stack files are (default: the project)
  --without <component>       a component that does not run here: its checks SKIP (repeatable)
  --print-role                print the read-only ClusterRole verify needs and check nothing
  --help, -h                  print this and exit

Exit status: 0 every check passed or was skipped, 1 a check failed, 2 usage, configuration or
connection error. Flags take their value as the next argument or after "=".`;

export async function verifyMain(
    argv: readonly string[],
    toOut: (s: string) => void = console.log,
    toErr: (s: string) => void = console.error,
): Promise<number> {
    // Findings quote what the cluster holds: never a URL's user-info or query, or a character the terminal hides.
    const out = (s: string) => toOut(printable(s));
    const err = (s: string) => toErr(printable(s));
    // With --json an error that stops verify is a JSON document on stdout too, so the pipeline's report is never empty.
    const json = argv.includes("--json");
    const fail = (message: string): number => {
        err(message);
        if (json) out(formatJsonError({ stack: /--stack[= ](\S+)/.exec(argv.join(" "))?.[1], error: message }));
        return 2;
    };
    try {
        const args = parseVerifyArgs(argv);
        if (args === "help") {
            out(HELP);
            return 0;
        }
        const config = () => configFromStackFile(readStackFile(args.stack, args.configDir));
        if (args.printRole) {
            out(YAML.stringify(verifyClusterRole(args.stack ? config() : undefined)).trimEnd());
            return 0;
        }
        // The same stack file and validation as the program: a bad file fails the same way.
        const stack = config();
        const cluster = await connect({ connection: stack.cluster.connection, kubeconfig: args.kubeconfig, context: args.context }).catch((e: Error) => {
            throw e instanceof ConnectionError ? new Error(`stack "${args.stack}": cannot verify: ${e.message}`) : e;
        });
        const results = await runVerify(
            stack,
            cluster,
            defaultOptions({ kyvernoNamespace: args.kyvernoNamespace, smokeTimeoutSeconds: args.smokeTimeoutSeconds, without: args.without }),
        );
        const report = { stack: args.stack, cluster: stack.cluster.name, server: cluster.server, results };
        out(args.json ? formatJson(report) : formatText(report));
        return exitCode(results);
    } catch (e) {
        return fail((e as Error).message);
    }
}

if (require.main === module) {
    verifyMain(process.argv.slice(2)).then((code) => {
        process.exitCode = code;
    });
}
