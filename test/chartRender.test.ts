import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { ChartRelease, chartRelease, renderChart, templateArgs } from "../tools/chartRender";
import { CrdRead, httpsGet, readCrdFiles } from "../tools/crdSources";
import { manifestsYaml, resourceRows, summary } from "../tools/plan";
import { ProviderRendered, comparedRendered, renderProviderObjects, unhonoured } from "../tools/planRendered";
import { PlanRow, diffPlans } from "../tools/planDiff";
import { renderedAtRef } from "../tools/planAgainst";
import { TEST_CONTROLLER_DIGEST, hubConfig, merged, planInline } from "./harness";
import { ROLLOUTS_CRDS } from "../components/argoRollouts";

/**
 * The real helm renders the tests' own chart (test/fixtures/chart-render), never the argo-rollouts
 * chart. The helm binary: HELM, else the one the end-to-end engines build
 * (ARGO_ROLLOUTS_ADDON_E2E_BIN or the engines' cache, e2e/engines/build.sh), else helm on the PATH;
 * without any of them these tests fail, saying so.
 */
const CACHE = process.env.ARGO_ROLLOUTS_ADDON_E2E_CACHE ?? path.join(os.homedir(), ".cache", "argo-rollouts-addon-e2e");
const BINS = [process.env.ARGO_ROLLOUTS_ADDON_E2E_BIN, path.join(CACHE, "current")].flatMap((d) => (d ? [path.join(d, "helm")] : []));
const HELM = process.env.HELM || BINS.find((f) => fs.existsSync(f)) || "helm";
const ENV = { ...process.env, HELM };
const FIXTURE_CHART = path.join(__dirname, "fixtures", "chart-render");

const VALUES = { fullnameOverride: "ctl", controller: { replicas: 3, image: { registry: "r.test", repository: "ctl", tag: "v9" } } };
const RELEASE: ChartRelease = { chart: "fixture", version: "0.1.0", name: "rel", namespace: "ns-a", values: VALUES };

type Obj = { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: { replicas?: number } };

describe("chart rendering (tools/chartRender.ts)", () => {
    it("runs helm template as the provider does: release, namespace, --no-hooks, --include-crds unless skipCrds, the Kubernetes version, the values", () => {
        const args = "template rel /c --namespace ns-a --no-hooks --include-crds --kube-version v1.33.4 --values /v.json";
        assert.strictEqual(templateArgs(RELEASE, "/c", "v1.33.4", "/v.json").join(" "), args);
        assert.ok(!templateArgs({ ...RELEASE, skipCrds: true }, "/c", "v1.33", "/v").includes("--include-crds"));
    });

    it("renders the chart with the release's values for the Kubernetes version: no hook, the chart's CRD, each object's template", () => {
        const r = renderChart(RELEASE, { chartPath: FIXTURE_CHART, kubeVersion: "v1.33.4", env: ENV });
        assert.ok("objects" in r, JSON.stringify(r));
        const objs = r.objects.map((o) => o.object as Obj);
        assert.deepStrictEqual(objs.map((o) => o.kind).sort(), ["ConfigMap", "CustomResourceDefinition", "Deployment"]);
        const { metadata: m, spec } = objs.find((o) => o.kind === "Deployment")!;
        assert.deepStrictEqual([m.name, m.namespace, spec?.replicas, m.labels?.["kube-version"]], ["ctl", "ns-a", 3, "v1.33.4"]);
        assert.strictEqual(r.objects.find((o) => (o.object as Obj).kind === "Deployment")!.source, "fixture/templates/deployment.yaml");
        assert.deepStrictEqual(r.chart, { name: "fixture", version: "0.1.0" });
        // A template the version turns off renders nothing.
        const old = renderChart(RELEASE, { chartPath: FIXTURE_CHART, kubeVersion: "v1.29.0", env: ENV });
        assert.ok("objects" in old && !old.objects.some((o) => (o.object as Obj).kind === "ConfigMap"), JSON.stringify(old));
    });

    // A packaged chart (.tgz) is helm's to read: the end-to-end objects-match-plan plans with the
    // run's chart archive and finds the chart's objects as the cluster runs them.
    it("says why and how when the objects are not shown: no chart, no Kubernetes version, another chart or version, no helm", () => {
        const at = { chartPath: FIXTURE_CHART, kubeVersion: "v1.33" };
        for (const [opts, release, why] of [
            [{ kubeVersion: "v1.33" }, {}, /no chart given; give the pinned chart's folder or \.tgz with --chart <path> or ARGO_ROLLOUTS_CHART/],
            [{ chartPath: FIXTURE_CHART }, {}, /no Kubernetes version; .*set cluster\.kubernetesVersion in the stack file or give --kube-version/],
            [{ ...at, kubeVersion: "1.33" }, {}, /is not a Kubernetes version/],
            [at, { version: "0.2.0" }, /is fixture 0\.1\.0, not the one the stack pins/],
            [at, { chart: "oci://r.test/charts/other" }, /not the one the stack pins/],
            [{ ...at, env: { ...ENV, HELM: "/nonexistent/helm" } }, {}, /could not run .*set HELM to a helm binary or put helm on the PATH/],
        ] as const) {
            const r = renderChart({ ...RELEASE, ...release }, { env: ENV, ...opts });
            assert.ok("notShown" in r && why.test(r.notShown), JSON.stringify(r));
        }
    });
});

describe("the plan with the chart and the CRDs", () => {
    let chart: string;
    let charts: string;
    let crds: string;
    before(() => {
        // A folder of charts by version (--charts): the fixture chart as argo-rollouts 2.41.0 (the pinned one) and as 2.40.7,
        // whose Deployment has one more replica and whose CRD has a schema.
        charts = fs.mkdtempSync(path.join(os.tmpdir(), "charts-"));
        for (const version of ["2.41.0", "2.40.7"]) {
            chart = path.join(charts, `argo-rollouts-${version}`);
            fs.cpSync(FIXTURE_CHART, chart, { recursive: true });
            const meta = YAML.parse(fs.readFileSync(path.join(chart, "Chart.yaml"), "utf8")) as Record<string, unknown>;
            fs.writeFileSync(path.join(chart, "Chart.yaml"), YAML.stringify({ ...meta, name: "argo-rollouts", version }));
        }
        const old = (file: string, from: string, to: string) => fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(from, to));
        old(path.join(chart, "crds", "widgets.yaml"), "x-kubernetes-preserve-unknown-fields: true", "properties: { spec: { type: object } }");
        old(path.join(chart, "templates", "deployment.yaml"), "default 1 }}", "default 1 | add 1 }}");
        chart = path.join(charts, "argo-rollouts-2.41.0");
        crds = fs.mkdtempSync(path.join(os.tmpdir(), "crds-"));
        for (const { file, name } of ROLLOUTS_CRDS) {
            fs.writeFileSync(
                path.join(crds, file),
                YAML.stringify({ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name } }),
            );
        }
    });

    async function planned(
        config: Record<string, unknown>,
    ): Promise<{ rows: PlanRow[]; rendered: ProviderRendered; run: Awaited<ReturnType<typeof planInline>> }> {
        const run = await planInline(config);
        const rows = JSON.parse(JSON.stringify(resourceRows(run))) as PlanRow[];
        const rendered = await renderProviderObjects(rows, { chartPath: chart, kubeVersion: "v1.33.4", crds: { kind: "dir", dir: crds }, env: ENV });
        return { rows, rendered, run };
    }

    it("writes the CRDs, the program's objects and the chart's, each under its owner, rendered with the values the program passes", async () => {
        const { rows, rendered, run } = await planned(hubConfig());
        const text = manifestsYaml(run, rendered);
        const docs = YAML.parseAllDocuments(text);
        // The comment above a document: the parser gives it to the document or to its first node.
        const comment = (d: YAML.Document) =>
            `${d.commentBefore ?? ""}\n${(d.contents as { commentBefore?: string } | null)?.commentBefore ?? ""}`.trim().split("\n").pop() ?? "";
        const owners = docs.map((d) => /^ ?(CRDs|program|chart):/.exec(comment(d))?.[1]);
        // Sections in order: five CRDs, the program's objects, the chart's.
        assert.deepStrictEqual(owners.slice(0, 5), ["CRDs", "CRDs", "CRDs", "CRDs", "CRDs"]);
        const firstChart = owners.indexOf("chart");
        assert.ok(
            firstChart > 5 && owners.slice(5, firstChart).every((o) => o === "program") && owners.slice(firstChart).every((o) => o === "chart"),
            owners.join(","),
        );
        assert.match(
            text,
            /^# chart: Deployment argo-rollouts\/argo-rollouts, chart argo-rollouts 2\.41\.0 release argo-rollouts\/argo-rollouts \(resource rollouts-controller, stage rollouts\), argo-rollouts\/templates\/deployment\.yaml$/m,
        );
        assert.match(
            text,
            /^# CRDs: CustomResourceDefinition rollouts\.argoproj\.io, of ConfigGroup rollouts-crds \(stage rollouts\), from .*rollout-crd\.yaml$/m,
        );
        // The values the program passed: the Chart row's, as helm received them.
        const values = rows.find((r) => r.type === "kubernetes:helm.sh/v4:Chart")!.inputs.values as {
            controller: { replicas: number; image: { registry: string; tag: string } };
        };
        const deploy = docs
            .map((d) => d.toJS() as Obj & { spec: { template: { spec: { containers: { image: string }[] } } } })
            .find((o) => o.kind === "Deployment" && o.metadata.name === "argo-rollouts")!;
        assert.strictEqual(deploy.spec.replicas, values.controller.replicas);
        assert.strictEqual(
            deploy.spec.template.spec.containers[0].image,
            `${values.controller.image.registry}/argoproj/argo-rollouts:${values.controller.image.tag}`,
        );
        assert.match(summary(run, rendered), /^ {2}chart objects: 3 in manifests\.yaml, chart argo-rollouts 2\.41\.0 rendered by helm/m);
        assert.match(summary(run, rendered), /^ {2}CRD objects: 5 in manifests\.yaml, from the 5 file\(s\) of rollouts-crds$/m);
        assert.strictEqual(chartRelease(rows.find((r) => r.type === "kubernetes:helm.sh/v4:Chart")!.inputs).namespace, "argo-rollouts");
    });

    it("says in manifests.yaml and the summary what is not shown and how to show it", async () => {
        const run = await planInline(hubConfig());
        const rows = JSON.parse(JSON.stringify(resourceRows(run))) as PlanRow[];
        const rendered = await renderProviderObjects(rows, { env: ENV });
        const head = manifestsYaml(run, rendered)
            .split("\n")
            .filter((l) => l.startsWith("# ") && !/^# (program|chart|CRDs):/.test(l));
        assert.match(head.join("\n"), /^# chart objects of rollouts-controller: not shown; .*--chart <path> or ARGO_ROLLOUTS_CHART/m);
        assert.match(head.join("\n"), /^# CRDs of rollouts-crds: not shown; .*--crds <dir>/m);
        assert.match(
            summary(run, rendered),
            /^ {2}chart objects: not shown; chart argo-rollouts 2\.41\.0 for release argo-rollouts\/argo-rollouts: no chart given; .*pulumi preview lists them \(needs a cluster\)$/m,
        );
    });

    it("renders each side with the chart it pins from --charts: the changed objects and CRD schema of both versions, or the version missing", async () => {
        const base = merged(hubConfig(), { controller: { chartVersion: "2.40.7", appVersion: "v1.8.4" } });
        const [head, old] = [await planned(hubConfig()), await planInline(base)];
        const opts = { charts, kubeVersion: "v1.33.4", env: ENV };
        const oldRows = JSON.parse(JSON.stringify(resourceRows(old))) as PlanRow[];
        const compared = comparedRendered(head.rendered, await renderedAtRef(oldRows, head.rows, { ...opts, crds: { kind: "dir", dir: crds } }), true);
        // One folder of CRD files stands for one release: the other side's are not compared, and the note says how to read them.
        assert.match(compared.notes.join(), /^The CRDs are not compared: at the ref, its CRD files are another release's than --crds .* --crds remote/);
        const diff = diffPlans([...oldRows, ...compared.base], [...head.rows, ...compared.head]);
        const fields = (label: string) => diff.changes.find((c) => c.label === label)?.fields.map((f) => [f.path, f.before, f.after]);
        const image = (tag: string) => `registry.platform.test/mirror/argoproj/argo-rollouts:${tag}@${TEST_CONTROLLER_DIGEST}`;
        assert.deepStrictEqual(fields("Deployment argo-rollouts/argo-rollouts (chart)"), [
            ["spec.replicas", 3, 2],
            ["spec.template.spec.containers[0].image", image("v1.8.4"), image("v1.9.0")],
        ]);
        const crd = fields("CustomResourceDefinition widgets.fixture.example (chart)");
        const schema = "spec.versions[0].schema.openAPIV3Schema";
        assert.deepStrictEqual(crd?.map((f) => f[0]).sort(), [`${schema}.properties`, `${schema}.x-kubernetes-preserve-unknown-fields`]);
        // A version the folder lacks: the note names it and how to add it; one --chart renders one version only.
        fs.renameSync(path.join(charts, "argo-rollouts-2.40.7"), path.join(charts, "moved"));
        const missing = comparedRendered(head.rendered, await renderProviderObjects(oldRows, opts), true).notes.join("\n");
        assert.match(missing, /2\.40\.7 .* holds neither argo-rollouts-2\.40\.7\.tgz nor .*; add it \(helm pull argo-rollouts --repo \S+ --version 2\.40\.7 /);
        const oneOpts = { ...opts, charts: undefined, chartPath: chart };
        const oneRendered = await renderProviderObjects(oldRows, oneOpts);
        // The plan's own side: a chart or CRDs asked for and not shown fail the plan (exit 2), naming why.
        assert.match(unhonoured(oneRendered, oneOpts).join(), /^chart argo-rollouts 2\.40\.7 .*not the one the stack pins/);
        assert.deepStrictEqual(unhonoured(oneRendered, { crds: undefined }), []);
        const one = comparedRendered(head.rendered, oneRendered, true).notes.join();
        assert.match(one, /2\.40\.7 .*is argo-rollouts 2\.41\.0, not the one the stack pins; give each version in a folder with --charts <dir>/);
    });
});

describe("CRD sources (tools/crdSources.ts)", () => {
    it("reads each file by its name from a folder, or from its URL, and says what is missing, unreachable or no CRDs", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "crd-src-"));
        const crd = (name: string) => `kind: CustomResourceDefinition\nmetadata: { name: ${name} }\n`;
        fs.writeFileSync(path.join(dir, "a.yaml"), `${crd("a")}---\n${crd("b")}`);
        const urls = ["https://u:p@h.test/x/a.yaml?tok=1"];
        const names = (r: CrdRead) => ("objects" in r ? r.objects.map((o) => (o.object.metadata as { name: string }).name) : r.notShown);
        assert.deepStrictEqual(names(await readCrdFiles(urls, { kind: "dir", dir })), ["a", "b"]);
        assert.match(names(await readCrdFiles(["https://h.test/x/b.yaml"], { kind: "dir", dir })) as string, /b\.yaml does not exist/);
        assert.deepStrictEqual(names(await readCrdFiles(urls, { kind: "remote" }, async () => crd("c"))), ["c"]);
        const down = await readCrdFiles(urls, { kind: "remote" }, () => Promise.reject(new Error("https://h.test/x/a.yaml: HTTP 404")));
        assert.match(names(down) as string, /not reachable: .*404; give a local folder/);
        assert.ok("notShown" in (await readCrdFiles(urls, undefined)));
        // Malformed YAML, an HTML page (a rate limit's, say) or another kind: not shown, and why.
        for (const [text, why] of [
            ["kind: CustomResourceDefinition\nspec: [a\n", /a\.yaml is not YAML \(.*\)$/],
            ["<!DOCTYPE html>\n<html>rate limited</html>\n", /a\.yaml holds other than CustomResourceDefinitions \(an HTML page\?\)$/],
            [`${crd("a")}---\nkind: Secret\n`, /holds other than CustomResourceDefinitions/],
        ] as const) {
            fs.writeFileSync(path.join(dir, "a.yaml"), text);
            assert.match(names(await readCrdFiles(urls, { kind: "dir", dir })) as string, why);
        }
    });

    it("names a URL it cannot read without its user-info or query", async () => {
        const err = await httpsGet("https://user:hunter2@127.0.0.1:1/crds/a.yaml?token=s3cret", 2000).then(
            () => undefined,
            (e: Error) => e,
        );
        assert.ok(err, "a closed port answered");
        assert.match(err.message, /^https:\/\/127\.0\.0\.1:1\/crds\/a\.yaml: /);
        assert.ok(!/hunter2|s3cret|user/.test(err.message), err.message);
    });
});
