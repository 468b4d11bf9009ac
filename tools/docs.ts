/**
 * `npm run docs`: renders docs/configuration.md and schema/stack.schema.json from the configuration
 * declarations. Each file is written beside itself and renamed into place, so an interrupted run
 * leaves the old file or the new one, never half of one.
 */
import * as fs from "fs";
import * as path from "path";
import { readFlags } from "./cli";
import { generatedFiles } from "./docs/reference";

const USAGE = "usage: npm run docs [-- --check]";
const ROOT = path.resolve(__dirname, "..");

export function docsMain(argv: readonly string[]): number {
    let flags: ReturnType<typeof readFlags<{ check: { type: "boolean" } }>>;
    try {
        flags = readFlags(argv, { check: { type: "boolean" } }, USAGE);
    } catch (e) {
        console.error((e as Error).message);
        return 2;
    }
    if (flags === "help") {
        console.log(`${USAGE}\n\n  --check   write nothing; exit 1 if docs/configuration.md or schema/stack.schema.json is out of date`);
        return 0;
    }
    const check = flags.check === true;
    const stale: string[] = [];
    for (const [rel, text] of Object.entries(generatedFiles())) {
        const file = path.join(ROOT, rel);
        const current = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined;
        if (current === text) {
            continue;
        }
        stale.push(rel);
        if (!check) {
            fs.mkdirSync(path.dirname(file), { recursive: true });
            const tmp = `${file}.${process.pid}.tmp`;
            fs.writeFileSync(tmp, text);
            fs.renameSync(tmp, file);
            console.log(`wrote ${rel}`);
        }
    }
    if (check && stale.length > 0) {
        console.error(`out of date (run npm run docs): ${stale.join(", ")}`);
        return 1;
    }
    if (!check && stale.length === 0) {
        console.log("docs/configuration.md and schema/stack.schema.json are up to date");
    }
    return 0;
}

if (require.main === module) {
    process.exitCode = docsMain(process.argv.slice(2));
}
