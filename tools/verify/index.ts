/** `npm run verify`'s checks, in the order of the ADR's stages, read-only (cluster.ts). */
import * as tls from "tls";
import { AddonConfig } from "../../stacks/config";
import { httpGet } from "../../components/cluster/live";
import { HttpAnswer, ReadError, ReadOnlyCluster } from "./cluster";
import { argocdChecks } from "./checks/argocd";
import { crdAndControllerChecks } from "./checks/controller";
import { kyvernoChecks } from "./checks/kyverno";
import { metricChecks } from "./checks/metrics";
import { rbacChecks } from "./checks/rbac";
import { smokeChecks } from "./checks/smoke";
import { CheckGroup, VerifyOptions } from "./context";
import { CheckResult, DOCS } from "./report";

export const GROUPS: readonly CheckGroup[] = [crdAndControllerChecks, rbacChecks, kyvernoChecks, argocdChecks, metricChecks, smokeChecks];

const checksOf = (re: RegExp): string[] => GROUPS.flatMap((g) => g.ids).filter((id) => re.test(id));

/** What a check needs running beyond the stack's objects: `--without <component>` turns its checks into a SKIP naming it. */
export const COMPONENTS = {
    "rollouts-controller": { what: "the Argo Rollouts controller process", checks: ["controller.leader", "smoke.outcome"] },
    // kyverno.selectors-match reads namespaces only; Kyverno generates the approval bindings.
    kyverno: { what: "Kyverno", checks: checksOf(/^rbac\.kyverno-|^rbac\.approval-bindings$|^kyverno\.(?!selectors-match$)/) },
    argocd: { what: "ArgoCD", checks: checksOf(/^argocd\./) },
    "gateway-controller": { what: "a Gateway API controller for the shared Gateway", checks: ["metrics.spoke-routes"] },
    mimir: { what: "Mimir's gateway pods", checks: ["metrics.query"] },
} satisfies Record<string, { what: string; checks: readonly string[] }>;

export type Component = keyof typeof COMPONENTS;

export const isComponent = (name: string): name is Component => Object.hasOwn(COMPONENTS, name);

/** The results with every check that needs an absent component turned into a SKIP naming it. */
export function withoutComponents(results: readonly CheckResult[], absent: readonly Component[]): CheckResult[] {
    return results.map((r) => {
        const names = absent
            .filter((c) => (COMPONENTS[c].checks as readonly string[]).includes(r.id))
            .map((c) => `${COMPONENTS[c].what} (--without ${c})`)
            .join(" and ");
        if (!names) return r;
        const seen = r.status === "FAIL" && r.findings.length > 0 ? `; without it: ${r.findings[0].object}: ${r.findings[0].found}` : "";
        const also = r.status === "SKIP" ? `; ${r.note ?? ""}` : seen;
        return { ...r, status: "SKIP", findings: [], note: `not checked: ${names} does not run on this cluster${also}`.trimEnd() };
    });
}

/** Runs every check. A read the API server refuses fails the checks of its group; a lost connection stops the run. */
export async function runVerify(config: AddonConfig, cluster: ReadOnlyCluster, options: VerifyOptions): Promise<CheckResult[]> {
    const results: CheckResult[] = [];
    for (const group of GROUPS) {
        try {
            results.push(...(await group.run({ config, cluster, options })));
        } catch (e) {
            if (!(e instanceof ReadError)) throw e;
            const forbidden = e.status === 403;
            for (const id of group.ids) {
                results.push({
                    id,
                    status: "FAIL",
                    what: "could not be checked",
                    findings: [{ object: e.path, found: e.message }],
                    ...(forbidden ? { note: "verify's credentials may not read this" } : {}),
                    readme: forbidden ? DOCS.permissions : group.readme,
                });
            }
        }
    }
    return withoutComponents(results, options.without);
}

/** What the controller trusts for a read endpoint; an explicit `ca` replaces Node's store, so NODE_EXTRA_CA_CERTS cannot mask a failure. */
export function trustedCas(extraCa: string | undefined): string[] {
    return [...tls.rootCertificates, ...(extraCa ? [extraCa] : [])];
}

/** A GET from this machine (not through the API server), for a spoke's read endpoint. */
export function directGet(url: string, headers: Record<string, string>, trust: { extraCa?: string } = {}): Promise<HttpAnswer> {
    const target = new URL(url);
    const ca = target.protocol === "https:" ? { ca: trustedCas(trust.extraCa) } : {};
    return httpGet(target, { headers: { Accept: "application/json", ...headers }, ...ca }, 10_000);
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
