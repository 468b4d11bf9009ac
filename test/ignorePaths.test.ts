/**
 * The ignoreDifferences paths a stack file may write (components/argocd/config/section.ts
 * `JQ_PATH`, `JSON_POINTER`): a plain subset, checked against gojq's own verdicts.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { JQ_PATH, JSON_POINTER } from "../components/argocd/config/section";
import { parseHub, problemFor } from "./stackConfig";

/** gojq v0.12.19's verdict on del(<expression>), as ArgoCD compiles it (the fixture says how it was made). */
const GOJQ: { expression: string; gojq: "compiles" | "refuses" }[] = JSON.parse(
    fs.readFileSync(path.join(__dirname, "fixtures", "gojq-del-paths.json"), "utf8"),
).expressions;

/** The forms the docs name (docs/stages/argocd-apps.md), each in the fixture. */
const DOCUMENTED = [
    ".spec.replicas",
    '.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]',
    ".spec.rules[0].backendRefs[1].weight",
    '.spec.template.spec.initContainers[] | select(.name == "injected-init-container")',
    '.spec.template.spec.containers[] | select(.name == "app") | .image',
];

const rule = (r: Record<string, unknown>) => ({ argocd: { ignoreDifferences: [{ group: "apps", kind: "Deployment", ...r }] } });

describe("ignoreDifferences paths: a plain subset gojq compiles", () => {
    it("accepts no jq path gojq refuses", () => {
        const refused = GOJQ.filter((e) => e.gojq === "refuses");
        assert.ok(refused.length >= 25, `only ${refused.length} refused expressions in the fixture`);
        assert.deepStrictEqual(
            refused.filter((e) => JQ_PATH.test(e.expression)).map((e) => e.expression),
            [],
        );
    });

    it("accepts the documented forms and a good share of what gojq compiles, refusing the unusual rest", () => {
        const verdict = new Map(GOJQ.map((e) => [e.expression, e.gojq]));
        for (const q of DOCUMENTED) {
            assert.strictEqual(verdict.get(q), "compiles", q);
            assert.ok(JQ_PATH.test(q), q);
        }
        const accepted = GOJQ.filter((e) => JQ_PATH.test(e.expression));
        assert.ok(accepted.length >= 200, `the subset accepts only ${accepted.length} of the fixture`);
        // Valid jq outside the subset is refused: the program does not restate gojq's grammar.
        for (const q of [
            ".a? // 1",
            ".a[]?",
            '.a | select(.n != "x")',
            ".a[-1]",
            '.a."b"',
            ".spec.rules[]? | select((.backendRefs // []) | length > 1) | .backendRefs[]?.weight",
        ]) {
            assert.ok(!JQ_PATH.test(q), q);
        }
    });

    it("refuses a path outside the subset naming the key, the value and the plain form to write", () => {
        const p = problemFor(
            rule({ jqPathExpressions: [".spec.replicas", ".metadata.annotations.my-key"] }),
            "argocd.ignoreDifferences[0].jqPathExpressions[1]",
            /jq path made only of \.field, \["key"\], \[\], \[n\] and \| select\(\.field == "value"\); write any other path as a JSON pointer, e.g\. \/spec\/replicas/,
        );
        assert.strictEqual(p.given, '".metadata.annotations.my-key"');
        parseHub(rule({ jqPathExpressions: DOCUMENTED }));
    });

    it("takes JSON pointers as RFC 6901 writes them, not ending in /- (json-patch cannot remove it)", () => {
        for (const p of ["/spec/replicas", "/metadata/annotations/a~1b~0c", "/spec/template/spec/containers/0/image"]) {
            assert.ok(JSON_POINTER.test(p), p);
        }
        for (const p of ["spec/replicas", "/metadata/annotations/a~b", "/spec/template/spec/containers/-", "/a b", ""]) {
            assert.ok(!JSON_POINTER.test(p), p);
        }
        problemFor(rule({ jsonPointers: ["/metadata/annotations/a~b"] }), "argocd.ignoreDifferences[0].jsonPointers[0]", /~ escaped as ~0/);
    });
});
