import * as assert from "assert";
import { EXAMPLE_PLUGIN_DIGEST, controllerValues, examplePluginValue, pluginImage, refuseExamplePluginValue } from "../components/rollouts";
import { OfflineRun, runOffline } from "../tools/offline";
import { planStack } from "../tools/plan";
import { configFromStackFile, listStacks, placeholderWorld, readStackFile } from "../tools/stackFile";


describe("shipped stack files", () => {
    it("take the plugin from the mirror, pinned by a digest marked as an example", () => {
        for (const stack of listStacks()) {
            const cfg = configFromStackFile(readStackFile(stack));
            assert.strictEqual(cfg.plugin.delivery.mode, "image", `${stack}: clusters admit artifacts from the mirror only; no download from github.com`);
            assert.ok(cfg.imageRegistry, `${stack}: a mirror is configured`);
            const image = pluginImage(cfg.plugin, cfg.imageRegistry)!;
            assert.ok(image.startsWith(`${cfg.imageRegistry}/`), image);
            const values = controllerValues(cfg) as { controller: { initContainers: { image: string }[]; trafficRouterPlugins: { location: string }[] } };
            assert.strictEqual(values.controller.initContainers[0].image, image);
            assert.match(values.controller.trafficRouterPlugins[0].location, /^file:\/\//);
            assert.match(examplePluginValue(stack, cfg.plugin) ?? "", /plugin\.digest is the shipped example value/);
        }
    });

    it("route the hub's spokes beside the observability module's ingest routes", async () => {
        const cfg = configFromStackFile(readStackFile("hub"));
        assert.strictEqual(cfg.mimir.pushRouteOwner, "observability");
        const run = await planStack(readStackFile("hub"));
        const routes = run.resources.filter((r) => r.type === "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute").map((r) => r.name);
        assert.deepStrictEqual(routes, cfg.spokes.filter((s) => s.query).map((s) => `mimir-spoke-${s.name}-read`));
        assert.deepStrictEqual(Object.keys(run.outputs.spokeReadEndpoints as object), cfg.spokes.filter((s) => s.query).map((s) => s.name));
    });

    describe("the example plugin digest", () => {
        it("is shaped like a digest and recognised only as itself", () => {
            assert.match(EXAMPLE_PLUGIN_DIGEST, /^sha256:[a-f0-9]{64}$/);
            const cfg = configFromStackFile(readStackFile("hub"));
            const real = { ...cfg.plugin, delivery: { mode: "image" as const, repository: "x/y", digest: `sha256:${"c".repeat(64)}` } };
            assert.strictEqual(examplePluginValue("hub", real), undefined);
        });

        it("passes a preview but stops a real run before anything is declared", async () => {
            const file = readStackFile("hub");
            // eslint-disable-next-line @typescript-eslint/no-require-imports
            const { defineStack } = require("../stacks/program") as typeof import("../stacks/program");
            const run = (dryRun: boolean): Promise<OfflineRun> =>
                runOffline({ stack: "hub", config: file.config, secretKeys: file.secretKeys, world: placeholderWorld(file), dryRun, program: () => defineStack() });
            assert.ok((await run(true)).resources.length > 10);
            await assert.rejects(run(false), /plugin\.digest is the shipped example value/);
            const cfg = configFromStackFile(readStackFile("hub"));
            const warned: string[] = [];
            refuseExamplePluginValue("hub", cfg.plugin, true, (m) => warned.push(m));
            assert.strictEqual(warned.length, 1);
        });
    });
});

describe("the example-value warning", () => {
    it("is said once per process, not once per offline run", async () => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { planStack } = require("../tools/plan") as typeof import("../tools/plan");
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { readStackFile } = require("../tools/stackFile") as typeof import("../tools/stackFile");
        // Everything printed goes through the two streams (console.* included): capture them once each.
        const said: string[] = [];
        const streams = [process.stdout, process.stderr];
        const writes = streams.map((st) => st.write.bind(st));
        streams.forEach((st, i) => {
            st.write = ((chunk: unknown, ...rest: unknown[]) => {
                said.push(String(chunk));
                return (writes[i] as (...a: unknown[]) => boolean)(chunk, ...rest);
            }) as typeof st.write;
        });
        try {
            await planStack(readStackFile("hub"));
            await planStack(readStackFile("hub"));
        } finally {
            streams.forEach((st, i) => (st.write = writes[i] as typeof st.write));
        }
        assert.ok(said.filter((l) => l.includes("is the shipped example value")).length <= 1, said.join("\n"));
    });
});
