/**
 * The order stacks are deployed in, read from the stack files: every hub before any spoke, because
 * a spoke reads the endpoint its hub routes for it (ADR-056 D5). Nothing here assumes how many of
 * either there are.
 *
 *   npm run --silent deploy-order [-- --config-dir <dir>]   # prints hubs=[...] and spokes=[...]
 */
import * as path from "path";
import { parseConfigText } from "../components/config/load";
import { PROJECT, isPlainObject } from "../components/config/reader";
import { REPO_ROOT, listStacks, readStackFile } from "./stackFile";

export interface DeployOrder {
    hubs: string[];
    spokes: string[];
}

/** Splits the project's stacks by `cluster.role`; a stack file without a valid role is an error. */
export function deployOrder(root = REPO_ROOT): DeployOrder {
    const order: DeployOrder = { hubs: [], spokes: [] };
    for (const stack of listStacks(root)) {
        const text = readStackFile(stack, root).config[`${PROJECT}:cluster`];
        const cluster = text === undefined ? undefined : parseConfigText(text);
        const role = isPlainObject(cluster) ? cluster.role : undefined;
        if (role === "hub") {
            order.hubs.push(stack);
        } else if (role === "spoke") {
            order.spokes.push(stack);
        } else {
            throw new Error(`stack "${stack}": ${PROJECT}:cluster.role = ${JSON.stringify(role ?? null)}: must be one of hub, spoke`);
        }
    }
    return order;
}

/** The lines a GitHub Actions step appends to $GITHUB_OUTPUT. */
export function githubOutputLines(order: DeployOrder): string {
    return `hubs=${JSON.stringify(order.hubs)}\nspokes=${JSON.stringify(order.spokes)}\n`;
}

if (require.main === module) {
    const at = process.argv.indexOf("--config-dir");
    const root = at >= 0 ? path.resolve(process.argv[at + 1] ?? "") : REPO_ROOT;
    try {
        process.stdout.write(githubOutputLines(deployOrder(root)));
    } catch (err) {
        console.error(err instanceof Error ? err.message : String(err));
        process.exit(1);
    }
}
