/**
 * Runs the program under mocks for a stack described inline, the same way the offline plan does.
 */
import { OfflineRun, OfflineWorld, PlannedResource, runOffline } from "../tools/offline";
import { fromConfigMap, placeholderWorld } from "../tools/stackFile";
import { defineStack } from "../stacks/program";

/** A digest-like value that is clearly a test value. */
export const TEST_SHA256 = "a".repeat(64);
export const TEST_DIGEST = `sha256:${"b".repeat(64)}`;

/** A complete, valid hub configuration (keys without the project namespace). */
export function hubConfig(): Record<string, unknown> {
    return {
        "aws:region": "eu-west-1",
        cluster: { name: "hub", role: "hub", mimirTenant: "hub", eksClusterName: "platform-hub" },
        gateway: { name: "internal", namespace: "gateway-system", listener: "https" },
        imageRegistry: "registry.test.example/mirror",
        plugin: { delivery: "download", sha256: TEST_SHA256 },
    };
}

/** ArgoCD RBAC of a regulated gate, as a stack with policy.regulated needs where ArgoCD runs. */
export const REGULATED_ARGOCD_RBAC = { approverRole: "role:release-approver", deployerRoles: ["role:tenant-deployer"], projects: ["tenants-regulated"], regulatedProjects: ["tenants-regulated"] };

/**
 * `raw` with REGULATED_ARGOCD_RBAC where it sets policy.regulated, ArgoCD runs on its cluster and
 * it says nothing about ArgoCD's RBAC: for tests about something else.
 */
export function withRegulatedArgoRbac(raw: Record<string, unknown>): Record<string, unknown> {
    const policy = raw.policy as Record<string, unknown> | undefined;
    const argocd = (raw.argocd ?? {}) as Record<string, unknown>;
    const cluster = raw.cluster as Record<string, unknown> | undefined;
    const local = argocd.runsOn === undefined || argocd.runsOn === cluster?.name;
    if (!policy?.regulated || !local || argocd.rbac !== undefined) {
        return raw;
    }
    return { ...raw, argocd: { ...argocd, rbac: REGULATED_ARGOCD_RBAC } };
}

/** Deep-merges `patch` into `base`; a key set to undefined is removed. */
export function merged(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of Object.entries(patch)) {
        const b = out[k];
        if (v === undefined) {
            delete out[k];
        } else if (isObj(v) && isObj(b)) {
            out[k] = merged(b, v);
        } else {
            out[k] = v;
        }
    }
    return out;
}

function isObj(v: unknown): v is Record<string, unknown> {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Plans a stack from an inline config map (the stack file's `config:` section). */
export async function planInline(configMap: Record<string, unknown>, opts: { stack?: string; world?: OfflineWorld } = {}): Promise<OfflineRun> {
    const file = fromConfigMap(opts.stack ?? "test", withRegulatedArgoRbac(configMap));
    return runOffline({
        stack: file.stack,
        config: file.config,
        secretKeys: file.secretKeys,
        world: opts.world ?? placeholderWorld(file),
        program: () => defineStack(),
    });
}

export function byName(run: OfflineRun, name: string): PlannedResource {
    const found = run.resources.filter((r) => r.name === name);
    if (found.length !== 1) {
        throw new Error(`expected one resource named ${name}, found ${found.length}`);
    }
    return found[0];
}

/** Every URN `urn` waits for, directly or through other resources. */
export function transitiveDeps(run: OfflineRun, urn: string): Set<string> {
    const byUrn = new Map(run.resources.map((r) => [r.urn, r]));
    const seen = new Set<string>();
    const stack = [...(byUrn.get(urn)?.dependsOn ?? [])];
    while (stack.length > 0) {
        const next = stack.pop()!;
        if (!seen.has(next)) {
            seen.add(next);
            stack.push(...(byUrn.get(next)?.dependsOn ?? []));
        }
    }
    return seen;
}
