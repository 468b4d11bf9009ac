/**
 * How the program shares objects it does not own (design.md §2, Pulumi: since
 * @pulumi/kubernetes 4.29 creating an existing object fails with AlreadyExists, so fields of
 * objects others manage are set with `*Patch` resources, i.e. server-side apply).
 */

/**
 * Server-side apply treats every list of a custom resource without `x-kubernetes-list-type` as
 * atomic (Kubernetes docs, "Custom resources and Server-Side Apply"); the AppProject and
 * ApplicationSet CRDs declare none. A list there cannot be merged with another manager's entries:
 * the program owns the whole list from config and takes it over, forcing conflicts (a Patch
 * resource fails on a conflict unless this annotation is set; pulumi-kubernetes Patch docs).
 */
export const TAKE_OVER_LISTS: Readonly<Record<string, string>> = { "pulumi.com/patchForce": "true" };
