/**
 * tools/stackFile.ts and components/config/load.ts: a stack file read into what the Pulumi CLI
 * hands the program, and the project's stack files read for the rules between them.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { OFFLINE_SECRET, PROJECT } from "../components/config/reader";
import { readProjectStacks, readStackConfig } from "../components/config/load";
import { fromConfigMap, readStackFile } from "../tools/stackFile";
// eslint-disable-next-line @typescript-eslint/no-require-imports
const runtimeState = require("@pulumi/pulumi/runtime/state");

describe("stack files read as the program gets them (stackFile)", () => {
    let dir: string;
    beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "stackfile-"))));
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
    const write = (stack: string, text: string) => fs.writeFileSync(path.join(dir, `Pulumi.${stack}.yaml`), text);

    it('hands the program what the CLI hands it: text as is, an empty value as "", numbers and structures as JSON with keys sorted', () => {
        write("x", 'config:\n  argo-rollouts-addon:a:\n  b: "017"\n  c: 1e3\n  d: {r: 0.5, q: ~, p: [true, "yes"]}\n  aws:region: eu-west-1\n');
        assert.deepStrictEqual(readStackFile("x", dir).config, {
            "argo-rollouts-addon:a": "",
            "argo-rollouts-addon:b": "017",
            "argo-rollouts-addon:c": "1000",
            "argo-rollouts-addon:d": '{"p":[true,"yes"],"q":null,"r":0.5}',
            "aws:region": "eu-west-1",
        });
    });

    it("reads a secure: value, alone or nested in a structure, as a secret the offline plan cannot decrypt", () => {
        const file = fromConfigMap("hub", { cluster: { name: { secure: "v1:AAAA" }, role: "hub" }, token: { secure: "v1:B" } });
        assert.deepStrictEqual(file.secretKeys, ["argo-rollouts-addon:cluster", "argo-rollouts-addon:token"]);
        assert.strictEqual(file.config["argo-rollouts-addon:token"], OFFLINE_SECRET);
        assert.strictEqual(file.config["argo-rollouts-addon:cluster"], JSON.stringify({ name: OFFLINE_SECRET, role: "hub" }));
    });

    it("reads the project's other stack files, skipping one it refuses, which the plan and its own run refuse naming the stack, file, line, key and value", () => {
        write(
            "a",
            "config:\n  argo-rollouts-addon:cluster: {name: a, mimirTenant: t-a}\n  argo-rollouts-addon:spokes: [{name: b, tenant: t-b}, {tenant: x}]\n",
        );
        write("bad", "config:\n  argo-rollouts-addon:cluster: {name: bad, mimirTenant: 1_0}\n");
        const a = { stack: "a", cluster: "a", mimirTenant: "t-a", spokes: [{ name: "b", tenant: "t-b" }], groups: { regulated: {}, rbac: {} } };
        assert.deepStrictEqual(readProjectStacks(dir), [a]);
        assert.deepStrictEqual(readStackFile("a", dir).projectStacks, [a]);
        const refused = /^Error: stack "bad": Pulumi\.bad\.yaml line 2: argo-rollouts-addon:cluster\.mimirTenant = 1_0 is a number .*quote it/;
        assert.throws(() => readProjectStacks(dir, "bad"), refused);
        assert.throws(() => readStackFile("bad", dir), refused);
        assert.strictEqual(readProjectStacks(path.join(dir, "none")), undefined);
    });

    it("under the Pulumi CLI, refuses the stack's own file as the plan does, and reads the project beside it", () => {
        const runAs = (stack: string) => {
            pulumi.runtime.setMocks({ newResource: (a) => ({ id: a.name, state: a.inputs }), call: () => ({}) }, PROJECT, stack, true);
            pulumi.runtime.setAllConfig({ [`${PROJECT}:imageRegistry`]: "registry.platform.test/mirror", "aws:region": "eu-west-1" });
            runtimeState.getStore().settings.options.rootDirectory = dir;
            return readStackConfig();
        };
        write("a", "config:\n  argo-rollouts-addon:cluster: {name: a}\n");
        write("b", "config:\n  argo-rollouts-addon:controller: {replicas: 017}\n");
        assert.throws(() => runAs("b"), /^Error: stack "b": Pulumi\.b\.yaml line 2: argo-rollouts-addon:controller\.replicas = 017 is a number/);
        const a = runAs("a");
        assert.deepStrictEqual(a.raw, { imageRegistry: "registry.platform.test/mirror" });
        assert.deepStrictEqual(a.ambient.projectStacks, [{ stack: "a", cluster: "a", spokes: [], groups: { regulated: {}, rbac: {} } }]);
        assert.deepStrictEqual(a.ambient.otherKeys, ["aws:region"]);
    });
});
