import * as pulumi from "@pulumi/pulumi";
import type { ControllerConfig } from "../rollouts/config";
import { ROLLOUTS_CRDS, RELEASE_NAME } from "../argoRollouts";

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
 * - Forcing field ownership is per object, never provider-wide. Without it every field the
 *   previous manager (Helm, Terraform, kubectl) set to another value is a server-side apply
 *   conflict and the run stops half-way; but the provider's `enablePatchForce` would also force
 *   the stack's patches of objects other managers own (argocd-cm, argocd-rbac-cm, the AppProjects
 *   and ApplicationSets), where a conflict must stop the run. So `enablePatchForce` stays false and
 *   each whole object the stack declares carries `pulumi.com/patchForce: "true"` for the adopting
 *   run: the provider reads that annotation before its own setting (pulumi-kubernetes v4.32.0
 *   provider/pkg/await/await.go, patchForce), and a patch never gets it (`ownsWholeObject`).
 *
 * Both provider settings are set explicitly, also to false: unset, the SDK falls back to the
 * environment variables PULUMI_K8S_UPSERT_EXISTING_OBJECTS / PULUMI_K8S_ENABLE_PATCH_FORCE
 * (@pulumi/kubernetes provider.js), and a stack must never adopt or force because of a shell's
 * environment. A provider input change is an update, never a replacement (provider.go DiffConfig
 * replaces only on a changed cluster, and `clusterIdentifier` is pinned). Adoption creates nothing
 * twice and replaces nothing: a create that meets an existing object updates it, and a CRD is
 * replaced only when its name changes (provider diff.go, forceNewProperties), which no step does;
 * the CRDs stay protected and retained on delete. Turning adoption off again is an update of every
 * whole object that removes the annotation, and nothing else.
 */
export function providerAdoptionOptions(adoptExisting: boolean): { upsertExistingObjects: boolean; enablePatchForce: false } {
    return { upsertExistingObjects: adoptExisting, enablePatchForce: false };
}

/** The annotation that makes the provider force one object's server-side apply. */
export const PATCH_FORCE_ANNOTATION = "pulumi.com/patchForce";

/**
 * Whether a registered resource is a whole Kubernetes object the stack owns, as opposed to a
 * patch of an object another manager owns, a component (a Chart or ConfigGroup: their children
 * are the objects) or the provider. A patch's type is its kind plus "Patch"
 * (pulumi-kubernetes v4.32.0 provider/pkg/kinds/util.go, IsPatchResource; a CustomResourcePatch
 * registers as `kubernetes:<apiVersion>:<Kind>Patch`).
 */
export function ownsWholeObject(type: string, kind: unknown, custom: boolean): boolean {
    if (!custom || !type.startsWith("kubernetes:")) {
        return false;
    }
    const typeName = type.slice(type.lastIndexOf(":") + 1);
    return !(typeof kind === "string" && `${kind}Patch` === typeName);
}

function withForceAnnotation(metadata: Record<string, unknown>): Record<string, unknown> {
    const annotations = (metadata.annotations ?? {}) as Record<string, unknown>;
    return { ...metadata, annotations: { ...annotations, [PATCH_FORCE_ANNOTATION]: "true" } };
}

/**
 * The adopting run's transform: every whole object gets the force annotation, patches do not.
 * Stages carry it, so it reaches what they declare, the chart's rendered objects and the CRD
 * group's CRDs included (a component's transforms apply to its children, packaged components'
 * children too, which the Pulumi engine registers through the same callbacks).
 */
export const forceAdoptedObjects: pulumi.ResourceTransform = (args) => {
    if (!ownsWholeObject(args.type, args.props.kind, args.custom)) {
        return undefined;
    }
    const metadata = args.props.metadata;
    const forced = pulumi.Output.isInstance(metadata)
        ? metadata.apply((m) => withForceAnnotation((m ?? {}) as Record<string, unknown>))
        : withForceAnnotation((metadata ?? {}) as Record<string, unknown>);
    return { props: { ...args.props, metadata: forced }, opts: args.opts };
};

/** The transforms every stage carries: the force annotation for the adopting run, else none. */
export function adoptionTransforms(adoptExisting: boolean): pulumi.ResourceTransform[] {
    return adoptExisting ? [forceAdoptedObjects] : [];
}

/** The annotations by which Helm recognizes an object of its release (helm pkg/action/validate.go). */
export const HELM_OWNERSHIP_ANNOTATIONS = ["meta.helm.sh/release-name", "meta.helm.sh/release-namespace"] as const;

/** The chart's selector labels on every object it renders (argo-helm charts/argo-rollouts/templates/_helpers.tpl, argo-rollouts.selectorLabels). */
export const RELEASE_SELECTOR = `app.kubernetes.io/instance=${RELEASE_NAME}`;

/** Kinds an argo-rollouts release has objects of, in the release's namespace and cluster-wide (chart 2.41.0 templates/). */
export const RELEASE_NAMESPACED_KINDS = [
    "deployments",
    "services",
    "serviceaccounts",
    "configmaps",
    "secrets",
    "poddisruptionbudgets",
    "roles",
    "rolebindings",
] as const;
export const RELEASE_CLUSTER_KINDS = ["clusterroles", "clusterrolebindings"] as const;

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
    const out: { kind: string; namespace?: string; name: string }[] = ["view", "edit", "admin"].map((r) => ({
        kind: "clusterrole",
        name: `${RELEASE_NAME}-aggregate-to-${r}`,
    }));
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
    const byKind = (objs: typeof retire) =>
        [...new Set(objs.map((o) => o.kind))].map(
            (kind) =>
                `${kind} ${objs
                    .filter((o) => o.kind === kind)
                    .map((o) => o.name)
                    .join(" ")}`,
        );
    const byName = (objs: typeof retire) =>
        [...new Set(objs.map((o) => o.name))].map(
            (name) =>
                `${objs
                    .filter((o) => o.name === name)
                    .map((o) => o.kind)
                    .join(",")} ${name}`,
        );
    return [
        {
            title: "Record what runs now",
            commands: [
                `helm list -n ${ns} --filter '^${RELEASE_NAME}$'`,
                `kubectl get crd ${crds}`,
                "kubectl get rollouts.argoproj.io -A --no-headers | wc -l",
            ],
        },
        {
            // ADR-056 as-built: a registry reconcile re-applies units from main. A re-applied Helm
            // release adopts the objects again with the old values; an ApplicationSet regenerates a
            // deleted Application; a Terraform unit whose state holds the CRDs deletes them, and
            // every Rollout, when it is destroyed, whatever their annotations say.
            title: "Stop whatever re-applies the old install, and make its destroy harmless first",
            commands: [
                `# Registry, pipeline or ApplicationSet: remove the old unit from what reconciles main, merged before the next step`,
                `# Terraform: take the CRDs out of its state before anything else (never terraform destroy)`,
                `terraform state list | grep -i -e customresourcedefinition -e argoproj`,
                `terraform state rm '<address of each CRD>'`,
            ],
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
            // Through the deploy pipeline like every up: a workstation up is break-glass.
            title: "Adopt in one run, through the deploy pipeline",
            commands: [
                // A Deployment's selector is immutable (components/cluster/oldInstall.ts): a
                // plain-manifest controller (argoproj/argo-rollouts manifests/install.yaml selects
                // app.kubernetes.io/name only) cannot become the chart's, so it goes right before the
                // run that installs the chart's; the adopting preflight refuses until it is gone.
                `# A plain-manifest install (upstream install.yaml): its controller's selector cannot become the chart's; this deletes it (and only then): no controller runs until the adopting run, Rollouts keep their pods`,
                `kubectl get deployment ${RELEASE_NAME} -n ${ns} -o jsonpath='{.spec.selector.matchLabels.app\\.kubernetes\\.io/instance}' --ignore-not-found | grep -qx ${RELEASE_NAME} || kubectl delete deployment ${RELEASE_NAME} -n ${ns} --ignore-not-found`,
                `# A controller Deployment outside this stack that adopt-check names (another release or namespace): delete it now too, kubectl delete deployment <name> -n <namespace>`,
                `pulumi config set --path cluster.adoptExisting true ${s}`,
                `npm run adopt-check -- --stack ${cfg.stack}`,
                `# Merge Pulumi.${cfg.stack}.yaml through a pull request: its preview must show creates only (no replace, no delete); the deploy pipeline then runs`,
                `pulumi up --policy-pack policy-pack ${s}`,
            ],
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
            // Helm installs into an existing object only when it carries the release's
            // meta.helm.sh/release-name and release-namespace annotations and the managed-by
            // label (helm v3.20.2 pkg/action/validate.go, existingResourceConflict/checkOwnership);
            // the adopted objects keep Helm's annotations (Helm owns them, the stack never sets
            // them), so without this a `helm upgrade --install` of the old unit takes them all back.
            title: "Make the objects unclaimable by the old release",
            commands: [
                `kubectl annotate crd ${crds} ${HELM_OWNERSHIP_ANNOTATIONS.map((a) => `${a}-`).join(" ")}`,
                `kubectl get -n ${ns} ${RELEASE_NAMESPACED_KINDS.join(",")} -l ${RELEASE_SELECTOR} -o name | xargs -r -I{} kubectl annotate -n ${ns} {} ${HELM_OWNERSHIP_ANNOTATIONS.map((a) => `${a}-`).join(" ")}`,
                `kubectl get ${RELEASE_CLUSTER_KINDS.join(",")} -l ${RELEASE_SELECTOR} -o name | xargs -r -I{} kubectl annotate {} ${HELM_OWNERSHIP_ANNOTATIONS.map((a) => `${a}-`).join(" ")}`,
            ],
        },
        {
            title: "Stop adopting, through the deploy pipeline",
            commands: [
                `pulumi config set --path cluster.adoptExisting false ${s}`,
                `# Merge Pulumi.${cfg.stack}.yaml through a pull request; the deploy pipeline then runs`,
                `pulumi up --policy-pack policy-pack ${s}`,
            ],
        },
        {
            title: "Check that no Rollout was lost",
            commands: ["kubectl get rollouts.argoproj.io -A --no-headers | wc -l", `kubectl get crd ${crds}`],
        },
    ];
}

/** `vX.Y.Z` (a leading v optional, a pre-release suffix ignored) as numbers; undefined when it is none. */
export function parseVersion(v: string): [number, number, number] | undefined {
    const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(v);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** Whether moving from `running` to `configured` goes back; undefined when either is not a version. */
export function isDowngrade(running: string, configured: string): boolean | undefined {
    const a = parseVersion(running);
    const b = parseVersion(configured);
    if (!a || !b) {
        return undefined;
    }
    for (let i = 0; i < 3; i++) {
        if (a[i] !== b[i]) {
            return a[i] > b[i];
        }
    }
    return false;
}

/** The tag of an image reference (`registry/repo:tag` or `repo:tag@sha256:…`); undefined without one. */
export function imageTag(image: string): string | undefined {
    const noDigest = image.split("@")[0];
    const slash = noDigest.lastIndexOf("/");
    const colon = noDigest.lastIndexOf(":");
    return colon > slash ? noDigest.slice(colon + 1) : undefined;
}

/** The container of the chart's controller Deployment that runs the controller. */
export const CONTROLLER_CONTAINER = "argo-rollouts";

/**
 * Why the adopting run must stop, or undefined: the controller running now (its image tag) is
 * newer than the stack's `controller.appVersion`, and `cluster.allowDowngrade` is not set. Every
 * adopted object previews as a create, so the image and CRDs moving back would not show.
 */
export function downgradeRefusal(stack: string, running: string | undefined, configured: string, allowDowngrade: boolean): string | undefined {
    if (!running || allowDowngrade || !isDowngrade(running, configured)) {
        return undefined;
    }
    return (
        `stack "${stack}": the cluster runs Argo Rollouts ${running} and argo-rollouts-addon:controller.appVersion = "${configured}": ` +
        `adopting would downgrade the controller and its CRDs. Set controller.chartVersion to a chart of ${running} or later, ` +
        `or set cluster.allowDowngrade: true for the adopting run after reading the release notes`
    );
}
