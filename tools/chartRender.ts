/**
 * The chart's objects in the offline plan: the pinned chart, given as a folder or a `.tgz`
 * (`npm run plan -- --chart <path>` or ARGO_ROLLOUTS_CHART), rendered by the real `helm` (HELM, or
 * `helm` on the PATH) with the values the program passes to the provider: the plan's own
 * `kubernetes:helm.sh/v4:Chart` row, as the program declared it (components/rollouts/stage.ts,
 * values from components/rollouts/values.ts), so nothing here restates them.
 *
 * The provider renders a v4 Chart as `helm template` with the release's name and namespace,
 * `--include-crds` unless skipCrds, `--no-hooks`, and the Kubernetes version and API versions the
 * API server reports (pulumi/pulumi-kubernetes provider/pkg/provider/helm/v4/chart.go, Construct and
 * setKubeVersionAndAPIVersions, at f47bc2d6f199, the provider e2e/engines/pulumi-kubernetes pins).
 * Offline there is no API server: the Kubernetes version is the stack's cluster.kubernetesVersion
 * (or --kube-version), and the API versions are Helm's built-in ones only, so a template that asks
 * `.Capabilities.APIVersions.Has` for a CRD's group renders as on a cluster without it (the pinned
 * argo-rollouts chart asks only for the KubeVersion). The provider then gives a namespaced object
 * without a namespace the release's (provider/pkg/provider/yaml/v2/yaml.go Normalize); the chart's
 * templates set it on every object.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { KUBERNETES_VERSION } from "../components/cluster/config";

export const HELM_CHART = "kubernetes:helm.sh/v4:Chart";

/** What the program passes to the provider for one chart (the inputs of its resources.json row). */
export interface ChartRelease {
    /** The chart's reference: `argo-rollouts`, or `oci://…/argo-rollouts`. */
    chart: string;
    version?: string;
    /** The release's name and namespace. */
    name: string;
    namespace: string;
    values: Record<string, unknown>;
    skipCrds?: boolean;
}

/** One rendered object, with the template it came from (`argo-rollouts/templates/controller/deployment.yaml`). */
export interface RenderedObject {
    object: Record<string, unknown>;
    source?: string;
}

export type ChartRender = { objects: RenderedObject[]; chart: { name: string; version: string } } | { notShown: string };

/** The chart the plan renders: the flag's path, else ARGO_ROLLOUTS_CHART. */
export function chartPathFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
    const p = flag ?? (env.ARGO_ROLLOUTS_CHART || undefined);
    return p ? path.resolve(p) : undefined;
}

/** The helm binary: HELM, else `helm` on the PATH. */
export function helmBinary(env: NodeJS.ProcessEnv = process.env): string {
    return env.HELM || "helm";
}

/** The release a Chart row of resources.json declares. */
export function chartRelease(inputs: Record<string, unknown>): ChartRelease {
    return {
        chart: String(inputs.chart),
        ...(typeof inputs.version === "string" ? { version: inputs.version } : {}),
        name: String(inputs.name),
        namespace: String(inputs.namespace),
        values: (inputs.values ?? {}) as Record<string, unknown>,
        ...(inputs.skipCrds === true ? { skipCrds: true } : {}),
    };
}

/** `helm template`'s arguments, as the provider sets the same options (see the module's comment). */
export function templateArgs(release: ChartRelease, chartPath: string, kubeVersion: string, valuesFile: string): string[] {
    return [
        "template",
        release.name,
        chartPath,
        "--namespace",
        release.namespace,
        "--no-hooks",
        ...(release.skipCrds ? [] : ["--include-crds"]),
        "--kube-version",
        kubeVersion,
        "--values",
        valuesFile,
    ];
}

/** The objects of helm's output, each with the `# Source:` comment helm writes above it. */
export function parseRendered(manifest: string): RenderedObject[] {
    return YAML.parseAllDocuments(manifest)
        .map((doc) => {
            const object = doc.toJS() as Record<string, unknown> | null;
            // helm writes `# Source: <template>` above each document; the parser gives it to the document or its first node.
            const source = /Source: (\S+)/.exec(`${doc.commentBefore ?? ""}\n${(doc.contents as { commentBefore?: string } | null)?.commentBefore ?? ""}`)?.[1];
            return object && typeof object === "object" ? { object, ...(source ? { source } : {}) } : undefined;
        })
        .filter((o): o is RenderedObject => o !== undefined);
}

function helm(args: string[], env: NodeJS.ProcessEnv): { ok: true; stdout: string } | { ok: false; why: string } {
    const bin = helmBinary(env);
    const res = spawnSync(bin, args, { encoding: "utf8", env, maxBuffer: 256 * 1024 * 1024 });
    if (res.error) {
        return { ok: false, why: `${bin} could not run (${res.error.message}); set HELM to a helm binary or put helm on the PATH` };
    }
    if (res.status !== 0) {
        return { ok: false, why: `helm ${args[0]} failed: ${res.stderr.trim().split("\n").slice(-5).join(" ")}` };
    }
    return { ok: true, stdout: res.stdout };
}

/**
 * Renders the release from the chart at `chartPath` for `kubeVersion`, or says why its objects are
 * not shown: no chart or version given, helm missing, or a chart other than the one the stack pins.
 */
export function renderChart(release: ChartRelease, opts: { chartPath?: string; kubeVersion?: string; env?: NodeJS.ProcessEnv }): ChartRender {
    const env = opts.env ?? process.env;
    const pinned = `chart ${release.chart}${release.version ? ` ${release.version}` : ""} for release ${release.namespace}/${release.name}`;
    if (!opts.chartPath) {
        return {
            notShown: `${pinned}: no chart given; give the pinned chart's folder or .tgz with --chart <path> or ARGO_ROLLOUTS_CHART (helm pull ${release.chart} --version ${release.version ?? "<version>"})`,
        };
    }
    if (!opts.kubeVersion) {
        return {
            notShown: `${pinned}: no Kubernetes version; the chart renders for the cluster's (.Capabilities.KubeVersion): set cluster.kubernetesVersion in the stack file or give --kube-version vX.Y.Z`,
        };
    }
    if (!KUBERNETES_VERSION.test(opts.kubeVersion)) {
        return { notShown: `${pinned}: --kube-version ${JSON.stringify(opts.kubeVersion)} is not a Kubernetes version such as v1.33 or v1.33.4` };
    }
    if (!fs.existsSync(opts.chartPath)) {
        return { notShown: `${pinned}: the chart given, ${opts.chartPath}, does not exist` };
    }
    const shown = helm(["show", "chart", opts.chartPath], env);
    if (!shown.ok) {
        return { notShown: `${pinned}: ${shown.why}` };
    }
    const meta = YAML.parse(shown.stdout) as { name?: unknown; version?: unknown } | null;
    const name = String(meta?.name);
    const version = String(meta?.version);
    if (name !== release.chart.split("/").pop() || (release.version !== undefined && version !== release.version)) {
        return { notShown: `${pinned}: the chart given (${opts.chartPath}) is ${name} ${version}, not the one the stack pins` };
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chart-values-"));
    try {
        // JSON is YAML: the values exactly as the program passes them.
        const valuesFile = path.join(dir, "values.json");
        fs.writeFileSync(valuesFile, JSON.stringify(release.values));
        const rendered = helm(templateArgs(release, opts.chartPath, opts.kubeVersion, valuesFile), env);
        if (!rendered.ok) {
            return { notShown: `${pinned}: ${rendered.why}` };
        }
        return { objects: parseRendered(rendered.stdout), chart: { name, version } };
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}
