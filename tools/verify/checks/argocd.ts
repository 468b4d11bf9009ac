/**
 * ArgoCD (ADR-056 D2 and the as-built corrections), on the cluster whose ArgoCD syncs this
 * cluster's Applications (`argocd.runsOn`): projects permit the Rollout kinds, tenant
 * ApplicationSets (and the Applications they generate) carry the canary ignore rules with
 * RespectIgnoreDifferences, argocd-cm has this stack's system rules and no rule that freezes a
 * Rollout or a canary route, and argocd-rbac-cm reserves the Rollout actions to the approver.
 *
 * Objects another owner keeps (`owner: external`) are judged by the program's own checks
 * (components/argocd/keptObjects.ts, the ones the preview runs); objects this stack patches
 * (`owner: addon`) must also still carry exactly what the stack wrote.
 */
import * as YAML from "yaml";
import { yamlErrorText } from "../../../components/config/yamlErrors";
import {
    BUILTIN_KINDS,
    HTTPROUTE,
    ROLLOUT,
    ResourceIgnoreDifferences,
    argocdCmIgnoreData,
    canaryRuleReasons,
    expandAllKinds,
    fromApplicationRule,
    kindLabel,
    rolloutArrayPathReasons,
} from "../../../components/argocd/ignoreRules";
import type { GroupKind, IgnoreRule } from "../../../components/argocd/ignoreRules";
import {
    KeptObjectRef,
    LiveAppProject,
    LiveApplicationSet,
    appProjectProblems,
    applicationSetProblems,
    coversSelectorKey,
    coversWeights,
} from "../../../components/argocd/keptObjects";
import { projectWhitelist } from "../../../components/argocd/projects";
import { ROLLOUT_ACTIONS_POLICY_KEY, rolloutActionsPolicyCsv } from "../../../components/argocd/rbac";
import { COMPARE_OPTIONS_ANNOTATION, RESPECT_IGNORE_DIFFERENCES, applicationSetPatch } from "../../../components/argocd/syncOptions";
import { GuardIdentities, argoIdentities, identityProblems } from "../argocdIdentities";
import { LiveProject, regulatedProjectProblems, regulatedRbacProblems, regulatedTargets } from "../regulatedPaths";
import { gitopsIdentities, serviceAccountUser } from "../../../components/policy";
import { regulatedNamespaces } from "./rbac";
import type { KubeObject, ReadOnlyCluster } from "../cluster";
import type { AddonConfig } from "../../../stacks/config";
import { CheckGroup, asArray, asRecord, canonical, field, nameOf, ref } from "../context";
import { CheckResult, Finding, DOCS, outcome, skipped } from "../report";

const ARGO = "/apis/argoproj.io/v1alpha1";
const IGNORE_KEY_PREFIX = "resource.customizations.ignoreDifferences.";

/** What an Application spec (or an ApplicationSet's template spec) lacks of what the stack patched in. */
export function missingTenantSettings(
    spec: unknown,
    annotations: Record<string, string>,
    expected: { syncOptions: string[]; ignoreDifferences: unknown[]; annotations: Record<string, string> },
): string[] {
    const out: string[] = [];
    const options = asArray<string>(field(spec, "syncPolicy", "syncOptions"));
    for (const o of expected.syncOptions) {
        if (!options.includes(o)) {
            out.push(`syncOptions lack ${o}${options.length ? ` (has: ${options.join(", ")})` : ""}`);
        }
    }
    const rules = new Set(asArray(field(spec, "ignoreDifferences")).map(canonical));
    for (const r of expected.ignoreDifferences) {
        if (!rules.has(canonical(r))) {
            out.push(`ignoreDifferences lack ${canonical(r)}`);
        }
    }
    for (const [k, v] of Object.entries(expected.annotations)) {
        if (annotations[k] !== v) {
            out.push(`annotation ${k} is ${annotations[k] === undefined ? "missing" : `"${annotations[k]}"`}, expected "${v}"`);
        }
    }
    return out;
}

/**
 * What a generated Application lacks for a canary, by the same rules the program applies to an
 * ApplicationSet's template (components/argocd/keptObjects.ts): an ApplicationSet's `templatePatch` or
 * a generator's values can override the template, so the rendered Applications are read too.
 */
export function applicationProblems(app: KubeObject): string[] {
    const spec = field(app, "spec");
    const out: string[] = [];
    const options = asArray<string>(field(spec, "syncPolicy", "syncOptions"));
    if (!options.includes(RESPECT_IGNORE_DIFFERENCES)) {
        out.push(
            `spec.syncPolicy.syncOptions lack ${RESPECT_IGNORE_DIFFERENCES}: a sync triggered by any other change reverts the plugin's weights and the controller's selector key (ADR-056 as-built 2026-06-27)`,
        );
    }
    const rules = asArray<ResourceIgnoreDifferences>(field(spec, "ignoreDifferences"));
    if (!rules.some(coversSelectorKey)) {
        out.push(
            "spec.ignoreDifferences has no rule for the Service selector key rollouts-pod-template-hash: selfHeal reverts the controller's selector switch (ADR-056 as-built #871)",
        );
    }
    if (!rules.some(coversWeights)) {
        out.push(
            "spec.ignoreDifferences has no rule for the canary weights of HTTPRoutes: selfHeal reverts the plugin's weights mid-canary (ADR-056 as-built 2026-06-26)",
        );
    }
    rules.forEach((raw, i) => {
        const reasons = rolloutArrayPathReasons(fromApplicationRule(raw));
        if (reasons.length > 0) {
            out.push(
                `spec.ignoreDifferences[${i}] reaches a Rollout with an array path (${reasons.join("; ")}): the sync keeps the Rollout's live arrays, images included (ADR-056 as-built 2026-07-14)`,
            );
        }
    });
    return out;
}

/** The kinds an argocd-cm ignoreDifferences key applies to: `.all` is every kind, else `<group>_<Kind>` or `<Kind>`. */
export function keyKinds(key: string): readonly Readonly<GroupKind>[] {
    const suffix = key.slice(IGNORE_KEY_PREFIX.length);
    if (suffix === "all") {
        // Every kind, CRDs included: what matters is what it does to a Rollout, a canary route
        // and a Service (a built-in kind).
        return [ROLLOUT, HTTPROUTE, ...BUILTIN_KINDS];
    }
    const cut = suffix.lastIndexOf("_");
    return [cut < 0 ? { group: "", kind: suffix } : { group: suffix.slice(0, cut), kind: suffix.slice(cut + 1) }];
}

/**
 * Why the rules under one argocd-cm key break a canary or freeze a Rollout, with the program's own
 * reasons (components/argocd/ignoreRules.ts): an array path reaching Rollout (as-built
 * 2026-07-14), an HTTPRoute rule into `spec.rules` or a whole-selector Service rule applied to
 * every Application (as-built #871).
 */
export function systemRuleReasons(key: string, text: string): string[] {
    let body: Record<string, unknown>;
    try {
        body = asRecord(YAML.parse(text) as unknown) as unknown as Record<string, unknown>;
    } catch (e) {
        return [`is not YAML (${yamlErrorText(e)})`];
    }
    const out = new Set<string>();
    for (const gk of keyKinds(key)) {
        const rule: IgnoreRule = {
            ...gk,
            jsonPointers: asArray<string>(body.jsonPointers),
            jqPathExpressions: asArray<string>(body.jqPathExpressions),
            managedFieldsManagers: asArray<string>(body.managedFieldsManagers),
        };
        for (const reason of rolloutArrayPathReasons(rule)) {
            out.add(
                `reaches ${kindLabel(ROLLOUT)} and ${reason}: with RespectIgnoreDifferences a sync keeps a Rollout's live arrays, images included (ADR-056 as-built 2026-07-14)`,
            );
        }
        for (const reason of canaryRuleReasons(rule, "system")) {
            out.add(`applies to ${kindLabel(gk)}: ${reason}`);
        }
    }
    return [...out];
}

const projectRef = (ns: string, name: string): KeptObjectRef => ({ namespace: ns, name, key: `argocd.projects.${name}` });
const appSetRef = (ns: string, name: string): KeptObjectRef => ({ namespace: ns, name, key: `argocd.applicationSets.${name}` });

export const argocdChecks: CheckGroup = async ({ config, cluster }) => {
    const cfg = config.argocd;
    const what = {
        projects: "AppProjects permit the Rollout kinds",
        appSets: "tenant ApplicationSets and their Applications respect the canary's ignore rules",
        cm: "argocd-cm carries the stack's system rules and no rule that freezes a Rollout or a canary route",
        rbac: "argocd-rbac-cm reserves the Rollout actions to the approver",
        regulated: "in the regulated projects ArgoCD lets approvers approve and lets deployers create, change, replace or delete no Rollout",
        regulatedProjects:
            "no AppProject outside the regulated ones reaches a regulated namespace, and no role or token of a regulated project syncs, changes or approves",
        identities: "the approval guard's GitOps and action identities are the ones ArgoCD acts as on the regulated namespaces",
    };
    if (!cfg.local) {
        const why = `argocd.runsOn is ${cfg.runsOn}: the ArgoCD of cluster ${cfg.runsOn} syncs this cluster's Applications; run verify for the stack of ${cfg.runsOn}, which lists these objects`;
        return [
            skipped("argocd.projects", what.projects, DOCS.argocd, why),
            skipped("argocd.applicationsets", what.appSets, DOCS.argocd, why),
            skipped("argocd.argocd-cm", what.cm, DOCS.argocd, why),
            skipped("argocd.rbac", what.rbac, DOCS.argocd, why),
            skipped("argocd.regulated-rbac", what.regulated, DOCS.argocd, why),
            skipped("argocd.regulated-projects", what.regulatedProjects, DOCS.argocd, why),
            await spokeIdentities(config, cluster, what.identities),
        ];
    }
    const ns = cfg.namespace;
    const results: CheckResult[] = [];

    if (cfg.projects.length === 0) {
        results.push(skipped("argocd.projects", what.projects, DOCS.argocd, "no argocd.projects in the stack"));
    } else {
        const findings: Finding[] = [];
        for (const p of cfg.projects) {
            const live = await cluster.get(`${ARGO}/namespaces/${ns}/appprojects/${p.name}`);
            const object = ref("AppProject", ns, p.name);
            if (!live) {
                findings.push({ object, found: `not found (argocd.projects.${p.name}, owner ${p.owner})` });
                continue;
            }
            findings.push(...appProjectProblems(projectRef(ns, p.name), { spec: live.spec as LiveAppProject["spec"] }).map((found) => ({ object, found })));
            if (p.owner === "addon") {
                // The stack owns the whole whitelist (an atomic list of a CRD): another manager's edit shows here.
                const want = projectWhitelist(p.namespaceResources);
                const have = field(live, "spec", "namespaceResourceWhitelist");
                if (canonical(have) !== canonical(want)) {
                    findings.push({
                        object,
                        found: `spec.namespaceResourceWhitelist is not the stack's (owner: addon): ${JSON.stringify(have ?? null)}; pulumi up restores it`,
                    });
                }
            }
        }
        results.push(outcome("argocd.projects", what.projects, DOCS.argocd, findings, cfg.projects.map((p) => `${p.name} (${p.owner})`).join(", ")));
    }

    if (cfg.applicationSets.length === 0) {
        results.push(skipped("argocd.applicationsets", what.appSets, DOCS.argocd, "no argocd.applicationSets in the stack"));
    } else {
        const findings: Finding[] = [];
        const apps = (await cluster.list(`${ARGO}/namespaces/${ns}/applications`)) ?? [];
        let generated = 0;
        for (const set of cfg.applicationSets) {
            const live = await cluster.get(`${ARGO}/namespaces/${ns}/applicationsets/${set.name}`);
            const object = ref("ApplicationSet", ns, set.name);
            if (!live) {
                findings.push({ object, found: `not found (argocd.applicationSets.${set.name}, owner ${set.owner})` });
                continue;
            }
            findings.push(
                ...applicationSetProblems(appSetRef(ns, set.name), { spec: live.spec as LiveApplicationSet["spec"] }).map((found) => ({ object, found })),
            );
            if (set.owner === "addon") {
                const template = applicationSetPatch(set, ns, cfg.allKinds).spec.template;
                const expected = {
                    syncOptions: template.spec.syncPolicy.syncOptions,
                    ignoreDifferences: template.spec.ignoreDifferences,
                    annotations: template.metadata.annotations,
                };
                for (const found of missingTenantSettings(
                    field(live, "spec", "template", "spec"),
                    asRecord(field(live, "spec", "template", "metadata", "annotations")),
                    expected,
                )) {
                    findings.push({ object, found: `template: ${found} (owner: addon; pulumi up restores it)` });
                }
            }
            for (const app of apps.filter((a) => (a.metadata?.ownerReferences ?? []).some((o) => o.kind === "ApplicationSet" && o.name === set.name))) {
                generated++;
                const problems = applicationProblems(app);
                if (set.owner === "addon" && (app.metadata?.annotations ?? {})[COMPARE_OPTIONS_ANNOTATION] === undefined) {
                    problems.push(`annotation ${COMPARE_OPTIONS_ANNOTATION} is missing: Kyverno's mutations show as drift`);
                }
                findings.push(
                    ...problems.map((found) => ({ object: ref("Application", ns, nameOf(app)), found: `${found} (generated by ApplicationSet ${set.name})` })),
                );
            }
        }
        results.push(
            outcome(
                "argocd.applicationsets",
                what.appSets,
                DOCS.argocd,
                findings,
                `${cfg.applicationSets.map((s) => `${s.name} (${s.owner})`).join(", ")}; ${generated} generated Applications read`,
            ),
        );
    }

    const cm = await cluster.get(`/api/v1/namespaces/${ns}/configmaps/argocd-cm`);
    const cmObject = ref("ConfigMap", ns, "argocd-cm");
    const cmFindings: Finding[] = [];
    const expected = argocdCmIgnoreData(expandAllKinds(cfg.ignoreDifferences, cfg.allKinds));
    if (!cm) {
        cmFindings.push({ object: cmObject, found: `not found: does ArgoCD run in namespace ${ns} of this cluster? (argocd.namespace, argocd.runsOn)` });
    } else {
        const data = asRecord(cm.data);
        for (const [key, value] of Object.entries(expected)) {
            if (data[key] === undefined) {
                cmFindings.push({ object: cmObject, found: `no key ${key} (argocd.ignoreDifferences)` });
            } else if (canonical(YAML.parse(data[key])) !== canonical(YAML.parse(value))) {
                cmFindings.push({ object: cmObject, found: `${key} differs from the stack's: ${data[key].trim().replace(/\n/g, " ")}` });
            }
        }
        for (const key of Object.keys(data)
            .filter((k) => k.startsWith(IGNORE_KEY_PREFIX))
            .sort()) {
            for (const reason of systemRuleReasons(key, data[key])) {
                cmFindings.push({ object: cmObject, found: `${key} ${reason}` });
            }
        }
    }
    const keys = Object.keys(expected).length;
    results.push(
        outcome(
            "argocd.argocd-cm",
            what.cm,
            DOCS.argocd,
            cmFindings,
            keys ? `${keys} key(s) of argocd.ignoreDifferences` : "no argocd.ignoreDifferences: the stack writes nothing here",
        ),
    );

    const csv = rolloutActionsPolicyCsv(cfg.rbac);
    const rbacCm =
        csv === undefined && cfg.rbac.regulatedProjects.length === 0 ? undefined : await cluster.get(`/api/v1/namespaces/${ns}/configmaps/argocd-rbac-cm`);
    const rbacObject = ref("ConfigMap", ns, "argocd-rbac-cm");
    if (csv === undefined) {
        results.push(skipped("argocd.rbac", what.rbac, DOCS.argocd, "no argocd.rbac.approverRole in the stack"));
    } else {
        const have = asRecord(rbacCm?.data)[ROLLOUT_ACTIONS_POLICY_KEY];
        const findings: Finding[] = !rbacCm
            ? [{ object: rbacObject, found: "not found" }]
            : have === undefined
              ? [{ object: rbacObject, found: `no key ${ROLLOUT_ACTIONS_POLICY_KEY}` }]
              : have.trim() !== csv.trim()
                ? [{ object: rbacObject, found: `${ROLLOUT_ACTIONS_POLICY_KEY} differs from the stack's policy` }]
                : [];
        results.push(outcome("argocd.rbac", what.rbac, DOCS.argocd, findings));
    }

    // The regulated gate through ArgoCD (ADR-056 D3): what argocd-rbac-cm, as ArgoCD's enforcer
    // reads it with the AppProjects' roles and policy.default, lets the configured groups do.
    const regulated = cfg.rbac.regulatedProjects;
    const allProjects = ((await cluster.list(`${ARGO}/namespaces/${ns}/appprojects`)) ?? []).map(liveProject);
    const namespaces = config.policy.regulated ? regulatedNamespaces(config, (await cluster.list("/api/v1/namespaces")) ?? []) : [];
    if (regulated.length === 0) {
        results.push(skipped("argocd.regulated-rbac", what.regulated, DOCS.argocd, "no argocd.rbac.regulatedProjects in the stack"));
    } else {
        const apps = ((await cluster.list(`${ARGO}/namespaces/${ns}/applications`)) ?? [])
            .map((a) => ({ project: String(field(a, "spec", "project") ?? ""), name: nameOf(a) }))
            .filter((a) => regulated.includes(a.project));
        const problems = await regulatedRbacProblems(cfg.rbac, {
            rbacCm: rbacCm ? asRecord(rbacCm.data) : undefined,
            argocdCm: cm ? asRecord(cm.data) : undefined,
            projects: allProjects.filter((p) => regulated.includes(p.name)),
            apps,
        });
        results.push(
            outcome(
                "argocd.regulated-rbac",
                what.regulated,
                DOCS.argocd,
                problems.map((found) => ({ object: found.startsWith("argocd-cm") ? cmObject : rbacObject, found })),
                `projects ${regulated.join(", ")}; approver groups ${cfg.rbac.approverGroups.join(", ") || "none"}; deployer groups ${cfg.rbac.deployerGroups.join(", ") || "none"}; ${apps.length} Application(s) asked about by name`,
            ),
        );
    }

    // The paths around the regulated projects' RBAC (ADR-056 D3): other projects' destinations,
    // project roles and tokens, Applications from other namespaces, Replace and Force syncs.
    if (regulated.length === 0) {
        results.push(skipped("argocd.regulated-projects", what.regulatedProjects, DOCS.argocd, "no argocd.rbac.regulatedProjects in the stack"));
    } else {
        const found = await regulatedProjectProblems(cfg.rbac, {
            projects: allProjects,
            targets: regulatedTargets(
                namespaces,
                allProjects.filter((p) => regulated.includes(p.name)),
            ),
            rbacCm: rbacCm ? asRecord(rbacCm.data) : undefined,
            apps: ((await cluster.list(`${ARGO}/namespaces/${ns}/applications`)) ?? []).map((a) => ({
                project: String(field(a, "spec", "project") ?? ""),
                name: nameOf(a),
                syncOptions: asArray<string>(field(a, "spec", "syncPolicy", "syncOptions")),
            })),
            allowReplaceOrForceSync: config.policy.regulated?.allowReplaceOrForceSync ?? false,
        });
        const missing = regulated
            .filter((p) => !allProjects.some((x) => x.name === p))
            .map((p) => ({ object: ref("AppProject", ns, p), found: "not found (argocd.rbac.regulatedProjects)" }));
        results.push(
            outcome(
                "argocd.regulated-projects",
                what.regulatedProjects,
                DOCS.argocd,
                [
                    ...missing,
                    ...found.map((f) => ({
                        object: f.object.replace(/^AppProject /, `AppProject ${ns}/`).replace(/^Application /, `Application ${ns}/`),
                        found: f.found,
                    })),
                ],
                `${allProjects.length} AppProject(s) read; regulated namespaces of this cluster: ${namespaces.join(", ") || "none"}`,
            ),
        );
    }

    // Who ArgoCD acts as on the regulated namespaces, against the guard's identities.
    const guard = config.policy.regulated;
    if (!guard) {
        results.push(skipped("argocd.regulated-identities", what.identities, DOCS.argocd, "no policy.regulated in the stack"));
    } else if (namespaces.length === 0 || regulated.length === 0) {
        results.push(
            skipped(
                "argocd.regulated-identities",
                what.identities,
                DOCS.argocd,
                namespaces.length === 0
                    ? "no namespace of this cluster matches policy.regulated.namespaceLabels"
                    : "no argocd.rbac.regulatedProjects in the stack",
            ),
        );
    } else {
        const own = await argoCdServiceAccounts(cluster, ns);
        const acting = argoIdentities(
            cm ? asRecord(cm.data) : {},
            allProjects.filter((p) => regulated.includes(p.name)),
            namespaces,
            own,
        );
        const ids = gitopsIdentities(guard);
        const guardIds: GuardIdentities = { gitops: ids.users, gitopsGroups: ids.groups, action: guard.actionServiceAccounts.map(serviceAccountUser) };
        results.push(
            outcome(
                "argocd.regulated-identities",
                what.identities,
                DOCS.argocd,
                identityProblems(guardIds, acting).map((found) => ({ object: "policy.regulated", found })),
                [...new Set(acting.map((a) => `${a.namespace}: sync as ${a.sync ?? "nobody"}, API server as ${a.server ?? "nobody"}`))].join("; ") ||
                    "no regulated project may target a regulated namespace of this cluster",
            ),
        );
    }
    return results;
};

/** A live AppProject, as the regulated checks read it: destinations, source namespaces, impersonation and roles with their tokens. */
export function liveProject(o: KubeObject): LiveProject {
    const spec = field(o, "spec");
    const byRole = asRecord(field(o, "status", "jwtTokensByRole") as Record<string, string> | undefined) as unknown as Record<string, unknown>;
    return {
        name: nameOf(o),
        destinations: asArray(field(spec, "destinations")),
        sourceNamespaces: asArray<string>(field(spec, "sourceNamespaces")),
        destinationServiceAccounts: asArray(field(spec, "destinationServiceAccounts")),
        roles: asArray(field(spec, "roles")).map((r) => {
            const name = String(field(r, "name") ?? "");
            const tokens = [...asArray(field(r, "jwtTokens")), ...asArray(field(byRole?.[name], "items"))].map((t) =>
                String(field(t, "id") ?? field(t, "iat") ?? ""),
            );
            return { name, policies: asArray<string>(field(r, "policies")), groups: asArray<string>(field(r, "groups")), tokens: [...new Set(tokens)] };
        }),
    };
}

/**
 * ArgoCD's application controller's and API server's ServiceAccounts, read from their workloads by
 * the component label ArgoCD's manifests and chart give them (`app.kubernetes.io/component`:
 * application-controller, a StatefulSet or, with dynamic sharding, a Deployment; server).
 */
async function argoCdServiceAccounts(cluster: ReadOnlyCluster, ns: string): Promise<{ controller?: string; server?: string }> {
    const workloads = [
        ...((await cluster.list(`/apis/apps/v1/namespaces/${ns}/statefulsets`)) ?? []),
        ...((await cluster.list(`/apis/apps/v1/namespaces/${ns}/deployments`)) ?? []),
    ];
    const sa = (component: string): string | undefined => {
        const w = workloads.find((x) => x.metadata?.labels?.["app.kubernetes.io/component"] === component);
        return w ? `system:serviceaccount:${ns}:${String(field(w, "spec", "template", "spec", "serviceAccountName") ?? "default")}` : undefined;
    };
    return { controller: sa("application-controller"), server: sa("server") };
}

/**
 * On a cluster another cluster's ArgoCD syncs (argocd.runsOn), its sync and its API server arrive
 * alike, with its cluster Secret's credentials (`argocd cluster add` makes the ServiceAccount
 * kube-system/argocd-manager; on EKS an IAM role maps to a user name and groups), and this
 * cluster's verify cannot read that ArgoCD's settings. What it can see: each ServiceAccount the
 * guard names exists here, or the guard names an identity nobody arrives as.
 */
async function spokeIdentities(config: AddonConfig, cluster: ReadOnlyCluster, what: string): Promise<CheckResult> {
    const guard = config.policy.regulated;
    if (!guard) {
        return skipped("argocd.regulated-identities", what, DOCS.argocd, "no policy.regulated in the stack");
    }
    const findings: Finding[] = [];
    for (const sa of [...guard.gitopsServiceAccounts, ...guard.actionServiceAccounts]) {
        if (!(await cluster.get(`/api/v1/namespaces/${sa.namespace}/serviceaccounts/${sa.name}`))) {
            findings.push({
                object: ref("ServiceAccount", sa.namespace, sa.name),
                found: `not found, yet policy.regulated names it: the ArgoCD of cluster ${config.argocd.runsOn} reaches this cluster with its cluster Secret's identity (argocd cluster add: kube-system/argocd-manager; on EKS the IAM role's mapped user and groups, policy.regulated.gitopsUsers, gitopsGroups), for its syncs and its API server alike`,
            });
        }
    }
    return outcome(
        "argocd.regulated-identities",
        what,
        DOCS.argocd,
        findings,
        `ArgoCD runs on cluster ${config.argocd.runsOn}: its sync impersonation and cluster Secret are read there, not here; each ServiceAccount policy.regulated names was looked up on this cluster`,
    );
}
