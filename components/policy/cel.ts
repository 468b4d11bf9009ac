import type { PolicyConfig } from "./config";
import { metadata, namespaceSelector, validationActions } from "./builders";
import { Check, Cond, Field, Literal, OPERATIONS, Rule, and, not } from "./rule";
import type { ResourceRule, ValidatingPolicy } from "./shapes";

/**
 * The policies.kyverno.io/v1 form of a rule (rule.ts): a ValidatingPolicy, one validation per check.
 * Kyverno hands CEL the admission request as JSON, and AdmissionRequest omits empty fields (k8s.io/api
 * admission/v1 types.go: `subResource`, `userInfo.username`, `userInfo.groups` are `omitempty`;
 * kyverno/kyverno v1.17.2 pkg/cel/policies/vpol/compiler/eval.go `prepareK8sData`). Reading an absent
 * key is an error ("no such key"), which the e2e scenario engine-kyverno-cli saw refuse every spec
 * change: so every field is read behind `has()` or `in`, each guard once per conjunction.
 */

const ROOTS = { object: "object", oldObject: "oldObject", request: "request", namespace: "namespaceObject", item: "e" } as const;
/** What the API server always sends: a namespaced object's metadata, name, namespace, spec and kind, the operation and the user. */
const PRESENT = new Set([
    ...["metadata", "metadata.name", "metadata.namespace", "spec", "kind"].flatMap((p) => [`object.${p}`, `oldObject.${p}`]),
    "request.operation",
    "request.userInfo",
]);

const literal = (v: Literal | readonly string[]): string => (typeof v === "string" || Array.isArray(v) ? JSON.stringify(v) : String(v));

/** A field's expression, and the guards reading it needs that `known` does not hold yet (then added to it); with `or`, none. */
function read(f: Field, known: Set<string>): { text: string; guards: string[] } {
    let text: string = ROOTS[f.from];
    const guards: string[] = [];
    for (const key of f.path) {
        // CEL's keywords are read by index (a reserved identifier such as `namespace` is a valid field name).
        const [guard, next] =
            typeof key === "number"
                ? key >= 0
                    ? [`size(${text}) > ${key}`, `${text}[${key}]`]
                    : [`size(${text}) >= ${-key}`, `${text}[size(${text}) - ${-key}]`]
                : /^[A-Za-z_]\w*$/.test(key) && !/^(in|true|false|null)$/.test(key)
                  ? [`has(${text}.${key})`, `${text}.${key}`]
                  : [`${JSON.stringify(key)} in ${text}`, `${text}[${JSON.stringify(key)}]`];
        if (!PRESENT.has(next)) guards.push(guard);
        text = next;
    }
    if (f.or !== undefined) return { text: guards.length > 0 ? `(${guards.join(" && ")} ? ${text} : ${literal(f.or)})` : text, guards: [] };
    const missing = guards.filter((g) => !known.has(g));
    missing.forEach((g) => known.add(g));
    return { text, guards: missing };
}

/** `c` in CEL. Within a conjunction, `known` collects the guards passed so far. */
export function cel(c: Cond, known: Set<string> = new Set()): string {
    if (typeof c === "boolean") return String(c);
    if ("all" in c || "any" in c) {
        const [parts, sep, other] = "all" in c ? [c.all, " && ", " || "] : [c.any, " || ", " && "];
        return parts
            .map((x) => [x, cel(x, "all" in c ? known : new Set(known))] as const)
            .map(([x, t]) => (typeof x === "object" && !("not" in x) && t.includes(other) ? `(${t})` : t))
            .join(sep);
    }
    if ("not" in c) return `!(${cel(c.not, new Set(known))})`;
    if ("var" in c) return `variables.${c.var}`;
    if ("celOnly" in c) return cel(c.celOnly, known);
    if ("specChangedBesides" in c) {
        const other = (k: string) => c.specChangedBesides.map((f) => `${k} != ${JSON.stringify(f)}`).join(" && ");
        return `object.spec.exists(k, ${other("k")} && (!(k in oldObject.spec) || object.spec[k] != oldObject.spec[k])) || oldObject.spec.exists(k, ${other("k")} && !(k in object.spec))`;
    }
    if ("lookup" in c) {
        // resource.List returns map(string, Any) (kyverno/sdk extensions/cel/libs/resource/lib.go), and
        // cel-go refuses an Any as a comprehension range (checker/checker.go checkComprehension): dyn().
        return `dyn(resource.List("${c.lookup.apiVersion}", "${c.lookup.resource}", object.metadata.namespace).items).exists(e, ${cel(c.where)})`;
    }
    if ("has" in c) return read(c.has, known).guards.join(" && ") || "true";
    const a = read(
        "eq" in c ? c.eq : "lt" in c ? c.lt : "in" in c ? c.in : "anyIn" in c ? c.anyIn : "matches" in c ? c.matches : "count" in c ? c.count : c.some,
        known,
    );
    const b = "eq" in c && typeof c.to === "object" ? read(c.to, known) : undefined;
    const test =
        "eq" in c
            ? `${a.text} == ${b ? b.text : literal(c.to as Literal)}`
            : "lt" in c
              ? `${a.text} < ${c.than}`
              : "in" in c
                ? `${a.text} ${c.among.length === 1 ? `== ${literal(c.among[0])}` : `in ${literal(c.among)}`}`
                : "anyIn" in c
                  ? `${a.text}.exists(g, g in ${literal(c.among)})`
                  : "matches" in c
                    ? `string(${a.text}).matches(${JSON.stringify(c.re)})`
                    : "count" in c
                      ? `${a.text}.filter(e, ${cel(c.where)}).size() > ${c.over}`
                      : `${a.text}.exists(e, ${cel(c.where)})`;
    return [...a.guards, ...(b?.guards ?? []), test].join(" && ");
}

/** The subresources a check's match reaches: its own, or the object and what Kyverno matches with the kind (WorkloadKind.alsoMatches). */
const subresources = (m: Check["on"][number]): string[] => (m.subresource ? [m.subresource] : ["", ...(m.kind.alsoMatches ?? [])]);
const ORDER = ["CREATE", "UPDATE", "DELETE"];

/** Per kind, every subresource and operation the rule's checks name. */
function resourceRules(rule: Rule): ResourceRule[] {
    const out = new Map<string, ResourceRule>();
    for (const { kind: w, ...m } of rule.checks.flatMap((c) => c.on)) {
        const r = out.get(w.resource) ?? { apiGroups: [w.group], apiVersions: [w.version], resources: [w.resource], operations: [] };
        r.resources = [...new Set([...r.resources, ...subresources({ kind: w, ...m }).map((s) => (s ? `${w.resource}/${s}` : w.resource))])];
        r.operations = [...new Set([...r.operations, ...(m.operations ?? OPERATIONS)])].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
        out.set(w.resource, r);
    }
    return [...out.values()];
}

/** Which of its rule's requests a check judges: by kind, operation and subresource, where the rule's other checks differ. */
function judged(rule: Rule, check: Check, rules: ResourceRule[]): Cond {
    if (rule.checks.length === 1) return true;
    const kinds = [...new Set(check.on.map((m) => m.kind.kind))];
    const ops = [...new Set(check.on.flatMap((m) => m.operations ?? OPERATIONS))];
    return and(
        kinds.length < rules.length ? { in: { from: "object", path: ["kind"] }, among: kinds } : true,
        ops.length < new Set(rules.flatMap((r) => r.operations)).size ? { in: { from: "request", path: ["operation"] }, among: ops } : true,
        rules.some((r) => r.resources.length > 1)
            ? { in: { from: "request", path: ["subResource"], or: "" }, among: [...new Set(check.on.flatMap(subresources))] }
            : true,
    );
}

export function celPolicy(cfg: PolicyConfig, rule: Rule): ValidatingPolicy {
    const rules = resourceRules(rule);
    return {
        apiVersion: "policies.kyverno.io/v1",
        kind: "ValidatingPolicy",
        metadata: metadata(rule.name, rule.description ?? rule.checks[0].message),
        spec: {
            validationActions: validationActions(rule.action ?? cfg.validationAction),
            // Validations fail closed: a guard Kyverno cannot evaluate must not let the request through.
            failurePolicy: "Fail",
            evaluation: { background: { enabled: rule.background } },
            matchConstraints: { resourceRules: rules, namespaceSelector: namespaceSelector(cfg, rule.scope) },
            ...(rule.when ? { matchConditions: rule.when.map((w) => ({ name: w.name, expression: cel(w.cond) })) } : {}),
            ...(rule.vars ? { variables: Object.entries(rule.vars).map(([name, c]) => ({ name, expression: cel(c) })) } : {}),
            validations: rule.checks.map((c) => ({ expression: cel(not(and(judged(rule, c, rules), c.deny))), message: c.message })),
        },
    };
}
