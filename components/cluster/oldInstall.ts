import { imageTag } from "./adoption";
import type { LiveObject } from "./live";
import { objectName } from "./live";

/**
 * Shapes of an old install that adoption cannot simply take over (ADR-056 as-built, platform
 * introduction), found before they bite: by `npm run adopt-check` and by the adopting run's
 * preflight (stacks/preflight.ts), from the same reads. Each is refused with what to do first.
 *
 * - A controller Deployment outside this stack (another release name or namespace): adopting
 *   installs the stack's own beside it, and two controllers reconcile every Rollout.
 * - The controller Deployment this stack would take over, with a selector the chart's cannot
 *   replace: `spec.selector` of a Deployment is immutable (apps/v1 validation), so the adopting
 *   `up` stops at it after a green preview. A plain-manifest install (argoproj/argo-rollouts
 *   manifests/install.yaml: `app.kubernetes.io/name` only) has one.
 * - A PodDisruptionBudget of the same name that sets `minAvailable`: the stack's values set
 *   `maxUnavailable`, a forced apply leaves the old manager's `minAvailable` in place, and a budget
 *   with both is invalid (policy/v1 validation).
 */

/** Something of the old install that adopting would break, and what to do first. */
export interface OldInstallProblem {
    object: string;
    found: string;
    fix: string;
}

/** A Deployment that runs an Argo Rollouts controller, and what it watches. */
export interface ControllerDeployment {
    namespace: string;
    name: string;
    tag: string | undefined;
    /** `--namespaced`: it watches its own namespace only. */
    namespaced: boolean;
    /** `--instance-id`: it reconciles only Rollouts labelled with it (empty: the unlabelled ones, every other default controller's too). */
    instanceId: string;
}

/** The controller image, from any registry (`<registry>/argoproj/argo-rollouts:<tag>`), never the dashboard's kubectl-argo-rollouts. */
const CONTROLLER_IMAGE = /(^|\/)argoproj\/argo-rollouts(:|@|$)/;

interface DeploymentLike {
    metadata?: { name?: string; namespace?: string };
    spec?: {
        selector?: { matchLabels?: Record<string, string> };
        template?: { spec?: { containers?: { image?: string; args?: string[]; command?: string[] }[] } };
    };
}

/** Every Deployment of a cluster-wide list that runs the controller. */
export function controllerDeployments(deployments: readonly LiveObject[]): ControllerDeployment[] {
    const out: ControllerDeployment[] = [];
    for (const d of deployments as readonly DeploymentLike[]) {
        const container = (d.spec?.template?.spec?.containers ?? []).find((c) => CONTROLLER_IMAGE.test(c.image ?? ""));
        if (!container) {
            continue;
        }
        const args = [...(container.command ?? []), ...(container.args ?? [])];
        // cmd/rollouts-controller/main.go flags: --namespaced, --instance-id (also as `--flag=value`).
        const flag = (name: string) => {
            const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
            return i < 0 ? undefined : args[i].includes("=") ? args[i].slice(args[i].indexOf("=") + 1) : (args[i + 1] ?? "");
        };
        const namespaced = flag("namespaced");
        out.push({
            namespace: d.metadata?.namespace ?? "",
            name: d.metadata?.name ?? "",
            tag: imageTag(container.image ?? ""),
            namespaced: namespaced !== undefined && namespaced !== "false",
            instanceId: (flag("instance-id") ?? "").replace(/^--.*/, ""),
        });
    }
    return out;
}

export function oldInstallProblems(args: {
    /** The controller's namespace and Deployment name this stack declares. */
    namespace: string;
    name: string;
    /** Every Deployment of the cluster (one LIST). */
    deployments: readonly LiveObject[];
    /** The chart's selector of the controller Deployment. */
    chartSelector: Readonly<Record<string, string>>;
    /** The live PodDisruptionBudget of the stack's name, if any. */
    pdb: LiveObject | undefined;
}): OldInstallProblem[] {
    const problems: OldInstallProblem[] = [];
    const controllers = controllerDeployments(args.deployments);
    // Those that reconcile the same Rollouts as the stack's controller (cluster-wide, no instance id).
    const clusterWide = controllers.filter((c) => !c.namespaced && c.instanceId === "");
    for (const c of clusterWide.filter((x) => x.namespace !== args.namespace || x.name !== args.name)) {
        problems.push({
            object: objectName("Deployment", c.namespace, c.name),
            found: `runs Argo Rollouts ${c.tag ?? "(no tag)"} outside this stack (the stack installs its controller as ${args.namespace}/${args.name}): after adopting, ${clusterWide.length > 1 ? "it and the stack's" : "two controllers"} would reconcile every Rollout of the cluster`,
            fix: `keep the CRDs first (runbook: keep the CRDs), make its installer forget it (runbook: make the old tool let go), then kubectl delete deployment ${c.name} -n ${c.namespace} right before the adopting run (Rollouts keep their pods; they resume once the stack's controller runs)`,
        });
    }
    const own = (args.deployments as readonly DeploymentLike[]).find((d) => d.metadata?.namespace === args.namespace && d.metadata?.name === args.name);
    const selector = own?.spec?.selector?.matchLabels;
    if (own && selector && JSON.stringify(sorted(selector)) !== JSON.stringify(sorted(args.chartSelector))) {
        problems.push({
            object: objectName("Deployment", args.namespace, args.name),
            found: `selects ${labels(selector)}, the chart ${labels(args.chartSelector)}: a Deployment's selector is immutable, so the adopting up would stop at it (a plain-manifest install, argoproj/argo-rollouts manifests/install.yaml, has this selector)`,
            fix: `delete it right before the adopting run, as the runbook's adopting step does (kubectl delete deployment ${args.name} -n ${args.namespace}); its pods go, Rollouts keep theirs and resume once the stack's controller runs`,
        });
    }
    const pdbSpec = args.pdb?.spec as { minAvailable?: unknown } | undefined;
    if (pdbSpec?.minAvailable !== undefined && pdbSpec.minAvailable !== null) {
        problems.push({
            object: objectName("PodDisruptionBudget", args.namespace, args.name),
            found: `sets minAvailable ${String(pdbSpec.minAvailable)}: the stack sets maxUnavailable, the adopting apply leaves the old minAvailable in place, and a budget with both is invalid`,
            fix: `kubectl patch poddisruptionbudget ${args.name} -n ${args.namespace} --type=json -p '[{"op":"remove","path":"/spec/minAvailable"}]' before the adopting run`,
        });
    }
    return problems;
}

function sorted(m: Readonly<Record<string, string>>): [string, string][] {
    return Object.entries(m).sort(([a], [b]) => a.localeCompare(b));
}

function labels(m: Readonly<Record<string, string>>): string {
    return `{${sorted(m)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")}}`;
}
