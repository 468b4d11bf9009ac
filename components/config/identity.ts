/**
 * Group and user names as the stack file gives them, one rule for every key that takes one, so a
 * name means the same thing in each place it lands (RoleBinding subjects, both Kyverno APIs,
 * ArgoCD's RBAC).
 */
import type { StringRule } from "./reader";

/**
 * A name as authenticators report it: no leading or trailing blanks, inner blanks allowed (SSO
 * group names such as `Release Approvers` are common). At most 254 characters.
 */
export const IDENTITY_TEXT = /^\S(.{0,252}\S)?$/;

/**
 * `*` or `?` in a name. Kyverno's kyverno.io/v1 operators match both ways as wildcards
 * (kyverno/kyverno pkg/engine/variables/operator/anyin.go v1.17.0 `isAnyIn`:
 * `wildcard.Match(valKey, valValue) || wildcard.Match(valValue, valKey)`, ext/wildcard over
 * IGLOU-EU/go-wildcard), while the policies.kyverno.io/v1 CEL compares exactly (`in`): the same
 * stack would grant `release-*` to every release group in one API and to nobody in the other.
 */
export const WILDCARD = /[*?]/;

/**
 * Kubernetes' own groups (`system:authenticated`, `system:serviceaccounts`, `system:nodes`,
 * `system:masters`, ...): the API server and its authenticators add them (k8s.io/apiserver
 * pkg/authentication/user/user.go v0.34.0, `AllAuthenticated`, `AllUnauthenticated`,
 * `SystemPrivilegedGroup`; pkg/authentication/serviceaccount/util.go `AllServiceAccountsGroup`).
 * As an approver, a deployer or a tenant operator one of them names every user, every
 * ServiceAccount or every node, and separation of duties is gone.
 */
export const SYSTEM_GROUP = /^system:/;

/** What every group rule says, once. */
const NO_WILDCARD = "no * or ? (Kyverno's kyverno.io/v1 operators match them as wildcards, its CEL compares exactly)";

/** A group of people (approvers, deployers, tenant operators): no Kubernetes `system:` group, no wildcard. */
export const PEOPLE_GROUP_RULE: StringRule = {
    pattern: IDENTITY_TEXT,
    valid: (g) => !WILDCARD.test(g) && !SYSTEM_GROUP.test(g),
    describe: `a group name as the API server sees it (request.userInfo.groups; inner blanks allowed), ${NO_WILDCARD}, and no Kubernetes system: group (system:authenticated, system:serviceaccounts and the like hold every user, ServiceAccount or node)`,
};

/** A group or user an automation authenticates as: `system:` names are its own (the broad ones are refused where read), no wildcard. */
export function identityRule(what: "group" | "user"): StringRule {
    return {
        pattern: IDENTITY_TEXT,
        valid: (g) => !WILDCARD.test(g),
        describe: `a ${what} name as the API server sees it (request.userInfo.${what === "group" ? "groups" : "username"}), ${NO_WILDCARD}`,
    };
}
