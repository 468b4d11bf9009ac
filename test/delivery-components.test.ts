import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { BlueGreenStrategy, CanaryStrategy } from "../components/delivery";
import { stackStrategies } from "../components/delivery/config";
import { COMPONENT_APP, componentPlan, deliveryStrategiesOutput, renderComponent, renderComponents } from "../components/delivery/kustomize";
import { parseDeliveryArgs, writeDeliveryComponents } from "../tools/delivery";
import { holes, tierAdmission, tierMessage } from "../components/policy/tierAdmission";
import { planStack } from "../tools/plan";
import { configFromStackFile } from "../tools/stackFile";
import { FIXTURE_STACKS, HUB_TEXT, fixtureStack } from "./harness";
import { REGULATED, parseHub } from "./stackConfig";

const hub = () => configFromStackFile(fixtureStack("hub"));

describe("delivery components (npm run delivery)", () => {
    const strategies = stackStrategies(hub());

    // What kustomize builds from these files, with a tenant's base, is the real kustomize's to
    // say: the end-to-end scenario engine-kustomize builds every component with kustomize v5.8.1.

    it("a lower tier without traffic routing patches the strategy alone, and needs no route", () => {
        const cfg = parseHub({ delivery: { dev: { trafficRouting: false } } });
        const dev = stackStrategies(cfg).find((s) => s.id === "dev-canary")!;
        assert.deepStrictEqual(Object.keys(renderComponent(dev)).sort(), ["kustomization.yaml", "rollout-strategy.yaml"]);
        assert.deepStrictEqual(componentPlan(dev).strategy, { canary: { maxSurge: 1, maxUnavailable: 0, steps: [{ setWeight: 100 }] } });
    });

    it("writes the components of both fixture stacks, each folder what it renders, and removes a strategy the stack dropped", () => {
        const out = fs.mkdtempSync(path.join(os.tmpdir(), "delivery-"));
        try {
            for (const stack of ["hub", "preprod"] as const) {
                const dir = path.join(out, stack);
                fs.mkdirSync(path.join(dir, "prod-standard-linear"), { recursive: true });
                // A configured strategy's folder, and a renamed tier's (delivery.preprod.name was staging).
                for (const old of ["prod-regulated-blueGreen", "staging-canary"]) {
                    fs.mkdirSync(path.join(dir, old), { recursive: true });
                    fs.writeFileSync(path.join(dir, old, "stale.yaml"), `# ${old}: rendered by \`npm run delivery\``);
                }
                const written = writeDeliveryComponents(stack, FIXTURE_STACKS, dir);
                const offered = stackStrategies(configFromStackFile(fixtureStack(stack)));
                const expected = renderComponents(stack, offered);
                assert.deepStrictEqual(written, Object.keys(expected).sort());
                for (const [file, text] of Object.entries(expected)) {
                    assert.strictEqual(fs.readFileSync(path.join(dir, file), "utf8"), text, file);
                }
                assert.ok(!fs.existsSync(path.join(dir, "prod-regulated-blueGreen", "stale.yaml")), "a folder holds what is rendered now");
                assert.ok(!fs.existsSync(path.join(dir, "staging-canary")), "a renamed tier's folder goes");
                assert.ok(fs.existsSync(path.join(dir, "prod-standard-linear")), "a folder that is no component's is not ours to remove");
                const readme = fs.readFileSync(path.join(dir, "README.md"), "utf8");
                for (const s of offered) {
                    assert.ok(readme.includes(`| \`${s.id}/\` | ${s.tier} |`), `${stack}: README row of ${s.id}`);
                }
                assert.match(readme, /components:\n {2}- <path to this folder>\/prod-standard-canary/);
            }
            // The hub no longer offers blue/green for regulated apps: the folder written above goes.
            const file =
                fs.readFileSync(path.join(FIXTURE_STACKS, "Pulumi.hub.yaml"), "utf8") +
                "  argo-rollouts-addon:delivery:\n    prod:\n      regulated:\n        shapes: [canary]\n";
            const configDir = path.join(out, "stacks");
            fs.mkdirSync(configDir);
            fs.writeFileSync(path.join(configDir, "Pulumi.hub.yaml"), file);
            const hubDir = path.join(out, "hub");
            assert.ok(fs.existsSync(path.join(hubDir, "prod-regulated-blueGreen")));
            fs.writeFileSync(path.join(hubDir, "prod-regulated-blueGreen", "notes.md"), "the team's own");
            writeDeliveryComponents("hub", configDir, hubDir);
            assert.deepStrictEqual(fs.readdirSync(path.join(hubDir, "prod-regulated-blueGreen")), ["notes.md"], "a dropped strategy's files go, no other");
            assert.ok(fs.existsSync(path.join(hubDir, "prod-regulated-canary")));
            // A group set as a secret would be written in plain text (or as "[secret]"): refused, nothing written.
            fs.writeFileSync(path.join(configDir, "Pulumi.hub.yaml"), HUB_TEXT.replace("[platform-release-approvers]", "[{ secure: v1:AAAB }]"));
            assert.throws(() => writeDeliveryComponents("hub", configDir, path.join(out, "s")), /policy = \[secret\]: must not be a secret/);
            assert.ok(!fs.existsSync(path.join(out, "s")));
        } finally {
            fs.rmSync(out, { recursive: true, force: true });
        }
    });

    it("changes the rendered steps and the tiers' names with the stack file's, no code edit", () => {
        const prod = { name: "live", standard: { steps: [5, 40, 100] } };
        const named = stackStrategies(parseHub({ policy: { regulated: REGULATED }, delivery: { preprod: { name: "staging" }, prod } }));
        const ids = ["dev-canary", "test-canary", "staging-canary", ...["standard", "regulated"].flatMap((c) => [`live-${c}-canary`, `live-${c}-blueGreen`])];
        assert.strictEqual(named.map((s) => s.id).join(), ids.join());
        const patch = YAML.parse(renderComponent(named[3])["rollout-strategy.yaml"]) as { value: CanaryStrategy }[];
        assert.strictEqual(patch[0].value.canary.steps.flatMap((x) => ("setWeight" in x ? [x.setWeight] : [])).join(), "5,40,100");
        const files = renderComponents("hub", named);
        assert.match(files["README.md"], /- <path to this folder>\/live-standard-canary[^]*\| `staging-canary\/` \| staging \(preprod\) \|/);
        assert.match(files["live-regulated-canary/kustomization.yaml"], /^# live-regulated-canary: rendered by `npm run delivery`/);
        const output = deliveryStrategiesOutput(named);
        assert.deepStrictEqual(
            [output["dev-canary"].name, output["staging-canary"].name, output["live-regulated-canary"].tier],
            [undefined, "staging", "prod"],
        );
        const [standard, regulated] = tierAdmission(named).classes;
        assert.match(
            tierMessage(regulated, "blueGreen"),
            /^in a live regulated namespace .* add components: \[<npm run delivery output>\/live-regulated-blueGreen\]/,
        );
        assert.ok(holes(standard).every((c) => c.message.startsWith("in a live standard namespace ")));
    });

    it("parses its arguments like the other commands", () => {
        assert.deepStrictEqual(parseDeliveryArgs(["--stack", "hub", "--out=dist", "--config-dir", "x"]), {
            stack: "hub",
            out: path.resolve("dist"),
            configDir: path.resolve("x"),
        });
        assert.strictEqual(parseDeliveryArgs(["-h"]), "help");
        assert.throws(() => parseDeliveryArgs(["--stack", "hub"]), /--out is required; usage: npm run delivery/);
        assert.throws(() => parseDeliveryArgs(["--out", "x"]), /--stack is required/);
        assert.throws(() => parseDeliveryArgs(["--stack", "..", "--out", "x"]), /^Error: --stack "\.\.": must be a stack name/);
    });

    it("are the stack output deliveryStrategies, the same strategies as the files, every one the fixture hub configures", async () => {
        const run = await planStack(fixtureStack("hub"));
        const output = run.outputs.deliveryStrategies as Record<string, { steps?: number[]; strategy: unknown; behaviour: string }>;
        assert.deepStrictEqual(output, JSON.parse(JSON.stringify(deliveryStrategiesOutput(strategies))));
        assert.deepStrictEqual(Object.keys(output), [
            "dev-canary",
            "test-canary",
            "preprod-canary",
            "prod-standard-canary",
            "prod-standard-blueGreen",
            "prod-regulated-canary",
            "prod-regulated-blueGreen",
        ]);
        assert.deepStrictEqual(output["prod-standard-canary"].steps, hub().delivery.prod.standard.steps);
        for (const s of strategies) {
            const patch = YAML.parse(renderComponent(s)["rollout-strategy.yaml"]) as { value: unknown }[];
            assert.deepStrictEqual(output[s.id].strategy, patch[0].value, `${s.id}: the output is what the component patches in`);
        }
        const bg = output["prod-regulated-blueGreen"].strategy as BlueGreenStrategy;
        assert.strictEqual(bg.blueGreen.autoPromotionEnabled, false);
        assert.strictEqual(COMPONENT_APP.name.includes("-"), false, "the placeholder name is one part of a '-' delimited name");
    });
});
