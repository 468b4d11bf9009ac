/**
 * `npm run verify`: after `pulumi up`, checks on the live cluster, requirement by requirement,
 * what ADR-056 asks of it. Read-only: GETs and access reviews only (see cluster.ts).
 */
import * as tls from "tls";
import { AddonConfig } from "../../stacks/config";
import { HttpAnswer, ReadError, ReadOnlyCluster } from "./cluster";
import { httpGet } from "../httpGet";
import { argocdChecks } from "./checks/argocd";
import { crdAndControllerChecks } from "./checks/controller";
import { kyvernoChecks } from "./checks/kyverno";
import { metricChecks } from "./checks/metrics";
import { rbacChecks } from "./checks/rbac";
import { smokeChecks } from "./checks/smoke";
import { CheckGroup, VerifyOptions } from "./context";
import { CheckResult, DOCS } from "./report";

interface Group {
    ids: string[];
    readme: string;
    run: CheckGroup;
}

/** The checks, in the order of the ADR's stages; ids are listed so a group that cannot read still reports each. */
export const GROUPS: readonly Group[] = [
    {
        ids: ["crds.established", "crds.protected", "controller.available", "controller.leader", "controller.plugin", "controller.read-ca", "controller.image"],
        readme: DOCS.crds,
        run: crdAndControllerChecks,
    },
    {
        ids: [
            "rbac.controller",
            "rbac.kyverno-reads-rollouts",
            "rbac.kyverno-reads-approval-subresources",
            "rbac.kyverno-generates-pdbs",
            "rbac.kyverno-policy-lookups",
            "rbac.editor-cannot-promote",
            "rbac.deployer-cannot-resume",
            "rbac.deployer-cannot-edit-replicasets",
            "rbac.tenants-read-rollouts",
            "rbac.operators-outside-regulated",
        ],
        readme: DOCS.rbac,
        run: rbacChecks,
    },
    {
        ids: [
            "kyverno.selectors-match",
            "kyverno.policies-ready",
            "kyverno.policies-enforced",
            "kyverno.availability-rollout-aware",
            "kyverno.one-pdb-per-workload",
            "kyverno.resource-filters",
        ],
        readme: DOCS.kyverno,
        run: kyvernoChecks,
    },
    {
        ids: [
            "argocd.projects",
            "argocd.applicationsets",
            "argocd.argocd-cm",
            "argocd.rbac",
            "argocd.regulated-rbac",
            "argocd.regulated-projects",
            "argocd.regulated-identities",
        ],
        readme: DOCS.argocd,
        run: argocdChecks,
    },
    { ids: ["metrics.templates", "metrics.query", "metrics.spoke-routes"], readme: DOCS.metrics, run: metricChecks },
    { ids: ["smoke.outcome"], readme: DOCS.smoke, run: smokeChecks },
];

/**
 * The platform components a check needs running, beyond the objects the stack declares. On a
 * cluster where one of them does not run yet (a bring-up before Kyverno, say, or a test cluster
 * without a kubelet), `--without <component>` says so: those checks report SKIP naming it,
 * instead of failing on its absence. Nothing is skipped unless asked.
 */
const checksOf = (re: RegExp): string[] => GROUPS.flatMap((g) => g.ids).filter((id) => re.test(id));
export const COMPONENTS = {
    "rollouts-controller": { what: "the Argo Rollouts controller process", checks: ["controller.leader", "smoke.outcome"] },
    // Every check that reads what Kyverno's controllers do; selectors-match reads namespaces only.
    kyverno: { what: "Kyverno", checks: checksOf(/^rbac\.kyverno-|^kyverno\.(?!selectors-match$)/) },
    argocd: { what: "ArgoCD", checks: checksOf(/^argocd\./) },
    "gateway-controller": { what: "a Gateway API controller for the shared Gateway", checks: ["metrics.spoke-routes"] },
    mimir: { what: "Mimir's gateway pods", checks: ["metrics.query"] },
} satisfies Record<string, { what: string; checks: readonly string[] }>;

export type Component = keyof typeof COMPONENTS;

export function isComponent(name: string): name is Component {
    return Object.prototype.hasOwnProperty.call(COMPONENTS, name);
}

/** The results with every check that needs an absent component turned into a SKIP naming it. */
export function withoutComponents(results: readonly CheckResult[], absent: readonly Component[]): CheckResult[] {
    return results.map((r) => {
        const missing = absent.filter((c) => (COMPONENTS[c].checks as readonly string[]).includes(r.id));
        if (missing.length === 0) {
            return r;
        }
        const names = missing.map((c) => `${COMPONENTS[c].what} (--without ${c})`).join(" and ");
        if (r.status === "SKIP") {
            // Skipped for its own reason as well: say both.
            return { ...r, note: `not checked: ${names} does not run on this cluster; ${r.note ?? ""}`.trimEnd() };
        }
        const seen = r.status === "FAIL" && r.findings.length > 0 ? `; without it: ${r.findings[0].object}: ${r.findings[0].found}` : "";
        return { id: r.id, status: "SKIP", what: r.what, findings: [], note: `not checked: ${names} does not run on this cluster${seen}`, readme: r.readme };
    });
}

/** Runs every check. A read the API server refuses fails the checks that needed it; a lost connection stops the run. */
export async function runVerify(config: AddonConfig, cluster: ReadOnlyCluster, options: VerifyOptions): Promise<CheckResult[]> {
    return withoutComponents(await runAllChecks(config, cluster, options), options.without);
}

async function runAllChecks(config: AddonConfig, cluster: ReadOnlyCluster, options: VerifyOptions): Promise<CheckResult[]> {
    const results: CheckResult[] = [];
    for (const group of GROUPS) {
        try {
            results.push(...(await group.run({ config, cluster, options })));
        } catch (e) {
            if (!(e instanceof ReadError)) {
                throw e;
            }
            for (const id of group.ids) {
                results.push({
                    id,
                    status: "FAIL",
                    what: "could not be checked",
                    findings: [{ object: e.path, found: e.message }],
                    note: e.status === 403 ? "verify's credentials may not read this" : undefined,
                    readme: e.status === 403 ? DOCS.permissions : group.readme,
                });
            }
        }
    }
    return results;
}

/**
 * The CAs verify trusts for a spoke's read endpoint: what the controller trusts. Node's bundled
 * roots (Mozilla's, the set Debian's ca-certificates in the controller image is built from) and the
 * stack's `mimir.readCaBundle`, given explicitly: an explicit `ca` replaces Node's default store,
 * so NODE_EXTRA_CA_CERTS on this machine cannot make verify pass where the controller fails (Node
 * tls.createSecureContext, `ca`).
 */
export function trustedCas(extraCa: string | undefined): string[] {
    return [...tls.rootCertificates, ...(extraCa ? [extraCa] : [])];
}

/** A GET from this machine (not through the API server), for a spoke's read endpoint. */
export function directGet(url: string, headers: Record<string, string>, trust: { extraCa?: string } = {}): Promise<HttpAnswer> {
    const target = new URL(url);
    return httpGet(
        target,
        { headers: { Accept: "application/json", ...headers }, ...(target.protocol === "https:" ? { ca: trustedCas(trust.extraCa) } : {}) },
        10_000,
    );
}

export function defaultOptions(partial: Partial<VerifyOptions> = {}): VerifyOptions {
    return {
        kyvernoNamespace: "kyverno",
        without: [],
        smokeTimeoutSeconds: 0,
        smokePollSeconds: 15,
        now: () => new Date(),
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
        httpGet: directGet,
        ...partial,
    };
}
