/**
 * The configuration as a test reads it: a config map (most often hubConfig() of test/harness.ts with
 * the test's own keys merged in) read by stacks/config.ts as `pulumi up` reads the stack's, and the
 * problems it refuses it with; and a stack file planned as a preview or `pulumi up` with what it warns.
 */
import * as assert from "assert";
import * as pulumi from "@pulumi/pulumi";
import { ConfigError, ConfigProblem } from "../components/config";
import { PROJECT } from "../components/config/reader";
import type { PolicyConfig } from "../components/policy";
import { AddonConfig, parseAddonConfig } from "../stacks/config";
import { defineStack, forgetWarnings } from "../stacks/program";
import { OfflineRun, runOffline } from "../tools/offline";
import { StackFile, placeholderWorld } from "../tools/stackFile";
import { hubConfig, merged, withRegulatedArgoRbac } from "./harness";

export type Patch = Record<string, unknown>;
export type Ambient = Parameters<typeof parseAddonConfig>[2];

/** Reads a whole config map as `stack`'s; aws:region goes to the ambient, as the Pulumi CLI passes it. */
export function parseMap(cfg: Patch, stack = "hub", ambient: Ambient = {}): AddonConfig {
    const { "aws:region": _region, ...rest } = cfg;
    return parseAddonConfig(stack, withRegulatedArgoRbac(rest), { awsRegion: "eu-west-1", ...ambient });
}

/** Reads hubConfig() with `patch` merged in. */
export const parseHub = (patch: Patch = {}, ambient: Ambient = {}): AddonConfig => parseMap(merged(hubConfig(), patch), "hub", ambient);

/** A regulated class (ADR-056 D3) with every identity the approval guard reads: the policy tests' one. */
export const REGULATED = {
    namespaceLabels: { "platform.test/class": "regulated" },
    approverGroups: ["release-approvers"],
    deployerGroups: ["shop-deployers"],
    gitopsServiceAccounts: ["argocd/argocd-application-controller"],
    actionServiceAccounts: ["argocd/argocd-server"],
};

/** An ArgoCD project the addon owns, syncing the namespaced kinds named `group/Kind` (`Kind` alone: the core group). */
export const addonProject = (...kinds: string[]) => ({
    owner: "addon",
    namespaceResources: kinds.map((k) => ({ group: k.includes("/") ? k.split("/")[0] : "", kind: k.split("/").pop()! })),
});

/** The policy section of parseHub() with `patch` as `policy`. */
export const policyConfig = (patch: Record<string, unknown> = {}): PolicyConfig => parseHub({ policy: patch }).policy;

/** The ConfigError `attempt` throws; fails the test when it accepts. */
export function configError(attempt: () => unknown): ConfigError {
    try {
        attempt();
    } catch (err) {
        assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
        return err;
    }
    assert.fail("configuration was accepted");
}

/** The problems hubConfig() with `patch` merged in is refused with. */
export const hubProblems = (patch: Patch, ambient: Ambient = {}): ConfigProblem[] => configError(() => parseHub(patch, ambient)).problems;

/** The one problem reported for `key`, whose `allowed` text matches `allowed`. */
export function problemFor(patch: Patch, key: string, allowed: RegExp, ambient: Ambient = {}): ConfigProblem {
    const all = hubProblems(patch, ambient);
    const found = all.filter((p) => p.key === key);
    assert.strictEqual(found.length, 1, `expected one problem for ${key}, got: ${JSON.stringify(all, null, 1)}`);
    assert.match(found[0].allowed, allowed);
    return found[0];
}

/** A stack file's `config:` section with the project's keys only, without their namespace (what parseAddonConfig reads). */
export const projectKeys = (config: Record<string, unknown>): Patch =>
    Object.fromEntries(Object.entries(config).flatMap(([k, v]) => (k.startsWith(`${PROJECT}:`) ? [[k.slice(PROJECT.length + 1), v]] : [])));

/** Plans a stack file as a preview (dryRun) or as `pulumi up`, collecting what it warns. */
export async function planWarned(file: StackFile, dryRun: boolean): Promise<{ run: OfflineRun; warned: string[] }> {
    forgetWarnings();
    const warned: string[] = [];
    const warn = pulumi.log.warn;
    pulumi.log.warn = (message: string) => {
        warned.push(message);
        return Promise.resolve();
    };
    try {
        const world = placeholderWorld(file);
        const run = await runOffline({ stack: file.stack, config: file.config, secretKeys: file.secretKeys, world, dryRun, program: () => defineStack() });
        return { run, warned };
    } finally {
        pulumi.log.warn = warn;
    }
}
