import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { documentationFiles, readDoc } from "./markdown";

/**
 * The project's layout, read from its source: one direction of imports between folders, the
 * program's module graph free of tool, test and policy-pack code, and the map of where each
 * ADR-056 decision lives (docs/maintainers/architecture.md).
 *
 * A folder is a stage or library folder under components/ (a single file there, such as
 * components/stage.ts, is a folder of its own), or one of the top-level folders stacks/, tools/,
 * policy-pack/, test/ and e2e/ (their subfolders, such as tools/verify and e2e/lib, belong to them).
 */

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

/** The folder a project file belongs to (see above). */
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
            if (!fileName.startsWith("./") && !fileName.startsWith("../")) {
                continue;
            }
            const to = resolveSpecifier(file, fileName);
            assert.ok(to !== undefined, `${file} imports ${fileName}, which is no file of the project`);
            out.push({ from: file, specifier: fileName, to });
        }
    }
    return out;
}

/** Folder -> folder -> the imports that make the edge. */
export type FolderGraph = Map<string, Map<string, Import[]>>;

export function folderGraph(imports: readonly Import[]): FolderGraph {
    const graph: FolderGraph = new Map();
    for (const i of imports) {
        const a = folderOf(i.from);
        const b = folderOf(i.to);
        if (a === b) {
            continue;
        }
        const edges = graph.get(a) ?? new Map<string, Import[]>();
        edges.set(b, [...(edges.get(b) ?? []), i]);
        graph.set(a, edges);
    }
    return graph;
}

/**
 * File -> file -> the imports that make the edge, for the program's files (a section's reader, its
 * preflight and the types both use; the delivery library's strategy and approval). Type-only
 * imports count: a circle of types is still a circle to read.
 */
export function fileGraph(imports: readonly Import[]): FolderGraph {
    const graph: FolderGraph = new Map();
    for (const i of imports) {
        const edges = graph.get(i.from) ?? new Map<string, Import[]>();
        edges.set(i.to, [...(edges.get(i.to) ?? []), i]);
        graph.set(i.from, edges);
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
            if (state.get(next) === "open") {
                return [...trail.slice(trail.indexOf(next)), next];
            }
            if (state.get(next) === undefined) {
                const found = visit(next);
                if (found) {
                    return found;
                }
            }
        }
        trail.pop();
        state.set(node, "done");
        return undefined;
    };
    for (const node of [...graph.keys()].sort()) {
        if (state.get(node) === undefined) {
            const found = visit(node);
            if (found) {
                return found;
            }
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
        graph = folderGraph(imports);
    });

    it("reads the imports of every folder (a parse that finds nothing proves nothing)", () => {
        for (const folder of ["components/config", "components/rollouts", "components/policy", "components/argocd", "stacks", "tools", "policy-pack", "test"]) {
            assert.ok((graph.get(folder)?.size ?? 0) > 0 || [...graph.values()].some((edges) => edges.has(folder)), `no import from or to ${folder}`);
        }
    });

    it("finds a cycle where there is one", () => {
        const cyclic: FolderGraph = new Map([
            ["components/a", new Map([["components/b", []]])],
            ["components/b", new Map([["components/c", []]])],
            ["components/c", new Map([["components/a", []]])],
        ]);
        assert.deepStrictEqual(findCycle(cyclic), ["components/a", "components/b", "components/c", "components/a"]);
        assert.strictEqual(findCycle(new Map([["components/a", new Map([["components/b", []]])]])), undefined);
        assert.strictEqual(folderOf("components/stage.ts"), "components/stage");
        assert.strictEqual(folderOf("components/rollouts/config.ts"), "components/rollouts");
        assert.strictEqual(folderOf("tools/verify/checks/rbac.ts"), "tools");
    });

    it("no folder imports a folder that imports it back", () => {
        const cycle = findCycle(graph);
        assert.ok(cycle === undefined, cycle && describeCycle(graph, cycle));
    });

    it("no file imports a file that imports it back, not even for a type: the program, tools, tests and e2e", () => {
        const files = fileGraph(imports);
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

    it("names one place for each of D1 to D8, in order", () => {
        assert.deepStrictEqual(
            rows.map((r) => r.id),
            ["D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8"],
        );
        for (const row of rows) {
            assert.ok(row.livesIn !== undefined && row.entryPoints.length > 0, `${row.id} names no file or no entry point`);
        }
    });

    it("each place exists, exports its entry points and cites its decision", () => {
        for (const row of rows) {
            assert.ok(fs.existsSync(path.join(ROOT, row.livesIn)), `${row.id}: ${row.livesIn} does not exist`);
            for (const name of row.entryPoints) {
                assert.ok(exportsName(row.livesIn, name), `${row.id}: ${row.livesIn} exports no ${name}`);
            }
            const text = fs.readFileSync(path.join(ROOT, row.livesIn), "utf8");
            assert.match(text, new RegExp(`\\b${row.id}\\b`), `${row.id}: ${row.livesIn} never cites ${row.id}`);
        }
    });

    it("everything a place leads to exists and exports what the row names", () => {
        for (const row of rows) {
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
        // `policy/v1` is the Kubernetes API group of PodDisruptionBudgets, not the policy pack.
        const notPaths = new Set(["policy/v1"]);
        const missing: string[] = [];
        let count = 0;
        for (const doc of documentationFiles()) {
            // A bare folder (`policy/`) counts too: a page naming a folder that went is as wrong as a file.
            const named = [...readDoc(doc).matchAll(/(?<![\w./-])((?:components|stacks|tools|policy-pack|policy|test|e2e)\/(?:[\w./-]*[\w/])?)/g)].map(
                (m) => m[1],
            );
            count += named.length;
            missing.push(
                ...[...new Set(named)]
                    .filter((p) => !notPaths.has(p) && ![p, `${p}.ts`].some((c) => fs.existsSync(path.join(ROOT, c))))
                    .map((p) => `${doc}: ${p}`),
            );
        }
        assert.ok(count > 20, `found only ${count} paths in the documentation`);
        assert.deepStrictEqual(missing, []);
    });

    it("every configuration key the README and the pages under docs/ name is declared", function () {
        // Loads the program's configuration and verify's checks: slow on a busy machine.
        this.timeout(120_000);
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { STACK_FIELDS } = require("../stacks/config") as typeof import("../stacks/config");
        type Node = { kind: string; fields?: Record<string, Node>; items?: Record<string, Node>; values?: Record<string, Node> };
        const declared = (key: string): boolean => {
            let fields: Record<string, Node> | undefined = STACK_FIELDS as unknown as Record<string, Node>;
            for (const part of key.replace(/\[\]/g, "").split(".")) {
                const f: Node | undefined = fields?.[part];
                if (!f) {
                    return false;
                }
                fields = f.fields ?? f.items ?? f.values;
            }
            return true;
        };
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { GROUPS } = require("../tools/verify/index") as typeof import("../tools/verify/index");
        // Names that look like keys and are not the stack file's: verify's check ids, argocd-rbac-cm's
        // keys, and the chart's values keys the rollouts stage sets (test/rollouts.test.ts holds those).
        const notKeys = new Set([
            ...GROUPS.flatMap((g) => g.ids),
            "policy.csv",
            "policy.default",
            "policy.matchMode",
            "controller.volumes",
            "controller.volumeMounts",
            "controller.extraEnv",
        ]);
        const top = Object.keys(STACK_FIELDS).join("|");
        const missing: string[] = [];
        let count = 0;
        for (const doc of documentationFiles()) {
            // `policy.prodNamespaceLabels`, `spokes[].hostname`: a key in code quotes, not a map's <name> placeholder.
            const named = [
                ...readDoc(doc).matchAll(new RegExp(`\`(?:argo-rollouts-addon:)?((?:${top})(?:\\[\\])?(?:\\.[A-Za-z]+(?:\\[\\])?)+)(?:[ :=][^\`]*)?\``, "g")),
            ].map((m) => m[1]);
            count += named.length;
            missing.push(...[...new Set(named)].filter((k) => !notKeys.has(k) && !declared(k)).map((k) => `${doc}: ${k}`));
        }
        assert.ok(count > 50, `found only ${count} keys in the documentation`);
        assert.deepStrictEqual(missing, []);
    });

    it("every provider setting the pages name is one the kubernetes provider takes", () => {
        const provider = fs.readFileSync(path.join(ROOT, "node_modules", "@pulumi", "kubernetes", "provider.d.ts"), "utf8");
        const settings = new Set<string>();
        for (const doc of documentationFiles()) {
            for (const m of readDoc(doc).matchAll(
                /`(enable[A-Z]\w+|upsert[A-Z]\w+|deleteUnreachable|skipUpdateUnreachable|clusterIdentifier|suppress[A-Z]\w+)`/g,
            )) {
                settings.add(m[1]);
            }
        }
        assert.ok(settings.has("upsertExistingObjects") && settings.has("enablePatchForce"), [...settings].join(", "));
        assert.deepStrictEqual(
            [...settings].filter((s) => !new RegExp(`\\b${s}\\?:`).test(provider)),
            [],
        );
    });
});

/** The lines of a TypeScript source that are code: neither blank nor only a comment. */
export function codeLines(text: string): number {
    let n = 0;
    let inBlock = false;
    for (const raw of text.split("\n")) {
        const line = raw.trim();
        if (inBlock) {
            inBlock = !line.includes("*/");
        } else if (line.startsWith("/*")) {
            inBlock = !line.includes("*/");
        } else if (line !== "" && !line.startsWith("//")) {
            n++;
        }
    }
    return n;
}

/**
 * The line budgets of the redesign that let the engines decide (issue 40): the program (components/
 * and stacks/) at most 10,500 lines, 7,500 of them code; tools/ at most 7,000 lines; and no file of
 * the program or the tools over 300 lines of code. Every later change keeps them: a change that
 * needs more lines removes others first. (test/'s budget, 12,500 lines, joins them once it is met.)
 */
const BUDGETS = [
    { folders: ["components", "stacks"], lines: 10_500, code: 7_500 },
    { folders: ["tools"], lines: 7_000, code: Infinity },
];

describe("layout: line budgets", () => {
    const measure = (file: string) => {
        const text = fs.readFileSync(path.join(ROOT, file), "utf8");
        return { file, lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0), code: codeLines(text) };
    };
    const files = sourceFiles().map(measure);

    it("counts code as neither blank nor only a comment", () => {
        assert.strictEqual(codeLines("/**\n * why\n */\nconst a = 1; // note\n\n// more\n/* one */\nf();\n"), 2);
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

    it("no file of components/, stacks/ or tools/ has over 300 lines of code (split it along what it decides)", () => {
        const long = files.filter((f) => /^(components|stacks|tools)\//.test(f.file) && f.code > 300).map((f) => `${f.file}: ${f.code}`);
        assert.deepStrictEqual(long, []);
    });
});

describe("layout: each folder's index.ts", () => {
    it("is its component or only re-exports, not both", () => {
        const folders = fs.readdirSync(path.join(ROOT, "components"), { withFileTypes: true }).filter((e) => e.isDirectory());
        assert.ok(folders.length >= 8);
        for (const f of folders) {
            const file = path.join(ROOT, "components", f.name, "index.ts");
            if (!fs.existsSync(file)) {
                continue;
            }
            const code = fs
                .readFileSync(file, "utf8")
                .split("\n")
                .filter((l) => l.trim() !== "" && !l.trim().startsWith("//") && !l.trim().startsWith("*") && !l.trim().startsWith("/*"));
            const reexports = code.filter((l) => /^export (\*|\{[^}]*\}) from "\.\/[\w/]+";$/.test(l));
            assert.ok(
                reexports.length === 0 || reexports.length === code.length,
                `components/${f.name}/index.ts both declares and re-exports:\n${code
                    .filter((l) => !reexports.includes(l))
                    .slice(0, 5)
                    .join("\n")}`,
            );
        }
    });
});
