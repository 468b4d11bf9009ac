import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { documentationFiles, readDoc } from "./markdown";

const ROOT = path.resolve(__dirname, "..");
const TOP_LEVEL = ["components", "stacks", "tools", "policy-pack", "test", "e2e"];

/** Every TypeScript and JavaScript file of the project, relative to its root, with `/` separators. */
function sourceFiles(): string[] {
    const out: string[] = [];
    const walk = (dir: string): void => {
        for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
            const rel = path.posix.join(dir, entry.name);
            if (entry.isDirectory() && entry.name !== "node_modules") {
                walk(rel);
            } else if (entry.isFile() && /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) {
                out.push(rel);
            }
        }
    };
    TOP_LEVEL.forEach(walk);
    return out.sort();
}

/**
 * The folder a project file belongs to: a stage or library folder under components/ (a single file
 * there, such as components/stage.ts, is a folder of its own), or one of the top-level folders (their
 * subfolders, such as tools/verify and e2e/lib, belong to them).
 */
export function folderOf(file: string): string {
    const [top, second, ...rest] = file.split("/");
    if (top === "components" && second !== undefined) {
        return rest.length === 0 ? `components/${second.replace(/\.(ts|js)$/, "")}` : `components/${second}`;
    }
    return top;
}

/** The project file a relative specifier names, as Node and TypeScript resolve it. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
    const candidates = [base, `${base}.ts`, `${base}.js`, `${base}/index.ts`, `${base}/index.js`];
    return candidates.find((c) => fs.existsSync(path.join(ROOT, c)) && fs.statSync(path.join(ROOT, c)).isFile());
}

/** One import of a relative path: which file imports which. */
export interface Import {
    from: string;
    specifier: string;
    to: string;
}

/** Every `import`/`export ... from`, `import()` and `require()` of a relative path in the project's source. */
function relativeImports(): Import[] {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ts = require("typescript") as typeof import("typescript");
    const out: Import[] = [];
    for (const file of sourceFiles()) {
        const text = fs.readFileSync(path.join(ROOT, file), "utf8");
        for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
            if (!fileName.startsWith("./") && !fileName.startsWith("../")) continue;
            const to = resolveSpecifier(file, fileName);
            assert.ok(to !== undefined, `${file} imports ${fileName}, which is no file of the project`);
            out.push({ from: file, specifier: fileName, to });
        }
    }
    return out;
}

/** From -> to -> the imports that make the edge. */
export type FolderGraph = Map<string, Map<string, Import[]>>;

/**
 * The graph of files, or of folders with `folderOf` (a folder's imports of itself left out). Type-only
 * imports count: a circle of types is still a circle to read.
 */
export function importGraph(imports: readonly Import[], node = (file: string) => file): FolderGraph {
    const graph: FolderGraph = new Map();
    for (const i of imports) {
        const [a, b] = [node(i.from), node(i.to)];
        if (a !== b) {
            const edges = graph.get(a) ?? new Map<string, Import[]>();
            edges.set(b, [...(edges.get(b) ?? []), i]);
            graph.set(a, edges);
        }
    }
    return graph;
}

/** A cycle of folders (first folder repeated at the end), or undefined when the graph is acyclic. */
export function findCycle(graph: FolderGraph): string[] | undefined {
    const state = new Map<string, "open" | "done">();
    const trail: string[] = [];
    const visit = (node: string): string[] | undefined => {
        state.set(node, "open");
        trail.push(node);
        for (const next of [...(graph.get(node)?.keys() ?? [])].sort()) {
            if (state.get(next) === "open") return [...trail.slice(trail.indexOf(next)), next];
            if (state.get(next) === undefined) {
                const found = visit(next);
                if (found) return found;
            }
        }
        trail.pop();
        state.set(node, "done");
        return undefined;
    };
    for (const node of [...graph.keys()].sort()) {
        if (state.get(node) === undefined) {
            const found = visit(node);
            if (found) return found;
        }
    }
    return undefined;
}

/** A cycle with, for each step, the imports that make it. */
function describeCycle(graph: FolderGraph, cycle: string[]): string {
    const steps = cycle.slice(0, -1).map((a, i) => {
        const b = cycle[i + 1];
        const why = (graph.get(a)?.get(b) ?? []).map((imp) => `      ${imp.from} imports "${imp.specifier}"`);
        return [`  ${a} -> ${b}`, ...why].join("\n");
    });
    return `folders import each other: ${cycle.join(" -> ")}\n${steps.join("\n")}`;
}

describe("layout", () => {
    let imports: Import[];
    let graph: FolderGraph;
    before(() => {
        imports = relativeImports();
        graph = importGraph(imports, folderOf);
    });

    it("reads the imports of every folder (a parse that finds nothing proves nothing)", () => {
        for (const folder of ["components/config", "components/rollouts", "components/policy", "components/argocd", "stacks", "tools", "policy-pack", "test"]) {
            assert.ok((graph.get(folder)?.size ?? 0) > 0 || [...graph.values()].some((edges) => edges.has(folder)), `no import from or to ${folder}`);
        }
    });

    it("finds a cycle where there is one", () => {
        const edges = (...pairs: string[][]) => importGraph(pairs.map(([from, to]) => ({ from, to, specifier: to })));
        assert.deepStrictEqual(findCycle(edges(["a", "b"], ["b", "c"], ["c", "a"])), ["a", "b", "c", "a"]);
        assert.strictEqual(findCycle(edges(["a", "b"], ["b", "c"], ["a", "c"])), undefined);
        assert.strictEqual(folderOf("components/stage.ts"), "components/stage");
        assert.strictEqual(folderOf("components/rollouts/config.ts"), "components/rollouts");
        assert.strictEqual(folderOf("tools/verify/checks/rbac.ts"), "tools");
    });

    it("no folder imports a folder that imports it back", () => {
        const cycle = findCycle(graph);
        assert.ok(cycle === undefined, cycle && describeCycle(graph, cycle));
    });

    it("no file imports a file that imports it back, not even for a type: the program, tools, tests and e2e", () => {
        const files = importGraph(imports);
        assert.ok(files.size > 150, `${files.size} files with imports`);
        const cycle = findCycle(files);
        assert.ok(cycle === undefined, cycle && describeCycle(files, cycle).replace("folders import", "files import"));
    });

    it("the program (stacks/, components/) imports no tool, test or policy-pack code", () => {
        const program = (f: string) => f.startsWith("stacks/") || f.startsWith("components/");
        const wrong = imports.filter((i) => program(i.from) && !program(i.to)).map((i) => `${i.from} imports "${i.specifier}"`);
        assert.deepStrictEqual(wrong, []);
    });

    it("the policy pack imports the program's guardrails only, never tools or tests", () => {
        // Its entry's TypeScript loader aside: the one the commands load their TypeScript with.
        const loader = (i: { from: string; to: string }) => i.from === "policy-pack/index.js" && i.to === "tools/swcLoader.js";
        const wrong = imports
            .filter((i) => i.from.startsWith("policy-pack/") && !i.to.startsWith("policy-pack/") && !i.to.startsWith("components/") && !loader(i))
            .map((i) => `${i.from} imports "${i.specifier}"`);
        assert.deepStrictEqual(wrong, []);
        assert.ok(imports.some(loader), "the pack's entry loads its TypeScript with tools/swcLoader.js");
    });
});

/** Whether `file` exports a declaration named `name` (directly, not through `export *`). */
function exportsName(file: string, name: string): boolean {
    const text = fs.readFileSync(path.join(ROOT, file), "utf8");
    const declared = new RegExp(`^export (declare )?(default )?(async )?(abstract )?(function|const|let|class|interface|type|enum) ${name}\\b`, "m");
    const listed = new RegExp(`^export (type )?\\{[^}]*\\b${name}\\b[^}]*\\}`, "m");
    return declared.test(text) || listed.test(text);
}

/** One row of "Where each decision lives" (docs/maintainers/architecture.md): the file and names it points at. */
interface DecisionRow {
    id: string;
    livesIn: string;
    entryPoints: string[];
    /** Further files, each with the names the row lists for it. */
    leadsTo: { file: string; names: string[] }[];
}

const ARCHITECTURE = "docs/maintainers/architecture.md";
const architecture = () => fs.readFileSync(path.join(ROOT, ARCHITECTURE), "utf8");

function decisionRows(page: string): DecisionRow[] {
    const start = page.indexOf("### Where each decision lives");
    assert.ok(start >= 0, `${ARCHITECTURE} has no "Where each decision lives" section`);
    const section = page.slice(start).split(/\n#{2,3} /)[0];
    const ticks = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    const isFile = (token: string) => /^[a-z]+\/[\w./-]+\.ts$/.test(token);
    return section
        .split("\n")
        .filter((line) => /^\| D[0-9] \|/.test(line))
        .map((line) => {
            const cells = line.split(" | ").map((c) => c.replace(/^\| ?| ?\|$/g, "").trim());
            assert.strictEqual(cells.length, 5, `a row of the decision table has ${cells.length} cells: ${line}`);
            const leadsTo: DecisionRow["leadsTo"] = [];
            for (const token of ticks(cells[4])) {
                if (isFile(token)) {
                    leadsTo.push({ file: token, names: [] });
                } else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(token) && leadsTo.length > 0) {
                    leadsTo[leadsTo.length - 1].names.push(token);
                }
            }
            const [livesIn, ...extra] = ticks(cells[2]);
            assert.deepStrictEqual(extra, [], `${cells[0]} lives in one place, not ${ticks(cells[2]).join(" and ")}`);
            return { id: cells[0], livesIn, entryPoints: ticks(cells[3]), leadsTo };
        });
}

describe("layout: where each ADR-056 decision lives (docs/maintainers/architecture.md)", () => {
    let rows: DecisionRow[];
    before(() => {
        rows = decisionRows(architecture());
    });

    it("names one place for each of D1 to D8, in order; each exists, exports its entry points and cites its decision; what it leads to exists and exports what the row names", () => {
        assert.strictEqual(rows.map((r) => r.id).join(" "), "D1 D2 D3 D4 D5 D6 D7 D8");
        for (const row of rows) {
            assert.ok(row.livesIn !== undefined && row.entryPoints.length > 0, `${row.id} names no file or no entry point`);
            assert.ok(fs.existsSync(path.join(ROOT, row.livesIn)), `${row.id}: ${row.livesIn} does not exist`);
            for (const name of row.entryPoints) {
                assert.ok(exportsName(row.livesIn, name), `${row.id}: ${row.livesIn} exports no ${name}`);
            }
            const text = fs.readFileSync(path.join(ROOT, row.livesIn), "utf8");
            assert.match(text, new RegExp(`\\b${row.id}\\b`), `${row.id}: ${row.livesIn} never cites ${row.id}`);
            assert.ok(row.leadsTo.length > 0, `${row.id} leads nowhere`);
            for (const { file, names } of row.leadsTo) {
                assert.ok(fs.existsSync(path.join(ROOT, file)), `${row.id}: ${file} does not exist`);
                assert.ok(names.length > 0, `${row.id}: ${file} is listed without a name in it`);
                for (const name of names) {
                    assert.ok(exportsName(file, name), `${row.id}: ${file} exports no ${name}`);
                }
            }
        }
    });

    it("reads a table it can check (a parse that finds nothing proves nothing)", () => {
        const broken = architecture().replace(
            "`components/rollouts/analysis.ts` | `errorBudgetTemplateSpec`",
            "`components/rollouts/analysis.ts` | `errorBudgetTemplate`",
        );
        const d6 = decisionRows(broken).find((r) => r.id === "D6")!;
        assert.deepStrictEqual(d6.entryPoints, ["errorBudgetTemplate", "errorBudgetWaitTemplateSpec", "freezeMeasurements"]);
        assert.strictEqual(exportsName(d6.livesIn, "errorBudgetTemplate"), false);
        assert.strictEqual(exportsName(d6.livesIn, "errorBudgetTemplateSpec"), true);
        assert.strictEqual(exportsName("components/mimir.ts", "MimirRole"), true);
    });
});

describe("layout: the documentation's paths", () => {
    it("every project file and folder the README and the pages under docs/ name exists", () => {
        // A bare folder (`policy/`) counts too: a page naming a folder that went is as wrong as a file.
        const named = /(?<![\w./-])((?:components|stacks|tools|policy-pack|policy|test|e2e)\/(?:[\w./-]*[\w/])?)/g;
        const missing: string[] = [];
        let count = 0;
        for (const doc of documentationFiles()) {
            const paths = [...readDoc(doc).matchAll(named)].map((m) => m[1]);
            count += paths.length;
            // `policy/v1` is the Kubernetes API group of PodDisruptionBudgets, not the policy pack.
            const gone = [...new Set(paths)].filter((p) => p !== "policy/v1" && ![p, `${p}.ts`].some((c) => fs.existsSync(path.join(ROOT, c))));
            missing.push(...gone.map((p) => `${doc}: ${p}`));
        }
        assert.ok(count > 20, `found only ${count} paths in the documentation`);
        assert.deepStrictEqual(missing, []);
    });

    it("every configuration key the README and the pages under docs/ name is declared", () => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { STACK_FIELDS } = require("../stacks/config") as typeof import("../stacks/config");
        type Node = { kind: string; fields?: Record<string, Node>; items?: Record<string, Node>; values?: Record<string, Node> };
        const declared = (key: string): boolean => {
            let fields: Record<string, Node> | undefined = STACK_FIELDS as unknown as Record<string, Node>;
            for (const part of key.replace(/\[\]/g, "").split(".")) {
                const f: Node | undefined = fields?.[part];
                if (!f) return false;
                fields = f.fields ?? f.items ?? f.values;
            }
            return true;
        };
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { GROUPS } = require("../tools/verify/index") as typeof import("../tools/verify/index");
        // Names that look like keys and are not the stack file's: verify's check ids, argocd-rbac-cm's
        // keys, and the chart's values keys the rollouts stage sets (test/rollouts.test.ts holds those).
        const argoAndChartKeys = "policy.csv policy.default policy.matchMode controller.volumes controller.volumeMounts controller.extraEnv".split(" ");
        const notKeys = new Set([...GROUPS.flatMap((g) => g.ids), ...argoAndChartKeys]);
        const top = Object.keys(STACK_FIELDS).join("|");
        // `policy.prodNamespaceLabels`, `spokes[].hostname`: a key in code quotes, not a map's <name> placeholder.
        const key = new RegExp(`\`(?:argo-rollouts-addon:)?((?:${top})(?:\\[\\])?(?:\\.[A-Za-z]+(?:\\[\\])?)+)(?:[ :=][^\`]*)?\``, "g");
        const missing: string[] = [];
        let count = 0;
        for (const doc of documentationFiles()) {
            const named = [...readDoc(doc).matchAll(key)].map((m) => m[1]);
            count += named.length;
            missing.push(...[...new Set(named)].filter((k) => !notKeys.has(k) && !declared(k)).map((k) => `${doc}: ${k}`));
        }
        assert.ok(count > 50, `found only ${count} keys in the documentation`);
        assert.deepStrictEqual(missing, []);
    });

    it("every provider setting the pages name is one the kubernetes provider takes", () => {
        const provider = fs.readFileSync(path.join(ROOT, "node_modules", "@pulumi", "kubernetes", "provider.d.ts"), "utf8");
        const named = /`(enable[A-Z]\w+|upsert[A-Z]\w+|deleteUnreachable|skipUpdateUnreachable|clusterIdentifier|suppress[A-Z]\w+)`/g;
        const settings = new Set(documentationFiles().flatMap((doc) => [...readDoc(doc).matchAll(named)].map((m) => m[1])));
        assert.ok(settings.has("upsertExistingObjects") && settings.has("enablePatchForce"), [...settings].join(", "));
        const unknown = [...settings].filter((s) => !new RegExp(`\\b${s}\\?:`).test(provider));
        assert.deepStrictEqual(unknown, []);
    });
});

/** The lines of a TypeScript source that are code: neither blank nor only a comment. */
export function codeLines(text: string): string[] {
    let inBlock = false;
    return text.split("\n").filter((raw) => {
        const line = raw.trim();
        const wasInBlock = inBlock;
        if (wasInBlock || line.startsWith("/*")) inBlock = !line.includes("*/");
        return !wasInBlock && !line.startsWith("/*") && line !== "" && !line.startsWith("//");
    });
}

/**
 * The line budgets of the redesign that let the engines decide (issue 40): the program (components/
 * and stacks/) at most 10,500 lines, 7,500 of them code; tools/ at most 7,000 lines; test/ at most
 * 12,500 lines; and no file of the program or the tools over 300 lines of code. Every later change
 * keeps them: a change that needs more lines removes others first.
 */
const BUDGETS = [
    { folders: ["components", "stacks"], lines: 10_500, code: 7_500 },
    { folders: ["tools"], lines: 7_000, code: Infinity },
    { folders: ["test"], lines: 12_500, code: Infinity },
];

describe("layout: line budgets", () => {
    const measure = (file: string) => {
        const text = fs.readFileSync(path.join(ROOT, file), "utf8");
        return { file, lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0), code: codeLines(text).length };
    };
    const files = sourceFiles().map(measure);

    it("counts code as neither blank nor only a comment", () => {
        assert.deepStrictEqual(codeLines("/**\n * why\n */\nconst a = 1; // note\n\n// more\n/* one */\nf();\n"), ["const a = 1; // note", "f();"]);
    });

    for (const b of BUDGETS) {
        it(`${b.folders.join("/ + ")}/ within ${b.lines} lines${b.code === Infinity ? "" : `, ${b.code} of them code`}`, () => {
            const mine = files.filter((f) => b.folders.includes(f.file.split("/")[0]));
            assert.ok(mine.length > 10, `${mine.length} files under ${b.folders.join(", ")}`);
            const lines = mine.reduce((n, f) => n + f.lines, 0);
            const code = mine.reduce((n, f) => n + f.code, 0);
            const biggest = [...mine]
                .sort((x, y) => y.lines - x.lines)
                .slice(0, 5)
                .map((f) => `${f.file} ${f.lines}`);
            assert.ok(lines <= b.lines && code <= b.code, `${lines} lines (${code} code) over the budget; the largest: ${biggest.join(", ")}`);
        });
    }

    it("no unit test sets a timeout of its own: .mocharc.js's guards against a hung test, and a shorter one fails on a busy machine", () => {
        const timed = files.filter(
            (f) => /^test\/(?!integration\/)/.test(f.file) && /this\.timeout\(\d/.test(fs.readFileSync(path.join(ROOT, f.file), "utf8")),
        );
        assert.deepStrictEqual(
            timed.map((f) => f.file),
            [],
        );
    });

    it("no file of components/, stacks/ or tools/ has over 300 lines of code (split it along what it decides)", () => {
        const long = files.filter((f) => /^(components|stacks|tools)\//.test(f.file) && f.code > 300).map((f) => `${f.file}: ${f.code}`);
        assert.deepStrictEqual(long, []);
    });
});

describe("layout: each folder's index.ts", () => {
    it("is its component or only re-exports, not both", () => {
        const folders = fs.readdirSync(path.join(ROOT, "components")).filter((f) => fs.existsSync(path.join(ROOT, "components", f, "index.ts")));
        assert.ok(folders.length >= 8);
        for (const f of folders) {
            const code = codeLines(fs.readFileSync(path.join(ROOT, "components", f, "index.ts"), "utf8"));
            const declared = code.filter((l) => !/^export (\*|\{[^}]*\}) from "\.\/[\w/]+";$/.test(l));
            assert.ok(
                declared.length === code.length || declared.length === 0,
                `components/${f}/index.ts both declares and re-exports:\n${declared.slice(0, 5).join("\n")}`,
            );
        }
    });
});
