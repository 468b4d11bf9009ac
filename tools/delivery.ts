/** `npm run delivery`: a stack's tier strategies (ADR-056 D3) as kustomize Components, one folder per tier, class and shape. */
import * as fs from "fs";
import * as path from "path";
import { exampleRefusal } from "../components/config/examples";
import { PROJECT } from "../components/config/reader";
import { stackStrategies } from "../components/delivery/config";
import { renderComponents } from "../components/delivery/kustomize";
import { UsageError, argsOrExit, readFlags, removeWritten, runMain, stackFlag } from "./cli";
import { REPO_ROOT, configFromStackFile, readStackFile } from "./stackFile";

const USAGE = "usage: npm run delivery -- --stack <name> --out <dir> [--config-dir <dir>]";
const HELP = `${USAGE}

Writes one kustomize Component per delivery strategy the stack configures (its delivery section:
the lower tiers' canary, each shape of each prod class) into <out>/<name>[-<class>]-<shape>/ (<name>:
the tier's delivery.<tier>.name), and <out>/README.md on how to use each. The files of strategies the stack no longer configures are
removed (each opens with its mark), and a folder they leave empty; nothing else in <out> is touched.

  --stack <name>       the stack file Pulumi.<name>.yaml (required)
  --out <dir>          where the components go (required)
  --config-dir <dir>   where the stack files are (default: the project)
  --help, -h           print this and exit

Flags take their value as the next argument or after "=" (--stack=hub).`;

export function parseDeliveryArgs(argv: readonly string[]) {
    const flags = readFlags(argv, { stack: { type: "string" }, out: { type: "string" }, "config-dir": { type: "string" } }, USAGE);
    if (flags === "help") return flags;
    const { stack, out } = flags;
    if (!stack || !out) throw new UsageError(`${!stack ? "--stack" : "--out"} is required; ${USAGE}`);
    return { stack: stackFlag(stack), out: path.resolve(out), configDir: path.resolve(flags["config-dir"] ?? REPO_ROOT) };
}

/** The folder names a component folder has, under any tier name (`dev-canary`, `live-regulated-blueGreen`): a renamed tier's old folder goes too. */
const COMPONENT_DIR = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?-((standard|regulated)-)?(canary|blueGreen)$/;

/** Writes the stack's components under `out`; a folder it no longer configures goes, so an overlay naming it fails to build. */
export function writeDeliveryComponents(stack: string, configDir: string, out: string): string[] {
    const config = configFromStackFile(readStackFile(stack, configDir));
    const files = renderComponents(stack, stackStrategies(config));
    // The components are the platform's to commit: none carries an example value, as `pulumi up` applies none (components/config/examples.ts).
    const examples = config.examples.filter((e) => Object.values(files).some((text) => text.includes(e.example)));
    if (examples.length > 0) throw new Error(exampleRefusal(stack, PROJECT, examples, "npm run delivery writes nothing"));
    const dirs = new Set(
        Object.keys(files)
            .filter((f) => f.includes("/"))
            .map((f) => f.split("/")[0]),
    );
    fs.mkdirSync(out, { recursive: true });
    // A component's files each open with its mark: another file, or a folder, in a component's folder is not this command's to remove.
    for (const entry of fs.readdirSync(out, { withFileTypes: true })) {
        if (entry.isDirectory() && (COMPONENT_DIR.test(entry.name) || dirs.has(entry.name))) {
            const mark = `# ${entry.name}: rendered by \`npm run delivery\``;
            removeWritten(path.join(out, entry.name), (f) => fs.readFileSync(f, "utf8").startsWith(mark));
        }
    }
    for (const [file, text] of Object.entries(files)) {
        const p = path.join(out, file);
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, text);
    }
    return Object.keys(files).sort();
}

if (require.main === module) {
    const args = argsOrExit(() => parseDeliveryArgs(process.argv.slice(2)), HELP);
    runMain(async () => {
        const written = writeDeliveryComponents(args.stack, args.configDir, args.out);
        const components = [...new Set(written.filter((f) => f.includes("/")).map((f) => f.split("/")[0]))];
        return `stack "${args.stack}": wrote ${components.length} components (${components.join(", ")}) and README.md to ${path.relative(process.cwd(), args.out) || args.out}`;
    });
}
