/** `npm run deploy-order`: every hub before any spoke, because a spoke reads the endpoint its hub routes for it (ADR-056 D5); the spokes in their waves. */
import * as fs from "fs";
import * as path from "path";
import { CLUSTER_FIELDS, DEPLOY_WAVES } from "../components/cluster/config";
import { readField } from "../components/config/declare";
import { parseConfigText } from "../components/config/load";
import { ConfigReader, PROJECT, isPlainObject } from "../components/config/reader";
import { argsOrExit, readFlags, runMain } from "./cli";
import { REPO_ROOT, listStacks, readStackFile } from "./stackFile";

const USAGE = "usage: npm run --silent deploy-order [-- --config-dir <dir>]";
const HELP = `${USAGE}

Prints the order the deploy pipeline brings the stacks up in, as GitHub Actions step outputs:
hubs=[...], then wave1=[...] to wave${DEPLOY_WAVES}=[...]: the spokes by ${"`"}cluster.wave${"`"}, the waves set
numbered from 1 without gaps (only the last ones are []), then spokes=[...] and stacks=[...], all of
them in that order.

  --config-dir <dir>   where the Pulumi.<stack>.yaml files are (default: the project's root)`;

/** The hubs, then the spokes' waves in order, none empty. */
export type DeployOrder = { hubs: string[]; waves: string[][] };

/** Splits the project's stacks by `cluster.role` and a spoke's `cluster.wave`; a stack file without a valid role or wave is an error. */
export function deployOrder(root = REPO_ROOT): DeployOrder {
    const hubs: string[] = [];
    const waves: string[][] = [];
    if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) throw new Error(`deploy-order: ${root} is not a folder`);
    const stacks = listStacks(root);
    // An empty order would let the pipeline's matrix run nothing and pass: a wrong --config-dir.
    if (stacks.length === 0) {
        throw new Error(`deploy-order: no stack file (Pulumi.<stack>.yaml) in ${root}: nothing to order; give the project's folder with --config-dir`);
    }
    for (const stack of stacks) {
        const cluster = parseConfigText(readStackFile(stack, root).config[`${PROJECT}:cluster`] ?? "{}");
        const section = isPlainObject(cluster) ? cluster : {};
        const role = section.role;
        if (role !== "hub" && role !== "spoke") {
            throw new Error(`stack "${stack}": ${PROJECT}:cluster.role = ${JSON.stringify(role ?? null)}: must be one of hub, spoke`);
        }
        const r = new ConfigReader();
        const wave = readField(r, "cluster.wave", CLUSTER_FIELDS.wave, section.wave, section) as number;
        if (r.problems.length > 0) throw new Error(`stack "${stack}": ${PROJECT}:cluster.wave = ${r.problems[0].given}: ${r.problems[0].allowed}`);
        if (role === "hub") hubs.push(stack);
        else (waves[wave - 1] ??= []).push(stack);
    }
    return { hubs, waves: waves.filter(Boolean) };
}

/** The lines a GitHub Actions step appends to $GITHUB_OUTPUT: one per wave job of deploy.yml, and every spoke and every stack in order. */
export function githubOutputLines({ hubs, waves }: DeployOrder): string {
    const slots = Array.from({ length: DEPLOY_WAVES }, (_, i) => `wave${i + 1}=${JSON.stringify(waves[i] ?? [])}`);
    return [
        `hubs=${JSON.stringify(hubs)}`,
        ...slots,
        `spokes=${JSON.stringify(waves.flat())}`,
        `stacks=${JSON.stringify([...hubs, ...waves.flat()])}`,
        "",
    ].join("\n");
}

export function parseDeployOrderArgs(argv: readonly string[]): { configDir: string } | "help" {
    const flags = readFlags(argv, { "config-dir": { type: "string" } }, USAGE);
    return flags === "help" ? flags : { configDir: path.resolve(flags["config-dir"] ?? REPO_ROOT) };
}

if (require.main === module) {
    const { configDir } = argsOrExit(() => parseDeployOrderArgs(process.argv.slice(2)), HELP);
    runMain(async () => void process.stdout.write(githubOutputLines(deployOrder(configDir))));
}
