import * as pulumi from "@pulumi/pulumi";
import { ownsWholeObject } from "./adoption";
import { LiveObject, LiveReader, apiPath, objectName } from "./live";

/**
 * The preview refuses what `up` would break (ADR-056 as-built, platform introduction). A stack
 * without `cluster.adoptExisting` that meets an object another tool made fails in the middle of
 * `up` on kubernetes provider 4.29 and later (AlreadyExists, after earlier objects were applied),
 * and silently takes it over before 4.29 (a create under server-side apply is an apply PATCH,
 * pulumi/pulumi-kubernetes #4278), while the preview before it is green either way. So before a
 * single object is registered, the program reads each whole object the stack will create (GET
 * only, through the stack's connection) and stops with the adoption guidance when one exists that
 * no Pulumi stack manages: the preview fails where `up` would, on every provider version.
 *
 * Which objects the stack creates is what it declares, not a list kept beside it: a stack
 * transformation (run synchronously in every resource's constructor, @pulumi/pulumi resource.ts)
 * records every whole object and holds its registration back on a gate, so nothing reaches the
 * engine until the check has passed. The chart's objects and the CRDs are registered by the
 * provider, not by this process; their names come from chartObjects.ts and crds.ts.
 */

/** One whole object the stack will create. */
export interface DeclaredRef {
    apiVersion: string;
    kind: string;
    namespace?: string;
    name: string;
    /** Who declares it: the program itself, the controller chart, or the CRD group. */
    declaredBy: "stack" | "chart" | "crds";
}

/** An object the stack would create that exists and no Pulumi stack manages. */
export interface ExistingObject {
    ref: DeclaredRef;
    /** Its field managers, `manager (operation)`. */
    managers: string[];
}

/**
 * Whether a live object is already a Pulumi stack's: the kubernetes provider applies under field
 * managers named `pulumi-kubernetes-<suffix>` with server-side apply, `pulumi-kubernetes` without
 * (pulumi-kubernetes v4.25.0 provider/pkg/provider/provider.go, fieldManagerName). An object this
 * stack created in an earlier run, or adopted, carries one; an old install's objects do not.
 */
export function managedByPulumi(live: LiveObject): boolean {
    return (live.metadata?.managedFields ?? []).some((m) => /^pulumi-kubernetes/.test(m.manager ?? ""));
}

export function fieldManagersOf(live: LiveObject): string[] {
    return [...new Set((live.metadata?.managedFields ?? []).map((e) => `${e.manager ?? "?"} (${e.operation ?? "?"})`))];
}

/** Reads every declared object, a few at a time; each GET is bounded (live.ts). */
export async function findExisting(refs: readonly DeclaredRef[], reader: Pick<LiveReader, "get">, concurrency = 8): Promise<ExistingObject[]> {
    const found: (ExistingObject | undefined)[] = new Array(refs.length);
    let next = 0;
    const worker = async () => {
        while (next < refs.length) {
            const i = next++;
            const ref = refs[i];
            const live = await reader.get(apiPath(ref.apiVersion, ref.kind, ref.namespace, ref.name));
            found[i] = live && !managedByPulumi(live) ? { ref, managers: fieldManagersOf(live) } : undefined;
        }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, refs.length) }, worker));
    return found.filter((f): f is ExistingObject => f !== undefined);
}

/** Why a run without adoption must stop, naming every object another tool made; undefined when none. */
export function existingObjectsRefusal(stack: string, found: readonly ExistingObject[]): string | undefined {
    if (found.length === 0) {
        return undefined;
    }
    const lines = found.map(
        (f) => `  ${objectName(f.ref.kind, f.ref.namespace, f.ref.name)} [${f.ref.declaredBy}], managers: ${f.managers.join(", ") || "none"}`,
    );
    return (
        `stack "${stack}": ${found.length} object(s) this stack creates already exist, made by another tool, and argo-rollouts-addon:cluster.adoptExisting is false:\n` +
        `${lines.join("\n")}\n` +
        `pulumi up would stop on them half-way (AlreadyExists, kubernetes provider 4.29 and later) or take them over unasked (earlier providers). ` +
        `This cluster runs an install of its own: follow the adoption runbook (docs/operations/adopt.md): npm run adopt-check -- --stack ${stack}, ` +
        `then cluster.adoptExisting: true for one run. Never delete the old CRDs to make room: deleting the Rollout CRD deletes every Rollout.`
    );
}

/**
 * Records the whole objects the program declares and holds every Kubernetes registration back
 * until `open()`. A refused run never opens it: the program stops with the refusal, and the held
 * registrations never reach the engine (failing them instead would report the refusal once per
 * object, each wrapped in "error serializing property"). Reads (`id` set) pass: a GET changes
 * nothing. The provider resource is not Kubernetes-typed and passes too: it is Pulumi's state, not
 * an object of the cluster. So do references to objects a component's provider registered.
 */
export class DeclarationGate {
    readonly declared: DeclaredRef[] = [];
    private resolve!: () => void;
    private readonly gate: pulumi.Output<boolean>;

    constructor() {
        this.gate = pulumi.output(
            new Promise<boolean>((resolve) => {
                this.resolve = () => resolve(true);
            }),
        );
    }

    open(): void {
        this.resolve();
    }

    readonly transformation: pulumi.ResourceTransformation = (args) => {
        // A read (`id`) changes nothing; a reference (`urn`) is an object a component's provider
        // registered, rebuilt here from its outputs (a ConfigGroup's CRDs: @pulumi/pulumi
        // runtime/rpc.ts deserializeProperty), never a registration of this process.
        if (!args.type.startsWith("kubernetes:") || args.opts.id !== undefined || args.opts.urn !== undefined) {
            return undefined;
        }
        // A transformation runs in the base constructor, before CustomResource marks the object
        // (@pulumi/pulumi resource.ts), so isInstance would say no; the prototype is already there.
        const custom = args.resource instanceof pulumi.CustomResource;
        const props = args.props as Record<string, unknown>;
        if (ownsWholeObject(args.type, props.kind, custom)) {
            const metadata = props.metadata as { name?: unknown; namespace?: unknown } | undefined;
            if (typeof props.apiVersion !== "string" || typeof props.kind !== "string" || typeof metadata?.name !== "string") {
                // Every whole object the program declares names itself in plain values; one that
                // does not could not be checked, so it is refused here rather than passed unread.
                throw new Error(`${args.type} ${args.name}: the preflight needs its apiVersion, kind and metadata.name as plain values`);
            }
            this.declared.push({
                apiVersion: props.apiVersion,
                kind: props.kind,
                ...(typeof metadata.namespace === "string" ? { namespace: metadata.namespace } : {}),
                name: metadata.name,
                declaredBy: "stack",
            });
        }
        // One input held is enough: a registration is sent once every input has resolved.
        const key = ["metadata", "name", "files"].find((k) => props[k] !== undefined);
        if (key === undefined) {
            return undefined;
        }
        const value = props[key];
        return { props: { ...props, [key]: this.gate.apply(() => value) }, opts: args.opts };
    };
}
