/**
 * What a kubelet does for a container that the controller process, run without one, needs done:
 * its environment (`env[].value`) and its ConfigMap volumes. kwok marks pods Running without
 * containers, so the harness plays this part for the chart Deployment's controller container,
 * from the Deployment as the API server stores it: whatever the program declares there reaches
 * the process, and nothing else does.
 *
 * A ConfigMap volume is written as the kubelet writes it (kubernetes
 * pkg/volume/util/atomic_writer.go at v1.35.4): the files in a hidden timestamped directory
 * `..<timestamp>`, the link `..data -> ..<timestamp>`, and each visible name a link
 * `<name> -> ..data/<name>`. The process has no mount namespace, so each volume is a folder of the
 * run and every mount path named in an env value is replaced by that folder.
 */
import * as fs from "fs";
import * as path from "path";

export interface EnvVar {
    name: string;
    value?: string;
    valueFrom?: unknown;
}

export interface VolumeMount {
    name: string;
    mountPath: string;
    subPath?: string;
}

export interface Volume {
    name: string;
    configMap?: { name: string; items?: { key: string; path: string }[]; optional?: boolean };
    [source: string]: unknown;
}

export interface ContainerView {
    name: string;
    args?: string[];
    env?: EnvVar[];
    volumeMounts?: VolumeMount[];
}

/** A mount path and the folder of the run that stands for it. */
export interface PlayedMount {
    volume: string;
    mountPath: string;
    local: string;
}

/** Writes `files` (volume path to content) into `dir` in the kubelet's atomic-writer layout. */
export function writeAtomically(dir: string, files: Record<string, string>, now: Date = new Date()): void {
    fs.mkdirSync(dir, { recursive: true });
    const stamp = now.toISOString().replace(/[-T:]/g, "_").replace(/\..*$/, "");
    // os.MkdirTemp(targetDir, "..2006_01_02_15_04_05."): the timestamp and a random suffix.
    const tsDir = fs.mkdtempSync(path.join(dir, `..${stamp}.`));
    for (const [file, content] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(tsDir, file)), { recursive: true });
        fs.writeFileSync(path.join(tsDir, file), content, { mode: 0o644 });
    }
    fs.symlinkSync(path.basename(tsDir), path.join(dir, "..data"));
    for (const top of new Set(Object.keys(files).map((f) => f.split("/")[0]))) {
        fs.symlinkSync(path.join("..data", top), path.join(dir, top));
    }
}

/** The files of a ConfigMap volume: every key under its own name, or only the listed items at their paths. */
export function configMapFiles(data: Record<string, string>, items?: { key: string; path: string }[]): Record<string, string> {
    if (!items || items.length === 0) {
        return { ...data };
    }
    return Object.fromEntries(
        items.map((i) => {
            if (!(i.key in data)) {
                throw new Error(`the ConfigMap has no key ${i.key}`);
            }
            return [i.path, data[i.key]];
        }),
    );
}

/** `value` with every mount path that appears as a whole path (or the start of one) replaced by its folder. */
export function mapMountPaths(value: string, mounts: readonly PlayedMount[]): string {
    let out = value;
    for (const m of mounts) {
        const escaped = m.mountPath.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        out = out.replace(new RegExp(`(^|[:=,])${escaped}(?=$|[/:,])`, "g"), (_, before: string) => `${before}${m.local}`);
    }
    return out;
}

/**
 * Plays a container's ConfigMap volumes into `dir` and returns its environment with the mount
 * paths mapped. `readConfigMap` reads a ConfigMap's data from the cluster (undefined when absent).
 * Refuses what it does not play rather than run the process differently from the pod: an env var
 * from `valueFrom`, a `subPath` mount of a ConfigMap, a missing ConfigMap that is not optional.
 */
export function playContainer(
    container: ContainerView,
    volumes: readonly Volume[],
    readConfigMap: (name: string) => Record<string, string> | undefined,
    dir: string,
): { env: Record<string, string>; mounts: PlayedMount[] } {
    const mounts: PlayedMount[] = [];
    for (const m of container.volumeMounts ?? []) {
        const volume = volumes.find((v) => v.name === m.name);
        const source = volume?.configMap;
        if (!source) {
            continue;
        }
        if (m.subPath) {
            throw new Error(`volume ${m.name} is mounted with a subPath: the harness plays whole ConfigMap volumes only`);
        }
        const data = readConfigMap(source.name);
        if (data === undefined && !source.optional) {
            throw new Error(`volume ${m.name}: ConfigMap ${source.name} does not exist, so the pod could not start`);
        }
        const local = path.join(dir, m.name);
        writeAtomically(local, configMapFiles(data ?? {}, source.items));
        mounts.push({ volume: m.name, mountPath: m.mountPath, local });
    }
    const env: Record<string, string> = {};
    for (const e of container.env ?? []) {
        if (e.valueFrom !== undefined) {
            throw new Error(`env ${e.name} is set from valueFrom: the harness plays env values only`);
        }
        env[e.name] = mapMountPaths(e.value ?? "", mounts);
    }
    return { env, mounts };
}
