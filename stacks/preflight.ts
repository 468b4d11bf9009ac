import * as pulumi from "@pulumi/pulumi";
import { CONTROLLER_CONTAINER, downgradeRefusal, imageTag, stackMark } from "../components/cluster/adoption";
import { DeclarationGate, DeclaredRef, existingObjectsRefusal, findExisting } from "../components/cluster/existing";
import { LiveReader, apiPath, liveReader } from "../components/cluster/live";
import { CONTROLLER_SELECTOR, chartObjects, chartObjectApiVersion } from "../components/rollouts/chartObjects";
import { CONTROLLER_LEASES, oldInstallProblems } from "../components/cluster/oldInstall";
import { ControllerRelease, RolloutState, adoptedRelease, hashBoundaryDecision, noControllerRefusal } from "../components/rollouts/versions";
import type { AddonConfig } from "./config";
import { ROLLOUTS_CRDS, RELEASE_NAME } from "../components/argoRollouts";
import { POLICY_NAMES } from "../components/policy";
import { enforcementNotice, regulatedEnforced, regulatedProdQuery } from "../components/policy/enforcement";

/**
 * What the program checks on the live cluster before it declares anything (ADR-056 as-built;
 * docs/operations/adopt.md and upgrade.md), GETs only, through the stack's own connection: the
 * controller running now (the release a stack file that names none keeps, a downgrade, the old
 * install's shapes), a move across the pod-template-hash boundary, and, without adoption, every
 * whole object the stack creates. The offline plan has no cluster and runs none of this.
 */

/** The tag of the controller image running in the cluster (the whole reference when it has none), or undefined when none runs. */
export async function runningControllerVersion(config: AddonConfig, reader: Pick<LiveReader, "get">): Promise<string | undefined> {
    const deployment = await reader.get(apiPath("apps/v1", "Deployment", config.controller.namespace, RELEASE_NAME));
    const containers =
        (deployment?.spec as { template?: { spec?: { containers?: { name?: string; image?: string }[] } } } | undefined)?.template?.spec?.containers ?? [];
    const image = containers.find((c) => c.name === CONTROLLER_CONTAINER)?.image;
    // An image without a tag is still a controller running: its reference stands for a version no table knows.
    return image ? (imageTag(image) ?? image) : undefined;
}

/** Why a run that would keep the cluster's release stops: the configured digest is the image of another release. */
export function keptReleaseRefusal(config: AddonConfig, kept: ControllerRelease, running: string): string {
    const c = config.controller;
    return (
        `stack "${config.stack}": the cluster runs Argo Rollouts ${running} and the stack file names no release, so the run would keep chart ${kept.chartVersion} (${kept.appVersion}), ` +
        `but argo-rollouts-addon:controller.imageDigest = "${c.imageDigest}" pins the image of ${c.appVersion}: to keep the line set controller.chartVersion to ${kept.chartVersion} ` +
        `and controller.imageDigest to the digest (sha256:<64 hex>) of ${config.imageRegistry ?? "quay.io"}/argoproj/argo-rollouts:${kept.appVersion}, or set controller.chartVersion to ${c.chartVersion} to move (docs/operations/upgrade.md)`
    );
}

/** The objects the chart and the CRD group create, which the provider registers, not this process. */
export function providerDeclaredObjects(config: AddonConfig): DeclaredRef[] {
    const { namespace, serviceMonitor, dashboard } = config.controller;
    const crd = { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", declaredBy: "crds" } as const;
    return [
        ...chartObjects({ serviceMonitor, dashboard }).map((c): DeclaredRef => {
            return { apiVersion: chartObjectApiVersion(c.kind), kind: c.kind, ...(c.namespaced ? { namespace } : {}), name: c.name, declaredBy: "chart" };
        }),
        ...ROLLOUTS_CRDS.map((c): DeclaredRef => ({ ...crd, name: c.name })),
    ];
}

/** Reads the controller and decides the release and the hash boundary; returns the run's config. */
export async function controllerPreflight(
    config: AddonConfig,
    reader: Pick<LiveReader, "get" | "list">,
    warn: (m: string) => void = (m) => void pulumi.log.warn(m),
): Promise<AddonConfig> {
    const running = await runningControllerVersion(config, reader);
    if (!running && !config.controller.releaseFromStackFile) {
        // The API server selects: one ReplicaSet a Rollout made is enough.
        const made = await reader.list("/apis/apps/v1/replicasets?labelSelector=rollouts-pod-template-hash&limit=1");
        if ((made ?? []).length > 0) throw new pulumi.RunError(noControllerRefusal(config.stack, config.controller.appVersion));
    }
    // A stack file that names no release would keep the line the cluster runs, but controller.imageDigest pins
    // the image of the stack file's release, never the kept one's: such a run stops, naming both, so no run
    // moves a controller by itself, nor runs one by a mutable tag.
    const kept = adoptedRelease({ releaseFromStackFile: config.controller.releaseFromStackFile, configuredChart: config.controller.chartVersion, running });
    if (kept) throw new pulumi.RunError(keptReleaseRefusal(config, kept, running!));
    if (config.cluster.adoptExisting) {
        const refusal = downgradeRefusal(config.stack, running, config.controller.appVersion, config.cluster.allowDowngrade);
        if (refusal) throw new pulumi.RunError(refusal);
        // Shapes of the old install a green preview would not show: one LIST of the Deployments and of the controllers' Leases, one GET of the budget.
        const ns = config.controller.namespace;
        const problems = oldInstallProblems({
            namespace: ns,
            name: RELEASE_NAME,
            deployments: (await reader.list("/apis/apps/v1/deployments")) ?? [],
            leases: (await reader.list(CONTROLLER_LEASES)) ?? [],
            chartSelector: CONTROLLER_SELECTOR,
            pdb: await reader.get(apiPath("policy/v1", "PodDisruptionBudget", ns, RELEASE_NAME)),
        });
        if (problems.length > 0) {
            throw new pulumi.RunError(
                `stack "${config.stack}": argo-rollouts-addon:cluster.adoptExisting is true, and the old install has ${problems.length} thing(s) adopting would break (npm run adopt-check -- --stack ${config.stack} lists them too):\n` +
                    problems.map((p) => `  ${p.object}: ${p.found}\n      first: ${p.fix}`).join("\n"),
            );
        }
    }
    const boundary = {
        stack: config.stack,
        running,
        configured: config.controller.appVersion,
        acknowledged: config.controller.acknowledgeNewRevisions,
        inFlight: config.controller.acknowledgeInFlight,
    };
    let decision = hashBoundaryDecision({ ...boundary, rollouts: [] });
    if (decision.refusal || decision.notice) {
        // Only a move across the boundary lists the Rollouts (cluster-wide read of one kind).
        decision = hashBoundaryDecision({ ...boundary, rollouts: ((await reader.list("/apis/argoproj.io/v1alpha1/rollouts")) ?? []) as RolloutState[] });
    }
    if (decision.refusal) throw new pulumi.RunError(decision.refusal);
    if (decision.notice) warn(decision.notice);
    return config;
}

type ObjectRef = { kind?: string; namespace?: string; name?: string };
type ReportResult = { policy?: string; result?: string; message?: string; resources?: ObjectRef[] };

/** Reads who the regulated tier rule refuses once it enforces, as Kyverno's reports say, and announces them (components/policy/enforcement.ts). */
export async function enforcementPreflight(config: AddonConfig, reader: Pick<LiveReader, "get" | "list">, warn: (m: string) => void): Promise<void> {
    if (!regulatedEnforced(config.policy)) return;
    const rule = POLICY_NAMES.tierRegulated;
    const ruleInstalled = (await reader.get(`/apis/${config.policy.kyvernoApi}/validatingpolicies/${rule}`)) !== undefined;
    // One report per resource, named by its scope (kyverno/kyverno pkg/utils/report at v1.17.2); no report CRD, no reports.
    const reports = ruleInstalled ? ((await reader.list("/apis/wgpolicyk8s.io/v1alpha2/policyreports")) ?? []) : [];
    const failing = reports.flatMap((r) => {
        const { scope, results } = r as { scope?: ObjectRef; results?: ReportResult[] };
        return (results ?? [])
            .filter((x) => x.policy === rule && x.result === "fail")
            .map((x): ObjectRef & { message: string } => ({ ...scope, ...x.resources?.[0], message: x.message ?? "" }))
            .filter((o) => o.kind === "Rollout" && o.name)
            .map((o) => ({ namespace: o.namespace ?? r.metadata?.namespace ?? "", name: o.name!, message: o.message }));
    });
    let regulatedProd: { namespace: string; name: string }[] = [];
    if (!ruleInstalled) {
        const namespaces = ((await reader.list(`/api/v1/namespaces?labelSelector=${encodeURIComponent(regulatedProdQuery(config.policy))}`)) ?? []).map(
            (n) => n.metadata?.name,
        );
        regulatedProd = ((await reader.list("/apis/argoproj.io/v1alpha1/rollouts")) ?? [])
            .filter((o) => namespaces.includes(o.metadata?.namespace))
            .map((o) => ({ namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" }));
    }
    const notice = enforcementNotice(config.stack, { ruleInstalled, failing, regulatedProd });
    if (notice) warn(notice);
}

/**
 * The program's entry (stacks/index.ts): read, decide, then declare behind the gate and open it
 * only once no object the stack creates belongs to another tool.
 */
export async function checkedStack(
    config: AddonConfig,
    define: (config: AddonConfig) => Promise<Record<string, unknown>>,
    opts: { reader?: Pick<LiveReader, "get" | "list">; register?: (t: pulumi.ResourceTransformation) => void; warn?: (m: string) => void } = {},
): Promise<Record<string, unknown>> {
    let reader = opts.reader;
    try {
        reader ??= await liveReader({ connection: config.cluster.connection });
        config = await controllerPreflight(config, reader, opts.warn);
        await enforcementPreflight(config, reader, opts.warn ?? ((m) => void pulumi.log.warn(m)));
    } catch (e) {
        if (e instanceof pulumi.RunError) throw e;
        throw new pulumi.RunError(
            `stack "${config.stack}": the program reads the cluster before it declares anything (the running controller, and the objects it would create), and cannot: ${(e as Error).message}`,
        );
    }
    const gate = new DeclarationGate();
    (opts.register ?? pulumi.runtime.registerStackTransformation)(gate.transformation);
    const outputs = await define(config);
    if (!config.cluster.adoptExisting) {
        const refusal = await findExisting([...gate.declared, ...providerDeclaredObjects(config)], reader, stackMark()).then(
            (found) => existingObjectsRefusal(config.stack, found),
            (e: Error) => `stack "${config.stack}": the program reads every object it would create before it declares them, and cannot: ${e.message}`,
        );
        if (refusal) throw new pulumi.RunError(refusal);
    }
    gate.open();
    return outputs;
}
