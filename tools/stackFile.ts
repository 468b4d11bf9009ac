import * as fs from "fs";
import * as path from "path";
import { ArgoCdConfig, ROLLOUT_PROJECT_KINDS, readArgoCd, tenantSyncSettings } from "../components/argocd";
import { ProjectStack, parseConfigText, readProjectStacks, readStackYamlFile } from "../components/config/load";
import { ConfigReader, PROJECT, Plain, isPlainObject } from "../components/config/reader";
import { AddonConfig, parseAddonConfig } from "../stacks/config";
import { readGateway, readMimirAndSpokes } from "../components/gateway/config";
import { gatewaysRead } from "../components/gateway/spokeRoutes";
import { OfflineWorld, SECRET } from "./offline";
import { isStackName } from "./cli";

export const REPO_ROOT = path.resolve(__dirname, "..");

export interface StackFile {
    stack: string;
    /** Full keys to values as Pulumi stores them: scalars as text, structures as JSON. */
    config: Record<string, string>;
    secretKeys: string[];
    /** What every stack file beside this one says about its cluster, for the rules between them. */
    projectStacks?: ProjectStack[];
    /** The folder it was read from: a spoke's hub is planned from the same folder. */
    dir?: string;
}

export function listStacks(root = REPO_ROOT): string[] {
    return fs
        .readdirSync(root)
        .map((f) => /^Pulumi\.([A-Za-z0-9_.-]+)\.yaml$/.exec(f)?.[1])
        .filter((s): s is string => s !== undefined && isStackName(s))
        .sort();
}

/** A stack file as the Pulumi CLI hands it to a program, read narrowly; `secure:` values stay "[secret]" (no secrets provider here). */
export function readStackFile(stack: string, root = REPO_ROOT): StackFile {
    const file = path.join(root, `Pulumi.${stack}.yaml`);
    if (!fs.existsSync(file)) {
        throw new Error(`no stack file ${path.relative(process.cwd(), file) || file}; stacks here: ${listStacks(root).join(", ") || "none"}`);
    }
    const doc = readStackYamlFile(root, stack) ?? {};
    const config = isPlainObject(doc) ? (doc.config ?? {}) : undefined;
    if (!isPlainObject(config)) {
        const [what, got] = isPlainObject(doc) ? ["config:", config] : ["the file", doc];
        const kind = Array.isArray(got) ? "a list" : got === null ? "nothing" : `a ${typeof got}`;
        throw new Error(`stack "${stack}": ${path.basename(file)}: ${what} must be a map of keys to values, got ${kind}`);
    }
    const projectStacks = readProjectStacks(root);
    return {
        ...fromConfigMap(stack, config),
        ...(projectStacks ? { projectStacks } : {}),
        dir: root,
    };
}

/**
 * A `config:` map in Pulumi's flat form (sdk/go/common/resource/config/object.go MarshalString: a string as is, null as "", else
 * JSON with keys sorted); a `secure:` value anywhere in a key makes the whole key "[secret]".
 */
export function fromConfigMap(stack: string, map: Record<string, unknown>): StackFile {
    const isSecure = (v: unknown): boolean => isPlainObject(v) && Object.keys(v).length === 1 && typeof v.secure === "string";
    const config: Record<string, string> = {};
    const secretKeys: string[] = [];
    for (const [rawKey, value] of Object.entries(map)) {
        const key = rawKey.includes(":") ? rawKey : `${PROJECT}:${rawKey}`;
        let secret = isSecure(value);
        const sorted = (_k: string, v: unknown) => {
            secret ||= isSecure(v);
            return isSecure(v) ? SECRET : isPlainObject(v) ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1))) : v;
        };
        config[key] = secret ? SECRET : value === null ? "" : typeof value === "string" ? value : JSON.stringify(value, sorted);
        if (secret) secretKeys.push(key);
    }
    return { stack, config, secretKeys };
}

/** The fully qualified hub stack a spoke's file names in `mimir.hubStack`, if any. */
export function referencedHubStack(file: StackFile): string | undefined {
    const mimir = rawConfig(file).mimir;
    return isPlainObject(mimir) && typeof mimir.hubStack === "string" ? mimir.hubStack : undefined;
}

/** The placeholder a spoke's read endpoint resolves to when its hub cannot be planned here. */
export const PLACEHOLDER_READ_ENDPOINT = "https://offline-placeholder.hub.invalid/prometheus";

const PLACEHOLDER_ANNOTATIONS = { "argo-rollouts-addon.platform/offline": "placeholder" };

/** The ArgoCD objects another owner keeps, as placeholders built to pass the stage's checks; a real preview reads the live ones. */
export function placeholderKeptArgoObjects(argocd: Pick<ArgoCdConfig, "namespace" | "projects" | "applicationSets">): Record<string, Record<string, unknown>> {
    const objects: Record<string, Record<string, unknown>> = {};
    const meta = (name: string) => ({ name, namespace: argocd.namespace, annotations: { ...PLACEHOLDER_ANNOTATIONS } });
    for (const p of argocd.projects.filter((x) => x.owner === "external")) {
        objects[`argoproj.io/v1alpha1/AppProject/${argocd.namespace}/${p.name}`] = {
            apiVersion: "argoproj.io/v1alpha1",
            kind: "AppProject",
            metadata: meta(p.name),
            spec: { description: "offline placeholder, not read from a cluster", namespaceResourceWhitelist: ROLLOUT_PROJECT_KINDS.map((gk) => ({ ...gk })) },
        };
    }
    const settings = tenantSyncSettings();
    for (const a of argocd.applicationSets.filter((x) => x.owner === "external")) {
        objects[`argoproj.io/v1alpha1/ApplicationSet/${argocd.namespace}/${a.name}`] = {
            apiVersion: "argoproj.io/v1alpha1",
            kind: "ApplicationSet",
            metadata: meta(a.name),
            spec: {
                generators: [],
                template: {
                    metadata: { name: "offline-placeholder", annotations: settings.annotations },
                    spec: {
                        project: "offline-placeholder",
                        destination: { server: "https://offline-placeholder.invalid", namespace: "offline-placeholder" },
                        syncPolicy: { syncOptions: settings.syncOptions },
                        ignoreDifferences: settings.ignoreDifferences,
                    },
                },
            },
        };
    }
    return objects;
}

/** Every Gateway the stack reads (gatewaysRead: the shared one, mimir.ingestGateway) with every listener it names there, as placeholders. */
export function placeholderGateways(file: StackFile): Record<string, Record<string, unknown>> {
    // The program's own reading of the gateway, mimir and spokes sections (their problems are the program's to report).
    const [raw, r] = [rawConfig(file), new ConfigReader()];
    const role = isPlainObject(raw.cluster) && raw.cluster.role === "spoke" ? "spoke" : "hub";
    const shared = readGateway(r, raw.gateway);
    const routes = shared && readMimirAndSpokes(r, raw, { role, stack: file.stack }, shared);
    const read = shared && routes ? gatewaysRead(shared, role === "hub" ? routes.spokes : [], routes.mimir) : [];
    return Object.fromEntries(
        read.map(({ name, namespace, wanted }) => [
            `gateway.networking.k8s.io/v1/Gateway/${namespace}/${name}`,
            {
                apiVersion: "gateway.networking.k8s.io/v1",
                kind: "Gateway",
                metadata: { name, namespace, annotations: { ...PLACEHOLDER_ANNOTATIONS } },
                spec: { gatewayClassName: "offline-placeholder", listeners: wanted.map((w) => ({ name: w.listener, port: 443, protocol: "HTTPS" })) },
            },
        ]),
    );
}

/** What the offline plan assumes the cluster holds: every Gateway the stack reads and the kept ArgoCD objects, marked as placeholders. */
export function placeholderWorld(file: StackFile): OfflineWorld {
    const objects = placeholderGateways(file);
    const cluster = rawConfig(file).cluster;
    const name = isPlainObject(cluster) && typeof cluster.name === "string" ? cluster.name : undefined;
    // The program's own reading of the argocd section (its problems are the program's to report).
    const argocd = readArgoCd(new ConfigReader(), parseConfigText(file.config[`${PROJECT}:argocd`] ?? "{}"), name);
    if (argocd?.local) Object.assign(objects, placeholderKeptArgoObjects(argocd));
    const world: OfflineWorld = { objects };
    const hubStack = referencedHubStack(file);
    if (hubStack && name) world.stackOutputs = { [hubStack]: { spokeReadEndpoints: { [name]: PLACEHOLDER_READ_ENDPOINT } } };
    return world;
}

/** The stack's own keys (without the project's prefix), each value parsed the way the program parses it. */
function rawConfig(file: StackFile): Plain {
    const prefix = `${PROJECT}:`;
    return Object.fromEntries(
        Object.entries(file.config).flatMap(([k, text]) => (k.startsWith(prefix) ? [[k.slice(prefix.length), parseConfigText(text)]] : [])),
    );
}

/** The stack's configuration from its file, validated exactly as the program validates it. */
export function configFromStackFile(file: StackFile): AddonConfig {
    const prefix = `${PROJECT}:`;
    const secretKeys = file.secretKeys.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
    return parseAddonConfig(file.stack, rawConfig(file), {
        awsRegion: file.config["aws:region"],
        secretKeys,
        otherKeys: Object.keys(file.config).filter((k) => !k.startsWith(prefix)),
        ...(file.projectStacks ? { projectStacks: file.projectStacks } : {}),
    });
}
