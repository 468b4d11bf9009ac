/**
 * The Argo Rollouts facts the stages share (ADR-056 D2, D4, D5, D7): the release, its CRDs, the
 * Gateway API plugin's name, the shared analysis templates' names, the restricted security context
 * and the RBAC rule shape. The rollouts stage installs what these name; the others only refer to it.
 */

/** The release's fixed name: the ServiceAccount, Deployment and RBAC subjects all derive from it. */
export const RELEASE_NAME = "argo-rollouts";

/** The Argo Rollouts CRDs, and their manifests under manifests/crds/ at the controller's tag. */
export const ROLLOUTS_CRDS = [
    { file: "rollout-crd.yaml", name: "rollouts.argoproj.io" },
    { file: "analysis-template-crd.yaml", name: "analysistemplates.argoproj.io" },
    { file: "cluster-analysis-template-crd.yaml", name: "clusteranalysistemplates.argoproj.io" },
    { file: "analysis-run-crd.yaml", name: "analysisruns.argoproj.io" },
    { file: "experiment-crd.yaml", name: "experiments.argoproj.io" },
] as const;
export const ROLLOUTS_CRD_FILES = ROLLOUTS_CRDS.map((c) => c.file);
export const CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";

/** The CRD manifest URLs at the controller's own release tag, so CRDs and controller never drift. */
export function rolloutsCrdUrls(baseUrl: string, appVersion: string): string[] {
    return ROLLOUTS_CRD_FILES.map((file) => `${baseUrl}/${appVersion}/manifests/crds/${file}`);
}

/** The name the controller and every Rollout use for the Gateway API plugin; it must be exactly this. */
export const GATEWAY_API_PLUGIN = "argoproj-labs/gatewayAPI";

/**
 * The prefix of every ClusterAnalysisTemplate the addon declares: the controller fails a run whose
 * template declares an arg the Rollout does not pass (argo-rollouts v1.9.0 utils/analysis/helpers.go
 * ResolveArgs), so a cluster's own `success-rate` is never taken over; `npm run adopt-check` lists
 * who still uses it.
 */
export const TEMPLATE_NAME_PREFIX = "argo-rollouts-addon-";
export const templateName = (short: string): string => `${TEMPLATE_NAME_PREFIX}${short}`;

/**
 * The shared templates. Argo Rollouts refuses a Rollout whose step or pre/post-promotion analysis
 * has a metric with `interval` and no `count` (v1.9.0 validation_references.go), so each gate has a
 * background template and a finite one.
 */
export const SUCCESS_RATE = templateName("success-rate");
export const SUCCESS_RATE_FINITE = templateName("success-rate-finite");
export const LATENCY_P99 = templateName("latency-p99");
export const LATENCY_P99_FINITE = templateName("latency-p99-finite");
export const ERROR_BUDGET = templateName("error-budget");
export const ERROR_BUDGET_WAIT = templateName("error-budget-wait");

/**
 * The arguments every shared metric template declares, as a Rollout passes them from itself: its
 * namespace, its name, and the newest ReplicaSet's pod-template hash (`Latest`: the canary, or the
 * blue/green version being promoted; utils/analysis/factory.go BuildArgumentsForRolloutAnalysisRun).
 */
export const SHARED_TEMPLATE_ARGS = [
    { name: "namespace", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
    { name: "rollout", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    { name: "canary-hash", valueFrom: { podTemplateHashValue: "Latest" as const } },
];

/** The restricted Pod Security profile every container of the addon runs with. */
export function restrictedContainerSecurityContext() {
    return {
        allowPrivilegeEscalation: false as const,
        readOnlyRootFilesystem: true as const,
        runAsNonRoot: true as const,
        capabilities: { drop: ["ALL"] },
        seccompProfile: { type: "RuntimeDefault" as const },
    };
}

/** A Kubernetes RBAC policy rule. */
export interface PolicyRule {
    apiGroups: string[];
    resources: string[];
    verbs: string[];
    resourceNames?: string[];
}

/** Every place a list of RBAC rules of unknown shape (the policy pack's input) uses `*`. */
export function wildcardFields(rules: unknown): { rule: number; field: string }[] {
    return (Array.isArray(rules) ? rules : []).flatMap((rule: unknown, i) =>
        ["apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"]
            .filter((field) => {
                const values = ((rule ?? {}) as Record<string, unknown>)[field];
                return Array.isArray(values) && values.some((v) => typeof v === "string" && v.includes("*"));
            })
            .map((field) => ({ rule: i, field })),
    );
}

/** Every place a rule uses `*`, as "rule N: field". */
export const findWildcards = (rules: PolicyRule[]): string[] => wildcardFields(rules).map((w) => `rule ${w.rule}: ${w.field}`);
