/**
 * Who keeps an AppProject or a tenant ApplicationSet. `addon`: this stack, which patches the fields
 * ADR-056 needs with a `*Patch` resource (server-side apply: creating an existing object fails with
 * AlreadyExists since @pulumi/kubernetes 4.29, pulumi/pulumi-kubernetes #4278). `external`, the
 * default: another owner, usually the platform's GitOps, whose self-healing parent would revert a
 * patch; the stack reads the object and the preview fails naming what it misses (keptObjects.ts).
 */
export type ArgoObjectOwner = "addon" | "external";
export const ARGO_OBJECT_OWNERS: readonly ArgoObjectOwner[] = ["addon", "external"];

/**
 * Server-side apply treats every list of a custom resource without `x-kubernetes-list-type` as
 * atomic, and the AppProject and ApplicationSet CRDs declare none: the program owns such a list
 * whole from config and takes it over, forcing conflicts (pulumi-kubernetes Patch docs).
 */
export const TAKE_OVER_LISTS: Readonly<Record<string, string>> = { "pulumi.com/patchForce": "true" };
