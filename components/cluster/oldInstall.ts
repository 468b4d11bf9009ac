import { CONTROLLER_CONTAINER, imageTag } from "./adoption";
import type { LiveObject } from "./live";
import { objectName } from "./live";

/**
 * Shapes of an old install that adoption cannot take over (ADR-056 as-built, platform introduction),
 * found by `npm run adopt-check` and by the adopting run's preflight (stacks/preflight.ts) from the
 * same reads, each refused with what to do first:
 *
 * - a controller Deployment outside this stack: adopting installs the stack's beside it, and two
 *   controllers reconcile every Rollout;
 * - the controller Deployment the stack takes over, with a selector that is not the chart's: a
 *   Deployment's `spec.selector` is immutable (apps/v1 validation), so `up` stops after a green
 *   preview; a plain-manifest install (argoproj/argo-rollouts manifests/install.yaml) has one;
 * - a PodDisruptionBudget that sets `minAvailable`: a forced apply of the stack's `maxUnavailable`
 *   leaves it in place, and a budget with both is invalid (policy/v1 validation).
 */
export interface OldInstallProblem {
    object: string;
    found: string;
    fix: string;
}

/**
 * What every controller has, whatever registry or path its image was pulled from: the leader-election
 * Lease it holds in its own namespace, its holder `<pod name>_<uuid>` (argoproj/argo-rollouts
 * controller/controller.go v1.9.0 L100, L505; the same name since v1.8.0, L99); the component label of
 * the chart and of manifests/install.yaml; the binary its image starts (Dockerfile v1.9.0, ENTRYPOINT).
 */
export const CONTROLLER_LEASE = "argo-rollouts-controller-lock";
/** Every namespace's controller Lease, by name: one LIST. */
export const CONTROLLER_LEASES = `/apis/coordination.k8s.io/v1/leases?fieldSelector=metadata.name%3D${CONTROLLER_LEASE}`;
const COMPONENT = "app.kubernetes.io/component";
const BINARY = /(^|\/)rollouts-controller$/;

interface Container {
    name?: string;
    image?: string;
    args?: string[];
    command?: string[];
}
interface DeploymentLike {
    metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
    spec?: {
        selector?: { matchLabels?: Record<string, string> };
        template?: { metadata?: { labels?: Record<string, string> }; spec?: { containers?: Container[] } };
    };
}

/** `namespace/deployment` of each Lease holder: the pod name without its ReplicaSet hash and suffix. */
function leaseHolders(leases: readonly LiveObject[]): Set<string> {
    return new Set(
        leases
            .filter((l) => l.metadata?.name === CONTROLLER_LEASE)
            .map(
                (l) =>
                    `${l.metadata?.namespace}/${String((l.spec as { holderIdentity?: unknown } | undefined)?.holderIdentity ?? "").replace(/-[a-z0-9]+-[a-z0-9]+_.*$/, "")}`,
            ),
    );
}

/** The controllers of a cluster-wide Deployment list that reconcile every Rollout: neither `--namespaced` nor an `--instance-id` (cmd/rollouts-controller/main.go). */
function clusterWideControllers(
    deployments: readonly LiveObject[],
    leases: readonly LiveObject[],
): { namespace: string; name: string; tag: string | undefined }[] {
    const holders = leaseHolders(leases);
    return (deployments as readonly DeploymentLike[]).flatMap((d) => {
        const containers = d.spec?.template?.spec?.containers ?? [];
        const runs = (c: Container) => BINARY.test([...(c.command ?? []), ...(c.args ?? [])][0] ?? "");
        const container = containers.find(runs) ?? containers.find((c) => c.name === CONTROLLER_CONTAINER) ?? containers[0];
        const labelled = [d.metadata?.labels, d.spec?.selector?.matchLabels, d.spec?.template?.metadata?.labels].some(
            (l) => l?.[COMPONENT] === "rollouts-controller",
        );
        const controller = labelled || containers.some(runs) || holders.has(`${d.metadata?.namespace}/${d.metadata?.name}`);
        const args = [...(container?.command ?? []), ...(container?.args ?? [])];
        const flag = (name: string) => {
            const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
            return i < 0 ? undefined : args[i].includes("=") ? args[i].slice(args[i].indexOf("=") + 1) : (args[i + 1] ?? "");
        };
        const namespaced = flag("namespaced");
        const instanceId = (flag("instance-id") ?? "").replace(/^--.*/, "");
        if (!controller || (namespaced !== undefined && namespaced !== "false") || instanceId !== "") return [];
        return [{ namespace: d.metadata?.namespace ?? "", name: d.metadata?.name ?? "", tag: imageTag(container?.image ?? "") }];
    });
}

const labels = (m: Readonly<Record<string, string>>): string =>
    `{${Object.entries(m)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")}}`;

export function oldInstallProblems(args: {
    /** The controller's namespace and Deployment name this stack declares. */
    namespace: string;
    name: string;
    /** Every Deployment of the cluster (one LIST). */
    deployments: readonly LiveObject[];
    /** The controllers' leader-election Leases of the cluster (one LIST). */
    leases: readonly LiveObject[];
    /** The chart's selector of the controller Deployment. */
    chartSelector: Readonly<Record<string, string>>;
    /** The live PodDisruptionBudget of the stack's name, if any. */
    pdb: LiveObject | undefined;
}): OldInstallProblem[] {
    const problems: OldInstallProblem[] = [];
    const clusterWide = clusterWideControllers(args.deployments, args.leases);
    for (const c of clusterWide.filter((x) => x.namespace !== args.namespace || x.name !== args.name)) {
        problems.push({
            object: objectName("Deployment", c.namespace, c.name),
            found: `runs Argo Rollouts ${c.tag ?? "(no tag)"} outside this stack (the stack installs its controller as ${args.namespace}/${args.name}): after adopting, ${clusterWide.length > 1 ? "it and the stack's" : "two controllers"} would reconcile every Rollout of the cluster`,
            fix: `keep the CRDs first (runbook: keep the CRDs), make its installer forget it (runbook: make the old tool let go), then kubectl delete deployment ${c.name} -n ${c.namespace} right before the adopting run (Rollouts keep their pods; they resume once the stack's controller runs)`,
        });
    }
    const own = (args.deployments as readonly DeploymentLike[]).find((d) => d.metadata?.namespace === args.namespace && d.metadata?.name === args.name);
    const selector = own?.spec?.selector?.matchLabels;
    if (selector && labels(selector) !== labels(args.chartSelector)) {
        problems.push({
            object: objectName("Deployment", args.namespace, args.name),
            found: `selects ${labels(selector)}, the chart ${labels(args.chartSelector)}: a Deployment's selector is immutable, so the adopting up would stop at it (a plain-manifest install, argoproj/argo-rollouts manifests/install.yaml, has this selector)`,
            fix: `delete it right before the adopting run, as the runbook's adopting step does (kubectl delete deployment ${args.name} -n ${args.namespace}); its pods go, Rollouts keep theirs and resume once the stack's controller runs`,
        });
    }
    const minAvailable = (args.pdb?.spec as { minAvailable?: unknown } | undefined)?.minAvailable;
    if (minAvailable != null) {
        problems.push({
            object: objectName("PodDisruptionBudget", args.namespace, args.name),
            found: `sets minAvailable ${String(minAvailable)}: the stack sets maxUnavailable, the adopting apply leaves the old minAvailable in place, and a budget with both is invalid`,
            fix: `kubectl patch poddisruptionbudget ${args.name} -n ${args.namespace} --type=json -p '[{"op":"remove","path":"/spec/minAvailable"}]' before the adopting run`,
        });
    }
    return problems;
}
