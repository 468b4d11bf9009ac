/**
 * The rules between the stack files of one project, checked from each stack's own run: Pulumi reads
 * each file alone, so nothing else would notice two files that contradict each other.
 */
import type { ProjectStack } from "./load";
import { ConfigReader, PROJECT } from "./reader";

/** This stack's side of the comparison: a hub's spokes in the order of its list, a spoke's `mimir.hubStack` (`<org>/<project>/<stack>`). */
export type OwnStack = Omit<ProjectStack, "spokes"> & { spokes: readonly { name: string; tenant: string }[]; hubStack?: string };

export function checkAcrossProject(r: ConfigReader, own: OwnStack, project: readonly ProjectStack[]): void {
    const others = project.filter((s) => s.stack !== own.stack);
    // One cluster, two stacks: each `pulumi up` would take the other's objects over, and a destroy
    // of either would delete what the other still runs.
    const sameCluster = others.find((s) => own.cluster !== undefined && s.cluster === own.cluster);
    if (sameCluster) {
        r.problem(
            "cluster.name",
            own.cluster,
            `must be unique among the project's stack files: Pulumi.${sameCluster.stack}.yaml names the same cluster, and two stacks would each manage (and on destroy delete) the other's objects`,
        );
    }
    // One tenant, two clusters: their series mix, and each cluster's gates read the other's traffic.
    const sameTenant = others.find((s) => own.mimirTenant !== undefined && s.mimirTenant === own.mimirTenant && s.cluster !== own.cluster);
    if (sameTenant) {
        r.problem(
            "cluster.mimirTenant",
            own.mimirTenant,
            `must be unique among the project's clusters: Pulumi.${sameTenant.stack}.yaml gives cluster ${sameTenant.cluster ?? "(unnamed)"} the same tenant, and their metrics would mix (one tenant per cluster keeps tenants isolated)`,
        );
    }
    // A hub's spoke entry says which tenant the hub routes and reads for the spoke; the spoke's own
    // file says which tenant it writes. Two answers: the gates read a tenant nobody writes.
    own.spokes.forEach((spoke, i) => {
        const file = others.find((s) => s.cluster === spoke.name);
        if (file?.mimirTenant !== undefined && file.mimirTenant !== spoke.tenant) {
            r.problem(
                `spokes[${i}].tenant`,
                spoke.tenant,
                `must be the spoke's own cluster.mimirTenant, ${file.mimirTenant} (Pulumi.${file.stack}.yaml): the hub would route and read a tenant the spoke never writes, and its gates would see no data`,
            );
        }
    });
    // A spoke's hubStack that names a stack file of this project: that hub must route this spoke,
    // or the run fails later on the hub's output (cluster/hubEndpoint.ts, pickSpokeEndpoint).
    const [, hubProject, hubName] = own.hubStack?.split("/") ?? [];
    const named = hubProject === PROJECT ? others.find((s) => s.stack === hubName) : undefined;
    if (named && own.cluster !== undefined && !named.spokes.some((s) => s.name === own.cluster)) {
        const routing = others.filter((s) => s.spokes.some((e) => e.name === own.cluster)).map((s) => s.stack);
        r.problem(
            "mimir.hubStack",
            own.hubStack,
            `must name the hub that routes this spoke: Pulumi.${named.stack}.yaml has no spokes entry for ${own.cluster}, so that hub routes no read endpoint for it` +
                (routing.length > 0
                    ? `; ${routing.map((h) => `Pulumi.${h}.yaml`).join(", ")} does: name that hub's stack`
                    : `; add ${own.cluster} to that hub's spokes`),
        );
    }
    // The reverse, from the spoke's run: a hub that lists this cluster under another tenant (only the
    // hub this spoke reads from decides, when it names one).
    for (const hub of named ? [named] : others) {
        const entry = hub.spokes.find((s) => s.name === own.cluster);
        if (entry?.tenant !== undefined && own.mimirTenant !== undefined && entry.tenant !== own.mimirTenant) {
            r.problem(
                "cluster.mimirTenant",
                own.mimirTenant,
                `must be the tenant the hub gives this spoke: Pulumi.${hub.stack}.yaml lists ${own.cluster} under tenant ${entry.tenant}, so the hub would read a tenant this cluster never writes`,
            );
        }
    }
}
