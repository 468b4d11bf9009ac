import * as pulumi from "@pulumi/pulumi";
import { RELEASE_NAME } from "../argoRollouts";

/**
 * Adoption of an install another tool made (ADR-056 as-built; the runbook is docs/operations/adopt.md).
 * `upsertExistingObjects` turns a create into a server-side apply for every object of the stack, the
 * Chart's and ConfigGroup's children included (pulumi-kubernetes provider/pkg/await/await.go, Creation);
 * `enablePatchForce` stays false because it would also force the ArgoCD patches, where a conflict must
 * stop the run. Both are always set: unset, the SDK reads PULUMI_K8S_UPSERT_EXISTING_OBJECTS and
 * PULUMI_K8S_ENABLE_PATCH_FORCE from the shell (@pulumi/kubernetes provider.js).
 */
export function providerAdoptionOptions(adoptExisting: boolean): { upsertExistingObjects: boolean; enablePatchForce: false } {
    return { upsertExistingObjects: adoptExisting, enablePatchForce: false };
}

/** Forces one object's server-side apply; the provider reads it before its own setting (pulumi-kubernetes v4.32.0 provider/pkg/await/await.go, patchForce). */
export const PATCH_FORCE_ANNOTATION = "pulumi.com/patchForce";

/**
 * Whether a registered resource is a whole object the stack owns, not a patch (its type is its kind
 * plus "Patch": pulumi-kubernetes v4.32.0 provider/pkg/kinds/util.go, IsPatchResource), a component or the provider.
 */
export function ownsWholeObject(type: string, kind: unknown, custom: boolean): boolean {
    return custom && type.startsWith("kubernetes:") && !(typeof kind === "string" && type.endsWith(`:${kind}Patch`));
}

/**
 * Names the stack that declares an object (`<project>/<stack>`): the existence preflight passes an
 * object only when it is this stack's (existing.ts), because the provider's field manager,
 * `pulumi-kubernetes-<random>`, is the same for every stack (pulumi-kubernetes v4.32.0
 * provider/pkg/provider/provider.go, fieldManagerName).
 */
export const STACK_ANNOTATION = "argo-rollouts-addon.platform/stack";

/** This run's mark, as the engine names the stack. */
export const stackMark = (): string => `${pulumi.getProject()}/${pulumi.getStack()}`;

/**
 * A transform that adds annotations to every whole object the stages declare (the chart's and the
 * CRDs included), or to those of one type, never a patch or a read.
 */
export function annotating(annotations: () => Record<string, string>, type?: string): pulumi.ResourceTransform {
    const add = (m: unknown) => {
        const metadata = (m ?? {}) as Record<string, unknown>;
        return { ...metadata, annotations: { ...(metadata.annotations as object), ...annotations() } };
    };
    return (args) => {
        if (!ownsWholeObject(args.type, args.props.kind, args.custom) || args.opts.id !== undefined || (type && args.type !== type)) return undefined;
        const metadata = args.props.metadata;
        return { props: { ...args.props, metadata: pulumi.Output.isInstance(metadata) ? metadata.apply(add) : add(metadata) }, opts: args.opts };
    };
}

/** Every run's transform: the stack's mark on each of its objects. */
export const markStackObjects = annotating(() => ({ [STACK_ANNOTATION]: stackMark() }));

/** The adopting run's transform: every whole object is forced. */
export const forceAdoptedObjects = annotating(() => ({ [PATCH_FORCE_ANNOTATION]: "true" }));

/** The transforms every stage carries: the stack's mark, and the force annotation for the adopting run. */
export function stackTransforms(adoptExisting: boolean): pulumi.ResourceTransform[] {
    return adoptExisting ? [markStackObjects, forceAdoptedObjects] : [markStackObjects];
}

/** The annotations by which Helm recognizes an object of its release (helm pkg/action/validate.go). */
export const HELM_OWNERSHIP_ANNOTATIONS = ["meta.helm.sh/release-name", "meta.helm.sh/release-namespace"] as const;

/** The chart's selector label on every object it renders (argo-helm charts/argo-rollouts/templates/_helpers.tpl). */
export const RELEASE_SELECTOR = `app.kubernetes.io/instance=${RELEASE_NAME}`;

/** `vX.Y.Z` (a leading v optional, a pre-release suffix ignored) as numbers; undefined when it is none. */
export function parseVersion(v: string): number[] | undefined {
    return /^v?(\d+)\.(\d+)\.(\d+)/.exec(v)?.slice(1).map(Number);
}

/** Whether moving from `running` to `configured` goes back; undefined when either is not a version. */
export function isDowngrade(running: string, configured: string): boolean | undefined {
    const [a, b] = [parseVersion(running), parseVersion(configured)];
    const i = a && b ? a.findIndex((n, j) => n !== b[j]) : undefined;
    return i === undefined ? undefined : i >= 0 && a![i] > b![i];
}

/** The tag of an image reference (`registry/repo:tag` or `repo:tag@sha256:…`); undefined without one. */
export function imageTag(image: string): string | undefined {
    return /:([^:/]*)$/.exec(image.split("@")[0])?.[1];
}

/** The container of the chart's controller Deployment that runs the controller. */
export const CONTROLLER_CONTAINER = "argo-rollouts";

/** Why the adopting run must stop, or undefined: every adopted object previews as a create, so a downgrade would not show. */
export function downgradeRefusal(stack: string, running: string | undefined, configured: string, allowDowngrade: boolean): string | undefined {
    if (!running || allowDowngrade || !isDowngrade(running, configured)) return undefined;
    return (
        `stack "${stack}": the cluster runs Argo Rollouts ${running} and argo-rollouts-addon:controller.appVersion = "${configured}": ` +
        `adopting would downgrade the controller and its CRDs. Set controller.chartVersion to a chart of ${running} or later, ` +
        `or set cluster.allowDowngrade: true for the adopting run after reading the release notes`
    );
}
