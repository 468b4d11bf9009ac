/** The pinned chart rendered by the real helm as the provider renders a v4 Chart (pulumi-kubernetes provider/pkg/provider/helm/v4/chart.go). */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { KUBERNETES_VERSION } from "../components/cluster/config";
import { UsageError } from "./cli";

export const HELM_CHART = "kubernetes:helm.sh/v4:Chart";

/** What the program passes to the provider for one chart (the inputs of its resources.json row). */
export interface ChartRelease {
    /** `argo-rollouts`, or `oci://…/argo-rollouts`. */
    chart: string;
    version?: string;
    repo?: string; // repositoryOpts.repo; none for an OCI chart
    name: string;
    namespace: string;
    values: Record<string, unknown>;
    skipCrds?: boolean;
}

/** One rendered object, with the template it came from (`argo-rollouts/templates/controller/deployment.yaml`). */
export type RenderedObject = { object: Record<string, unknown>; source?: string };

export type ChartRender = { objects: RenderedObject[]; chart: { name: string; version: string } } | { notShown: string };

/** A chart given (--chart), or a folder of charts by version (--charts; `pull`: helm pull one it lacks into it); kubeVersion: vX.Y[.Z]. */
export type ChartOptions = { chartPath?: string; charts?: string; pull?: boolean; kubeVersion?: string; env?: NodeJS.ProcessEnv };

/** The chart the plan renders: the flag's path, else ARGO_ROLLOUTS_CHART; asked for, it must be a chart (a folder with Chart.yaml, or a .tgz). */
export function chartPathFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
    const p = flag ?? (env.ARGO_ROLLOUTS_CHART || undefined);
    const stat = p === undefined ? undefined : fs.statSync(p, { throwIfNoEntry: false });
    const chart = stat?.isDirectory() ? fs.existsSync(path.join(p!, "Chart.yaml")) : stat?.isFile() && p!.endsWith(".tgz");
    if (p !== undefined && !chart) {
        const why = stat ? "is no chart" : "does not exist";
        throw new UsageError(`${flag ? "--chart" : "ARGO_ROLLOUTS_CHART"} ${p}: ${why}; give the pinned chart's folder (holding Chart.yaml) or its .tgz`);
    }
    return p && path.resolve(p);
}

/** Where a release's chart is in a folder of charts by version (`--charts`): `<name>-<version>.tgz` as `helm pull` writes it, or `<name>-<version>/`. */
export function chartInFolder(release: ChartRelease, dir: string): string | undefined {
    const base = path.join(dir, `${release.chart.split("/").pop()}-${release.version}`);
    return [`${base}.tgz`, base].find((p) => fs.existsSync(p));
}

/** `helm pull`'s arguments for the release's chart into `dir`. */
const pullArgs = (r: ChartRelease, dir: string) => ["pull", r.chart, ...(r.repo ? ["--repo", r.repo] : []), "--version", `${r.version}`, "--destination", dir];

export function chartRelease(inputs: Record<string, unknown>): ChartRelease {
    const repo = (inputs.repositoryOpts as { repo?: unknown } | undefined)?.repo;
    return {
        chart: String(inputs.chart),
        ...(typeof inputs.version === "string" ? { version: inputs.version } : {}),
        ...(typeof repo === "string" ? { repo } : {}),
        name: String(inputs.name),
        namespace: String(inputs.namespace),
        values: (inputs.values ?? {}) as Record<string, unknown>,
        ...(inputs.skipCrds === true ? { skipCrds: true } : {}),
    };
}

/** `helm template`'s arguments, as the provider sets the same options. */
export const templateArgs = (release: ChartRelease, chartPath: string, kubeVersion: string, valuesFile: string): string[] => {
    const crds = release.skipCrds ? [] : ["--include-crds"];
    return [
        "template",
        release.name,
        chartPath,
        "--namespace",
        release.namespace,
        "--no-hooks",
        ...crds,
        "--kube-version",
        kubeVersion,
        "--values",
        valuesFile,
    ];
};

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
export function renderChart(release: ChartRelease, opts: ChartOptions): ChartRender {
    const env = opts.env ?? process.env;
    const pinned = `chart ${release.chart}${release.version ? ` ${release.version}` : ""} for release ${release.namespace}/${release.name}`;
    const pull = `helm ${pullArgs(release, opts.charts ?? "<dir>").join(" ")}`;
    if (opts.charts && opts.pull && !chartInFolder(release, opts.charts)) {
        fs.mkdirSync(opts.charts, { recursive: true });
        const pulled = helm(pullArgs(release, opts.charts), env);
        if (!pulled.ok) return { notShown: `${pinned}: ${pulled.why}` };
    }
    const chartPath = opts.chartPath ?? (opts.charts ? chartInFolder(release, opts.charts) : undefined);
    if (!chartPath) {
        const name = `${release.chart.split("/").pop()}-${release.version}`;
        return {
            notShown: opts.charts
                ? `${pinned}: ${opts.charts} holds neither ${name}.tgz nor ${name}/; add it (${pull}) or plan with --pull-charts`
                : `${pinned}: no chart given; give the pinned chart's folder or .tgz with --chart <path> or ARGO_ROLLOUTS_CHART, or a folder of charts by version with --charts <dir> (${pull})`,
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
    const shown = helm(["show", "chart", chartPath], env);
    if (!shown.ok) return { notShown: `${pinned}: ${shown.why}` };
    const meta = YAML.parse(shown.stdout) as { name?: unknown; version?: unknown } | null;
    const name = String(meta?.name);
    const version = String(meta?.version);
    if (name !== release.chart.split("/").pop() || (release.version !== undefined && version !== release.version)) {
        return {
            notShown: `${pinned}: the chart given (${chartPath}) is ${name} ${version}, not the one the stack pins; give each version in a folder with --charts <dir> (${pull})`,
        };
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chart-values-"));
    try {
        // JSON is YAML: the values exactly as the program passes them.
        const valuesFile = path.join(dir, "values.json");
        fs.writeFileSync(valuesFile, JSON.stringify(release.values));
        const rendered = helm(templateArgs(release, chartPath, opts.kubeVersion, valuesFile), env);
        if (!rendered.ok) return { notShown: `${pinned}: ${rendered.why}` };
        return { objects: parseRendered(rendered.stdout), chart: { name, version } };
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}
