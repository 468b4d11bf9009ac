/** `npm run deploy-order`: every hub before any spoke, because a spoke reads the endpoint its hub routes for it (ADR-056 D5). */
import * as fs from "fs";
import * as path from "path";
import { parseConfigText } from "../components/config/load";
import { PROJECT, isPlainObject } from "../components/config/reader";
import { argsOrExit, readFlags, runMain } from "./cli";
import { REPO_ROOT, listStacks, readStackFile } from "./stackFile";

const USAGE = "usage: npm run --silent deploy-order [-- --config-dir <dir>]";
const HELP = `${USAGE}

Prints the order the deploy pipeline brings the stacks up in, as GitHub Actions step outputs:
hubs=[...] then spokes=[...], each from the stack files' ${"`"}cluster.role${"`"}, then stacks=[...],
all of them in that order.

  --config-dir <dir>   where the Pulumi.<stack>.yaml files are (default: the project's root)`;

export type DeployOrder = { hubs: string[]; spokes: string[] };

/** Splits the project's stacks by `cluster.role`; a stack file without a valid role is an error. */
export function deployOrder(root = REPO_ROOT): DeployOrder {
    const order: DeployOrder = { hubs: [], spokes: [] };
    if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) {
        throw new Error(`deploy-order: ${root} is not a folder`);
    }
    const stacks = listStacks(root);
    // An empty order would let the pipeline's matrix run nothing and pass: a wrong --config-dir.
    if (stacks.length === 0) {
        throw new Error(`deploy-order: no stack file (Pulumi.<stack>.yaml) in ${root}: nothing to order; give the project's folder with --config-dir`);
    }
    for (const stack of stacks) {
        const cluster = parseConfigText(readStackFile(stack, root).config[`${PROJECT}:cluster`] ?? "{}");
        const role = isPlainObject(cluster) ? cluster.role : undefined;
        if (role !== "hub" && role !== "spoke") {
            throw new Error(`stack "${stack}": ${PROJECT}:cluster.role = ${JSON.stringify(role ?? null)}: must be one of hub, spoke`);
        }
        order[role === "hub" ? "hubs" : "spokes"].push(stack);
    }
    return order;
}

/** The lines a GitHub Actions step appends to $GITHUB_OUTPUT: also every stack in that order, for one matrix over all. */
export function githubOutputLines(order: DeployOrder): string {
    return `hubs=${JSON.stringify(order.hubs)}\nspokes=${JSON.stringify(order.spokes)}\nstacks=${JSON.stringify([...order.hubs, ...order.spokes])}\n`;
}

export function parseDeployOrderArgs(argv: readonly string[]): { configDir: string } | "help" {
    const flags = readFlags(argv, { "config-dir": { type: "string" } }, USAGE);
    return flags === "help" ? flags : { configDir: path.resolve(flags["config-dir"] ?? REPO_ROOT) };
}

if (require.main === module) {
    const { configDir } = argsOrExit(() => parseDeployOrderArgs(process.argv.slice(2)), HELP);
    runMain(async () => void process.stdout.write(githubOutputLines(deployOrder(configDir))));
}
