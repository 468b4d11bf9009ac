import { defaultsOf, field, type Fields, type Values } from "../../config/declare";
import { DNS_LABEL, DNS_SUBDOMAIN, IDENTITY_TEXT, WILDCARD, NAMESPACE_RULE } from "../../config/reader";
import { BUILTIN_KINDS, type GroupKind, type IgnoreRule } from "../ignoreRules";
import { ARGO_OBJECT_OWNERS, ArgoObjectOwner } from "../ownership";

/**
 * The argocd-apps stage's configuration section, `argocd` (ADR-056 D2, D3 and the as-built
 * corrections): its declaration, types and defaults. Its reader and the preflight of the ADR's
 * traps are ../preflight.ts.
 */

/**
 * ArgoCD's built-in Rollout actions, one folder each under argo-cd
 * `resource_customizations/argoproj.io/Rollout/actions/` (pause and skip-current-step since
 * v3.1.0). There is no `promote`: a line naming an action ArgoCD does not have does nothing, silently.
 */
export const ARGOCD_ROLLOUT_ACTIONS: readonly string[] = ["abort", "pause", "promote-full", "restart", "resume", "retry", "skip-current-step"];
export const ROLLOUT_ACTIONS_SINCE_3_1: readonly string[] = ["pause", "skip-current-step"];

/**
 * The actions that move a rollout past a gate or stop it, reserved to the approver by default:
 * `resume` clears a pause (the regulated manual gate is a `pause: {}` step), `promote-full` skips
 * every remaining step, `skip-current-step` one, `abort` rolls back. `retry`, `pause` and `restart`
 * pass no gate and stay with the deployers.
 */
export const APPROVER_ROLLOUT_ACTIONS: readonly string[] = ["resume", "promote-full", "skip-current-step", "abort"];

const API_GROUP = "([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?";
const KIND = "[A-Z][A-Za-z0-9]*";

/**
 * ignoreDifferences paths in a documented subset. ArgoCD compiles a jq path as `del(<path>)` with
 * gojq, and one gojq refuses fails the diff of every Application the rule applies to (argo-cd v3.5.1
 * util/argo/normalizers/diff_normalizer.go): rather than restate gojq's grammar, plain paths only
 * (test/ignorePaths.test.ts keeps gojq's verdicts). A JSON pointer (RFC 6901) must not end in `/-`,
 * which json-patch's remove cannot follow.
 */
const JQ_KEY = '"[^"\\\\\\x00-\\x1f]*"';
const JQ_FIELDS = `\\.([A-Za-z_][A-Za-z0-9_]*|\\[(${JQ_KEY}|0|[1-9][0-9]*)?\\])(\\.[A-Za-z_][A-Za-z0-9_]*|\\[(${JQ_KEY}|0|[1-9][0-9]*)?\\])*`;
export const JQ_PATH = new RegExp(`^${JQ_FIELDS}(\\s*\\|\\s*(${JQ_FIELDS}|select\\(\\s*${JQ_FIELDS}\\s*==\\s*${JQ_KEY}\\s*\\)))*$`);
export const JSON_POINTER = /^(?!.*\/-$)(\/([^/~\s]|~[01])*)+$/;
const PLAIN_JQ = '.field, ["key"], [], [n] and | select(.field == "value")';

/** An ArgoCD RBAC subject: ArgoCD reads each policy line with Go's encoding/csv (util/rbac/rbac.go `loadPolicyLine`), so no comma, blank, quote or `#`. */
const RBAC_SUBJECT_RULE = { pattern: /^[^\s,#"]+$/, describe: "an ArgoCD role or SSO group such as role:approver (no spaces, commas, quotes or #)" };
/** An SSO group as the IdP names it, quoted by csvField (../rbac.ts); no `*` or `?`: the same names reach Kyverno (../../config/identity.ts). */
const SSO_GROUP_RULE = {
    pattern: IDENTITY_TEXT,
    valid: (g: string) => !WILDCARD.test(g),
    describe: "an SSO group as ArgoCD sees it in the token's groups claim (blanks inside allowed; no * or ?)",
};
const PROJECT_NAME_RULE = { pattern: DNS_SUBDOMAIN, describe: "an AppProject name" };
const OBJECT_NAME = { pattern: DNS_SUBDOMAIN, describe: "a Kubernetes object name (lowercase letters, digits, '-', '.')", maxLength: 253 };
const WHERE_ARGOCD_RUNS = "required where ArgoCD runs (argocd.runsOn is this cluster)";

const OWNER = field.oneOf(ARGO_OBJECT_OWNERS, {
    default: "external",
    doc: "external (another owner keeps it: read and checked, nothing declared on it) or addon (this stack patches it)",
});
/** `{group, kind}`; `*` where ArgoCD reads a glob (a project's whitelist). */
const groupKind = (globs: boolean) => {
    const or = (re: string) => new RegExp(globs ? `^(\\*|${re})$` : `^${re}$`);
    const star = globs ? ', or "*"' : "";
    return {
        group: field.string({
            rule: { pattern: or(API_GROUP), describe: `an API group such as apps, or "" for the core group${star}` },
            default: "",
            doc: 'API group ("" for the core group)',
        }),
        kind: field.string({ rule: { pattern: or(KIND), describe: `a Kind such as Deployment${star}` }, required: true, doc: "the Kind" }),
    } as const;
};
const paths = (describe: string, pattern: RegExp, doc: string) => field.strings({ rule: { pattern, describe }, size: { min: 0, max: 50 }, doc });

/** The fields of an argocd-cm ignoreDifferences rule (every Application). */
export const SYSTEM_RULE_FIELDS = {
    group: field.string({
        rule: { pattern: new RegExp(`^${API_GROUP}$`), describe: 'an API group such as apps ("" or unset for the core group)' },
        default: "",
        doc: 'API group; unset with kind "*"',
    }),
    kind: field.string({
        rule: { pattern: new RegExp(`^(\\*|${KIND})$`), describe: 'a Kind such as Deployment, or "*" for every kind' },
        required: true,
        doc: 'Kind, or "*" for every kind of argocd.allKinds',
    }),
    jsonPointers: paths(
        "a JSON pointer such as /spec/replicas (~ escaped as ~0, / as ~1; not ending in /-)",
        JSON_POINTER,
        "JSON pointers to ignore (RFC 6901: ~ escaped as ~0, / as ~1; not ending in /-, which ArgoCD's json-patch cannot remove)",
    ),
    jqPathExpressions: paths(
        `a jq path made only of ${PLAIN_JQ}; write any other path as a JSON pointer, e.g. /spec/replicas, or in that form`,
        JQ_PATH,
        `jq paths to ignore, made only of ${PLAIN_JQ}; any other jq, valid or not, is refused (ArgoCD compiles each with gojq, and one it cannot compile fails every diff the rule applies to): write it as a JSON pointer or in that form`,
    ),
    managedFieldsManagers: paths("a field manager name", /^\S+$/, "field managers whose fields are ignored"),
} as const;

/** The fields of an Application-level ignoreDifferences rule: the system rule's, and which object. */
export const APP_RULE_FIELDS = {
    ...SYSTEM_RULE_FIELDS,
    name: field.string({ rule: { pattern: DNS_SUBDOMAIN, describe: "an object name" }, doc: "only the object of this name" }),
    namespace: field.string({ rule: NAMESPACE_RULE, doc: "only objects in this namespace" }),
} as const;
const rules = (doc: string, items: Fields) => field.listReadBySection({ describe: "a list of ignoreDifferences rules", doc, items });

/** The `argocd` section: every key, once. */
export const ARGOCD_FIELDS = {
    runsOn: field.string({
        rule: { pattern: DNS_LABEL, describe: "a cluster name (the cluster.name of the stack whose cluster runs that ArgoCD)", maxLength: 63 },
        defaultDoc: "this stack's cluster.name",
        doc: "the cluster whose ArgoCD syncs this cluster's tenant Applications; only there does a stack touch ArgoCD's objects",
    }),
    namespace: field.string({
        rule: { pattern: DNS_LABEL, describe: "a namespace name (DNS label)", maxLength: 63 },
        default: "argocd",
        doc: "namespace of argocd-cm, argocd-rbac-cm, the AppProjects and ApplicationSets",
    }),
    projects: field.map({
        keyRule: OBJECT_NAME,
        defaultDoc: WHERE_ARGOCD_RUNS,
        doc: "the tenant AppProjects, by name; {} only where no tenant Application syncs through this ArgoCD",
        values: {
            owner: OWNER,
            namespaceResources: field.list({
                describe: 'a list of {group, kind} (group "" for the core group)',
                doc: 'addon only: the whole namespaceResourceWhitelist, every namespaced kind the project syncs ({group, kind}, "*" allowed; must cover core Service); the Rollout kinds are added',
                items: groupKind(true),
            }),
        },
    }),
    applicationSets: field.map({
        keyRule: OBJECT_NAME,
        defaultDoc: WHERE_ARGOCD_RUNS,
        doc: "the tenant ApplicationSets (the Applications that run canaries), by name; {} where tenant Applications are not generated by an ApplicationSet",
        values: {
            owner: OWNER,
            syncOptions: field.strings({
                rule: { pattern: /^[A-Za-z]+=[^\s,]+$/, describe: "an ArgoCD sync option such as CreateNamespace=true" },
                size: { min: 0, max: 20 },
                doc: "addon only: further options kept after RespectIgnoreDifferences=true",
            }),
            ignoreDifferences: rules("addon only: further Application-level rules", APP_RULE_FIELDS),
        },
    }),
    ignoreDifferences: rules('argocd-cm rules (every Application); kind "*" is written once per kind of argocd.allKinds', SYSTEM_RULE_FIELDS),
    allKinds: field.list({
        describe: 'a list of {group, kind} (group "" for the core group)',
        defaultDoc: `the ${BUILTIN_KINDS.length} built-in kinds (BUILTIN_KINDS)`,
        doc: "the {group, kind} list a rule for every kind is written for",
        items: groupKind(false),
    }),
    rbac: field.section({
        doc: "ArgoCD RBAC for the Rollout actions (ADR-056 D3)",
        fields: {
            approverRole: field.string({
                rule: RBAC_SUBJECT_RULE,
                defaultDoc: "unset: no RBAC written",
                doc: "ArgoCD role or SSO group allowed the Rollout approval actions (ArgoCD reads each policy line with Go's CSV reader)",
            }),
            deployerRoles: field.strings({
                rule: RBAC_SUBJECT_RULE,
                size: { min: 0, max: 20 },
                doc: "roles explicitly denied those actions; never the approver",
            }),
            projects: field.strings({
                rule: PROJECT_NAME_RULE,
                size: { min: 0, max: 50 },
                defaultDoc: "the names in argocd.projects",
                doc: "projects the grants are scoped to; required with an approver",
            }),
            actions: field.strings({
                // Only ArgoCD's own Rollout actions: a name it does not know makes a policy line that does nothing.
                rule: {
                    pattern: new RegExp(`^(${ARGOCD_ROLLOUT_ACTIONS.join("|")})$`),
                    describe: `one of ArgoCD's Rollout actions ${ARGOCD_ROLLOUT_ACTIONS.join(", ")} (argo-cd resource_customizations/argoproj.io/Rollout/actions; ${ROLLOUT_ACTIONS_SINCE_3_1.join(" and ")} since ArgoCD 3.1; there is no "promote")`,
                },
                default: APPROVER_ROLLOUT_ACTIONS,
                size: { min: 1, max: ARGOCD_ROLLOUT_ACTIONS.length },
                doc: "ArgoCD's Rollout actions reserved to the approver",
            }),
            regulatedProjects: field.strings({
                rule: PROJECT_NAME_RULE,
                size: { min: 0, max: 50 },
                doc: "AppProjects (among rbac.projects) whose Applications sync regulated namespaces; required with policy.regulated where ArgoCD runs",
            }),
            approverGroups: field.strings({
                rule: SSO_GROUP_RULE,
                size: { min: 0, max: 20 },
                defaultDoc: "policy.regulated.approverGroups",
                doc: "SSO groups bound to approverRole; verify asks ArgoCD's enforcer that they can approve",
            }),
            deployerGroups: field.strings({
                rule: SSO_GROUP_RULE,
                size: { min: 0, max: 20 },
                defaultDoc: "policy.regulated.deployerGroups",
                doc: "SSO groups bound to the deny-only deployer role; never an approver group",
            }),
        },
    }),
} as const;

/** Every declared default of the section, in one object. */
export const ARGOCD_DEFAULTS = defaultsOf(ARGOCD_FIELDS);

/** The argocd-apps stage's settings; `local`: `runsOn` is this stack's cluster, the only one where a stack touches ArgoCD's objects. */
export type ArgoCdConfig = {
    runsOn: string;
    local: boolean;
    namespace: string;
    projects: ArgoProjectConfig[];
    applicationSets: TenantApplicationSetConfig[];
    /** argocd-cm's rules (every Application). */
    ignoreDifferences: IgnoreRule[];
    allKinds: GroupKind[];
    rbac: ArgoRbacConfig;
};
/** A tenant AppProject (ownership.ts). */
export type ArgoProjectConfig = { name: string; owner: ArgoObjectOwner; namespaceResources: GroupKind[] };
/** A tenant ApplicationSet (ownership.ts). */
export type TenantApplicationSetConfig = { name: string; owner: ArgoObjectOwner; syncOptions: string[]; ignoreDifferences: IgnoreRule[] };
/** `argocd.rbac`; unset `approverRole` writes no policy. */
export type ArgoRbacConfig = Values<typeof ARGOCD_FIELDS.rbac.fields>;
/** What the stack's `policy.regulated` says about the groups and ArgoCD's API server identity (actionServiceAccounts). */
export type RegulatedGroups = Record<"approverGroups" | "deployerGroups", readonly string[]> & {
    actionServiceAccounts: readonly { namespace: string; name: string }[];
};
