import type { ControllerConfig } from "../rollouts/config";
import { ROLLOUTS_CRDS } from "../rollouts/crds";
import { RELEASE_NAME } from "../rollouts/values";

/**
 * Platform introduction (ADR-056 as-built): hub and preprod already run Argo Rollouts, installed
 * by another tool, and since @pulumi/kubernetes 4.29 a create of an existing object fails with
 * AlreadyExists. Removing the old install first is not an option: deleting the Rollout CRD deletes
 * every Rollout. So one run adopts what exists, and the mechanism is the provider's, in one place,
 * so no stage needs per-resource changes:
 *
 * - `upsertExistingObjects`: a create is a server-side apply, so an existing object is updated
 *   instead of refused (pulumi-kubernetes provider/pkg/await/await.go, Creation). It is a provider
 *   setting, so it reaches every object the stack creates, the children of the CRD ConfigGroup and
 *   of the controller Chart included: both register their children with `pulumi.Parent(comp)`
 *   (provider/pkg/provider/yaml/v2/configgroup.go, helm/v4/chart.go), so they inherit the
 *   component's provider, which is the stack's.
 * - `enablePatchForce`: the apply forces field ownership (await.go, patchForce). Without it every
 *   field the previous manager (Helm, Terraform, kubectl) set to another value is a server-side
 *   apply conflict and the run stops half-way.
 *
 * Both are set explicitly, also to false: unset, the SDK falls back to the environment variables
 * PULUMI_K8S_UPSERT_EXISTING_OBJECTS / PULUMI_K8S_ENABLE_PATCH_FORCE (@pulumi/kubernetes
 * provider.js), and a stack must never adopt because of a shell's environment. A provider input
 * change is an update, never a replacement (provider.go DiffConfig replaces only on a changed
 * cluster, and `clusterIdentifier` is pinned), so turning adoption on and off again touches no
 * resource. Adoption creates nothing twice and replaces nothing: a create that meets an existing
 * object updates it, and a CRD is replaced only when its name changes (provider diff.go,
 * forceNewProperties), which no step does; the CRDs stay protected and retained on delete.
 */
export function providerAdoptionOptions(adoptExisting: boolean): { upsertExistingObjects: boolean; enablePatchForce: boolean } {
    return { upsertExistingObjects: adoptExisting, enablePatchForce: adoptExisting };
}

/** One step of the adoption runbook. */
export interface RunbookStep {
    title: string;
    /** Shell commands, run in order; `<...>` marks a value only the operator knows. */
    commands: string[];
}

/**
 * Objects of an earlier argo-rollouts release with the program's release name that the program
 * does not declare, so adoption would leave them running: the chart's aggregate roles (on by
 * default in chart 2.41.0, values.yaml `createClusterAggregateRoles: true`; they give the built-in
 * `edit` role patch on rollouts/status, i.e. promote, which the separation of duties forbids) and,
 * when this stack runs without the dashboard, the dashboard's objects (templates/dashboard/, all
 * named `<fullname>-dashboard`).
 */
export function objectsToRetire(cfg: { controller: Pick<ControllerConfig, "namespace" | "dashboard"> }): { kind: string; namespace?: string; name: string }[] {
    const out: { kind: string; namespace?: string; name: string }[] = ["view", "edit", "admin"].map((r) => ({ kind: "clusterrole", name: `${RELEASE_NAME}-aggregate-to-${r}` }));
    if (!cfg.controller.dashboard) {
        const name = `${RELEASE_NAME}-dashboard`;
        out.push(
            { kind: "deployment", namespace: cfg.controller.namespace, name },
            { kind: "service", namespace: cfg.controller.namespace, name },
            { kind: "serviceaccount", namespace: cfg.controller.namespace, name },
            { kind: "poddisruptionbudget", namespace: cfg.controller.namespace, name },
            { kind: "clusterrole", name },
            { kind: "clusterrolebinding", name },
        );
    }
    return out;
}

/**
 * The adoption runbook for one stack, step by step. No step deletes a CRD or uninstalls a release:
 * the old tool is made to forget its objects, never to remove them. Helm keeps a release as
 * Secrets `sh.helm.release.v1.<release>.v<N>` labelled `owner=helm,name=<release>` in the
 * release's namespace (helm pkg/storage/driver/secrets.go, newSecretsObject); deleting those
 * Secrets removes the record and nothing else, whereas `helm uninstall` deletes every object of the
 * release that lacks `helm.sh/resource-policy: keep`.
 */
export function adoptionRunbook(cfg: { stack: string; controller: Pick<ControllerConfig, "namespace" | "dashboard"> }): RunbookStep[] {
    const ns = cfg.controller.namespace;
    const crds = ROLLOUTS_CRDS.map((c) => c.name).join(" ");
    const s = `-s ${cfg.stack}`;
    const retire = objectsToRetire(cfg);
    const clusterScoped = retire.filter((o) => !o.namespace);
    const namespaced = retire.filter((o) => o.namespace);
    const byKind = (objs: typeof retire) => [...new Set(objs.map((o) => o.kind))].map((kind) => `${kind} ${objs.filter((o) => o.kind === kind).map((o) => o.name).join(" ")}`);
    const byName = (objs: typeof retire) => [...new Set(objs.map((o) => o.name))].map((name) => `${objs.filter((o) => o.name === name).map((o) => o.kind).join(",")} ${name}`);
    return [
        {
            title: "Record what runs now",
            commands: [`helm list -n ${ns} --filter '^${RELEASE_NAME}$'`, `kubectl get crd ${crds}`, "kubectl get rollouts.argoproj.io -A --no-headers | wc -l"],
        },
        {
            title: "Keep the CRDs whatever happens to the old release",
            commands: [`kubectl annotate crd ${crds} helm.sh/resource-policy=keep --overwrite`],
        },
        {
            title: "Make the old tool let go without deleting anything",
            commands: [
                `# Helm: remove the release record only (never helm uninstall)`,
                `kubectl delete secret -n ${ns} -l owner=helm,name=${RELEASE_NAME}`,
                `# Terraform: forget the release (never terraform destroy)`,
                `terraform state rm '<address of the helm_release>'`,
                `# ArgoCD: delete the Application without its resources`,
                `argocd app delete '<application>' --cascade=false`,
            ],
        },
        {
            title: "Adopt in one run",
            commands: [`pulumi config set --path cluster.adoptExisting true ${s}`, `pulumi preview --policy-pack policy ${s}`, `pulumi up --policy-pack policy ${s}`],
        },
        {
            // After the adopting run, never before: the aggregate roles are the tenants' only read on
            // Rollouts until the run has created the rollouts stage's view role and the policy
            // stage's Kyverno read role, so retiring them first leaves a window without access.
            title: "Retire what the program does not declare, once the adopting run has created what replaces it",
            commands: [
                ...byKind(clusterScoped).map((k) => `kubectl delete ${k} --ignore-not-found`),
                ...byName(namespaced).map((k) => `kubectl delete -n ${ns} ${k} --ignore-not-found`),
            ],
        },
        {
            title: "Stop adopting",
            commands: [`pulumi config set --path cluster.adoptExisting false ${s}`, `pulumi up --policy-pack policy ${s}`],
        },
        {
            title: "Check that no Rollout was lost",
            commands: ["kubectl get rollouts.argoproj.io -A --no-headers | wc -l", `kubectl get crd ${crds}`],
        },
    ];
}
