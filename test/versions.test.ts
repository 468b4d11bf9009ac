/**
 * The version table (components/rollouts/versions.ts): each release's checks. Its values keys
 * against that chart's values file, the controller's RBAC against that release's calls, the
 * pod-template-hash boundary, and the release a stack installs for each chart.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { parseAddonConfig, AddonConfig } from "../stacks/config";
import { adoptedRelease, hashBoundaryDecision, unsettled, upgradeRunbook } from "../components/rollouts/upgrade";
import { upgradeRunbookSteps } from "../e2e/lib/readme";
import { TEST_DIGEST, byName, hubConfig, merged, planInline } from "./harness";
import { CHART_VALUE_KEYS, unknownChartValueKeys } from "../components/rollouts/chartKeys";
import { CONTROLLER_RELEASES, chartValueKeys, crossesHashBoundary, lineOf, releaseOfChart, releaseOfLine } from "../components/rollouts/versions";
import { KNOWN_CHART_APP_VERSIONS } from "../components/rollouts/config";
import { controllerClusterRules } from "../components/rollouts/rbac";
import { controllerValues } from "../components/rollouts/values";

function config(patch: Record<string, unknown> = {}): AddonConfig {
    const { "aws:region": _region, ...rest } = merged(hubConfig(), patch);
    return parseAddonConfig("hub", rest, { awsRegion: "eu-west-1" });
}

describe("the controller's version table", () => {
    it("has one entry per chart, each a release of its own line, in order", () => {
        assert.deepStrictEqual(
            CONTROLLER_RELEASES.map((r) => `${r.chartVersion} ${r.appVersion} ${r.line}`),
            ["2.40.7 v1.8.4 1.8", "2.41.0 v1.9.0 1.9"],
        );
        for (const r of CONTROLLER_RELEASES) {
            assert.strictEqual(lineOf(r.appVersion), r.line);
            assert.strictEqual(KNOWN_CHART_APP_VERSIONS[r.chartVersion], r.appVersion);
            assert.match(r.source, /argoproj\/argo-helm .*argo-rollouts-\d/);
        }
    });

    for (const release of CONTROLLER_RELEASES) {
        describe(`chart ${release.chartVersion} (Argo Rollouts ${release.appVersion})`, () => {
            it("a stack naming the chart installs its appVersion, controller image and CRDs alike", async () => {
                const cfg = config({ controller: { chartVersion: release.chartVersion } });
                assert.strictEqual(cfg.controller.appVersion, release.appVersion);
                assert.strictEqual(cfg.controller.releaseFromStackFile, true);
                const run = await planInline(merged(hubConfig(), { controller: { chartVersion: release.chartVersion } }), { stack: "hub" });
                const chart = byName(run, "rollouts-controller");
                assert.strictEqual(chart.inputs.version, release.chartVersion);
                assert.strictEqual((chart.inputs.values as { controller: { image: { tag: string } } }).controller.image.tag, release.appVersion);
                for (const url of byName(run, "rollouts-crds").inputs.files as string[]) {
                    assert.match(url, new RegExp(`/${release.appVersion.replace(/\./g, "\\.")}/manifests/crds/`));
                }
            });

            it("sets only keys that chart's values file has, in every mode", () => {
                const keys = chartValueKeys(release);
                for (const patch of [
                    {},
                    {
                        plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST },
                        controller: { dashboard: true, serviceMonitor: true, priorityClassName: "platform" },
                    },
                ]) {
                    const values = controllerValues(config(merged(patch, { controller: { chartVersion: release.chartVersion } })));
                    assert.deepStrictEqual(unknownChartValueKeys(values, keys), []);
                }
                // What the chart lacks is a real subtraction of 2.41.0's list, and a key it lacks is caught.
                for (const k of release.missingValueKeys) {
                    assert.ok(CHART_VALUE_KEYS[k], k);
                    const nested = k.split(".").reduceRight<unknown>((v, part) => ({ [part]: v }), true) as Record<string, unknown>;
                    const unknown = unknownChartValueKeys(nested, keys);
                    assert.strictEqual(unknown.length, 1, k);
                    assert.ok(k.startsWith(unknown[0]), `${k}: ${unknown[0]}`);
                }
            });

            it("the controller's ClusterRole grants every call the release's controller makes", () => {
                const granted = new Map<string, Set<string>>();
                for (const rule of controllerClusterRules({ tcpRoutes: false, tlsRoutes: false })) {
                    for (const res of rule.resources) {
                        granted.set(`${rule.apiGroups.join(",")}/${res}`, new Set(rule.verbs));
                    }
                }
                for (const [resource, verbs] of Object.entries(release.calls)) {
                    for (const verb of verbs) {
                        assert.ok(granted.get(resource)?.has(verb), `${release.appVersion} calls ${verb} on ${resource}`);
                    }
                }
            });
        });
    }

    it("the newest release's calls are exactly what the ClusterRole grants on those resources (no more)", () => {
        const newest = CONTROLLER_RELEASES[CONTROLLER_RELEASES.length - 1];
        const rules = controllerClusterRules({ tcpRoutes: false, tlsRoutes: false });
        for (const [resource, verbs] of Object.entries(newest.calls)) {
            const rule = rules.find((r) => r.resources.some((res) => `${r.apiGroups.join(",")}/${res}` === resource))!;
            assert.deepStrictEqual([...rule.verbs].sort(), [...verbs].sort(), resource);
        }
    });

    it("finds a release by chart and by the line of a running tag", () => {
        assert.strictEqual(releaseOfChart("2.40.7")?.appVersion, "v1.8.4");
        assert.strictEqual(releaseOfChart("2.39.0"), undefined);
        assert.strictEqual(releaseOfLine("v1.8.2")?.chartVersion, "2.40.7");
        assert.strictEqual(releaseOfLine("v1.9.3")?.chartVersion, "2.41.0");
        assert.strictEqual(releaseOfLine("v1.10.2"), undefined);
        assert.strictEqual(releaseOfLine("latest"), undefined);
    });

    it("knows the pod-template-hash boundary between the 1.8 and 1.9 lines, and nothing about lines it lacks", () => {
        assert.strictEqual(crossesHashBoundary("v1.8.4", "v1.9.0"), true);
        assert.strictEqual(crossesHashBoundary("v1.9.0", "v1.8.4"), true);
        assert.strictEqual(crossesHashBoundary("v1.8.1", "v1.8.4"), false);
        assert.strictEqual(crossesHashBoundary("v1.9.0", "v1.9.0"), false);
        assert.strictEqual(crossesHashBoundary("v1.10.2", "v1.9.0"), undefined);
    });

    it("an adopting run keeps the running line unless the stack file names a release", () => {
        assert.strictEqual(adoptedRelease({ releaseFromStackFile: false, configuredChart: "2.41.0", running: "v1.8.4" })?.chartVersion, "2.40.7");
        assert.strictEqual(adoptedRelease({ releaseFromStackFile: true, configuredChart: "2.41.0", running: "v1.8.4" }), undefined);
        assert.strictEqual(adoptedRelease({ releaseFromStackFile: false, configuredChart: "2.41.0", running: "v1.9.0" }), undefined);
        assert.strictEqual(adoptedRelease({ releaseFromStackFile: false, configuredChart: "2.41.0", running: undefined }), undefined);
        assert.strictEqual(adoptedRelease({ releaseFromStackFile: false, configuredChart: "2.41.0", running: "v1.10.2" }), undefined);
        assert.strictEqual(config().controller.releaseFromStackFile, false);
        assert.strictEqual(config({ controller: { appVersion: "v1.9.0" } }).controller.releaseFromStackFile, true);
    });

    it("says why a Rollout is not settled", () => {
        assert.strictEqual(unsettled({ status: { phase: "Healthy" } }), undefined);
        assert.match(unsettled({ status: { phase: "Healthy", abort: true } })!, /^aborted/);
        assert.match(unsettled({})!, /^no status/);
        assert.match(unsettled({ status: { phase: "Degraded", message: "ProgressDeadlineExceeded" } })!, /^Degraded \(ProgressDeadlineExceeded\)$/);
        assert.deepStrictEqual(hashBoundaryDecision({ stack: "hub", running: "v1.9.0", configured: "v1.9.0", acknowledged: undefined, rollouts: [{}] }), {});
    });

    it("controller.acknowledgeNewRevisions takes a line, nothing else", () => {
        assert.strictEqual(config({ controller: { acknowledgeNewRevisions: "1.9" } }).controller.acknowledgeNewRevisions, "1.9");
        assert.throws(
            () => config({ controller: { acknowledgeNewRevisions: "v1.9.0" } }),
            /argo-rollouts-addon:controller\.acknowledgeNewRevisions = "v1\.9\.0": must be a controller line such as 1\.9/,
        );
    });

    describe("the upgrade runbook", () => {
        const [from, to] = CONTROLLER_RELEASES;
        const steps = upgradeRunbook({ stack: "hub", namespace: "argo-rollouts", from, to });

        it("in docs/operations/upgrade.md is the program's, step by step, for the hub across the boundary", () => {
            const documented = upgradeRunbookSteps();
            assert.deepStrictEqual(
                documented.map((s) => s.commands),
                steps.map((s) => s.commands),
            );
            assert.deepStrictEqual(
                documented.map((s) => s.title.replace(/\.$/, "")),
                steps.map((s) => s.title),
            );
        });

        it("settles the Rollouts before the move and acknowledges the new line only across the boundary", () => {
            const all = steps.flatMap((s) => s.commands);
            const settle = all.findIndex((c) => c.includes(`awk '$2 != "Healthy"'`));
            const up = all.findIndex((c) => c.startsWith("pulumi up"));
            assert.ok(settle >= 0 && settle < up);
            assert.ok(all.includes(`pulumi config set --path controller.acknowledgeNewRevisions ${to.line} -s hub`));
            assert.ok(all.includes("pulumi config rm --path controller.acknowledgeNewRevisions -s hub"), "the acknowledgement is taken back");
            const within = upgradeRunbook({ stack: "hub", namespace: "argo-rollouts", from: to, to }).flatMap((s) => s.commands);
            assert.ok(!within.some((c) => c.includes("acknowledgeNewRevisions") || c.includes("awk")), within.join("\n"));
        });

        it("the page's table is the version table", () => {
            const page = fs.readFileSync(path.join(__dirname, "..", "docs", "operations", "upgrade.md"), "utf8");
            for (const r of CONTROLLER_RELEASES) {
                assert.match(
                    page,
                    new RegExp(
                        `^\\| ${r.chartVersion.replace(/\./g, "\\.")} \\| ${r.appVersion.replace(/\./g, "\\.")} \\| ${r.line.replace(/\./g, "\\.")} \\|`,
                        "m",
                    ),
                    r.chartVersion,
                );
            }
        });
    });
});
