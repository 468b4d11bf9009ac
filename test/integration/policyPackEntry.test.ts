import * as assert from "assert";
import { ChildProcess, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../tools/stackFile";

/**
 * Preloaded into the pack's runner: records each file ts-node compiles (ts-node type-checks what
 * it compiles), by wrapping the service its register() returns.
 */
const PROBE = `
const Module = require("module");
const fs = require("fs");
const load = Module._load;
Module._load = function (request) {
    const m = load.apply(this, arguments);
    if (request === "ts-node" && !m.__probed) {
        const register = m.register;
        m.register = function (opts) {
            fs.appendFileSync(process.env.PROBE_OUT, "register typeCheck=" + String(opts && opts.typeCheck) + "\\n");
            const service = register.apply(this, arguments);
            const compile = service.compile;
            service.compile = function (code, fileName) {
                fs.appendFileSync(process.env.PROBE_OUT, "compile " + fileName + "\\n");
                return compile.apply(this, arguments);
            };
            return service;
        };
        m.__probed = true;
    }
    return m;
};
`;

/** Runs `program` as the Pulumi CLI runs a Node.js policy pack, until it serves (prints its port). */
function runPack(program: string, cwd: string, probeOut: string): Promise<{ port: number; ms: number }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pack-probe-"));
    const probe = path.join(dir, "probe.js");
    fs.writeFileSync(probe, PROBE);
    const start = Date.now();
    // @pulumi/pulumi's runner of policy packs: it registers ts-node with typeCheck before loading the pack.
    const runner = path.join(REPO_ROOT, "node_modules", "@pulumi", "pulumi", "cmd", "run-policy-pack");
    const child: ChildProcess = spawn(process.execPath, ["--require", probe, runner, "127.0.0.1:1", program], {
        cwd,
        env: { ...process.env, PROBE_OUT: probeOut },
    });
    return new Promise((resolve, reject) => {
        let stderr = "";
        child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
        child.stdout!.on("data", (d: Buffer) => {
            const port = Number(d.toString().trim());
            // The pack's gRPC server keeps it running: it is stopped once it served.
            child.kill();
            resolve({ port, ms: Date.now() - start });
        });
        child.on("exit", (code) => reject(new Error(`the pack exited (${String(code)}) before serving: ${stderr}`)));
    });
}

describe("policy pack entry", () => {
    it("is plain JavaScript named by the pack's package.json", () => {
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "policy-pack", "package.json"), "utf8")) as { main: string };
        assert.strictEqual(pkg.main, "index.js");
    });

    it("serves the pack under the runner's type-checking ts-node without ts-node compiling a file", async () => {
        const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pack-")), "probe.txt");
        const served = await runPack(".", path.join(REPO_ROOT, "policy-pack"), out);
        assert.ok(served.port > 0, String(served.port));
        const probe = fs.readFileSync(out, "utf8").trim().split("\n");
        // ts-node was registered to type-check, as by the Pulumi CLI, and compiled nothing.
        assert.deepStrictEqual(probe, ["register typeCheck=true"]);
    });

    it("(the probe sees what ts-node compiles: a TypeScript program under the same runner)", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pack-ts-"));
        fs.writeFileSync(path.join(dir, "main.ts"), "const port: number = 1;\nconsole.log(String(port));\nsetTimeout(() => undefined, 60000);\n");
        const out = path.join(dir, "probe.txt");
        await runPack("./main.ts", dir, out);
        assert.deepStrictEqual(fs.readFileSync(out, "utf8").trim().split("\n"), ["register typeCheck=true", `compile ${fs.realpathSync(dir)}/main.ts`]);
    });
});
