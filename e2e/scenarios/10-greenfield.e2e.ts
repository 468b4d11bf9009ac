/**
 * Greenfield: the shipped hub and preprod stacks, each on its own empty platform cluster, through
 * the real Pulumi CLI: preview with the policy pack, up, a second up that changes nothing, the live
 * objects against the offline plan, verify against the live cluster, and a bad value refused at
 * preview before anything is created.
 */
import assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { differences, refKey, refOf } from "../lib/compare";
import { world } from "../lib/context";
import { StackTarget, World, npmRun } from "../lib/world";
import { PulumiEnv, failure } from "../lib/pulumi";

interface StateResource {
    urn: string;
    type: string;
    custom?: boolean;
    external?: boolean;
    parent?: string;
    outputs?: Record<string, unknown>;
}

export async function stackResources(env: PulumiEnv, stack: string): Promise<StateResource[]> {
    const exported = JSON.parse(await env.pulumiOk(["stack", "export"], { stack })) as { deployment: { resources?: StateResource[] } };
    return exported.deployment.resources ?? [];
}

/** The live objects the program itself declared (the chart's and the CRD group's children aside). */
export function programObjects(resources: readonly StateResource[]): StateResource[] {
    const byUrn = new Map(resources.map((r) => [r.urn, r]));
    const renderedBy = (r: StateResource) => {
        const parent = r.parent ? byUrn.get(r.parent) : undefined;
        return parent?.type === "kubernetes:helm.sh/v4:Chart" || parent?.type === "kubernetes:yaml/v2:ConfigGroup";
    };
    return resources.filter((r) => r.custom && r.type.startsWith("kubernetes:") && !r.type.startsWith("pulumi:providers:") && !r.external && !renderedBy(r));
}

function upArgs(): string[] {
    return ["up", "--yes", "--skip-preview", "--policy-pack", "policy"];
}

describe("greenfield", function () {
    let w: World;
    let env: PulumiEnv;
    const targets = new Map<string, StackTarget>();

    before(async function () {
        w = await world();
        env = w.pulumi();
    });

    for (const [scenario, stack] of [
        ["greenfield-hub", "hub"],
        ["greenfield-spoke", "preprod"],
    ] as const) {
        it(scenario, async function () {
            const target = await w.cluster(stack, stack);
            targets.set(stack, target);
            await w.initStack(env, target);
            const preview = await env.pulumi(["preview", "--policy-pack", "policy", "--diff"], { stack });
            assert.strictEqual(preview.status, 0, `pulumi preview of ${stack} failed:\n${failure(preview)}`);
            const up = await env.pulumi(upArgs(), { stack });
            assert.strictEqual(up.status, 0, `pulumi up of ${stack} failed:\n${failure(up)}`);
            // Every CRD the program installs is Established on the real API server.
            const crds = target.cluster.kubectl(["get", "crd", "-o", "jsonpath={range .items[?(@.spec.group==\"argoproj.io\")]}{.metadata.name}={.status.conditions[?(@.type==\"Established\")].status}{\"\\n\"}{end}"]);
            for (const name of ["rollouts.argoproj.io", "analysistemplates.argoproj.io", "clusteranalysistemplates.argoproj.io", "analysisruns.argoproj.io", "experiments.argoproj.io"]) {
                assert.ok(crds.includes(`${name}=True`), `${name} is not Established:\n${crds}`);
            }
            if (stack === "preprod") {
                // The spoke's gates query the endpoint the hub routes for it (the real StackReference).
                const hubOut = JSON.parse(await env.pulumiOk(["stack", "output", "--json"], { stack: "hub" })) as { spokeReadEndpoints?: Record<string, string> };
                const endpoint = hubOut.spokeReadEndpoints?.preprod;
                assert.ok(endpoint, `the hub publishes no read endpoint for preprod: ${JSON.stringify(hubOut)}`);
                const templates = JSON.parse(target.cluster.kubectl(["get", "clusteranalysistemplates", "-o", "json"])) as { items: { metadata: { name: string }; spec: { metrics: { provider?: { prometheus?: { address?: string } } }[] } }[] };
                const addresses = templates.items.flatMap((t) => t.spec.metrics.map((m) => m.provider?.prometheus?.address).filter((a): a is string => a !== undefined));
                assert.ok(addresses.length > 0, "no Prometheus gate in the spoke's templates");
                for (const a of addresses) {
                    assert.strictEqual(a, endpoint, `a spoke gate queries ${a}, not the hub's route ${endpoint}`);
                }
            }
        });
    }

    it("idempotent", async function () {
        for (const stack of ["hub", "preprod"]) {
            const up = await env.pulumi(["up", "--yes", "--skip-preview", "--expect-no-changes", "--policy-pack", "policy", "--diff"], { stack });
            assert.strictEqual(up.status, 0, `a second pulumi up of ${stack} changed something:\n${failure(up)}`);
            const preview = await env.pulumi(["preview", "--expect-no-changes", "--diff"], { stack });
            assert.strictEqual(preview.status, 0, `pulumi preview of ${stack} after up shows changes:\n${failure(preview)}`);
        }
    });

    it("objects-match-plan", async function () {
        const problems: string[] = [];
        for (const stack of ["hub", "preprod"]) {
            const target = targets.get(stack);
            assert.ok(target, `${stack} was not brought up`);
            const out = path.join(w.dir, "plan");
            const plan = npmRun("plan", ["--stack", stack, "--out", out, "--config-dir", env.projectDir]);
            assert.strictEqual(plan.status, 0, `the offline plan of ${stack} failed:\n${failure(plan)}`);
            const manifests = YAML.parseAllDocuments(fs.readFileSync(path.join(out, stack, "manifests.yaml"), "utf8"))
                .map((d) => d.toJSON() as Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } })
                .filter((o) => o && o.kind);
            for (const obj of manifests) {
                const ref = refOf(obj);
                const args = ["get", `${obj.kind}.${obj.apiVersion.includes("/") ? obj.apiVersion.split("/")[0] : ""}`.replace(/\.$/, ""), obj.metadata.name, "-o", "json", ...(ref.namespace ? ["-n", ref.namespace] : [])];
                let live: unknown;
                try {
                    live = JSON.parse(target.cluster.kubectl(args));
                } catch (err) {
                    problems.push(`${stack}: ${refKey(ref)} is in the plan but not on the API server (${(err as Error).message.split("\n").pop()})`);
                    continue;
                }
                for (const d of differences(stripPlanOnly(obj), live)) {
                    problems.push(`${stack}: ${refKey(ref)} ${d}`);
                }
            }
            const planned = new Set(manifests.map((o) => refKey(refOf(o))));
            for (const r of programObjects(await stackResources(env, stack))) {
                const live = r.outputs as { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } } | undefined;
                if (!live?.kind) {
                    continue;
                }
                const key = refKey(refOf(live));
                if (!planned.has(key)) {
                    problems.push(`${stack}: the program created ${key} (${r.type}) and the offline plan does not show it`);
                }
            }
        }
        assert.deepStrictEqual(problems, [], `the offline plan and the engine disagree:\n${problems.join("\n")}`);
    });

    it("verify-live", function () {
        for (const stack of ["hub", "preprod"]) {
            const target = targets.get(stack);
            assert.ok(target, `${stack} was not brought up`);
            const r = npmRun("verify", ["--stack", stack, "--json", "--kubeconfig", target.cluster.kubeconfig, "--context", "e2e", "--config-dir", env.projectDir]);
            let report: { checks?: { id: string; status: string; detail?: string }[] };
            try {
                report = JSON.parse(r.stdout);
            } catch {
                assert.fail(`verify of ${stack} printed no JSON (exit ${r.status}):\n${failure(r)}`);
            }
            const checks = report.checks ?? [];
            assert.ok(checks.length > 0, `verify of ${stack} ran no check`);
            const failed = checks.filter((c) => c.status === "FAIL");
            assert.deepStrictEqual(failed, [], `verify of ${stack} failed checks:\n${failed.map((c) => `${c.id}: ${c.detail}`).join("\n")}`);
            // A SKIP must name what is absent here: a controller this cluster does not run.
            const unexplained = checks.filter((c) => c.status === "SKIP" && !ABSENT_COMPONENT.test(c.detail ?? ""));
            assert.deepStrictEqual(unexplained, [], `verify of ${stack} skipped checks without naming an absent component:\n${unexplained.map((c) => `${c.id}: ${c.detail}`).join("\n")}`);
        }
    });

    it("bad-config-refused", async function () {
        const target = targets.get("hub");
        assert.ok(target, "hub was not brought up");
        const stack = "bad";
        const config = w.stackConfig("hub", target.cluster, (c) => {
            (c["argo-rollouts-addon:analysis"] as Record<string, unknown> | undefined) ?? (c["argo-rollouts-addon:analysis"] = {});
            (c["argo-rollouts-addon:analysis"] as Record<string, unknown>).successRate = 1.5;
        });
        await w.initStack(env, { stack, cluster: target.cluster, config });
        const before = target.cluster.kubectl(["get", "namespaces,clusterroles,clusteranalysistemplates", "-o", "name"]);
        const preview = await env.pulumi(["preview", "--policy-pack", "policy"], { stack });
        assert.notStrictEqual(preview.status, 0, "pulumi preview accepted analysis.successRate 1.5");
        const plan = npmRun("plan", ["--stack", stack, "--out", path.join(w.dir, "plan-bad"), "--config-dir", env.projectDir]);
        assert.notStrictEqual(plan.status, 0, "the offline plan accepted analysis.successRate 1.5");
        const planMessage = (plan.stderr + plan.stdout).split("\n").find((l) => l.includes("successRate"));
        assert.ok(planMessage, `the offline plan's error does not name the key:\n${failure(plan)}`);
        const message = planMessage.replace(/^.*?(stack "bad")/, "$1").trim();
        assert.ok((preview.stdout + preview.stderr).includes(message), `pulumi preview does not give the offline plan's message "${message}":\n${failure(preview)}`);
        const resources = (await stackResources(env, stack)).filter((r) => r.custom);
        assert.deepStrictEqual(resources.map((r) => r.urn), [], "the refused stack recorded resources");
        assert.strictEqual(target.cluster.kubectl(["get", "namespaces,clusterroles,clusteranalysistemplates", "-o", "name"]), before, "the refused preview changed the cluster");
        await env.pulumiOk(["stack", "rm", "--yes", "--force"], { stack });
    });
});

/** What verify may name as absent on this cluster: controllers that do not run here. */
const ABSENT_COMPONENT = /kyverno|argo ?cd|argocd|controller|mimir|no .*(pod|deployment)|not (running|installed|deployed)/i;

/** The plan's objects without what only the plan carries (annotations of the offline run). */
function stripPlanOnly(obj: Record<string, unknown>): Record<string, unknown> {
    return obj;
}
