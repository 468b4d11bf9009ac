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
import { StackTarget, World, npmRun, npmRunAsync } from "../lib/world";
import { PulumiEnv, failure } from "../lib/pulumi";
import { CheckResult } from "../../tools/verify/report";

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
    return resources.filter((r) => isObject(r) && renderedBy(resources, r) === undefined);
}

/** The live objects the provider rendered for a component: the chart's, or the CRD group's. */
export function renderedObjects(resources: readonly StateResource[], by: "chart" | "CRDs"): StateResource[] {
    return resources.filter((r) => isObject(r) && renderedBy(resources, r) === by);
}

const isObject = (r: StateResource) => Boolean(r.custom) && r.type.startsWith("kubernetes:") && !r.type.startsWith("pulumi:providers:") && !r.external;

function renderedBy(resources: readonly StateResource[], r: StateResource): "chart" | "CRDs" | undefined {
    const parent = r.parent ? resources.find((p) => p.urn === r.parent) : undefined;
    return parent?.type === "kubernetes:helm.sh/v4:Chart" ? "chart" : parent?.type === "kubernetes:yaml/v2:ConfigGroup" ? "CRDs" : undefined;
}

function upArgs(): string[] {
    return ["up", "--yes", "--skip-preview", "--policy-pack", "policy-pack"];
}

/** About how long this file runs beside another on 2 cores: orders the side-by-side run (e2e/lib/pool.ts). */
export const SECONDS = 300;

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
            const preview = await env.pulumi(["preview", "--policy-pack", "policy-pack", "--diff"], { stack });
            assert.strictEqual(preview.status, 0, `pulumi preview of ${stack} failed:\n${failure(preview)}`);
            const up = await env.pulumi(upArgs(), { stack });
            assert.strictEqual(up.status, 0, `pulumi up of ${stack} failed:\n${failure(up)}`);
            // Every CRD the program installs is Established on the real API server.
            const crds = target.cluster.kubectl([
                "get",
                "crd",
                "-o",
                'jsonpath={range .items[?(@.spec.group=="argoproj.io")]}{.metadata.name}={.status.conditions[?(@.type=="Established")].status}{"\\n"}{end}',
            ]);
            for (const name of [
                "rollouts.argoproj.io",
                "analysistemplates.argoproj.io",
                "clusteranalysistemplates.argoproj.io",
                "analysisruns.argoproj.io",
                "experiments.argoproj.io",
            ]) {
                assert.ok(crds.includes(`${name}=True`), `${name} is not Established:\n${crds}`);
            }
            if (stack === "preprod") {
                // The spoke's gates query the endpoint the hub routes for it (the real StackReference).
                const hubOut = JSON.parse(await env.pulumiOk(["stack", "output", "--json"], { stack: "hub" })) as {
                    spokeReadEndpoints?: Record<string, string>;
                };
                const endpoint = hubOut.spokeReadEndpoints?.preprod;
                assert.ok(endpoint, `the hub publishes no read endpoint for preprod: ${JSON.stringify(hubOut)}`);
                const templates = JSON.parse(target.cluster.kubectl(["get", "clusteranalysistemplates", "-o", "json"])) as {
                    items: { metadata: { name: string }; spec: { metrics: { provider?: { prometheus?: { address?: string } } }[] } }[];
                };
                const addresses = templates.items.flatMap((t) =>
                    t.spec.metrics.map((m) => m.provider?.prometheus?.address).filter((a): a is string => a !== undefined),
                );
                assert.ok(addresses.length > 0, "no Prometheus gate in the spoke's templates");
                for (const a of addresses) {
                    assert.strictEqual(a, endpoint, `a spoke gate queries ${a}, not the hub's route ${endpoint}`);
                }
            }
        });
    }

    it("idempotent", async function () {
        for (const stack of ["hub", "preprod"]) {
            const up = await env.pulumi(["up", "--yes", "--skip-preview", "--expect-no-changes", "--policy-pack", "policy-pack", "--diff"], { stack });
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
            // With the chart the run serves, the cluster's Kubernetes version and the CRDs read from
            // the URLs the stack names (the run's file server, its CA trusted through
            // NODE_EXTRA_CA_CERTS): the plan shows the chart's and the CRDs' objects too.
            const kubeVersion = (
                JSON.parse(target.cluster.kubectl(["version", "-o", "json"])) as { serverVersion: { gitVersion: string } }
            ).serverVersion.gitVersion.replace(/[-+].*$/, "");
            // Not blocking: the run's file server, in this process, answers the plan's requests for the CRDs.
            const plan = await npmRunAsync(
                "plan",
                ["--stack", stack, "--out", out, "--config-dir", env.projectDir, "--chart", w.chartArchive, "--kube-version", kubeVersion, "--crds", "remote"],
                {
                    ...process.env,
                    HELM: path.join(w.bin, "helm"),
                    NODE_EXTRA_CA_CERTS: w.files.caFile,
                },
            );
            assert.strictEqual(plan.status, 0, `the offline plan of ${stack} failed:\n${failure(plan)}`);
            assert.match(plan.stdout, /chart objects: \d+ in manifests\.yaml/, `the plan of ${stack} does not show the chart's objects:\n${plan.stdout}`);
            assert.match(plan.stdout, /CRD objects: 5 in manifests\.yaml/, `the plan of ${stack} does not show the CRDs:\n${plan.stdout}`);
            const manifests = YAML.parseAllDocuments(fs.readFileSync(path.join(out, stack, "manifests.yaml"), "utf8"))
                .map((d) => d.toJSON() as Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } })
                .filter((o) => o && o.kind);
            for (const obj of manifests) {
                const ref = refOf(obj);
                const args = [
                    "get",
                    `${obj.kind}.${obj.apiVersion.includes("/") ? obj.apiVersion.split("/")[0] : ""}`.replace(/\.$/, ""),
                    obj.metadata.name,
                    "-o",
                    "json",
                    ...(ref.namespace ? ["-n", ref.namespace] : []),
                ];
                let live: unknown;
                try {
                    live = JSON.parse(target.cluster.kubectl(args));
                } catch (err) {
                    problems.push(`${stack}: ${refKey(ref)} is in the plan but not on the API server (${(err as Error).message.split("\n").pop()})`);
                    continue;
                }
                for (const d of differences(obj, live)) {
                    problems.push(`${stack}: ${refKey(ref)} ${d}`);
                }
            }
            const planned = new Set(manifests.map((o) => refKey(refOf(o))));
            // A Patch owns no object, so the plan lists it in resources.json (not manifests.yaml):
            // the keys it wrote must be the planned ones.
            const plannedPatches = new Map(
                (
                    JSON.parse(fs.readFileSync(path.join(out, stack, "resources.json"), "utf8")) as {
                        urn: string;
                        type: string;
                        inputs?: { data?: Record<string, string> };
                    }[]
                )
                    .filter((p) => p.type.endsWith("Patch"))
                    .map((p) => [p.urn, p]),
            );
            const state = await stackResources(env, stack);
            // Every object the real release and the CRD group created is in the plan (its fields
            // were compared with the live object above).
            for (const r of [...renderedObjects(state, "chart"), ...renderedObjects(state, "CRDs")]) {
                const live = r.outputs as { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } } | undefined;
                if (live?.kind && !planned.has(refKey(refOf(live)))) {
                    problems.push(
                        `${stack}: the provider created ${refKey(refOf(live))} (${r.type}, ${renderedBy(state, r)}) and the offline plan does not show it`,
                    );
                }
            }
            for (const r of programObjects(state)) {
                const live = r.outputs as
                    { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string }; data?: Record<string, string> } | undefined;
                if (!live?.kind) {
                    continue;
                }
                if (r.type.endsWith("Patch")) {
                    const p = plannedPatches.get(r.urn);
                    if (!p) {
                        problems.push(
                            `${stack}: the program patched ${refKey(refOf(live))} (${r.type}) and the offline plan's resources.json does not show it`,
                        );
                    }
                    for (const [k, v] of Object.entries(p?.inputs?.data ?? {})) {
                        if (live.data?.[k] !== v) {
                            problems.push(`${stack}: ${refKey(refOf(live))} key ${k} differs from the offline plan's`);
                        }
                    }
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
            const r = npmRun("verify", [
                "--stack",
                stack,
                "--json",
                "--kubeconfig",
                target.cluster.kubeconfig,
                "--context",
                "e2e",
                "--config-dir",
                env.projectDir,
                ...ABSENT.flatMap((c) => ["--without", c]),
            ]);
            let report: { results?: CheckResult[] };
            try {
                report = JSON.parse(r.stdout);
            } catch {
                assert.fail(`verify of ${stack} printed no JSON (exit ${r.status}):\n${failure(r)}`);
            }
            const results = report.results ?? [];
            assert.ok(results.length > 0, `verify of ${stack} ran no check`);
            const failed = results.filter((c) => c.status === "FAIL");
            assert.deepStrictEqual(
                failed.map((c) => c.id),
                [],
                `verify of ${stack} failed checks:\n${failed.map((c) => `${c.id}: ${c.what}\n  ${c.findings.map((f) => `${f.object}: ${f.found}`).join("\n  ")}`).join("\n")}`,
            );
            // A SKIP must name why: a component this cluster does not run, or the stack setting
            // that leaves the requirement out (the shipped stacks enable no smoke canary, say).
            const unexplained = results.filter((c) => c.status === "SKIP" && !ABSENT_COMPONENT.test(c.note ?? "") && !STACK_SETTING.test(c.note ?? ""));
            assert.deepStrictEqual(
                unexplained.map((c) => c.id),
                [],
                `verify of ${stack} skipped checks without naming an absent component or a stack setting:\n${unexplained.map((c) => `${c.id}: ${c.note}`).join("\n")}`,
            );
            assert.strictEqual(r.status, 0, `verify of ${stack} exited ${r.status}`);
        }
    });

    it("bad-config-refused", async function () {
        const target = targets.get("hub");
        assert.ok(target, "hub was not brought up");
        const stack = "bad";
        const config = w.stackConfig("hub", target.cluster, (c) => {
            c["argo-rollouts-addon:analysis"] ??= {};
            (c["argo-rollouts-addon:analysis"] as Record<string, unknown>).successRate = 1.5;
        });
        await w.initStack(env, { stack, cluster: target.cluster, config });
        const before = target.cluster.kubectl(["get", "namespaces,clusterroles,clusteranalysistemplates", "-o", "name"]);
        const preview = await env.pulumi(["preview", "--policy-pack", "policy-pack"], { stack });
        assert.notStrictEqual(preview.status, 0, "pulumi preview accepted analysis.successRate 1.5");
        const plan = npmRun("plan", ["--stack", stack, "--out", path.join(w.dir, "plan-bad"), "--config-dir", env.projectDir]);
        assert.notStrictEqual(plan.status, 0, "the offline plan accepted analysis.successRate 1.5");
        // The offline plan's message, line by line, is what the CLI shows (indented as diagnostics).
        const planLines = (plan.stderr + plan.stdout).split("\n").map((l) => l.trim());
        const first = planLines.findIndex((l) => l.startsWith(`stack "${stack}": invalid configuration`));
        assert.ok(first >= 0, `the offline plan's error does not name the stack:\n${failure(plan)}`);
        const message = planLines.slice(first).filter((l, i) => i === 0 || l.startsWith("- "));
        assert.ok(
            message.some((l) => l.includes("analysis.successRate = 1.5")),
            `the offline plan's error does not name the key and value:\n${message.join("\n")}`,
        );
        // The stack names the hub's cluster: the checks between the project's stack files run under the
        // CLI (the program reads them from Pulumi's root directory, not its own folder) as in the plan.
        assert.ok(
            message.some((l) => l.includes("cluster.name") && l.includes("contradicts Pulumi.hub.yaml cluster.name")),
            `the checks between stack files did not run:\n${message.join("\n")}`,
        );
        const shown = (preview.stdout + preview.stderr).split("\n").map((l) => l.trim());
        const at = shown.findIndex((l, i) => l.endsWith(message[0]) && shown[i + 1] === message[1]);
        assert.ok(
            at >= 0 && message.every((l, i) => (i === 0 ? shown[at].endsWith(l) : shown[at + i] === l)),
            `pulumi preview does not show the offline plan's message:\n${message.join("\n")}\n--- it showed ---\n${failure(preview)}`,
        );
        assert.ok(!shown.some((l) => /^at .*\.(ts|js):\d+/.test(l)), `pulumi preview shows a stack trace with the message:\n${failure(preview)}`);
        const resources = (await stackResources(env, stack)).filter((r) => r.custom);
        assert.deepStrictEqual(
            resources.map((r) => r.urn),
            [],
            "the refused stack recorded resources",
        );
        assert.strictEqual(
            target.cluster.kubectl(["get", "namespaces,clusterroles,clusteranalysistemplates", "-o", "name"]),
            before,
            "the refused preview changed the cluster",
        );
        await env.pulumiOk(["stack", "rm", "--yes", "--force"], { stack });
    });
});

/**
 * What this cluster does not run, told to verify with --without: no kubelet (kwok marks pods
 * Running, no container starts, so neither the controller nor Mimir's gateway runs), no Kyverno,
 * no ArgoCD, no Gateway API controller. Every other check is decided by the real API server.
 */
const ABSENT = ["rollouts-controller", "kyverno", "argocd", "gateway-controller", "mimir"] as const;
const ABSENT_COMPONENT = new RegExp(`--without (${ABSENT.join("|")})\\b`);
/** A stack key named in a SKIP's note: the check does not apply to this stack's configuration. */
const STACK_SETTING = /\b(policy|smokeTest|argocd|mimir|spokes|analysis|controller|plugin)\.[A-Za-z][\w.]*/;
