/**
 * Kyverno's CEL, for the fast unit tests: every expression of an emitted policy parses with a
 * conformant CEL parser (`@bufbuild/cel`), and names only what its place in the policy declares.
 * Types are the engine's to decide: the real Kyverno compiles every emitted policy in the
 * end-to-end scenario engine-kyverno-cli (e2e/samples/admission.yaml, e2e/lib/admission.ts) and a
 * policy that does not compile (a wrong library signature, an Any iterated, an output that is not
 * bool) is refused there. No rule of cel-go's checker is restated here.
 *
 * The names (kyverno/kyverno v1.17.0 `pkg/cel/compiler/compiler.go`, `pkg/cel/compiler/variables.go`):
 * `object`, `oldObject`, `request` and `namespaceObject` everywhere; Kyverno's libraries
 * (`resource`, `generator`) and `variables.<name>` outside match conditions, which the API server
 * evaluates too (they become the webhook's matchConditions, `pkg/controllers/webhook/validating.go`);
 * a variable sees only those declared before it.
 */
import { parse } from "@bufbuild/cel";
import type { Expr } from "@bufbuild/cel-spec/cel/expr/syntax_pb.js";
import type { CelPolicy } from "../components/policy";

const BASE = ["object", "oldObject", "request", "namespaceObject"];
const LIBRARIES = ["resource", "generator"];

/** The problems of one expression: does it parse, and does it name only `globals` and `variables.<declared>`. */
export function checkExpression(expression: string, globals: string[], declared: string[] | undefined): string[] {
    let root: Expr;
    try {
        root = parse(expression).expr;
    } catch (err) {
        return [`does not parse: ${err instanceof Error ? err.message : String(err)}`];
    }
    const problems: string[] = [];
    const walk = (e: Expr | undefined, locals: string[]): void => {
        const kind = e?.exprKind;
        switch (kind?.case) {
            case "identExpr":
                if (!locals.includes(kind.value.name) && !globals.includes(kind.value.name)) {
                    problems.push(`undeclared reference to '${kind.value.name}'`);
                }
                return;
            case "selectExpr": {
                const operand = kind.value.operand;
                if (operand?.exprKind.case === "identExpr" && operand.exprKind.value.name === "variables" && !locals.includes("variables")) {
                    if (!declared) {
                        problems.push(`undeclared reference to 'variables'`);
                    } else if (!declared.includes(kind.value.field)) {
                        problems.push(`undeclared variable '${kind.value.field}'`);
                    }
                    return;
                }
                return walk(operand, locals);
            }
            case "callExpr":
                walk(kind.value.target, locals);
                return kind.value.args.forEach((a) => walk(a, locals));
            case "listExpr":
                return kind.value.elements.forEach((a) => walk(a, locals));
            case "structExpr":
                return kind.value.entries.forEach((en) => {
                    walk(en.keyKind.case === "mapKey" ? en.keyKind.value : undefined, locals);
                    walk(en.value, locals);
                });
            case "comprehensionExpr": {
                const c = kind.value;
                walk(c.iterRange, locals);
                walk(c.accuInit, locals);
                const inner = [...locals, c.accuVar, c.iterVar, c.iterVar2].filter(Boolean);
                [c.loopCondition, c.loopStep, c.result].forEach((x) => walk(x, inner));
            }
        }
    };
    walk(root, []);
    return problems;
}

/** Every problem of a policy's expressions, each named by policy and field. */
export function checkPolicy(p: CelPolicy): string[] {
    const problems: string[] = [];
    const check = (field: string, expression: string, globals: string[], declared: string[] | undefined) =>
        problems.push(...checkExpression(expression, globals, declared).map((f) => `${p.metadata.name} ${field}: ${f}`));
    (p.spec.matchConditions ?? []).forEach((m) => check(`matchConditions[${m.name}]`, m.expression, BASE, undefined));
    const full = [...BASE, ...LIBRARIES, "variables"];
    const declared: string[] = [];
    for (const v of p.spec.variables ?? []) {
        check(`variables[${v.name}]`, v.expression, full, [...declared]);
        declared.push(v.name);
    }
    const rest =
        p.kind === "ValidatingPolicy"
            ? p.spec.validations.map((v) => v.expression)
            : p.kind === "MutatingPolicy"
              ? p.spec.mutations.map((m) => m.jsonPatch.expression)
              : p.spec.generate.map((g) => g.expression);
    rest.forEach((expression, i) => check(`${p.kind}[${i}]`, expression, full, declared));
    return problems;
}
