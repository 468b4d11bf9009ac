/**
 * The real Pulumi CLI on the program: a project folder of the run (Pulumi.yaml copied, the
 * program's folders linked, the derived stack files written there), a local file backend,
 * passphrase secrets, and nothing that downloads: automatic plugin acquisition and the update
 * check are off (pulumi/pulumi sdk/go/common/env/env.go at v3.248.0), ambient plugins are ignored,
 * and the kubernetes provider is installed into the run's plugin cache from the built binary.
 */
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../tools/stackFile";
import { RunResult, runAsync, runOk } from "./procs";

/** The resource plugins the program loads and the versions the npm packages request. */
export function requestedPluginVersion(pkg: string): string {
    const json = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "node_modules", pkg, "package.json"), "utf8")) as {
        version: string;
        pulumi?: { version?: string };
    };
    return `v${json.pulumi?.version ?? json.version}`;
}

export interface PulumiEnv {
    projectDir: string;
    home: string;
    backend: string;
    env: NodeJS.ProcessEnv;
    pulumi(args: string[], opts?: { stack?: string; input?: string; env?: NodeJS.ProcessEnv }): Promise<RunResult>;
    pulumiOk(args: string[], opts?: { stack?: string; env?: NodeJS.ProcessEnv }): Promise<string>;
}

export const E2E_PASSPHRASE = "argo-rollouts-addon-e2e";

/** Links the program into `<dir>/project` and prepares an isolated Pulumi home and backend. */
export function pulumiEnv(dir: string, bin: string, extraEnv: NodeJS.ProcessEnv = {}): PulumiEnv {
    const projectDir = path.join(dir, "project");
    const home = path.join(dir, "pulumi-home");
    const state = path.join(dir, "pulumi-state");
    // The kubernetes provider writes the stack's kubeconfig into a temporary file at each start and
    // leaves it (/tmp/kubeconfig<digits>): under the run's folder, it goes with the run.
    const tmp = path.join(dir, "tmp");
    for (const d of [projectDir, home, state, tmp]) {
        fs.mkdirSync(d, { recursive: true });
    }
    fs.copyFileSync(path.join(REPO_ROOT, "Pulumi.yaml"), path.join(projectDir, "Pulumi.yaml"));
    // tools: the runbook runs `npm run adopt-check` in the project, as an operator does.
    for (const entry of ["components", "stacks", "policy-pack", "tools", "node_modules", "package.json", "tsconfig.json", "tsconfig.pulumi.json"]) {
        fs.symlinkSync(path.join(REPO_ROOT, entry), path.join(projectDir, entry));
    }
    const env: NodeJS.ProcessEnv = {
        ...process.env,
        PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`,
        PULUMI_HOME: home,
        TMPDIR: tmp,
        PULUMI_BACKEND_URL: `file://${state}`,
        PULUMI_CONFIG_PASSPHRASE: E2E_PASSPHRASE,
        PULUMI_SKIP_UPDATE_CHECK: "true",
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
        PULUMI_IGNORE_AMBIENT_PLUGINS: "true",
        PULUMI_SKIP_CONFIRMATIONS: "true",
        PULUMI_OPTION_NON_INTERACTIVE: "true",
        PULUMI_OPTION_COLOR: "never",
        // The provider's environment switches must not decide adoption behind the stack's back.
        PULUMI_K8S_UPSERT_EXISTING_OBJECTS: undefined,
        PULUMI_K8S_ENABLE_PATCH_FORCE: undefined,
        ...extraEnv,
    };
    const pulumi = (args: string[], opts: { stack?: string; input?: string; env?: NodeJS.ProcessEnv } = {}) =>
        runAsync(path.join(bin, "pulumi"), [...args, ...(opts.stack ? ["--stack", opts.stack] : [])], {
            cwd: projectDir,
            env: { ...env, ...opts.env },
            input: opts.input,
        });
    const pulumiOk = async (args: string[], opts: { stack?: string; env?: NodeJS.ProcessEnv } = {}) => {
        const r = await pulumi(args, opts);
        if (r.status !== 0) {
            throw new Error(`pulumi ${args.join(" ")}${opts.stack ? ` (stack ${opts.stack})` : ""} exited ${r.status}:\n${failure(r)}`);
        }
        return r.stdout;
    };
    // The kubernetes provider under the version @pulumi/kubernetes requests (the plugin cache
    // needs an exact version match: sdk/go/common/workspace/plugins.go SelectCompatiblePlugin).
    runOk(
        path.join(bin, "pulumi"),
        ["plugin", "install", "resource", "kubernetes", requestedPluginVersion("@pulumi/kubernetes"), "--file", path.join(bin, "pulumi-resource-kubernetes")],
        { cwd: projectDir, env },
    );
    return { projectDir, home, backend: state, env, pulumi, pulumiOk };
}

/**
 * What a failed pulumi command said: its error and warning lines (the engine prints them in its
 * diagnostics, far from the end of a long diff), then the last lines of its output.
 */
export function failure(r: RunResult, lines = 30): string {
    const all = `${r.stdout}\n${r.stderr}`;
    const diagnostics = [
        ...new Set(
            all
                .split("\n")
                .filter((l) => /\b(error|failed|refused|denied)\b/i.test(l))
                .map((l) => l.trim()),
        ),
    ];
    return `${diagnostics.slice(0, 40).join("\n")}\n--- last ${lines} lines ---\n${tail(all, lines)}`;
}

export function tail(text: string, lines: number): string {
    return text.trimEnd().split("\n").slice(-lines).join("\n");
}
