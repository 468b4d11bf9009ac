/** ArgoCD where it syncs this cluster (ADR-056 D2, D3), and nobody around the regulated approval (../regulatedPaths.ts, ../argocdIdentities.ts). */
import * as YAML from "yaml";
import {
    BUILTIN_KINDS,
    HTTPROUTE,
    IgnoreRule,
    ROLLOUT,
    argocdCmIgnoreData,
    canaryRuleReasons,
    expandAllKinds,
    kindLabel,
    rolloutArrayPathReasons,
} from "../../../components/argocd/ignoreRules";
import type { GroupKind } from "../../../components/argocd/ignoreRules";
import {
    LiveAppProject,
    LiveApplicationSet,
    TenantSpec,
    appProjectProblems,
    applicationSetProblems,
    tenantSpecProblems,
} from "../../../components/argocd/keptObjects";
import { projectWhitelist } from "../../../components/argocd/projects";
import { ROLLOUT_ACTIONS_POLICY_KEY, rolloutActionsPolicyCsv } from "../../../components/argocd/rbac";
import { COMPARE_OPTIONS_ANNOTATION, applicationSetPatch } from "../../../components/argocd/syncOptions";
import { gitopsIdentities, serviceAccountUser } from "../../../components/policy";
import type { AddonConfig } from "../../../stacks/config";
import { argoCdServiceAccounts, argoIdentities, identityProblems } from "../argocdIdentities";
import type { ReadOnlyCluster } from "../cluster";
import { CheckGroup, asArray, asRecord, canonical, drift, field, nameOf, ref } from "../context";
import { CheckResult, DOCS, Finding, checks } from "../report";
import { liveProject, regulatedProjectProblems, regulatedRbacProblems, regulatedTargets, templatedSetProblems } from "../regulatedPaths";
import { regulatedNamespaces } from "./rbac";

const ARGO = "/apis/argoproj.io/v1alpha1";
const IGNORE_KEY_PREFIX = "resource.customizations.ignoreDifferences.";
const C = checks(DOCS.argocd, {
    "argocd.projects": "AppProjects permit the Rollout kinds",
    "argocd.applicationsets": "tenant ApplicationSets and their Applications respect the canary's ignore rules",
    "argocd.argocd-cm": "argocd-cm carries the stack's system rules and no rule that freezes a Rollout or a canary route",
    "argocd.rbac": "argocd-rbac-cm reserves the Rollout actions to the approver",
    "argocd.regulated-rbac": "in the regulated projects ArgoCD lets approvers approve and lets deployers create, change, replace or delete no Rollout",
    "argocd.regulated-projects":
        "no AppProject outside the regulated ones reaches a regulated namespace, no role or token of a regulated project syncs, changes or approves, and no ApplicationSet templates a project or revision",
    "argocd.regulated-identities": "the approval guard's GitOps and action identities are the ones ArgoCD acts as on the regulated namespaces",
});
type Id = typeof C.ids extends (infer I)[] ? (I extends `argocd.${infer S}` ? S : never) : never;
const done = (id: Id, findings: Finding[], note?: string) => C.done(`argocd.${id}`, findings, note);
const skip = (id: Id, why: string) => C.skip(`argocd.${id}`, why);
const owned = (drifted: string) => `${drifted} (owner: addon); pulumi up restores it`;

/** The kinds an argocd-cm ignoreDifferences key applies to: `.all` is every kind (what matters: Rollout, a canary route, Service), else `<group>_<Kind>` or `<Kind>`. */
function keyKinds(key: string): readonly Readonly<GroupKind>[] {
    const suffix = key.slice(IGNORE_KEY_PREFIX.length);
    const cut = suffix.lastIndexOf("_");
    return suffix === "all"
        ? [ROLLOUT, HTTPROUTE, ...BUILTIN_KINDS]
        : [cut < 0 ? { group: "", kind: suffix } : { group: suffix.slice(0, cut), kind: suffix.slice(cut + 1) }];
}

/** Why the rules under one argocd-cm key freeze a Rollout (as-built 2026-07-14) or break a canary for every Application (as-built #871). */
function systemRuleReasons(key: string, text: string): string[] {
    let body: Record<string, unknown>;
    try {
        body = asRecord(YAML.parse(text) as unknown) as unknown as Record<string, unknown>;
    } catch {
        return ["is not YAML: ArgoCD reads none of its rules"];
    }
    const out = new Set<string>();
    for (const gk of keyKinds(key)) {
        const rule: IgnoreRule = {
            ...gk,
            ...Object.fromEntries(["jsonPointers", "jqPathExpressions", "managedFieldsManagers"].map((k) => [k, asArray<string>(body[k])])),
        } as IgnoreRule;
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

export const argocdChecks: CheckGroup = {
    ...C,
    run: async ({ config, cluster }) => {
        const cfg = config.argocd;
        if (!cfg.local) {
            const why = `argocd.runsOn is ${cfg.runsOn}: the ArgoCD of cluster ${cfg.runsOn} syncs this cluster's Applications; run verify for the stack of ${cfg.runsOn}, which lists these objects`;
            return [
                ...(["projects", "applicationsets", "argocd-cm", "rbac", "regulated-rbac", "regulated-projects"] as const).map((id) => skip(id, why)),
                await spokeIdentities(config, cluster),
            ];
        }
        const ns = cfg.namespace;
        const get = async (kind: string, name: string) => cluster.get(`${ARGO}/namespaces/${ns}/${kind}/${name}`);
        const apps = (await cluster.list(`${ARGO}/namespaces/${ns}/applications`)) ?? [];
        const results: CheckResult[] = [];

        const projectFindings: Finding[] = [];
        for (const p of cfg.projects) {
            const live = await get("appprojects", p.name);
            const object = ref("AppProject", ns, p.name);
            const key = `argocd.projects.${p.name}`;
            const found = !live
                ? [`not found (${key}, owner ${p.owner})`]
                : appProjectProblems({ namespace: ns, name: p.name, key }, { spec: live.spec as LiveAppProject["spec"] });
            // The stack owns the whole whitelist (an atomic list of a CRD): another manager's edit shows here.
            if (live && p.owner === "addon") {
                const want = projectWhitelist(p.namespaceResources);
                found.push(...drift(want, field(live, "spec", "namespaceResourceWhitelist"), "spec.namespaceResourceWhitelist").map(owned));
            }
            projectFindings.push(...found.map((f) => ({ object, found: f })));
        }
        results.push(
            cfg.projects.length === 0
                ? skip("projects", "no argocd.projects in the stack")
                : done("projects", projectFindings, cfg.projects.map((p) => `${p.name} (${p.owner})`).join(", ")),
        );

        const setFindings: Finding[] = [];
        let generated = 0;
        for (const set of cfg.applicationSets) {
            const live = await get("applicationsets", set.name);
            const object = ref("ApplicationSet", ns, set.name);
            if (!live) {
                setFindings.push({ object, found: `not found (argocd.applicationSets.${set.name}, owner ${set.owner})` });
                continue;
            }
            const found = applicationSetProblems(
                { namespace: ns, name: set.name, key: `argocd.applicationSets.${set.name}` },
                { spec: live.spec as LiveApplicationSet["spec"] },
            );
            if (set.owner === "addon") {
                // The stack owns these atomic lists and annotations whole: another manager's edit shows here.
                const { metadata, spec } = applicationSetPatch(set, ns, cfg.allKinds).spec.template;
                const want = { metadata, spec: { syncPolicy: { syncOptions: spec.syncPolicy.syncOptions }, ignoreDifferences: spec.ignoreDifferences } };
                found.push(...drift(want, field(live, "spec", "template"), "spec.template").map(owned));
            }
            setFindings.push(...found.map((f) => ({ object, found: f })));
            // A templatePatch or a generator's values can override the template: the generated Applications are read too.
            for (const app of apps.filter((a) => (a.metadata?.ownerReferences ?? []).some((o) => o.kind === "ApplicationSet" && o.name === set.name))) {
                generated++;
                const problems = tenantSpecProblems("spec", field(app, "spec") as TenantSpec);
                if (set.owner === "addon" && (app.metadata?.annotations ?? {})[COMPARE_OPTIONS_ANNOTATION] === undefined) {
                    problems.push(`annotation ${COMPARE_OPTIONS_ANNOTATION} is missing: Kyverno's mutations show as drift`);
                }
                setFindings.push(
                    ...problems.map((f) => ({ object: ref("Application", ns, nameOf(app)), found: `${f} (generated by ApplicationSet ${set.name})` })),
                );
            }
        }
        results.push(
            cfg.applicationSets.length === 0
                ? skip("applicationsets", "no argocd.applicationSets in the stack")
                : done(
                      "applicationsets",
                      setFindings,
                      `${cfg.applicationSets.map((s) => `${s.name} (${s.owner})`).join(", ")}; ${generated} generated Applications read`,
                  ),
        );

        const cm = await cluster.get(`/api/v1/namespaces/${ns}/configmaps/argocd-cm`);
        const cmData = cm ? asRecord(cm.data) : undefined;
        const cmObject = ref("ConfigMap", ns, "argocd-cm");
        const expected = argocdCmIgnoreData(expandAllKinds(cfg.ignoreDifferences, cfg.allKinds));
        const cmFindings: string[] = !cmData
            ? [`not found: does ArgoCD run in namespace ${ns} of this cluster? (argocd.namespace, argocd.runsOn)`]
            : [
                  ...Object.entries(expected).flatMap(([key, value]) =>
                      cmData[key] === undefined
                          ? [`no key ${key} (argocd.ignoreDifferences)`]
                          : canonical(YAML.parse(cmData[key])) !== canonical(YAML.parse(value))
                            ? [`${key} differs from the stack's: ${cmData[key].trim().replace(/\n/g, " ")}`]
                            : [],
                  ),
                  ...Object.keys(cmData)
                      .filter((k) => k.startsWith(IGNORE_KEY_PREFIX))
                      .sort()
                      .flatMap((key) => systemRuleReasons(key, cmData[key]).map((reason) => `${key} ${reason}`)),
              ];
        const keys = Object.keys(expected).length;
        results.push(
            done(
                "argocd-cm",
                cmFindings.map((found) => ({ object: cmObject, found })),
                keys ? `${keys} key(s) of argocd.ignoreDifferences` : "no argocd.ignoreDifferences: the stack writes nothing here",
            ),
        );

        const csv = rolloutActionsPolicyCsv(cfg.rbac);
        const regulated = cfg.rbac.regulatedProjects;
        const rbacCm = csv === undefined && regulated.length === 0 ? undefined : await cluster.get(`/api/v1/namespaces/${ns}/configmaps/argocd-rbac-cm`);
        const rbacData = rbacCm ? asRecord(rbacCm.data) : undefined;
        const rbacObject = ref("ConfigMap", ns, "argocd-rbac-cm");
        const have = rbacData?.[ROLLOUT_ACTIONS_POLICY_KEY];
        const rbacFinding = !rbacData
            ? "not found"
            : have === undefined
              ? `no key ${ROLLOUT_ACTIONS_POLICY_KEY}`
              : have.trim() !== csv?.trim()
                ? `${ROLLOUT_ACTIONS_POLICY_KEY} differs from the stack's policy`
                : undefined;
        results.push(
            csv === undefined
                ? skip("rbac", "no argocd.rbac.approverRole in the stack")
                : done("rbac", rbacFinding ? [{ object: rbacObject, found: rbacFinding }] : []),
        );

        // The regulated gate through ArgoCD (ADR-056 D3): its RBAC, the paths around it, and who ArgoCD acts as.
        if (regulated.length === 0) {
            const why = "no argocd.rbac.regulatedProjects in the stack";
            return [
                ...results,
                skip("regulated-rbac", why),
                skip("regulated-projects", why),
                config.policy.regulated ? skip("regulated-identities", why) : skip("regulated-identities", "no policy.regulated in the stack"),
            ];
        }
        const allProjects = ((await cluster.list(`${ARGO}/namespaces/${ns}/appprojects`)) ?? []).map(liveProject);
        const regulatedProjects = allProjects.filter((p) => regulated.includes(p.name));
        const sets = (await cluster.list(`${ARGO}/namespaces/${ns}/applicationsets`)) ?? [];
        const namespaces = config.policy.regulated ? regulatedNamespaces(config, (await cluster.list("/api/v1/namespaces")) ?? []) : [];
        const liveApps = apps.map((a) => ({
            project: String(field(a, "spec", "project") ?? ""),
            name: nameOf(a),
            syncOptions: asArray<string>(field(a, "spec", "syncPolicy", "syncOptions")),
        }));
        const askedApps = liveApps.filter((a) => regulated.includes(a.project));
        const rbacProblems = await regulatedRbacProblems(cfg.rbac, { rbacCm: rbacData, argocdCm: cmData, projects: regulatedProjects, apps: askedApps });
        results.push(
            done(
                "regulated-rbac",
                rbacProblems.map((found) => ({ object: found.startsWith("argocd-cm") ? cmObject : rbacObject, found })),
                `projects ${regulated.join(", ")}; approver groups ${cfg.rbac.approverGroups.join(", ") || "none"}; deployer groups ${cfg.rbac.deployerGroups.join(", ") || "none"}; ${askedApps.length} Application(s) asked about by name`,
            ),
        );
        const paths = await regulatedProjectProblems(cfg.rbac, {
            projects: allProjects,
            targets: regulatedTargets(namespaces, regulatedProjects),
            rbacCm: rbacData,
            apps: liveApps,
            allowReplaceOrForceSync: config.policy.regulated?.allowReplaceOrForceSync ?? false,
        });
        results.push(
            done(
                "regulated-projects",
                [
                    ...regulated
                        .filter((p) => !allProjects.some((x) => x.name === p))
                        .map((p) => ({ object: ref("AppProject", ns, p), found: "not found (argocd.rbac.regulatedProjects)" })),
                    ...[...paths, ...templatedSetProblems(sets)].map((f) => ({
                        object: f.object.replace(/^(AppProject|Application|ApplicationSet) /, `$1 ${ns}/`),
                        found: f.found,
                    })),
                ],
                `${allProjects.length} AppProject(s) read; regulated namespaces of this cluster: ${namespaces.join(", ") || "none"}; ${sets.length} ApplicationSet(s) read`,
            ),
        );

        // Who ArgoCD acts as on the regulated namespaces, against the guard's identities.
        const guard = config.policy.regulated;
        if (!guard || namespaces.length === 0) {
            results.push(
                skip(
                    "regulated-identities",
                    guard ? "no namespace of this cluster matches policy.regulated.namespaceLabels" : "no policy.regulated in the stack",
                ),
            );
            return results;
        }
        const acting = argoIdentities(cmData ?? {}, regulatedProjects, namespaces, await argoCdServiceAccounts(cluster, ns));
        const ids = gitopsIdentities(guard);
        results.push(
            done(
                "regulated-identities",
                identityProblems({ gitops: ids.users, gitopsGroups: ids.groups, action: guard.actionServiceAccounts.map(serviceAccountUser) }, acting).map(
                    (found) => ({ object: "policy.regulated", found }),
                ),
                [...new Set(acting.map((a) => `${a.namespace}: sync as ${a.sync ?? "nobody"}, API server as ${a.server ?? "nobody"}`))].join("; ") ||
                    "no regulated project may target a regulated namespace of this cluster",
            ),
        );
        return results;
    },
};

/** Where another cluster's ArgoCD syncs this one its settings are not readable here: only whether each ServiceAccount the guard names exists. */
async function spokeIdentities(config: AddonConfig, cluster: ReadOnlyCluster): Promise<CheckResult> {
    const guard = config.policy.regulated;
    if (!guard) return skip("regulated-identities", "no policy.regulated in the stack");
    const findings: Finding[] = [];
    for (const sa of [...guard.gitopsServiceAccounts, ...guard.actionServiceAccounts]) {
        if (!(await cluster.get(`/api/v1/namespaces/${sa.namespace}/serviceaccounts/${sa.name}`))) {
            findings.push({
                object: ref("ServiceAccount", sa.namespace, sa.name),
                found: `not found, yet policy.regulated names it: the ArgoCD of cluster ${config.argocd.runsOn} reaches this cluster with its cluster Secret's identity (argocd cluster add: kube-system/argocd-manager; on EKS the IAM role's mapped user and groups, policy.regulated.gitopsUsers, gitopsGroups), for its syncs and its API server alike`,
            });
        }
    }
    return done(
        "regulated-identities",
        findings,
        `ArgoCD runs on cluster ${config.argocd.runsOn}: its sync impersonation and cluster Secret are read there, not here; each ServiceAccount policy.regulated names was looked up on this cluster`,
    );
}
