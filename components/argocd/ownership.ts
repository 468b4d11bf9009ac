/**
 * How the program shares objects it does not own: since @pulumi/kubernetes 4.29 creating an
 * existing object fails with AlreadyExists (pulumi/pulumi-kubernetes #4278), so fields of objects
 * others manage are set with `*Patch` resources, i.e. server-side apply.
 */

/**
 * Who keeps an AppProject or a tenant ApplicationSet. `addon`: this stack, which patches the
 * fields ADR-056 needs (and owns the atomic lists they live in). `external`: another owner, usually
 * the platform's GitOps (a self-healing parent Application would revert a patch, and taking a list
 * over drops the owner's other entries): the stack reads the object and the preview fails naming
 * what it misses (verify.ts). External is the default: reading takes nothing from anyone.
 */
export type ArgoObjectOwner = "addon" | "external";
export const ARGO_OBJECT_OWNERS: readonly ArgoObjectOwner[] = ["addon", "external"];

/**
 * Server-side apply treats every list of a custom resource without `x-kubernetes-list-type` as
 * atomic (Kubernetes docs, "Custom resources and Server-Side Apply"); the AppProject and
 * ApplicationSet CRDs declare none. A list there cannot be merged with another manager's entries:
 * the program owns the whole list from config and takes it over, forcing conflicts (a Patch
 * resource fails on a conflict unless this annotation is set; pulumi-kubernetes Patch docs).
 */
export const TAKE_OVER_LISTS: Readonly<Record<string, string>> = { "pulumi.com/patchForce": "true" };
