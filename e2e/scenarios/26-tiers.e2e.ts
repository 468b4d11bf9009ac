/**
 * The tier components are real kustomize (ADR-056 D3; `npm run delivery`): every component the
 * fixture stacks configure (and the header preview gate's blue/green) is added to an example app's
 * base by an overlay of one line and built with the kustomize the run's kubectl embeds
 * (`kubectl kustomize`). The built objects must carry the library's strategy with the app's own
 * names, the Services and route the strategy needs with the app's ports and pod labels, the
 * approval Roles for regulated apps, and be valid for the upstream schemas; and the restated
 * kustomize the unit tests use (test/kustomizeModel.ts) must build exactly the same objects.
 * No cluster: the controller running these objects is not proven here.
 */
import assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { isDeepStrictEqual } from "util";
import * as YAML from "yaml";
import { context } from "../lib/context";
import { run } from "../lib/procs";
import { TierStrategy } from "../../components/delivery";
import { stackStrategies } from "../../components/delivery/config";
import { componentPlan, renderComponent, renderComponents } from "../../components/delivery/kustomize";
import { parseAddonConfig } from "../../stacks/config";
import { validateObject } from "../../tools/schemas";
import { configFromStackFile } from "../../tools/stackFile";
import { fixtureStack, hubConfig, merged, withRegulatedArgoRbac } from "../../test/harness";
import { Obj, appBase, build } from "../../test/kustomizeModel";

const key = (o: Obj) => `${String(o.apiVersion)}/${String(o.kind)}/${(o.metadata as { name: string }).name}`;
const sorted = (objects: Obj[]) => [...objects].sort((a, b) => key(a).localeCompare(key(b)));

/** Every strategy the fixture stacks configure, and the header preview gate's blue/green. */
function strategies(): { stack: string; s: TierStrategy }[] {
    const out: { stack: string; s: TierStrategy }[] = [];
    for (const stack of ["hub", "preprod"] as const) {
        out.push(...stackStrategies(configFromStackFile(fixtureStack(stack))).map((s) => ({ stack, s })));
    }
    const gated = parseAddonConfig(
        "hub",
        withRegulatedArgoRbac(merged(hubConfig(), { "aws:region": undefined, delivery: { prod: { standard: { previewGate: "header" } } } })),
        { awsRegion: "eu-west-1" },
    );
    out.push(
        ...stackStrategies(gated)
            .filter((s) => s.id === "prod-standard-blueGreen")
            .map((s) => ({ stack: "hub (header preview gate)", s })),
    );
    return out;
}

describe("tiers", function () {
    it("tier-components-build", function () {
        const kubectl = path.join(context.bin, "kubectl");
        assert.ok(context.bin && fs.existsSync(kubectl), `no kubectl in ${context.bin || "(no engine directory)"}: run the scenario through npm run e2e`);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tier-components-"));
        const problems: string[] = [];
        try {
            const base = path.join(dir, "base");
            fs.mkdirSync(base);
            fs.writeFileSync(
                path.join(base, "app.yaml"),
                appBase()
                    .map((o) => YAML.stringify(o))
                    .join("---\n"),
            );
            fs.writeFileSync(
                path.join(base, "kustomization.yaml"),
                YAML.stringify({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources: ["app.yaml"] }),
            );
            let built = 0;
            strategies().forEach(({ stack, s }, i) => {
                const label = `${stack} ${s.id}`;
                // The folder as npm run delivery writes it, and a tenant's overlay of one line.
                const components = path.join(dir, `components-${i}`);
                for (const [file, text] of Object.entries(renderComponents(stack, [s]))) {
                    fs.mkdirSync(path.dirname(path.join(components, file)), { recursive: true });
                    fs.writeFileSync(path.join(components, file), text);
                }
                const overlay = path.join(dir, `overlay-${i}`);
                fs.mkdirSync(overlay);
                fs.writeFileSync(path.join(overlay, "kustomization.yaml"), `resources:\n  - ../base\ncomponents:\n  - ../components-${i}/${s.id}\n`);
                const r = run(kubectl, ["kustomize", overlay]);
                if (r.status !== 0) {
                    problems.push(`${label}: kubectl kustomize failed: ${r.stderr.trim()}`);
                    return;
                }
                built++;
                const real = YAML.parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
                const model = build(appBase(), renderComponent(s));
                try {
                    assert.deepStrictEqual(sorted(real), sorted(model));
                } catch (e) {
                    problems.push(
                        `${label}: the restated kustomize builds other objects than kustomize: ${(e as Error).message.split("\n").slice(0, 30).join("\n")}`,
                    );
                }
                const plan = componentPlan(s);
                const rollout = real.find((o) => o.kind === "Rollout") as { spec: { strategy: unknown } } | undefined;
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
                const services = real
                    .filter((o) => o.kind === "Service")
                    .map((o) => (o.metadata as { name: string }).name)
                    .sort();
                const want = plan.services.map((x) => x.metadata.name.replace(/^app-/, "orders-api-")).sort();
                if (JSON.stringify(services) !== JSON.stringify(want)) {
                    problems.push(`${label}: Services ${services.join(", ")}, not ${want.join(", ")}`);
                }
                const route = real.find((o) => o.kind === "HTTPRoute") as { spec: { rules: { backendRefs: { name: string; port: number }[] }[] } } | undefined;
                const refs = route?.spec.rules.flatMap((x) => x.backendRefs.map((b) => `${b.name}:${b.port}`)) ?? [];
                const wantRefs = (plan.httpRoute?.spec.rules ?? []).flatMap((x) => x.backendRefs.map((b) => `${b.name.replace(/^app-/, "orders-api-")}:8081`));
                if (plan.httpRoute && JSON.stringify(refs) !== JSON.stringify(wantRefs)) {
                    problems.push(`${label}: route backends ${refs.join(", ")}, not ${wantRefs.join(", ")}`);
                }
                const roles = real
                    .filter((o) => o.kind === "Role")
                    .map((o) => (o.metadata as { name: string }).name)
                    .sort();
                if (
                    JSON.stringify(roles) !== JSON.stringify(s.prodClass === "regulated" ? ["orders-api-rollout-approver", "orders-api-rollout-deployer"] : [])
                ) {
                    problems.push(`${label}: Roles ${JSON.stringify(roles)}`);
                }
                for (const o of real) {
                    const v = validateObject(o);
                    if (v.problems.length > 0) {
                        problems.push(`${label}: ${key(o)} fails its schema (${v.via}): ${v.problems.join("; ")}`);
                    }
                }
            });
            assert.deepStrictEqual(problems, [], problems.join("\n"));
            assert.ok(built >= 15, `only ${built} components built`);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
