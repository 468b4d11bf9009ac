/**
 * ArgoCD (ADR-056 D2 and the as-built corrections): projects permit the Rollout kinds, tenant
 * ApplicationSets (and the Applications they generate) respect the ignore rules, argocd-cm has
 * this stack's keys and no global rule that freezes a Rollout, and the Rollout actions RBAC.
 */
import * as YAML from "yaml";
import { HTTPROUTE_WEIGHTS_RULE, ROLLOUT, argocdCmIgnoreData, expandAllKinds, rolloutArrayPathReasons } from "../../../components/argocd/ignoreRules";
import { projectWhitelist } from "../../../components/argocd/projects";
import { ROLLOUT_ACTIONS_POLICY_KEY, rolloutActionsPolicyCsv } from "../../../components/argocd/rbac";
import { applicationSetPatch } from "../../../components/argocd/syncOptions";
import type { GroupKind } from "../../../components/config/admission";
import type { KubeObject } from "../cluster";
import { CheckGroup, asArray, asRecord, field, nameOf, ref } from "../context";
import { CheckResult, Finding, README, outcome, skipped } from "../report";

const ARGO = "/apis/argoproj.io/v1alpha1";

/** ArgoCD matches whitelist entries with filepath.Match globs (argo-cd pkg/apis/application/v1alpha1 isResourceInList). */
function globMatch(pattern: string, value: string): boolean {
    const re = pattern.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]");
    return new RegExp(`^${re}$`).test(value);
}

const inList = (gk: GroupKind, list: readonly GroupKind[]): boolean => list.some((i) => globMatch(i.kind ?? "", gk.kind) && globMatch(i.group ?? "", gk.group));

/**
 * Whether a project lets Applications sync a namespaced kind (argo-cd app_project_types.go
 * IsGroupKindNamePermitted: no whitelist permits everything, an empty one nothing; the blacklist wins).
 */
export function projectPermits(project: KubeObject, gk: GroupKind): boolean {
    const white = field(project, "spec", "namespaceResourceWhitelist");
    const black = asArray<GroupKind>(field(project, "spec", "namespaceResourceBlacklist"));
    const whitelisted = white === undefined || white === null || (Array.isArray(white) && white.length > 0 && inList(gk, white as GroupKind[]));
    return whitelisted && !inList(gk, black);
}

/** JSON with sorted keys, so two objects compare by content. */
export function canonical(v: unknown): string {
    if (Array.isArray(v)) {
        return `[${v.map(canonical).join(",")}]`;
    }
    if (v !== null && typeof v === "object") {
        return `{${Object.keys(v)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
            .join(",")}}`;
    }
    return JSON.stringify(v);
}

/** What an Application spec (or an ApplicationSet's template spec) lacks of the tenant settings. */
export function missingTenantSettings(spec: unknown, annotations: Record<string, string>, expected: { syncOptions: string[]; ignoreDifferences: unknown[]; annotations: Record<string, string> }): string[] {
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

/** An argocd-cm rule under `.all`: a path through an array reaches Rollout too (as-built 2026-07-14). */
export function globalRuleReasons(text: string | undefined): string[] {
    if (!text) {
        return [];
    }
    const body = asRecord(YAML.parse(text) as unknown) as unknown as Record<string, unknown>;
    return rolloutArrayPathReasons({
        ...ROLLOUT,
        jsonPointers: asArray<string>(body.jsonPointers),
        jqPathExpressions: asArray<string>(body.jqPathExpressions),
        managedFieldsManagers: asArray<string>(body.managedFieldsManagers),
    });
}

export const argocdChecks: CheckGroup = async ({ config, cluster }) => {
    const cfg = config.argocd;
    const what = {
        projects: "AppProjects permit the Rollout kinds",
        appSets: "tenant ApplicationSets and their Applications respect the ignore rules",
        cm: "argocd-cm carries this stack's ignore rules and no global rule reaching Rollout",
        rbac: "argocd-rbac-cm reserves the Rollout actions to the approver",
    };
    if (!cfg.local) {
        const why = `argocd.runsOn is ${cfg.runsOn}: that cluster's ArgoCD syncs this cluster's Applications`;
        return [
            skipped("argocd.projects", what.projects, README.argocd, why),
            skipped("argocd.applicationsets", what.appSets, README.argocd, why),
            skipped("argocd.argocd-cm", what.cm, README.argocd, why),
            skipped("argocd.rbac", what.rbac, README.argocd, why),
        ];
    }
    const ns = cfg.namespace;
    const results: CheckResult[] = [];

    if (cfg.projects.length === 0) {
        results.push(skipped("argocd.projects", what.projects, README.argocd, "no argocd.projects in the stack"));
    } else {
        const findings: Finding[] = [];
        for (const p of cfg.projects) {
            const live = await cluster.get(`${ARGO}/namespaces/${ns}/appprojects/${p.name}`);
            const object = ref("AppProject", ns, p.name);
            if (!live) {
                findings.push({ object, found: "not found" });
                continue;
            }
            const refused = projectWhitelist(p.namespaceResources).filter((gk) => !projectPermits(live, gk));
            if (refused.length > 0) {
                findings.push({ object, found: `does not permit ${refused.map((gk) => (gk.group ? `${gk.group}/${gk.kind}` : gk.kind)).join(", ")}: ArgoCD refuses to sync them and hides them from the tree` });
            }
        }
        results.push(outcome("argocd.projects", what.projects, README.argocd, findings));
    }

    if (cfg.applicationSets.length === 0) {
        results.push(skipped("argocd.applicationsets", what.appSets, README.argocd, "no argocd.applicationSets in the stack"));
    } else {
        const findings: Finding[] = [];
        const apps = (await cluster.list(`${ARGO}/namespaces/${ns}/applications`)) ?? [];
        let generated = 0;
        for (const set of cfg.applicationSets) {
            const template = applicationSetPatch(set, ns, cfg.allKinds).spec.template;
            const expected = { syncOptions: template.spec.syncPolicy.syncOptions, ignoreDifferences: template.spec.ignoreDifferences, annotations: template.metadata.annotations };
            const live = await cluster.get(`${ARGO}/namespaces/${ns}/applicationsets/${set.name}`);
            const object = ref("ApplicationSet", ns, set.name);
            if (!live) {
                findings.push({ object, found: "not found" });
                continue;
            }
            for (const found of missingTenantSettings(field(live, "spec", "template", "spec"), asRecord(field(live, "spec", "template", "metadata", "annotations")), expected)) {
                findings.push({ object, found: `template: ${found}` });
            }
            // The set's controller renders Applications from the template; a templatePatch or a
            // generator's values can still override it, so the Applications themselves are read too.
            for (const app of apps.filter((a) => (a.metadata?.ownerReferences ?? []).some((o) => o.kind === "ApplicationSet" && o.name === set.name))) {
                generated++;
                for (const found of missingTenantSettings(field(app, "spec"), app.metadata?.annotations ?? {}, expected)) {
                    findings.push({ object: ref("Application", ns, nameOf(app)), found: `${found} (generated by ApplicationSet ${set.name})` });
                }
            }
        }
        results.push(outcome("argocd.applicationsets", what.appSets, README.argocd, findings, `${generated} generated Applications read`));
    }

    const cm = await cluster.get(`/api/v1/namespaces/${ns}/configmaps/argocd-cm`);
    const cmObject = ref("ConfigMap", ns, "argocd-cm");
    const cmFindings: Finding[] = [];
    if (!cm) {
        cmFindings.push({ object: cmObject, found: "not found: does ArgoCD run here? (argocd.enabled: false if not)" });
    } else {
        const data = asRecord(cm.data);
        const expected = argocdCmIgnoreData([HTTPROUTE_WEIGHTS_RULE, ...expandAllKinds(cfg.ignoreDifferences, cfg.allKinds)]);
        for (const [key, value] of Object.entries(expected)) {
            if (data[key] === undefined) {
                cmFindings.push({ object: cmObject, found: `no key ${key}` });
            } else if (canonical(YAML.parse(data[key])) !== canonical(YAML.parse(value))) {
                cmFindings.push({ object: cmObject, found: `${key} differs from the stack's: ${data[key].trim().replace(/\n/g, " ")}` });
            }
        }
        const allKey = "resource.customizations.ignoreDifferences.all";
        const reasons = globalRuleReasons(data[allKey]);
        if (reasons.length > 0) {
            cmFindings.push({ object: cmObject, found: `${allKey} applies to Rollout too and ${reasons.join("; ")}: with RespectIgnoreDifferences a sync keeps a Rollout's live arrays, images included` });
        }
    }
    results.push(outcome("argocd.argocd-cm", what.cm, README.argocd, cmFindings));

    const csv = rolloutActionsPolicyCsv(cfg.rbac);
    if (csv === undefined) {
        results.push(skipped("argocd.rbac", what.rbac, README.argocd, "no argocd.rbac.approverRole in the stack"));
    } else {
        const rbacCm = await cluster.get(`/api/v1/namespaces/${ns}/configmaps/argocd-rbac-cm`);
        const object = ref("ConfigMap", ns, "argocd-rbac-cm");
        const have = asRecord(rbacCm?.data)[ROLLOUT_ACTIONS_POLICY_KEY];
        const findings: Finding[] = !rbacCm ? [{ object, found: "not found" }] : have === undefined ? [{ object, found: `no key ${ROLLOUT_ACTIONS_POLICY_KEY}` }] : have.trim() !== csv.trim() ? [{ object, found: `${ROLLOUT_ACTIONS_POLICY_KEY} differs from the stack's policy` }] : [];
        results.push(outcome("argocd.rbac", what.rbac, README.argocd, findings));
    }
    return results;
};

