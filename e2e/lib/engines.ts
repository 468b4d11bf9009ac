/** The engines of the run and their pinned versions, read from the wrapper modules' go.mod files. */
import * as fs from "fs";
import * as path from "path";
import { KyvernoRelease, kyvernoRelease } from "./kyvernoRelease";
import { platformCrdVersions } from "./platform";

const ENGINES_DIR = path.resolve(__dirname, "..", "engines");

/** The engine name, the wrapper folder and the module whose required version is the engine's. */
const ENGINES = (kyverno: KyvernoRelease): { name: string; dir: string; module: string }[] => [
    { name: "etcd", dir: "etcd", module: "go.etcd.io/etcd/server/v3" },
    { name: "kube-apiserver, kube-controller-manager, kube-scheduler, kubectl", dir: "kubernetes", module: "k8s.io/kubernetes" },
    { name: "kwok", dir: "kwok", module: "sigs.k8s.io/kwok" },
    { name: "helm", dir: "helm", module: "helm.sh/helm/v3" },
    { name: "pulumi", dir: "pulumi", module: "github.com/pulumi/pulumi/pkg/v3" },
    { name: "pulumi-resource-kubernetes", dir: "pulumi-kubernetes", module: "github.com/pulumi/pulumi-kubernetes/provider/v4" },
    {
        name: "rollouts-controller, rollouts-evaluate (its Prometheus provider, e2e/engines/argo-rollouts/main.go)",
        dir: "argo-rollouts",
        module: "github.com/argoproj/argo-rollouts",
    },
    { name: "rollouts-controller-1.8 (upgrade-controller)", dir: "argo-rollouts-1.8", module: "github.com/argoproj/argo-rollouts" },
    // Our stand-in, built against the controller's plugin protocol (e2e/engines/gatewayapi-plugin/main.go).
    { name: "gatewayapi-plugin (stand-in, plugin protocol of argo-rollouts)", dir: "gatewayapi-plugin", module: "github.com/argoproj/argo-rollouts" },
    { name: "prometheus, promtool", dir: "prometheus", module: "github.com/prometheus/prometheus" },
    { name: "kustomize", dir: "kustomize", module: "sigs.k8s.io/kustomize/kustomize/v5" },
    { name: "argocd-rbac-enforce (ArgoCD API server RBAC, e2e/engines/argocd-rbac/main.go)", dir: "argocd-rbac", module: "github.com/argoproj/argo-cd/v3" },
    // The release ARGO_ROLLOUTS_ADDON_E2E_KYVERNO selects (e2e/lib/kyvernoRelease.ts): the one that ran.
    { name: `${kyverno.admission}, ${kyverno.background}`, dir: kyverno.engine, module: "github.com/kyverno/kyverno" },
];

export function requiredVersion(dir: string, module: string): string {
    const gomod = fs.readFileSync(path.join(ENGINES_DIR, dir, "go.mod"), "utf8");
    const escaped = module.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    const m = gomod.match(new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, "m"));
    if (!m) {
        throw new Error(`e2e/engines/${dir}/go.mod does not require ${module}`);
    }
    return m[1];
}

export function engineVersions(): { name: string; version: string }[] {
    return [
        ...ENGINES(kyvernoRelease()).map((e) => ({ name: e.name, version: requiredVersion(e.dir, e.module) })),
        ...platformCrdVersions().map((c) => ({ name: `${c.name} (CRDs)`, version: c.version })),
    ];
}
