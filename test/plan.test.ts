import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { STAGES } from "../components/stage";
import { OfflineRun } from "../tools/offline";
import { removePlan, writePlan } from "../tools/planFiles";
import { manifestResources, manifestsYaml, patchesYaml, planStack, resourceRows, summary } from "../tools/plan";
import { configFromStackFile, fromConfigMap, listStacks, placeholderGateways, readStackFile } from "../tools/stackFile";
import { FIXTURE_STACKS, HUB_TEXT, hubConfig, merged, planInline, spokeConfig } from "./harness";

describe("offline plan", () => {
    const runs = new Map<string, OfflineRun>();
    const FIELDS = "urn name type stage parent dependsOn protect retainOnDelete deleteBeforeReplace import provider adopts inputs".split(" ");
    before(async () => {
        for (const stack of listStacks(FIXTURE_STACKS)) {
            runs.set(stack, await planStack(readStackFile(stack, FIXTURE_STACKS)));
        }
    });

    for (const stack of ["hub", "preprod"]) {
        describe(`stack ${stack}`, () => {
            it("lists every resource with the documented fields", () => {
                const run = runs.get(stack)!;
                const rows = resourceRows(run);
                const urns = new Set(rows.map((r) => r.urn));
                assert.ok(rows.length > 10);
                for (const row of rows) {
                    const missing = FIELDS.filter((f) => !(f in row));
                    assert.deepStrictEqual(missing, [], `${String(row.urn)} lacks fields`);
                    assert.ok(row.stage === null || (STAGES as readonly string[]).includes(row.stage as string));
                    const outside = [row.parent, row.provider, ...(row.dependsOn as string[])].filter((u) => u !== null && !urns.has(u as string));
                    assert.deepStrictEqual(outside, [], `${String(row.urn)}: its parent, provider or dependencies are not in the plan`);
                    // The fixtures adopt nothing.
                    assert.deepStrictEqual([typeof row.protect, typeof row.retainOnDelete, row.adopts], ["boolean", "boolean", null]);
                }
                // JSON round trip: nothing in a row that does not serialise.
                assert.deepStrictEqual(JSON.parse(JSON.stringify(rows)).length, rows.length);
            });

            it("writes whole Kubernetes objects, dependencies first, and no chart or patch", () => {
                const run = runs.get(stack)!;
                const docs = YAML.parseAllDocuments(manifestsYaml(run)).map(
                    (d) => d.toJS() as { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } },
                );
                assert.strictEqual(docs.length, manifestResources(run).length);
                assert.ok(docs.length >= 6);
                for (const doc of docs) {
                    assert.ok(doc.apiVersion && doc.kind && doc.metadata?.name, JSON.stringify(doc));
                }
                const kinds = docs.map((d) => d.kind);
                assert.ok(!kinds.includes("Chart") && !kinds.includes("ConfigGroup"));
                const at = (kind: string, name: string) => docs.findIndex((d) => d.kind === kind && d.metadata.name === name);
                assert.ok(at("Namespace", "argo-rollouts") < at("Role", "argo-rollouts"), "the namespace must come before what lives in it");
                assert.ok(at("ClusterRole", "argo-rollouts") < at("ClusterRoleBinding", "argo-rollouts"));
            });

            it("summarises resources per stage and the stage DAG", () => {
                const text = summary(runs.get(stack)!);
                assert.match(text, new RegExp(`^stack ${stack}: \\d+ resources`));
                assert.match(text, /stages: gateway -> rollouts -> policy -> argocd-apps/);
                assert.match(text, /rollouts\s+\d+\s+.*Chart x1/);
                // The live checks of stacks/preflight.ts: the plan says it did not run them.
                assert.match(text, /existing objects: not checked here; .* \(needs a cluster\)/);
                assert.match(text, /controller release: not checked here; .* \(needs a cluster\)/);
                // What the plan cannot show, and where it is seen.
                assert.match(
                    text,
                    /^ {2}chart objects: not shown; plan with --chart <path> \(or ARGO_ROLLOUTS_CHART\) and a Kubernetes version to show them; pulumi preview lists them \(needs a cluster\)$/m,
                );
                assert.match(
                    text,
                    /^ {2}CRD objects: not shown; the provider reads the 5 file\(s\) of rollouts-crds \(resources\.json\) at deploy time: plan with --crds <dir>\|remote \(or ARGO_ROLLOUTS_CRDS\) to show them; pulumi preview lists them \(needs a cluster\)$/m,
                );
            });
        });
    }

    describe("patches.yaml", () => {
        type Doc = { kind: string; metadata: { name: string; namespace: string }; data?: Record<string, string>; spec?: Record<string, unknown> };
        // Each document's first line is its comment.
        const docsOf = (text: string) => text.split(/^---\n/m).map((chunk) => ({ comment: /^#(.*)\n/.exec(chunk)?.[1] ?? "", doc: YAML.parse(chunk) as Doc }));

        it("gives argocd-rbac-cm's policy as the lines it writes, under a comment naming the object", () => {
            const run = runs.get("hub")!;
            const text = patchesYaml(run);
            const docs = docsOf(text);
            const objects = docs.map((d) => `${d.doc.kind} ${d.doc.metadata.namespace}/${d.doc.metadata.name}`);
            assert.deepStrictEqual(objects, ["ConfigMap argocd/argocd-rbac-cm"]);
            assert.match(
                docs[0].comment,
                /^ ConfigMapPatch of ConfigMap argocd\/argocd-rbac-cm \(stage argocd-apps, resource argocd-rbac-rollout-actions\): server-side apply of these fields only$/,
            );
            const patch = run.resources.find((r) => r.name === "argocd-rbac-rollout-actions")!;
            assert.deepStrictEqual(docs[0].doc.data, (patch.inputs as { data: Record<string, string> }).data);
            // Readable: each rule a line of the file as ArgoCD reads it, not an escaped string.
            assert.match(text, /^ {4}p, role:release-approver, applications, action\/argoproj\.io\/Rollout\/resume, tenants\/\*, allow$/m);
            assert.match(text, /^ {4}g, platform-release-approvers, role:release-approver$/m);
            // Never among the whole objects: a patch is a part of an object another owner keeps.
            assert.ok(!manifestsYaml(run).includes("argocd-rbac-cm"));
        });

        it("gives every AppProject, ApplicationSet and argocd-cm patch, and says when there is none", async () => {
            const run = await planInline(
                merged(hubConfig(), {
                    argocd: {
                        projects: { tenants: { owner: "addon", namespaceResources: [{ group: "", kind: "Service" }] } },
                        applicationSets: { "tenant-apps": { owner: "addon", syncOptions: ["CreateNamespace=true"] } },
                        ignoreDifferences: [{ kind: "*", jqPathExpressions: [".spec.template.spec.containers[].securityContext"] }],
                    },
                }),
                { stack: "hub" },
            );
            const docs = docsOf(patchesYaml(run));
            const objects = docs.map((d) => `${d.doc.kind} ${d.doc.metadata.name}`).sort();
            assert.deepStrictEqual(objects, ["AppProject tenants", "ApplicationSet tenant-apps", "ConfigMap argocd-cm"]);
            const cm = docs.find((d) => d.doc.kind === "ConfigMap")!;
            assert.match(cm.comment, /^ ConfigMapPatch of ConfigMap argocd\/argocd-cm /);
            assert.ok(Object.values(cm.doc.data!).every((v) => v.includes(".spec.template.spec.containers[].securityContext")));
            assert.match(docs.find((d) => d.doc.kind === "AppProject")!.comment, /^ AppProjectPatch of AppProject argocd\/tenants /);
            // The defaults: ArgoCD's objects are left as they are.
            assert.strictEqual(
                patchesYaml(await planInline(hubConfig(), { stack: "bare" })),
                "# stack bare: no patches; this stack writes no field of an object another owner keeps.\n",
            );
        });
    });

    // The ways spokes arrive on the hub (docs/configuration.md: mimir.ingestGateway, spokes[].listener), alone and together.
    const ingest = { mimir: { ingestGateway: { name: "mimir-ingest", namespace: "observability", listener: "spokes" } } };
    const spoke = (l?: string) => ({ spokes: [{ name: "preprod", tenant: "preprod", hostname: "mimir-preprod.hub.platform.test", query: true, listener: l }] });
    for (const [title, topology, gateways] of [
        ["an ingest Gateway", { ...ingest, ...spoke() }, ["gateway-system/internal:https", "observability/mimir-ingest:spokes"]],
        ["a listener per spoke", spoke("preprod"), ["gateway-system/internal:https,preprod"]],
        ["both", { ...ingest, ...spoke("preprod") }, ["gateway-system/internal:https", "observability/mimir-ingest:spokes,preprod"]],
    ] as const) {
        it(`plans a hub with ${title}, holding every Gateway and listener it names, then its spoke`, async () => {
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "topology-"));
            fs.writeFileSync(path.join(dir, "Pulumi.hub.yaml"), YAML.stringify({ config: merged(hubConfig(), topology) }));
            type Held = { metadata: Record<string, string>; spec: { listeners: { name: string }[] } };
            const held = Object.values(placeholderGateways(readStackFile("hub", dir)) as Record<string, Held>);
            const named = held.map(({ metadata: m, spec: s }) => `${m.namespace}/${m.name}:${s.listeners.map((l) => l.name).join()}`);
            assert.deepStrictEqual(named, gateways);
            const spokeFile = fromConfigMap("preprod", spokeConfig({ mimir: { readEndpoint: undefined, hubStack: "organization/argo-rollouts-addon/hub" } }));
            assert.strictEqual((await planStack({ ...spokeFile, dir })).outputs.metricsAddress, "https://mimir-preprod.hub.platform.test/prometheus");
        });
    }
});

// A YAML error, a key written twice, a merge key: test/stackYaml.test.ts, and the stack and file named with them: test/stackFile.test.ts.
describe("stack files the plan, verify and adopt-check read", () => {
    const write = (name: string, text: string) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stackfile-"));
        fs.writeFileSync(path.join(dir, `Pulumi.${name}.yaml`), text);
        return dir;
    };

    it("refuses a config: that is a list, not a map, instead of reporting keys 0 and 1", () => {
        assert.throws(
            () => readStackFile("list", write("list", "config:\n  - a\n  - b\n")),
            /^Error: stack "list": Pulumi\.list\.yaml: config: must be a map of keys to values, got a list$/,
        );
    });

    it("reports `eksClusterName: ~` as a problem, never as 0 problems", () => {
        assert.ok(HUB_TEXT.includes("eksClusterName: test-hub"));
        const dir = write("tilde", HUB_TEXT.replace("eksClusterName: test-hub", "eksClusterName: ~"));
        assert.throws(
            () => configFromStackFile(readStackFile("tilde", dir)),
            /invalid configuration \(1 problem\):\n {2}- argo-rollouts-addon:cluster = \{"eksClusterName":null\}: set exactly one of cluster\.eksClusterName/,
        );
    });

    it("removes a stack's plan files only: never a parent, the out folder, another stack's plan or a file no plan writes", () => {
        const [root, files] = [fs.mkdtempSync(path.join(os.tmpdir(), "remove-")), "hub/resources.json hub/diff.md hub/notes.txt b/patches.yaml"];
        for (const f of ["Pulumi.hub.yaml", "Pulumi....yaml", ...files.split(" ").map((f) => `plan/${f}`)]) {
            fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
            fs.writeFileSync(path.join(root, f), "x");
        }
        const [out, tree] = [path.join(root, "plan"), () => fs.readdirSync(root, { recursive: true }).map(String).sort()];
        const before = tree();
        assert.deepStrictEqual(listStacks(root), ["hub"], "a file name is no stack name");
        for (const name of ["..", "."]) assert.throws(() => removePlan(name, out), /^Error: --stack "\.\.?": must be a stack name/);
        assert.throws(() => writePlan({ stack: "hub", resources: [], outputs: {} }, out), /hub holds notes\.txt, which no plan writes: give/);
        assert.deepStrictEqual(tree(), before);
        ["hub", "b"].forEach((stack) => removePlan(stack, out));
        assert.deepStrictEqual(tree(), ["Pulumi....yaml", "Pulumi.hub.yaml", "plan", "plan/hub", "plan/hub/notes.txt"]);
    });
});
