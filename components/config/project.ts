/**
 * The rules between the stack files of one project, checked from each stack's own run: Pulumi reads
 * each file alone, so nothing else would notice two files that contradict each other. Each problem
 * names this stack's key and the other file's, and a rule between a hub and a spoke is checked from
 * both runs.
 */
import type { ProjectStack } from "./load";
import { ConfigReader, PROJECT, show } from "./reader";

/**
 * The regulated groups of `spoke` that the ArgoCD of `hub`, which syncs it (`argocd.runsOn`, ADR-056
 * D3), does not list in its RBAC (argocd.rbac, default policy.regulated's): an approver it lacks
 * cannot approve through ArgoCD, a deployer it lacks is not denied the approval actions.
 */
export function argoGroupsMissing(spoke: ProjectStack, hub: ProjectStack): { key: "approverGroups" | "deployerGroups"; groups: string[] }[] {
    return (["approverGroups", "deployerGroups"] as const).flatMap((key) => {
        const listed = hub.groups?.rbac?.[key] ?? hub.groups?.regulated?.[key] ?? [];
        const groups = (spoke.groups?.regulated?.[key] ?? []).filter((g) => !listed.includes(g));
        return groups.length > 0 ? [{ key, groups }] : [];
    });
}

/** `own`: this stack's configuration (load.ts projectStack of its keys); `project`: every stack file of the project. */
export function checkAcrossProject(r: ConfigReader, own: ProjectStack, project: readonly ProjectStack[]): void {
    const others = project.filter((s) => s.stack !== own.stack);
    /** A problem of this stack's `key` that contradicts `otherKey` of `other`'s file. */
    const clash = (key: string, value: unknown, other: ProjectStack, otherKey: string, otherValue: unknown, why: string) =>
        r.problem(key, value, `contradicts Pulumi.${other.stack}.yaml ${otherKey} = ${show(otherValue)}: ${why}`);
    // One cluster, two stacks: each `pulumi up` would take the other's objects over, and a destroy
    // of either would delete what the other still runs. One tenant, two clusters: their series mix.
    for (const s of others.filter((s) => own.cluster !== undefined && s.cluster === own.cluster))
        clash("cluster.name", own.cluster, s, "cluster.name", s.cluster, "one stack file per cluster, or two stacks manage (and destroy) each other's objects");
    for (const s of others.filter((s) => own.mimirTenant !== undefined && s.mimirTenant === own.mimirTenant && s.cluster !== own.cluster))
        clash("cluster.mimirTenant", own.mimirTenant, s, "cluster.mimirTenant", s.mimirTenant, "one tenant per cluster, or their metrics mix");
    // A spoke's hubStack that names a stack file of this project: that hub must route this spoke,
    // or the run fails later on the hub's output (cluster/hubEndpoint.ts, pickSpokeEndpoint).
    const [, hubProject, hubName] = own.hubStack?.split("/") ?? [];
    const named = hubProject === PROJECT ? others.find((s) => s.stack === hubName) : undefined;
    if (named && own.cluster !== undefined && !named.spokes.some((s) => s.name === own.cluster)) {
        const routing = others.filter((s) => s.spokes.some((e) => e.name === own.cluster)).map((s) => `Pulumi.${s.stack}.yaml`);
        const fix = routing.length > 0 ? `${routing.join(", ")} does: name that hub's stack` : `add ${own.cluster} to that hub's spokes`;
        const why = `that hub routes no read endpoint for ${own.cluster}; ${fix}`;
        clash(
            "mimir.hubStack",
            own.hubStack,
            named,
            "spokes[].name",
            named.spokes.map((s) => s.name),
            why,
        );
    }
    // A hub's spoke entry and the spoke's own file (a spoke that names its hub against that hub
    // alone): a spoke, writing the tenant the hub routes and reads, reading from the host it routes.
    const pairs = [
        ...own.spokes.flatMap((entry, i) => others.filter((s) => s.cluster === entry.name).map((spoke) => ({ hub: own, entry, i, spoke }))),
        ...(named ? [named] : others).flatMap((hub) => hub.spokes.flatMap((entry, i) => (entry.name === own.cluster ? [{ hub, entry, i, spoke: own }] : []))),
    ];
    const differ = (a?: string, b?: string) => a !== undefined && b !== undefined && a !== b;
    for (const { hub, entry, i, spoke } of pairs) {
        // From the hub's run its entry's key is refused, from the spoke's its own key.
        const refuse = (f: "name" | "tenant" | "hostname", key: string, value: unknown, why: string) =>
            hub === own ? clash(`spokes[${i}].${f}`, entry[f], spoke, key, value, why) : clash(key, value, hub, `spokes[${i}].${f}`, entry[f], why);
        const host = /^https?:\/\/([^/?#:@]+)/.exec(spoke.readEndpoint ?? "")?.[1];
        if (spoke.role === "hub") refuse("name", "cluster.role", spoke.role, "a spoke's file says role: spoke (a hub reads its own Mimir)");
        if (differ(entry.tenant, spoke.mimirTenant))
            refuse("tenant", "cluster.mimirTenant", spoke.mimirTenant, "one tenant, or the hub reads one nobody writes");
        if (differ(entry.hostname, host)) refuse("hostname", "mimir.readEndpoint", spoke.readEndpoint, "the host the hub routes, or the spoke reads nothing");
    }
    // ArgoCD syncs a cluster from the cluster runsOn names: one of the project, whose own ArgoCD runs
    // there (never one whose ArgoCD runs elsewhere again: a chain or a circle).
    const argo = own.runsOn === undefined ? undefined : others.find((s) => s.cluster === own.runsOn);
    const unmanaged = `must name a cluster of the project's stack files (${[...new Set(project.flatMap((s) => s.cluster ?? []))].sort().join(", ")}): no stack would check the ArgoCD that syncs this cluster`;
    if (own.runsOn !== undefined && !argo) r.problem("argocd.runsOn", own.runsOn, unmanaged);
    else if (argo?.runsOn !== undefined) clash("argocd.runsOn", own.runsOn, argo, "argocd.runsOn", argo.runsOn, "a cluster whose own ArgoCD runs there");
    // A cluster whose ArgoCD syncs another: its RBAC is the approval gate for both (ADR-056 D3,
    // ADR-049), each group compared as ArgoCD sees it (load.ts projectStack).
    const syncs = [...(argo ? [{ spoke: own, hub: argo }] : []), ...others.filter((s) => s.runsOn === own.cluster).map((spoke) => ({ spoke, hub: own }))];
    for (const { spoke, hub } of syncs) {
        for (const { key, groups } of argoGroupsMissing(spoke, hub)) {
            const why = `cluster ${hub.cluster}'s ArgoCD syncs cluster ${spoke.cluster}, and its RBAC does not list ${groups.join(", ")} (without cluster.oidcGroupsPrefix): list them in Pulumi.${hub.stack}.yaml argocd.rbac.${key}`;
            const [regulated, rbac, listed] = [`policy.regulated.${key}`, `argocd.rbac.${key}`, hub.groups?.rbac?.[key] ?? hub.groups?.regulated?.[key]];
            if (spoke === own) clash(regulated, spoke.groups?.regulated?.[key], hub, rbac, listed, why);
            else clash(rbac, listed, spoke, regulated, spoke.groups?.regulated?.[key], why);
        }
    }
}
