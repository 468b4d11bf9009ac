/**
 * The version table (components/rollouts/versions.ts): each release's values keys against that
 * chart's values file, the controller's RBAC against that release's calls, the pod-template-hash
 * boundary, the release a stack installs, and the upgrade page against the table.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { KNOWN_CHART_APP_VERSIONS } from "../components/rollouts/config";
import { controllerClusterRules } from "../components/rollouts/rbac";
import { controllerValues } from "../components/rollouts/values";
import { CONTROLLER_RELEASES, adoptedRelease, crossesHashBoundary, hashBoundaryDecision, releaseOfLine, unsettled } from "../components/rollouts/versions";
import { upgradeRunbookSteps } from "../e2e/lib/readme";
import { TEST_CONTROLLER_DIGEST, TEST_DIGEST, byName, hubConfig, merged, planInline, spokeConfig } from "./harness";
import { parseMap } from "./stackConfig";

const config = (patch: Record<string, unknown> = {}, stack = "hub") => parseMap(merged(hubConfig(), patch), stack);

/** The keys of chart 2.41.0's values file (a fixture: the product does not carry the list). */
const KEYS_2_41_0 = fs
    .readFileSync(path.join(__dirname, "fixtures", "chart-values", "argo-rollouts-2.41.0.keys"), "utf8")
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith("#"));

/**
 * What each release's chart and controller have, read at its tag: the values keys 2.41.0 added over
 * 2.40.7 (git diff argo-rollouts-2.40.7 argo-rollouts-2.41.0 -- charts/argo-rollouts/values.yaml), and
 * every kubeclientset/argoprojclientset call of the controller beyond its informers' list and watch
 * (argo-rollouts rollout/, experiments/, analysis/, controller/ at v1.8.4 and v1.9.0).
 */
const COMMON_CALLS = {
    "/pods/eviction": ["create"], // rollout/restart.go evicts, never deletes
    "apps/replicasets": ["create", "delete", "get", "list", "patch", "update", "watch"],
    "/services": ["create", "delete", "get", "list", "patch", "watch"],
    "argoproj.io/rollouts/status": ["get", "list", "patch", "update", "watch"],
    "apps/deployments": ["get", "list", "watch"], // rollout/scale_utils.go writes only for workloadRef
};
const RELEASE_FACTS: Record<string, { missingValueKeys: string[]; calls: Record<string, string[]> }> = {
    "2.40.7": {
        missingValueKeys: [
            "controller.awsVerifyTargetGroup",
            "controller.awsTargetGroupBindingAPIVersion",
            "controller.albTagKeyResourceID",
            "controller.selfServiceNotification",
            "controller.pprofAddress",
            "dashboard.rootPath",
            "dashboard.httproute.annotations",
            "dashboard.httproute.enabled",
            "dashboard.httproute.hostnames",
            "dashboard.httproute.labels",
            "dashboard.httproute.parentRefs",
            "dashboard.httproute.rules",
        ],
        // rollout/ephemeralmetadata.go at v1.8.4 lists and updates pods and re-reads none by name.
        calls: { ...COMMON_CALLS, "/pods": ["list", "update", "watch"] },
    },
    // v1.9.0 re-reads a pod by name after an update conflict (updatePodMetadataWithRetry).
    "2.41.0": { missingValueKeys: [], calls: { ...COMMON_CALLS, "/pods": ["get", "list", "update", "watch"] } },
};

/** Every dotted path in `values` that `keys` does not have (a `.*` key takes anything below it). */
function unknownKeys(values: Record<string, unknown>, keys: readonly string[]): string[] {
    const leaf = new Set(keys.map((k) => k.replace(/\.\*$/, "")));
    const branch = (p: string) => keys.some((k) => k.startsWith(`${p}.`) && !leaf.has(p));
    return Object.entries(values).flatMap(([k, v]) =>
        leaf.has(k)
            ? []
            : branch(k) && v !== null && typeof v === "object" && !Array.isArray(v)
              ? unknownKeys(
                    v as Record<string, unknown>,
                    keys.filter((x) => x.startsWith(`${k}.`)).map((x) => x.slice(k.length + 1)),
                ).map((x) => `${k}.${x}`)
              : [k],
    );
}

const IMAGE_MODE = { plugin: { delivery: "image", sha256: undefined, digest: TEST_DIGEST } };
const MODES: [string, Record<string, unknown>, string?][] = [
    ["download mode", {}],
    [
        "image mode, dashboard, ServiceMonitor, priority class",
        { ...IMAGE_MODE, controller: { dashboard: true, serviceMonitor: true, priorityClassName: "platform" } },
    ],
    [
        "a spoke trusting the hub's read CA, in image mode",
        { ...spokeConfig({ mimir: { readCaBundle: fs.readFileSync(path.join(__dirname, "fixtures", "tls", "ca.crt"), "utf8") } }), ...IMAGE_MODE },
        "preprod",
    ],
];

describe("the controller's version table", () => {
    it("has one entry per chart, each a release of its own line, in order", () => {
        assert.deepStrictEqual(
            CONTROLLER_RELEASES.map((r) => `${r.chartVersion} ${r.appVersion} ${r.line}`),
            ["2.40.7 v1.8.4 1.8", "2.41.0 v1.9.0 1.9"],
        );
        for (const r of CONTROLLER_RELEASES) {
            assert.strictEqual(releaseOfLine(r.appVersion), r);
            assert.strictEqual(KNOWN_CHART_APP_VERSIONS[r.chartVersion], r.appVersion);
        }
    });

    it("the values-key check is not vacuous: a misspelt key is caught", () => {
        assert.deepStrictEqual(
            unknownKeys({ controller: { replicas: 2, replica: 2, pdb: { maxUnavailable: 1, maxUnavaliable: 1 } }, installCRD: false }, KEYS_2_41_0),
            ["controller.replica", "controller.pdb.maxUnavaliable", "installCRD"],
        );
        assert.deepStrictEqual(unknownKeys({ controller: { trafficRouterPlugins: [{ name: "x" }], volumes: [{ a: 1 }] } }, KEYS_2_41_0), []);
    });

    for (const release of CONTROLLER_RELEASES) {
        const facts = RELEASE_FACTS[release.chartVersion];
        describe(`chart ${release.chartVersion} (Argo Rollouts ${release.appVersion})`, () => {
            it("a stack naming the chart installs its appVersion, controller image and CRDs alike", async () => {
                const cfg = config({ controller: { chartVersion: release.chartVersion } });
                assert.strictEqual(cfg.controller.appVersion, release.appVersion);
                assert.strictEqual(cfg.controller.releaseFromStackFile, true);
                const run = await planInline(merged(hubConfig(), { controller: { chartVersion: release.chartVersion } }), { stack: "hub" });
                const chart = byName(run, "rollouts-controller");
                assert.strictEqual(chart.inputs.version, release.chartVersion);
                const { tag } = (chart.inputs.values as { controller: { image: { tag: string } } }).controller.image;
                assert.strictEqual(tag, `${release.appVersion}@${TEST_CONTROLLER_DIGEST}`);
                for (const url of byName(run, "rollouts-crds").inputs.files as string[]) {
                    assert.ok(url.includes(`/${release.appVersion}/manifests/crds/`), url);
                }
            });

            for (const [label, patch, stack] of MODES) {
                it(`sets only keys that chart's values file has (${label})`, () => {
                    const keys = KEYS_2_41_0.filter((k) => !facts.missingValueKeys.some((m) => k === m || k === `${m}.*`));
                    assert.strictEqual(keys.length, KEYS_2_41_0.length - facts.missingValueKeys.length, "each missing key is one of 2.41.0's");
                    const values = controllerValues(config(merged(patch, { controller: { chartVersion: release.chartVersion } }), stack));
                    assert.deepStrictEqual(unknownKeys(values, keys), []);
                });
            }

            const newest = release === CONTROLLER_RELEASES.at(-1);
            it(`the controller's ClusterRole grants every call the release's controller makes${newest ? ", and no more on those resources" : ""}`, () => {
                const rules = controllerClusterRules({ tcpRoutes: false, tlsRoutes: false });
                for (const [resource, verbs] of Object.entries(facts.calls)) {
                    const granted = rules.find((r) => r.resources.some((res) => `${r.apiGroups.join(",")}/${res}` === resource))?.verbs ?? [];
                    const expected = newest ? [...verbs].sort() : verbs.filter((v) => granted.includes(v));
                    assert.deepStrictEqual(newest ? [...granted].sort() : verbs, expected, `${release.appVersion} calls these on ${resource}`);
                }
            });
        });
    }

    it("finds the release of a running tag's line, and knows the hash boundary between the 1.8 and 1.9 lines only", () => {
        assert.strictEqual(releaseOfLine("v1.8.2")?.chartVersion, "2.40.7");
        assert.strictEqual(releaseOfLine("v1.9.3")?.chartVersion, "2.41.0");
        assert.strictEqual(releaseOfLine("v1.10.2"), undefined);
        assert.strictEqual(releaseOfLine("latest"), undefined);
        assert.strictEqual(crossesHashBoundary("v1.8.4", "v1.9.0"), true);
        assert.strictEqual(crossesHashBoundary("v1.9.0", "v1.8.4"), true);
        assert.strictEqual(crossesHashBoundary("v1.8.1", "v1.8.4"), false);
        assert.strictEqual(crossesHashBoundary("v1.10.2", "v1.9.0"), undefined);
    });

    it("an adopting run keeps the running line unless the stack file names a release", () => {
        const kept = (releaseFromStackFile: boolean, running: string | undefined) =>
            adoptedRelease({ releaseFromStackFile, configuredChart: "2.41.0", running })?.chartVersion;
        assert.strictEqual(kept(false, "v1.8.4"), "2.40.7");
        assert.deepStrictEqual(
            [kept(true, "v1.8.4"), kept(false, "v1.9.0"), kept(false, undefined), kept(false, "v1.10.2")],
            [undefined, undefined, undefined, undefined],
        );
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

    describe("docs/operations/upgrade.md", () => {
        const page = fs.readFileSync(path.join(__dirname, "..", "docs", "operations", "upgrade.md"), "utf8");

        it("its table is the version table", () => {
            const rows = [...page.matchAll(/^\| (\d+\.\d+\.\d+) \| (v[\d.]+) \| ([\d.]+) \|/gm)].map((m) => m.slice(1, 4).join(" "));
            assert.deepStrictEqual(
                rows,
                CONTROLLER_RELEASES.map((r) => `${r.chartVersion} ${r.appVersion} ${r.line}`),
            );
        });

        it("its runbook moves the hub across the boundary with the program's keys, settling first and acknowledging only for the move", () => {
            const [from, to] = CONTROLLER_RELEASES;
            const all = upgradeRunbookSteps().flatMap((s) => s.commands);
            const at = (command: string) => all.indexOf(command);
            assert.ok(crossesHashBoundary(from.appVersion, to.appVersion));
            assert.ok(all.some((c) => c.includes('kubectl get deployment argo-rollouts -n "${NS:-argo-rollouts}"')));
            const settle = all.findIndex((c) => c.includes(`awk '$2 != "Healthy"'`));
            const moveTo = at(`pulumi config set --path controller.chartVersion ${to.chartVersion} -s hub`);
            const digest = all.findIndex((c) => c.startsWith("pulumi config set --path controller.imageDigest ") && c.includes(`:${to.appVersion})`));
            const acknowledge = at(`pulumi config set --path controller.acknowledgeNewRevisions ${to.line} -s hub`);
            const [up, upAgain] = all.flatMap((c, i) => (c === "pulumi up --policy-pack policy-pack -s hub" ? [i] : []));
            const unacknowledge = at("pulumi config rm --path controller.acknowledgeNewRevisions -s hub");
            assert.ok(
                0 <= settle && settle < moveTo && moveTo < digest && digest < acknowledge && acknowledge < up && up < unacknowledge && unacknowledge < upAgain,
                all.join("\n"),
            );
        });
    });
});
