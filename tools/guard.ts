/** The offline side of the guardrails: the plan's resources, as the policy pack would see them. */
import { GuardedResource, Violation, runGuardrails } from "../components/guardrails";
import { OfflineRun, PlannedResource } from "./offline";
import { CRD_TYPE, ROLLOUTS_CRDS } from "../components/argoRollouts";

/** The CRD group's children with the options its transforms give them: no option reaches them from the group (pulumi-kubernetes #3065). */
async function renderedCrds(r: PlannedResource): Promise<GuardedResource[]> {
    const files = Array.isArray(r.inputs.files) ? (r.inputs.files as string[]) : [];
    const out: GuardedResource[] = [];
    for (const crd of ROLLOUTS_CRDS.filter((c) => files.some((f) => f.endsWith(`/${c.file}`)))) {
        let opts: { protect?: boolean; retainOnDelete?: boolean } = { protect: false, retainOnDelete: false };
        for (const t of r.transforms) {
            const result = await t({ custom: true, type: CRD_TYPE, name: `${r.name}:${crd.name}`, props: { metadata: { name: crd.name } }, opts });
            opts = result?.opts ?? opts;
        }
        out.push({
            urn: `${r.urn}$${CRD_TYPE}::${crd.name}`,
            type: CRD_TYPE,
            name: crd.name,
            props: { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: crd.name } },
            protect: opts.protect === true,
            retainOnDelete: opts.retainOnDelete === true,
            parent: r.urn,
            dependencies: [],
            component: false,
        });
    }
    return out;
}

export async function guardedResources(run: OfflineRun): Promise<GuardedResource[]> {
    const out: GuardedResource[] = [];
    for (const r of run.resources) {
        out.push({
            urn: r.urn,
            type: r.type,
            name: r.name,
            props: r.inputs,
            protect: r.protect,
            retainOnDelete: r.retainOnDelete,
            ...(r.parent ? { parent: r.parent } : {}),
            dependencies: r.dependsOn,
            // Provider-rendered components stand for what they render here.
            component: !r.custom && !r.remote,
        });
        if (r.type === "kubernetes:yaml/v2:ConfigGroup") out.push(...(await renderedCrds(r)));
    }
    return out;
}

export async function checkPlan(run: OfflineRun): Promise<Violation[]> {
    return runGuardrails(await guardedResources(run));
}
