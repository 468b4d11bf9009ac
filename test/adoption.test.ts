import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import {
    HELM_OWNERSHIP_ANNOTATIONS,
    PATCH_FORCE_ANNOTATION,
    RELEASE_SELECTOR,
    forceAdoptedObjects,
    markStackObjects,
    ownsWholeObject,
} from "../components/cluster/adoption";
import { SMOKE_CANARY_TYPE } from "../components/smoke";
import { STAGE_TYPES } from "../components/stage";
import { guardedResources } from "../tools/guard";
import { OfflineRun, PlannedResource, runOffline } from "../tools/offline";
import { adoptions, manifestResources, planStack, resourceRows, summary } from "../tools/plan";
import { REPO_ROOT, placeholderWorld, readStackFile } from "../tools/stackFile";
import { byName, FIXTURE_STACKS, withEnv } from "./harness";
import { problemFor } from "./stackConfig";
import { SUCCESS_RATE, ROLLOUTS_CRDS, RELEASE_NAME } from "../components/argoRollouts";

const PROVIDER = "pulumi:providers:kubernetes";

let hubOutputs: Record<string, unknown> | undefined;

/** Plans a fixture stack file with `cluster.adoptExisting` set as given (a spoke reads the hub's planned outputs). */
async function planShipped(stack: string, adoptExisting: boolean | undefined): Promise<OfflineRun> {
    const file = readStackFile(stack, FIXTURE_STACKS);
    const key = "argo-rollouts-addon:cluster";
    // JSON leaves out a key set to undefined: the stack file's without it.
    const config = { ...file.config, [key]: JSON.stringify({ ...(JSON.parse(file.config[key]) as object), adoptExisting }) };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { defineStack } = require("../stacks/program") as typeof import("../stacks/program");
    const world = placeholderWorld(file);
    if (stack === "preprod") {
        hubOutputs ??= (await planStack(readStackFile("hub", FIXTURE_STACKS))).outputs;
        world.stackOutputs = { "organization/argo-rollouts-addon/hub": hubOutputs };
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

    it("is off unless the stack file says so, and the provider says so explicitly", () => {
        for (const stack of ["hub", "preprod"]) {
            const inputs = provider(runs.get(`${stack}:off`)!).inputs;
            assert.deepStrictEqual([inputs.upsertExistingObjects, inputs.enablePatchForce], ["false", "false"]);
            assert.deepStrictEqual(adoptions(runs.get(`${stack}:off`)!), []);
            assert.match(summary(runs.get(`${stack}:off`)!), /adopting: nothing/);
        }
    });

    it("cannot be switched on by the environment", async () => {
        await withEnv({ PULUMI_K8S_UPSERT_EXISTING_OBJECTS: "true", PULUMI_K8S_ENABLE_PATCH_FORCE: "true" }, async () => {
            const { inputs } = provider(await planShipped("hub", false));
            assert.deepStrictEqual([inputs.upsertExistingObjects, inputs.enablePatchForce], ["false", "false"]);
        });
    });

    it("upserts through the provider for that run only, and never forces provider-wide", () => {
        const inputs = provider(runs.get("hub:on")!).inputs;
        // No provider-wide force: it would also force the ArgoCD patches. The identifier pinned: a changed provider input is an update, not a replacement.
        assert.deepStrictEqual([inputs.upsertExistingObjects, inputs.enablePatchForce, inputs.clusterIdentifier], ["true", "false", "hub"]);
    });

    describe("forcing ownership per object", () => {
        const transformArgs = (type: string, props: Record<string, unknown>, custom = true): pulumi.ResourceTransformArgs => ({
            type,
            name: "x",
            custom,
            props,
            opts: {},
        });
        /** The metadata the transform gives a custom resource of `type` (an Output's value once known). */
        const forced = async (type: string, props: Record<string, unknown>): Promise<unknown> => {
            const metadata = (await forceAdoptedObjects(transformArgs(type, props)))?.props.metadata;
            return pulumi.Output.isInstance(metadata) ? await new Promise((resolve) => (metadata as pulumi.Output<unknown>).apply(resolve)) : metadata;
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
            for (const [type, props, custom] of [
                ["kubernetes:core/v1:ConfigMapPatch", { kind: "ConfigMap", metadata: { name: "argocd-cm" } }, true],
                ["kubernetes:argoproj.io/v1alpha1:AppProjectPatch", { kind: "AppProject", metadata: { name: "tenants" } }, true],
                ["kubernetes:helm.sh/v4:Chart", { chart: "argo-rollouts" }, false],
                ["kubernetes:yaml/v2:ConfigGroup", { files: [] }, false],
                ["pulumi:providers:kubernetes", { context: "hub" }, true],
            ] as const) {
                assert.strictEqual(await forceAdoptedObjects(transformArgs(type, props, custom)), undefined, type);
            }
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
                    assert.deepStrictEqual(r.transforms, [markStackObjects, forceAdoptedObjects], `${r.urn} carries the force transform`);
                }
                for (const r of runs.get(`${stack}:off`)!.resources.filter((x) => (Object.values(STAGE_TYPES) as string[]).includes(x.type))) {
                    assert.deepStrictEqual(r.transforms, [markStackObjects], `${r.urn} forces nothing without adoption`);
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
                // deleteBeforeReplace unset: replacement is the provider's to decide.
                assert.deepStrictEqual([r.protect, r.retainOnDelete, r.deleteBeforeReplace, r.importId], [o.protect, o.retainOnDelete, null, null], r.urn);
                if (r.type !== PROVIDER) assert.deepStrictEqual(r.inputs, o.inputs, `only the provider differs: ${r.urn}`);
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

    describe("the runbook of docs/operations/adopt.md, which the end-to-end run runs as written", () => {
        const page = fs.readFileSync(path.join(REPO_ROOT, "docs", "operations", "adopt.md"), "utf8");
        const steps = [...page.slice(0, page.indexOf("\n## adopt-check")).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
            m[1]
                .split("\n")
                .map((l) => l.trim())
                .filter((l) => l !== "" && !l.startsWith("#")),
        );
        const commands = steps.flat();
        const crds = ROLLOUTS_CRDS.map((c) => c.name).join(" ");

        it("never deletes a CRD or uninstalls the old release", () => {
            assert.strictEqual(steps.length, 9);
            for (const cmd of commands) {
                assert.ok(!(/\bdelete\b/.test(cmd) && /\b(crd|customresourcedefinition)\b|\.argoproj\.io\b/i.test(cmd)), `deletes a CRD: ${cmd}`);
                assert.doesNotMatch(cmd, /helm (uninstall|delete)|terraform destroy|--cascade=true|pulumi destroy/, cmd);
            }
        });

        it("retires the old aggregate roles only after the adopting run created the roles that replace them", () => {
            const adopt = steps.findIndex((st) => st.some((c) => c.startsWith("pulumi up")));
            const retire = steps.findIndex((st) => st.some((c) => c.includes(`${RELEASE_NAME}-aggregate-to-view`)));
            assert.ok(adopt >= 0 && retire > adopt, `retire at step ${retire + 1}, adopt at step ${adopt + 1}`);
        });

        it("names what the hub's program declares: the release, its namespace, the CRDs, the config key, Helm's ownership", () => {
            const run = runs.get("hub:off")!;
            const chart = run.resources.find((r) => r.type === "kubernetes:helm.sh/v4:Chart")!;
            const [ns, release] = [String(chart.inputs.namespace), String(chart.inputs.name)];
            const files = byName(run, "rollouts-crds").inputs.files as string[];
            assert.deepStrictEqual(
                files.map((f) => ROLLOUTS_CRDS.find((c) => f.endsWith(`/${c.file}`))?.name),
                ROLLOUTS_CRDS.map((c) => c.name),
                "the runbook's CRDs are the ones the program applies",
            );
            const unclaim = HELM_OWNERSHIP_ANNOTATIONS.map((a) => `${a}-`).join(" ");
            for (const expected of [
                `kubectl get crd ${crds}`,
                `kubectl annotate crd ${crds} helm.sh/resource-policy=keep --overwrite`,
                `kubectl delete secret -n "\${NS:-${ns}}" -l owner=helm,name=${release}`,
                "pulumi config set --path cluster.adoptExisting true -s hub",
                "npm run adopt-check -- --stack hub",
                `kubectl annotate crd ${crds} ${unclaim}`,
                "pulumi config set --path cluster.adoptExisting false -s hub",
            ]) {
                assert.ok(commands.includes(expected), expected);
            }
            assert.ok(commands.filter((c) => c.includes(`-l ${RELEASE_SELECTOR} -o name`) && c.endsWith(unclaim)).length === 2);
        });

        it("retires only objects the program does not declare, the aggregate roles among them", () => {
            const declared = new Set(
                manifestResources(runs.get("hub:off")!).map((r) => {
                    const meta = r.inputs.metadata as { name: string; namespace?: string };
                    return `${String(r.inputs.kind).toLowerCase()}/${meta.namespace ?? ""}/${meta.name}`;
                }),
            );
            // `kubectl delete [-n <ns>] <kind>[,<kind>] <name>... --ignore-not-found`
            const retired = commands
                .filter((c) => /^kubectl delete (-n \S+ )?[a-z,]+ [\w -]+ --ignore-not-found$/.test(c))
                .flatMap((c) => {
                    const words = c.split(" ").slice(2, -1);
                    const ns = words[0] === "-n" ? words.splice(0, 2)[1].replace(/^"\$\{NS:-(.+)\}"$/, "$1") : "";
                    return words[0].split(",").flatMap((kind) => words.slice(1).map((name) => `${kind}/${ns}/${name}`));
                });
            assert.ok(retired.includes(`clusterrole//${RELEASE_NAME}-aggregate-to-edit`), "the aggregate roles let editors promote");
            assert.ok(retired.includes(`deployment/argo-rollouts/${RELEASE_NAME}-dashboard`), retired.join(", "));
            assert.deepStrictEqual(
                retired.filter((o) => declared.has(o)),
                [],
            );
        });
    });
});

describe("cluster.allowDowngrade", () => {
    it("only with adoptExisting", () => {
        assert.strictEqual(
            problemFor({ cluster: { allowDowngrade: true } }, "cluster.allowDowngrade", /^only applies with cluster\.adoptExisting: true/).given,
            "true",
        );
    });
});
