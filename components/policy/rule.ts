import type { ValidationAction } from "./config";
import type { WorkloadKind } from "./workloads";

/**
 * Every validation rule of the stage is one declaration in this vocabulary, rendered to
 * policies.kyverno.io/v1 by cel.ts and to kyverno.io/v1 by jmes.ts: the conditions on a request the
 * rules use, and nothing more. A check's condition says when a request is refused.
 */

/** Where a field is read: the object, the object before an update, the request, its namespace, or the element `some`, `count` or `lookup` ranges over. */
export type Source = "object" | "oldObject" | "request" | "namespace" | "item";
export type Literal = string | number | boolean;
/** A field by its keys (a number indexes a list, a negative one from its end); `or` stands for it where it is absent. */
export type Field = { from: Source; path: readonly (string | number)[]; or?: Literal };

export type Cond =
    | boolean
    | { all: Cond[] }
    | { any: Cond[] }
    | { not: Cond }
    | { has: Field }
    | { eq: Field; to: Literal | Field }
    | { lt: Field; than: number }
    /** More than `over` elements of the list field hold `where`. */
    | { count: Field; where: Cond; over: number }
    | { in: Field; among: readonly string[] }
    /** A list field with an element among the values (the request's groups). */
    | { anyIn: Field; among: readonly string[] }
    /** The field, as text, matches the RE2 expression. */
    | { matches: Field; re: string }
    | { some: Field; where: Cond }
    /** An object of the request's namespace, listed by API version and resource, holds `where`. */
    | { lookup: { name: string; apiVersion: string; resource: string }; where: Cond }
    /** The object's spec differs from the old object's in a key other than these. */
    | { specChangedBesides: readonly string[] }
    /** Read as false by the ClusterPolicy form: where the two APIs are known to differ (approval.ts). */
    | { celOnly: Cond }
    | { var: string };

export type Operation = "CREATE" | "UPDATE" | "DELETE";
export const OPERATIONS: readonly Operation[] = ["CREATE", "UPDATE"];

/** One refusal: the requests it judges, when it refuses them and what it says. */
export interface Check {
    /** The ClusterPolicy rule's name, before the kind. */
    id: string;
    on: { kind: WorkloadKind; operations?: readonly Operation[]; subresource?: string }[];
    deny: Cond;
    message: string;
    /** The check judges who sends the request, so an update is judged even where the old object "violated" it (jmes.ts). */
    judgeRequest?: boolean;
}

/** Which namespaces a rule applies to: the tenant ones, the prod or regulated ones among them, or the default namespace alone. */
export type Scope = "tenant" | "prod" | "regulated" | "prod-regulated" | "default";

export interface Rule {
    name: string;
    /** The policy's description (default: the first check's message). */
    description?: string;
    scope: Scope;
    /** Whether Kyverno also judges existing objects; a rule that reads the request's user cannot. */
    background: boolean;
    /** What the API server evaluates before calling Kyverno (match conditions): a request that fails one is not judged. */
    when?: { name: string; cond: Cond }[];
    /** Named conditions: CEL variables, inlined in the ClusterPolicy. */
    vars?: Record<string, Cond>;
    checks: Check[];
    /** Overrides `policy.validationAction` (the tier rules'). */
    action?: ValidationAction;
}

export const field = (from: Source, path: string | readonly (string | number)[], or?: Literal): Field => ({
    from,
    path: typeof path === "string" ? path.split(".") : path,
    ...(or === undefined ? {} : { or }),
});
export const obj = (path: string | readonly (string | number)[], or?: Literal): Field => field("object", path, or);
export const has = (f: Field): Cond => ({ has: f });
export const eq = (f: Field, to: Literal | Field): Cond => ({ eq: f, to });
export const userIn = (users: readonly string[]): Cond => users.length > 0 && { in: field("request", "userInfo.username"), among: users };
export const groupIn = (groups: readonly string[]): Cond => groups.length > 0 && { anyIn: field("request", "userInfo.groups"), among: groups };

/** Conjunction and disjunction with constants folded and nesting flattened, and negation. */
export const and = (...cs: Cond[]): Cond => join(cs, "all");
export const or = (...cs: Cond[]): Cond => join(cs, "any");
export const not = (c: Cond): Cond => (typeof c === "boolean" ? !c : "not" in c ? c.not : { not: c });

function join(cs: Cond[], k: "all" | "any"): Cond {
    const unit = k === "all";
    const parts = cs.flatMap((c) => (typeof c === "object" && k in c ? (c as Record<typeof k, Cond[]>)[k] : [c])).filter((c) => c !== unit);
    return parts.includes(!unit) ? !unit : parts.length === 0 ? unit : parts.length === 1 ? parts[0] : ({ [k]: parts } as Cond);
}
