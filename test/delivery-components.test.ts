import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { BlueGreenStrategy, CanaryStrategy } from "../components/delivery";
import { stackStrategies } from "../components/delivery/config";
import { COMPONENT_APP, componentPlan, deliveryStrategiesOutput, renderComponent, renderComponents } from "../components/delivery/kustomize";
import { parseAddonConfig } from "../stacks/config";
import { parseDeliveryArgs, writeDeliveryComponents } from "../tools/delivery";
import { planStack } from "../tools/plan";
import { validateObject } from "../tools/schemas";
import { configFromStackFile } from "../tools/stackFile";
import { FIXTURE_STACKS, fixtureStack, hubConfig, merged, withRegulatedArgoRbac } from "./harness";
import { Obj, appBase, build } from "./kustomizeModel";

const hub = () => configFromStackFile(fixtureStack("hub"));
const byKind = (objects: Obj[], kind: string) => objects.filter((o) => o.kind === kind);
const named = (o: Obj) => (o.metadata as { name: string }).name;

describe("delivery components (npm run delivery)", () => {
    const strategies = stackStrategies(hub());

    it("renders every strategy the fixture hub configures", () => {
        assert.deepStrictEqual(
            strategies.map((s) => s.id),
            [
                "dev-canary",
                "test-canary",
                "preprod-canary",
                "prod-standard-canary",
                "prod-standard-blueGreen",
                "prod-regulated-canary",
                "prod-regulated-blueGreen",
            ],
        );
    });

    const headerGated = stackStrategies(
        parseAddonConfig(
            "hub",
            withRegulatedArgoRbac(
                merged(hubConfig(), {
                    "aws:region": undefined,
                    delivery: { prod: { standard: { previewGate: "header", previewHeader: "x-orders-preview" } } },
                }),
            ),
            { awsRegion: "eu-west-1" },
        ),
    ).filter((s) => s.shape === "blueGreen" && s.prodClass === "standard");
    for (const s of [...stackStrategies(hub()), ...headerGated]) {
        it(`${s.id}${s.options.previewGate ? " with the header preview gate" : ""}: an app's base built with it has the library's strategy, Services and route, with the app's own values`, () => {
            const plan = componentPlan(s);
            const out = build(appBase(), renderComponent(s));
            const rollout = byKind(out, "Rollout")[0] as { spec: { strategy: unknown; selector: { matchLabels: Obj } } };
            // The library's strategy for this app, exactly: the placeholder's names replaced by the app's.
            const expected = JSON.parse(
                JSON.stringify(plan.strategy)
                    .replace(/"app-(stable|canary|active|preview)"/g, '"orders-api-$1"')
                    .replace(/"httpRoute":"app"/, '"httpRoute":"orders"'),
            );
            assert.deepStrictEqual(rollout.spec.strategy, expected);
            const services = byKind(out, "Service") as {
                metadata: { name: string; namespace: string; labels: Obj };
                spec: { selector: Obj; ports: { port: number; targetPort: number }[] };
            }[];
            assert.deepStrictEqual(
                services.map((x) => x.metadata.name).sort(),
                plan.services.map((x) => x.metadata.name.replace(/^app-/, "orders-api-")).sort(),
            );
            for (const svc of services) {
                assert.strictEqual(svc.metadata.namespace, "shop");
                assert.deepStrictEqual(svc.metadata.labels, { "app.kubernetes.io/name": "orders-api" });
                assert.deepStrictEqual(svc.spec.selector, rollout.spec.selector.matchLabels, "the Services select the Rollout's own pods");
                assert.deepStrictEqual([svc.spec.ports[0].port, svc.spec.ports[0].targetPort], [8081, 9090], "the route's port, the container's port");
                assert.deepStrictEqual(validateObject(svc as unknown as Obj).problems, []);
            }
            const route = byKind(out, "HTTPRoute")[0] as {
                spec: {
                    hostnames: string[];
                    rules: { matches: { path: Obj; headers?: Obj[] }[]; backendRefs: { name: string; port: number; weight?: number }[] }[];
                };
            };
            assert.deepStrictEqual(route.spec.hostnames, ["orders.shop.platform.test"], "the hostname is unchanged (ADR-056 D4)");
            const own = route.spec.rules[route.spec.rules.length - 1];
            assert.deepStrictEqual(own.matches, [{ path: { type: "PathPrefix", value: "/api" } }], "the app's own matches are kept");
            const expectedRules = plan.httpRoute!.spec.rules.map((r) => r.backendRefs.map((b) => [b.name.replace(/^app-/, "orders-api-"), 8081, b.weight]));
            assert.deepStrictEqual(
                route.spec.rules.map((r) => r.backendRefs.map((b) => [b.name, b.port, b.weight])),
                expectedRules,
            );
            assert.strictEqual(route.spec.rules.length, s.options.previewGate ? 2 : 1);
            if (route.spec.rules.length > 1) {
                assert.deepStrictEqual(
                    route.spec.rules[0].matches[0].path,
                    own.matches[0].path,
                    "the preview rule takes the app's path, so it wins by header count",
                );
                assert.deepStrictEqual(route.spec.rules[0].matches[0].headers, [{ type: "Exact", name: "x-orders-preview", value: "true" }]);
            }
            assert.deepStrictEqual(validateObject(route as unknown as Obj).problems, []);
            const roles = [...byKind(out, "Role"), ...byKind(out, "RoleBinding")];
            assert.strictEqual(roles.length > 0, s.prodClass === "regulated");
            for (const r of roles) {
                assert.match(named(r), /^orders-api-rollout-(approver|deployer)$/);
                assert.strictEqual((r.metadata as { namespace: string }).namespace, "shop");
            }
            for (const b of byKind(out, "RoleBinding") as { roleRef: { name: string }; subjects: { name: string }[]; metadata: { name: string } }[]) {
                assert.strictEqual(b.roleRef.name, b.metadata.name);
                assert.deepStrictEqual(
                    b.subjects.map((x) => x.name),
                    b.metadata.name.endsWith("approver") ? hub().policy.regulated!.approverGroups : hub().policy.regulated!.deployerGroups,
                );
            }
        });
    }

    it("a lower tier without traffic routing patches the strategy alone, and needs no route", () => {
        const cfg = parseAddonConfig(
            "hub",
            withRegulatedArgoRbac(merged(hubConfig(), { "aws:region": undefined, delivery: { dev: { trafficRouting: false } } })),
            { awsRegion: "eu-west-1" },
        );
        const dev = stackStrategies(cfg).find((s) => s.id === "dev-canary")!;
        const files = renderComponent(dev);
        assert.deepStrictEqual(Object.keys(files).sort(), ["kustomization.yaml", "rollout-strategy.yaml"]);
        const out = build(appBase(false), files);
        assert.deepStrictEqual(out.length, 1);
        assert.deepStrictEqual((out[0] as { spec: { strategy: unknown } }).spec.strategy, {
            canary: { maxSurge: 1, maxUnavailable: 0, steps: [{ setWeight: 100 }] },
        });
    });

    it("the restated kustomize refuses what the real one refuses (the checks above are not vacuous)", () => {
        const canary = strategies.find((s) => s.id === "prod-standard-canary")!;
        const withoutNamespace = appBase().map((o) => (o.kind === "Rollout" ? { ...o, metadata: { name: "orders-api" } } : o));
        assert.throws(() => build(withoutNamespace, renderComponent(canary)), /metadata.namespace is missing for replacement source Rollout/);
        const bg = strategies.find((s) => s.id === "prod-standard-blueGreen")!;
        const noRoute = appBase(false);
        assert.throws(() => build(noRoute, renderComponent(bg)), /selects nothing/);
    });

    it("writes the components of both fixture stacks, each folder what it renders, and removes a strategy the stack dropped", () => {
        const out = fs.mkdtempSync(path.join(os.tmpdir(), "delivery-"));
        try {
            for (const stack of ["hub", "preprod"] as const) {
                const dir = path.join(out, stack);
                fs.mkdirSync(path.join(dir, "prod-standard-linear"), { recursive: true });
                fs.mkdirSync(path.join(dir, "prod-regulated-blueGreen"), { recursive: true });
                fs.writeFileSync(path.join(dir, "prod-regulated-blueGreen", "stale.yaml"), "x");
                const written = writeDeliveryComponents(stack, FIXTURE_STACKS, dir);
                const expected = renderComponents(stack, stackStrategies(configFromStackFile(fixtureStack(stack))));
                assert.deepStrictEqual(written, Object.keys(expected).sort());
                for (const [file, text] of Object.entries(expected)) {
                    assert.strictEqual(fs.readFileSync(path.join(dir, file), "utf8"), text, file);
                }
                assert.ok(!fs.existsSync(path.join(dir, "prod-regulated-blueGreen", "stale.yaml")), "a folder holds what is rendered now");
                assert.ok(fs.existsSync(path.join(dir, "prod-standard-linear")), "a folder that is no component's is not ours to remove");
                const readme = fs.readFileSync(path.join(dir, "README.md"), "utf8");
                for (const s of stackStrategies(configFromStackFile(fixtureStack(stack)))) {
                    assert.ok(readme.includes(`| \`${s.id}/\` | ${s.tier} |`), `${stack}: README row of ${s.id}`);
                }
                assert.match(readme, /components:\n {2}- <path to this folder>\/prod-standard-canary/);
            }
            // A stack that no longer offers blue/green for regulated apps: its folder goes.
            const dir = path.join(out, "narrowed");
            fs.mkdirSync(dir);
            const file =
                fs.readFileSync(path.join(FIXTURE_STACKS, "Pulumi.hub.yaml"), "utf8") +
                "  argo-rollouts-addon:delivery:\n    prod:\n      regulated:\n        shapes: [canary]\n";
            const configDir = path.join(out, "stacks");
            fs.mkdirSync(configDir);
            fs.writeFileSync(path.join(configDir, "Pulumi.hub.yaml"), file);
            writeDeliveryComponents("hub", FIXTURE_STACKS, dir);
            assert.ok(fs.existsSync(path.join(dir, "prod-regulated-blueGreen")));
            writeDeliveryComponents("hub", configDir, dir);
            assert.ok(!fs.existsSync(path.join(dir, "prod-regulated-blueGreen")), "a strategy the stack dropped is removed");
            assert.ok(fs.existsSync(path.join(dir, "prod-regulated-canary")));
        } finally {
            fs.rmSync(out, { recursive: true, force: true });
        }
    });

    it("changes the rendered steps with the stack file's, no code edit", () => {
        const cfg = parseAddonConfig(
            "hub",
            withRegulatedArgoRbac(merged(hubConfig(), { "aws:region": undefined, delivery: { prod: { standard: { steps: [5, 40, 100] } } } })),
            { awsRegion: "eu-west-1" },
        );
        const s = stackStrategies(cfg).find((x) => x.id === "prod-standard-canary")!;
        const patch = YAML.parse(renderComponent(s)["rollout-strategy.yaml"]) as { value: CanaryStrategy }[];
        assert.deepStrictEqual(
            patch[0].value.canary.steps.flatMap((x) => ("setWeight" in x ? [x.setWeight] : [])),
            [5, 40, 100],
        );
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
        assert.throws(() => parseDeliveryArgs(["--stack", "hub", "--out", "x", "--tier", "prod"]), /unknown argument --tier/);
        assert.throws(() => parseDeliveryArgs(["--stack", "--out", "x"]), /--stack needs a value/);
    });

    it("are the stack output deliveryStrategies, the same strategies as the files", async () => {
        const run = await planStack(fixtureStack("hub"));
        const output = run.outputs.deliveryStrategies as Record<string, { steps?: number[]; strategy: unknown; behaviour: string }>;
        assert.deepStrictEqual(output, JSON.parse(JSON.stringify(deliveryStrategiesOutput(strategies))));
        assert.deepStrictEqual(
            Object.keys(output),
            strategies.map((s) => s.id),
        );
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
