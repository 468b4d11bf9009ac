/**
 * What every scenario of a run shares: the engines' binaries, the run's folder, the HTTPS file
 * server (CRD sources, chart repository), one local cluster per stack with the platform installed,
 * and Pulumi environments (project folder, file backend). Started lazily, stopped once at the end
 * of the run, whatever happened.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { Cluster, startCluster } from "./cluster";
import { FileServer, startFileServer } from "./fileserver";
import { ARGO_ROLLOUTS, installPlatform } from "./platform";
import { moduleDirPinnedIn } from "./modules";
import { e2eRelease } from "./releases";
import { run, runAsync, runOk } from "./procs";
import { PulumiEnv, pulumiEnv } from "./pulumi";
import { ConfigMap, localConfig, writeStackFile } from "./stacks";
import { CONTROLLER_DEFAULTS } from "../../components/rollouts/config";
import { CONTROLLER_RELEASES, ControllerRelease } from "../../components/rollouts/versions";
import { ROLLOUTS_CRD_FILES } from "../../components/argoRollouts";

export const STAND_IN_CHART = path.resolve(__dirname, "..", "chart", "argo-rollouts");

export interface StackTarget {
    stack: string;
    cluster: Cluster;
    config: ConfigMap;
}

export class World {
    readonly clusters = new Map<string, Cluster>();
    private envs = new Map<string, PulumiEnv>();
    chart: "real" | "stand-in" = "stand-in";
    /** The packaged chart of the default release (the old installer's brownfield install uses it too). */
    chartArchive = "";
    /** Every packaged chart the local repository serves, by chart version. */
    readonly chartArchives = new Map<string, string>();

    private constructor(
        readonly dir: string,
        readonly bin: string,
        readonly files: FileServer,
        readonly chartRepository: string,
        readonly crdBaseUrl: string,
        readonly keep: boolean,
    ) {}

    static async start(bin: string, opts: { keep?: boolean } = {}): Promise<World> {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "argo-rollouts-addon-e2e-run-"));
        const files = await startFileServer(dir);
        // CRD sources: each release's manifests from its argo-rollouts module, in the layout
        // controller.crdBaseUrl points at (<base>/<tag>/manifests/crds/<file>).
        for (const release of CONTROLLER_RELEASES) {
            const crdDir = path.join(files.root, "argo-rollouts", release.appVersion, "manifests", "crds");
            fs.mkdirSync(crdDir, { recursive: true });
            for (const f of ROLLOUTS_CRD_FILES) {
                fs.copyFileSync(path.join(releaseModule(release), "manifests", "crds", f), path.join(crdDir, f));
            }
        }
        const world = new World(dir, bin, files, `${files.url}/charts`, `${files.url}/argo-rollouts`, opts.keep ?? false);
        world.publishChart();
        return world;
    }

    /**
     * Packages the charts into the local repository: the real one when ARGO_ROLLOUTS_CHART names it,
     * and the stand-in of every release of the version table it is not.
     */
    private publishChart(): void {
        const given = process.env.ARGO_ROLLOUTS_CHART;
        const chartsDir = path.join(this.files.root, "charts");
        fs.mkdirSync(chartsDir, { recursive: true });
        const helm = path.join(this.bin, "helm");
        const helmEnv = {
            ...process.env,
            HELM_CACHE_HOME: path.join(this.dir, "helm", "cache"),
            HELM_CONFIG_HOME: path.join(this.dir, "helm", "config"),
            HELM_DATA_HOME: path.join(this.dir, "helm", "data"),
        };
        const packaged = () => new Set(fs.readdirSync(chartsDir).filter((f) => f.endsWith(".tgz")));
        let realVersion: string | undefined;
        if (given) {
            const src = path.resolve(given);
            if (!fs.existsSync(src)) {
                throw new Error(`ARGO_ROLLOUTS_CHART=${given}: no such file or directory`);
            }
            if (src.endsWith(".tgz")) {
                fs.copyFileSync(src, path.join(chartsDir, path.basename(src)));
            } else {
                runOk(helm, ["package", src, "--destination", chartsDir], { env: helmEnv });
            }
            this.chart = "real";
            realVersion = /argo-rollouts-(\d+\.\d+\.\d+)\.tgz$/.exec([...packaged()][0] ?? "")?.[1];
        }
        for (const release of CONTROLLER_RELEASES.filter((r) => r.chartVersion !== realVersion)) {
            // The stand-in takes the five CRDs from the release's argo-rollouts module (its templates/crds.yaml).
            const copy = path.join(this.dir, "stand-in-chart", release.chartVersion, "argo-rollouts");
            fs.cpSync(STAND_IN_CHART, copy, { recursive: true });
            const chartYaml = path.join(copy, "Chart.yaml");
            fs.writeFileSync(
                chartYaml,
                fs
                    .readFileSync(chartYaml, "utf8")
                    .replace(/^version: .*$/m, `version: ${release.chartVersion}`)
                    .replace(/^appVersion: .*$/m, `appVersion: ${release.appVersion}`),
            );
            fs.mkdirSync(path.join(copy, "crd-sources"));
            for (const f of ROLLOUTS_CRD_FILES) {
                fs.copyFileSync(path.join(releaseModule(release), "manifests", "crds", f), path.join(copy, "crd-sources", f));
            }
            runOk(helm, ["package", copy, "--destination", chartsDir], { env: helmEnv });
        }
        for (const f of packaged()) {
            const version = /argo-rollouts-(\d+\.\d+\.\d+)\.tgz$/.exec(f)?.[1];
            if (version) {
                this.chartArchives.set(version, path.join(chartsDir, f));
            }
        }
        this.chartArchive = this.chartArchives.get(CONTROLLER_DEFAULTS.chartVersion) ?? "";
        runOk(helm, ["repo", "index", chartsDir, "--url", this.chartRepository], { env: helmEnv });
        const index = fs.readFileSync(path.join(chartsDir, "index.yaml"), "utf8");
        for (const release of CONTROLLER_RELEASES) {
            if (!index.includes(`version: ${release.chartVersion}`)) {
                throw new Error(`the local repository has no argo-rollouts ${release.chartVersion}:\n${index}`);
            }
        }
    }

    /** A local cluster for `name`, with the platform the stack expects installed. */
    async cluster(name: string, stack: string, patch?: (config: ConfigMap) => void): Promise<StackTarget> {
        let cluster = this.clusters.get(name);
        if (!cluster) {
            cluster = await startCluster({ bin: this.bin, keep: this.keep });
            this.clusters.set(name, cluster);
        }
        const config = this.stackConfig(stack, cluster, patch);
        await installPlatform(cluster, stack, config);
        return { stack, cluster, config };
    }

    stackConfig(stack: string, cluster: Cluster, patch?: (config: ConfigMap) => void): ConfigMap {
        return localConfig(
            stack,
            { kubeconfig: cluster.kubeconfig, context: "e2e", chartRepository: this.chartRepository, crdBaseUrl: this.crdBaseUrl },
            patch,
        );
    }

    /** A Pulumi environment (project folder and backend) of this run, by name. */
    pulumi(name = "main"): PulumiEnv {
        let env = this.envs.get(name);
        if (!env) {
            env = pulumiEnv(path.join(this.dir, `pulumi-${name}`), this.bin, { SSL_CERT_FILE: this.files.caFile });
            this.envs.set(name, env);
        }
        return env;
    }

    /** Writes the stack file and creates the stack in the environment's backend. */
    async initStack(env: PulumiEnv, target: StackTarget): Promise<string> {
        const file = writeStackFile(env.projectDir, target.stack, target.config);
        const existing = await env.pulumi(["stack", "ls", "--json"]);
        const stacks = existing.status === 0 ? (JSON.parse(existing.stdout) as { name: string }[]).map((s) => s.name) : [];
        if (!stacks.includes(target.stack)) {
            await env.pulumiOk(["stack", "init", target.stack, "--secrets-provider", "passphrase"]);
            // stack init records the passphrase salt in the file; keep it and the config.
            writeStackFile(env.projectDir, target.stack, target.config);
        }
        return file;
    }

    async stop(): Promise<void> {
        for (const cluster of this.clusters.values()) {
            await cluster.stop();
        }
        await this.files.close();
        if (!this.keep) {
            fs.rmSync(this.dir, { recursive: true, force: true });
        }
    }
}

/** The argo-rollouts module of a release of the version table, as the run pins it. */
export function releaseModule(release: ControllerRelease): string {
    return moduleDirPinnedIn(e2eRelease(release.appVersion).pins, ARGO_ROLLOUTS);
}

/** `npm run <script> -- args` of this repository, as a user runs it. */
export function npmRun(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): ReturnType<typeof run> {
    return run("npm", ["run", "--silent", script, "--", ...args], { cwd: path.resolve(__dirname, "..", ".."), env });
}

/** `npmRun` without blocking the event loop: the run's own servers (the Mimir stand-in) keep answering the command. */
export function npmRunAsync(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): ReturnType<typeof runAsync> {
    return runAsync("npm", ["run", "--silent", script, "--", ...args], { cwd: path.resolve(__dirname, "..", ".."), env });
}
