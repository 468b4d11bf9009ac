/** The pinned chart rendered by the real helm as the provider renders a v4 Chart (pulumi-kubernetes provider/pkg/provider/helm/v4/chart.go). */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { KUBERNETES_VERSION } from "../components/cluster/config";

export const HELM_CHART = "kubernetes:helm.sh/v4:Chart";

/** What the program passes to the provider for one chart (the inputs of its resources.json row). */
export interface ChartRelease {
    /** `argo-rollouts`, or `oci://…/argo-rollouts`. */
    chart: string;
    version?: string;
    name: string;
    namespace: string;
    values: Record<string, unknown>;
    skipCrds?: boolean;
}

/** One rendered object, with the template it came from (`argo-rollouts/templates/controller/deployment.yaml`). */
export type RenderedObject = { object: Record<string, unknown>; source?: string };

export type ChartRender = { objects: RenderedObject[]; chart: { name: string; version: string } } | { notShown: string };

/** The chart the plan renders: the flag's path, else ARGO_ROLLOUTS_CHART. */
export function chartPathFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
    const p = flag ?? (env.ARGO_ROLLOUTS_CHART || undefined);
    return p ? path.resolve(p) : undefined;
}

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

/** `helm template`'s arguments, as the provider sets the same options. */
export const templateArgs = (release: ChartRelease, chartPath: string, kubeVersion: string, valuesFile: string): string[] =>
    ["template", release.name, chartPath, "--namespace", release.namespace, "--no-hooks", ...(release.skipCrds ? [] : ["--include-crds"])].concat([
        "--kube-version",
        kubeVersion,
        "--values",
        valuesFile,
    ]);

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
    const bin = env.HELM || "helm";
    const res = spawnSync(bin, args, { encoding: "utf8", env, maxBuffer: 256 * 1024 * 1024 });
    if (res.error) return { ok: false, why: `${bin} could not run (${res.error.message}); set HELM to a helm binary or put helm on the PATH` };
    if (res.status !== 0) return { ok: false, why: `helm ${args[0]} failed: ${res.stderr.trim().split("\n").slice(-5).join(" ")}` };
    return { ok: true, stdout: res.stdout };
}

/** The release rendered for `kubeVersion`, or why its objects are not shown (no chart or version, no helm, not the pinned chart). */
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
    if (!fs.existsSync(opts.chartPath)) return { notShown: `${pinned}: the chart given, ${opts.chartPath}, does not exist` };
    const shown = helm(["show", "chart", opts.chartPath], env);
    if (!shown.ok) return { notShown: `${pinned}: ${shown.why}` };
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
        if (!rendered.ok) return { notShown: `${pinned}: ${rendered.why}` };
        return { objects: parseRendered(rendered.stdout), chart: { name, version } };
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}
