import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../tools/stackFile";

describe("the plan's TypeScript loader (swc) as npm run plan runs it", () => {
    it("runs a file with a type error: the type-check is npm test's", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "swc-loader-"));
        try {
            fs.writeFileSync(path.join(dir, "bad.ts"), `const count: number = "three";\nprocess.stdout.write(JSON.stringify({ count }));\n`);
            const ran = spawnSync(process.execPath, ["--require", path.join(REPO_ROOT, "tools", "swc-register.js"), path.join(dir, "bad.ts")], {
                cwd: REPO_ROOT,
                encoding: "utf8",
            });
            assert.strictEqual(ran.status, 0, ran.stderr);
            assert.deepStrictEqual(JSON.parse(ran.stdout), { count: "three" });
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("loads only TypeScript that tsconfig.json type-checks, and not ts-node", () => {
        const probe = 'require("./tools/plan.ts"); require("./stacks/program.ts"); process.stdout.write(JSON.stringify(Object.keys(require.cache)));';
        const res = spawnSync(process.execPath, ["--require", "./tools/swc-register.js", "-e", probe], { cwd: REPO_ROOT, encoding: "utf8" });
        assert.strictEqual(res.status, 0, res.stderr);
        const loaded = JSON.parse(res.stdout) as string[];
        const ours = loaded.filter((f) => f.endsWith(".ts")).map((f) => path.relative(REPO_ROOT, f));
        assert.ok(ours.length > 50, `loaded ${ours.length} TypeScript files`);
        const include = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "tsconfig.json"), "utf8")) as { include: string[] }).include;
        const checked = (f: string) => include.some((glob) => glob.endsWith("/**/*.ts") && f.startsWith(glob.slice(0, -"**/*.ts".length)));
        assert.deepStrictEqual([...ours.filter((f) => !checked(f)), ...loaded.filter((f) => /node_modules[\\/]ts-node[\\/]/.test(f))], []);
    });
});
