/** `npm run docs`: docs/configuration.md and schema/stack.schema.json from the declarations, each renamed into place (never half a file). */
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
    const stale = Object.entries(generatedFiles()).filter(
        ([rel, text]) => !fs.existsSync(path.join(ROOT, rel)) || fs.readFileSync(path.join(ROOT, rel), "utf8") !== text,
    );
    if (flags.check) {
        if (stale.length > 0) console.error(`out of date (run npm run docs): ${stale.map(([rel]) => rel).join(", ")}`);
        return stale.length > 0 ? 1 : 0;
    }
    for (const [rel, text] of stale) {
        const file = path.join(ROOT, rel);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(`${file}.${process.pid}.tmp`, text);
        fs.renameSync(`${file}.${process.pid}.tmp`, file);
        console.log(`wrote ${rel}`);
    }
    if (stale.length === 0) console.log("docs/configuration.md and schema/stack.schema.json are up to date");
    return 0;
}

if (require.main === module) process.exitCode = docsMain(process.argv.slice(2));
