import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import {
    PATCH_FORCE_ANNOTATION,
    adoptionRunbook,
    forceAdoptedObjects,
    objectsToRetire,
    ownsWholeObject,
    providerAdoptionOptions,
} from "../components/cluster/adoption";
import { SMOKE_CANARY_TYPE } from "../components/smoke";
import { STAGE_TYPES } from "../components/stage";
import { guardedResources } from "../tools/guard";
import { OfflineRun, PlannedResource, runOffline } from "../tools/offline";
import { adoptions, manifestResources, planStack, resourceRows, summary } from "../tools/plan";
import { REPO_ROOT, configFromStackFile, listStacks, placeholderWorld, readStackFile } from "../tools/stackFile";
import { byName, FIXTURE_STACKS } from "./harness";
import { SUCCESS_RATE, ROLLOUTS_CRDS, RELEASE_NAME } from "../components/argoRollouts";

const PROVIDER = "pulumi:providers:kubernetes";

/** Plans a shipped stack file with `cluster.adoptExisting` set as given. */
async function planShipped(stack: string, adoptExisting: boolean | undefined): Promise<OfflineRun> {
    const file = readStackFile(stack, FIXTURE_STACKS);
    const key = "argo-rollouts-addon:cluster";
    const cluster = JSON.parse(file.config[key]) as Record<string, unknown>;
    if (adoptExisting === undefined) {
        delete cluster.adoptExisting;
    } else {
        cluster.adoptExisting = adoptExisting;
    }
    const config = { ...file.config, [key]: JSON.stringify(cluster) };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { defineStack } = require("../stacks/program") as typeof import("../stacks/program");
    const world = placeholderWorld(file);
    if (stack === "preprod") {
        world.stackOutputs = { "organization/argo-rollouts-addon/hub": (await planStack(readStackFile("hub", FIXTURE_STACKS))).outputs };
    }
    return runOffline({ stack, config, secretKeys: file.secretKeys, world, program: () => defineStack() });
}

function provider(run: OfflineRun): PlannedResource {
    const found = run.resources.filter((r) => r.type === PROVIDER);
    assert.strictEqual(found.length, 1);
    return found[0];
}

describe("adopting an existing install", () => {
    const runs = new Map<string, OfflineRun>();
    before(async () => {
        for (const stack of ["hub", "preprod"]) {
            runs.set(`${stack}:off`, await planShipped(stack, undefined));
            runs.set(`${stack}:on`, await planShipped(stack, true));
        }
    });

    it("is off in every shipped stack, and the provider says so explicitly", () => {
        for (const stack of listStacks(FIXTURE_STACKS)) {
            const text = fs.readFileSync(path.join(FIXTURE_STACKS, `Pulumi.${stack}.yaml`), "utf8");
            assert.match(text, /^\s+adoptExisting: false\b/m, `Pulumi.${stack}.yaml states adoptExisting: false`);
        }
        for (const stack of ["hub", "preprod"]) {
            const inputs = provider(runs.get(`${stack}:off`)!).inputs;
            assert.strictEqual(inputs.upsertExistingObjects, "false");
            assert.strictEqual(inputs.enablePatchForce, "false");
            assert.deepStrictEqual(adoptions(runs.get(`${stack}:off`)!), []);
            assert.match(summary(runs.get(`${stack}:off`)!), /adopting: nothing/);
        }
    });

    it("cannot be switched on by the environment", async () => {
        const saved = { u: process.env.PULUMI_K8S_UPSERT_EXISTING_OBJECTS, f: process.env.PULUMI_K8S_ENABLE_PATCH_FORCE };
        process.env.PULUMI_K8S_UPSERT_EXISTING_OBJECTS = "true";
        process.env.PULUMI_K8S_ENABLE_PATCH_FORCE = "true";
        try {
            const run = await planShipped("hub", false);
            assert.strictEqual(provider(run).inputs.upsertExistingObjects, "false");
            assert.strictEqual(provider(run).inputs.enablePatchForce, "false");
        } finally {
            for (const [k, v] of [
                ["PULUMI_K8S_UPSERT_EXISTING_OBJECTS", saved.u],
                ["PULUMI_K8S_ENABLE_PATCH_FORCE", saved.f],
            ] as const) {
                if (v === undefined) {
                    delete process.env[k];
                } else {
                    process.env[k] = v;
                }
            }
        }
    });

    it("upserts through the provider for that run only, and never forces provider-wide", () => {
        assert.deepStrictEqual(providerAdoptionOptions(true), { upsertExistingObjects: true, enablePatchForce: false });
        assert.deepStrictEqual(providerAdoptionOptions(false), { upsertExistingObjects: false, enablePatchForce: false });
        const inputs = provider(runs.get("hub:on")!).inputs;
        assert.strictEqual(inputs.upsertExistingObjects, "true");
        assert.strictEqual(inputs.enablePatchForce, "false", "a provider-wide force would also force the ArgoCD patches");
        assert.strictEqual(inputs.clusterIdentifier, "hub", "pinned: a changed provider input is an update, not a replacement");
    });

    describe("forcing ownership per object", () => {
        const transformArgs = (type: string, props: Record<string, unknown>, custom = true): pulumi.ResourceTransformArgs => ({
            type,
            name: "x",
            custom,
            props,
            opts: {},
        });
        const forced = async (type: string, props: Record<string, unknown>, custom = true): Promise<Record<string, unknown> | undefined> => {
            const result = await forceAdoptedObjects(transformArgs(type, props, custom));
            if (!result) {
                return undefined;
            }
            const metadata = result.props.metadata;
            if (pulumi.Output.isInstance(metadata)) {
                return await new Promise<Record<string, unknown>>((resolve) => (metadata as pulumi.Output<Record<string, unknown>>).apply((m) => resolve(m)));
            }
            return metadata as Record<string, unknown>;
        };

        it("annotates whole objects, keeping their own annotations", async () => {
            const meta = await forced("kubernetes:apps/v1:Deployment", { kind: "Deployment", metadata: { name: "argo-rollouts", annotations: { a: "b" } } });
            assert.deepStrictEqual(meta, { name: "argo-rollouts", annotations: { a: "b", [PATCH_FORCE_ANNOTATION]: "true" } });
            const template = await forced("kubernetes:argoproj.io/v1alpha1:ClusterAnalysisTemplate", {
                kind: "ClusterAnalysisTemplate",
                metadata: { name: "success-rate" },
            });
            assert.deepStrictEqual(template, { name: "success-rate", annotations: { [PATCH_FORCE_ANNOTATION]: "true" } });
            const crd = await forced("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", {
                kind: "CustomResourceDefinition",
                metadata: pulumi.output({ name: "rollouts.argoproj.io" }),
            });
            assert.deepStrictEqual(crd, { name: "rollouts.argoproj.io", annotations: { [PATCH_FORCE_ANNOTATION]: "true" } });
        });

        it("never forces a patch, a component or the provider", async () => {
            assert.strictEqual(
                await forceAdoptedObjects(transformArgs("kubernetes:core/v1:ConfigMapPatch", { kind: "ConfigMap", metadata: { name: "argocd-cm" } })),
                undefined,
            );
            assert.strictEqual(
                await forceAdoptedObjects(
                    transformArgs("kubernetes:argoproj.io/v1alpha1:AppProjectPatch", { kind: "AppProject", metadata: { name: "tenants" } }),
                ),
                undefined,
            );
            assert.strictEqual(await forceAdoptedObjects(transformArgs("kubernetes:helm.sh/v4:Chart", { chart: "argo-rollouts" }, false)), undefined);
            assert.strictEqual(await forceAdoptedObjects(transformArgs("kubernetes:yaml/v2:ConfigGroup", { files: [] }, false)), undefined);
            assert.strictEqual(await forceAdoptedObjects(transformArgs("pulumi:providers:kubernetes", { context: "hub" })), undefined);
            // A custom resource whose kind merely ends in "Patch" is a whole object (IsPatchResource).
            assert.ok(ownsWholeObject("kubernetes:example.com/v1:ReleasePatch", "ReleasePatch", true));
        });

        it("is carried by every stage of the adopting run only, and spares every patch the stack declares", async () => {
            for (const stack of ["hub", "preprod"]) {
                const stageTypes = new Set<string>([...Object.values(STAGE_TYPES), SMOKE_CANARY_TYPE]);
                const on = runs.get(`${stack}:on`)!;
                const stages = on.resources.filter((r) => stageTypes.has(r.type));
                assert.ok(stages.filter((r) => (Object.values(STAGE_TYPES) as string[]).includes(r.type)).length === 4, stack);
                for (const r of stages) {
                    assert.deepStrictEqual(r.transforms, [forceAdoptedObjects], `${r.urn} carries the force transform`);
                }
                for (const r of runs.get(`${stack}:off`)!.resources.filter((x) => (Object.values(STAGE_TYPES) as string[]).includes(x.type))) {
                    assert.deepStrictEqual(r.transforms, [], `${r.urn} forces nothing without adoption`);
                }
                const patches = on.resources.filter((r) => r.custom && !r.read && r.type.endsWith("Patch"));
                assert.ok(stack !== "hub" || patches.length > 0, "the hub patches ArgoCD's objects");
                for (const r of patches) {
                    assert.strictEqual(await forceAdoptedObjects(transformArgs(r.type, r.inputs)), undefined, `${r.urn} must conflict, not force`);
                }
                for (const r of manifestResources(on)) {
                    assert.ok(ownsWholeObject(r.type, r.inputs.kind, r.custom), `${r.urn} is forced while adopting`);
                }
            }
        });
    });

    it("shows exactly what is adopted, in resources.json and the summary", () => {
        const run = runs.get("hub:on")!;
        const rows = resourceRows(run);
        const crds = rows.find((r) => r.name === "rollouts-crds")!;
        assert.deepStrictEqual(
            crds.adopts,
            ROLLOUTS_CRDS.map((c) => `CustomResourceDefinition ${c.name}`),
        );
        const chart = rows.find((r) => r.type === "kubernetes:helm.sh/v4:Chart")!;
        assert.deepStrictEqual(chart.adopts, [`every object chart argo-rollouts 2.41.0 renders for release ${RELEASE_NAME} in namespace argo-rollouts`]);
        assert.deepStrictEqual(rows.find((r) => r.name === "controller-namespace")!.adopts, ["Namespace argo-rollouts"]);
        assert.deepStrictEqual(rows.find((r) => r.name === "controller-clusterrole")!.adopts, [`ClusterRole ${RELEASE_NAME}`]);
        // Same-named policies and templates of the platform are taken over too (the shipped hub
        // complements ADR-085's availability policies, so its own are the Rollout guards).
        assert.ok(rows.some((r) => JSON.stringify(r.adopts) === JSON.stringify(["ValidatingPolicy restrict-rollout-route-namespace"])));
        assert.ok(rows.some((r) => JSON.stringify(r.adopts) === JSON.stringify([`ClusterAnalysisTemplate ${SUCCESS_RATE}`])));
        // Reads, patches and the provider adopt nothing.
        for (const r of rows.filter(
            (x) =>
                x.read ||
                String(x.type).endsWith("Patch") ||
                x.type === PROVIDER ||
                (!x.custom && x.type !== "kubernetes:yaml/v2:ConfigGroup" && x.type !== "kubernetes:helm.sh/v4:Chart"),
        )) {
            assert.strictEqual(r.adopts, null, String(r.urn));
        }
        const objects = adoptions(run).flatMap((a) => a.objects);
        const text = summary(run);
        assert.match(text, new RegExp(`adopting: ${objects.length} objects`));
        for (const o of objects) {
            assert.ok(text.includes(`    ${o}`), o);
        }
        // Every whole object the stack declares is in the list, plus the CRDs and the chart.
        assert.strictEqual(objects.length, manifestResources(run).length + ROLLOUTS_CRDS.length + 1);
    });

    it("never replaces a CRD: same URNs, same options, no delete-before-replace, nothing imported", async () => {
        for (const stack of ["hub", "preprod"]) {
            const off = runs.get(`${stack}:off`)!;
            const on = runs.get(`${stack}:on`)!;
            assert.deepStrictEqual(
                on.resources.map((r) => r.urn),
                off.resources.map((r) => r.urn),
            );
            for (const r of on.resources) {
                const o = off.resources.find((x) => x.urn === r.urn)!;
                assert.strictEqual(r.protect, o.protect, r.urn);
                assert.strictEqual(r.retainOnDelete, o.retainOnDelete, r.urn);
                assert.strictEqual(r.deleteBeforeReplace, null, `${r.urn} must leave replacement to the provider`);
                assert.strictEqual(r.importId, null, r.urn);
                if (r.type !== PROVIDER) {
                    assert.deepStrictEqual(r.inputs, o.inputs, `only the provider differs: ${r.urn}`);
                }
            }
            const group = byName(on, "rollouts-crds");
            assert.ok(group.protect && group.retainOnDelete);
            assert.strictEqual(group.inputs.resourcePrefix, undefined, "the CRDs keep their names rollouts-crds:<crd>");
            const crds = (await guardedResources(on)).filter((g) => g.type === "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition");
            assert.deepStrictEqual(
                crds.map((c) => c.name),
                ROLLOUTS_CRDS.map((c) => c.name),
            );
            for (const c of crds) {
                assert.ok(c.protect && c.retainOnDelete, `${c.name} stays protected and retained while adopting`);
            }
        }
    });

    describe("runbook", () => {
        // The runbook is documented in docs/operations/adopt.md, before its adopt-check section.
        const page = fs.readFileSync(path.join(REPO_ROOT, "docs", "operations", "adopt.md"), "utf8");
        const section = page.slice(0, page.indexOf("\n## adopt-check"));
        const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
            m[1]
                .split("\n")
                .map((l) => l.trim())
                .filter((l) => l !== ""),
        );

        it("in docs/operations/adopt.md is the program's runbook, step by step, for the hub", () => {
            const steps = adoptionRunbook(configFromStackFile(readStackFile("hub", FIXTURE_STACKS)));
            assert.strictEqual(blocks.length, steps.length);
            steps.forEach((step, i) => assert.deepStrictEqual(blocks[i], step.commands, `step ${i + 1}: ${step.title}`));
        });

        it("retires the old aggregate roles only after the adopting run created the roles that replace them", () => {
            const steps = adoptionRunbook(configFromStackFile(readStackFile("hub", FIXTURE_STACKS)));
            const adopt = steps.findIndex((st) => st.commands.some((c) => c.startsWith("pulumi up")));
            const retire = steps.findIndex((st) => st.commands.some((c) => c.includes("argo-rollouts-aggregate-to-view")));
            assert.ok(adopt >= 0 && retire > adopt, `retire at step ${retire + 1}, adopt at step ${adopt + 1}`);
        });

        it("never deletes a CRD or uninstalls the old release", () => {
            for (const stack of ["hub", "preprod"]) {
                for (const cmd of adoptionRunbook(configFromStackFile(readStackFile(stack, FIXTURE_STACKS)))
                    .flatMap((s) => s.commands)
                    .filter((c) => !c.startsWith("#"))) {
                    assert.doesNotMatch(cmd, /delete\s+(crd|customresourcedefinition)/i, cmd);
                    assert.ok(!(/\bdelete\b/.test(cmd) && /\.argoproj\.io\b/.test(cmd)), `deletes a CRD: ${cmd}`);
                    assert.doesNotMatch(cmd, /helm (uninstall|delete)|terraform destroy|--cascade=true|pulumi destroy/, cmd);
                }
            }
        });

        it("names what the program declares: the release, its namespace, the CRDs, the config key", async () => {
            const cfg = configFromStackFile(readStackFile("hub", FIXTURE_STACKS));
            const run = runs.get("hub:off")!;
            const chart = run.resources.find((r) => r.type === "kubernetes:helm.sh/v4:Chart")!;
            const commands = adoptionRunbook(cfg).flatMap((s) => s.commands);
            assert.ok(commands.includes(`kubectl delete secret -n ${String(chart.inputs.namespace)} -l owner=helm,name=${String(chart.inputs.name)}`));
            const crdNames = ROLLOUTS_CRDS.map((c) => c.name);
            const files = byName(run, "rollouts-crds").inputs.files as string[];
            assert.deepStrictEqual(
                files.map((f) => ROLLOUTS_CRDS.find((c) => f.endsWith(`/${c.file}`))?.name),
                crdNames,
                "the runbook's CRDs are the ones the program applies",
            );
            assert.ok(commands.includes(`kubectl annotate crd ${crdNames.join(" ")} helm.sh/resource-policy=keep --overwrite`));
            // `pulumi config set --path cluster.adoptExisting true` yields the config the program reads.
            const adopting = await planShipped("hub", true);
            assert.ok(commands.includes("pulumi config set --path cluster.adoptExisting true -s hub"));
            assert.strictEqual(provider(adopting).inputs.upsertExistingObjects, "true");
        });

        it("retires only objects the program does not declare", () => {
            for (const stack of ["hub", "preprod"]) {
                const declared = new Set(
                    manifestResources(runs.get(`${stack}:off`)!).map((r) => {
                        const meta = r.inputs.metadata as { name: string; namespace?: string };
                        return `${String(r.inputs.kind).toLowerCase()}/${meta.namespace ?? ""}/${meta.name}`;
                    }),
                );
                const retired = objectsToRetire(configFromStackFile(readStackFile(stack, FIXTURE_STACKS)));
                assert.ok(
                    retired.some((o) => o.name === "argo-rollouts-aggregate-to-edit"),
                    "the aggregate roles let editors promote",
                );
                for (const o of retired) {
                    assert.ok(!declared.has(`${o.kind}/${o.namespace ?? ""}/${o.name}`), `${o.kind} ${o.name} is declared by the program`);
                    assert.notStrictEqual(o.kind, "customresourcedefinition");
                }
            }
            const withDashboard = objectsToRetire({ controller: { ...configFromStackFile(readStackFile("hub", FIXTURE_STACKS)).controller, dashboard: true } });
            assert.ok(!withDashboard.some((o) => o.name.endsWith("-dashboard")), "a stack with the dashboard re-declares it through the chart");
        });
    });
});

describe("cluster.allowDowngrade", () => {
    it("cluster.allowDowngrade only with adoptExisting", () => {
        const file = readStackFile("hub", FIXTURE_STACKS);
        const key = "argo-rollouts-addon:cluster";
        const cluster = { ...(JSON.parse(file.config[key]) as Record<string, unknown>), allowDowngrade: true };
        assert.throws(
            () => configFromStackFile({ ...file, config: { ...file.config, [key]: JSON.stringify(cluster) } }),
            /argo-rollouts-addon:cluster\.allowDowngrade = true: only applies with cluster\.adoptExisting: true/,
        );
    });
});
