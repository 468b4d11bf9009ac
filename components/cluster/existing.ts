import * as pulumi from "@pulumi/pulumi";
import { STACK_ANNOTATION, ownsWholeObject } from "./adoption";
import { LiveObject, LiveReader, apiPath, objectName } from "./live";

/**
 * The preview refuses what `up` would break (ADR-056 as-built, platform introduction): an object
 * another tool made fails `up` half-way on kubernetes provider 4.29 and later (AlreadyExists) and is
 * silently taken over before 4.29 (pulumi/pulumi-kubernetes #4278), while the preview is green. So
 * every whole object the stack declares is recorded by a stack transformation and held back until
 * each has been read; the chart's objects and the CRDs come from chartObjects.ts and crds.ts.
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

/** An object the stack would create that exists and is not this stack's: its field managers, and the stack its mark names, if any. */
export interface ExistingObject {
    ref: DeclaredRef;
    managers: string[];
    stack?: string;
}

/** Whether a Pulumi stack manages a live object (its field manager: pulumi-kubernetes v4.32.0 provider/pkg/provider/provider.go, fieldManagerName). */
export function managedByPulumi(live: LiveObject): boolean {
    return (live.metadata?.managedFields ?? []).some((m) => /^pulumi-kubernetes/.test(m.manager ?? ""));
}

/**
 * Whether a live object is this stack's: it carries this stack's mark (adoption.ts), or no mark and
 * a Pulumi field manager. The provider names every stack's manager alike, so the mark decides; an
 * unmarked Pulumi object is taken for this stack's own from a run before the mark existed (its next
 * `up` marks it), since the program cannot read the stack's state. Another stack's mark is refused.
 */
export function belongsToStack(live: LiveObject, mark: string): boolean {
    const theirs = live.metadata?.annotations?.[STACK_ANNOTATION];
    return theirs === undefined ? managedByPulumi(live) : theirs === mark;
}

/** Reads every declared object, a few at a time; each GET is bounded (live.ts). */
export async function findExisting(refs: readonly DeclaredRef[], reader: Pick<LiveReader, "get">, mark: string, concurrency = 8): Promise<ExistingObject[]> {
    const found: ExistingObject[] = [];
    for (let i = 0; i < refs.length; i += concurrency) {
        const batch = refs.slice(i, i + concurrency);
        const lives = await Promise.all(batch.map((ref) => reader.get(apiPath(ref.apiVersion, ref.kind, ref.namespace, ref.name))));
        lives.forEach((live, j) => {
            if (!live || belongsToStack(live, mark)) return;
            const managers = (live.metadata?.managedFields ?? []).map((e) => `${e.manager ?? "?"} (${e.operation ?? "?"})`);
            const stack = live.metadata?.annotations?.[STACK_ANNOTATION];
            found.push({ ref: batch[j], managers: [...new Set(managers)], ...(stack ? { stack } : {}) });
        });
    }
    return found;
}

/** Why a run without adoption must stop, naming every object another tool or another stack made; undefined when none. */
export function existingObjectsRefusal(stack: string, found: readonly ExistingObject[]): string | undefined {
    if (found.length === 0) return undefined;
    const lines = found.map(
        (f) =>
            `  ${objectName(f.ref.kind, f.ref.namespace, f.ref.name)} [${f.ref.declaredBy}], ${f.stack ? `Pulumi stack ${f.stack}, ` : ""}managers: ${f.managers.join(", ") || "none"}`,
    );
    const stacks = [...new Set(found.flatMap((f) => f.stack ?? []))];
    const tools = found.some((f) => !f.stack);
    const by = [...(tools ? ["another tool"] : []), ...(stacks.length ? [`another Pulumi stack (${stacks.join(", ")})`] : [])].join(" or ");
    return (
        `stack "${stack}": ${found.length} object(s) this stack creates already exist, made by ${by}, and argo-rollouts-addon:cluster.adoptExisting is false:\n` +
        `${lines.join("\n")}\n` +
        `pulumi up would stop on them half-way (AlreadyExists, kubernetes provider 4.29 and later) or take them over unasked (earlier providers). ` +
        (stacks.length
            ? `A cluster is one stack's: run that stack, or hand its objects over (docs/operations/adopt.md#objects-of-another-pulumi-stack): pulumi state delete them from it, never pulumi destroy, then adopt them here (one adopting run also re-marks a stack renamed by pulumi stack rename). `
            : "") +
        (tools
            ? `This cluster runs an install of its own: follow the adoption runbook (docs/operations/adopt.md): npm run adopt-check -- --stack ${stack}, ` +
              `then cluster.adoptExisting: true for one run. `
            : "") +
        `Never delete the old CRDs to make room: deleting the Rollout CRD deletes every Rollout.`
    );
}

/**
 * Records the whole objects the program declares and holds every Kubernetes registration back until
 * `open()`; a refused run never opens it, so nothing reaches the engine and the refusal is said once.
 */
export class DeclarationGate {
    readonly declared: DeclaredRef[] = [];
    private resolve!: () => void;
    private readonly gate = pulumi.output(new Promise<boolean>((resolve) => (this.resolve = () => resolve(true))));

    open(): void {
        this.resolve();
    }

    readonly transformation: pulumi.ResourceTransformation = (args) => {
        // A read (`id`) changes nothing; a reference (`urn`) is an object a component's provider
        // registered, rebuilt here from its outputs (a ConfigGroup's CRDs: @pulumi/pulumi
        // runtime/rpc.ts deserializeProperty), never a registration of this process.
        if (!args.type.startsWith("kubernetes:") || args.opts.id !== undefined || args.opts.urn !== undefined) return undefined;
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
        if (key === undefined) return undefined;
        const value = props[key];
        return { props: { ...props, [key]: this.gate.apply(() => value) }, opts: args.opts };
    };
}
