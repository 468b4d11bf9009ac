import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { planStack, productFiles, resourceRows } from "../tools/plan";
import { configDirAtRef } from "../tools/planAgainst";
import { PlanRow, diffPlans, fieldChanges, objectLabel, productRows, renderFullDiff, renderShortDiff, wordDiff } from "../tools/planDiff";
import { StackFile, configFromStackFile, readStackFile } from "../tools/stackFile";
import { FIXTURE_STACKS, changedHub } from "./harness";

const row = (urn: string, inputs: Record<string, unknown>, extra: Partial<PlanRow> = {}): PlanRow => ({
    urn,
    name: urn,
    type: "kubernetes:core/v1:ConfigMap",
    stage: "rollouts",
    inputs,
    protect: false,
    ...extra,
});

describe("plan diff", () => {
    describe("fields", () => {
        it("names each changed field by its path, keys with dots or slashes quoted", () => {
            const before = { metadata: { labels: { "app.kubernetes.io/part-of": "a" }, name: "x" }, spec: { replicas: 1 } };
            const after = { metadata: { labels: { "app.kubernetes.io/part-of": "b" }, name: "x" }, spec: { replicas: 1, paused: true } };
            assert.deepStrictEqual(fieldChanges(before, after), [
                { path: 'metadata.labels["app.kubernetes.io/part-of"]', change: "changed", before: "a", after: "b" },
                { path: "spec.paused", change: "added", after: true },
            ]);
            assert.deepStrictEqual(fieldChanges(after, after), []);
        });

        it("compares lists of objects item by item and a list of scalars as one field", () => {
            const rules = (verbs: string[]) => ({ rules: [{ apiGroups: ["argoproj.io"], verbs }, { verbs: ["get"] }] });
            // A verb inserted in the middle: one field, not every later index.
            assert.deepStrictEqual(fieldChanges(rules(["get", "list"]), rules(["get", "patch", "list"])), [
                { path: "rules[0].verbs", change: "changed", before: ["get", "list"], after: ["get", "patch", "list"] },
            ]);
            assert.deepStrictEqual(fieldChanges({ rules: [{ a: 1 }] }, { rules: [{ a: 1 }, { b: 2 }] }), [
                { path: "rules[1]", change: "added", after: { b: 2 } },
            ]);
            assert.deepStrictEqual(fieldChanges({ rules: [{ a: 1 }, { b: 2 }] }, { rules: [{ a: 1 }] }), [
                { path: "rules[1]", change: "removed", before: { b: 2 } },
            ]);
        });

        it("gives a long one-line text by the words that changed, a long unchanged run cut to its ends", () => {
            const q = (w: string, t: string) => `sum by (le) (rate(http_request_duration_seconds_bucket{namespace="a",code!~"5.."}[${w}])) > ${t}`;
            assert.strictEqual(wordDiff(q("5m", "0.5"), q("1m", "0.25")), '…et{namespace="a",code!~"5.."}[[-5m-]{+1m+}])) > 0.[-5-]{+25+}');
            const diff = diffPlans([row("q", { q: q("5m", "1") })], [row("q", { q: q("1m", "1") })]);
            assert.match(renderFullDiff(diff, { stack: "hub", against: "main" }), /^ {2}- `q` changed: `….*"5\.\."\}\[\[-5m-\]\{\+1m\+\}\]\)\) > 1`$/m);
        });
    });

    describe("objects", () => {
        it("labels objects by kind and namespace/name, a chart by its release", () => {
            const chart = { chart: "argo-rollouts", version: "2.41.0", name: "argo-rollouts", namespace: "argo-rollouts" };
            const project = { kind: "AppProject", metadata: { name: "tenants", namespace: "argocd" } };
            for (const [type, inputs, label] of [
                ["kubernetes:core/v1:ConfigMap", { kind: "ConfigMap", metadata: { name: "n", namespace: "ns" } }, "ConfigMap ns/n"],
                ["kubernetes:argoproj.io/v1alpha1:AppProjectPatch", project, "AppProjectPatch argocd/tenants"],
                ["kubernetes:helm.sh/v4:Chart", chart, "Chart argo-rollouts 2.41.0 (release argo-rollouts/argo-rollouts)"],
                ["argo-rollouts-addon:stages:Policy", {}, "argo-rollouts-addon:stages:Policy policy"],
            ] as const) {
                assert.strictEqual(objectLabel(row("u", inputs, { type, name: "policy" })), label, type);
            }
        });

        it("finds added, removed and changed objects and options, counts the unchanged, and leaves reads out", () => {
            const base = [row("same", { a: 1 }), row("gone", { a: 1 }), row("opt", { a: 1 }), row("read", { a: 1 }, { read: true })];
            const head = [
                row("same", { a: 1 }),
                row("new", { a: 1 }, { stage: "gateway" }),
                row("opt", { a: 1 }, { protect: true }),
                row("read", { a: 2 }, { read: true }),
            ];
            const diff = diffPlans(base, head);
            assert.strictEqual(diff.unchanged, 1);
            const changes = diff.changes.map((c) => `${c.action} ${c.urn} (${c.stage}): ${c.fields.map((f) => f.path).join(", ")}`);
            assert.deepStrictEqual(changes, ["added new (gateway): ", "changed opt (rollouts): (option) protect", "removed gone (rollouts): "]);
        });

        it("cuts the short diff at its limits and counts what it left out", () => {
            const base = Array.from({ length: 5 }, (_, i) => row(`o${i}`, { a: 1, b: 1, c: 1 }));
            const head = base.map((r) => ({ ...r, inputs: { a: 2, b: 2, c: 2 } }));
            const text = renderShortDiff(diffPlans(base, head), { stack: "hub", against: "main", fullAt: "FULL" }, { objects: 2, fields: 1 });
            assert.match(text, /^0 added, 0 removed, 5 changed, 0 unchanged\.$/m);
            assert.strictEqual(text.match(/^- ~ changed/gm)?.length, 2);
            assert.match(text, /`a` and 2 more$/m);
            assert.match(text, /^… and 3 more objects not listed here\.$/m);
            assert.match(text, /, and what is not listed here,: FULL\.$/m);
            const full = renderFullDiff(diffPlans(base, head), { stack: "hub", against: "main" });
            assert.strictEqual(full.match(/^- ~ changed/gm)?.length, 5);
            assert.strictEqual(full.match(/^ {2}- `c` 1 → 2$/gm)?.length, 5);
        });
    });

    describe("of a real change to the hub", () => {
        let [base, head, baseProducts, headProducts] = [[] as PlanRow[], [] as PlanRow[], {}, {}];
        before(async () => {
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "diff-"));
            fs.writeFileSync(path.join(dir, "Pulumi.hub.yaml"), changedHub());
            const plan = async (file: StackFile) => ({ file, run: await planStack(file, file.dir) });
            const [b, h] = [await plan(readStackFile("hub", FIXTURE_STACKS)), await plan(readStackFile("hub", dir))];
            [base, head] = [b, h].map((p) => JSON.parse(JSON.stringify(resourceRows(p.run))) as PlanRow[]);
            [baseProducts, headProducts] = [b, h].map((p) => productFiles(p.run, configFromStackFile(p.file)));
        });

        it("names the stack outputs and tenant components a delivery change alters, and whose next rollout it reaches", () => {
            const short = renderShortDiff(diffPlans(productRows(baseProducts), productRows(headProducts)), { stack: "hub", against: "main" });
            const lines = short.split("\n").filter((l) => l.startsWith("- "));
            const named = lines.map((l) => /^- ~ changed `([^`]+)` \(([^)]+)\)/.exec(l)?.slice(1).join(": "));
            assert.deepStrictEqual(named, [
                "stack output deliveryStrategies: tenant tooling that reads it",
                "stack output spokeReadEndpoints: every spoke's analysis, at its next up",
                "tenant component README.md: tenant teams choosing a component",
                "tenant component prod-regulated-canary: every regulated prod tenant on canary: their next rollout",
            ]);
            assert.match(lines[0], /`canary \[-25-\]\{\+10\+\} -> 50 -> 100 through the Gate…`/);
        });

        it("shows the new spoke's route added in the gateway stage and the ArgoCD RBAC rules changed, nothing else", () => {
            const diff = diffPlans(base, head);
            const changes = diff.changes.map((c) => `${c.action} ${c.label} (${c.stage}): ${c.fields.map((f) => f.path).join(", ")}`);
            assert.deepStrictEqual(changes, [
                "added HTTPRoute observability/mimir-spoke-prod-read (gateway): ",
                'changed ConfigMapPatch argocd/argocd-rbac-cm (argocd-apps): data["policy.argo-rollouts-addon.csv"]',
            ]);
            assert.strictEqual(diff.unchanged, base.filter((r) => !r.read).length - 1);
        });

        it("gives the rules as lines removed and added, and the new route whole, in the complete diff", () => {
            const full = renderFullDiff(diffPlans(base, head), { stack: "hub", against: "main" });
            assert.match(full, /^#### gateway\n\n- \+ added `HTTPRoute observability\/mimir-spoke-prod-read`$/m);
            assert.match(full, /^ {6}- mimir-prod\.hub\.platform\.test$/m);
            assert.match(full, /^ {4}- p, role:release-approver, applications, action\/argoproj\.io\/Rollout\/resume, tenants\/\*, allow$/m);
            assert.match(full, /^ {4}\+ p, role:release-managers, applications, action\/argoproj\.io\/Rollout\/resume, tenants\/\*, allow$/m);
            assert.match(full, /^ {4}\+ g, platform-release-approvers, role:release-managers$/m);
            // Only the rules that changed: the deployers' denials are the same on both sides.
            assert.doesNotMatch(full, /^ {4}[-+] p, role:tenant-deployer/m);
            const short = renderShortDiff(diffPlans(base, head), { stack: "hub", against: "main" });
            assert.match(
                short,
                /^- ~ changed `ConfigMapPatch argocd\/argocd-rbac-cm`: `data\["policy\.argo-rollouts-addon\.csv"\]` \(9 lines removed, 9 added\)$/m,
            );
        });
    });

    it("reads the ref's stack files from the same folder of the project, and an outside folder as it is", () => {
        assert.strictEqual(configDirAtRef("/repo", "/repo", "/tmp/t"), "/tmp/t");
        assert.strictEqual(configDirAtRef("/repo", "/repo/test/fixtures/stacks", "/tmp/t"), "/tmp/t/test/fixtures/stacks");
        assert.strictEqual(configDirAtRef("/repo", "/elsewhere", "/tmp/t"), "/elsewhere");
    });
});
