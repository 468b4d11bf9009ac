/**
 * The engine tier, no cluster: the engines decide what the program's gates and tenant components
 * do, over cases kept as data (docs/operations/e2e.md, "The engine tier").
 * - engine-promtool: every gate query of the shipped analysis templates (components/rollouts/analysis.ts),
 *   with the arguments a Rollout passes, evaluated by `promtool test rules` over the series of each
 *   case of e2e/samples/gates.yaml, and each measurement judged by Argo Rollouts' own provider
 *   (rollouts-evaluate, e2e/engines/argo-rollouts/main.go).
 * - engine-kustomize: every kustomize Component `npm run delivery` writes, added to the tenant app
 *   of e2e/samples/tenant-app.yaml by an overlay of one line and built by kustomize v5.8.1, the
 *   one ArgoCD v3.5.1 builds with (e2e/engines/kustomize).
 */
import assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { isDeepStrictEqual } from "util";
import * as YAML from "yaml";
import { context } from "../lib/context";
import { Measured, evaluateInput, gateRun, phaseProblems, promtoolFile } from "../lib/gates";
import { addonConfig } from "../lib/platform";
import { run } from "../lib/procs";
import { fixtureConfig } from "../lib/stacks";
import { TierStrategy } from "../../components/delivery";
import { stackStrategies } from "../../components/delivery/config";
import { componentPlan, renderComponents } from "../../components/delivery/kustomize";
import { PROJECT } from "../../components/config/reader";
import { validateObject } from "../../tools/schemas";

type Obj = Record<string, unknown> & { kind: string; metadata: { name: string; namespace?: string } };

function engine(name: string): string {
    const bin = path.join(context.bin, name);
    assert.ok(context.bin && fs.existsSync(bin), `no ${name} in ${context.bin || "(no engine directory)"}: run the scenario through npm run e2e`);
    return bin;
}

const TENANT_APP = path.resolve(__dirname, "..", "samples", "tenant-app.yaml");

/** The fixture stack's configuration, with `delivery` replaced: the strategies a platform with those settings renders. */
const withDelivery = (stack: string, delivery: unknown) => addonConfig(stack, { ...fixtureConfig(stack), [`${PROJECT}:delivery`]: delivery });

/** Every strategy the fixture stacks render, the header preview gate's blue/green, and a dev canary without traffic routing. */
function strategies(): { label: string; s: TierStrategy; routed: boolean }[] {
    const out = ["hub", "preprod"].flatMap((stack) =>
        stackStrategies(addonConfig(stack, fixtureConfig(stack))).map((s) => ({ label: `${stack} ${s.id}`, s, routed: true })),
    );
    const gated = stackStrategies(withDelivery("hub", { prod: { standard: { previewGate: "header", previewHeader: "x-orders-preview" } } })).find(
        (s) => s.id === "prod-standard-blueGreen",
    )!;
    const unrouted = stackStrategies(withDelivery("hub", { dev: { trafficRouting: false } })).find((s) => s.id === "dev-canary")!;
    return [
        ...out,
        { label: "hub prod-standard-blueGreen (header preview gate)", s: gated, routed: true },
        { label: "hub dev-canary (no traffic routing)", s: unrouted, routed: false },
    ];
}

/** About how long this file runs beside another on 2 cores: orders the side-by-side run (e2e/lib/pool.ts). */
export const SECONDS = 5;

describe("engines", function () {
    it("engine-promtool", function () {
        const gates = gateRun();
        const evaluated = run(engine("rollouts-evaluate"), [], { input: JSON.stringify(evaluateInput(gates)) });
        assert.strictEqual(evaluated.status, 0, `rollouts-evaluate failed:\n${evaluated.stderr}`);
        const measured = JSON.parse(evaluated.stdout) as Measured[];
        const problems = phaseProblems(gates, measured);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "engine-promtool-"));
        try {
            const file = path.join(dir, "gates.test.yaml");
            fs.writeFileSync(file, promtoolFile(gates, measured));
            const promtool = run(engine("promtool"), ["test", "rules", file]);
            if (promtool.status !== 0) {
                problems.push(`promtool test rules: Prometheus' answers differ from the samples:\n${promtool.stdout}\n${promtool.stderr}`);
            }
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
        assert.deepStrictEqual(problems, [], problems.join("\n"));
        assert.ok(measured.length >= 100, `only ${measured.length} measurements`);
    });

    it("engine-kustomize", function () {
        const kustomize = engine("kustomize");
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "engine-kustomize-"));
        const problems: string[] = [];
        const base = YAML.parseAllDocuments(fs.readFileSync(TENANT_APP, "utf8")).map((d) => d.toJS() as Obj);
        /** A base of `objects`, the folder `npm run delivery` writes for `s`, and an overlay of one line: what kustomize builds. */
        const build = (i: number, s: TierStrategy, objects: Obj[]) => {
            const at = (...p: string[]) => path.join(dir, String(i), ...p);
            fs.mkdirSync(at("base"), { recursive: true });
            fs.writeFileSync(at("base", "app.yaml"), objects.map((o) => YAML.stringify(o)).join("---\n"));
            fs.writeFileSync(at("base", "kustomization.yaml"), "resources:\n  - app.yaml\n");
            for (const [file, text] of Object.entries(renderComponents("tenant", [s]))) {
                fs.mkdirSync(path.dirname(at("components", file)), { recursive: true });
                fs.writeFileSync(at("components", file), text);
            }
            fs.mkdirSync(at("overlay"));
            fs.writeFileSync(at("overlay", "kustomization.yaml"), `resources:\n  - ../base\ncomponents:\n  - ../components/${s.id}\n`);
            return run(kustomize, ["build", at("overlay")]);
        };
        const app = (name: string) => name.replace(/^app-/, "orders-api-");
        try {
            const all = strategies();
            all.forEach(({ label, s, routed }, i) => {
                const r = build(i, s, routed ? base : base.filter((o) => o.kind !== "HTTPRoute"));
                if (r.status !== 0) {
                    problems.push(`${label}: kustomize build failed: ${r.stderr.trim()}`);
                    return;
                }
                const out = YAML.parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
                const plan = componentPlan(s);
                const of = (kind: string) => out.filter((o) => o.kind === kind);
                const rollout = of("Rollout")[0] as unknown as { spec: { strategy: unknown; selector: { matchLabels: unknown } } };
                // The library's strategy for this app, exactly: the placeholder's names replaced by the app's.
                const expected = JSON.parse(
                    JSON.stringify(plan.strategy)
                        .replace(/"app-(stable|canary|active|preview)"/g, '"orders-api-$1"')
                        .replace(/"httpRoute":"app"/, '"httpRoute":"orders"'),
                );
                if (!isDeepStrictEqual(rollout?.spec.strategy, expected)) {
                    problems.push(
                        `${label}: the Rollout's strategy is ${JSON.stringify(rollout?.spec.strategy)}, not the library's ${JSON.stringify(expected)}`,
                    );
                }
                const services = of("Service") as unknown as {
                    metadata: { name: string; namespace: string; labels: unknown };
                    spec: { selector: unknown; ports: { port: number; targetPort: number }[] };
                }[];
                const want = plan.services.map((x) => app(x.metadata.name)).sort();
                if (!isDeepStrictEqual(services.map((x) => x.metadata.name).sort(), want)) {
                    problems.push(`${label}: Services ${services.map((x) => x.metadata.name).join(", ")}, not ${want.join(", ")}`);
                }
                for (const svc of services) {
                    const got = [svc.metadata.namespace, svc.metadata.labels, svc.spec.selector, svc.spec.ports[0].port, svc.spec.ports[0].targetPort];
                    // No namespace: the overlay's `namespace:` or the Application's destination sets it.
                    const ok = [undefined, { "app.kubernetes.io/name": "orders-api" }, rollout.spec.selector.matchLabels, 8081, 9090];
                    if (!isDeepStrictEqual(got, ok)) {
                        problems.push(
                            `${label}: Service ${svc.metadata.name} has namespace, labels, selector and ports ${JSON.stringify(got)}, not the app's ${JSON.stringify(ok)}`,
                        );
                    }
                }
                const route = of("HTTPRoute")[0] as unknown as
                    | {
                          spec: {
                              hostnames: string[];
                              rules: { matches: { path: unknown; headers?: unknown }[]; backendRefs: { name: string; port: number; weight?: number }[] }[];
                          };
                      }
                    | undefined;
                if (!routed) {
                    if (out.length !== 1) {
                        problems.push(
                            `${label}: without traffic routing the component patches the strategy alone, yet the build holds ${out.map((o) => o.kind).join(", ")}`,
                        );
                    }
                } else if (plan.httpRoute) {
                    const own = route?.spec.rules[route.spec.rules.length - 1];
                    const refs = route?.spec.rules.map((x) => x.backendRefs.map((b) => [b.name, b.port, b.weight]));
                    const wantRefs = plan.httpRoute.spec.rules.map((x) => x.backendRefs.map((b) => [app(b.name), 8081, b.weight]));
                    const preview = s.options.previewGate
                        ? [{ path: { type: "PathPrefix", value: "/api" }, headers: [{ type: "Exact", name: "x-orders-preview", value: "true" }] }]
                        : undefined;
                    if (
                        !route ||
                        !isDeepStrictEqual(route.spec.hostnames, ["orders.shop.platform.test"]) ||
                        !isDeepStrictEqual(own?.matches, [{ path: { type: "PathPrefix", value: "/api" } }]) ||
                        !isDeepStrictEqual(refs, wantRefs) ||
                        (preview !== undefined && !isDeepStrictEqual(route.spec.rules[0].matches, preview))
                    ) {
                        problems.push(
                            `${label}: the route is ${JSON.stringify(route?.spec)}: not the app's hostname and matches (and the preview rule on its path) with the strategy's backends ${JSON.stringify(wantRefs)}`,
                        );
                    }
                }
                // A regulated namespace's approval roles are the platform's (components/policy/approvalBindings.ts): no component ships RBAC.
                const rbac = out.filter((o) => /^(Cluster)?Role(Binding)?$/.test(o.kind)).map((o) => `${o.kind} ${o.metadata.name}`);
                if (rbac.length > 0) problems.push(`${label}: the component ships ${rbac.join(", ")}: a tenant's repository must not bind roles`);
                for (const o of out) {
                    const v = validateObject(o);
                    if (v.problems.length > 0) {
                        problems.push(`${label}: ${o.kind} ${o.metadata.name} fails its schema (${v.via}): ${v.problems.join("; ")}`);
                    }
                }
            });
            // What kustomize refuses, so that the builds above are not vacuous: a blue/green component
            // on a base without its route.
            const blueGreen = all.find((x) => x.s.id === "prod-standard-blueGreen")!.s;
            const routeless = build(
                all.length,
                blueGreen,
                base.filter((o) => o.kind !== "HTTPRoute"),
            );
            if (routeless.status === 0 || !/nothing selected/.test(routeless.stderr)) {
                problems.push(`a blue/green component on a base without its HTTPRoute: kustomize exited ${routeless.status}: ${routeless.stderr.trim()}`);
            }
            assert.deepStrictEqual(problems, [], problems.join("\n"));
            assert.ok(all.length >= 16, `only ${all.length} components built`);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
