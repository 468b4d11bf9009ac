/**
 * The program under Pulumi's mock runtime, every registration recorded (the plan and the tests share it). Mocks hand `newResource`
 * no options and refuse `transforms` (pulumi/pulumi sdk/nodejs/runtime/mocks.ts, v3.248.0): both are read off the SDK's requests.
 */
import * as pulumi from "@pulumi/pulumi";
import { OFFLINE_SECRET, PROJECT } from "../components/config/reader";
import { STAGE_TYPES, StageName } from "../components/stage";
import type { ReadResourceRequest, RegisterResourceRequest } from "@pulumi/pulumi/proto/resource_pb";

// Internal modules of @pulumi/pulumi: the request objects and the runtime store.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const callbackProto = require("@pulumi/pulumi/proto/callback_pb");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const runtimeState = require("@pulumi/pulumi/runtime/state");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const runtimeSettings = require("@pulumi/pulumi/runtime/settings");

/** One registered (or read) resource, as the offline plan reports it. */
export interface PlannedResource {
    urn: string;
    name: string;
    type: string;
    custom: boolean;
    /** A provider-implemented component such as a Helm chart. */
    remote: boolean;
    /** An existing object the program only reads (`.get`). */
    read: boolean;
    stage: StageName | null;
    parent: string | null;
    /** Explicit `dependsOn` and the URNs its inputs imply. */
    dependsOn: string[];
    protect: boolean;
    retainOnDelete: boolean;
    deletedWith: string | null;
    /** Null when the program sets none (the provider decides). */
    deleteBeforeReplace: boolean | null;
    importId: string | null;
    /** Explicit or inherited; a component's `providers` by package. */
    provider: string | null;
    providers: Record<string, string>;
    /** Inputs as sent, secrets as "[secret]"; for a read, the object the world answered with. */
    inputs: Record<string, unknown>;
    transforms: pulumi.ResourceTransform[];
}

export type OfflineRun = { stack: string; resources: PlannedResource[]; outputs: Record<string, unknown> };

/** What the cluster and the cloud hold: objects by `<apiVersion>/<kind>/<namespace>/<name>`, stack outputs by stack, provider functions by token. */
export interface OfflineWorld {
    objects?: Record<string, Record<string, unknown>>;
    stackOutputs?: Record<string, Record<string, unknown>>;
    calls?: Record<string, (inputs: Record<string, unknown>) => Record<string, unknown>>;
}

export interface OfflineOptions {
    stack: string;
    /** `project:key` to text, as Pulumi stores them. */
    config: Record<string, string>;
    secretKeys?: string[];
    world?: OfflineWorld;
    /** The project's root, where the program reads the stack files (none: it reads none). */
    rootDirectory?: string;
    /** A preview (the default) or an up. */
    dryRun?: boolean;
    program: () => Record<string, unknown> | Promise<Record<string, unknown>>;
}

export const SECRET = OFFLINE_SECRET;
export const UNKNOWN = "[unknown]";
const SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
const RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e";
const OUTPUT_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4";
const UNKNOWN_VALUE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** Placeholders for cloud look-ups: recognisably fake, never a real endpoint. */
export const PLACEHOLDER_CALLS: Record<string, (inputs: Record<string, unknown>) => Record<string, unknown>> = {
    "aws:eks/getCluster:getCluster": (inputs) => ({
        id: String(inputs.name),
        name: inputs.name,
        arn: `arn:aws:eks:offline-placeholder:000000000000:cluster/${String(inputs.name)}`,
        endpoint: "https://offline-placeholder.eks.invalid",
        certificateAuthorities: [{ data: Buffer.from("offline placeholder, not a certificate").toString("base64") }],
        region: inputs.region,
    }),
};

/** Renders wire values readably: secrets hidden, resource references as URNs, unknowns marked. */
export function renderWire(value: unknown): unknown {
    if (value === UNKNOWN_VALUE || Array.isArray(value) || value === null || typeof value !== "object") {
        return value === UNKNOWN_VALUE ? UNKNOWN : Array.isArray(value) ? value.map(renderWire) : value;
    }
    const obj = value as Record<string, unknown>;
    switch (obj[SIG_KEY]) {
        case SECRET_SIG:
            return SECRET;
        case RESOURCE_SIG:
            return obj.urn;
        case OUTPUT_SIG:
            return obj.secret ? SECRET : "value" in obj ? renderWire(obj.value) : UNKNOWN;
    }
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, renderWire(v)]));
}

/** Resolves every output in a value (deeply) to plain data; secrets render as "[secret]". */
async function resolveOutputs(value: unknown): Promise<unknown> {
    if (pulumi.Output.isInstance(value)) {
        const out = value as pulumi.Output<unknown>;
        // `promise(true)` resolves unknowns too (an apply callback would never run for them).
        const internal = out as unknown as { promise(withUnknowns: boolean): Promise<unknown>; isSecret: Promise<boolean>; isKnown: Promise<boolean> };
        const [inner, secret, known] = await Promise.all([internal.promise(true), internal.isSecret, internal.isKnown]);
        return secret ? SECRET : known ? resolveOutputs(inner) : UNKNOWN;
    }
    if (Array.isArray(value)) return Promise.all(value.map(resolveOutputs));
    if (value !== null && typeof value === "object" && !pulumi.Resource.isInstance(value)) {
        const entries = await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await resolveOutputs(v)] as const));
        return Object.fromEntries(entries);
    }
    return value;
}

/** `kubernetes:<group>/<version>:<Kind>` (core group: `core`) as apiVersion and kind. */
export function kubernetesGvk(type: string): { apiVersion: string; kind: string } | undefined {
    const m = /^kubernetes:([^:]+):([A-Za-z0-9]+)$/.exec(type);
    return m ? { apiVersion: m[1].replace(/^core\//, ""), kind: m[2] } : undefined;
}

/** Evaluates `program` for one stack under mocks; the runtime is process-global, so await one run before starting the next. */
export async function runOffline(opts: OfflineOptions): Promise<OfflineRun> {
    const world = opts.world ?? {};
    const calls = { ...PLACEHOLDER_CALLS, ...(world.calls ?? {}) };
    const records = new Map<string, PlannedResource>();
    const order: string[] = [];
    const transformsByToken = new Map<string, pulumi.ResourceTransform>();
    const failures: Error[] = [];
    const readAnswers = new Map<string, Record<string, unknown>>();

    await pulumi.runtime.setMocks(
        {
            newResource(args: pulumi.runtime.MockResourceArgs): { id: string; state: Record<string, unknown> } {
                if (args.type === "pulumi:pulumi:StackReference") {
                    const outputs = world.stackOutputs?.[args.inputs.name as string];
                    if (!outputs) throw new Error(`stack ${String(args.inputs.name)} was not found`);
                    return { id: String(args.inputs.name), state: { name: args.inputs.name, outputs, secretOutputNames: [] } };
                }
                if (args.id !== undefined && args.id !== "" && args.custom) {
                    // A read of an existing object (`Resource.get`): answer from the world.
                    const gvk = kubernetesGvk(args.type);
                    const live = gvk ? world.objects?.[`${gvk.apiVersion}/${gvk.kind}/${args.id}`] : undefined;
                    if (!live) throw new Error(`${args.type} ${args.id} does not exist in the cluster`);
                    readAnswers.set(`${args.type}::${args.name}`, live);
                    return { id: args.id, state: live };
                }
                return { id: args.custom ? `${args.name}-offline-id` : "", state: args.inputs };
            },
            call(args: pulumi.runtime.MockCallArgs): Record<string, unknown> {
                const answer = calls[args.token];
                if (!answer) throw new Error(`the offline plan has no placeholder for ${args.token}`);
                return answer(args.inputs);
            },
        },
        PROJECT,
        opts.stack,
        opts.dryRun ?? true,
    );
    pulumi.runtime.setAllConfig(opts.config, opts.secretKeys ?? []);
    runtimeState.getStore().settings.options.rootDirectory = opts.rootDirectory ?? "";

    // A stand-in for the engine's callback server, so `transforms` can be registered and recorded.
    const store = runtimeState.getStore();
    store.supportsTransforms = true;
    let nextToken = 0;
    store.callbacks = {
        awaitStackRegistrations: async () => undefined,
        registerTransform: async (transform: pulumi.ResourceTransform) => {
            const token = `offline-transform-${nextToken++}`;
            transformsByToken.set(token, transform);
            const cb = new callbackProto.Callback();
            cb.setTarget("offline");
            cb.setToken(token);
            return cb;
        },
    };

    const monitor = runtimeSettings.getMonitor();
    const record = (req: RegisterResourceRequest | ReadResourceRequest, urn: string, read: boolean) => {
        const reg = read ? undefined : (req as RegisterResourceRequest);
        const implied = [...(reg?.getPropertydependenciesMap().entries() ?? [])].flatMap(([, pd]) => pd.getUrnsList());
        const raw = reg
            ? reg.getObject()?.toJavaScript()
            : (readAnswers.get(`${req.getType()}::${req.getName()}`) ?? (req as ReadResourceRequest).getProperties()?.toJavaScript());
        const transform = (cb: { getToken(): string }) => {
            const t = transformsByToken.get(cb.getToken());
            if (!t) throw new Error(`unrecorded transform ${cb.getToken()}`);
            return t;
        };
        records.set(urn, {
            urn,
            name: req.getName(),
            type: req.getType(),
            custom: reg?.getCustom() ?? true,
            remote: reg?.getRemote() ?? false,
            read,
            stage: null,
            parent: req.getParent() || null,
            dependsOn: [...new Set([...req.getDependenciesList(), ...implied])].sort(),
            protect: Boolean(reg?.getProtect()),
            retainOnDelete: Boolean(reg?.getRetainondelete()),
            deletedWith: reg?.getDeletedwith() || null,
            deleteBeforeReplace: reg?.getDeletebeforereplacedefined() ? reg.getDeletebeforereplace() : null,
            importId: reg?.getImportid() || null,
            provider: providerUrn(req.getProvider()),
            providers: Object.fromEntries([...(reg?.getProvidersMap().entries() ?? [])].map(([pkg, ref]) => [pkg, providerUrn(ref) ?? ref])),
            inputs: renderWire(raw ?? {}) as Record<string, unknown>,
            transforms: (reg?.getTransformsList() ?? []).map(transform),
        });
        order.push(urn);
    };
    const wrap = (method: "registerResource" | "readResource", read: boolean) => {
        const original = monitor[method].bind(monitor);
        monitor[method] = (req: RegisterResourceRequest | ReadResourceRequest, callback: (err: Error | null, resp?: { getUrn(): string }) => void) =>
            original(req, (err: Error | null, resp?: { getUrn(): string }) => {
                if (err) {
                    failures.push(err);
                    fail(err);
                } else if (resp) {
                    record(req, resp.getUrn(), read);
                }
                callback(err, resp);
            });
    };
    wrap("registerResource", false);
    wrap("readResource", true);

    // An error in an apply surfaces as an unhandled rejection and leaves its dependents pending forever: it fails the run.
    let fail: (err: Error) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => {
        fail = reject;
    });
    const onRejection = (reason: unknown) => fail(reason instanceof Error ? reason : new Error(String(reason)));
    process.on("unhandledRejection", onRejection);
    const work = async () => {
        const exported = await opts.program();
        const resolved = (await resolveOutputs(exported)) as Record<string, unknown>;
        await runtimeSettings.waitForRPCs();
        // Let rejections raised in the last turn of the event loop arrive.
        await new Promise((resolve) => setImmediate(resolve));
        if (failures.length > 0) throw failures[0];
        return resolved;
    };
    let outputs: Record<string, unknown>;
    try {
        outputs = await Promise.race([work(), failed]);
    } catch (e) {
        // What reached the engine before the failure: a refusal before any declaration has none.
        if (e instanceof Error) {
            Object.defineProperty(e, "registered", { value: order.map((urn) => records.get(urn)!), enumerable: false, configurable: true });
        }
        throw e;
    } finally {
        process.off("unhandledRejection", onRejection);
    }

    // A parent registers before its children: each resource's stage is its own type's or its parent's.
    const resources = order.map((urn) => records.get(urn)!);
    const stageByType = new Map<string, StageName>(Object.entries(STAGE_TYPES).map(([s, t]) => [t, s as StageName]));
    for (const r of resources) {
        r.stage = stageByType.get(r.type) ?? (r.parent ? records.get(r.parent)?.stage : null) ?? null;
    }
    return { stack: opts.stack, resources, outputs };
}

/** The URN of a provider reference (`<urn>::<id>`), or null for none. */
function providerUrn(ref: string): string | null {
    const at = ref.lastIndexOf("::");
    return ref === "" ? null : at > 0 ? ref.slice(0, at) : ref;
}
