import * as assert from "assert";
import { execFile } from "child_process";
import * as fs from "fs";
import * as https from "https";
import * as path from "path";
import { REPO_ROOT } from "../../tools/stackFile";

const tlsFile = (f: string) => fs.readFileSync(path.join(REPO_ROOT, "test", "fixtures", "tls", f), "utf8");

describe("verify's GET to a read endpoint, in a process of its own", () => {
    let endpoint: https.Server;
    before(async () => {
        endpoint = https.createServer({ cert: tlsFile("server.crt"), key: tlsFile("server.key") }, (_req, res) => res.writeHead(200).end("{}"));
        await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
    });
    after(() => new Promise<void>((resolve) => endpoint.close(() => resolve())));

    it("ignores NODE_EXTRA_CA_CERTS: a process whose default store trusts the test CA gets through with a plain GET, not with verify's", async () => {
        const url = `https://127.0.0.1:${(endpoint.address() as { port: number }).port}/prometheus/api/v1/query`;
        const script = `
            const https = require("https");
            const { directGet } = require("./tools/verify/index");
            new Promise((ok, no) => https.get(${JSON.stringify(url)}, (r) => { r.resume(); r.on("end", () => ok(r.statusCode)); }).on("error", no))
                .then((plain) => directGet(${JSON.stringify(url)}, {}, {}).then(() => [plain, "trusted"], (e) => [plain, e.code]))
                .then((r) => console.log(JSON.stringify(r)), (e) => console.log(JSON.stringify(["plain failed", e.code])));`;
        const out = await new Promise<string>((resolve, reject) =>
            execFile(
                process.execPath,
                ["-r", "./tools/swc-register.js", "-e", script],
                { cwd: REPO_ROOT, env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(REPO_ROOT, "test", "fixtures", "tls", "ca.crt") } },
                (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout.trim())),
            ),
        );
        assert.deepStrictEqual(JSON.parse(out), [200, "UNABLE_TO_VERIFY_LEAF_SIGNATURE"]);
    });
});
